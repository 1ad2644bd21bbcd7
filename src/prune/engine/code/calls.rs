//! One hop of the call graph: a definition that the best-scoring definitions call, or that calls
//! them, shares part of their score. A fix often lands in the helper next to the code the question
//! describes, whose own words the question does not use.
//!
//! Owns finding calls by name within one file (an identifier followed by `(` that names a
//! definition of the file). It must never change the score of a definition the best ones neither
//! call nor are called by, and never lower a score.

use super::labels::{defined_name, naming_line};
use super::outline::Unit;
use rustc_hash::FxHashMap as HashMap;

/// The best-scoring definitions whose calls are followed.
const TOP: usize = 8;
/// Names shorter than this are too ambiguous to follow (`f`, `go`, `id`).
const MIN_NAME: usize = 3;

/// Raises `scores[v]` to `share` times the score of the best top definition that calls `v`
/// (callee) or that `v` calls (caller), when that is more than `v` scores on its own.
pub(super) fn spread(lines: &[&str], units: &[Unit], scores: &mut [f32], share: f32) {
    let mut top: Vec<usize> = (0..units.len()).filter(|&u| scores[u] > 0.0).collect();
    top.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    top.truncate(TOP);
    if top.is_empty() {
        return;
    }
    let names: Vec<Option<&str>> = units
        .iter()
        .map(|u| defined_name(naming_line(lines, &u.sig)).filter(|n| n.len() >= MIN_NAME))
        .collect();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::default();
    for (u, name) in names.iter().enumerate() {
        if let Some(name) = name {
            by_name.entry(name).or_default().push(u);
        }
    }
    let top_names: HashMap<&str, f32> = top
        .iter()
        .filter_map(|&u| names[u].map(|n| (n, scores[u])))
        .fold(HashMap::default(), |mut acc, (n, s)| {
            let e = acc.entry(n).or_insert(0.0);
            *e = f32::max(*e, s);
            acc
        });
    let mut raised = vec![0.0f32; units.len()];
    // Callees of the top definitions.
    for &u in &top {
        let from = scores[u] * share;
        for_each_call(&lines[units[u].body.clone()], &mut |name| {
            if let Some(vs) = by_name.get(name) {
                for &v in vs {
                    if v != u {
                        raised[v] = raised[v].max(from);
                    }
                }
            }
        });
    }
    // Callers of the top definitions.
    for (v, unit) in units.iter().enumerate() {
        let mut best = 0.0f32;
        for_each_call(&lines[unit.body.clone()], &mut |name| {
            if names[v] != Some(name)
                && let Some(&s) = top_names.get(name)
            {
                best = best.max(s * share);
            }
        });
        raised[v] = raised[v].max(best);
    }
    for (s, r) in scores.iter_mut().zip(raised) {
        *s = s.max(r);
    }
}

/// Calls `emit` with every identifier of `lines` directly followed by `(` (spaces allowed).
/// Walks back from each `(`, so the cost is the parentheses, not every identifier.
fn for_each_call<'t>(lines: &[&'t str], emit: &mut dyn FnMut(&'t str)) {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    for line in lines {
        let b = line.as_bytes();
        let mut from = 0;
        while let Some(k) = memchr::memchr(b'(', &b[from..]) {
            let paren = from + k;
            from = paren + 1;
            let mut end = paren;
            while end > 0 && b[end - 1] == b' ' {
                end -= 1;
            }
            let mut start = end;
            while start > 0 && ident(b[start - 1]) {
                start -= 1;
            }
            if end - start >= MIN_NAME && !b[start].is_ascii_digit() {
                emit(&line[start..end]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::code::outline::outline;

    #[test]
    fn callees_and_callers_of_the_best_share_its_score() {
        let src = "fn caller() {\n    best();\n}\nfn best() {\n    helper(1);\n}\nfn helper(x: u8) {\n    x;\n}\nfn other() {\n    y();\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let mut scores = vec![0.0, 10.0, 0.0, 0.0];
        spread(&lines, &o.units, &mut scores, 0.5);
        assert_eq!(scores, vec![5.0, 10.0, 5.0, 0.0]);
    }
}
