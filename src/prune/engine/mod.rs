//! The built-in pruning engine: a pure, deterministic, line-level decision of which lines of a text
//! serve a goal (seed 001 sections 2.3, 5, 7.3, 7.4 and 9).
//!
//! Owns the decision only: for each line, keep or remove, and for each removed run, a short French
//! reason. It must never do I/O, read a clock, use randomness or the network, never remove a
//! NO_PRUNE line, and never return a plan that breaks `max_prune_ratio` or `min_keep_lines` except
//! to fit a response budget it was given (then with the warning `budget_elided`).
//!
//! How a plan is made: the goal is split into terms (identifier-aware, stop words dropped, light
//! stemming, IDF over the lines of this text); a strategy per source type marks lines to remove
//! (code: keeps the skeleton and the code of the few best-ranked definitions whole, of a very long
//! one only the paragraphs about the goal, and of their comments those about the goal; removes the
//! bodies and doc comments of the others; when no line holds a goal term, nothing ranks, and it
//! keeps whole the definitions from the top of the file through half its bytes; logs: keeps
//! alerts (less the warnings beside a failure the goal names), the incidents the goal is about,
//! the goal's lines, head and tail; docs: keeps headings, the sections and paragraphs about the
//! goal or holding a phrase it quotes); then NO_PRUNE lines are forced back, blank lines
//! around removed runs are absorbed, runs too small to be worth a marker (~40 tokens) are
//! restored, code that still keeps more than half of its bytes (and more than 8 KiB) loses its
//! blocks ranked under half the best one's and holding no structural line, least relevant first,
//! until it keeps half (`budget::cap_focus`), and removed lines are added back best first until
//! both limits hold.
//!
//! An empty goal (nothing left after stop words) carries no focus, so nothing is removed for being
//! off-focus: logs still lose runs of repeated lines, code and docs are kept whole, and the plan
//! warns `empty_goal`.

mod budget;
mod code;
mod constraints;
mod detect;
mod directives;
mod docs;
mod draft;
mod evidence;
mod logs;
mod names;
mod terms;

pub use budget::TextBudget;
pub use detect::detect_source_type;
pub(crate) use draft::distances;
pub use names::label as names_label;

/// The longest reason the builtin engine writes in a marker (for marker-width estimates).
pub fn widest_reason() -> &'static str {
    draft::Reason::widest()
}

/// `true` for every line inside a NO_PRUNE block (directive lines included): what no backend may
/// remove.
pub fn protected_lines(lines: &[&str]) -> Vec<bool> {
    directives::protected(lines)
}

use crate::contract::types::SourceType;
use draft::Draft;
use terms::{Matches, Query};

/// Hard constraints of one run (seed 001 section 5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Largest allowed fraction of removed lines (0..=1).
    pub max_prune_ratio: f64,
    /// Smallest number of kept lines (capped at the number of lines).
    pub min_keep_lines: usize,
}

impl Default for Limits {
    /// The tools' defaults: `max_prune_ratio` 0.8, `min_keep_lines` 20.
    fn default() -> Self {
        Limits {
            max_prune_ratio: 0.8,
            min_keep_lines: 20,
        }
    }
}

/// One maximal run of removed lines, 1-based inclusive original line numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    /// First removed line (1-based).
    pub start_line: usize,
    /// Last removed line (1-based, inclusive).
    pub end_line: usize,
    /// Short French reason, one line (e.g. `hors focus`).
    pub reason: String,
    /// What the run hides that its marker names, most relevant first: definitions (`fn
    /// parse_escape`), headings, or the kinds of log lines (`870 passing test lines`).
    pub names: Vec<String>,
    /// How many more definitions or headings the run holds than `names` shows (`+3 more`).
    pub more: usize,
}

impl Removed {
    /// What the marker says the run hides (`fn a, fn b +3 more`), if anything.
    pub fn label(&self) -> Option<String> {
        names::label(&self.names, self.more)
    }
}

/// The engine's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// One entry per input line: `true` when the line is kept.
    pub keep: Vec<bool>,
    /// The removed runs, in order, covering exactly the lines with `keep == false`.
    pub removed: Vec<Removed>,
    /// Warning codes (`empty_goal`, `constraints_unmet`).
    pub warnings: Vec<String>,
    /// `true` when the engine could not comply and returned a no-op.
    pub used_fallback: bool,
}

impl Plan {
    /// The plan that keeps exactly the lines flagged in `keep` (a remote backend's mask, a
    /// benchmark's gold lines): each maximal run of the others is one removal, reason
    /// `hors focus`; no warnings.
    pub fn from_keep(keep: Vec<bool>) -> Plan {
        let removed = draft::runs(&keep)
            .into_iter()
            .map(|r| Removed {
                start_line: r.start + 1,
                end_line: r.end,
                reason: draft::Reason::OffFocus.text().to_owned(),
                names: Vec::new(),
                more: 0,
            })
            .collect();
        Plan {
            keep,
            removed,
            warnings: Vec::new(),
            used_fallback: false,
        }
    }
}

