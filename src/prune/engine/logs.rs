//! Pruning logs and command output: keep every alert line (errors, failures, panics, assertions,
//! and warnings unless set aside: see below); keep whole, with context and stack trace, the
//! incidents the goal singles out (or, when it singles out none, every error incident), except that
//! a test's one-line status keeps no neighbours; keep the lines about the goal, the head and the
//! tail; collapse runs of repeated lines; remove the rest. When the goal singles out a failure and
//! is not about warnings, a warning that holds none of its terms and lies outside the failure
//! section of the test it names is set aside (removed). Under a response budget the failure detail
//! of the test the goal names (its section: `____ test_x ____`, `---- x stdout ----`, `--- FAIL:
//! TestX`) outranks the one-line statuses that only say it failed.
//!
//! Owns the log decisions. It must never remove an error line unless it repeats the line above
//! (digits ignored), nor a warning but as said above, and never interpret the log's content beyond
//! recognising these patterns.

use super::draft::{Draft, Reason, distances, is_blank};
use super::terms::{Matches, Query};
use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// First lines always kept (the command, the start of the run).
const HEAD: usize = 1;
/// Last lines always kept (summaries, exit status).
const TAIL: usize = 3;
/// The goal singles out incidents when one of them holds at least this fraction of the goal's
/// specific weight (absent words count: a goal naming something the log lacks singles out nothing)...
const FOCUS_COVER: f32 = 0.5;
/// ...and then the incidents scoring at least this fraction of the best are about the goal.
const FOCUS: f32 = 0.6;
/// Context kept around an alert line.
const BEFORE: usize = 1;
const AFTER: usize = 2;
/// Context kept around a line about the goal.
const GOAL_CONTEXT: usize = 1;
/// A stack trace is followed for at most this many lines.
const MAX_TRACE: usize = 500;
/// Score of a line about nothing the goal names, next to the failure (divided by 1 + its distance
/// to it): far below any goal term's weight, it only orders lines that would otherwise tie.
const PROXIMITY: f32 = 1e-3;
/// Goal lines: fraction of the best line score and of the goal's total IDF mass to reach.
const REL_OF_BEST: f32 = 0.6;
const REL_OF_TOTAL: f32 = 0.25;
/// Word stems that make a line an alert (case-insensitive, whole words or camel-case parts).
const ALERTS: &[&str] = &[
    "abort",
    "assert",
    "critical",
    "denied",
    "erreur",
    "error",
    "exception",
    "fail",
    "fatal",
    "panic",
    "segmentation",
    "traceback",
    "warn",
    "échec",
    "échou",
];
/// Inflections accepted after an alert stem (`failed`, `failures`, `panicked`, `warnings`, ...).
const SUFFIXES: &[&str] = &[
    "", "s", "e", "es", "ed", "ing", "ings", "ure", "ures", "ion", "ions", "ked", "king", "é",
    "ée", "és", "ées",
];
/// Words that describe failures in general: a goal made of them ("why does the build fail") does
/// not single out one incident.
const GENERIC: &[&str] = &[
    "break",
    "broken",
    "bug",
    "build",
    "compile",
    "compilation",
    "crash",
    "debug",
    "error",
    "exception",
    "fail",
    "failure",
    "fix",
    "happen",
    "issue",
    "log",
    "output",
    "panic",
    "problem",
    "run",
    "test",
    "warning",
    "wrong",
    "erreur",
    "échec",
    "plantage",
    "problème",
];
/// Goal words about warnings: such a goal keeps every warning, whatever it singles out.
const WARNING_WORDS: &[&str] = &["warn", "warning", "deprecated", "deprecation", "deprecate"];
/// The line that opens a Python traceback.
const PYTHON_TRACEBACK: &str = "Traceback (most recent call last)";
/// Lines that open a stack trace.
const TRACE_OPENERS: &[&str] = &[
    PYTHON_TRACEBACK,
    "stack backtrace:",
    "Stack trace:",
    "Stack backtrace:",
    "Caused by:",
];

/// Decides every line of a log. With an empty goal only repetitions are removed.
///
/// Alert lines (errors, warnings, failures, panics) and their context and stack traces form
/// incidents. When the goal's specific words (not generic ones like "fail" or "build", nor words on
/// most lines) single out
/// some incidents, e.g. it names a failing test, those are kept whole (a status line alone, without
/// neighbours) and the others keep only their alert lines, less the warnings set aside (see the
/// module doc). Otherwise error incidents are kept whole and warnings keep their own lines.
pub(crate) fn plan(lines: &[&str], query: &Query, m: &Matches, draft: &mut Draft) {
    // A question with no term (`fix it`, `why?`) still asks what went wrong: the failures are
    // found as for any question. Only no question at all keeps everything but repeats.
    let keep = if query.asked() {
        judge(lines, query, m, draft)
    } else {
        vec![true; lines.len()]
    };
    for (i, r) in repeated(lines).into_iter().enumerate() {
        if r {
            draft.remove(i, Reason::Repeated);
        } else if !keep[i] {
            draft.remove(i, Reason::Log);
        }
    }
}

/// The alert lines of a log, as a goal sees them.
struct Alerts {
    /// Each line's level (a trace's opening line is an error).
    levels: Vec<Level>,
    /// Lines with a level: errors, warnings, failures.
    alert: Vec<bool>,
    /// Warnings set aside: the goal singles out a failure, is not about warnings, and neither
    /// the warning nor the failure section holding it touches the goal. They go, one marker
    /// away (a deprecation in another module, the compiler's unused variables, is not why the
    /// test fails); one inside the section of the test the goal names (its captured log) stays.
    aside: Vec<bool>,
}

