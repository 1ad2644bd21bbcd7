//! Rendering a plan into seed 001's output pieces: the pruned text (kept lines in order, optional
//! `N│ ` prefixes, optional marker lines) and one `pruned_block` annotation per removed run.
//!
//! Owns the text format of markers and line prefixes. It must never decide what to keep, and never
//! let a marker and its annotation differ by a single byte.

use super::engine::{Plan, Removed};
use crate::contract::types::{PrunedBlock, PrunedBlockKind};
use std::num::NonZeroU64;

/// Client-side pattern of a marker line (seed 001 section 6.2).
pub const MARKER_PATTERN: &str = r"^⟦PRUNÉ: prune_id=(?<prune_id>[^\s]+) lignes (?<start>\d+)-(?<end>\d+) \((?<count>\d+)\) raison=(?<reason>.*)⟧$";

/// Client-side pattern of a compact marker line ([`Markers::Compact`]).
pub const COMPACT_MARKER_PATTERN: &str =
    r"^\[… lines? (?<start>\d+)(?:-(?<end>\d+))?(?:: (?<names>.+))?\]$";

/// How removed runs show in the pruned text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Markers {
    /// No marker lines (the annotations still say what was removed).
    Off,
    /// Seed 001's canonical marker, byte for byte the annotation's (`prune_text`, `POST /prune`).
    Canonical,
    /// `[… lines a-b]` ([`compact_marker`]): what `read` and `bash` show the model, with the
    /// prune id named once in the tool's note instead of on every marker (7 o200k tokens a
    /// marker with its newline, instead of ~40 with a store id).
    Compact,
}

/// `lines` of the stored text `prune_id` (the first is line `first_line`) as a result within
/// `budget` bytes shows them: a line longer than a quarter of the budget (and than
/// [`crate::budget::MAX_LINE_BYTES`]) is clipped to that, followed by how to read it whole. Whole,
/// such a line could not be shown at all (a pruned page was cut before it; an answer by question
/// went over its budget).
pub fn clip_long_lines<'a>(
    lines: &[&'a str],
    first_line: usize,
    budget: usize,
    prune_id: &str,
) -> Vec<std::borrow::Cow<'a, str>> {
    let limit = (budget / 4).max(crate::budget::MAX_LINE_BYTES);
    lines
        .iter()
        .enumerate()
        .map(|(i, &line)| {
            if line.len() <= limit {
                return std::borrow::Cow::Borrowed(line);
            }
            let n = first_line + i;
            std::borrow::Cow::Owned(format!(
                "{} …[line {n} is {}: recover_text prune_id={prune_id} ranges=[{{start_line:{n},end_line:{n}}}]]",
                crate::budget::clip_utf8(line, limit),
                crate::budget::human_bytes(line.len() as u64),
            ))
        })
        .collect()
}

/// The compact marker of removed lines `start..=end`: `[… lines a-b]`, `[… line a]` (7 o200k
/// tokens with its newline; `[… lines a-b pruned]` took 9, `⟦lines a-b pruned⟧` 14), with what
/// the run hides when there is a label: `[… lines 120-154: fn parse_escape, fn decode +2 more]`.
/// The note ([`compact_note`]) says once what the markers stand for.
pub fn compact_marker(start: usize, end: usize, label: Option<&str>) -> String {
    let names = label.map(|l| format!(": {l}")).unwrap_or_default();
    if start == end {
        format!("[… line {start}{names}]")
    } else {
        format!("[… lines {start}-{end}{names}]")
    }
}

/// A removed run's reason as annotations and canonical markers carry it: the engine's reason,
/// then what the run hides when its marker names anything (`corps hors focus: fn a, fn b`).
pub fn reason_with_names(r: &Removed) -> String {
    match r.label() {
        Some(l) => format!("{}: {l}", r.reason),
        None => r.reason.clone(),
    }
}

/// The note a tool adds after a text pruned with compact markers, naming once the prune id whose
/// lines they number: `[pruned lines: recover_text prune_id=X]` (24 o200k tokens with its
/// newline and a store id; the server's instructions say how markers and ids work). `what` says
/// which text (`"stdout"`: `[pruned stdout lines: …]`; empty for the only one).
pub fn compact_note(what: &str, prune_id: &str) -> String {
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("{what} ")
    };
    format!("[pruned {what}lines: recover_text prune_id={prune_id}]")
}

