//! Pruning source code: keep the structure (imports, file header, containers' headers and closing
//! braces, attributes), keep the definitions that serve the goal (signature and body, with their
//! doc comments and comments unless these are prose off the goal (`quiet`); of a very long body,
//! the paragraphs about the goal and their neighbours), those a failure pasted in the goal points
//! at (`evidence`), and those one call away from the best of them, keep only the signature of the
//! others that share some of the goal's terms, and remove the rest whole, so that one marker
//! stands for a run of unrelated definitions.
//!
//! Owns the code decisions on top of the outline. It must never remove a structural line, nor cut
//! the code of a relevant definition in pieces unless it is very long (then only its off-goal
//! paragraphs go); limits and NO_PRUNE are applied by the caller, and so are the clean-ups that may
//! fold an idle island (a lone header between two markers) into one marker
//! (`Draft::drop_islands`).

mod ada;
mod braces;
mod calls;
mod data;
#[cfg(test)]
mod features;
mod indent;
mod indented;
mod labels;
mod line_kinds;
mod margin;
mod outline;
mod parts;
mod quiet;
mod scan;
mod skip;
mod statements;

use super::draft::{Draft, Reason, is_blank, is_paragraph_break, trimmed, trimmed_start};
use super::evidence::telling_lines;
use super::terms::{Matches, Query};
use labels::{defined_name, naming_line};
use outline::{Role, Unit, outline};
pub(crate) use parts::extents;
use std::collections::HashMap;

/// Loose statements of at most this many code lines are kept as structure.
const SMALL_LOOSE: usize = 2;

/// A goal term found in more than this share of the definitions does not score them
/// ([`telling_terms`]).
const COMMON_OF_UNITS: f32 = 0.6;
/// BM25 length normalisation of definitions (0 = none, 1 = full).
const LENGTH_NORM: f32 = 0.75;
/// Goal terms in a signature (name, parameters, types) count this many times extra.
const SIG_BONUS: f32 = 3.0;
/// A definition that is not kept and scores at most this fraction of the best one goes whole,
/// signature included: one marker for a run of them instead of one per body. Only near misses
/// keep their signature (on the realistic set, the signatures of the others held 1.6% of the
/// gold lines for 3.8% of the input's bytes, plus a marker each).
const COLLAPSE_OF_BEST: f32 = 0.6;
/// A definition called by (or calling) one of the best ones scores at least this fraction of it.
const CALL_SHARE: f32 = 0.3;
/// Tests re-mention what they test: their score is scaled by this unless the goal is about tests.
const TEST_WEIGHT: f32 = 0.5;
/// Goals are more often about behaviour than data layout: data definitions are scaled by this.
const DATA_WEIGHT: f32 = 0.7;
/// A definition is kept whole only if it scores at least this fraction of the best one...
const REL_OF_BEST: f32 = 0.15;
/// ...and the best `MIN_UNITS` of those are kept whatever their size...
const MIN_UNITS: usize = 12;
/// ...except, in a file of few definitions, those past this share of its definitions...
/// (In a file of 20 definitions, twelve guaranteed is most of the file. On the realistic
/// benchmark, the definitions a file of at most 24 keeps past its best three held 0.75 of a point
/// of gold recall for each point of bytes they cost, 0.4 on `fresh.jsonl`; in the quarter of
/// files with the most definitions, 1.5.)
const FEW_UNITS_SHARE: f32 = 0.5;
/// ...and past this many...
const FEW_UNITS_MIN: usize = 4;
/// ...that score under this fraction of the best (those close to it stay guaranteed)...
const FEW_UNITS_OF_BEST: f32 = 0.3;
/// ...while the others must fit, together with them, in this fraction of the text's lines.
const BUDGET: f32 = 0.3;
/// When the best definition alone is at least this share of the text's lines, the definitions past
/// the best two that score under [`FEW_UNITS_OF_BEST`] of it are not kept at all: a question that
/// singles out a long definition rarely needs the weak matches around it, and each costs a large
/// share of what is returned.
const BIG_BEST_SHARE: f32 = 0.1;
/// When more than this share of a file's code lines (not blank, not comments) are loose, the
/// outline does not know its definitions, and its loose paragraphs are kept at [`REL_OF_BEST`]
/// of the best paragraph (when that is lower than the usual bar). Erlang, Haskell and Clojure fix
/// commits (14 each, `bench-data/unseen.jsonl`): recall 61.5 -> 74.2 at 61.7 -> 51.6% reduction
/// (head at the same budget 26.6 -> 40.1). Dev, code: realistic unchanged, multilang recall
/// +0.3 for 0.1 point of reduction; test: recall unchanged, issue reports 0.4 point less
/// reduction. 0.6 took 0.3 point of realistic dev's reduction for nothing; 0.85 lost half the
/// Erlang gain and multilang's. The same share tells [`margin::units`] to name such a file's
/// definitions at the left margin.
const UNKNOWN_LOOSE_SHARE: f32 = 0.75;
/// A loose paragraph is kept when it scores this fraction of the best definition's score.
const LOOSE_OF_BEST: f32 = 0.5;
/// For a goal about documentation, a loose paragraph (a module doc's) is kept at this fraction of
/// the usual threshold: its prose is what the goal is about.
const DOC_GOAL_LOOSE: f32 = 0.3;
/// A kept definition body longer than this many lines keeps only the paragraphs about the goal,
/// their neighbours, and its first and last paragraphs ([`thin_body`]).
const THIN_BODY_LINES: usize = 80;
/// A definition the goal's pasted failure points at (a frame names it, or it holds a source line
/// the traceback quotes or a message the goal repeats) scores at least this multiple of the best
/// score by words: above all of them, since the failure ran through it.
const EVIDENCE_OF_BEST: f32 = 1.5;
/// A source line, inline code or (in a data file) a key quoted in the goal that occurs on more
/// lines than this tells none of them apart.
const MAX_POINTED_LINES: usize = 8;
/// A frame's function name defined more often than this in the text (`new` in every `impl`) tells
/// none of the definitions apart.
const MAX_FRAME_DEFINITIONS: usize = 3;
/// Nested blocks are thinned at most this many levels down.
const MAX_THIN_DEPTH: usize = 4;
/// In a thinned body, a paragraph is about the goal when its terms weigh at least this share of
/// the body's best paragraph: one naming only a word the whole body repeats (`self`, the
/// function's own subject) is not. On the code sets (realistic, fresh, failure_code, the earlier
/// set): +0.3, +0.2, +0.5 and 0.0 points of reduction for -0.2, 0.0, 0.0, 0.0 of recall (0.1:
/// at most +0.1 on each; 0.3 and 0.5 lost recall on realistic and failure_code).
const THIN_PARAGRAPH_OF_BEST: f32 = 0.2;
/// Goal terms in the header of the container a definition belongs to (`class CookieJar:`,
/// `impl Parser {`) count this much towards it: the container names what its members are about.
const CONTAINER_BONUS: f32 = 0.5;

/// Texts of at least this many lines are outlined on a second thread while the goal's terms are
/// matched (the two read only the lines; together they are about two thirds of a plan). Below
/// it, starting a thread costs more than it saves.
const PARALLEL_LINES: usize = 4096;

/// Decides every line of a source file for the goal `q`. A goal about tests keeps tests from
/// being ranked down. With a response budget, `engine::budget` then drops the least relevant of
/// the kept blocks until the text fits.
pub(crate) fn plan(lines: &[&str], q: &Query, draft: &mut Draft) {
    let (o, m) = analyse(lines, q, lines.len() >= PARALLEL_LINES);
    decide(lines, q, &m, &o, draft);
}