/// Which lines of a log a question keeps, and every line's score for the budget (`draft`).
fn judge(lines: &[&str], query: &Query, m: &Matches, draft: &mut Draft) -> Vec<bool> {
    let n = lines.len();
    let mut keep = vec![false; n];
    keep.iter_mut().take(HEAD).for_each(|k| *k = true);
    keep.iter_mut().rev().take(TAIL).for_each(|k| *k = true);
    let levels: Vec<Level> = lines
        .iter()
        .map(|l| {
            if is_trace_opener(l) {
                Level::Error
            } else {
                level(l)
            }
        })
        .collect();
    let alert: Vec<bool> = levels.iter().map(|l| *l != Level::None).collect();
    let incidents = incidents(lines, &alert);
    let generic = query.bits_of(GENERIC) | m.common_bits();
    let specific = m.without_terms(generic);
    let scores: Vec<f32> = incidents.iter().map(|r| specific.span(r.clone())).collect();
    let best = scores.iter().copied().fold(0.0, f32::max);
    let cover = incidents
        .iter()
        .map(|r| specific.coverage(r.clone()))
        .fold(0.0, f32::max);
    let focus = best > 0.0 && cover >= FOCUS_COVER * m.goal_mass(generic);
    // The goal's weight in the header of the failure section holding each line (0 outside one).
    let inherited: Vec<f32> = section_headers(lines)
        .iter()
        .map(|h| h.map_or(0.0, |h| specific.line(h)))
        .collect();
    let drop_warnings = focus && query.bits_of(WARNING_WORDS) == 0;
    let aside = (0..n)
        .map(|i| {
            drop_warnings
                && levels[i] == Level::Warning
                && specific.line(i) == 0.0
                && inherited[i] == 0.0
        })
        .collect();
    let alerts = Alerts {
        levels,
        alert,
        aside,
    };
    let whole = Whole {
        incidents: &incidents,
        scores: &scores,
        best,
        focus,
    };
    let mut ranks = Ranks {
        incident: keep_incidents(lines, &alerts, &whole, &mut keep),
        inherited,
    };
    lend_headers(lines, &alerts, &mut ranks);
    score_lines(lines, &alerts, m, best, &ranks, &mut keep, draft);
    score_by_proximity(&alerts, &keep, &ranks.incident, draft);
    keep
}

/// What lifts a line above its own words when a budget is fitted.
struct Ranks {
    /// Each line's rank as part of an incident kept whole (0 for none).
    incident: Vec<f32>,
    /// The goal's weight in the header of the failure section holding the line, when that
    /// header is about the goal (0 otherwise).
    inherited: Vec<f32>,
}

/// The incidents of a log and how much each is about the goal.
struct Whole<'a> {
    /// Each alert line with its context and trace.
    incidents: &'a [std::ops::Range<usize>],
    /// The goal's specific weight in each incident.
    scores: &'a [f32],
    /// The best of `scores`.
    best: f32,
    /// The goal singles out some incidents: those within [`FOCUS`] of the best are kept whole.
    /// Otherwise every incident holding an error is.
    focus: bool,
}

/// Keeps the incidents the goal singles out whole, and the alert lines of the others (less
/// those set aside). Returns each line's rank as part of an incident kept whole (0 for none):
/// those lines outrank every other line when a budget is fitted, so the failure the goal is
/// about goes last.
fn keep_incidents(lines: &[&str], a: &Alerts, w: &Whole, keep: &mut [bool]) -> Vec<f32> {
    let mut incident_rank = vec![0.0f32; lines.len()];
    for (range, &score) in w.incidents.iter().zip(w.scores) {
        let whole = if w.focus {
            score >= FOCUS * w.best
        } else {
            a.levels[range.clone()].contains(&Level::Error)
        };
        // A status line (`tests/t.py::test_x FAILED [ 40%]`) says only that the test failed,
        // which the summary says too: its neighbours are other tests' statuses, so such an
        // incident keeps its status lines alone, and under a budget it goes before the
        // detail of the failures.
        let only_status = range
            .clone()
            .filter(|&i| a.alert[i])
            .all(|i| is_status_line(lines[i]));
        for i in range.clone() {
            keep[i] |= whole && !only_status || a.alert[i] && !a.aside[i];
        }
        if whole && !only_status {
            for i in range.clone() {
                if !is_status_line(lines[i]) {
                    incident_rank[i] = incident_rank[i].max(1.0 + score);
                }
            }
        }
    }
    incident_rank
}

/// A failure section whose header is about the goal (`____ test_parse[utf8] ____` names the
/// test, its assertion lines do not) lends the header's weight to its lines: its alert lines rank
/// with the incidents the goal singles out, its other lines (the test's source, captured output)
/// come before unrelated lines when a budget or a limit decides. Sections whose header weighs
/// less than [`FOCUS`] of the best header lend nothing (their `inherited` is cleared).
fn lend_headers(lines: &[&str], a: &Alerts, ranks: &mut Ranks) {
    let best_header = ranks.inherited.iter().copied().fold(0.0, f32::max);
    for (i, named) in ranks.inherited.iter_mut().enumerate() {
        if *named > 0.0 && *named >= FOCUS * best_header && !is_status_line(lines[i]) {
            if a.alert[i] {
                ranks.incident[i] = ranks.incident[i].max(1.0 + *named);
            }
        } else {
            *named = 0.0;
        }
    }
}

