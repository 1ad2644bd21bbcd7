//! The hard limits of a run (seed 001 sections 2.3 and 7.3): `max_prune_ratio` and
//! `min_keep_lines` are results, not preferences.
//!
//! Owns computing how many lines may be removed and adding removed lines back, best first, until a
//! draft complies. It must never remove a line: keeping more is always allowed, so this module only
//! ever turns `keep` from `false` to `true`.

use super::Limits;
use super::draft::{Draft, runs};

/// The largest number of lines out of `n` that may be removed, or `None` when no plan (not even
/// keeping everything) can satisfy `limits` (a NaN or negative ratio).
pub(crate) fn max_removable(n: usize, limits: &Limits) -> Option<usize> {
    let ratio = limits.max_prune_ratio;
    if ratio.is_nan() || ratio < 0.0 {
        return None;
    }
    let ratio = ratio.min(1.0);
    let total = n as f64;
    let mut r = ((ratio * total).floor() as usize).min(n);
    while r > 0 && r as f64 / total > ratio {
        r -= 1;
    }
    while r < n && (r + 1) as f64 / total <= ratio {
        r += 1;
    }
    Some(r.min(n - limits.min_keep_lines.min(n)))
}

/// How the one run [`add_back`] brings back in part comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Partial {
    /// Its best lines first (then in order): a log's lines around its failure.
    BestLines,
    /// From its beginning, in one piece: code, where the head of a definition (its doc and
    /// signature) reads as code and its best lines scattered (a `throw` and the braces after
    /// it) do not. Dev, code (realistic, multilang, issue reports): reduction +0.2/+0.2/+0.0 at
    /// recall +0.0/+0.2/+0.0 against the best lines first; test +0.2/+0.2/+0.0 at the same
    /// recall, holdout +0.2 at +0.5.
    Start,
}

/// Adds removed lines back until at most `allowed` lines are removed.
///
/// Order: removed runs by their best line score (then earlier first), each whole, so that the runs
/// most related to the goal come back first; inside the last one, which comes back in part, as
/// `partial` says; lines of equal score in order, so what comes back from an irrelevant run is
/// its beginning, in one piece.
pub(crate) fn add_back(draft: &mut Draft, allowed: usize, partial: Partial) {
    let removed = draft.removed();
    if removed <= allowed {
        return;
    }
    let mut excess = removed - allowed;
    // Runs come back whole in their order; only the run that comes back in part has its lines
    // ordered (a 1 MiB text removes tens of thousands of lines in a few thousand runs).
    let mut order: Vec<(f32, std::ops::Range<usize>)> = runs(&draft.keep)
        .into_iter()
        .map(|run| {
            let best = draft.score[run.clone()]
                .iter()
                .copied()
                .fold(f32::MIN, f32::max);
            (best, run)
        })
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.start.cmp(&b.1.start)));
    for (_, run) in order {
        if excess >= run.len() {
            draft.keep[run.clone()].fill(true);
            excess -= run.len();
            if excess == 0 {
                return;
            }
            continue;
        }
        if partial == Partial::Start {
            draft.keep[run.start..run.start + excess].fill(true);
            return;
        }
        let mut lines: Vec<usize> = run.collect();
        lines.sort_by(|&a, &b| draft.score[b].total_cmp(&draft.score[a]).then(a.cmp(&b)));
        for i in lines.into_iter().take(excess) {
            draft.keep[i] = true;
        }
        return;
    }
}