/// The outline of `lines` and their matches against `q`, on two threads when `parallel` and the
/// system gives a thread (the results are the same either way: each reads only the lines).
fn analyse(lines: &[&str], q: &Query, parallel: bool) -> (outline::Outline, Matches) {
    if !parallel {
        return (outline(lines), Matches::new(q, lines));
    }
    std::thread::scope(
        |s| match std::thread::Builder::new().spawn_scoped(s, || outline(lines)) {
            Ok(o) => {
                let m = Matches::new(q, lines);
                let o = o.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (o, m)
            }
            Err(_) => (outline(lines), Matches::new(q, lines)),
        },
    )
}

/// [`plan`] once the text is outlined (`o`) and matched (`m`).
fn decide(lines: &[&str], q: &Query, m: &Matches, o: &outline::Outline, draft: &mut Draft) {
    if data::is_data(lines, o) {
        let tree = data::Tree::new(lines);
        data::decide(lines, &tree, q.goal(), m, draft);
        draft.names = parts::names(lines, o, m, &[], Some(&tree));
        return;
    }
    let doc_goal = about_docs(q);
    let (scores, pointed) = ranked(lines, o, q, m, doc_goal);
    let best = scores.iter().copied().fold(0.0, f32::max);
    // Nothing to rank by: no definition holds a telling goal term and no line holds any.
    let unranked = best == 0.0 && (0..lines.len()).all(|i| m.line(i) == 0.0);
    let relevant = if !unranked {
        select(&o.units, &scores, lines.len())
    } else {
        from_the_top(&o.units, lines)
    };
    draft.names = parts::names(lines, o, m, &scores, None);
    draft.heads = o
        .units
        .iter()
        .map(|u| {
            (
                u.sig.clone(),
                u.pre.start.min(u.sig.start)..u.body.end.max(u.sig.end),
            )
        })
        .collect();
    for (k, u) in o.units.iter().enumerate() {
        if let Some(close) = u.close {
            draft.closers.push((u.body.start..close, close));
        }
        if !relevant[k] && best > 0.0 && scores[k] <= COLLAPSE_OF_BEST * best {
            for i in u.sig.clone() {
                draft.remove(i, Reason::Body);
            }
        }
    }
    for (i, role) in o.roles.iter().enumerate() {
        match *role {
            Role::Pre(u) | Role::Body(u) => {
                let u = u as usize;
                draft.score[i] = scores[u] + m.line(i) + if pointed[i] { best } else { 0.0 };
                if !relevant[u] {
                    let reason = if matches!(role, Role::Pre(_)) {
                        Reason::Doc
                    } else {
                        Reason::Body
                    };
                    draft.remove(i, reason);
                }
            }
            // A closing line comes back with what it closes (`keep_closers`): it is no shape of
            // its own.
            Role::Loose | Role::Blank | Role::Close => draft.score[i] = m.line(i),
            Role::Import | Role::Header | Role::Sig | Role::Attr => {
                draft.score[i] = m.line(i);
                draft.structure[i] = true;
            }
        }
    }
    // A kept definition's signature ranks with its body: with its doc comment gone, it must not
    // read as an idle island between two markers (`Draft::drop_islands`).
    for (k, u) in o.units.iter().enumerate() {
        if relevant[k] {
            for i in u.sig.clone() {
                draft.score[i] = draft.score[i].max(scores[k]);
            }
        }
    }
    let loose_of_best = if doc_goal {
        DOC_GOAL_LOOSE * LOOSE_OF_BEST
    } else {
        LOOSE_OF_BEST
    };
    loose(lines, o, m, &pointed, loose_of_best * best, draft);
    for (k, u) in o.units.iter().enumerate() {
        if relevant[k] && u.body.len() > THIN_BODY_LINES {
            thin_body(lines, u.body.clone(), m, &pointed, draft, 0);
        }
    }
    if best > 0.0 && !doc_goal {
        quiet::quiet_comments(lines, o, m, &pointed, draft);
    }
}

/// Each definition's final score ([`unit_scores`], raised by the goal's pasted [`evidence`], then
/// spread along calls) and the lines the evidence points at. `doc_goal`: [`about_docs`] of `q`.
fn ranked(
    lines: &[&str],
    o: &outline::Outline,
    q: &Query,
    m: &Matches,
    doc_goal: bool,
) -> (Vec<f32>, Vec<bool>) {
    let mut scores = unit_scores(lines, o, q, m, doc_goal);
    let pointed = evidence(lines, &o.units, q, &mut scores);
    calls::spread(lines, &o.units, &mut scores, CALL_SHARE);
    (scores, pointed)
}

/// Inside a kept body of more than [`THIN_BODY_LINES`] lines, the paragraphs not about the goal
/// (none of its terms, or under [`THIN_PARAGRAPH_OF_BEST`] of the best paragraph's weight) go,
/// except the first and the last (the opening and the closing of the body) and the neighbours of
/// a matching one: in a 300-line function the goal is about a few places, and
/// the rest stays one marker away. A paragraph ends at a blank line followed by a line at the
/// body's own indentation, so a nested block (an `if`, a closure) is kept or removed whole, its
/// closing brace with it; a kept paragraph that is itself that long (a body wrapped in one
/// `return new Promise(function () { ... })`) is thinned the same way inside its first and last
/// lines.
fn thin_body(
    lines: &[&str],
    body: std::ops::Range<usize>,
    m: &Matches,
    pointed: &[bool],
    draft: &mut Draft,
    depth: usize,
) {
    let indent = |l: &str| l.len() - trimmed_start(l).len();
    let Some(base) = lines[body.clone()]
        .iter()
        .find(|l| !is_blank(l))
        .map(|l| indent(l))
    else {
        return;
    };
    let mut paras: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start: Option<usize> = None;
    for i in body.clone() {
        if is_blank(lines[i]) {
            continue;
        }
        match start {
            None => start = Some(i),
            Some(s) if is_blank(lines[i - 1]) && indent(lines[i]) <= base => {
                paras.push(s..i);
                start = Some(i);
            }
            Some(_) => {}
        }
    }
    if let Some(s) = start {
        paras.push(s..body.end);
    }
    let spans: Vec<f32> = paras.iter().map(|p| m.span(p.clone())).collect();
    let best = spans.iter().copied().fold(0.0, f32::max);
    let hit: Vec<bool> = paras
        .iter()
        .zip(&spans)
        .map(|(p, &span)| {
            span > 0.0 && span >= THIN_PARAGRAPH_OF_BEST * best
                || pointed[p.clone()].contains(&true)
        })
        .collect();
    let last = paras.len().saturating_sub(1);
    for (k, p) in paras.iter().enumerate() {
        let near = (k.saturating_sub(1)..=(k + 1).min(last)).any(|j| hit[j]);
        let kept = paras.len() < 3 || k == 0 || k == last || near;
        if !kept {
            for i in p.clone() {
                draft.remove(i, Reason::OffFocus);
            }
            continue;
        }
        // A long kept paragraph is a nested block: thin its inside, keeping the lines through
        // its opening (comments may come first: `# entries, oldest first` above `entries = [`)
        // and its last line (the closing).
        let end = (p.start..p.end)
            .rev()
            .find(|&i| !is_blank(lines[i]))
            .unwrap_or(p.start);
        let code = |i: &usize| !is_blank(lines[*i]);
        let opening = (p.start..end)
            .filter(code)
            .find(|&i| {
                (i + 1..=end)
                    .find(code)
                    .is_some_and(|j| indent(lines[j]) > indent(lines[i]))
            })
            .unwrap_or(p.start);
        if end - opening > THIN_BODY_LINES && depth < MAX_THIN_DEPTH {
            thin_body(lines, opening + 1..end, m, pointed, draft, depth + 1);
        }
    }
}

