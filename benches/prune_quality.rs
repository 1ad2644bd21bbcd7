//! Pruning quality benchmark (not a test): for every case of `bench-data/quality.jsonl` (or of the
//! files given as non-flag arguments, measured together, or the one in `QUALITY_DATA`), prune at
//! the tools' defaults (max_prune_ratio 0.8, min_keep_lines 20, no line numbers, the tools' compact
//! markers `[… lines a-b]` plus the one note naming the prune id) and measure the o200k token
//! reduction of the output and the recall of the gold lines. Two baselines get, per case, the same
//! token budget as our output: (a) the head of the text, (b) plain BM25 line ranking (top lines by
//! BM25 score of the query, shown in original order).
//!
//! Each case is measured twice: at the engine's defaults with no response budget, and fitted to
//! the tools' default 10 KiB response budget (what `read` with a question returns on its first
//! page). Rows are per source type, per source type and language, and per split (`dev` repos the
//! engine may be tuned on, `test` repos it must not be).
//!
//! Run: `cargo bench --bench prune_quality [-- FILE...]`. `QUALITY_VERBOSE=1` prints one row per
//! case (reduction, recall of ours, of head and of BM25, recall after two calls);
//! `QUALITY_SHOW=<text>` prints the pruned output of the cases whose origin or query contains it;
//! `QUALITY_DUMP=file.tsv` appends one row per case and budget (origin, budget in bytes or 0 for
//! none, the keep mask as `0`/`1` per line, reduction) for analysis outside the bench;
//! `QUALITY_CURVE=out.svg` writes the recall-vs-reduction curve of the code cases (ours at several
//! budgets, head and BM25 at the same token budgets).

use mcp_pruner::contract::types::SourceType;
use mcp_pruner::prune::engine::{self, Limits, TextBudget};
use mcp_pruner::prune::render::{self, Markers};
use mcp_pruner::tokens;
use mcp_pruner::tools::recover_text;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A recovery id in the store's format (`prn_<n>_<tag>`, a 64-bit tag in 20 decimal digits), so
/// that markers and the note cost what they cost in production.
const PRUNE_ID: &str = "prn_42_07361928471029384756";

struct Case {
    query: String,
    text: String,
    source: SourceType,
    gold: Vec<usize>,
    origin: String,
    /// Language of the file (realistic set), empty otherwise.
    language: String,
    /// `dev` or `test` (realistic set), empty otherwise.
    split: String,
    /// How the question is phrased: `commit` (a commit message), `issue` (an issue report), or
    /// empty when the set does not say.
    style: String,
}

/// The tools' default response budget (`--max-output-bytes`).
const TOOL_BUDGET: usize = 10_240;

/// The engine's text budget inside a tool budget of `bytes` (what `read` gives the pruner).
fn text_budget(bytes: usize, lines: usize) -> TextBudget {
    TextBudget {
        bytes: mcp_pruner::budget::for_pruned_text(bytes, false),
        marker_bytes: mcp_pruner::prune::widest_compact_marker(lines),
    }
}

#[derive(Default)]
struct Sums {
    cases: usize,
    reduction: [f64; 3],
    recall: [f64; 3],
    full_recall: [usize; 3],
    /// Mean reduction of our output rendered without markers.
    plain_reduction: f64,
    /// Mean reduction of the gold lines alone with their markers (the ceiling at full recall).
    gold_reduction: f64,
    /// Token totals (input, ours with markers), for the aggregate reduction.
    tokens: [usize; 2],
    /// Mean share of gold lines kept or inside a definition or section whose name the output
    /// shows.
    visible: f64,
    /// Cases whose recall is below the head of the text's at the same token budget.
    below_head: usize,
    /// Tokens the markers' names cost, summed over the cases (share of `tokens[1]`).
    name_tokens: usize,
    /// Mean recall after the first result plus one recovery by the same question.
    two_recall: f64,
    /// Token totals of the two calls together, for their aggregate reduction against the input.
    two_tokens: usize,
    /// Mean reduction of the two calls together.
    two_reduction: f64,
}

