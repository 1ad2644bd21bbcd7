//! The working state of one plan: what each line's fate is so far, why, how much it matters, and
//! which lines may never be removed. Also the source-independent clean-ups applied to every draft.
//!
//! Owns line bookkeeping and the passes that only ever reshape removed runs (absorbing blank lines,
//! restoring runs too small to be worth a marker, keeping atomic blocks whole). It must never judge
//! relevance itself; the per-source strategies do.

use super::Removed;
use super::names::Name;
use std::ops::Range;

/// Why a line was removed; rendered as a short French reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reason {
    /// Generic: the line does not serve the goal.
    OffFocus,
    /// The body of a definition that does not serve the goal.
    Body,
    /// The doc comment of a definition that does not serve the goal, or comments in a kept one
    /// that do not speak of it.
    Doc,
    /// Log lines far from any error and from the goal.
    Log,
    /// Repetitions of the line just above (digits ignored).
    Repeated,
    /// Relevant enough to keep, but less than what filled the response budget.
    Budget,
}

impl Reason {
    /// Every reason.
    const ALL: [Reason; 6] = [
        Reason::OffFocus,
        Reason::Body,
        Reason::Doc,
        Reason::Log,
        Reason::Repeated,
        Reason::Budget,
    ];

    /// The longest reason text in bytes (what a marker's width is estimated with).
    pub(crate) fn widest() -> &'static str {
        Reason::ALL
            .iter()
            .map(|r| r.text())
            .max_by_key(|t| t.len())
            .unwrap_or("")
    }

    /// The reason as written in annotations and markers.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Reason::OffFocus => "hors focus",
            Reason::Body => "corps hors focus",
            Reason::Doc => "doc hors focus",
            Reason::Log => "journal hors focus",
            Reason::Repeated => "lignes répétées",
            Reason::Budget => "hors budget",
        }
    }
}

/// A removed run whose text is shorter than this many bytes is kept instead: a short run between
/// kept lines is usually their neighbourhood. (A canonical marker costs ~40 o200k tokens, ~160 bytes
/// of code; the tools' compact marker 9. On the realistic benchmark, lowering this to 40 bytes for
/// the compact marker bought 1 point of token reduction for 1.1 points of gold recall: kept.)
const MIN_RUN_BYTES: usize = 160;

/// ...unless, with [`Draft::idle_share`] set, it is idle: then only under this many bytes (a compact
/// marker is ~28 bytes of code; 160 was set for the canonical one). On the realistic code cases,
/// the runs this leaves out held 0.4 point of gold recall for 1.1 points of token reduction;
/// `fresh.jsonl` and `failure_code.jsonl` lost none.
const IDLE_RUN_BYTES: usize = 100;

/// A kept run of at most this many bytes between two removed runs, all of it idle, is removed
/// with them (about the bytes of one marker).
const MAX_ISLAND_BYTES: usize = 120;

/// Per-line decisions under construction.
pub(crate) struct Draft {
    /// `true` = the line is kept.
    pub(crate) keep: Vec<bool>,
    /// Lines that must be kept whatever happens (NO_PRUNE blocks).
    pub(crate) must: Vec<bool>,
    /// Priority for adding lines back when a constraint forces it (higher first).
    pub(crate) score: Vec<f32>,
    /// Why each removed line was removed.
    pub(crate) reason: Vec<Reason>,
    /// Ranges that are kept or removed whole (fenced code blocks in docs).
    pub(crate) atoms: Vec<Range<usize>>,
    /// (inside of a block, its closing line): the closing line is kept when anything inside is.
    pub(crate) closers: Vec<(Range<usize>, usize)>,
    /// Lines that give the kept text its shape (code: imports, container headers, signatures,
    /// attributes). The focus cap never removes a block holding one; a response budget may.
    pub(crate) structure: Vec<bool>,
    /// Lines scoring at most this share of the draft's best score are idle (nothing about the
    /// goal) to [`Draft::restore_small_runs`] and [`Draft::drop_islands`]; `None`, or when no
    /// line scores: only lines scoring nothing are, and small runs come back whatever they hold.
    /// Set by the code strategy, whose scores rank definitions against the best one.
    pub(crate) idle_share: Option<f32>,
    /// What lines introduce, sorted by line (code: definitions, docs: headings): the names a
    /// marker shows for the run holding them ([`super::names`]).
    pub(crate) names: Vec<Name>,
    /// Code: each definition's signature lines and its whole span (doc comment through body). A
    /// second look that returns any line of the span returns the signature with it
    /// ([`super::plan_more`]), so a body never comes back without the line that says whose it is.
    pub(crate) heads: Vec<(Range<usize>, Range<usize>)>,
}