/// The lines the goal's pasted evidence points at (a quoted source line or inline code found on
/// at most [`MAX_POINTED_LINES`] lines, a string literal saying the pasted message); the
/// definitions holding one (doc and attributes included), or named by a frame, are raised to
/// [`EVIDENCE_OF_BEST`] times the best score: the failure ran through them, whatever words the
/// goal uses.
fn evidence(lines: &[&str], units: &[Unit], q: &Query, scores: &mut [f32]) -> Vec<bool> {
    let ev = &q.evidence;
    let mut pointed = vec![false; lines.len()];
    if ev.is_empty() {
        return pointed;
    }
    // Quoted source lines and inline code point at the lines holding them, unless they are found
    // on too many lines to tell them apart (`if err != nil {` is everywhere).
    if ev.quoted_count() > 0 {
        let found: Vec<Option<usize>> = lines.iter().map(|l| ev.quoted_in(l)).collect();
        let mut count = vec![0usize; ev.quoted_count()];
        for &k in found.iter().flatten() {
            count[k] += 1;
        }
        for (p, k) in pointed.iter_mut().zip(found) {
            *p |= k.is_some_and(|k| count[k] <= MAX_POINTED_LINES);
        }
    }
    if ev.has_snippets() {
        let found: Vec<u32> = lines.iter().map(|l| ev.snippets_in(l)).collect();
        for (p, t) in pointed
            .iter_mut()
            .zip(telling_lines(&found, MAX_POINTED_LINES))
        {
            *p |= t;
        }
    }
    for (p, line) in pointed.iter_mut().zip(lines) {
        *p = *p || ev.says_message(line);
    }
    // A frame names a definition, unless the name is defined too often (`new`, `run`).
    let names: Vec<Option<&str>> = units
        .iter()
        .map(|u| defined_name(naming_line(lines, &u.sig)).filter(|n| ev.names(n)))
        .collect();
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for &name in names.iter().flatten() {
        *defined.entry(name).or_default() += 1;
    }
    let best = scores
        .iter()
        .copied()
        .fold(0.0, f32::max)
        .max(f32::MIN_POSITIVE);
    for (u, unit) in units.iter().enumerate() {
        let named = names[u].is_some_and(|n| defined[n] <= MAX_FRAME_DEFINITIONS);
        if named || pointed[unit.pre.start..unit.body.end].contains(&true) {
            scores[u] = scores[u].max(EVIDENCE_OF_BEST * best);
        }
    }
    pointed
}

/// Score of each definition: BM25 of its code (signature and body) with length normalisation,
/// plus a bonus for the goal terms in its signature (name, parameters, types) and a smaller one
/// for those in its container's header. Documentation does not vote (a definition's doc comment
/// follows its fate; prose matches generic question words) unless the goal is about
/// documentation: then a definition's doc comment and the comments in it count with its code, as
/// they are what the goal is about. Tests count half unless the goal is about tests (they
/// re-mention everything they test). `docs_vote`: [`about_docs`] of `q`.
fn unit_scores(
    lines: &[&str],
    o: &outline::Outline,
    q: &Query,
    m: &Matches,
    docs_vote: bool,
) -> Vec<f32> {
    let goal_about_tests = q.has("test");
    let units = &o.units;
    let code = telling_terms(
        units,
        if docs_vote {
            m.clone()
        } else {
            m.without(&o.doc)
        },
    );
    let avg = mean_length(units);
    let test_weight = if goal_about_tests { 1.0 } else { TEST_WEIGHT };
    let tests = test_containers(lines, o);
    let headers = container_headers(o, &code, lines.len());
    units
        .iter()
        .map(|u| {
            let from = if docs_vote { u.pre.start } else { u.sig.start };
            let mut score = code.bm25(from..u.body.end, avg, LENGTH_NORM)
                + SIG_BONUS * code.span(u.sig.clone())
                + CONTAINER_BONUS * headers[u.sig.start];
            if !goal_about_tests && is_test(lines, &tests, u) {
                score *= test_weight;
            }
            if is_data(lines[u.sig.start]) {
                score *= DATA_WEIGHT;
            }
            score
        })
        .collect()
}

/// The mean length in lines of the definitions from signature to end (BM25's average document
/// length).
fn mean_length(units: &[Unit]) -> f32 {
    units
        .iter()
        .map(|u| (u.body.end - u.sig.start) as f32)
        .sum::<f32>()
        / units.len().max(1) as f32
}

/// `code` without the goal terms found in more than [`COMMON_OF_UNITS`] of the definitions
/// (`self`, `error`, `value`, a question's `function`): such a term cannot tell definitions apart,
/// and, counted in all of them, it lifts every one above the floor. Unchanged when that would
/// leave no definition any term, or for fewer than 4 definitions.
fn telling_terms(units: &[Unit], code: Matches) -> Matches {
    if units.len() < 4 {
        return code;
    }
    let mut df = [0usize; 64];
    // Every term some definition holds: a definition keeps a term unless all of them are common.
    let mut held = 0u64;
    for u in units {
        let mut bits = code.masks[u.sig.start..u.body.end]
            .iter()
            .fold(0u64, |a, m| a | m);
        held |= bits;
        while bits != 0 {
            df[bits.trailing_zeros() as usize] += 1;
            bits &= bits - 1;
        }
    }
    let common = (0..64)
        .filter(|&b| df[b] as f32 > COMMON_OF_UNITS * units.len() as f32)
        .fold(0u64, |a, b| a | 1 << b);
    if common == 0 || held & !common == 0 {
        return code;
    }
    code.without_terms(common)
}

/// For each line, the goal's weight in the header line of the innermost container holding it that
/// has any (0 outside containers). Only containers whose header matches are walked.
fn container_headers(o: &outline::Outline, code: &Matches, n: usize) -> Vec<f32> {
    let mut out = vec![0.0; n];
    // Outer containers come first, so an inner matching header overwrites its parent's.
    let mut containers: Vec<&std::ops::Range<usize>> = o.containers.iter().collect();
    containers.sort_by_key(|c| (c.start, std::cmp::Reverse(c.end)));
    for c in containers {
        let weight = code.span(c.start..c.start + 1);
        if weight > 0.0 {
            out[c.clone()].fill(weight);
        }
    }
    out
}

/// Words that make a goal about documentation.
const DOC_WORDS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "documented",
    "document",
    "docstring",
    "docstrings",
    "typo",
    "typos",
    "markdown",
    "rustdoc",
    "javadoc",
    "jsdoc",
    "godoc",
];

/// True when the goal is about documentation: one of [`DOC_WORDS`] is a plain word of it (not a
/// part of an identifier such as `to_doc` or `DocumentBuilder`).
fn about_docs(q: &Query) -> bool {
    DOC_WORDS.iter().any(|w| q.has_word(w))
}

/// A data definition (struct, enum, union, type, constant or static) rather than behaviour.
fn is_data(sig: &str) -> bool {
    let mut rest = sig.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "export ", "declare "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let word = rest
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    match word {
        "struct" | "enum" | "union" | "type" | "typedef" => true,
        "const" | "static" => !rest.contains(" fn ") && !rest.contains("fn("),
        _ => false,
    }
}

/// The containers that are test modules or classes (found once per plan, not once per unit).
fn test_containers(lines: &[&str], o: &outline::Outline) -> Vec<std::ops::Range<usize>> {
    o.containers
        .iter()
        .filter(|c| {
            let h = lines[c.start];
            h.contains("mod tests")
                || h.contains("mod test ")
                || h.contains("mod test{")
                || h.contains("class Test")
        })
        .cloned()
        .collect()
}