/// One case's figures.
struct Measured {
    /// (token reduction, gold recall) for ours, head and BM25.
    runs: [(f64, f64); 3],
    /// Our reduction without markers.
    plain_reduction: f64,
    /// Reduction of the gold lines alone, with markers.
    gold_reduction: f64,
    before: usize,
    after: usize,
    /// Share of gold lines kept or named ([`engine::visible_lines`]).
    visible: f64,
    /// Tokens of our output that are the markers' names.
    name_tokens: usize,
    /// Recall and tokens after one recovery by question ([`engine::plan_more`]) on top.
    two_recall: f64,
    two_tokens: usize,
}

fn main() {
    // Every non-flag argument is a set; their cases are measured together (the pooled rows of
    // several sets in one run), in the order given.
    let mut paths: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if paths.is_empty() {
        paths.push(std::env::var("QUALITY_DATA").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/bench-data/quality.jsonl").to_string()
        }));
    }
    let mut cases: Vec<Case> = Vec::new();
    for path in &paths {
        let data = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("{path}: {e}; build it with `cargo run --release --example build_quality`")
        });
        cases.extend(
            data.lines()
                .filter(|l| !l.trim().is_empty())
                .map(parse_case),
        );
    }
    let path = paths.join(" + ");
    let verbose = std::env::var_os("QUALITY_VERBOSE").is_some();
    println!(
        "pruning quality on {path}: {} cases, limits max_prune_ratio 0.8, min_keep_lines 20",
        cases.len()
    );
    println!(
        "token reduction = 1 - tokens(output)/tokens(input), o200k_base; recall = gold lines kept / gold lines (mean per case);"
    );
    println!(
        "baselines get each case's token budget of our output (ours counts its compact markers and the note naming the prune id; theirs have none)."
    );
    println!(
        "aggregate = 1 - sum(output tokens)/sum(input tokens); no-markers = our mean reduction without markers or note;"
    );
    println!(
        "gold-only = mean reduction when exactly the gold lines are kept, markers and note included (the ceiling at 100% recall)."
    );
    for (title, budget) in [
        ("no response budget (engine defaults)", None),
        (
            "fitted to the tools' 10 KiB response budget",
            Some(TOOL_BUDGET),
        ),
    ] {
        let mut sums: BTreeMap<String, Sums> = BTreeMap::new();
        for case in &cases {
            let measured = measure(case, budget);
            let [ours, head, bm25] = measured.runs;
            if verbose {
                println!(
                    "{:5} red {:5.1}% rec ours {:5.1}% head {:5.1}% bm25 {:5.1}% 2c {:5.1}%  {:.60} | {}",
                    case.source.to_string(),
                    ours.0 * 100.0,
                    ours.1 * 100.0,
                    head.1 * 100.0,
                    bm25.1 * 100.0,
                    measured.two_recall * 100.0,
                    case.query.replace('\n', " "),
                    case.origin
                );
            }
            let source = case.source.to_string();
            let mut keys = vec![source.clone(), "all".to_string()];
            let mut groups = Vec::new();
            if !case.language.is_empty() {
                groups.push(format!("{source}:{}", case.language));
            }
            if !case.style.is_empty() {
                groups.push(format!("{source}~{}", case.style));
            }
            if !case.split.is_empty() {
                keys.push(format!("{source}@{}", case.split));
                keys.extend(groups.iter().map(|g| format!("{g}@{}", case.split)));
            }
            keys.extend(groups);
            for key in keys {
                let s = sums.entry(key).or_default();
                s.cases += 1;
                s.plain_reduction += measured.plain_reduction;
                s.gold_reduction += measured.gold_reduction;
                s.tokens[0] += measured.before;
                s.tokens[1] += measured.after;
                s.visible += measured.visible;
                s.below_head += usize::from(ours.1 + 1e-9 < head.1);
                s.name_tokens += measured.name_tokens;
                s.two_recall += measured.two_recall;
                s.two_tokens += measured.two_tokens;
                s.two_reduction += 1.0 - measured.two_tokens as f64 / measured.before as f64;
                for (k, (red, rec)) in [ours, head, bm25].into_iter().enumerate() {
                    s.reduction[k] += red;
                    s.recall[k] += rec;
                    s.full_recall[k] += usize::from(rec >= 0.9);
                }
            }
        }
        println!();
        println!("== {title}");
        print_table(&sums);
    }
    if let Ok(svg) = std::env::var("QUALITY_CURVE") {
        curve(&cases, &svg);
    }
}