/// Lines of `text` without their terminators (`"a\nb\n"` -> `["a", "b"]`; `""` -> `[]`; a `'\r'`
/// before `'\n'` stays in the line, so joining with `'\n'` restores the text).
pub fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    // One SIMD scan over the text instead of one `memchr` call per line (`str::split`). No
    // capacity guessed from the size: a text of a few long lines would reserve far too much.
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        lines.push(&text[start..end]);
        start = end + 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Decides which of `lines` to keep for `goal`. Deterministic; linear in the size of the text.
///
/// Falls back to a no-op (`used_fallback`, warning `constraints_unmet`) only when no plan can
/// satisfy `limits` at all (a NaN or negative `max_prune_ratio`): keeping more lines is always
/// allowed, so any other plan is repaired by adding lines back.
pub fn plan(lines: &[&str], goal: &str, source: SourceType, limits: &Limits) -> Plan {
    plan_within(lines, goal, source, limits, None)
}

/// [`plan`], then fitted to `budget` when one is given: if the kept lines and their markers would
/// not fit, the least relevant kept blocks are removed too (reason `hors budget`, warning
/// `budget_elided`), even past `max_prune_ratio`: the response budget is a hard limit on what is
/// returned, the ratio a limit on what relevance alone may remove. An empty goal ranks nothing,
/// so it is never fitted.
pub fn plan_within(
    lines: &[&str],
    goal: &str,
    source: SourceType,
    limits: &Limits,
    budget: Option<TextBudget>,
) -> Plan {
    let n = lines.len();
    let Some(allowed) = constraints::max_removable(n, limits) else {
        return fallback(n);
    };
    let query = Query::new(goal, source == SourceType::Code);
    let mut warnings = Vec::new();
    if query.is_empty() {
        warnings.push("empty_goal".to_owned());
    }
    let mut draft = strategy(lines, &query, source);
    draft.must = directives::protected(lines);
    draft.force_must();
    draft.keep_atoms_whole();
    draft.absorb_blanks(lines);
    draft.keep_atoms_whole();
    draft.restore_small_runs(lines);
    draft.drop_islands(lines);
    draft.keep_atoms_whole();
    if source == SourceType::Code && !query.is_empty() && budget::cap_focus(&mut draft, lines) {
        draft.absorb_blanks(lines);
        draft.drop_islands(lines);
    }
    let partial = if source == SourceType::Code {
        constraints::Partial::Start
    } else {
        constraints::Partial::BestLines
    };
    constraints::add_back(&mut draft, allowed, partial);
    draft.keep_atoms_whole();
    draft.keep_closers();
    draft.restore_small_runs(lines);
    if !constraints::complies(&draft.keep, limits)
        || draft.keep.iter().zip(&draft.must).any(|(k, m)| *m && !*k)
    {
        return fallback(n);
    }
    let budget =
        budget.filter(|_| !query.is_empty() || source == SourceType::Logs && query.asked());
    if let Some(b) = budget {
        // The names markers show are part of the response: room for them is held back from
        // the kept lines (the least relevant of which go first).
        let held = held_for_names(&draft, lines, source, b.bytes);
        let lines_budget = TextBudget {
            bytes: b.bytes - held,
            ..b
        };
        let breaks = score_breaks(&draft, source);
        if budget::fit(&mut draft, lines, &lines_budget, &breaks) {
            warnings.push("budget_elided".to_owned());
        }
    }
    finish(draft, lines, source, budget, warnings)
}

/// Where the blocks the budget's fitting ranks break besides blank lines: in logs and docs,
/// wherever the strategy's decision or a line's score changes. A log's lines stand alone, and a
/// text with no blank line is otherwise one paragraph, whose tail the fitting would cut with
/// the line it ranks first in it (an error line near a log's end, the one relevant sentence in
/// prose). Code keeps its paragraphs: a definition is scored whole, and its head (the signature)
/// is what a cut keeps.
fn score_breaks(draft: &Draft, source: SourceType) -> Vec<bool> {
    if source == SourceType::Code {
        return Vec::new();
    }
    let mut since = 0;
    (0..draft.keep.len())
        .map(|i| {
            let changes = i > 0
                && (draft.keep[i] != draft.keep[i - 1] || draft.score[i] != draft.score[i - 1]);
            // In a log, a run of equal scores is cut every few lines too: removed whole, a long
            // run of filler left the budget unused; in pieces, those nearest the best stay.
            since += 1;
            let long = source == SourceType::Logs && since > LOG_BLOCK_LINES;
            if changes || long {
                since = 1;
            }
            changes || long
        })
        .collect()
}

/// The most lines a block of equal scores holds in a log, for the budget's fitting.
const LOG_BLOCK_LINES: usize = 8;