/// A test: marked as one, named as one, or inside a test module or class (`tests`).
fn is_test(lines: &[&str], tests: &[std::ops::Range<usize>], u: &Unit) -> bool {
    let marked = lines[u.pre.clone()].iter().any(|l| {
        let t = trimmed(l);
        t.starts_with("#[test")
            || t.ends_with("::test]")
            || t.starts_with("@pytest")
            || t.starts_with("@Test")
    });
    let sig = trimmed_start(lines[u.sig.start]);
    // One search rules out nearly every signature before the five.
    let named = sig.contains(" test")
        && [
            "fn test",
            "def test",
            "async fn test",
            "async def test",
            "void test",
        ]
        .iter()
        .any(|p| sig.contains(p));
    let inside = tests.iter().any(|c| c.contains(&u.sig.start));
    marked || named || inside
}

/// Which definitions are kept whole: the best ones first, as long as they score at least a
/// fraction of the best and their lines fit in a budget (the best one always fits). The best
/// [`MIN_UNITS`] are kept whatever their size, unless the file has so few definitions that they
/// would be most of it ([`FEW_UNITS_SHARE`]); when the best one is long ([`BIG_BEST_SHARE`]), the
/// weak ones past the best two are left out.
fn select(units: &[Unit], scores: &[f32], total_lines: usize) -> Vec<bool> {
    let best = scores.iter().copied().fold(0.0, f32::max);
    let floor = REL_OF_BEST * best;
    let mut order: Vec<usize> = (0..units.len())
        .filter(|&u| scores[u] > 0.0 && scores[u] >= floor)
        .collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let budget = (BUDGET * total_lines as f32) as usize;
    let share = ((FEW_UNITS_SHARE * units.len() as f32).ceil() as usize).max(FEW_UNITS_MIN);
    let lines_of = |u: usize| units[u].body.end - units[u].pre.start;
    let big_best = order
        .first()
        .is_some_and(|&u| lines_of(u) as f32 >= BIG_BEST_SHARE * total_lines as f32);
    let mut used = 0;
    let mut keep = vec![false; units.len()];
    for (rank, &u) in order.iter().enumerate() {
        let size = lines_of(u);
        let weak = scores[u] < FEW_UNITS_OF_BEST * best;
        if big_best && rank >= 2 && weak {
            continue;
        }
        let guaranteed = rank < MIN_UNITS && (rank < share || !weak);
        if !guaranteed && used + size > budget {
            continue;
        }
        used += size;
        keep[u] = true;
    }
    keep
}

/// When no line of the file holds a goal term, nothing ranks its definitions: the engine cannot
/// tell which body the goal is about, so it prunes less and what is safest to lose instead of
/// guessing. The definitions from the top of the file are kept whole until they hold this share
/// of its bytes (the rest keep their signatures), as a reader with nothing to go on reads a file
/// from the top. On the dev split of the code sets (realistic, multilang; defaults), 0.5 moved
/// reduction/recall from 48.4/84.6 and 44.7/80.7 to 48.0/85.0 and 44.1/81.1, and the cases
/// below the head of the file from 17 and 13 to 17 and 12; 0.3 kept no more gold lines for the
/// bytes it cost, 0.15 changed nothing (a file's first definitions are most of that share). A
/// data file no line of which holds a term keeps this share of its lines from the top.
const UNRANKED_TOP_SHARE: f32 = 0.5;

/// The definitions kept when none ranks ([`UNRANKED_TOP_SHARE`]): in file order, while the bytes
/// from the start of the file through each one stay within the share.
fn from_the_top(units: &[Unit], lines: &[&str]) -> Vec<bool> {
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let limit = (UNRANKED_TOP_SHARE * total as f32) as usize;
    let mut through = 0;
    let mut next = 0;
    units
        .iter()
        .map(|u| {
            let end = u.body.end.max(u.sig.end).min(lines.len());
            through += lines[next.min(end)..end]
                .iter()
                .map(|l| l.len() + 1)
                .sum::<usize>();
            next = next.max(end);
            through <= limit
        })
        .collect()
}

/// Loose paragraphs (runs of loose lines between blank lines, bare comment markers such as a lone
/// `//!` inside a long module doc, or other roles): kept when relevant; otherwise their comments
/// go, and so does their code unless it is a short statement.
fn loose(
    lines: &[&str],
    o: &outline::Outline,
    m: &Matches,
    pointed: &[bool],
    threshold: f32,
    draft: &mut Draft,
) {
    let roles = &o.roles;
    // The outline knows block comments and docstrings whole: a JSDoc line without a leading `*`
    // or a line of a class docstring is prose, not a short statement (unless code follows the
    // comment's end on it: `   end */ init();`).
    let prose = |k: usize| {
        is_comment(lines[k])
            || (o.comment[k] || o.docstring[k]) && !quiet::code_after_comment(lines[k])
    };
    let mut paragraphs = Vec::new();
    let mut i = 0;
    while i < roles.len() {
        if roles[i] != Role::Loose {
            i += 1;
            continue;
        }
        let start = i;
        while i < roles.len() && roles[i] == Role::Loose {
            i += 1;
            // A bare comment marker followed by more comment starts the next paragraph of a doc
            // comment (between statements, a bare `#` does not split code).
            if i < roles.len()
                && i > start + 1
                && is_paragraph_break(lines[i - 1])
                && !is_paragraph_break(lines[i])
                && is_comment(lines[i])
            {
                break;
            }
        }
        let code_lines = (start..i).filter(|&k| !prose(k)).count();
        paragraphs.push((start..i, m.span(start..i), code_lines));
    }
    // Most of the code loose: the outline does not know this language's definitions (Erlang's
    // `name(Args) ->`, Haskell's equations), so its paragraphs stand for them and compete among
    // themselves, as definitions do.
    let loose_lines: usize = paragraphs.iter().map(|p| p.2).sum();
    let code_lines = (0..roles.len())
        .filter(|&k| roles[k] != Role::Blank && !prose(k))
        .count();
    let threshold = if loose_lines as f32 > UNKNOWN_LOOSE_SHARE * code_lines as f32 {
        let best = paragraphs.iter().map(|p| p.1).fold(0.0, f32::max);
        threshold.min(REL_OF_BEST * best)
    } else {
        threshold
    };
    for (range, score, code_lines) in paragraphs {
        draft.score[range.clone()].fill(score);
        if score > 0.0 && score >= threshold || pointed[range.clone()].contains(&true) {
            continue;
        }
        for k in range {
            if code_lines > SMALL_LOOSE || prose(k) {
                draft.remove(k, Reason::OffFocus);
            }
        }
    }
}

