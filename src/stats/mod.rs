//! `mcp-pruner stats`: what pruning saved, read from the savings ledger — a table (totals, per
//! tool, per day or per client), `--json` (a [`StatsReport`]), or `--html FILE` (one
//! self-contained page with inline SVG charts).
//!
//! Command-line level: reads the ledger file read-only through [`crate::ledger::stats`]; never
//! writes it.

mod html;

use crate::config::default_ledger_path;
use crate::contract::types::{StatsReport, StatsRow};
use crate::ledger::stats::report;
use clap::{Args, ValueEnum};
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::process::ExitCode;

/// `stats` flags.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Rows from this long ago on: `30m`, `24h`, `7d`, `4w`, or `all`.
    #[arg(long, default_value = "7d")]
    pub since: String,
    /// Only calls served with this --root (default: every root).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// The grouping the table shows (default: by tool, then by day).
    #[arg(long, value_enum)]
    pub by: Option<Group>,
    /// Print the report as JSON (schemas/ledger/stats_report.json).
    #[arg(long, conflicts_with = "html")]
    pub json: bool,
    /// Write one self-contained HTML page with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The ledger file [env: MCP_PRUNER_LEDGER; default: $XDG_DATA_HOME/mcp-pruner/ledger.sqlite3]
    #[arg(long, value_name = "PATH")]
    pub ledger: Option<PathBuf>,
}

/// A grouping of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Group {
    /// Per tool.
    Tool,
    /// Per UTC day.
    Day,
    /// Per client name and version.
    Client,
}

/// Parses `--since` into milliseconds before now (`None` for `all`).
pub fn since_ms(since: &str) -> Result<Option<u64>, String> {
    let s = since.trim();
    if s == "all" {
        return Ok(None);
    }
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits.parse().map_err(|_| {
        format!("--since: expected a number and a unit (30m, 24h, 7d, 4w) or `all`, got {since:?}")
    })?;
    let unit_ms = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => {
            return Err(format!(
                "--since: unit must be m, h, d or w (as in 7d), got {since:?}"
            ));
        }
    };
    Ok(Some(n.saturating_mul(unit_ms)))
}

/// Runs `stats`.
pub fn main(args: &StatsArgs) -> ExitCode {
    match run(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-pruner stats: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &StatsArgs) -> Result<String, String> {
    let env = |k: &str| std::env::var(k).ok();
    let path = args
        .ledger
        .clone()
        .or_else(|| {
            env("MCP_PRUNER_LEDGER")
                .filter(|v| v != "off")
                .map(PathBuf::from)
        })
        .or_else(|| default_ledger_path(&env));
    let back = since_ms(&args.since)?;
    let now = chrono::Utc::now().timestamp_millis().max(0) as u64;
    let since = back.map_or(0, |b| now.saturating_sub(b));
    let root = match &args.root {
        Some(r) => Some(
            std::fs::canonicalize(r)
                .map_err(|e| format!("--root {}: {e}", r.display()))?
                .to_string_lossy()
                .into_owned(),
        ),
        None => None,
    };
    // Nothing recorded yet is not an error: the report is empty, and the table says why.
    let (conn, shown, missing) = match path.as_deref().filter(|p| p.is_file()) {
        Some(p) => {
            let conn = Connection::open_with_flags(p, OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(|e| format!("cannot open {}: {e}", p.display()))?;
            (conn, p.to_string_lossy().into_owned(), None)
        }
        None => {
            let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
            crate::ledger::migrate(&conn).map_err(|e| e.to_string())?;
            let why = match &path {
                Some(p) => format!(
                    "nothing recorded yet: no ledger at {} (it is written by `mcp-pruner stdio` and `serve` as tools are called)\n",
                    p.display()
                ),
                None => "nothing recorded yet: no ledger location (set --ledger, MCP_PRUNER_LEDGER, XDG_DATA_HOME or HOME)\n".to_string(),
            };
            let shown = path.as_deref().map(|p| p.to_string_lossy().into_owned());
            (conn, shown.unwrap_or_default(), Some(why))
        }
    };
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let r = report(&conn, &shown, since, root.as_deref())
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if let (Some(why), None, false) = (&missing, &args.html, args.json) {
        return Ok(why.clone());
    }
    if let Some(file) = &args.html {
        std::fs::write(file, html::page(&r, &args.since))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        return Ok(format!(
            "wrote {} ({} calls, {} tokens saved)\n",
            file.display(),
            r.total.calls,
            r.total.tokens_saved
        ));
    }
    if args.json {
        return Ok(serde_json::to_string_pretty(&r).expect("serializes") + "\n");
    }
    Ok(table(&r, &args.since, args.by))
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A row's figures as shown, in column order (calls, raw, read, saved, saved %, pruned,
/// recovered, recovery): the text table and the HTML page print the same cells.
pub fn cells(r: &StatsRow) -> [String; 8] {
    [
        thousands(r.calls),
        thousands(r.tokens_raw),
        thousands(r.tokens_read),
        thousands(r.tokens_saved),
        format!("{:.1}%", r.saved_pct),
        thousands(r.pruned_calls),
        thousands(r.recovered_calls),
        format!("{:.1}%", r.recovery_rate * 100.0),
    ]
}

fn line(label: &str, r: &StatsRow) -> String {
    let [
        calls,
        raw,
        read,
        saved,
        saved_pct,
        pruned,
        recovered,
        recovery,
    ] = cells(r);
    format!(
        "{label:<24} {calls:>7} {raw:>13} {read:>13} {saved:>13} {saved_pct:>8} {pruned:>7} {recovered:>9} {recovery:>9}\n"
    )
}

/// The readable table.
pub fn table(r: &StatsReport, since: &str, by: Option<Group>) -> String {
    let mut out = format!(
        "mcp-pruner stats: {} ({}, {})\n\n",
        r.ledger,
        if since == "all" {
            "all time".to_string()
        } else {
            format!("last {since}")
        },
        if r.root.is_empty() {
            "every root".to_string()
        } else {
            format!("root {}", r.root)
        }
    );
    let header = format!(
        "{:<24} {:>7} {:>13} {:>13} {:>13} {:>8} {:>7} {:>9} {:>9}\n",
        "",
        "calls",
        "raw tokens",
        "read tokens",
        "saved",
        "saved%",
        "pruned",
        "recovered",
        "recovery"
    );
    out.push_str(&header);
    out.push_str(&line("total", &r.total));
    let groups: Vec<(&str, &Vec<StatsRow>)> = match by {
        Some(Group::Tool) => vec![("by tool", &r.by_tool)],
        Some(Group::Day) => vec![("by day", &r.by_day)],
        Some(Group::Client) => vec![("by client", &r.by_client)],
        None => vec![("by tool", &r.by_tool), ("by day", &r.by_day)],
    };
    for (title, rows) in groups {
        out.push_str(&format!("\n{title}\n"));
        for row in rows {
            out.push_str(&line(&row.key, row));
        }
    }
    out.push_str(
        "\nsaved = raw - read tokens (o200k, what the model reads); recovery = pruned calls whose removed lines a later recover_text took back\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_units_and_all_and_names_the_flag_otherwise() {
        assert_eq!(since_ms("7d").unwrap(), Some(7 * 86_400_000));
        assert_eq!(since_ms("30m").unwrap(), Some(1_800_000));
        assert_eq!(since_ms("all").unwrap(), None);
        assert!(since_ms("7").unwrap_err().starts_with("--since"));
        assert!(since_ms("d").unwrap_err().starts_with("--since"));
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