fn print_table(sums: &BTreeMap<String, Sums>) {
    println!(
        "{:<24} {:>5} | {:>14} {:>12} {:>10} {:>10} {:>10} {:>10} | {:>8} {:>6} {:>6} | {:>9} {:>9} | {:>14} {:>12} | {:>14} {:>12}",
        "source",
        "cases",
        "ours reduction",
        "ours recall",
        "rec>=90%",
        "aggregate",
        "no-markers",
        "gold-only",
        "visible",
        "names",
        "<head",
        "2-call rec",
        "2-call red",
        "head reduction",
        "head recall",
        "bm25 reduction",
        "bm25 recall"
    );
    for (source, s) in sums {
        let n = s.cases as f64;
        println!(
            "{:<24} {:>5} | {:>13.1}% {:>11.1}% {:>9.1}% {:>9.1}% {:>9.1}% {:>9.1}% | {:>7.1}% {:>5.1}% {:>6} | {:>8.1}% {:>8.1}% | {:>13.1}% {:>11.1}% | {:>13.1}% {:>11.1}%",
            source,
            s.cases,
            100.0 * s.reduction[0] / n,
            100.0 * s.recall[0] / n,
            100.0 * s.full_recall[0] as f64 / n,
            100.0 * (1.0 - s.tokens[1] as f64 / s.tokens[0].max(1) as f64),
            100.0 * s.plain_reduction / n,
            100.0 * s.gold_reduction / n,
            100.0 * s.visible / n,
            100.0 * s.name_tokens as f64 / s.tokens[1].max(1) as f64,
            s.below_head,
            100.0 * s.two_recall / n,
            100.0 * s.two_reduction / n,
            100.0 * s.reduction[1] / n,
            100.0 * s.recall[1] / n,
            100.0 * s.reduction[2] / n,
            100.0 * s.recall[2] / n,
        );
    }
}