/// A line that is only a comment in the usual comment syntaxes (approximate, used for loose lines).
fn is_comment(line: &str) -> bool {
    let t = trimmed_start(line);
    !is_blank(line)
        && (t.starts_with("//")
            || t.starts_with("/*")
            || t.starts_with('*')
            || t.starts_with('#')
                && !t.starts_with("#[")
                && !t.starts_with("#include")
                && !t.starts_with("#!")
            || t.starts_with("--"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::terms::Query;

    fn kept(src: &str, goal: &str) -> Vec<String> {
        let lines: Vec<&str> = src.lines().collect();
        let q = Query::new(goal, true);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &q, &mut d);
        lines
            .iter()
            .zip(&d.keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| l.to_string())
            .collect()
    }

    /// Erlang's functions are no definitions the outline knows: its paragraphs compete among
    /// themselves, so one matching the goal weakly still stays beside the best one, while one
    /// matching nothing goes.
    #[test]
    fn paragraphs_stand_for_definitions_the_outline_does_not_know() {
        // A record the outline reads as a definition, holding the goal's words many times: the
        // best "definition" by far, whose score would set the bar for every paragraph.
        let mut src = String::from(
            "-module(ws).\n\n-record(state, {\n    handshake_close_frame = sent,\n    close_frame_handshake = twice,\n    frame_sent_close = handshake\n}).\n\n",
        );
        for (name, body) in [
            ("handshake", "send_frame(close, State), frame_close(Req)"),
            ("frame_close", "close_frame(Req), handshake_done"),
            ("idle", "timer:sleep(10), loop(State), loop(State), ok"),
            ("terminate", "cleanup(State), ok"),
            ("info", "log(Req), ok"),
        ] {
            src.push_str(&format!(
                "{name}(Req, State) ->\n    io:format(\"~p\", [Req]),\n    {body}.\n\n"
            ));
        }
        let k = kept(&src, "close frame sent twice on handshake");
        assert!(k.iter().any(|l| l.starts_with("handshake(")), "{k:?}");
        assert!(k.iter().any(|l| l.starts_with("frame_close(")), "{k:?}");
        assert!(!k.iter().any(|l| l.starts_with("idle(")), "{k:?}");
    }

    /// A Vue single-file component (options API): the question names one method, and the
    /// others go whole, however the component's object nests them.
    #[test]
    fn a_vue_component_keeps_the_method_asked_about() {
        let mut src = String::from(
            "<template>\n  <user-list :items=\"items\" />\n</template>\n\n<script>\nexport default {\n  name: 'Users',\n  data() {\n    return { items: [] }\n  },\n  methods: {\n",
        );
        for name in [
            "fetchUsers",
            "formatDate",
            "validateEmail",
            "resetForm",
            "loadMore",
        ] {
            src.push_str(&format!("    {name}(arg) {{\n"));
            for j in 0..6 {
                src.push_str(&format!(
                    "      const s{j} = this.items.filter((x) => x.id !== {j});\n"
                ));
            }
            src.push_str("      return s0;\n    },\n");
        }
        src.push_str("  },\n}\n</script>\n");
        let k = kept(&src, "validateEmail accepts addresses without a domain");
        assert!(k.iter().any(|l| l.contains("validateEmail(arg)")), "{k:?}");
        for other in [
            "fetchUsers(arg)",
            "formatDate(arg)",
            "resetForm(arg)",
            "loadMore(arg)",
        ] {
            assert!(!k.iter().any(|l| l.contains(other)), "{other}: {k:?}");
        }
    }

    /// A React function component holding its event handlers: the handler asked about stays,
    /// the others go, each named.
    #[test]
    fn a_react_component_keeps_the_handler_asked_about() {
        let mut src = String::from(
            "import * as React from 'react';\n\nconst Chip = React.forwardRef(function Chip(props, ref) {\n  const { onDelete, onKeyUp } = props;\n  const chipRef = React.useRef(null);\n\n",
        );
        for name in [
            "submitRow",
            "resetFilter",
            "handleKeyUp",
            "closeDialog",
            "openMenu",
            "copyLink",
        ] {
            src.push_str(&format!("  const {name} = (event) => {{\n"));
            for j in 0..12 {
                src.push_str(&format!("    const v{j} = event.target.value + {j};\n"));
            }
            src.push_str("  };\n\n");
        }
        src.push_str(
            "  return <div ref={ref} onKeyUp={handleKeyUp} />;\n});\n\nexport default Chip;\n",
        );
        let k = kept(&src, "handleKeyUp ignores the Escape key");
        assert!(k.iter().any(|l| l.contains("const handleKeyUp")), "{k:?}");
        for other in [
            "submitRow",
            "resetFilter",
            "closeDialog",
            "openMenu",
            "copyLink",
        ] {
            assert!(
                !k.iter().any(|l| l.contains(&format!("const {other}"))),
                "{other}: {k:?}"
            );
        }
    }

    const SRC: &str = "use std::fmt;

/// Parses a header line.
pub fn parse_header(line: &str) -> Header {
    let (name, value) = line.split_once(':').unwrap();
    Header { name, value }
}

/// Renders the body.
pub fn render_body(body: &Body) -> String {
    let mut out = String::new();
    out.push_str(&body.text);
    out
}
";

    #[test]
    fn keeps_relevant_definition_whole_and_drops_unrelated_ones_whole() {
        let k = kept(SRC, "how are header lines parsed");
        assert!(k.iter().any(|l| l.contains("split_once")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("/// Parses")));
        // Nothing of render_body is about the goal: its signature goes with its body.
        assert!(!k.iter().any(|l| l.starts_with("pub fn render_body")));
        assert!(!k.iter().any(|l| l.contains("push_str")));
        assert!(!k.iter().any(|l| l.contains("/// Renders")));
        assert!(k.iter().any(|l| l.starts_with("use std::fmt")));
        assert_eq!(k.iter().filter(|l| *l == "}").count(), 1);
    }

    #[test]
    fn outlining_on_a_second_thread_changes_nothing() {
        let mut src = String::new();
        for k in 0..1500 {
            src.push_str(&format!(
                "/// Reads header {k}.\nfn header_{k}(line: &str) -> usize {{\n    line.len() + {k}\n}}\n\n"
            ));
        }
        let lines: Vec<&str> = src.lines().collect();
        assert!(lines.len() >= PARALLEL_LINES);
        let q = Query::new("why is header_731 off by one", true);
        let decided = |parallel| {
            let (o, m) = analyse(&lines, &q, parallel);
            let mut d = Draft::keep_all(lines.len());
            decide(&lines, &q, &m, &o, &mut d);
            (d.keep, d.score)
        };
        let (keep, score) = decided(true);
        assert_eq!((keep.clone(), score), decided(false));
        assert!(
            keep.iter().any(|k| !k) && keep[731 * 5 + 2],
            "header_731's body is kept"
        );
    }

    #[test]
    fn identifier_in_goal_selects_its_definition() {
        let k = kept(SRC, "render_body");
        assert!(k.iter().any(|l| l.contains("push_str")));
        assert!(!k.iter().any(|l| l.contains("split_once")));
    }

    #[test]
    fn goal_absent_from_text_leaves_the_skeleton() {
        let k = kept(SRC, "websocket reconnection");
        assert!(
            !k.iter()
                .any(|l| l.contains("split_once") || l.contains("push_str"))
        );
        assert_eq!(k.iter().filter(|l| l.starts_with("pub fn")).count(), 2);
    }

    #[test]
    fn a_goal_no_line_holds_keeps_the_top_of_the_file_and_the_skeleton() {
        let mut src = String::from("use std::fmt;\n\n");
        for k in 0..8 {
            src.push_str(&format!(
                "pub fn step_{k}(x: u32) -> u32 {{\n    let y = x * {k};\n    y + 1\n}}\n\n"
            ));
        }
        let k = kept(&src, "websocket reconnection");
        // Every signature stays; the bodies of the first half of the file stay, the others go.
        assert_eq!(k.iter().filter(|l| l.starts_with("pub fn")).count(), 8);
        assert!(k.iter().any(|l| l.contains("x * 0")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("x * 2")), "{k:#?}");
        assert!(!k.iter().any(|l| l.contains("x * 7")), "{k:#?}");
    }

    #[test]
    fn python_methods() {
        let src = "import os\n\nclass Store:\n    def load(self, path):\n        with open(path) as f:\n            return f.read()\n\n    def save(self, path, data):\n        with open(path, 'w') as f:\n            f.write(data)\n";
        let k = kept(src, "save data");
        assert!(k.iter().any(|l| l.contains("f.write")));
        assert!(!k.iter().any(|l| l.contains("f.read")));
        assert!(!k.iter().any(|l| l.contains("def load")));
        assert!(k.iter().any(|l| l.contains("class Store")));
    }

    #[test]
    fn a_container_header_names_what_its_members_are_about() {
        // `info` says nothing of cookies; its class does. `prepare` mentions headers only.
        let src = "class Request:\n    def prepare(self):\n        for key, value in self.headers.items():\n            self.headers.setdefault(key, value)\n        return self.headers\n\nclass _CookieCompatResponse:\n    def info(self):\n        info = Message()\n        for key, value in self.response.headers.items():\n            info[key] = value\n        return info\n";
        let lines: Vec<&str> = src.lines().collect();
        let q = Query::new("multiple Set-Cookie headers", true);
        let m = Matches::new(&q, &lines);
        let o = outline(&lines);
        let scores = unit_scores(&lines, &o, &q, &m, about_docs(&q));
        let info = o
            .units
            .iter()
            .position(|u| lines[u.sig.start].contains("def info"))
            .unwrap();
        let prepare = o
            .units
            .iter()
            .position(|u| lines[u.sig.start].contains("def prepare"))
            .unwrap();
        assert!(scores[info] > scores[prepare], "{scores:?}");
    }

    /// A 130-line function of 30 paragraphs (blank lines between them), all calling `request`
    /// but the 21st, which reads the xsrf cookie and sets the header with `set_header`.
    fn xhr_adapter(set_header: &str) -> String {
        let mut src =
            String::from("function xhrAdapter(config) {\n  var request = open(config);\n\n");
        for i in 0..30 {
            if i == 20 {
                src.push_str(&format!("  var xsrfValue = cookies.read(config.xsrfCookieName);\n  if (xsrfValue) {{\n    {set_header};\n  }}\n\n"));
            } else {
                src.push_str(&format!(
                    "  step{i}(request);\n  more{i}(request);\n  done{i}(request);\n\n"
                ));
            }
        }
        src.push_str("  request.send(data);\n}\n");
        src
    }

    #[test]
    fn a_very_long_relevant_body_keeps_the_paragraphs_about_the_goal() {
        let src = xhr_adapter("headers[config.xsrfHeaderName] = xsrfValue");
        let k = kept(&src, "xsrf header on missing xsrfCookieName");
        assert!(k.iter().any(|l| l.contains("cookies.read")), "{k:#?}");
        assert!(
            k.iter().any(|l| l.contains("step19")),
            "a neighbour paragraph stays"
        );
        assert!(
            !k.iter().any(|l| l.contains("step5(")),
            "a far paragraph goes"
        );
        assert!(k.iter().any(|l| l.contains("function xhrAdapter")));
        assert!(
            k.iter().any(|l| l.contains("request.send")),
            "the last paragraph stays"
        );
    }

    #[test]
    fn a_long_body_drops_paragraphs_naming_only_the_word_it_repeats() {
        // `request` is on most lines of the body: a paragraph naming only it is not about a goal
        // that names the xsrf cookie.
        let src = xhr_adapter("request.header(config.xsrfHeaderName, xsrfValue)");
        let k = kept(
            &src,
            "request loses its xsrf header when xsrfCookieName is missing",
        );
        assert!(k.iter().any(|l| l.contains("cookies.read")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("step19")), "a neighbour stays");
        assert!(!k.iter().any(|l| l.contains("step5(")), "{k:#?}");
        assert!(
            k.iter().any(|l| l.contains("request.send")),
            "the last stays"
        );
    }

    #[test]
    fn a_documentation_goal_keeps_the_module_doc_paragraph_it_is_about() {
        let mut src = String::from("//! A logging facade.\n//!\n");
        for i in 0..12 {
            src.push_str(&format!("//! Section {i} talks about records, targets and metadata\n//! of the macros in paragraph number {i}.\n//!\n"));
        }
        src.push_str("//! The maximum log level is a global filter: messages above it are\n//! discarded before they reach the logger.\n//!\n");
        src.push_str("//! Closing words about the facade.\n\nuse std::fmt;\n\n");
        for name in ["set_max_level", "max_level", "log_enabled"] {
            src.push_str(&format!(
                "pub fn {name}(level: usize) -> usize {{\n    let max = level;\n    max\n}}\n\n"
            ));
        }
        let k = kept(&src, "Fix max log level documentation");
        assert!(k.iter().any(|l| l.contains("global filter")), "{k:#?}");
        assert!(
            !k.iter().any(|l| l.contains("paragraph number 5")),
            "{k:#?}"
        );
    }

    #[test]
    fn a_body_wrapped_in_one_block_is_thinned_inside_it() {
        let mut src = String::from(
            "module.exports = function xhrAdapter(config) {\n  return new Promise(function dispatch(resolve, reject) {\n    var request = open(config);\n\n",
        );
        for i in 0..30 {
            if i == 20 {
                src.push_str("    if (config.cancelToken) {\n      config.cancelToken.unsubscribe(onCanceled);\n    }\n\n");
            } else {
                src.push_str(&format!("    step{i}(request);\n    more{i}(request);\n\n"));
            }
        }
        src.push_str("    request.send(data);\n  });\n};\n");
        let k = kept(&src, "unsubscribing from cancel token");
        assert!(
            k.iter().any(|l| l.contains("unsubscribe(onCanceled)")),
            "{k:#?}"
        );
        assert!(!k.iter().any(|l| l.contains("step5(")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("new Promise")) && k.iter().any(|l| l.trim() == "});"));
    }

    #[test]
    fn a_block_under_comments_is_thinned_inside_it() {
        // Nix's news file: a comment above `news.entries = [`, then entries separated by blank
        // lines, one about the goal. The comment's lines must not use up the nesting levels
        // thinning goes down (one each, when a paragraph's first line was taken for its opening).
        let mut src = String::from(
            "{ config, lib, ... }:\n\nlet\n  cfg = config.news;\nin\n\n{\n  config = {\n    # Entries in chronological order; the time is\n    # formatted as given by\n    #\n    #     date --iso-8601=second --universal\n    #\n    # (on BSD, `date -u`).\n    news.entries = [\n",
        );
        for i in 0..40 {
            let message = if i == 25 {
                "services.dbus.packages = [ gnome3.dconf ];".to_owned()
            } else {
                format!("A new module is available: 'programs.tool{i}'.")
            };
            src.push_str(&format!(
                "      {{\n        time = \"2018-01-{i:02}\";\n        message = \"{message}\";\n      }}\n\n"
            ));
        }
        src.push_str("    ];\n  };\n}\n");
        let k = kept(&src, "news: the gnome3.dconf alias is gone");
        assert!(k.iter().any(|l| l.contains("gnome3.dconf")), "{k:#?}");
        assert!(!k.iter().any(|l| l.contains("tool5'")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("news.entries = [")), "{k:#?}");
    }

    /// `n` definitions of 10 lines each, one after the other.
    fn units(n: usize) -> Vec<Unit> {
        (0..n)
            .map(|k| Unit {
                pre: 10 * k..10 * k,
                sig: 10 * k..10 * k + 1,
                body: 10 * k + 1..10 * k + 10,
                close: Some(10 * k + 9),
            })
            .collect()
    }

    #[test]
    fn a_file_of_few_definitions_keeps_only_its_best_half_of_the_weak_ones() {
        // 8 definitions, 80 lines: the line budget (24 lines) holds two of them. The best four
        // (half of 8) are kept whatever their size; past them, only those scoring at least 0.3
        // of the best are, up to MIN_UNITS.
        let scores = [10.0, 5.0, 4.0, 3.5, 3.2, 2.0, 1.6, 0.0];
        let keep = select(&units(8), &scores, 80);
        assert_eq!(keep, [true, true, true, true, true, false, false, false]);
        // 40 definitions with the same scores first: half of the file is more than MIN_UNITS, so
        // the best twelve above the floor (0.15 of the best) are kept.
        let mut scores = vec![1.6; 40];
        scores[..5].copy_from_slice(&[10.0, 5.0, 4.0, 3.5, 3.2]);
        let keep = select(&units(40), &scores, 400);
        assert_eq!(keep.iter().filter(|k| **k).count(), 12);
    }

    #[test]
    fn a_long_best_definition_leaves_the_weak_matches_out() {
        // 100 lines; definitions of 20, 5, 5 and 5 lines. Scored 10, 2.5, 2 and 4: the second and
        // third are weak (under 0.3 of the best) and rank past the best two.
        let unit = |start: usize, len: usize| Unit {
            pre: start..start,
            sig: start..start + 1,
            body: start + 1..start + len,
            close: Some(start + len - 1),
        };
        let scores = [10.0, 2.5, 2.0, 4.0];
        let long_best = [unit(0, 20), unit(30, 5), unit(40, 5), unit(50, 5)];
        assert_eq!(select(&long_best, &scores, 100), [true, false, false, true]);
        // The same scores with a best definition of 5 lines: a file of 4 definitions keeps them
        // all (its best 4 are guaranteed).
        let short_best = [unit(0, 5), unit(30, 5), unit(40, 5), unit(50, 5)];
        assert_eq!(select(&short_best, &scores, 100), [true; 4]);
    }

    #[test]
    fn documentation_votes_when_the_goal_is_about_documentation() {
        let src = "/// Waits before the next attempt: the retry delay doubles up to a ceiling.
pub fn backoff(n: u32) -> Duration {
    let base = Duration::from_millis(100);
    base * 2u32.pow(n.min(6))
}

/// Opens the connection.
pub fn connect(addr: &str) -> Conn {
    let conn = Conn::new(addr);
    conn.delay_start();
    conn
}

/// Closes the connection.
pub fn close(conn: Conn) {
    conn.shutdown();
    drop(conn);
}
";
        // The code of `connect` says `delay`; only the doc comment of `backoff` says what the
        // goal is about.
        let k = kept(src, "fix the documentation of the retry delay ceiling");
        assert!(k.iter().any(|l| l.contains("fn backoff")), "{k:#?}");
        assert!(
            k.iter().any(|l| l.contains("retry delay doubles")),
            "{k:#?}"
        );
        assert!(!k.iter().any(|l| l.contains("drop(conn)")), "{k:#?}");
        // Without the word `documentation`, the doc comment does not vote.
        let k = kept(src, "the retry delay ceiling is wrong");
        assert!(!k.iter().any(|l| l.contains("2u32.pow")), "{k:#?}");
    }

    #[test]
    fn documentation_goals_are_told_by_plain_words() {
        assert!(about_docs(&Query::new(
            "Fix max log level documentation",
            true
        )));
        assert!(about_docs(&Query::new(
            "docs: fix a typo in the README",
            true
        )));
        assert!(!about_docs(&Query::new(
            "to_doc panics on empty input",
            true
        )));
        assert!(!about_docs(&Query::new(
            "DocumentBuilder drops the last node",
            true
        )));
        assert!(!about_docs(&Query::new(
            "document.querySelector is null",
            true
        )));
    }

    #[test]
    fn thinning_a_long_body_keeps_inner_blocks_balanced() {
        let mut src = String::from(
            "fn handle_cookie(req: &Request) -> Response {\n    let jar = cookie_jar(req);\n\n",
        );
        for i in 0..30 {
            if i == 10 {
                src.push_str("    if jar.cookie_count() > 0 {\n        step_a(req);\n\n        step_b(req);\n\n        step_c(req);\n        step_d(req);\n\n        step_e(req);\n        step_f(req);\n    }\n\n");
            } else {
                src.push_str(&format!(
                    "    work{i}(req);\n    more{i}(req);\n    done{i}(req);\n\n"
                ));
            }
        }
        src.push_str("    Response::ok()\n}\n");
        let k = kept(&src, "cookie jar count");
        let opens = k.iter().filter(|l| l.trim_end().ends_with('{')).count();
        let closes = k.iter().filter(|l| l.trim() == "}").count();
        assert_eq!(opens, closes, "{k:#?}");
        assert!(k.iter().any(|l| l.contains("step_f")), "{k:#?}");
        assert!(!k.iter().any(|l| l.contains("work20")), "{k:#?}");
    }

    #[test]
    fn deeply_nested_containers_do_not_exhaust_the_stack() {
        // Run on a thread with a small stack: the outline must not recurse once per level.
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut rust = String::new();
                let mut py = String::new();
                for k in 0..2_000 {
                    rust.push_str(&format!("mod cookie{k} {{\n"));
                    py.push_str(&format!("{}class Cookie{k}:\n", " ".repeat(k)));
                }
                rust.push_str("fn f() {\n    x();\n}\n");
                rust.push_str(&"}\n".repeat(2_000));
                py.push_str(&format!("{}pass\n", " ".repeat(2_000)));
                (
                    kept(&rust, "cookie module").len(),
                    kept(&py, "cookie class").len(),
                )
            })
            .unwrap();
        let (rust, py) = t.join().expect("the outline overflowed its stack");
        assert!(rust > 0 && py > 0);
    }

    #[test]
    fn near_misses_keep_their_signature() {
        let src = "fn parse_header(line: &str) {\n    let header = line.trim();\n    split(header);\n    more(header);\n}\n\nfn parse_body(line: &str) {\n    let body = line.trim();\n    split(body);\n    more(body);\n}\n\nfn render(x: u8) {\n    let y = x + 1;\n    out(y);\n    out(y);\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let q = Query::new("parse header", true);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &q, &mut d);
        assert!(d.keep[0] && d.keep[1], "the relevant definition is kept");
        assert!(
            d.keep[6],
            "a definition sharing a goal term keeps its signature"
        );
        assert!(!d.keep[12], "an unrelated definition goes whole");
    }

    #[test]
    fn definitions_a_pasted_failure_points_at_score_with_the_best() {
        let src = "def area(shape):\n    return shape.w * shape.h\n\n\ndef check(shape):\n    if shape.w < 0:\n        raise ValueError(f\"shape {shape} cannot be drawn this small\")\n\n\ndef draw(shape):\n    pass\n\n\ndef other():\n    pass\n";
        let goal = "Why does test_area fail?\nsrc/shapes.py:12: in draw\nE   ValueError: shape Square cannot be drawn this small";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let q = Query::new(goal, true);
        let mut scores = vec![3.0, 0.5, 0.0, 0.0];
        let pointed = evidence(&lines, &o.units, &q, &mut scores);
        assert_eq!(
            scores,
            [3.0, 4.5, 4.5, 0.0],
            "check holds the message, draw is a frame"
        );
        let at: Vec<usize> = (0..lines.len()).filter(|&i| pointed[i]).collect();
        assert_eq!(at, [6], "only the line raising the message");
    }

    #[test]
    fn evidence_found_everywhere_points_at_nothing() {
        let mut src = String::new();
        for i in 0..20 {
            src.push_str(&format!(
                "func load{i}(p string) (*T, error) {{\n\tv, err := read(p)\n\tif err != nil {{\n\t\treturn nil, err\n\t}}\n\treturn v, nil\n}}\n"
            ));
        }
        let goal = "Why does the retry backoff overflow?\n```go\nif err != nil {\n    return nil, err\n}\n```";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let q = Query::new(goal, true);
        let mut scores = vec![1.0; o.units.len()];
        let pointed = evidence(&lines, &o.units, &q, &mut scores);
        assert!(
            !pointed.contains(&true),
            "lines found in all 20 functions tell none apart"
        );
        assert!(scores.iter().all(|&s| s == 1.0));
    }

    #[test]
    fn a_term_in_most_definitions_does_not_rank_them() {
        let mut src = String::new();
        for name in ["alpha", "beta", "gamma", "delta", "epsilon"] {
            src.push_str(&format!(
                "fn {name}(value: u32) -> u32 {{\n    let doubled = value * 2;\n    doubled + 1\n}}\n\n"
            ));
        }
        src.push_str("fn parse(input: &str) -> u32 {\n    input.len() as u32\n}\n");
        let out = kept(&src, "parse the value");
        assert!(out.iter().any(|l| l.contains("input.len()")), "{out:?}");
        assert!(
            !out.iter().any(|l| l.contains("doubled + 1")),
            "`value` is in 5 of 6 definitions: it tells none apart: {out:?}"
        );
        // When every goal term is that common, the terms still rank.
        let out = kept(&src[..src.find("fn parse").unwrap()], "the doubled value");
        assert!(out.iter().any(|l| l.contains("doubled + 1")), "{out:?}");
    }

    #[test]
    fn block_comment_lines_without_a_star_are_prose_not_statements() {
        // got's JSDoc style: no leading `*`. Those lines are the comment's, not short statements
        // kept for the shape of the file; the members they document are.
        let src = "export interface Options {\n\t/**\n\tCookie support. You do not have to care about \
                   parsing.\n\t*/\n\tcookieJar?: CookieJar;\n\n\t/**\n\tQuery string added to the \
                   request.\n\t*/\n\tsearchParams?: string;\n}\n\nexport function redirect(options: \
                   Options) {\n\treturn follow(options.location);\n}\n";
        let out = kept(src, "follow the redirect location");
        assert!(out.iter().any(|l| l.contains("cookieJar?:")), "{out:?}");
        assert!(out.iter().any(|l| l.contains("searchParams?:")), "{out:?}");
        assert!(!out.iter().any(|l| l.contains("Cookie support")), "{out:?}");
        assert!(!out.iter().any(|l| l.contains("Query string")), "{out:?}");
        assert!(out.iter().any(|l| l.contains("return follow")), "{out:?}");
    }
}