/// Bytes of a response budget of `bytes` held back for the names of the draft's markers
/// ([`names::reserve`]): its definitions' and headings' names, or in a log what kinds of lines its
/// removed runs hold (known before the fitting only for the runs the strategy removed).
fn held_for_names(draft: &Draft, lines: &[&str], source: SourceType, bytes: usize) -> usize {
    if source != SourceType::Logs {
        return names::reserve(bytes, &draft.names);
    }
    names::reserve(bytes, &log_names(draft, lines))
}

/// What kinds of lines each removed run of a log's draft holds, one name a run.
fn log_names(draft: &Draft, lines: &[&str]) -> Vec<names::Name> {
    names::log_kinds(lines, &draft::runs(&draft.keep), &draft.reason)
}

/// The plan of a finished draft: its removed runs, each named within the names' share of the
/// output (and within what `budget` leaves).
fn finish(
    draft: Draft,
    lines: &[&str],
    source: SourceType,
    budget: Option<TextBudget>,
    warnings: Vec<String>,
) -> Plan {
    let mut removed = draft.removed_runs();
    if !removed.is_empty() {
        let marker_bytes = budget.map_or(0, |b| b.marker_bytes);
        let rendered = budget::rendered_bytes(&draft.keep, lines, marker_bytes);
        let slack = budget.map(|b| b.bytes.saturating_sub(rendered));
        let allowance = names::allowance(rendered, slack);
        if source == SourceType::Logs {
            // One description a run: a marker shows it or not, with nothing more to count.
            names::attach(&mut removed, &log_names(&draft, lines), allowance);
        } else {
            names::attach(&mut removed, &draft.names, allowance);
        }
    }
    Plan {
        removed,
        keep: draft.keep,
        warnings,
        used_fallback: false,
    }
}

/// Fits a plan made elsewhere (a remote backend's keep mask) to `budget` the way [`plan_within`]
/// fits its own: the builtin strategy for `source` scores the lines for `goal`, and the least
/// relevant kept blocks are removed first (reason `hors budget`, warning `budget_elided`), past
/// `max_prune_ratio` if need be; NO_PRUNE lines are kept. The plan's own removals stay removed,
/// with the reason `hors focus`. A plan that already fits, one for an empty goal (nothing is
/// ranked) or one whose mask does not match `lines` is returned unchanged.
pub fn fit_plan(
    lines: &[&str],
    goal: &str,
    source: SourceType,
    plan: Plan,
    budget: TextBudget,
) -> Plan {
    let query = Query::new(goal, source == SourceType::Code);
    if query.is_empty()
        || plan.keep.len() != lines.len()
        || budget::rendered_bytes(&plan.keep, lines, budget.marker_bytes) <= budget.bytes
    {
        return plan;
    }
    // Only the strategy's relevance scores, and where its own decisions change (a block boundary:
    // a remote answer may keep one long run, a log with no blank line), are used.
    let mut draft = strategy(lines, &query, source);
    let breaks: Vec<bool> = (0..lines.len())
        .map(|i| i > 0 && draft.keep[i] != draft.keep[i - 1])
        .collect();
    draft.keep = plan.keep;
    draft.reason.fill(draft::Reason::OffFocus);
    draft.must = directives::protected(lines);
    draft.force_must();
    let mut warnings = plan.warnings;
    let lines_budget = TextBudget {
        bytes: budget.bytes - held_for_names(&draft, lines, source, budget.bytes),
        ..budget
    };
    if budget::fit(&mut draft, lines, &lines_budget, &breaks) {
        warnings.push("budget_elided".to_owned());
    }
    let mut fitted = finish(draft, lines, source, Some(budget), warnings);
    fitted.used_fallback = plan.used_fallback;
    fitted
}

/// Which lines the model sees, or sees named, in the rendering of `plan` over `lines`: the kept
/// lines and, for code and docs, every line of a definition or section whose name is shown (its
/// kept signature or heading, or its marker's names). What the benchmark's visible recall counts.
pub fn visible_lines(lines: &[&str], source: SourceType, plan: &Plan) -> Vec<bool> {
    let extents = match source {
        SourceType::Code => code::extents(lines),
        SourceType::Docs => docs::extents(lines),
        SourceType::Logs => Vec::new(),
    };
    names::visible(&extents, plan)
}

