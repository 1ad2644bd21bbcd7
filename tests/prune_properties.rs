//! Property tests of the pruning engine and renderer through the library API: every invariant of
//! seed 001 (order, limits, NO_PRUNE, annotations, markers, recovery, determinism) on random texts
//! and on real files (this repository's sources and crates in `~/.cargo/registry/src`).

use mcp_pruner::contract::types::SourceType;
use mcp_pruner::prune::engine::{self, Limits, Plan};
use mcp_pruner::prune::render::{self, MARKER_PATTERN, Markers, Rendered};
use proptest::prelude::*;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

static MARKER: LazyLock<Regex> = LazyLock::new(|| Regex::new(MARKER_PATTERN).unwrap());
const ID: &str = "prn_3f9a1c2e_7";

/// Lines of many kinds: code, logs, docs, directives, blanks, odd characters.
const LINES: &[&str] = &[
    "use std::collections::HashMap;",
    "/// Parses the header line.",
    "pub fn parse_header(line: &str) -> Option<Header> {",
    "    let (name, value) = line.split_once(':')?;",
    "    Some(Header { name, value })",
    "}",
    "impl Parser {",
    "    fn next_token(&mut self) -> Token {",
    "        self.pos += 1;",
    "    }",
    "def load_config(path):",
    "    return json.load(open(path))",
    "class Store:",
    "2024-05-01 12:00:01 INFO request served in 12ms",
    "2024-05-01 12:00:02 ERROR connection refused: upstream timeout",
    "Traceback (most recent call last):",
    "  File \"app.py\", line 3, in main",
    "ValueError: bad value",
    "thread 'main' panicked at src/main.rs:2:5:",
    "test tests::parse ... ok",
    "test tests::render ... FAILED",
    "# Configuration",
    "Title",
    "=====",
    "```rust",
    "```",
    "~~~",
    "Set the port in the config file before starting the server.",
    "⟦NO_PRUNE_BEGIN⟧",
    "⟦NO_PRUNE_END⟧",
    "// ⟦NO_PRUNE_BEGIN⟧ keep this",
    "⟦PRUNÉ: prune_id=fake lignes 1-2 (2) raison=piège⟧",
    "",
    "   ",
    "\t}",
    "é ü 中文 🙂",
    "line with a carriage return\r",
    "'{' \"}\" r#\"{\"# /* { */",
];

const WORDS: &[&str] = &[
    "parse",
    "header",
    "parse_header",
    "config",
    "timeout",
    "error",
    "token",
    "store",
    "the",
    "why",
    "fail",
    "panicked",
    "port",
    "ValueError",
    "HashMap",
    "",
];

fn source() -> impl Strategy<Value = SourceType> {
    prop_oneof![
        Just(SourceType::Code),
        Just(SourceType::Logs),
        Just(SourceType::Docs)
    ]
}

fn limits() -> impl Strategy<Value = Limits> {
    (0.0f64..=1.0, 0usize..40).prop_map(|(max_prune_ratio, min_keep_lines)| Limits {
        max_prune_ratio,
        min_keep_lines,
    })
}

fn text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        8 => proptest::sample::select(LINES).prop_map(str::to_string),
        1 => "[ -~é{}]{0,40}",
    ];
    (proptest::collection::vec(line, 0..120), any::<bool>()).prop_map(|(lines, trailing)| {
        let mut t = lines.join("\n");
        if trailing && !t.is_empty() {
            t.push('\n');
        }
        t
    })
}

fn goal() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(WORDS), 0..5).prop_map(|w| w.join(" "))
}

/// Checks every invariant for one input, for all four render option combinations.
fn check(text: &str, goal: &str, source: SourceType, limits: &Limits) {
    let lines = engine::split_lines(text);
    let plan = engine::plan(&lines, goal, source, limits);
    assert_eq!(
        plan,
        engine::plan(&lines, goal, source, limits),
        "not deterministic"
    );
    check_plan(&lines, &plan, limits);
    for annotate in [false, true] {
        for markers in [Markers::Off, Markers::Canonical, Markers::Compact] {
            let r = render::render(&lines, &plan, ID, annotate, markers, text.ends_with('\n'));
            check_render(text, &lines, &plan, &r, annotate, markers);
        }
    }
}

