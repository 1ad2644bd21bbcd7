//! The `--html` page: one self-contained file (inline CSS and SVG, no script, no network), with the
//! totals, a chart of tokens saved per day, one of tokens saved by tool, and the tables.

use super::{cells, thousands};
use crate::contract::types::{StatsReport, StatsRow};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A bar chart of `tokens_saved` (and read tokens stacked beside it) per row, as inline SVG.
fn bars(title: &str, rows: &[StatsRow]) -> String {
    const W: f64 = 720.0;
    const BAR_H: f64 = 22.0;
    const LABEL_W: f64 = 150.0;
    let height = 40.0 + rows.len() as f64 * (BAR_H + 8.0);
    let max = rows.iter().map(|r| r.tokens_raw).max().unwrap_or(0).max(1) as f64;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{t}" width="{W}" height="{height}" viewBox="0 0 {W} {height}"><title>{t}</title>"#,
        t = esc(title)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 30.0 + i as f64 * (BAR_H + 8.0);
        let span = W - LABEL_W - 170.0;
        let saved_w = r.tokens_saved as f64 / max * span;
        let read_w = r.tokens_read as f64 / max * span;
        svg.push_str(&format!(
            r#"<text x="0" y="{ty}" class="label">{k}</text><rect class="bar saved" x="{LABEL_W}" y="{y}" width="{saved_w:.1}" height="{BAR_H}"><title>{k}: {s} tokens saved</title></rect><rect class="bar read" x="{rx:.1}" y="{y}" width="{read_w:.1}" height="{BAR_H}"><title>{k}: {rd} tokens read</title></rect><text x="{vx:.1}" y="{ty}" class="value">{s} saved ({p:.1}%)</text>"#,
            ty = y + 16.0,
            k = esc(&r.key),
            s = thousands(r.tokens_saved),
            rd = thousands(r.tokens_read),
            rx = LABEL_W + saved_w,
            vx = LABEL_W + saved_w + read_w + 6.0,
            p = r.saved_pct,
        ));
    }
    svg.push_str(&format!(
        r#"<text x="0" y="14" class="caption">{}</text></svg>"#,
        esc(title)
    ));
    svg
}

fn table(title: &str, rows: &[StatsRow]) -> String {
    let mut t = format!(
        "<h2>{}</h2><table><tr><th></th><th>calls</th><th>raw tokens</th><th>read tokens</th><th>saved</th><th>saved %</th><th>pruned</th><th>recovered</th><th>recovery</th></tr>",
        esc(title)
    );
    for r in rows {
        t.push_str(&format!("<tr><td>{}</td>", esc(&r.key)));
        for cell in cells(r) {
            t.push_str(&format!("<td>{cell}</td>"));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

/// The page.
pub fn page(r: &StatsReport, since: &str) -> String {
    let scope = if r.root.is_empty() {
        "every root".to_string()
    } else {
        format!("root {}", r.root)
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mcp-pruner savings</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
.totals {{ display: flex; gap: 2em; margin: 1em 0; }}
.totals div {{ border: 1px solid #ddd; border-radius: 6px; padding: .6em 1em; }}
.totals b {{ display: block; font-size: 1.6em; }}
.bar.saved {{ fill: #2e7d32; }} .bar.read {{ fill: #bbb; }}
.label, .value, .caption {{ font-size: 12px; fill: #333; }} .caption {{ font-weight: bold; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
td, th {{ border-bottom: 1px solid #eee; padding: .2em .6em; text-align: right; }}
td:first-child {{ text-align: left; }}
</style></head><body>
<h1>mcp-pruner savings</h1>
<p>{ledger} &middot; {window} &middot; {scope}</p>
<div class="totals"><div><b>{saved}</b>tokens saved ({pct:.1}%)</div><div><b>{calls}</b>calls</div><div><b>{rate:.1}%</b>recovery rate ({rec} of {pruned} pruned calls)</div></div>
{by_day_chart}
{by_tool_chart}
{total_table}{tool_table}{day_table}{client_table}
<p>Saved = tokens the model would have read raw minus tokens it read (o200k). Recovery rate = pruned calls whose removed lines a later <code>recover_text</code> took back: how often pruning removed something the agent needed.</p>
</body></html>
"#,
        ledger = esc(&r.ledger),
        window = if since == "all" {
            "all time".to_string()
        } else {
            format!("last {}", esc(since))
        },
        scope = esc(&scope),
        saved = thousands(r.total.tokens_saved),
        pct = r.total.saved_pct,
        calls = thousands(r.total.calls),
        rate = r.total.recovery_rate * 100.0,
        rec = r.total.recovered_calls,
        pruned = r.total.pruned_calls,
        by_day_chart = bars("Tokens saved per day (green: saved, grey: read)", &r.by_day),
        by_tool_chart = bars(
            "Tokens saved by tool (green: saved, grey: read)",
            &r.by_tool
        ),
        total_table = table("Totals", std::slice::from_ref(&r.total)),
        tool_table = table("By tool", &r.by_tool),
        day_table = table("By day", &r.by_day),
        client_table = table("By client", &r.by_client),
    )
}