/// Of the lines a first result did not show, at most this share of their bytes comes back for a
/// second question (or the same one asked again): the most relevant of them. Asked with the same
/// question on the dev split of the code sets (realistic, multilang, issue reports), first result
/// plus this call as `recover_text` returns it (schemaVersion 4; stop 50): 0.5 kept
/// 89.8/88.3/90.9% of the gold lines at 19.3/16.3/12.3% fewer tokens than the raw file, 0.3
/// 88.5/86.8/88.3% at 27.0/23.3/19.2%, 0.2 88.4/85.5/87.6% at 31.8/27.0/22.8%. Since the budget
/// fitting refills the room a large removed block leaves (stop 51), a share fills more of itself:
/// 0.2 then gave 88.8/85.8/87.9% at 30.4/26.0/21.4%, and 0.17 88.4/85.7/87.7% at 32.0/27.3/22.7%,
/// as much recall as 0.2 gave before for a little more reduction. Candidates scoring under a share
/// of the best line (0.3, 0.5), a boost for the bodies of definitions whose signature was shown,
/// and scores for the callees of shown code or the rest of a partly shown definition (stop 51) all
/// lost recall for what they saved. Since the answer reaches the model as plain text instead of
/// escaped JSON (stop 53), the same share costs less: pooled over the three sets, 0.17 gave 87.5%
/// at 32.7% fewer tokens, 0.21 87.9% at 31.3%, 0.25 88.1% at 30.0%.
const MORE_SHARE: f64 = 0.21;

/// A plan for a second look at a text after a result that showed the lines flagged in `shown`: the
/// lines it did not show that serve `goal` best, within `budget` and a fifth (`MORE_SHARE`) of
/// their bytes, the rest behind named markers. Asked with the first question, it returns what that
/// question ranked next; with a new one, what the new one needs that was not shown. Lines already
/// shown are never returned again (NO_PRUNE lines included: they were shown). An empty goal ranks
/// nothing: the unshown lines come in order from the top. `narrowed`: the caller limited the
/// candidates to lines it chose (`ranges` with the question), which the share does not cut
/// (only `budget` does): a fifth of 21 lines asked for is 4.
pub fn plan_more(
    lines: &[&str],
    goal: &str,
    source: SourceType,
    shown: &[bool],
    budget: TextBudget,
    narrowed: bool,
) -> Plan {
    let query = Query::new(goal, source == SourceType::Code);
    let mut warnings = Vec::new();
    if query.is_empty() {
        warnings.push("empty_goal".to_owned());
    }
    let mut draft = strategy(lines, &query, source);
    let breaks = score_breaks(&draft, source);
    let was_shown = |i: usize| shown.get(i).copied().unwrap_or(false);
    // In a log nearly every line scores a little (its distance to a failure): only a tenth of
    // the best score or more makes a line a candidate there, so an answer is not filler.
    let floor = if source == SourceType::Logs {
        draft.score.iter().copied().fold(0.0, f32::max) * IDLE_SHARE
    } else {
        0.0
    };
    let mut unshown_bytes = 0;
    for (i, line) in lines.iter().enumerate() {
        if was_shown(i) {
            draft.remove(i, draft::Reason::OffFocus);
        } else {
            unshown_bytes += line.len() + 1;
            // What the strategy keeps, and whatever it scores, is a candidate.
            if query.is_empty() || draft.keep[i] || draft.score[i] > floor {
                draft.keep[i] = true;
            } else {
                draft.remove(i, draft::Reason::OffFocus);
            }
        }
    }
    // A definition comes back from its signature: a candidate line of its span brings the
    // signature lines not shown yet, ranked with the best of the span.
    for (sig, span) in &draft.heads {
        let best = span
            .clone()
            .filter(|&i| draft.keep[i] && !was_shown(i))
            .map(|i| draft.score[i])
            .fold(f32::NEG_INFINITY, f32::max);
        if best == f32::NEG_INFINITY {
            continue;
        }
        for i in sig.clone().filter(|&i| !was_shown(i)) {
            draft.keep[i] = true;
            draft.score[i] = draft.score[i].max(best);
        }
    }
    // What the first result showed is no news: its definitions are not named again.
    draft.names.retain(|n| !was_shown(n.line));
    let cap = if narrowed {
        usize::MAX
    } else {
        ((unshown_bytes as f64 * MORE_SHARE) as usize).max(budget.marker_bytes * 4)
    };
    let bytes = budget.bytes.min(cap);
    let lines_budget = TextBudget {
        bytes: bytes - held_for_names(&draft, lines, source, bytes),
        ..budget
    };
    if query.is_empty() {
        // Nothing ranks: from the top, as far as the budget goes.
        let mut used = 0;
        for (i, line) in lines.iter().enumerate() {
            if draft.keep[i] {
                used += line.len() + 1;
                if used > lines_budget.bytes {
                    draft.remove(i, draft::Reason::Budget);
                }
            }
        }
    } else if budget::fit(&mut draft, lines, &lines_budget, &breaks) {
        warnings.push("budget_elided".to_owned());
    }
    finish(draft, lines, source, Some(budget), warnings)
}

/// In code, a line scoring at most this share of the best one holds nothing about the goal to the
/// clean-ups ([`Draft::idle_share`]): small runs of such lines go behind a marker and short
/// islands of them go with the runs around them. On the realistic code cases, with the kept blank
/// lines beside markers: 48.3% reduction at 85.0% recall before, 49.9% at 85.6% after. Not in
/// logs, whose scores stack tiers (a line about the goal scores a few percent of the incident it
/// is not in), nor in docs (the limits bring sections back by score; docs recall dropped).
const IDLE_SHARE: f32 = 0.1;