/// Writes the recall-vs-reduction curve of the code cases to `path` (SVG): ours at response
/// budgets from 2 KiB to none, head and BM25 at the same per-case token budgets.
fn curve(cases: &[Case], path: &str) {
    let code: Vec<&Case> = cases
        .iter()
        .filter(|c| c.source == SourceType::Code)
        .collect();
    if code.is_empty() {
        return;
    }
    let budgets = [
        Some(2048),
        Some(3072),
        Some(4096),
        Some(6144),
        Some(8192),
        Some(10_240),
        Some(16_384),
        Some(24_576),
        None,
    ];
    let mut points = [Vec::new(), Vec::new(), Vec::new()];
    for b in budgets {
        let mut sum = [(0.0, 0.0); 3];
        for c in &code {
            let m = measure(c, b);
            for (s, run) in sum.iter_mut().zip(m.runs) {
                s.0 += run.0;
                s.1 += run.1;
            }
        }
        let n = code.len() as f64;
        for k in 0..3 {
            points[k].push((sum[k].0 / n, sum[k].1 / n));
        }
        println!(
            "curve {:>8}: ours {:5.1}% red {:5.1}% rec | head {:5.1}% rec | bm25 {:5.1}% rec",
            b.map(|b| format!("{} KiB", b / 1024))
                .unwrap_or("none".into()),
            100.0 * points[0].last().unwrap().0,
            100.0 * points[0].last().unwrap().1,
            100.0 * points[1].last().unwrap().1,
            100.0 * points[2].last().unwrap().1,
        );
    }
    let (w, h, pad) = (640.0, 420.0, 50.0);
    let x = |r: f64| pad + r.clamp(0.0, 1.0) * (w - 2.0 * pad);
    let y = |r: f64| h - pad - r.clamp(0.0, 1.0) * (h - 2.0 * pad);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{pad}\" y=\"20\" font-size=\"14\">Gold-line recall vs token reduction, {} code cases</text>\n",
        code.len()
    );
    for t in 0..=10 {
        let v = t as f64 / 10.0;
        svg.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}%</text><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}%</text>\n",
            x(v), y(0.0), x(v), y(1.0), x(v), h - pad + 16.0, t * 10,
            x(0.0), y(v), x(1.0), y(v), pad - 6.0, y(v) + 4.0, t * 10
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">token reduction (mean per case)</text><text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">gold recall</text>\n",
        w / 2.0, h - 12.0, h / 2.0, h / 2.0
    ));
    for (k, (name, color)) in [
        ("ours", "#d62728"),
        ("head", "#7f7f7f"),
        ("BM25", "#1f77b4"),
    ]
    .iter()
    .enumerate()
    {
        let pts: Vec<String> = points[k]
            .iter()
            .map(|(r, c)| format!("{:.1},{:.1}", x(*r), y(*c)))
            .collect();
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            pts.join(" ")
        ));
        for p in &pts {
            let (px, py) = p.split_once(',').unwrap();
            svg.push_str(&format!(
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"3\" fill=\"{color}\"/>\n"
            ));
        }
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{color}\">{name}</text>\n",
            w - pad - 60.0,
            pad + 16.0 * (k as f64 + 1.0)
        ));
    }
    svg.push_str("</svg>\n");
    std::fs::write(path, svg).unwrap_or_else(|e| panic!("{path}: {e}"));
    println!("wrote {path}");
}

fn parse_case(line: &str) -> Case {
    let v: serde_json::Value = serde_json::from_str(line).expect("a JSON object per line");
    let source = match v["source_type"].as_str() {
        Some("code") => SourceType::Code,
        Some("logs") => SourceType::Logs,
        Some("docs") => SourceType::Docs,
        other => panic!("unknown source_type {other:?}"),
    };
    Case {
        query: v["query"].as_str().expect("query").to_string(),
        text: v["text"].as_str().expect("text").to_string(),
        source,
        gold: v["gold_lines"]
            .as_array()
            .expect("gold_lines")
            .iter()
            .map(|g| g.as_u64().expect("line number") as usize)
            .collect(),
        origin: v["origin"].as_str().unwrap_or("").to_string(),
        language: v["language"].as_str().unwrap_or("").to_string(),
        split: v["split"].as_str().unwrap_or("").to_string(),
        style: v["style"].as_str().unwrap_or("").to_string(),
    }
}

/// Appends one row to the `QUALITY_DUMP` file: origin, budget (0 = none), the keep mask (`1` per
/// line shown, all of them when the raw text was returned) and the token reduction.
fn dump_keep(path: &str, case: &Case, budget: Option<usize>, keep: &[bool], raw: bool, red: f64) {
    use std::io::Write;
    let mask: String = keep
        .iter()
        .map(|&k| if raw || k { '1' } else { '0' })
        .collect();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    writeln!(f, "{}\t{}\t{mask}\t{red}", case.origin, budget.unwrap_or(0))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
}