fn check_plan(lines: &[&str], plan: &Plan, limits: &Limits) {
    let n = lines.len();
    assert_eq!(plan.keep.len(), n);
    let removed = plan.keep.iter().filter(|k| !**k).count();
    // A response budget may remove past the ratio; it says so.
    let fitted = plan.warnings.iter().any(|w| w == "budget_elided");
    if limits.max_prune_ratio >= 0.0 && !fitted {
        assert!(
            n == 0 || removed as f64 / n as f64 <= limits.max_prune_ratio,
            "ratio: {removed}/{n} > {}",
            limits.max_prune_ratio
        );
        assert!(
            n - removed >= limits.min_keep_lines.min(n),
            "min_keep: kept {} < {}",
            n - removed,
            limits.min_keep_lines
        );
    }
    // NO_PRUNE: directive lines and everything between them are kept.
    let mut depth = 0usize;
    for (i, line) in lines.iter().enumerate() {
        let opens = line.matches("⟦NO_PRUNE_BEGIN⟧").count();
        let closes = line.matches("⟦NO_PRUNE_END⟧").count();
        if depth > 0 || opens > 0 || closes > 0 {
            assert!(plan.keep[i], "NO_PRUNE line {} removed: {line:?}", i + 1);
        }
        depth = (depth + opens).saturating_sub(closes);
    }
    // Removed runs: in order, maximal, exactly the removed lines, one-line French reasons.
    let mut covered = vec![false; n];
    let mut last_end = 0;
    for r in &plan.removed {
        assert!(
            r.start_line >= 1 && r.start_line <= r.end_line && r.end_line <= n,
            "{r:?}"
        );
        assert!(
            last_end == 0 || r.start_line > last_end + 1,
            "runs not maximal or not in order: {r:?}"
        );
        assert!(!r.reason.is_empty() && !r.reason.contains('\n'));
        for c in &mut covered[r.start_line - 1..r.end_line] {
            assert!(!*c, "line in two annotations");
            *c = true;
        }
        last_end = r.end_line;
    }
    for (i, (c, k)) in covered.iter().zip(&plan.keep).enumerate() {
        assert_eq!(*c, !k, "line {}: removed={} annotated={c}", i + 1, !k);
    }
    if plan.used_fallback {
        assert!(plan.keep.iter().all(|k| *k) && plan.removed.is_empty());
        assert!(plan.warnings.iter().any(|w| w == "constraints_unmet"));
    }
}