/// The draft of the strategy for `source`: its decisions and relevance scores for `query`. An
/// empty query keeps code and docs whole (logs still lose repeated lines).
fn strategy(lines: &[&str], query: &Query, source: SourceType) -> Draft {
    let mut draft = Draft::keep_all(lines.len());
    if lines.is_empty() {
        return draft;
    }
    if source == SourceType::Code {
        draft.idle_share = Some(IDLE_SHARE);
    }
    match source {
        SourceType::Logs => logs::plan(lines, query, &Matches::new(query, lines), &mut draft),
        SourceType::Code if !query.is_empty() => code::plan(lines, query, &mut draft),
        SourceType::Docs if !query.is_empty() => {
            docs::plan(lines, query, &Matches::new(query, lines), &mut draft)
        }
        SourceType::Code | SourceType::Docs => {}
    }
    draft
}

/// The no-op plan returned when the limits cannot be met.
fn fallback(n: usize) -> Plan {
    Plan {
        keep: vec![true; n],
        removed: Vec::new(),
        warnings: vec!["constraints_unmet".to_owned()],
        used_fallback: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_lines_cases() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a\nb\n"), ["a", "b"]);
        assert_eq!(split_lines("a\nb"), ["a", "b"]);
        assert_eq!(split_lines("\n"), [""]);
        assert_eq!(split_lines("a\r\nb\r\n"), ["a\r", "b\r"]);
        assert_eq!(split_lines("a\n\n"), ["a", ""]);
    }

    proptest::proptest! {
        /// The one-scan split equals `str::split` with the final empty piece dropped.
        #[test]
        fn split_lines_matches_str_split(text in "[a\n\r⟦é ]{0,64}") {
            let mut reference: Vec<&str> = text.split('\n').collect();
            if text.is_empty() || text.ends_with('\n') {
                reference.pop();
            }
            proptest::prop_assert_eq!(split_lines(&text), reference);
        }
    }

    #[test]
    fn empty_text() {
        let p = plan(&[], "anything", SourceType::Code, &Limits::default());
        assert_eq!(
            p,
            Plan {
                keep: vec![],
                removed: vec![],
                warnings: vec![],
                used_fallback: false
            }
        );
    }

    #[test]
    fn invalid_ratio_falls_back() {
        let lines = ["a", "b"];
        let p = plan(
            &lines,
            "a",
            SourceType::Docs,
            &Limits {
                max_prune_ratio: f64::NAN,
                min_keep_lines: 0,
            },
        );
        assert!(p.used_fallback && p.keep.iter().all(|k| *k) && p.removed.is_empty());
        assert_eq!(p.warnings, ["constraints_unmet"]);
    }

    #[test]
    fn empty_goal_prunes_nothing_in_code_and_docs() {
        let text = "fn a() {\n    one();\n    two();\n    three();\n}\n".repeat(20);
        let lines = split_lines(&text);
        let limits = Limits {
            max_prune_ratio: 1.0,
            min_keep_lines: 0,
        };
        for source in [SourceType::Code, SourceType::Docs] {
            let p = plan(&lines, "  the  ", source, &limits);
            assert!(p.keep.iter().all(|k| *k));
            assert_eq!(p.warnings, ["empty_goal"]);
        }
    }

    #[test]
    fn ratio_is_a_result() {
        let mut text = String::from("fn wanted_target() {\n    wanted_target_body();\n}\n");
        for i in 0..50 {
            text.push_str(&format!("fn other{i}() {{\n    let value = compute_something_long({i});\n    store_value_somewhere(value);\n    log_value(value);\n    notify_listeners(value);\n    update_metrics(value);\n    persist_to_the_audit_trail(value);\n    refresh_the_dashboard_widgets(value);\n}}\n"));
        }
        let lines = split_lines(&text);
        for ratio in [0.0, 0.1, 0.5, 0.8, 1.0] {
            let limits = Limits {
                max_prune_ratio: ratio,
                min_keep_lines: 20,
            };
            let p = plan(&lines, "wanted_target", SourceType::Code, &limits);
            let removed = p.keep.iter().filter(|k| !**k).count();
            assert!(
                removed as f64 / lines.len() as f64 <= ratio,
                "ratio {ratio}: removed {removed}"
            );
            assert!(lines.len() - removed >= 20);
            assert!(p.keep[0] && p.keep[1] && p.keep[2]);
            if ratio >= 0.5 {
                assert!(removed > 0);
            }
        }
    }

    #[test]
    fn no_prune_block_is_kept() {
        let mut text = String::from("fn a() {\n");
        text.push_str("    // ⟦NO_PRUNE_BEGIN⟧\n    secret_sauce();\n    // ⟦NO_PRUNE_END⟧\n");
        text.push_str(&"    filler_call_that_is_long_enough_to_matter();\n".repeat(30));
        text.push_str("}\nfn wanted() {\n    yes();\n}\n");
        let lines = split_lines(&text);
        let p = plan(
            &lines,
            "wanted",
            SourceType::Code,
            &Limits {
                max_prune_ratio: 1.0,
                min_keep_lines: 0,
            },
        );
        assert!(p.keep[1] && p.keep[2] && p.keep[3]);
        assert!(p.keep.iter().any(|k| !*k));
    }

    #[test]
    fn kept_line_inside_an_irrelevant_body_keeps_its_closing_brace() {
        let mut text = String::from("fn other() {\n");
        text.push_str(&"    filler_call_that_is_long_enough_to_matter();\n".repeat(10));
        text.push_str("    // ⟦NO_PRUNE_BEGIN⟧\n    secret_sauce();\n    // ⟦NO_PRUNE_END⟧\n");
        text.push_str(&"    filler_call_that_is_long_enough_to_matter();\n".repeat(10));
        text.push_str("}\nfn wanted() {\n    yes();\n}\n");
        let lines = split_lines(&text);
        let limits = Limits {
            max_prune_ratio: 1.0,
            min_keep_lines: 0,
        };
        let p = plan(&lines, "wanted", SourceType::Code, &limits);
        assert!(p.keep[11] && p.keep[12] && p.keep[13]);
        assert!(p.keep[24], "closing brace of other() removed");
        assert!(!p.keep[1] && !p.keep[23]);
    }

    #[test]
    fn a_remote_plan_is_fitted_by_relevance_not_position() {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!(
                "fn filler_{i}() {{\n    let value = compute({i});\n    store(value);\n}}\n\n"
            ));
        }
        text.push_str(
            "fn parse_header(line: &str) {\n    let header = line.trim();\n    split(header);\n}\n",
        );
        let lines = split_lines(&text);
        // A remote backend kept everything but the first definition (and its blank line).
        let mut keep = vec![true; lines.len()];
        keep[..5].fill(false);
        let remote = Plan {
            keep,
            removed: vec![Removed {
                start_line: 1,
                end_line: 5,
                reason: "hors focus".into(),
                names: vec![],
                more: 0,
            }],
            warnings: vec![],
            used_fallback: false,
        };
        let budget = TextBudget {
            bytes: 400,
            marker_bytes: 30,
        };
        let p = fit_plan(&lines, "parse the header", SourceType::Code, remote, budget);
        let n = lines.len();
        assert!(
            p.keep[n - 4] && p.keep[n - 3],
            "the relevant definition, last in the file, stays"
        );
        assert!(
            !p.keep[..5].iter().any(|k| *k),
            "the remote's removals stay removed"
        );
        assert!(p.warnings.contains(&"budget_elided".to_owned()));
        assert!(budget::rendered_bytes(&p.keep, &lines, 30) <= 400);
        let mut keep = vec![true; n];
        for r in &p.removed {
            keep[r.start_line - 1..r.end_line].fill(false);
        }
        assert_eq!(keep, p.keep);
    }

    /// Kept lines of `text` planned for `goal` as `source` within `bytes` of text.
    fn kept_within(text: &str, goal: &str, source: SourceType, bytes: usize) -> Vec<usize> {
        let lines: Vec<&str> = text.lines().collect();
        let budget = TextBudget {
            bytes,
            marker_bytes: 30,
        };
        let p = plan_within(&lines, goal, source, &Limits::default(), Some(budget));
        assert!(budget::rendered_bytes(&p.keep, &lines, 30) <= bytes);
        (0..lines.len()).filter(|&i| p.keep[i]).collect()
    }

    /// A log with no blank line whose error sits near its end: fitted to a budget, the error line
    /// stays (its blocks break where scores change; as one paragraph its tail went, error and
    /// all).
    #[test]
    fn a_log_with_no_blank_line_keeps_its_error_under_a_budget() {
        let mut log: Vec<String> = (1..=3000)
            .map(|i| format!("line {i}: compiling crate foo v0.{i}"))
            .collect();
        log[2992] = "line 2993: error: link failed".to_string();
        let text = log.join("\n");
        let kept = kept_within(&text, "why did the link fail?", SourceType::Logs, 9000);
        assert!(kept.contains(&2992), "{kept:?}");
    }

    /// Under a budget, a log's markers still say what kind of lines went: room for their names is
    /// held back before the fitting, as it is for code's definitions.
    #[test]
    fn a_logs_markers_name_what_went_under_a_budget() {
        let mut log: Vec<String> = (1..=400)
            .map(|i| format!("test suite::case_{i} ... ok"))
            .collect();
        for i in 0..100 {
            log.insert(200 + i, format!("   Compiling dep{i} v0.1.{i}"));
        }
        log[250] = "test suite::parse_month ... FAILED".to_string();
        log.push("failures: suite::parse_month: month must be in 1..12".to_string());
        let text = log.join("\n");
        let lines = split_lines(&text);
        let budget = TextBudget {
            bytes: 2000,
            marker_bytes: 30,
        };
        let p = plan_within(
            &lines,
            "why does parse_month fail?",
            SourceType::Logs,
            &Limits::default(),
            Some(budget),
        );
        assert!(p.keep[250] && p.keep[lines.len() - 1]);
        let named = p.removed.iter().filter(|r| !r.names.is_empty()).count();
        assert!(named > 0, "{:?}", p.removed);
        let shown: String = p.removed.iter().filter_map(|r| r.label()).collect();
        assert!(shown.contains("passing test lines"), "{shown}");
    }

    /// A question with no term (`fix it`, `why?`) still asks what went wrong: under a budget, a
    /// log keeps its failure (it kept its head, as with no question at all).
    #[test]
    fn a_question_of_stop_words_keeps_a_logs_failure() {
        let mut log: Vec<String> = (1..=3000)
            .map(|i| format!("step {i}: copied 12 files"))
            .collect();
        log[1500] = "ERROR: month must be in 1..12".to_string();
        let text = log.join("\n");
        for goal in ["fix it", "why?", "?"] {
            let kept = kept_within(&text, goal, SourceType::Logs, 9000);
            assert!(kept.contains(&1500), "{goal}: {kept:?}");
        }
    }

    /// Prose written line by line, with no blank line: the one sentence about the goal is kept,
    /// not the head of one 900-line paragraph.
    #[test]
    fn text_written_line_by_line_keeps_the_line_about_the_goal() {
        let mut lines: Vec<String> = (0..900)
            .map(|i| {
                format!("Section {i}. The quick brown fox jumps over the lazy dog near river {i}.")
            })
            .collect();
        lines[850] =
            "Section 850. The websocket reconnect loop leaks memory: the timer is never dropped."
                .to_string();
        let text = lines.join("\n");
        let goal = "why does the websocket reconnect loop leak memory?";
        let kept = kept_within(&text, goal, SourceType::Docs, 9000);
        assert!(kept.contains(&850), "{kept:?}");
    }

    /// 14 functions of two paragraphs each (about 21 KB): a short one, about the goal in the first
    /// two functions and touching it once in the others, then 30 lines of filler.
    fn mostly_relevant_code() -> String {
        let mut text = String::new();
        for k in 0..14 {
            text.push_str(&format!("fn step_{k}(input: &str) -> Step {{\n"));
            for j in 0..6 {
                if k < 2 || j == 0 {
                    text.push_str(&format!("    let token_{j} = parse_token(input, {j});\n"));
                } else {
                    text.push_str(&format!("    let value_{j} = read_value(input, {j});\n"));
                }
            }
            text.push('\n');
            for j in 0..30 {
                text.push_str(&format!("    let filler_{j} = compute_offset({j}, {k});\n"));
            }
            text.push_str("}\n\n");
        }
        text
    }

    #[test]
    fn the_focus_cap_thins_code_kept_mostly_whole_and_keeps_its_shape() {
        let text = mostly_relevant_code();
        let lines = split_lines(&text);
        let p = plan(&lines, "parse token", SourceType::Code, &Limits::default());
        let kept: usize = (0..lines.len())
            .filter(|&i| p.keep[i])
            .map(|i| lines[i].len() + 1)
            .sum();
        assert!(kept * 2 <= text.len() + 1, "{kept} of {} bytes", text.len());
        assert!(
            p.removed.iter().any(|r| r.reason == "hors focus"),
            "{:?}",
            p.removed
        );
        // What is left keeps its shape: every kept body keeps its signature and closing brace, and
        // the two functions about the goal stay whole.
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("fn step_0") || line.starts_with("fn step_1(") {
                assert!(p.keep[i..i + 39].iter().all(|k| *k), "line {}", i + 1);
            }
            if line.starts_with("fn ") && p.keep[i + 1..i + 38].contains(&true) {
                assert!(p.keep[i] && p.keep[i + 38], "line {}", i + 1);
            }
        }
        // The limits still hold after the cap: they are applied after it.
        let strict = Limits {
            max_prune_ratio: 0.2,
            min_keep_lines: 20,
        };
        let p = plan(&lines, "parse token", SourceType::Code, &strict);
        let removed = p.keep.iter().filter(|k| !**k).count();
        assert!(removed as f64 <= 0.2 * lines.len() as f64);
    }

    #[test]
    fn an_error_line_between_repeats_stays_whatever_the_goal() {
        // Short runs of repeats on both sides: the runs are small enough to come back, so the
        // error line is never an island between two markers.
        let (a, b) = ("a".repeat(30), "b".repeat(30));
        let mut lines = vec![a.as_str(); 6];
        lines.push("ERROR boom");
        lines.extend(vec![b.as_str(); 6]);
        let limits = Limits {
            max_prune_ratio: 1.0,
            min_keep_lines: 0,
        };
        for goal in ["", "why does the parser fail"] {
            let p = plan(&lines, goal, SourceType::Logs, &limits);
            assert!(p.keep[6], "{goal:?}: {:?}", p.keep);
        }
    }

    #[test]
    fn removed_runs_match_keep() {
        let text = (0..100)
            .map(|i| format!("INFO request {i} served in {}ms by worker pool", i * 7))
            .collect::<Vec<_>>()
            .join("\n");
        let lines = split_lines(&text);
        let p = plan(&lines, "timeout", SourceType::Logs, &Limits::default());
        let mut keep = vec![true; lines.len()];
        for r in &p.removed {
            assert!(r.start_line <= r.end_line);
            keep[r.start_line - 1..r.end_line].fill(false);
        }
        assert_eq!(keep, p.keep);
        assert!(!p.removed.is_empty());
    }
}