/// Our figures and the baselines' for one case.
fn measure(case: &Case, budget: Option<usize>) -> Measured {
    let lines = engine::split_lines(&case.text);
    let plan = engine::plan_within(
        &lines,
        &case.query,
        case.source,
        &Limits::default(),
        budget.map(|b| text_budget(b, lines.len())),
    );
    let rendered = render::render(
        &lines,
        &plan,
        PRUNE_ID,
        false,
        Markers::Compact,
        case.text.ends_with('\n'),
    );
    let before = tokens::count(&case.text).max(1);
    let after = tokens::count(&rendered.pruned_text) + note_tokens(&plan);
    let plain = render::render(
        &lines,
        &plan,
        PRUNE_ID,
        false,
        Markers::Off,
        case.text.ends_with('\n'),
    );
    let plain_reduction = 1.0 - tokens::count(&plain.pruned_text) as f64 / before as f64;
    let gold: HashSet<usize> = case
        .gold
        .iter()
        .copied()
        .filter(|g| (1..=lines.len()).contains(g))
        .collect();
    let recall = |keep: &dyn Fn(usize) -> bool| {
        if gold.is_empty() {
            1.0
        } else {
            gold.iter().filter(|&&g| keep(g - 1)).count() as f64 / gold.len() as f64
        }
    };
    // The tools' `no_savings` rule: when the pruned text costs at least the raw text's tokens,
    // the raw text is returned.
    let raw = after >= before;
    let after = after.min(before);
    let plain_reduction = if raw { 0.0 } else { plain_reduction };
    if let Ok(dump) = std::env::var("QUALITY_DUMP") {
        dump_keep(
            &dump,
            case,
            budget,
            &plan.keep,
            raw,
            1.0 - after as f64 / before as f64,
        );
    }
    let ours = (
        1.0 - after as f64 / before as f64,
        recall(&|i| raw || plan.keep[i]),
    );
    if let Ok(show) = std::env::var("QUALITY_SHOW")
        && (case.origin.contains(&show) || case.query.contains(&show))
    {
        let numbered = render::render(&lines, &plan, PRUNE_ID, true, Markers::Compact, true);
        let seen = engine::visible_lines(&lines, case.source, &plan);
        let marked: String = numbered
            .pruned_text
            .lines()
            .map(|l| {
                let n = l.split('│').next().and_then(|n| n.parse::<usize>().ok());
                let g = if n.is_some_and(|n| gold.contains(&n)) {
                    "G "
                } else {
                    "  "
                };
                format!("{g}{l}\n")
            })
            .collect();
        let mut unseen: Vec<usize> = gold.iter().copied().filter(|&g| !seen[g - 1]).collect();
        unseen.sort_unstable();
        println!(
            "=== {} | {}\n{marked}gold lines neither kept nor named: {unseen:?}",
            case.query, case.origin
        );
    }
    let visible = if raw {
        1.0
    } else {
        let seen = engine::visible_lines(&lines, case.source, &plan);
        recall(&|i| seen[i])
    };
    // The names' cost: our output against the same output with unnamed markers.
    let name_tokens = if raw {
        0
    } else {
        let mut unnamed = plan.clone();
        for r in &mut unnamed.removed {
            r.names.clear();
            r.more = 0;
        }
        let bare = render::render(
            &lines,
            &unnamed,
            PRUNE_ID,
            false,
            Markers::Compact,
            case.text.ends_with('\n'),
        );
        (tokens::count(&rendered.pruned_text) + note_tokens(&plan))
            .saturating_sub(tokens::count(&bare.pruned_text) + note_tokens(&unnamed))
    };
    let (two_recall, two_tokens) = two_calls(case, &lines, &plan, raw, after, &recall);
    let costs: Vec<usize> = lines.iter().map(|l| tokens::count(l) + 1).collect();
    let head = select(&costs, after, &(0..lines.len()).collect::<Vec<_>>(), true);
    let bm25 = select(&costs, after, &bm25_order(&lines, &case.query), false);
    let reduction = |sel: &[bool]| {
        1.0 - sel
            .iter()
            .zip(&costs)
            .filter(|(s, _)| **s)
            .map(|(_, c)| c)
            .sum::<usize>() as f64
            / before as f64
    };
    Measured {
        runs: [
            ours,
            (reduction(&head), recall(&|i| head[i])),
            (reduction(&bm25), recall(&|i| bm25[i])),
        ],
        plain_reduction,
        gold_reduction: gold_only_reduction(case, &lines, &gold, before),
        before,
        after,
        visible,
        name_tokens,
        two_recall,
        two_tokens,
    }
}

/// Gold recall of a selection given as a predicate on 0-based lines.
type Recall<'a> = dyn Fn(&dyn Fn(usize) -> bool) -> f64 + 'a;