/// A plan rendered for the caller.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// Kept lines (and markers when asked), joined with `'\n'`.
    pub pruned_text: String,
    /// One annotation per removed run, in order.
    pub annotations: Vec<PrunedBlock>,
    /// Number of original lines kept.
    pub kept_lines: usize,
    /// Number of original lines removed.
    pub pruned_lines: usize,
}

/// The canonical one-line marker:
/// `⟦PRUNÉ: prune_id=<id> lignes <a>-<b> (<n>) raison=<reason>⟧`.
///
/// Line breaks in `reason` become spaces so the marker stays one line; `prune_id` must not contain
/// whitespace (store ids never do).
pub fn marker(prune_id: &str, start: usize, end: usize, count: usize, reason: &str) -> String {
    let reason = reason.replace(['\r', '\n'], " ");
    format!("⟦PRUNÉ: prune_id={prune_id} lignes {start}-{end} ({count}) raison={reason}⟧")
}

/// Renders `plan` over `lines`.
///
/// `annotate_lines` prefixes each kept line with `{n}│ ` (its original 1-based number); markers are
/// never prefixed. `markers` says what stands where each removed block was (the canonical marker
/// is the annotation's; `annotation.marker` is filled either way). `trailing_newline` (did the original text end with
/// `'\n'`?) is taken as a parameter because [`super::engine::split_lines`] drops that fact: the
/// pruned text ends with `'\n'` exactly when it is non-empty and the original did.
pub fn render(
    lines: &[&str],
    plan: &Plan,
    prune_id: &str,
    annotate_lines: bool,
    markers: Markers,
    trailing_newline: bool,
) -> Rendered {
    render_from(
        lines,
        plan,
        prune_id,
        annotate_lines,
        markers,
        trailing_newline,
        1,
    )
}

