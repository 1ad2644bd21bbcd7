//! Fitting a plan to a byte budget: the response budget of the tool that asked ([`fit`]: when the
//! kept lines and their markers would not fit, the least relevant kept blocks are removed first,
//! each becoming part of a marked, recoverable run like any other removal; nothing is cut by
//! position except, as a last resort, the tail of the single most relevant block), and the focus
//! cap on what a question keeps of a source file ([`cap_focus`]: the same order, only blocks
//! ranked far below the best and holding no structural line, before the limits are applied).
//!
//! Owns the order of these removals. It must never remove a NO_PRUNE line, never score a line
//! itself (it compares the strategies' scores), and never add a line back.

use super::draft::{Draft, Reason, is_blank};
use std::ops::Range;

/// With a goal, the kept lines of a source file hold at most this share of its bytes
/// ([`cap_focus`])...
const FOCUS_SHARE: f64 = 0.5;
/// ...or this many bytes if that is more (about 2,000 tokens: a short text kept whole costs
/// little)...
const FOCUS_FLOOR_BYTES: usize = 8192;
/// ...and only blocks scoring under this share of the best kept block are removed for the cap.
const FOCUS_SPARE_FROM: f32 = 0.5;

/// A budget for the rendered text of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextBudget {
    /// Largest rendered size in bytes: kept lines and marker lines, each with its `'\n'`.
    pub bytes: usize,
    /// Bytes of one marker line (its widest form for this text), newline included.
    pub marker_bytes: usize,
}