/// Recall and tokens after the first result (`plan`, or the raw text when `raw`) plus one
/// `recover_text` by the same question: the lines the engine ranks next among those not shown
/// ([`engine::plan_more`]), fitted to the tools' 10 KiB budget, as the tool returns them (the JSON
/// result the model reads: lines and named markers, the ranges returned). A raw first result needs no
/// second call.
fn two_calls(
    case: &Case,
    lines: &[&str],
    plan: &engine::Plan,
    raw: bool,
    first_tokens: usize,
    recall: &Recall,
) -> (f64, usize) {
    if raw {
        return (1.0, first_tokens);
    }
    let budget = text_budget(TOOL_BUDGET, lines.len());
    let more = engine::plan_more(lines, &case.query, case.source, &plan.keep, budget, false);
    // The result as `recover_text` returns it with a question, built by the tool's own code, and
    // counted as the model reads it (the tools' default: no output schemas).
    let from = recover_text::Part {
        prune_id: PRUNE_ID,
        total_bytes: case.text.len() as u64,
        total_lines: lines.len(),
        first_line: 1,
    };
    let result =
        recover_text::question_result(lines, &more, &from, false, case.text.ends_with('\n'));
    let second = tokens::count(&recover_text::question_output(&result).model_text(false));
    (
        recall(&|i| plan.keep[i] || more.keep[i]),
        first_tokens + second,
    )
}

/// Tokens of the note the tools add once after a pruned text, naming the prune id its compact
/// markers refer to (none when nothing was removed).
fn note_tokens(plan: &engine::Plan) -> usize {
    if plan.removed.is_empty() {
        0
    } else {
        tokens::count(&format!("\n{}", render::compact_note("", PRUNE_ID)))
    }
}

/// Reduction of a plan keeping exactly the gold lines, markers included: what full recall costs
/// at best on this case (`no_savings` applies as for ours).
fn gold_only_reduction(case: &Case, lines: &[&str], gold: &HashSet<usize>, before: usize) -> f64 {
    let plan = engine::Plan::from_keep((1..=lines.len()).map(|i| gold.contains(&i)).collect());
    let text = render::render(
        lines,
        &plan,
        PRUNE_ID,
        false,
        Markers::Compact,
        case.text.ends_with('\n'),
    );
    let after = (tokens::count(&text.pruned_text) + note_tokens(&plan)).min(before);
    1.0 - after as f64 / before as f64
}

/// Takes lines in `order` while they fit in `budget` tokens. The head baseline stops at the first
/// line that does not fit (`stop`: a real head); the ranking baseline skips it and goes on.
fn select(costs: &[usize], budget: usize, order: &[usize], stop: bool) -> Vec<bool> {
    let mut used = 0;
    let mut sel = vec![false; costs.len()];
    for &i in order {
        if used + costs[i] <= budget {
            used += costs[i];
            sel[i] = true;
        } else if stop {
            break;
        }
    }
    sel
}

/// Lines by decreasing Okapi BM25 score (k1 1.2, b 0.75) of the query, lowercase alphanumeric
/// words, no stemming or stop words; ties in original order.
fn bm25_order(lines: &[&str], query: &str) -> Vec<usize> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let q: HashSet<String> = words(query).into_iter().collect();
    let docs: Vec<Vec<String>> = lines.iter().map(|l| words(l)).collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        let uniq: HashSet<&str> = d
            .iter()
            .map(String::as_str)
            .filter(|w| q.contains(*w))
            .collect();
        for w in uniq {
            *df.entry(w).or_default() += 1;
        }
    }
    let scores: Vec<f64> = docs
        .iter()
        .map(|d| {
            q.iter()
                .map(|t| {
                    let tf = d.iter().filter(|w| *w == t).count() as f64;
                    let nt = *df.get(t.as_str()).unwrap_or(&0) as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let idf = ((n - nt + 0.5) / (nt + 0.5) + 1.0).ln();
                    idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.len() as f64 / avg.max(1.0)))
                })
                .sum()
        })
        .collect();
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}