/// True when `keep` satisfies `limits`.
pub(crate) fn complies(keep: &[bool], limits: &Limits) -> bool {
    let removed = keep.iter().filter(|k| !**k).count();
    max_removable(keep.len(), limits).is_some_and(|max| removed <= max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::draft::Reason;

    fn limits(max_prune_ratio: f64, min_keep_lines: usize) -> Limits {
        Limits {
            max_prune_ratio,
            min_keep_lines,
        }
    }

    #[test]
    fn ratio_bound_is_exact() {
        assert_eq!(max_removable(10, &limits(0.8, 0)), Some(8));
        assert_eq!(max_removable(3, &limits(0.7, 0)), Some(2));
        assert_eq!(max_removable(3, &limits(2.0 / 3.0, 0)), Some(2));
        assert_eq!(max_removable(10, &limits(0.0, 0)), Some(0));
        assert_eq!(max_removable(10, &limits(1.0, 0)), Some(10));
        assert_eq!(max_removable(0, &limits(0.5, 5)), Some(0));
    }

    #[test]
    fn min_keep_bounds_removal() {
        assert_eq!(max_removable(100, &limits(0.8, 20)), Some(80));
        assert_eq!(max_removable(100, &limits(0.8, 30)), Some(70));
        assert_eq!(max_removable(10, &limits(1.0, 50)), Some(0));
    }

    #[test]
    fn invalid_ratio_cannot_comply() {
        assert_eq!(max_removable(10, &limits(f64::NAN, 0)), None);
        assert_eq!(max_removable(10, &limits(-0.1, 0)), None);
    }

    #[test]
    fn add_back_prefers_best_runs_and_their_best_lines() {
        let mut d = Draft::keep_all(8);
        for i in [0, 1, 2, 4, 5, 6] {
            d.remove(i, Reason::Body);
        }
        d.score[5] = 2.0;
        d.score[6] = 1.0;
        add_back(&mut d, 3, Partial::BestLines);
        assert_eq!(d.removed(), 3);
        assert_eq!(d.keep, [false, false, false, true, true, true, true, true]);
        add_back(&mut d, 1, Partial::BestLines);
        assert_eq!(d.keep, [true, true, false, true, true, true, true, true]);
        // In code, the run that comes back in part comes back from its start.
        let mut d = Draft::keep_all(6);
        for i in 1..5 {
            d.remove(i, Reason::Body);
        }
        d.score[4] = 3.0;
        add_back(&mut d, 2, Partial::Start);
        assert_eq!(d.keep, [true, true, true, false, false, true]);
    }

    /// The order `add_back` keeps, written as one sort of every removed line: runs by their best
    /// line score (then earlier first), inside a run lines by score (then in order).
    fn add_back_by_one_sort(draft: &mut Draft, allowed: usize) {
        let excess = draft.removed().saturating_sub(allowed);
        let mut order: Vec<(f32, usize, f32, usize)> = Vec::new();
        for run in runs(&draft.keep) {
            let best = draft.score[run.clone()]
                .iter()
                .copied()
                .fold(f32::MIN, f32::max);
            order.extend(run.clone().map(|i| (best, run.start, draft.score[i], i)));
        }
        order.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(b.2.total_cmp(&a.2))
                .then(a.3.cmp(&b.3))
        });
        for &(_, _, _, i) in order.iter().take(excess) {
            draft.keep[i] = true;
        }
    }

    proptest::proptest! {
        /// Bringing runs back whole and ordering only the last one's lines keeps exactly the
        /// lines one sort of all removed lines would.
        #[test]
        fn add_back_equals_one_sort_of_every_removed_line(
            lines in proptest::collection::vec((proptest::bool::ANY, 0u8..4), 0..200),
            allowed in 0usize..200,
        ) {
            let draft = || {
                let mut d = Draft::keep_all(lines.len());
                for (i, &(removed, score)) in lines.iter().enumerate() {
                    if removed {
                        d.remove(i, Reason::Body);
                    }
                    d.score[i] = f32::from(score) * 0.5;
                }
                d
            };
            let (mut d, mut reference) = (draft(), draft());
            add_back(&mut d, allowed, Partial::BestLines);
            add_back_by_one_sort(&mut reference, allowed);
            proptest::prop_assert_eq!(d.keep, reference.keep);
        }
    }

    #[test]
    fn complies_checks_both_limits() {
        let keep = [true, false, false, false];
        assert!(complies(&keep, &limits(0.75, 1)));
        assert!(!complies(&keep, &limits(0.5, 1)));
        assert!(!complies(&keep, &limits(0.75, 2)));
    }
}