impl Draft {
    /// A draft that keeps all `n` lines.
    pub(crate) fn keep_all(n: usize) -> Draft {
        Draft {
            keep: vec![true; n],
            must: vec![false; n],
            score: vec![0.0; n],
            reason: vec![Reason::OffFocus; n],
            atoms: Vec::new(),
            closers: Vec::new(),
            structure: vec![false; n],
            idle_share: None,
            names: Vec::new(),
            heads: Vec::new(),
        }
    }

    /// Marks line `i` removed for `reason`.
    pub(crate) fn remove(&mut self, i: usize, reason: Reason) {
        self.keep[i] = false;
        self.reason[i] = reason;
    }

    /// Number of removed lines.
    pub(crate) fn removed(&self) -> usize {
        self.keep.iter().filter(|k| !**k).count()
    }

    /// Keeps every line marked `must`.
    pub(crate) fn force_must(&mut self) {
        for (k, m) in self.keep.iter_mut().zip(&self.must) {
            *k |= *m;
        }
    }

    /// Removes the blank lines between two removed runs, so that these become one run (one
    /// marker), and those between a removed run and the start or end of the text. A blank run
    /// between a kept line and a removed one stays: it costs no token (o200k reads it with the
    /// newline before it: `}\n\n` is one token, as `}\n` is) and it shows where the kept code
    /// ends and the removed starts, which is where fixes insert (on the realistic code cases,
    /// such lines held 1 point of gold recall).
    pub(crate) fn absorb_blanks(&mut self, lines: &[&str]) {
        let n = lines.len();
        let mut i = 0;
        while i < n {
            if !is_blank(lines[i]) || !self.keep[i] || self.must[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && is_blank(lines[i]) && self.keep[i] && !self.must[i] {
                i += 1;
            }
            let before = start > 0 && !self.keep[start - 1];
            let after = i < n && !self.keep[i];
            let between_kept_and_removed = start > 0 && i < n && before != after;
            if (before || after) && !between_kept_and_removed {
                let reason = if before {
                    self.reason[start - 1]
                } else {
                    self.reason[i]
                };
                for j in start..i {
                    self.remove(j, reason);
                }
            }
        }
    }

    /// Keeps removed runs too small to be worth a marker: under [`MIN_RUN_BYTES`], or under
    /// [`IDLE_RUN_BYTES`] when every line of the run is idle ([`Draft::idle_share`]).
    pub(crate) fn restore_small_runs(&mut self, lines: &[&str]) {
        let idle_below = self.idle_below();
        for run in runs(&self.keep) {
            let bytes: usize = lines[run.clone()].iter().map(|l| l.len() + 1).sum();
            let limit = match idle_below {
                Some(floor) if run.clone().all(|i| self.score[i] <= floor) => IDLE_RUN_BYTES,
                _ => MIN_RUN_BYTES,
            };
            if bytes < limit {
                self.keep[run].fill(true);
            }
        }
    }

    /// The score at or under which a line is idle with [`Draft::idle_share`] set; `None` without
    /// it or when no line scores (nothing was ranked, so nothing is idle for being ranked low).
    fn idle_below(&self) -> Option<f32> {
        let share = self.idle_share?;
        let best = self.score.iter().copied().fold(0.0, f32::max);
        (best > 0.0).then_some(share * best)
    }

    /// Removes the short kept runs that sit between two removed runs and hold nothing about the
    /// goal (a lone closing brace, a container's header, a short statement: every line scoring
    /// nothing, or idle with [`Draft::idle_share`] set, structural lines included): one marker
    /// then stands for both runs, which costs less than the island and a second marker. (Sparing
    /// structural lines that name a goal term cost 0.1 to 0.3 point of reduction on every code set
    /// for no recall outside the realistic one.)
    pub(crate) fn drop_islands(&mut self, lines: &[&str]) {
        let n = lines.len();
        let idle_below = self.idle_below().unwrap_or(0.0);
        let mut i = 0;
        while i < n {
            if !self.keep[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && self.keep[i] {
                i += 1;
            }
            if start == 0 || i == n {
                continue;
            }
            let bytes: usize = lines[start..i].iter().map(|l| l.len() + 1).sum();
            let idle = (start..i).all(|j| self.score[j] <= idle_below && !self.must[j]);
            if bytes <= MAX_ISLAND_BYTES && idle {
                let reason = self.reason[start - 1];
                for j in start..i {
                    self.remove(j, reason);
                }
            }
        }
    }

    /// Keeps every atom of which at least one line is kept.
    pub(crate) fn keep_atoms_whole(&mut self) {
        for atom in &self.atoms {
            if self.keep[atom.clone()].iter().any(|k| *k) {
                self.keep[atom.clone()].fill(true);
            }
        }
    }

    /// Keeps the closing line of every block of which some inner line is kept.
    pub(crate) fn keep_closers(&mut self) {
        for (inside, close) in &self.closers {
            if self.keep[inside.clone()].iter().any(|k| *k) {
                self.keep[*close] = true;
            }
        }
    }

    /// The removed runs with their majority reason (no names yet: [`super::names::attach`]).
    pub(crate) fn removed_runs(&self) -> Vec<Removed> {
        runs(&self.keep)
            .into_iter()
            .map(|run| Removed {
                start_line: run.start + 1,
                end_line: run.end,
                reason: majority(&self.reason[run]).text().to_owned(),
                names: Vec::new(),
                more: 0,
            })
            .collect()
    }
}

/// A line with nothing but whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    // ASCII fast path: the first byte that is not ASCII whitespace decides, unless it starts a
    // multi-byte character (which may be Unicode whitespace).
    match line.bytes().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(b) if plain_ascii(b) => false,
        // A multi-byte character or a vertical tab: whitespace to `str::trim` maybe.
        Some(_) => line.trim().is_empty(),
    }
}