#[cfg(test)]
mod rank_probe {
    use super::*;
    use crate::prune::engine::split_lines;

    /// Where the definition holding most of a case's gold lines ranks among the file's
    /// definitions by score, and whether [`select`] keeps it, over the dev code cases of
    /// `VIS_DATA` (a count per rank bucket; "no unit": the gold is in no definition).
    /// `RANK_SHOW=1` prints the question, the gold definition and the top three of the cases
    /// ranked past 10. Run:
    /// `VIS_DATA=bench-data/issue_reports.jsonl cargo test --release --lib gold_unit_ranks -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn gold_unit_ranks() {
        let mut hist: std::collections::BTreeMap<String, usize> = Default::default();
        for v in crate::prune::engine::dev_code_cases() {
            let lines = split_lines(v["text"].as_str().unwrap());
            let q = Query::new(v["query"].as_str().unwrap(), true);
            let (o, m) = analyse(&lines, &q, false);
            let (scores, _) = ranked(&lines, &o, &q, &m, about_docs(&q));
            let kept = select(&o.units, &scores, lines.len());
            let gold: Vec<usize> = v["gold_lines"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|g| (g.as_u64()? as usize).checked_sub(1))
                .collect();
            let holding = |u: &Unit| {
                gold.iter()
                    .filter(|&&g| g >= u.pre.start && g < u.body.end)
                    .count()
            };
            let main = (0..o.units.len())
                .filter(|&k| holding(&o.units[k]) > 0)
                .max_by_key(|&k| (holding(&o.units[k]), std::cmp::Reverse(k)));
            let key = match main {
                None => "no unit".to_string(),
                Some(k) => {
                    let rank = scores.iter().filter(|&&s| s > scores[k]).count() + 1;
                    let bucket = match rank {
                        1 => "1",
                        2 => "2",
                        3..=5 => "3-5",
                        6..=10 => "6-10",
                        _ => ">10",
                    };
                    if rank > 10 && std::env::var_os("RANK_SHOW").is_some() {
                        let mut order: Vec<usize> = (0..o.units.len()).collect();
                        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
                        let q: String = v["query"].as_str().unwrap().chars().take(300).collect();
                        println!("Q: {}", q.replace('\n', " "));
                        println!(
                            "  gold, rank {rank}, score {:.2}: {}",
                            scores[k],
                            lines[o.units[k].sig.start].trim()
                        );
                        for &t in order.iter().take(3) {
                            println!(
                                "  top, score {:.2}: {}",
                                scores[t],
                                lines[o.units[t].sig.start].trim()
                            );
                        }
                    }
                    let zero = if scores[k] == 0.0 { ", score 0" } else { "" };
                    format!("rank {bucket}{zero}, kept {}", kept[k])
                }
            };
            *hist.entry(key).or_default() += 1;
        }
        for (k, n) in hist {
            println!("{n:5} {k}");
        }
    }
}

