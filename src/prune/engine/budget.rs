//! Fitting a plan to a byte budget (the response budget of the tool that asked): when the kept
//! lines and their markers would not fit, the least relevant kept blocks are removed first, each
//! becoming part of a marked, recoverable run like any other removal. Nothing is cut by position
//! except, as a last resort, the tail of the single most relevant block.
//!
//! Owns the order of budget removals. It must never remove a NO_PRUNE line, never judge relevance
//! itself (it reads the strategies' scores), and never add a line back.

use super::draft::{Draft, Reason};
use std::ops::Range;

/// A budget for the rendered text of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextBudget {
    /// Largest rendered size in bytes: kept lines and marker lines, each with its `'\n'`.
    pub bytes: usize,
    /// Bytes of one marker line (its widest form for this text), newline included.
    pub marker_bytes: usize,
}

/// Maximal runs of kept lines, as 0-based half-open ranges.
fn kept_runs(keep: &[bool]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < keep.len() {
        if !keep[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < keep.len() && keep[i] {
            i += 1;
        }
        out.push(start..i);
    }
    out
}

/// Rendered size of `draft` with one marker per removed run.
fn rendered_bytes(draft: &Draft, lines: &[&str], marker_bytes: usize) -> usize {
    let mut size = 0;
    let mut in_removed = false;
    for (i, line) in lines.iter().enumerate() {
        if draft.keep[i] {
            size += line.len() + 1;
            in_removed = false;
        } else if !in_removed {
            size += marker_bytes;
            in_removed = true;
        }
    }
    size
}

/// Removes the least relevant kept blocks of `draft` until its rendering fits `budget`.
///
/// A block is a maximal run of kept lines; its relevance is the best score of its lines (the
/// strategies score a kept definition, section or incident through all its lines). Ties go to the
/// block farthest from the most relevant one, so what stays is the best block and its
/// neighbourhood. NO_PRUNE lines always stay. If the most relevant block alone is still
/// too big, its tail is removed (its head holds the signature or heading that names it).
/// Returns whether anything was removed.
pub(crate) fn fit(draft: &mut Draft, lines: &[&str], budget: &TextBudget) -> bool {
    let mut size = rendered_bytes(draft, lines, budget.marker_bytes);
    if size <= budget.bytes {
        return false;
    }
    let runs = kept_runs(&draft.keep);
    let best_of = |r: &Range<usize>| {
        draft.score[r.clone()]
            .iter()
            .copied()
            .fold(f32::MIN, f32::max)
    };
    let scores: Vec<f32> = runs.iter().map(best_of).collect();
    let Some(top) = (0..runs.len()).max_by(|&a, &b| {
        scores[a].total_cmp(&scores[b]).then(b.cmp(&a)) // equal scores: the earlier block is the top one
    }) else {
        return false;
    };
    let distance = |r: &Range<usize>| r.start.abs_diff(runs[top].start);
    let mut order: Vec<usize> = (0..runs.len()).filter(|&i| i != top).collect();
    order.sort_by(|&a, &b| {
        scores[a]
            .total_cmp(&scores[b])
            .then(distance(&runs[b]).cmp(&distance(&runs[a])))
            .then(b.cmp(&a))
    });
    let mut changed = false;
    for i in order {
        if size <= budget.bytes {
            break;
        }
        // NO_PRUNE lines stay; the rest of their block goes.
        for j in runs[i].clone() {
            if !draft.must[j] {
                draft.remove(j, Reason::Budget);
                changed = true;
            }
        }
        size = rendered_bytes(draft, lines, budget.marker_bytes);
    }
    if size > budget.bytes {
        // The best block alone is too big: keep its head, remove the rest of it.
        let r = runs[top].clone();
        for j in r.clone().rev() {
            if size <= budget.bytes || j == r.start {
                break;
            }
            if draft.must[j] {
                continue;
            }
            draft.remove(j, Reason::Budget);
            changed = true;
            size = rendered_bytes(draft, lines, budget.marker_bytes);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(scores: &[f32]) -> Draft {
        let mut d = Draft::keep_all(scores.len());
        d.score = scores.to_vec();
        d
    }

    #[test]
    fn fits_already() {
        let lines = ["a", "b"];
        let mut d = draft(&[0.0, 1.0]);
        let b = TextBudget {
            bytes: 4,
            marker_bytes: 10,
        };
        assert!(!fit(&mut d, &lines, &b));
        assert_eq!(d.keep, [true, true]);
    }

    #[test]
    fn least_relevant_blocks_go_first() {
        let lines = ["low", "x", "high", "y", "mid"];
        let mut d = draft(&[0.1, 0.0, 5.0, 0.0, 1.0]);
        d.keep[1] = false;
        d.keep[3] = false;
        // 3 blocks: low (4 B), high (5 B), mid (4 B), two markers of 2 B: 17 B. Removing `low`
        // joins its marker with the next one: 13 B.
        let b = TextBudget {
            bytes: 13,
            marker_bytes: 2,
        };
        assert!(fit(&mut d, &lines, &b));
        assert_eq!(d.keep, [false, false, true, false, true]);
        assert_eq!(rendered_bytes(&d, &lines, 2), 13);
        // Tighter: `mid` goes next, `high` stays.
        let b = TextBudget {
            bytes: 12,
            marker_bytes: 2,
        };
        assert!(fit(&mut d, &lines, &b));
        assert_eq!(d.keep, [false, false, true, false, false]);
    }

    #[test]
    fn no_prune_blocks_stay_and_the_best_block_keeps_its_head() {
        let lines = [
            "keep me",
            "x",
            "fn best() {",
            "    body one",
            "    body two",
            "}",
        ];
        let mut d = draft(&[0.0, 0.0, 9.0, 9.0, 9.0, 9.0]);
        d.keep[1] = false;
        d.must[0] = true;
        let b = TextBudget {
            bytes: 8 + 2 + 12 + 2,
            marker_bytes: 2,
        };
        fit(&mut d, &lines, &b);
        assert!(d.keep[0], "NO_PRUNE line removed");
        assert!(d.keep[2], "the best block keeps its signature");
        assert!(!d.keep[5]);
    }
}