/// Scores every line for the budget, by tier (the incidents the goal singles out, then alert
/// lines, then the rest, the warnings set aside among them, so that a limit bringing lines back
/// brings the failure's surroundings first), each tier ordered by the goal terms its lines hold;
/// and keeps the lines about the goal with [`GOAL_CONTEXT`] neighbours.
fn score_lines(
    lines: &[&str],
    a: &Alerts,
    m: &Matches,
    best: f32,
    ranks: &Ranks,
    keep: &mut [bool],
    draft: &mut Draft,
) {
    let telling = m.without_terms(m.common_bits());
    let best_line = telling.best_line(0..lines.len());
    let threshold = (REL_OF_BEST * best_line).max(REL_OF_TOTAL * m.total);
    for (i, &is_alert) in a.alert.iter().enumerate() {
        let score = telling.line(i);
        let tier = if ranks.incident[i] > 0.0 {
            2.0
        } else if is_alert && !a.aside[i] {
            1.0
        } else {
            0.0
        };
        // `score` and `inherited` are each at most `best_line`: the tiers stay apart.
        draft.score[i] =
            tier * (2.0 * best_line + best + 1.0) + score + ranks.inherited[i] + ranks.incident[i];
        if score > 0.0 && score >= threshold {
            // A status line's neighbours are other tests' statuses.
            let context = if is_status_line(lines[i]) {
                0
            } else {
                GOAL_CONTEXT
            };
            mark(keep, i.saturating_sub(context), i + context + 1);
        }
    }
}

/// Lines that hold nothing about the goal are ordered by how close they are to the failure (the
/// incidents the goal singles out, else the kept alert lines): when a limit brings lines back,
/// they are the failure's surroundings, not the head of the log; under a budget, the farthest go
/// first.
fn score_by_proximity(a: &Alerts, keep: &[bool], incident_rank: &[f32], draft: &mut Draft) {
    let anchor: Vec<bool> = if incident_rank.iter().any(|&r| r > 0.0) {
        incident_rank.iter().map(|&r| r > 0.0).collect()
    } else {
        a.alert.iter().zip(keep).map(|(a, k)| *a && *k).collect()
    };
    for (i, d) in distances(&anchor).into_iter().enumerate() {
        if draft.score[i] == 0.0
            && let Some(d) = d
        {
            draft.score[i] = PROXIMITY / (1 + d) as f32;
        }
    }
}

/// Incidents: each alert line with `BEFORE` lines above, `AFTER` lines below and its stack trace
/// (alert lines inside a trace belong to it). Incidents may overlap; each is judged on its own.
fn incidents(lines: &[&str], alert: &[bool]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !alert[i] {
            i += 1;
            continue;
        }
        let trace = trace_end(lines, i);
        out.push(i.saturating_sub(BEFORE)..(i + AFTER + 1).max(trace).min(lines.len()));
        i = if trace > i + 1 { trace } else { i + 1 };
    }
    out
}

/// For each line, the header line of the test failure section holding it, if any. A section starts
/// at a header naming one failing test (pytest's `____ test_name ____`, cargo's
/// `---- name stdout ----`, Go's `--- FAIL: TestName (0.01s)` when its output follows indented,
/// Jest's `● Suite › name`) and ends before the next header or a line where the runner moves on
/// ([`ends_section`]).
fn section_headers(lines: &[&str]) -> Vec<Option<usize>> {
    let mut out = vec![None; lines.len()];
    let mut current = None;
    for (i, line) in lines.iter().enumerate() {
        if is_section_header(line, lines.get(i + 1).copied()) {
            current = Some(i);
        } else if ends_section(line) {
            current = None;
        }
        out[i] = current;
    }
    out
}

/// A line that opens the failure report of one test (see [`section_headers`]); `next` is the line
/// after it.
fn is_section_header(line: &str, next: Option<&str>) -> bool {
    let t = line.trim();
    // pytest centres the test id between runs of `_` (a single one each side for a long id).
    let inner = t.trim_matches('_');
    let pytest = t.starts_with('_')
        && t.ends_with('_')
        && inner.len() + 2 <= t.len()
        && inner.starts_with(' ')
        && inner.ends_with(' ')
        && inner.chars().any(|c| c != '_' && c != ' ');
    let cargo = t.starts_with("---- ") && t.ends_with(" stdout ----");
    // Without -v, Go prints a failing test's output after its `--- FAIL:` line, indented; with
    // -v it comes before, under `=== RUN`, and the header opens nothing.
    let go = t.starts_with("--- FAIL: ")
        && t.ends_with("s)")
        && next.is_some_and(|n| n.starts_with([' ', '\t']) && !n.trim_start().starts_with("--- "));
    let jest = t.starts_with("● ") && t.len() > 4;
    pytest || cargo || go || jest
}