fn check_render(
    text: &str,
    lines: &[&str],
    plan: &Plan,
    r: &Rendered,
    annotate: bool,
    markers: Markers,
) {
    let kept = plan.keep.iter().filter(|k| **k).count();
    assert_eq!((r.kept_lines, r.pruned_lines), (kept, lines.len() - kept));
    assert_eq!(r.annotations.len(), plan.removed.len());
    for (a, removed) in r.annotations.iter().zip(&plan.removed) {
        assert_eq!(a.original_start_line.get() as usize, removed.start_line);
        assert_eq!(a.original_end_line.get() as usize, removed.end_line);
        assert_eq!(
            a.pruned_line_count.get() as usize,
            removed.end_line + 1 - removed.start_line
        );
        assert_eq!(a.reason, render::reason_with_names(removed));
        // At most twelve names a marker; a count of more only after names.
        assert!(removed.names.len() <= 12, "{:?}", removed.names);
        assert!(removed.more == 0 || !removed.names.is_empty());
        let caps = MARKER
            .captures(&a.marker)
            .unwrap_or_else(|| panic!("marker does not match the pattern: {}", a.marker));
        assert_eq!(&caps["prune_id"], ID);
        assert_eq!(caps["start"].parse::<usize>().unwrap(), removed.start_line);
        assert_eq!(caps["end"].parse::<usize>().unwrap(), removed.end_line);
        assert_eq!(
            caps["count"].parse::<u64>().unwrap(),
            a.pruned_line_count.get()
        );
        assert_eq!(&caps["reason"], a.reason);
    }
    // Rebuild the original from the output: kept lines (prefix checked and stripped) and, for each
    // marker, the removed lines it points to (recovered from the original, as recover_text does).
    // The output has one line per kept line and per inserted marker; it ends with '\n' when the
    // input did (so an empty last line is not mistaken for a terminator).
    let expected = kept
        + if markers == Markers::Off {
            0
        } else {
            r.annotations.len()
        };
    // The line standing for a removed run, when markers are on.
    let marker_line = |a: &mcp_pruner::contract::types::PrunedBlock| match markers {
        Markers::Off => None,
        Markers::Canonical => Some(a.marker.clone()),
        Markers::Compact => {
            let r = plan
                .removed
                .iter()
                .find(|r| r.start_line as u64 == a.original_start_line.get())
                .expect("an annotation per removed run");
            Some(render::compact_marker(
                r.start_line,
                r.end_line,
                r.label().as_deref(),
            ))
        }
    };
    let body = if text.ends_with('\n') {
        r.pruned_text.strip_suffix('\n').unwrap_or(&r.pruned_text)
    } else {
        &r.pruned_text
    };
    let out: Vec<&str> = if expected == 0 {
        Vec::new()
    } else {
        body.split('\n').collect()
    };
    assert_eq!(out.len(), expected, "output line count");
    let mut rebuilt: Vec<&str> = Vec::new();
    let mut next = 1usize;
    let mut annotations = r.annotations.iter().peekable();
    for line in out {
        if let Some(a) = annotations.next_if(|a| {
            a.original_start_line.get() as usize == next
                && marker_line(a).is_some_and(|m| m == line)
        }) {
            let (s, e) = (
                a.original_start_line.get() as usize,
                a.original_end_line.get() as usize,
            );
            rebuilt.extend(&lines[s - 1..e]);
            next = e + 1;
            continue;
        }
        if markers == Markers::Off {
            while let Some(a) =
                annotations.next_if(|a| a.original_start_line.get() as usize == next)
            {
                let (s, e) = (
                    a.original_start_line.get() as usize,
                    a.original_end_line.get() as usize,
                );
                rebuilt.extend(&lines[s - 1..e]);
                next = e + 1;
            }
        }
        let content = if annotate {
            let prefix = format!("{next}│ ");
            line.strip_prefix(prefix.as_str())
                .unwrap_or_else(|| panic!("line {next} lacks its prefix: {line:?}"))
        } else {
            line
        };
        assert!(
            plan.keep[next - 1],
            "output line {line:?} is not kept line {next}"
        );
        assert_eq!(
            content,
            lines[next - 1],
            "order or content differs at line {next}"
        );
        rebuilt.push(content);
        next += 1;
    }
    if markers != Markers::Off {
        assert!(
            annotations.peek().is_none(),
            "an annotation has no marker in the text"
        );
    }
    for a in annotations {
        let (s, e) = (
            a.original_start_line.get() as usize,
            a.original_end_line.get() as usize,
        );
        assert_eq!(s, next, "annotation out of place");
        rebuilt.extend(&lines[s - 1..e]);
        next = e + 1;
    }
    assert_eq!(next, lines.len() + 1, "not every line accounted for");
    let mut joined = rebuilt.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    assert_eq!(joined, text, "reconstruction differs");
}

/// Cases per property: 192 by default (fast on 2 cores), `PROPTEST_CASES` to explore more.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(192)
}