/// `line.trim()`, byte-wise when both ends are ASCII (nearly every line of code or logs): the
/// engine trims every line several times, and `str::trim` decodes characters one by one.
pub(crate) fn trimmed(line: &str) -> &str {
    let t = line.trim_ascii();
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(&a), Some(&b)) if plain_ascii(a) && plain_ascii(b) => t,
        (None, _) => t,
        // A multi-byte character (maybe Unicode whitespace) or a vertical tab (whitespace to
        // `str::trim`, not to `trim_ascii`) at an end.
        _ => t.trim(),
    }
}

/// `line.trim_start()`, byte-wise when the first byte left is ASCII (see [`trimmed`]).
pub(crate) fn trimmed_start(line: &str) -> &str {
    let t = line.trim_ascii_start();
    match t.as_bytes().first() {
        Some(&a) if plain_ascii(a) => t,
        None => t,
        _ => t.trim_start(),
    }
}

/// An ASCII byte that `str::trim` and `trim_ascii` agree on (all but the vertical tab, which only
/// `str::trim` strips).
fn plain_ascii(b: u8) -> bool {
    b.is_ascii() && b != 0x0B
}

/// A line that separates paragraphs: blank, or a comment marker with nothing after it (`//!`,
/// `///`, `//`, `#`, `*`, `--`, R's `#'`, Lisp's `;;`, TeX's `%`), as inside a long doc comment.
pub(crate) fn is_paragraph_break(line: &str) -> bool {
    is_blank(line)
        || matches!(
            trimmed(line),
            "//" | "///" | "//!" | "#" | "*" | "--" | "#'" | ";;" | "%"
        )
}