/// A line where a test runner moves past the failure report it was printing: a `=====` rule
/// (pytest's summaries), cargo's `failures:` list, `test result:` or next `Running` binary, Go's
/// `=== RUN`, `--- PASS:` or package `ok`/`FAIL` line, Jest's `Test Suites:` or next test file.
fn ends_section(line: &str) -> bool {
    let t = line.trim_start();
    [
        "=====",
        "failures:",
        "test result:",
        "Running ",
        "=== RUN",
        "=== CONT",
        "=== PAUSE",
        "--- PASS:",
        "--- SKIP:",
        "ok  ",
        "ok\t",
        "FAIL\t",
        "PASS ",
        "FAIL ",
        "Test Suites:",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// A test runner's one-line status of a test (`tests/t.py::test_x FAILED [ 40%]`,
/// `test tests::x ... FAILED`): it names the test and its outcome, nothing about why.
fn is_status_line(line: &str) -> bool {
    let t = line.trim_end();
    let percent = t.ends_with("%]")
        && t.rfind('[').is_some_and(|k| {
            t[k + 1..t.len() - 2]
                .trim()
                .bytes()
                .all(|b| b.is_ascii_digit())
        });
    let outcome = [
        " FAILED", " ERROR", " PASSED", " SKIPPED", " XFAIL", " XPASS",
    ]
    .iter()
    .any(|o| t.contains(o));
    percent && outcome || t.starts_with("test ") && t.ends_with(" ... FAILED")
}

fn mark(keep: &mut [bool], from: usize, to: usize) {
    let to = to.min(keep.len());
    keep[from.min(to)..to].fill(true);
}

/// How alarming a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    None,
    Warning,
    Error,
}

/// How alarming a line is: `Warning` when its only alert words are warnings, `Error` for any other
/// alert word (error, failure, panic, exception, assertion, ...), `None` for a passing test line.
pub(crate) fn level(line: &str) -> Level {
    if line.contains('\x1b') {
        // Colour codes glue to words (`\x1b[38;5;9merror`): judged without them.
        return level(&strip_ansi(line));
    }
    let t = line.trim_end();
    if t.ends_with("... ok")
        || t.ends_with(" ok") && t.trim_start().starts_with("test ")
        || t.contains(" PASSED")
    {
        return Level::None;
    }
    if is_test_runner_detail(t) {
        return Level::Error;
    }
    if !ALERT_HEADS.is_match(line) {
        return Level::None;
    }
    alert_words(line)
}

/// The first three characters of every alert stem, in any ASCII case (`ERR`, `Err`; `ÉCH` for
/// `échec`): a line holding none of them has no alert word, since a word matches a stem only when
/// its lowercase starts with the stem (no character outside ASCII lowercases into these heads).
static ALERT_HEADS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let mut heads: Vec<String> = ALERTS
        .iter()
        .flat_map(|stem| {
            let head: String = stem.chars().take(3).collect();
            [head.to_uppercase(), head]
        })
        .collect();
    heads.sort();
    heads.dedup();
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(&heads)
        .expect("a few short literal patterns")
});

/// The level told by a line's alert words alone ([`level`] without its shortcuts).
fn alert_words(line: &str) -> Level {
    let mut found = Level::None;
    for w in words(line) {
        let lower = w.to_lowercase();
        for stem in ALERTS {
            if lower
                .strip_prefix(stem)
                .is_some_and(|rest| SUFFIXES.contains(&rest))
            {
                if *stem != "warn" {
                    return Level::Error;
                }
                found = Level::Warning;
            }
        }
    }
    found
}

/// pytest's failure detail: `E   ` lines (the assertion and its diff, the exception) and the `> `
/// line that points at the failing statement. They carry no alert word of their own.
fn is_test_runner_detail(line: &str) -> bool {
    // pytest aligns its detail under the code: `E` or `>` then at least three spaces (Gradle's
    // `> Task :app` and npm's `> app@1.0 build` have one).
    let detail = |marker: &str| {
        line.strip_prefix(marker)
            .is_some_and(|rest| rest.starts_with("   ") || rest.trim().is_empty())
    };
    detail("E") || detail(">") || is_frame_location(line) || is_crash_location(line)
}

/// pytest's crash location under a failure's detail, `src/pkg/routing.py:578: NoMatchFound`:
/// where the exception was raised and its class, which carries no alert word unless the class
/// name ends in `Error`.
fn is_crash_location(line: &str) -> bool {
    // The first colon ends the path: one SIMD search, where most log lines stop.
    let Some(colon) = memchr::memchr(b':', line.as_bytes()) else {
        return false;
    };
    let path = &line[..colon];
    if !path.ends_with(".py") || path.contains(char::is_whitespace) {
        return false;
    }
    let rest = &line[colon + 1..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(exception) = rest[digits..].strip_prefix(": ") else {
        return false;
    };
    let exception = exception.trim_end();
    let class = exception.rsplit('.').next().unwrap_or(exception);
    digits > 0
        && class.starts_with(|c: char| c.is_ascii_uppercase())
        && exception
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// A pytest traceback frame location, `src/pkg/mod.py:402: in define`: where the failure went
/// through, the log's equivalent of a stack trace line.
fn is_frame_location(line: &str) -> bool {
    super::evidence::pytest_frame(line).is_some()
}

/// `line` without its ANSI escape sequences (colours, cursor moves: `ESC [ … letter`, and
/// `ESC` with one more character).
pub(crate) fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        }
    }
    out
}

/// Words of a line for alert matching: alphanumeric runs split at camel case; runs containing `_`
/// are identifiers (`test_error_path`) and are skipped.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.contains('_'))
        .flat_map(camel_parts)
}