/// Within a response budget: every invariant but the ratio still holds (markers cite raw lines,
/// the raw text is rebuilt from kept lines plus the lines each marker names), and the rendering
/// fits the budget, unless what is left is NO_PRUNE lines and the head line of the best block.
fn check_within(text: &str, goal: &str, source: SourceType, limits: &Limits, bytes: usize) {
    let lines = engine::split_lines(text);
    // Canonical markers (prune_text) and compact ones (the tools), each with its own width.
    for (markers, marker_bytes) in [
        (
            Markers::Canonical,
            mcp_pruner::prune::widest_marker(ID, lines.len()),
        ),
        (
            Markers::Compact,
            mcp_pruner::prune::widest_compact_marker(lines.len()),
        ),
    ] {
        check_within_markers(
            text,
            &lines,
            goal,
            source,
            limits,
            bytes,
            markers,
            marker_bytes,
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn check_within_markers(
    text: &str,
    lines: &[&str],
    goal: &str,
    source: SourceType,
    limits: &Limits,
    bytes: usize,
    markers: Markers,
    marker_bytes: usize,
) {
    let budget = engine::TextBudget {
        bytes,
        marker_bytes,
    };
    let plan = engine::plan_within(lines, goal, source, limits, Some(budget));
    assert_eq!(
        plan,
        engine::plan_within(lines, goal, source, limits, Some(budget)),
        "not deterministic"
    );
    check_plan(lines, &plan, limits);
    let r = render::render(lines, &plan, ID, false, markers, text.ends_with('\n'));
    check_render(text, lines, &plan, &r, false, markers);
    if plan.warnings.iter().any(|w| w == "budget_elided") {
        assert_fits(&plan, &engine::protected_lines(lines), &r, bytes);
    }
}

/// One function of 90 to 240 lines: blank-separated paragraphs of statements (some naming goal
/// words, some opening a nested block), with NO_PRUNE blocks among them, so that the thinning of
/// long bodies and the directives meet.
fn long_function() -> impl Strategy<Value = String> {
    let paragraph = prop_oneof![
        4 => proptest::collection::vec(proptest::sample::select(WORDS), 1..4).prop_map(|w| {
            format!("    let {} = step(req);\n    more(req);\n    done(req);\n", w.join("_"))
        }),
        1 => Just("    if ready(req) {\n        go(req);\n\n        again(req);\n    }\n".to_string()),
        1 => Just("    // ⟦NO_PRUNE_BEGIN⟧\n    audit(req);\n    // ⟦NO_PRUNE_END⟧\n".to_string()),
    ];
    proptest::collection::vec(paragraph, 25..60).prop_map(|ps| {
        format!(
            "fn handle(req: &Request) -> Response {{\n{}    respond(req)\n}}\n",
            ps.join("\n")
        )
    })
}

/// A remote backend's answer fitted to a budget ([`engine::fit_plan`]): the lines it removed stay
/// removed, NO_PRUNE lines stay, markers cite raw lines and recover them, and the rendering fits
/// the budget unless what is left is NO_PRUNE lines and one other line.
fn check_fit_plan(text: &str, goal: &str, source: SourceType, mask: &[bool], bytes: usize) {
    let lines = engine::split_lines(text);
    let protected = engine::protected_lines(&lines);
    let keep: Vec<bool> = (0..lines.len())
        .map(|i| mask.get(i).copied().unwrap_or(true) || protected[i])
        .collect();
    let remote = Plan::from_keep(keep.clone());
    let budget = engine::TextBudget {
        bytes,
        marker_bytes: mcp_pruner::prune::widest_compact_marker(lines.len()),
    };
    let plan = engine::fit_plan(&lines, goal, source, remote.clone(), budget);
    assert_eq!(
        plan,
        engine::fit_plan(&lines, goal, source, remote, budget),
        "not deterministic"
    );
    let anything = Limits {
        max_prune_ratio: 1.0,
        min_keep_lines: 0,
    };
    check_plan(&lines, &plan, &anything);
    for (i, (before, after)) in keep.iter().zip(&plan.keep).enumerate() {
        assert!(
            *before || !*after,
            "line {} the remote removed came back",
            i + 1
        );
    }
    let r = render::render(
        &lines,
        &plan,
        ID,
        false,
        Markers::Compact,
        text.ends_with('\n'),
    );
    check_render(text, &lines, &plan, &r, false, Markers::Compact);
    if plan.warnings.iter().any(|w| w == "budget_elided") {
        assert_fits(&plan, &protected, &r, bytes);
    }
}

/// A plan fitted to `bytes` renders within them, unless what is left is NO_PRUNE lines
/// (`protected`) and one other line (the head of the best block).
fn assert_fits(plan: &Plan, protected: &[bool], r: &Rendered, bytes: usize) {
    let free_kept = plan
        .keep
        .iter()
        .zip(protected)
        .filter(|(k, p)| **k && !**p)
        .count();
    assert!(
        r.pruned_text.len() <= bytes || free_kept <= 1,
        "{} bytes rendered for a budget of {bytes}, {free_kept} removable lines kept",
        r.pruned_text.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn a_remote_answer_fitted_to_a_budget(text in text(), goal in goal(), source in source(), mask in proptest::collection::vec(proptest::bool::weighted(0.8), 0..120), bytes in 0usize..4096) {
        check_fit_plan(&text, &goal, source, &mask, bytes);
    }

    #[test]
    fn long_bodies_with_directives(text in long_function(), goal in goal(), limits in limits(), bytes in 0usize..4096) {
        check(&text, &goal, SourceType::Code, &limits);
        check_within(&text, &goal, SourceType::Code, &limits, bytes);
    }

    #[test]
    fn invariants_within_a_budget(text in text(), goal in goal(), source in source(), limits in limits(), bytes in 0usize..4096) {
        check_within(&text, &goal, source, &limits, bytes);
    }

    #[test]
    fn real_files_within_a_budget(index in 0usize..10_000, words in proptest::collection::vec(0usize..10_000, 1..4), bytes in 256usize..20_000) {
        let files = &*REAL_FILES;
        let (path, text) = &files[index % files.len()];
        let tokens: Vec<&str> = text.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| w.len() > 2).collect();
        let goal: Vec<&str> = words.iter().filter_map(|w| tokens.get(w % tokens.len().max(1)).copied()).collect();
        let detected = engine::detect_source_type(text, path.to_str());
        check_within(text, &goal.join(" "), detected, &Limits::default(), bytes);
    }

    #[test]
    fn invariants_on_random_texts(text in text(), goal in goal(), source in source(), limits in limits()) {
        check(&text, &goal, source, &limits);
    }

    #[test]
    fn invariants_at_default_limits(text in text(), goal in goal(), source in source()) {
        check(&text, &goal, source, &Limits::default());
    }

    #[test]
    fn invariants_on_real_files(index in 0usize..10_000, words in proptest::collection::vec(0usize..10_000, 1..4), source in source(), limits in limits()) {
        let files = &*REAL_FILES;
        let (path, text) = &files[index % files.len()];
        let tokens: Vec<&str> = text.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| w.len() > 2).collect();
        let goal: Vec<&str> = words.iter().filter_map(|w| tokens.get(w % tokens.len().max(1)).copied()).collect();
        let detected = engine::detect_source_type(text, path.to_str());
        check(text, &goal.join(" "), detected, &limits);
        check(text, &goal.join(" "), source, &Limits::default());
    }
}

/// Real files: this repository's sources and fixtures, plus a deterministic sample of registry
/// crates' `.rs`, `.md` and `.toml` files (when the registry is present), each under 120 KiB.
static REAL_FILES: LazyLock<Vec<(PathBuf, String)>> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in [
        "src",
        "benches",
        "examples",
        "bench-data/fixtures",
        "schemas",
    ] {
        collect(&root.join(dir), &mut paths, usize::MAX);
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(registry) = home.map(|h| h.join("registry/src")) {
        let mut found = Vec::new();
        collect(&registry, &mut found, 4000);
        paths.extend(found.into_iter().step_by(25));
    }
    let files: Vec<(PathBuf, String)> = paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            (text.len() < 120 * 1024).then_some((p, text))
        })
        .collect();
    assert!(!files.is_empty(), "no real files found");
    files
});

