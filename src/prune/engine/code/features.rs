//! Per-definition features of the code strategy, written out for ranking experiments outside the
//! engine (`bench-data/experiments/`): an ignored test, run by hand.
//!
//! Owns nothing the engine uses. It must never change a decision: it calls the strategy's own
//! functions and writes what they computed.

use super::*;
use crate::contract::types::SourceType;
use crate::prune::engine::{Limits, plan_within, split_lines};
use std::io::Write;

/// Writes, for every code case of the benchmark file `$FEATURES_DATA` (its 0-based line number
/// is the case id), to `$FEATURES_OUT`:
/// - `L case line role unit gold kept bytes weight`: each line's outline role, its definition
///   (`-1` for none), whether it is gold, whether the plan at the defaults keeps it, its length
///   and its goal-term weight;
/// - `C case start end header`: each container and the goal's weight in its header;
/// - `U case unit pre sig sig_end end score final selected bm25 sig_match header coverage terms
///   depth evidence test data best_line name`: each definition's ranges and what `plan` computed
///   for it (`score` before evidence and calls, `final` after; `selected`: kept whole).
#[test]
#[ignore = "writes $FEATURES_OUT from $FEATURES_DATA; see bench-data/experiments/README.md"]
fn dump_unit_features() {
    let data = std::env::var("FEATURES_DATA").expect("FEATURES_DATA: a benchmark .jsonl");
    let out = std::env::var("FEATURES_OUT").expect("FEATURES_OUT: the .tsv to write");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).expect("FEATURES_OUT"));
    let text = std::fs::read_to_string(&data).expect("FEATURES_DATA");
    for (case, row) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(row).expect("a JSON object per line");
        if v["source_type"] != "code" {
            continue;
        }
        let goal = v["query"].as_str().expect("query");
        let lines = split_lines(v["text"].as_str().expect("text"));
        let gold: std::collections::HashSet<usize> = v["gold_lines"]
            .as_array()
            .expect("gold_lines")
            .iter()
            .filter_map(|g| g.as_u64()?.checked_sub(1).map(|g| g as usize))
            .collect();
        let q = Query::new(goal, true);
        let m = Matches::new(&q, &lines);
        let o = outline(&lines);
        let doc_goal = about_docs(&q);
        let before = unit_scores(&lines, &o, &q, &m, doc_goal);
        let (scores, pointed) = ranked(&lines, &o, &q, &m, doc_goal);
        let selected = select(&o.units, &scores, lines.len());
        let plan = plan_within(&lines, goal, SourceType::Code, &Limits::default(), None);
        for (i, role) in o.roles.iter().enumerate() {
            let (kind, unit) = match *role {
                Role::Pre(u) => ("pre", i64::from(u)),
                Role::Body(u) => ("body", i64::from(u)),
                Role::Sig => ("sig", -1),
                Role::Loose => ("loose", -1),
                Role::Blank => ("blank", -1),
                Role::Import => ("import", -1),
                Role::Header => ("header", -1),
                Role::Close => ("close", -1),
                Role::Attr => ("attr", -1),
            };
            writeln!(
                f,
                "L\t{case}\t{i}\t{kind}\t{unit}\t{}\t{}\t{}\t{}",
                u8::from(gold.contains(&i)),
                u8::from(plan.keep[i]),
                lines[i].len(),
                m.line(i)
            )
            .expect("write");
        }
        let code = telling_terms(&o.units, m.without(&o.doc));
        let avg = mean_length(&o.units);
        let headers = container_headers(&o, &code, lines.len());
        let tests = test_containers(&lines, &o);
        for c in &o.containers {
            let header = code.span(c.start..c.start + 1);
            writeln!(f, "C\t{case}\t{}\t{}\t{header}", c.start, c.end).expect("write");
        }
        for (k, u) in o.units.iter().enumerate() {
            let span = u.sig.start..u.body.end;
            let bm25 = code.bm25(span.clone(), avg, LENGTH_NORM);
            let sig = code.span(u.sig.clone());
            let coverage = code.coverage(span.clone()) / m.total.max(1e-6);
            let bits = code.masks[span.clone()].iter().fold(0u64, |a, b| a | b);
            let terms = (bits & 0xffff_ffff).count_ones();
            let depth = o
                .containers
                .iter()
                .filter(|c| c.contains(&u.sig.start))
                .count();
            let evidence = pointed[u.pre.start..u.body.end].contains(&true);
            let best_line = code.best_line(span);
            let name = defined_name(naming_line(&lines, &u.sig)).unwrap_or("");
            writeln!(
                f,
                "U\t{case}\t{k}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{bm25}\t{sig}\t{}\t{coverage}\t{terms}\t{depth}\t{}\t{}\t{}\t{best_line}\t{name}",
                u.pre.start,
                u.sig.start,
                u.sig.end,
                u.body.end,
                before[k],
                scores[k],
                u8::from(selected[k]),
                headers[u.sig.start],
                u8::from(evidence),
                u8::from(is_test(&lines, &tests, u)),
                u8::from(is_data(lines[u.sig.start])),
            )
            .expect("write");
        }
    }
}