/// The kept lines of `draft` cut into blocks, 0-based half-open ranges in order: a block ends where
/// a removed line, a blank line followed by a non-blank one (a paragraph or definition boundary,
/// the blank lines staying with the block above), a change between NO_PRUNE and other lines, or a
/// line flagged in `breaks` comes. Relevance is decided per block, so a kept run that spans several
/// definitions (small bodies the plan kept because a marker would cost as much) is not one
/// all-or-nothing unit.
fn blocks(draft: &Draft, lines: &[&str], breaks: &[bool]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for i in 0..lines.len() {
        if !draft.keep[i] {
            if let Some(s) = start.take() {
                out.push(s..i);
            }
            continue;
        }
        if let Some(s) = start {
            let paragraph = is_blank(lines[i - 1]) && !is_blank(lines[i]);
            let forced = breaks.get(i).copied().unwrap_or(false);
            if paragraph || forced || draft.must[i] != draft.must[i - 1] {
                out.push(s..i);
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(s..lines.len());
    }
    out
}

/// Rendered size of the lines flagged in `keep` with one marker per removed run.
pub(crate) fn rendered_bytes(keep: &[bool], lines: &[&str], marker_bytes: usize) -> usize {
    let mut size = 0;
    let mut in_removed = false;
    for (i, line) in lines.iter().enumerate() {
        if keep[i] {
            size += line.len() + 1;
            in_removed = false;
        } else if !in_removed {
            size += marker_bytes;
            in_removed = true;
        }
    }
    size
}

/// The bytes of the lines `r` with their newlines, and how many of the two lines beside `r` are
/// removed. A removed run costs one marker; each removed neighbour of `r` merges a run with it,
/// one marker less.
fn span(keep: &[bool], lines: &[&str], r: &Range<usize>) -> (usize, usize) {
    let before = r.start > 0 && !keep[r.start - 1];
    let after = r.end < lines.len() && !keep[r.end];
    let bytes = lines[r.clone()].iter().map(|l| l.len() + 1).sum();
    (bytes, usize::from(before) + usize::from(after))
}

/// Removes the kept lines `r` (all kept) from `draft` for `reason` and returns the new rendered
/// size, from the old one: their bytes go, and the markers around them merge or appear.
fn remove_range(
    draft: &mut Draft,
    lines: &[&str],
    r: Range<usize>,
    size: usize,
    marker_bytes: usize,
    reason: Reason,
) -> usize {
    let (bytes, removed_beside) = span(&draft.keep, lines, &r);
    for j in r {
        draft.remove(j, reason);
    }
    (size + marker_bytes).saturating_sub(bytes + removed_beside * marker_bytes)
}

/// The rendered size, from `size`, once the removed lines `r` (all removed) are kept again: the
/// inverse of [`remove_range`]: their bytes come back, and the run holding them splits, shrinks
/// or goes.
fn restored_size(
    draft: &Draft,
    lines: &[&str],
    r: Range<usize>,
    size: usize,
    marker_bytes: usize,
) -> usize {
    let (bytes, removed_beside) = span(&draft.keep, lines, &r);
    (size + bytes + removed_beside * marker_bytes).saturating_sub(marker_bytes)
}

/// Removes the least relevant kept blocks of `draft` until its rendering fits `budget`.
///
/// Blocks are paragraphs of kept lines ([`blocks`]); a block's relevance is the best score of its
/// non-blank lines (the strategies score a kept definition, section or incident through all its
/// lines; a blank line holds nothing). Ties go to the block farthest from the most relevant one,
/// so what stays is the best block and its neighbourhood. NO_PRUNE lines always stay. If the most
/// relevant block alone is still too big, its tail is removed (its head holds the signature or
/// heading that names it). Greedy removal can overshoot: once a large block had to go, the smaller
/// ones removed before it may fit again, and they come back, most relevant first, while the text
/// fits (fitted to 10 KiB, stop 51: 0.7 points of recall on the test split for 0.4 of reduction;
/// under the focus cap, [`cap_focus`], 0.1 point at the defaults for under 0.1 of reduction).
/// `breaks` flags lines that start a block in any case (empty: none). Linear in the number of
/// lines plus a sort of the blocks. Returns whether anything was removed.
pub(crate) fn fit(draft: &mut Draft, lines: &[&str], budget: &TextBudget, breaks: &[bool]) -> bool {
    fit_as(draft, lines, budget, breaks, Reason::Budget, None)
}

/// Caps what a goal keeps of a source file: when the kept lines hold more than [`FOCUS_SHARE`] of
/// the text's bytes and more than [`FOCUS_FLOOR_BYTES`], the least relevant kept blocks are
/// removed (reason `hors focus`), in [`fit`]'s order and refilled as it refills, until the kept
/// bytes are at most the larger of the two; but only blocks scoring under [`FOCUS_SPARE_FROM`] of
/// the best one and holding no line of `draft.structure` may go. A plan that keeps most of a file
/// for a goal has not told its parts apart, and what it ranks far below its best is the least
/// likely to be what the goal needs; what it ranks close to the best, and the lines that give the
/// rest its shape (imports, headers, signatures), stay, over the cap if need be. Markers are not
/// counted: the cap is on the text kept, not on the response. Returns whether anything was
/// removed.
pub(crate) fn cap_focus(draft: &mut Draft, lines: &[&str]) -> bool {
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let cap = FOCUS_FLOOR_BYTES.max((total as f64 * FOCUS_SHARE) as usize);
    if cap >= total {
        return false;
    }
    let budget = TextBudget {
        bytes: cap,
        marker_bytes: 0,
    };
    fit_as(
        draft,
        lines,
        &budget,
        &[],
        Reason::OffFocus,
        Some(FOCUS_SPARE_FROM),
    )
}

/// [`fit`] removing for `reason`. With `spare_from`, blocks scoring at least that share of the
/// best one stay, and the best one's tail is never cut: the result may not fit.
fn fit_as(
    draft: &mut Draft,
    lines: &[&str],
    budget: &TextBudget,
    breaks: &[bool],
    reason: Reason,
    spare_from: Option<f32>,
) -> bool {
    let mb = budget.marker_bytes;
    let mut size = rendered_bytes(&draft.keep, lines, mb);
    if size <= budget.bytes {
        return false;
    }
    let blocks = blocks(draft, lines, breaks);
    // A blank line holds nothing: it must not carry the block it closes.
    let scores: Vec<f32> = blocks
        .iter()
        .map(|r| {
            let score = |i: usize| draft.score[i];
            r.clone()
                .filter(|&i| !is_blank(lines[i]))
                .map(score)
                .reduce(f32::max)
                .unwrap_or_else(|| r.clone().map(score).fold(f32::MIN, f32::max))
        })
        .collect();
    let removable = |r: &Range<usize>| !draft.must[r.start];
    let Some(top) = (0..blocks.len())
        .filter(|&b| removable(&blocks[b]))
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
    else {
        return false;
    };
    let distance = |r: &Range<usize>| r.start.abs_diff(blocks[top].start);
    // Under a relevance cap, only the blocks ranked well below the best one may go, and none that
    // holds a structural line (a kept definition keeps its signature, a method its class).
    let below = spare_from.map_or(f32::INFINITY, |share| share * scores[top]);
    let shapes =
        |r: &Range<usize>| spare_from.is_some() && draft.structure[r.clone()].contains(&true);
    let mut order: Vec<usize> = (0..blocks.len())
        .filter(|&b| b != top && removable(&blocks[b]) && scores[b] < below && !shapes(&blocks[b]))
        .collect();
    order.sort_by(|&a, &b| {
        scores[a]
            .total_cmp(&scores[b])
            .then(distance(&blocks[b]).cmp(&distance(&blocks[a])))
            .then(b.cmp(&a))
    });
    let mut changed = false;
    let mut removed = Vec::new();
    for b in order {
        if size <= budget.bytes {
            break;
        }
        size = remove_range(draft, lines, blocks[b].clone(), size, mb, reason);
        removed.push(b);
        changed = true;
    }
    // Removing a large block can leave room for smaller ones removed before it: the most
    // relevant of them come back while the text still fits (they went least relevant first, so
    // in reverse).
    if size <= budget.bytes {
        for b in removed.into_iter().rev() {
            let grown = restored_size(draft, lines, blocks[b].clone(), size, mb);
            if grown <= budget.bytes {
                draft.keep[blocks[b].clone()].fill(true);
                size = grown;
            }
        }
    }
    // The best block alone is too big: keep its head, remove the rest of it.
    let r = blocks[top].clone();
    let mut end = r.end;
    while spare_from.is_none() && size > budget.bytes && end > r.start + 1 {
        end -= 1;
        size = remove_range(draft, lines, end..end + 1, size, mb, reason);
        changed = true;
    }
    debug_assert_eq!(size, rendered_bytes(&draft.keep, lines, mb));
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

    /// Five lines scored `scores` whose second and fourth are removed: three one-line blocks.
    fn three_blocks(scores: &[f32]) -> Draft {
        let mut d = draft(scores);
        d.keep[1] = false;
        d.keep[3] = false;
        d
    }

    /// A budget of `bytes` with markers of 2 bytes.
    fn two_byte_markers(bytes: usize) -> TextBudget {
        TextBudget {
            bytes,
            marker_bytes: 2,
        }
    }

    #[test]
    fn fits_already() {
        let lines = ["a", "b"];
        let mut d = draft(&[0.0, 1.0]);
        let b = TextBudget {
            bytes: 4,
            marker_bytes: 10,
        };
        assert!(!fit(&mut d, &lines, &b, &[]));
        assert_eq!(d.keep, [true, true]);
    }

    /// Removing a big block leaves room: a smaller, less relevant block removed before it comes
    /// back, so the budget is not left mostly empty (a 14 KB file fitted to 10 KiB once kept
    /// 1 KB).
    #[test]
    fn room_left_by_a_big_block_is_filled_again() {
        let big = "b".repeat(20);
        let lines = ["low", "x", big.as_str(), "y", "high"];
        let mut d = three_blocks(&[1.0, 0.0, 2.0, 0.0, 5.0]);
        // `low` goes first, then `big` must go too; `low` then fits again beside `high`.
        assert!(fit(&mut d, &lines, &two_byte_markers(13), &[]));
        assert_eq!(d.keep, [true, false, false, false, true]);
        assert_eq!(rendered_bytes(&d.keep, &lines, 2), 11);
    }

    #[test]
    fn least_relevant_blocks_go_first() {
        let lines = ["low", "x", "high", "y", "mid"];
        let mut d = three_blocks(&[0.1, 0.0, 5.0, 0.0, 1.0]);
        // 3 blocks: low (4 B), high (5 B), mid (4 B), two markers of 2 B: 17 B. Removing `low`
        // joins its marker with the next one: 13 B.
        assert!(fit(&mut d, &lines, &two_byte_markers(13), &[]));
        assert_eq!(d.keep, [false, false, true, false, true]);
        assert_eq!(rendered_bytes(&d.keep, &lines, 2), 13);
        // Tighter: `mid` goes next, `high` stays.
        assert!(fit(&mut d, &lines, &two_byte_markers(12), &[]));
        assert_eq!(d.keep, [false, false, true, false, false]);
    }

    #[test]
    fn a_blank_line_does_not_carry_the_block_it_closes() {
        // Block `low` ends with a blank line scored high (the context of something else): the
        // block is still judged by `low`, and goes before `mid`.
        let lines = ["low", "", "mid", "x", "high"];
        let mut d = draft(&[0.1, 9.0, 1.0, 0.0, 5.0]);
        d.keep[3] = false;
        // Blocks: [low, ""] (5 B), [mid] (4 B), [high] (5 B), one marker of 2 B: 16 B. Removing
        // [low, ""] adds a marker: 13 B. (Judged by its blank line, it would stay and `mid` go.)
        let b = TextBudget {
            bytes: 13,
            marker_bytes: 2,
        };
        assert!(fit(&mut d, &lines, &b, &[]));
        assert_eq!(d.keep, [false, false, true, false, true]);
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
        fit(&mut d, &lines, &b, &[]);
        assert!(d.keep[0], "NO_PRUNE line removed");
        assert!(d.keep[2], "the best block keeps its signature");
        assert!(!d.keep[5]);
    }

    /// Paragraphs of `n` lines of 99 bytes (plus newline), one per score, separated by blanks.
    fn paragraphs(scores: &[f32], n: usize) -> (Vec<String>, Vec<f32>) {
        let mut lines = Vec::new();
        let mut per_line = Vec::new();
        for (k, &s) in scores.iter().enumerate() {
            for _ in 0..n {
                lines.push(format!("{k}{}", "x".repeat(98)));
                per_line.push(s);
            }
            lines.push(String::new());
            per_line.push(s);
        }
        (lines, per_line)
    }

    #[test]
    fn the_focus_cap_removes_only_blocks_ranked_far_below_the_best() {
        // 10 paragraphs of 20 lines (about 20 KB), all kept: the cap is half of the bytes.
        let scores = [9.0, 1.0, 8.0, 2.0, 6.0, 0.5, 5.0, 1.5, 4.6, 3.0];
        let (lines, per_line) = paragraphs(&scores, 20);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut d = draft(&per_line);
        assert!(cap_focus(&mut d, &lines));
        let kept = |k: usize| d.keep[k * 21];
        // Under half the best (4.5): 0.5, 1.0, 1.5, 2.0 and 3.0 go, lowest first, until the kept
        // bytes are under the cap (5 of 10 paragraphs).
        let gone: Vec<usize> = (0..scores.len()).filter(|&k| !kept(k)).collect();
        assert_eq!(gone, [1, 3, 5, 7, 9]);
        let kept_bytes: usize = (0..lines.len())
            .filter(|&i| d.keep[i])
            .map(|i| lines[i].len() + 1)
            .sum();
        let total: usize = lines.iter().map(|l| l.len() + 1).sum();
        assert!(
            kept_bytes as f64 <= FOCUS_SHARE * total as f64,
            "{kept_bytes} of {total}"
        );
        assert!(
            d.reason
                .iter()
                .zip(&d.keep)
                .all(|(r, k)| *k || *r == Reason::OffFocus)
        );
    }

    #[test]
    fn the_focus_cap_spares_near_best_blocks_and_short_texts() {
        // Every paragraph scores at least half the best: nothing goes, over the cap or not.
        let (lines, per_line) = paragraphs(&[9.0, 5.0, 8.0, 6.0, 4.5], 40);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut d = draft(&per_line);
        assert!(!cap_focus(&mut d, &lines));
        assert!(d.keep.iter().all(|&k| k));
        // A text of at most FOCUS_FLOOR_BYTES is never capped.
        let (lines, per_line) = paragraphs(&[9.0, 0.1, 0.1, 0.1], 20);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert!(lines.iter().map(|l| l.len() + 1).sum::<usize>() <= FOCUS_FLOOR_BYTES);
        let mut d = draft(&per_line);
        assert!(!cap_focus(&mut d, &lines));
        assert!(d.keep.iter().all(|&k| k));
    }

    #[test]
    fn the_focus_cap_is_at_least_its_floor() {
        // 5 paragraphs (about 10 KB): half would be 5 KB, the floor is 8 KiB, so one goes.
        let (lines, per_line) = paragraphs(&[9.0, 1.0, 8.0, 2.0, 7.0], 20);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut d = draft(&per_line);
        assert!(cap_focus(&mut d, &lines));
        let gone: Vec<usize> = (0..5).filter(|&k| !d.keep[k * 21]).collect();
        assert_eq!(gone, [1]);
    }

    #[test]
    fn the_focus_cap_never_cuts_the_best_block_nor_protected_or_structural_ones() {
        // Still over the cap once what may go is gone: the best block, a NO_PRUNE one and one
        // holding a signature stay (the best one whole), the two others go.
        let (lines, mut per_line) = paragraphs(&[9.0, 1.0, 1.0, 1.0, 0.0], 60);
        per_line[..61].fill(9.0);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut d = draft(&per_line);
        d.must[61..122].fill(true); // paragraph 1: NO_PRUNE
        d.structure[122] = true; // paragraph 2 holds a signature
        assert!(cap_focus(&mut d, &lines));
        let kept: Vec<bool> = (0..5).map(|k| d.keep[k * 61]).collect();
        assert_eq!(kept, [true, true, true, false, false]);
        assert!(
            d.keep[..61].iter().all(|k| *k),
            "the best block is never cut"
        );
        // Nothing scores: nothing is ranked, nothing goes.
        let (lines, per_line) = paragraphs(&[0.0; 6], 20);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut d = draft(&per_line);
        assert!(!cap_focus(&mut d, &lines));
    }
}