fn collect(dir: &Path, out: &mut Vec<PathBuf>, cap: usize) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for p in entries {
        if out.len() >= cap {
            return;
        }
        if p.is_dir() {
            collect(&p, out, cap);
        } else if ["rs", "md", "toml", "py", "json", "txt"]
            .iter()
            .any(|e| p.extension().is_some_and(|x| x == *e))
        {
            out.push(p);
        }
    }
}

#[test]
fn empty_and_single_line_texts() {
    for text in ["", "\n", "a", "a\n", "\n\n", "⟦NO_PRUNE_BEGIN⟧"] {
        for source in [SourceType::Code, SourceType::Logs, SourceType::Docs] {
            check(text, "anything", source, &Limits::default());
            check(
                text,
                "anything",
                source,
                &Limits {
                    max_prune_ratio: 1.0,
                    min_keep_lines: 0,
                },
            );
        }
    }
}

#[test]
fn invalid_limits_fall_back_to_no_op() {
    let text = "fn a() {\n    x();\n}\n".repeat(30);
    let lines = engine::split_lines(&text);
    for ratio in [f64::NAN, -0.5] {
        let plan = engine::plan(
            &lines,
            "a",
            SourceType::Code,
            &Limits {
                max_prune_ratio: ratio,
                min_keep_lines: 0,
            },
        );
        assert!(plan.used_fallback);
        assert_eq!(plan.warnings, ["constraints_unmet"]);
        let r = render::render(&lines, &plan, ID, false, Markers::Canonical, true);
        assert_eq!(r.pruned_text, text);
        assert!(r.annotations.is_empty());
    }
}