/// [`render`] of a window of a larger text whose first line is line `first_line` (1-based) of
/// it: markers, annotations and `N│ ` prefixes give the larger text's numbers (those its
/// `prune_id` recovers), while `plan` numbers the window from 1.
pub fn render_from(
    lines: &[&str],
    plan: &Plan,
    prune_id: &str,
    annotate_lines: bool,
    markers: Markers,
    trailing_newline: bool,
    first_line: usize,
) -> Rendered {
    let shift = first_line.max(1) - 1;
    let annotations: Vec<PrunedBlock> = plan
        .removed
        .iter()
        .map(|r| {
            let (start, end) = (r.start_line + shift, r.end_line + shift);
            let count = end + 1 - start;
            let reason = reason_with_names(r);
            PrunedBlock {
                kind: PrunedBlockKind::PrunedBlock,
                marker: marker(prune_id, start, end, count, &reason),
                original_start_line: nonzero(start),
                original_end_line: nonzero(end),
                pruned_line_count: nonzero(count),
                reason,
            }
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut next = annotations.iter().zip(&plan.removed).peekable();
    let mut kept_lines = 0;
    for (i, line) in lines.iter().enumerate() {
        if plan.keep.get(i).copied().unwrap_or(true) {
            kept_lines += 1;
            out.push(if annotate_lines {
                format!("{}│ {line}", i + 1 + shift)
            } else {
                (*line).to_owned()
            });
        } else if let Some((a, r)) = next.next_if(|(_, r)| r.start_line == i + 1) {
            match markers {
                Markers::Off => {}
                Markers::Canonical => out.push(a.marker.clone()),
                Markers::Compact => out.push(compact_marker(
                    r.start_line + shift,
                    r.end_line + shift,
                    r.label().as_deref(),
                )),
            }
        }
    }
    let mut pruned_text = out.join("\n");
    if trailing_newline && !out.is_empty() {
        pruned_text.push('\n');
    }
    Rendered {
        pruned_text,
        annotations,
        kept_lines,
        pruned_lines: lines.len() - kept_lines,
    }
}

fn nonzero(n: usize) -> NonZeroU64 {
    NonZeroU64::new(n as u64).unwrap_or(NonZeroU64::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::Removed;

    fn plan(keep: &[bool], removed: &[(usize, usize, &str)]) -> Plan {
        Plan {
            keep: keep.to_vec(),
            removed: removed
                .iter()
                .map(|&(s, e, r)| Removed {
                    start_line: s,
                    end_line: e,
                    reason: r.into(),
                    names: vec![],
                    more: 0,
                })
                .collect(),
            warnings: vec![],
            used_fallback: false,
        }
    }

    #[test]
    fn marker_format() {
        assert_eq!(
            marker("prn_1", 120, 154, 35, "hors focus"),
            "⟦PRUNÉ: prune_id=prn_1 lignes 120-154 (35) raison=hors focus⟧"
        );
        assert_eq!(
            marker("p", 1, 1, 1, "a\nb"),
            "⟦PRUNÉ: prune_id=p lignes 1-1 (1) raison=a b⟧"
        );
    }

    #[test]
    fn markers_annotations_and_numbers() {
        let lines = ["a", "b", "c", "d"];
        let p = plan(&[true, false, false, true], &[(2, 3, "hors focus")]);
        let r = render(&lines, &p, "prn_x", true, Markers::Canonical, true);
        let m = "⟦PRUNÉ: prune_id=prn_x lignes 2-3 (2) raison=hors focus⟧";
        assert_eq!(r.pruned_text, format!("1│ a\n{m}\n4│ d\n"));
        assert_eq!(r.annotations.len(), 1);
        assert_eq!(r.annotations[0].marker, m);
        assert_eq!(r.annotations[0].pruned_line_count.get(), 2);
        assert_eq!((r.kept_lines, r.pruned_lines), (2, 2));
    }

    /// A window starting at line 700 of the stored text: its numbers, markers and annotations
    /// are the stored text's.
    #[test]
    fn a_window_renders_with_the_stored_texts_numbers() {
        let lines = ["a", "b", "c", "d"];
        let p = plan(&[true, false, false, true], &[(2, 3, "hors focus")]);
        let r = render_from(&lines, &p, "prn_x", true, Markers::Compact, true, 700);
        assert_eq!(r.pruned_text, "700│ a\n[… lines 701-702]\n703│ d\n");
        assert_eq!(r.annotations[0].original_start_line.get(), 701);
        assert_eq!(r.annotations[0].original_end_line.get(), 702);
        assert!(r.annotations[0].marker.contains("lignes 701-702 (2)"));
    }

    #[test]
    fn marker_kept_in_annotation_without_insertion() {
        let lines = ["a", "b"];
        let p = plan(&[false, true], &[(1, 1, "lignes répétées")]);
        let r = render(&lines, &p, "id", false, Markers::Off, false);
        assert_eq!(r.pruned_text, "b");
        assert!(
            r.annotations[0]
                .marker
                .starts_with("⟦PRUNÉ: prune_id=id lignes 1-1 (1)")
        );
    }

    #[test]
    fn no_op_plan_reproduces_text() {
        let text = "x\r\ny\n";
        let lines = crate::prune::engine::split_lines(text);
        let p = plan(&[true, true], &[]);
        assert_eq!(
            render(
                &lines,
                &p,
                "id",
                false,
                Markers::Canonical,
                text.ends_with('\n')
            )
            .pruned_text,
            text
        );
        assert_eq!(
            render(&[], &plan(&[], &[]), "id", false, Markers::Canonical, true).pruned_text,
            ""
        );
    }

    #[test]
    fn compact_markers_match_their_pattern() {
        let re = regex::Regex::new(COMPACT_MARKER_PATTERN).unwrap();
        let (one, run) = (compact_marker(7, 7, None), compact_marker(120, 154, None));
        assert_eq!(
            (one.as_str(), run.as_str()),
            ("[… line 7]", "[… lines 120-154]")
        );
        let named = compact_marker(120, 154, Some("fn parse_escape, fn decode +2 more"));
        assert_eq!(
            named,
            "[… lines 120-154: fn parse_escape, fn decode +2 more]"
        );
        let caps = re.captures(&named).unwrap();
        assert_eq!(&caps["names"], "fn parse_escape, fn decode +2 more");
        assert_eq!((&caps["start"], &caps["end"]), ("120", "154"));
        let one = re.captures(&one).unwrap();
        assert_eq!((&one["start"], one.name("end")), ("7", None));
        let run = re.captures(&run).unwrap();
        assert_eq!((&run["start"], &run["end"]), ("120", "154"));
        assert!(!re.is_match("[... lines 1-2]") && !re.is_match("x [… lines 1-2]"));
        assert!(
            !re.is_match("[… lines 1-2 pruned]"),
            "the earlier form is not a marker"
        );
    }

    #[test]
    fn marker_matches_pattern() {
        let re = regex::Regex::new(MARKER_PATTERN).unwrap();
        let caps = re
            .captures("⟦PRUNÉ: prune_id=prn_1 lignes 3-9 (7) raison=corps hors focus⟧")
            .unwrap();
        assert_eq!(&caps["start"], "3");
        assert_eq!(&caps["reason"], "corps hors focus");
    }
}