/// For each line, how many lines away the nearest `true` of `flags` is (`None` when there is none).
pub(crate) fn distances(flags: &[bool]) -> Vec<Option<usize>> {
    let n = flags.len();
    let mut out: Vec<Option<usize>> = vec![None; n];
    let mut last: Option<usize> = None;
    for i in 0..n {
        if flags[i] {
            last = Some(i);
        }
        out[i] = last.map(|l| i - l);
    }
    let mut next: Option<usize> = None;
    for i in (0..n).rev() {
        if flags[i] {
            next = Some(i);
        }
        if let Some(j) = next {
            out[i] = Some(out[i].map_or(j - i, |d| d.min(j - i)));
        }
    }
    out
}

/// Maximal runs of `false` in `keep`, as 0-based half-open ranges.
pub(crate) fn runs(keep: &[bool]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < keep.len() {
        if keep[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < keep.len() && !keep[i] {
            i += 1;
        }
        out.push(start..i);
    }
    out
}

/// The most frequent reason (ties: the smallest, i.e. the most generic).
fn majority(reasons: &[Reason]) -> Reason {
    let mut best = (0, Reason::OffFocus);
    for r in Reason::ALL {
        let count = reasons.iter().filter(|x| **x == r).count();
        if count > best.0 {
            best = (count, r);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn fast_trims_and_is_blank_agree_with_std(s in "[ \\t\\r\\n\\x0B\\x0C\\u{a0}\\u{3000}\\u{2028}a-zé{}]{0,12}") {
            proptest::prop_assert_eq!(trimmed(&s), s.trim());
            proptest::prop_assert_eq!(trimmed_start(&s), s.trim_start());
            proptest::prop_assert_eq!(is_blank(&s), s.trim().is_empty());
        }
    }

    #[test]
    fn fast_trims_handle_unicode_and_vertical_tab_ends() {
        for s in [
            "",
            " ",
            "\x0B",
            " \x0B\t",
            "\x0Bx\x0B",
            "\u{3000}x\u{a0}",
            " é ",
            "\tfn f() {\r",
            "x",
        ] {
            assert_eq!(trimmed(s), s.trim(), "{s:?}");
            assert_eq!(trimmed_start(s), s.trim_start(), "{s:?}");
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
    }

    #[test]
    fn runs_are_maximal() {
        let keep = [true, false, false, true, false, true];
        assert_eq!(runs(&keep), vec![1..3, 4..5]);
        assert!(runs(&[]).is_empty());
    }

    #[test]
    fn distances_to_the_nearest_flag() {
        let f = [false, true, false, false, false, true, false];
        assert_eq!(distances(&f), [1, 0, 1, 2, 1, 0, 1].map(Some).to_vec());
        assert_eq!(distances(&[false, false]), [None, None]);
        assert!(distances(&[]).is_empty());
    }

    #[test]
    fn blanks_between_removed_runs_merge_them() {
        let lines = ["keep", "x", "", "y", "keep"];
        let mut d = Draft::keep_all(5);
        d.remove(1, Reason::Body);
        d.remove(3, Reason::Doc);
        d.absorb_blanks(&lines);
        assert_eq!(d.keep, [true, false, false, false, true]);
        assert_eq!(runs(&d.keep), vec![1..4]);
    }

    #[test]
    fn blanks_beside_a_marker_stay_unless_at_the_ends() {
        // Between kept code and a removed run: kept (free in tokens, and where fixes insert).
        let lines = ["fn a() {", "}", "", "fn b() {", "}", "", "", "fn c() {"];
        let mut d = Draft::keep_all(8);
        d.remove(3, Reason::Body);
        d.remove(4, Reason::Body);
        d.absorb_blanks(&lines);
        assert_eq!(d.keep, [true, true, true, false, false, true, true, true]);
        // At the start or the end of the text, next to a removed run: removed with it.
        let lines = ["", "x", "keep", "y", ""];
        let mut d = Draft::keep_all(5);
        d.remove(1, Reason::Body);
        d.remove(3, Reason::Body);
        d.absorb_blanks(&lines);
        assert_eq!(d.keep, [false, false, true, false, false]);
    }

    #[test]
    fn blank_lines_under_no_prune_stay() {
        let lines = ["x", ""];
        let mut d = Draft::keep_all(2);
        d.remove(0, Reason::Body);
        d.must[1] = true;
        d.absorb_blanks(&lines);
        assert!(d.keep[1]);
    }

    #[test]
    fn small_runs_come_back() {
        let long = "x".repeat(200);
        let lines = ["a", "b", long.as_str(), "c"];
        let mut d = Draft::keep_all(4);
        d.remove(1, Reason::Body);
        d.remove(2, Reason::Body);
        d.restore_small_runs(&lines);
        assert_eq!(d.keep, [true, false, false, true]);
        d.keep[2] = true;
        d.restore_small_runs(&lines);
        assert!(d.keep.iter().all(|k| *k));
    }

    #[test]
    fn small_idle_runs_stay_removed_when_scores_rank() {
        // A removed run of 120 bytes: under MIN_RUN_BYTES, over IDLE_RUN_BYTES.
        let mid = "y".repeat(119);
        let lines = ["best", mid.as_str(), "c"];
        let draft = |idle_share, run_score| {
            let mut d = Draft::keep_all(3);
            d.idle_share = idle_share;
            d.score = vec![10.0, run_score, 0.0];
            d.remove(1, Reason::Body);
            d.restore_small_runs(&lines);
            d.keep[1]
        };
        // Idle (at most a tenth of the best): stays removed.
        assert!(!draft(Some(0.1), 1.0));
        assert!(!draft(Some(0.1), 0.0));
        // About the goal, or no share (docs): comes back.
        assert!(draft(Some(0.1), 2.0));
        assert!(draft(None, 0.0));
        // When nothing scores, nothing was ranked: every small run comes back.
        let mut d = Draft::keep_all(3);
        d.idle_share = Some(0.1);
        d.remove(1, Reason::Body);
        d.restore_small_runs(&lines);
        assert!(d.keep[1]);
        // Under IDLE_RUN_BYTES an idle run comes back too.
        let short = ["best", "short", "c"];
        let mut d = Draft::keep_all(3);
        d.idle_share = Some(0.1);
        d.score = vec![10.0, 0.0, 0.0];
        d.remove(1, Reason::Body);
        d.restore_small_runs(&short);
        assert!(d.keep[1]);
    }

    #[test]
    fn idle_islands_go_with_the_runs_around_them() {
        let long = "x".repeat(200);
        let lines = ["best", long.as_str(), "}", long.as_str(), "end"];
        let island = |idle_share, score| {
            let mut d = Draft::keep_all(5);
            d.idle_share = idle_share;
            d.score = vec![10.0, 0.0, score, 0.0, 0.0];
            d.remove(1, Reason::Body);
            d.remove(3, Reason::Body);
            d.drop_islands(&lines);
            d.keep[2]
        };
        assert!(!island(None, 0.0));
        assert!(!island(Some(0.1), 1.0));
        assert!(island(None, 1.0));
        assert!(island(Some(0.1), 2.0));
    }

    #[test]
    fn atoms_are_kept_whole() {
        let mut d = Draft::keep_all(5);
        for i in 1..4 {
            d.remove(i, Reason::OffFocus);
        }
        d.keep[2] = true;
        d.atoms.push(1..4);
        d.keep_atoms_whole();
        assert!(d.keep.iter().all(|k| *k));
    }

    #[test]
    fn closing_line_follows_its_block() {
        let mut d = Draft::keep_all(4);
        for i in 1..4 {
            d.remove(i, Reason::Body);
        }
        d.closers.push((1..3, 3));
        d.keep_closers();
        assert_eq!(d.keep, [true, false, false, false]);
        d.keep[2] = true;
        d.keep_closers();
        assert_eq!(d.keep, [true, false, true, true]);
    }

    #[test]
    fn run_reason_is_the_majority() {
        let mut d = Draft::keep_all(4);
        d.remove(0, Reason::Doc);
        d.remove(1, Reason::Body);
        d.remove(2, Reason::Body);
        let runs = d.removed_runs();
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].start_line, runs[0].end_line), (1, 3));
        assert_eq!(runs[0].reason, "corps hors focus");
    }
}