#[cfg(test)]
mod loss_probe {
    use super::*;
    use crate::prune::engine::{Limits, SourceType, split_lines};

    /// Where the gold lines a plan at the defaults loses are, in recall points over the dev code
    /// cases of `VIS_DATA`: outside every definition, in a definition that scores 0, in one that
    /// scores but [`select`] leaves out, in a selected one's thinned long body, or in a selected
    /// one all the same (the focus cap, the limits, islands). Run:
    /// `VIS_DATA=bench-data/issue_reports.jsonl cargo test --release --lib where_gold_is_lost -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn where_gold_is_lost() {
        let mut lost: std::collections::BTreeMap<&str, f64> = Default::default();
        let mut cases = 0.0;
        for v in crate::prune::engine::dev_code_cases() {
            let lines = split_lines(v["text"].as_str().unwrap());
            let goal = v["query"].as_str().unwrap();
            let q = Query::new(goal, true);
            let (o, m) = analyse(&lines, &q, false);
            let (scores, _) = ranked(&lines, &o, &q, &m, about_docs(&q));
            let kept = select(&o.units, &scores, lines.len());
            let plan =
                crate::prune::engine::plan(&lines, goal, SourceType::Code, &Limits::default());
            let gold: Vec<usize> = v["gold_lines"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|g| (g.as_u64()? as usize).checked_sub(1))
                .filter(|&g| g < lines.len())
                .collect();
            if gold.is_empty() {
                continue;
            }
            cases += 1.0;
            let w = 1.0 / gold.len() as f64;
            for &g in &gold {
                if plan.keep[g] {
                    continue;
                }
                let unit = o
                    .units
                    .iter()
                    .position(|u| g >= u.pre.start && g < u.body.end);
                let key = match unit {
                    None => "outside definitions",
                    Some(k) if kept[k] && o.units[k].body.len() > THIN_BODY_LINES => {
                        "in a selected long body (thinned)"
                    }
                    Some(k) if kept[k] => "in a selected definition (cap/limits/islands)",
                    Some(k) if scores[k] > 0.0 => "in a scored, unselected definition",
                    Some(_) => "in a zero-score definition",
                };
                *lost.entry(key).or_default() += w;
            }
        }
        for (k, n) in lost {
            println!("{:6.2} recall points  {k}", 100.0 * n / cases);
        }
    }
}