fn camel_parts(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev_lower = false;
    for (i, c) in word.char_indices() {
        if c.is_uppercase() && prev_lower {
            out.push(&word[start..i]);
            start = i;
        }
        prev_lower = c.is_lowercase();
    }
    out.push(&word[start..]);
    out
}

fn is_trace_opener(line: &str) -> bool {
    let t = line.trim();
    TRACE_OPENERS.iter().any(|o| t.starts_with(o))
}

/// End (exclusive) of the stack trace that follows line `i`: the indented or frame-looking lines
/// after it, plus the first plain line after an indented stretch (Python's exception line) and,
/// when a Python traceback ends on `AssertionError` followed by a `- `/`+ ` line, the diff that
/// goes on with its message ([`continues_message`]).
fn trace_end(lines: &[&str], i: usize) -> usize {
    let mut j = i + 1;
    let limit = (i + 1 + MAX_TRACE).min(lines.len());
    if is_diagnostic(lines[i]) {
        while j < limit && !is_blank(lines[j]) {
            j += 1;
        }
        return j;
    }
    while j < limit && is_frame(lines[j]) {
        j += 1;
    }
    if j > i + 1 && j < limit && !is_blank(lines[j]) {
        j += 1;
        let diff_follows = lines[i].trim_start().starts_with(PYTHON_TRACEBACK)
            && lines[j - 1].starts_with("AssertionError")
            && j < limit
            && (lines[j].starts_with("- ") || lines[j].starts_with("+ "));
        if diff_follows {
            while j < limit && continues_message(lines[j]) {
                j += 1;
            }
        }
    }
    j
}

/// A line of unittest's diff of the two values an `AssertionError: a != b` compares (`- a`,
/// `+ b`, `? ^`, `  common`): the failure's detail, so it belongs to the incident. The diff ends
/// at the first line that is none of these (a blank line, the next record).
fn continues_message(line: &str) -> bool {
    ["- ", "+ ", "? ", "  "].iter().any(|p| line.starts_with(p)) || line == "-" || line == "+"
}

/// A compiler diagnostic header (`error[E0308]: ...`, `warning: ...`): its snippet, notes and
/// help lines follow up to the next blank line.
fn is_diagnostic(line: &str) -> bool {
    let t = line.trim_start();
    ["error[", "error:", "warning[", "warning:"]
        .iter()
        .any(|p| t.starts_with(p))
}

fn is_frame(line: &str) -> bool {
    if is_blank(line) {
        return false;
    }
    let t = line.trim_start();
    let numbered = t
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    line.starts_with([' ', '\t']) || t.starts_with("at ") || t.starts_with("File \"") || numbered
}

/// `true` for the lines strictly inside a run of at least three consecutive non-blank lines that
/// are the same once digit runs are ignored (the first and last of each run stay).
fn repeated(lines: &[&str]) -> Vec<bool> {
    let n = lines.len();
    let mut out = vec![false; n];
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && !is_blank(lines[i]) && same_shape(lines[i], lines[j]) {
            j += 1;
        }
        if j - i >= 3 {
            out[i + 1..j - 1].fill(true);
        }
        i = j;
    }
    out
}