/// The code cases of the dev split of the benchmark set `VIS_DATA` names, for the ignored
/// probes that sort what the engine misses (`two_call_misses`, `names::visible_misses`).
#[cfg(test)]
pub(crate) fn dev_code_cases() -> Vec<serde_json::Value> {
    let data = std::env::var("VIS_DATA").expect("VIS_DATA: a benchmark set (.jsonl)");
    std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|row| serde_json::from_str::<serde_json::Value>(row).unwrap())
        .filter(|v| v["source_type"] == "code" && v["split"] == "dev")
        .collect()
}

#[cfg(test)]
mod two_call_probe {
    use super::*;

    /// Where the gold lines missed by two calls (a plan at the defaults, then `plan_more` for the
    /// same question within 10 KiB, as the bench's "two calls" row) are, on the dev split: ranked
    /// but cut by the second call's budget, or never ranked (no term, not kept by the strategy),
    /// and then whether their definition holds a ranked line. "candidate ceiling" is two calls'
    /// recall if the second returned every ranked line. `VIS_SHOW=1` prints the unranked ones.
    /// `VIS_DATA=bench-data/realistic.jsonl cargo test --release --lib two_call_misses -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn two_call_misses() {
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        let (mut total, mut cases, mut rsum, mut csum) = (0, 0, 0.0, 0.0);
        for v in dev_code_cases() {
            let lines = split_lines(v["text"].as_str().unwrap());
            let q = v["query"].as_str().unwrap();
            let plan = plan(&lines, q, SourceType::Code, &Limits::default());
            let budget = TextBudget {
                bytes: crate::budget::for_pruned_text(10240, false),
                marker_bytes: crate::prune::widest_compact_marker(lines.len()),
            };
            let more = plan_more(&lines, q, SourceType::Code, &plan.keep, budget, false);
            let query = Query::new(q, true);
            let draft = strategy(&lines, &query, SourceType::Code);
            let ext = code::extents(&lines);
            let scored = |i: usize| draft.keep[i] || draft.score[i] > 0.0;
            let gold: Vec<usize> = v["gold_lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_u64().unwrap() as usize)
                .filter(|g| *g >= 1 && *g <= lines.len())
                .collect();
            if gold.is_empty() {
                continue;
            }
            cases += 1;
            let mut got = 0;
            let mut cand = 0;
            for &g in &gold {
                let i = g - 1;
                total += 1;
                let c = scored(i);
                if plan.keep[i] || more.keep[i] {
                    got += 1;
                    cand += 1;
                    *counts.entry("seen").or_default() += 1;
                } else if c {
                    cand += 1;
                    *counts.entry("candidate, cut").or_default() += 1;
                } else {
                    if std::env::var_os("VIS_SHOW").is_some() {
                        println!("NC {:.60} || {}", q.replace('\n', " "), lines[i].trim());
                    }
                    let inner = ext
                        .iter()
                        .filter(|e| e.range.contains(&i))
                        .min_by_key(|e| e.range.len());
                    let key = match inner {
                        None => "not a candidate, loose",
                        Some(e) if e.range.clone().any(scored) => {
                            "not a candidate, in a definition holding a candidate"
                        }
                        Some(_) => "not a candidate, in a definition holding none",
                    };
                    *counts.entry(key).or_default() += 1;
                }
            }
            rsum += got as f64 / gold.len() as f64;
            csum += cand as f64 / gold.len() as f64;
        }
        println!(
            "cases {cases} gold {total} two-call recall {:.1} candidate ceiling {:.1}",
            100.0 * rsum / cases as f64,
            100.0 * csum / cases as f64
        );
        for (k, n) in counts {
            println!("{n:6} {:5.2}%  {k}", 100.0 * n as f64 / total as f64);
        }
    }
}