#[test]
fn prunes_an_irrelevant_majority() {
    let mut text = String::from(
        "use std::io;\n\n/// Parses the request header.\npub fn parse_header(line: &str) -> Header {\n    split_header(line)\n}\n",
    );
    const WIDGET: &str = "
/// Renders widget N.
pub fn render_widget_N(w: &Widget) -> String {
    let mut out = String::with_capacity(w.estimated_len());
    out.push_str(&w.title);
    for (index, item) in w.items.iter().enumerate() {
        out.push_str(&format!(\"{index}. {}\\n\", item.label));
        if item.highlighted {
            out.push_str(\"  (highlighted)\\n\");
        }
    }
    out.push_str(&w.footer);
    out
}
";
    for i in 0..40 {
        text.push_str(&WIDGET.replace('N', &i.to_string()));
    }
    let lines = engine::split_lines(&text);
    let plan = engine::plan(
        &lines,
        "how is the request header parsed",
        SourceType::Code,
        &Limits::default(),
    );
    let r = render::render(&lines, &plan, ID, false, Markers::Canonical, true);
    assert!(r.pruned_text.contains("split_header(line)"));
    let before = mcp_pruner::tokens::count(&text);
    let after = mcp_pruner::tokens::count(&r.pruned_text);
    // Unrelated definitions go whole, signature included: a run of them costs one marker.
    assert!(after * 10 < before * 4, "only {before} -> {after} tokens");
    // The engine would remove every widget body; max_prune_ratio 0.8 brings the first ones back
    // (and the closing brace of a body brought back in part).
    let removed = plan.keep.iter().filter(|k| !**k).count();
    assert!(
        removed <= lines.len() * 8 / 10 && removed + 10 >= lines.len() * 8 / 10,
        "{removed}"
    );
    assert!(plan.removed.len() <= 3, "{:?}", plan.removed);
    check(
        &text,
        "how is the request header parsed",
        SourceType::Code,
        &Limits::default(),
    );
}