/// Equal after trimming, with every run of ASCII digits counting as one digit.
fn same_shape(a: &str, b: &str) -> bool {
    fn shape(s: &str) -> impl Iterator<Item = char> + '_ {
        let mut prev_digit = false;
        s.trim().chars().filter_map(move |c| {
            let digit = c.is_ascii_digit();
            let skip = digit && prev_digit;
            prev_digit = digit;
            if skip {
                None
            } else if digit {
                Some('0')
            } else {
                Some(c)
            }
        })
    }
    shape(a).eq(shape(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::terms::Query;

    /// Colour codes glued to a word (`\x1b[38;5;9merror`) do not hide it.
    #[test]
    fn a_coloured_error_line_is_an_error() {
        let line = "\x1b[0m\x1b[1m\x1b[38;5;9merror[E0425]\x1b[0m: cannot find value `cfg`";
        assert_eq!(level(line), Level::Error);
        assert_eq!(strip_ansi(line), "error[E0425]: cannot find value `cfg`");
        assert_eq!(level("\x1b[32m   Compiling\x1b[0m foo v0.1.0"), Level::None);
    }

    proptest::proptest! {
        #[test]
        fn the_alert_prefilter_hides_no_alert_word(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "ERROR", "Error:", "failed", "FAILURES", "xFail", "panicked", "PANIC",
                    "WarnING", "warnings", "ÉCHEC", "échoué", "Échouée", "erreur", "TraceBack",
                    "traceback", "AssertionError", "assert_eq", "denied", "Critical", "fatal",
                    "abort", "segmentation", "exceptions", "\u{212A}ey", "errand", "warp",
                    "panel", "ok", "INFO", "request", "ledger-db:5432", "[42]", "=",
                ]),
                0..10,
            )
        ) {
            let line = words.join(" ");
            let fast = if ALERT_HEADS.is_match(&line) { alert_words(&line) } else { Level::None };
            proptest::prop_assert_eq!(fast, alert_words(&line), "{}", line);
        }
    }

    fn kept(log: &str, goal: &str) -> Vec<String> {
        let lines: Vec<&str> = log.lines().collect();
        let q = Query::new(goal, false);
        let m = Matches::new(&q, &lines);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &q, &m, &mut d);
        lines
            .iter()
            .zip(&d.keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| l.to_string())
            .collect()
    }

    fn alert(line: &str) -> bool {
        level(line) != Level::None
    }

    #[test]
    fn alert_levels() {
        assert_eq!(level("WARN disk almost full"), Level::Warning);
        assert_eq!(level("warning: unused variable `x`"), Level::Warning);
        assert_eq!(level("ERROR disk full, warning sent"), Level::Error);
        assert_eq!(level("all good"), Level::None);
    }

    #[test]
    fn pytest_failure_details() {
        assert_eq!(level("E       SyntaxError: invalid syntax"), Level::Error);
        assert_eq!(level("E         - expected"), Level::Error);
        assert_eq!(level(">       assert output == expected"), Level::Error);
        assert_eq!(level("src/attr/_make.py:1403: in attrs"), Level::Error);
        assert_eq!(level("Every line: in short"), Level::None);
        assert_eq!(level("Each item: in stock"), Level::None);
        assert_eq!(level("> Task :app:compileJava"), Level::None);
        assert_eq!(level("> my-app@1.0.0 build"), Level::None);
    }

    #[test]
    fn pytest_crash_locations_are_failure_detail() {
        for line in [
            "starlette/routing.py:578: NoMatchFound",
            "tests/test_a.py:12: AssertionError",
            "src/pkg/mod.py:3: django.core.exceptions.ValidationError",
        ] {
            assert_eq!(level(line), Level::Error, "{line}");
        }
        for line in [
            "starlette/routing.py:578: in url_path_for",
            "  a.py:3: Foo",
            "Makefile:12: recipe for target 'all' failed here",
            "a.py:x: Foo",
            "note: Foo",
            "10.0.0.1:8080: Connected",
            "db.example.com:5432: Ready",
        ] {
            assert!(!is_crash_location(line), "{line}");
        }
    }

    #[test]
    fn alerts() {
        assert!(alert("error[E0308]: mismatched types"));
        assert!(alert("test tests::b ... FAILED"));
        assert!(alert("AssertionError: 1 != 2"));
        assert!(alert("thread 'main' panicked at src/main.rs:2:5:"));
        assert!(alert("WARN disk almost full"));
        assert!(alert("Erreur : fichier introuvable"));
        assert!(!alert("test parser::error_on_empty ... ok"));
        assert!(!alert("test_error_path (t.T.test_error_path) ... ok"));
        assert!(!alert("2024-01-01 INFO all good"));
        assert!(!alert("errorless warehouse"));
    }

    #[test]
    fn keeps_error_with_context_and_trace() {
        let mut log: Vec<String> = (0..40).map(|i| format!("INFO step {i} done")).collect();
        log.insert(20, "Traceback (most recent call last):".into());
        log.insert(21, "  File \"a.py\", line 3, in f".into());
        log.insert(22, "    g()".into());
        log.insert(23, "ValueError: bad value".into());
        let k = kept(&log.join("\n"), "why does it crash");
        assert!(k.contains(&"ValueError: bad value".to_string()));
        assert!(k.contains(&"    g()".to_string()));
        assert!(k.len() < log.len(), "{k:#?}");
        assert!(
            k.contains(&"INFO step 0 done".to_string())
                && k.contains(&"INFO step 39 done".to_string())
        );
    }

    #[test]
    fn an_assertion_diff_belongs_to_its_traceback() {
        let mut log: Vec<String> = (0..40).map(|i| format!("test_{i} ... ok")).collect();
        let failure = [
            "FAIL: test_shorten (test_textutil.WrapTest.test_shorten)",
            "Traceback (most recent call last):",
            "  File \"test_textutil.py\", line 16, in test_shorten",
            "    self.assertEqual(shorten(\"The quick brown fox jumps\", 15), \"The quick brown fox\")",
            "AssertionError: 'The quick [...]' != 'The quick brown fox'",
            "- The quick [...]",
            "+ The quick brown fox",
            "",
            "INFO unrelated",
        ];
        for (k, l) in failure.iter().enumerate() {
            log.insert(20 + k, (*l).into());
        }
        let end = trace_end(&log.iter().map(String::as_str).collect::<Vec<_>>(), 21);
        assert_eq!(
            end, 27,
            "the diff lines end the trace, the blank line does not"
        );
        let k = kept(&log.join("\n"), "what breaks in test_shorten");
        for l in &failure[..7] {
            assert!(k.contains(&(*l).to_string()), "{l}: {k:#?}");
        }
        // After another exception, or without a `- `/`+ ` line first, what follows is not a diff:
        // the next log record, a list, indented tool output.
        let frame = "  File \"a.py\", line 3, in f";
        for (exception, next) in [
            ("ValueError: bad", "INFO next"),
            ("ValueError: bad", "- item"),
            ("AssertionError: 1 != 2", "  - pip: Collecting foo"),
        ] {
            let lines = [
                "Traceback (most recent call last):",
                frame,
                exception,
                next,
                "+ x",
            ];
            assert_eq!(trace_end(&lines, 0), 3, "{exception} / {next}");
        }
    }

    #[test]
    fn collapses_repeats_even_with_empty_goal() {
        let log: Vec<String> = (0..10)
            .map(|i| format!("retrying connection attempt {i}"))
            .collect();
        let k = kept(&log.join("\n"), "");
        assert_eq!(
            k,
            [
                "retrying connection attempt 0",
                "retrying connection attempt 9"
            ]
        );
    }

    #[test]
    fn failure_section_headers_and_status_lines() {
        let indented = Some("    foo_test.go:12: got 1, want 2");
        for h in [
            "_________________ test_parse[utf8] _________________",
            "_ TestParser.test_a_very_long_parametrized_id[with-many-parameters-in-it] _",
            "---- tests::parse_utf8 stdout ----",
            "--- FAIL: TestParse (0.00s)",
            "    --- FAIL: TestParse/utf8 (0.00s)",
            "● Parser › parses utf8",
        ] {
            assert!(is_section_header(h, indented), "{h}");
        }
        for not in [
            "____",
            "_ _ _ _ _ _ _",
            "___ ___ ___",
            "---- a ----",
            "FAIL\tpkg\t0.01s",
            "--- FAIL: deploy step",
        ] {
            assert!(!is_section_header(not, indented), "{not}");
        }
        // go test -v prints the output before the `--- FAIL:` line: it opens nothing.
        assert!(!is_section_header(
            "--- FAIL: TestParse (0.00s)",
            Some("=== RUN   TestNext")
        ));
        assert!(is_status_line(
            "tests/t.py::test_parse[utf8] FAILED                        [ 40%]"
        ));
        assert!(is_status_line("test tests::parse ... FAILED"));
        assert!(!is_status_line("E       AssertionError: assert 1 == 2"));
        assert!(!is_status_line("tests/t.py:12: AssertionError"));
    }

    /// Where each runner's failure section ends: at the next header, or where the runner moves on
    /// (pytest's rules, cargo's `failures:` list, Go's next test or package line, Jest's summary).
    #[test]
    fn failure_sections_end_where_the_runner_moves_on() {
        let sections = |log: &str| {
            let lines: Vec<&str> = log.lines().collect();
            section_headers(&lines)
        };
        assert_eq!(
            sections("a\n___ test_x ___\nsrc\nE   boom\n===== summary =====\nafter"),
            [None, Some(1), Some(1), Some(1), None, None]
        );
        assert_eq!(
            sections(
                "---- t::a stdout ----\npanicked\n\nfailures:\n    t::a\n\ntest result: FAILED"
            ),
            [Some(0), Some(0), Some(0), None, None, None, None]
        );
        assert_eq!(
            sections(
                "--- FAIL: TestA (0.00s)\n    a_test.go:3: boom\n--- FAIL: TestB (0.00s)\n    b_test.go:9: bad\nFAIL\nFAIL\tpkg\t0.01s\nok  \tother\t0.01s"
            ),
            [Some(0), Some(0), Some(2), Some(2), Some(2), None, None]
        );
        assert_eq!(
            sections(
                "=== RUN   TestA\n    a_test.go:3: boom\n--- FAIL: TestA (0.00s)\n=== RUN   TestB\n--- PASS: TestB (0.00s)"
            ),
            [None, None, None, None, None]
        );
        assert_eq!(
            sections("● math › adds\n  expect(1).toBe(2)\n\nTest Suites: 1 failed, 1 total"),
            [Some(0), Some(0), Some(0), None]
        );
    }

    /// A long pytest log with a parametrized test failing many times: under a response budget,
    /// the assertion details of the test the goal names come before the progress lines that only
    /// say FAILED (the summary says that too).
    #[test]
    fn under_a_budget_failure_details_outrank_status_lines() {
        // Parameters that differ in letters, not digits (repeated lines would collapse).
        let param = |k: usize| char::from(b'a' + k as u8).to_string().repeat(4);
        let mut log = vec!["===== test session starts =====".to_string()];
        for k in 0..30 {
            log.push(format!(
                "tests/test_style.py::test_color[{}] FAILED                              [{:>3}%]",
                param(k),
                k * 3
            ));
        }
        log.push(String::new());
        log.push("===== FAILURES =====".into());
        for k in 0..30 {
            log.push(format!(
                "_______________ test_color[{}] _______________",
                param(k)
            ));
            log.push(String::new());
            log.push(format!("value = '{}'", param(k)));
            for j in 0..8 {
                log.push(format!("    setup line {j} of the test body"));
            }
            log.push("    def test_color(value):".into());
            log.push(">       with pytest.raises(ValueError):".into());
            log.push(format!(
                "E       Failed: DID NOT RAISE ValueError for {}",
                param(k)
            ));
            log.push(String::new());
            log.push("tests/test_style.py:106: Failed".into());
        }
        log.push("===== short test summary info =====".into());
        for k in 0..30 {
            log.push(format!(
                "FAILED tests/test_style.py::test_color[v{k}] - Failed: DID NOT RAISE"
            ));
        }
        log.push("===== 30 failed in 0.5s =====".into());
        let lines: Vec<&str> = log.iter().map(String::as_str).collect();
        let budget = crate::prune::engine::TextBudget {
            bytes: 6000,
            marker_bytes: 24,
        };
        let plan = crate::prune::engine::plan_within(
            &lines,
            "Why does `test_color` in tests/test_style.py fail?",
            crate::contract::types::SourceType::Logs,
            &crate::prune::engine::Limits::default(),
            Some(budget),
        );
        let kept = |pred: &dyn Fn(&str) -> bool| {
            lines
                .iter()
                .zip(&plan.keep)
                .filter(|(l, k)| **k && pred(l))
                .count()
        };
        let details = kept(&|l| l.starts_with("E       Failed"));
        let status = kept(&|l| l.ends_with("%]"));
        assert!(details >= 10, "{details} assertion lines kept");
        assert!(
            status < details,
            "{status} status lines kept, {details} details"
        );
    }

    #[test]
    fn lines_a_limit_brings_back_surround_the_failure() {
        // 61 lines: 40 distinct build steps, the failure, 20 more steps. `min_keep_lines` asks for
        // more than the failure: what comes back is the steps that led to it, not the log's head.
        let step = |k: usize| {
            format!(
                "{} module built",
                ["core", "net", "fs", "io", "ui"][k % 5].repeat(k / 5 + 1)
            )
        };
        let mut log: Vec<String> = (0..40).map(step).collect();
        log.push("FAILED test_parse_header: ValueError: bad header".into());
        log.extend((40..60).map(step));
        let lines: Vec<&str> = log.iter().map(String::as_str).collect();
        let limits = crate::prune::engine::Limits {
            max_prune_ratio: 1.0,
            min_keep_lines: 12,
        };
        let plan = crate::prune::engine::plan(
            &lines,
            "why does test_parse_header fail with ValueError?",
            crate::contract::types::SourceType::Logs,
            &limits,
        );
        let kept: Vec<usize> = (0..lines.len()).filter(|&i| plan.keep[i]).collect();
        assert!(plan.keep[40] && kept.len() >= 12, "{kept:?}");
        assert!(
            (36..=42).all(|i| plan.keep[i]),
            "the lines around the failure come back: {kept:?}"
        );
        assert!(
            (1..20).all(|i| !plan.keep[i]),
            "the head of the log stays out: {kept:?}"
        );
    }

    /// A pytest run where `test_mount` fails, with a deprecation warning from another module.
    fn pytest_run_with_a_warning() -> Vec<String> {
        let mut log: Vec<String> = vec!["============ test session starts ============".into()];
        for i in 0..12 {
            log.push(format!(
                "tests/t.py::test_other_{i} PASSED                 [ {i}%]"
            ));
        }
        log.push("tests/t.py::test_mount FAILED                   [ 60%]".into());
        for i in 12..20 {
            log.push(format!(
                "tests/t.py::test_other_{i} PASSED                 [ {i}%]"
            ));
        }
        log.extend(
            [
                "================= FAILURES =================",
                "_________________ test_mount _________________",
                ">       assert client.get('/').status_code == 200",
                "E       AssertionError: assert 404 == 200",
                "",
                "tests/t.py:277: AssertionError",
                "============= warnings summary =============",
                "app/forms.py:8",
                "  app/forms.py:8: PendingDeprecationWarning: use `import multipart`",
                "    from multipart.multipart import parse_options_header",
                "",
                "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html",
                "========= short test summary info ==========",
                "FAILED tests/t.py::test_mount - AssertionError: assert 404 == 200",
                "======= 1 failed, 19 passed, 1 warning in 0.67s =======",
            ]
            .map(String::from),
        );
        log
    }

    #[test]
    fn a_warning_the_goal_does_not_touch_goes_beside_the_failure_it_names() {
        let log = pytest_run_with_a_warning().join("\n");
        let k = kept(
            &log,
            "Why does `test_mount` in tests/t.py fail with AssertionError?",
        );
        assert!(k.contains(&"E       AssertionError: assert 404 == 200".to_string()));
        assert!(
            !k.iter().any(|l| l.contains("PendingDeprecationWarning")),
            "{k:#?}"
        );
        // A goal about the warning keeps it, and so does a goal that singles out nothing.
        for goal in [
            "why does test_mount emit warnings?",
            "why does the build fail?",
        ] {
            let k = kept(&log, goal);
            assert!(
                k.iter().any(|l| l.contains("PendingDeprecationWarning")),
                "{goal}: {k:#?}"
            );
        }
    }

    #[test]
    fn a_warning_in_the_named_tests_section_stays() {
        let mut log = pytest_run_with_a_warning();
        let at = log
            .iter()
            .position(|l| l.starts_with("E       AssertionError"))
            .expect("the assertion line");
        log.insert(
            at + 1,
            "------------- Captured log call -------------".into(),
        );
        log.insert(
            at + 2,
            "WARNING  app:client.py:40 retrying the request".into(),
        );
        let k = kept(
            &log.join("\n"),
            "Why does `test_mount` fail with AssertionError?",
        );
        assert!(
            k.contains(&"WARNING  app:client.py:40 retrying the request".to_string()),
            "{k:#?}"
        );
        assert!(!k.iter().any(|l| l.contains("PendingDeprecationWarning")));
    }

    #[test]
    fn a_failing_status_line_keeps_no_neighbouring_statuses() {
        let log = pytest_run_with_a_warning();
        let k = kept(
            &log.join("\n"),
            "Why does `test_mount` fail with AssertionError?",
        );
        assert!(k.contains(&log[13]), "{k:#?}");
        assert!(!k.contains(&log[12]) && !k.contains(&log[14]), "{k:#?}");
    }

    #[test]
    fn goal_lines_are_kept() {
        let mut log: Vec<String> = (0..30)
            .map(|i| format!("GET /static/file{i}.css 200"))
            .collect();
        log[15] = "POST /api/upload 500 payload too large".into();
        log[16] = "GET /next 200".into();
        let k = kept(&log.join("\n"), "upload payload");
        assert!(k.contains(&"POST /api/upload 500 payload too large".to_string()));
    }
}
