//! Prose inside the definitions the code strategy keeps: the doc comments, comments and Python
//! docstrings that do not speak of the goal go, so a kept definition is kept for its code.
//!
//! Owns which comment lines of a kept definition are removed. It must never remove code (a line
//! with code after a comment's end, a string the code uses), a directive to a tool, or part of a
//! comment (a run starts where its comment opens and ends where it closes).

use super::super::draft::{Draft, Reason, trimmed};
use super::super::terms::Matches;
use super::outline::{Outline, Role};
use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// In a kept definition, a run of at least this many comment lines may go ([`quiet_comments`]): a
/// lone comment line costs about what its marker would.
const QUIET_COMMENT_LINES: usize = 2;
/// ...when the goal's terms in it weigh at most this share of the goal's best line (a comment
/// naming 40% of what the best line names speaks of the goal).
const QUIET_COMMENT_OF_LINE: f32 = 0.4;

/// In the definitions a goal keeps, a run of at least [`QUIET_COMMENT_LINES`] lines of prose (a
/// doc comment above the signature, comments or a Python docstring in the body: [`is_prose`])
/// goes when its terms weigh at most [`QUIET_COMMENT_OF_LINE`] of the goal's best line and the
/// goal's evidence points at none of its lines: the definition is kept for its code, and prose
/// that does not speak of the goal is one marker away. A run must start where its comment starts
/// and end where it ends, so no comment is left open. The caller skips this for a goal about
/// documentation, whose answer is the prose, and when no definition scores.
pub(super) fn quiet_comments(
    lines: &[&str],
    o: &Outline,
    m: &Matches,
    pointed: &[bool],
    draft: &mut Draft,
) {
    let best_line = m.best_line(0..lines.len());
    // Comment lines (a blank line inside a block comment too) and docstrings of kept definitions.
    let in_run = |i: usize| {
        draft.keep[i]
            && (o.comment[i] || o.docstring[i])
            && matches!(o.roles[i], Role::Pre(_) | Role::Body(_))
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !in_run(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && in_run(i) {
            i += 1;
        }
        // The comment must open on the run's first line and not go on past its last one.
        let opens = (o.docstring[start] && (start == 0 || !o.docstring[start - 1]))
            || o.opens_comment[start];
        let closes = i == lines.len() || !(o.comment[i] || o.docstring[i]);
        if opens
            && closes
            && i - start >= QUIET_COMMENT_LINES
            && m.span(start..i) <= QUIET_COMMENT_OF_LINE * best_line
            && !pointed[start..i].contains(&true)
            && lines[start..i].iter().all(|l| is_prose(l))
        {
            runs.push(start..i);
        }
    }
    for r in runs {
        // The limits bring a run back whole or not at all: half a comment reads as code.
        draft.atoms.push(r.clone());
        for j in r {
            draft.remove(j, Reason::Doc);
            // Brought back (limits) by its own words, not its definition's rank.
            draft.score[j] = m.line(j);
        }
    }
}

/// True when a comment or docstring line is prose only: no code after the comment's end
/// (`*/ f();`) and no directive to a tool ([`is_directive`]). Checked only on the runs that would
/// go (a run holding such a line stays whole), since the directive words are many.
fn is_prose(line: &str) -> bool {
    !code_after_comment(line) && !is_directive(trimmed(line))
}

/// True when code follows a block comment's end on the line (`*/ f();`).
pub(super) fn code_after_comment(line: &str) -> bool {
    let t = trimmed(line);
    t.rfind("*/").is_some_and(|p| !t[p + 2..].trim().is_empty())
}

/// Words that make a comment a directive to a tool (a linter, a type checker, a formatter,
/// coverage) or a safety argument the code relies on: never prose to drop.
const DIRECTIVES: &[&str] = &[
    "noqa",
    "type:",
    "pragma",
    "pylint:",
    "fmt:",
    "eslint",
    "@ts-",
    "prettier-ignore",
    "istanbul",
    "nolint",
    "nosec",
    "pyright:",
    "mypy:",
    "isort:",
    "FlowFixMe",
    "NOSONAR",
    "biome-ignore",
    "NOLINT",
    "rustfmt",
    "clippy",
    "SAFETY",
    "Safety:",
    "@flow",
    "jshint",
    "tslint",
    "+build",
];

/// True when the comment line `t` (trimmed) is a directive: `//word` with no space (Go's
/// `//go:build`, `//export`, `//nolint`) or one of [`DIRECTIVES`].
fn is_directive(t: &str) -> bool {
    let glued = t
        .strip_prefix("//")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic()));
    glued || DIRECTIVE_WORDS.is_match(t)
}

/// [`DIRECTIVES`] as one automaton: a comment line is searched once, not once per word.
static DIRECTIVE_WORDS: LazyLock<AhoCorasick> =
    LazyLock::new(|| AhoCorasick::new(DIRECTIVES).expect("a few short literal patterns"));

#[cfg(test)]
mod tests {
    use super::super::plan;
    use super::*;
    use crate::prune::engine::terms::Query;

    /// The code strategy's removal reasons per line, with the lines.
    fn reasons(src: &str, goal: &str) -> Vec<(bool, Reason, String)> {
        let lines: Vec<&str> = src.lines().collect();
        let q = Query::new(goal, true);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &q, &mut d);
        (0..lines.len())
            .map(|i| (d.keep[i], d.reason[i], lines[i].to_string()))
            .collect()
    }

    /// A kept function with a doc comment and two inner comments, one about the goal of the tests
    /// (`header name lowercase`) and one not, plus an unrelated function.
    const COMMENTED: &str = "/// Splits a field line at its first colon and trims both sides,
/// as the reference parser does for every field it reads.
pub fn parse_header(line: &str) -> Header {
    // Values may hold colons of their own (a URL),
    // so only the first one splits.
    let (name, value) = line.split_once(':').unwrap();
    // The header name is case-insensitive:
    // the parser lowercases it here.
    let name = name.to_lowercase();
    // once
    Header { name, value }
}

fn render_body(body: &Body) -> String {
    body.text.clone()
}
";

    #[test]
    fn comments_off_the_goal_leave_a_kept_definition_and_its_code_stays() {
        let r = reasons(COMMENTED, "header name lowercase");
        let gone = |needle: &str| {
            let (keep, reason, _) = r.iter().find(|(_, _, l)| l.contains(needle)).unwrap();
            !keep && *reason == Reason::Doc
        };
        let stays = |needle: &str| r.iter().any(|(k, _, l)| *k && l.contains(needle));
        // The doc comment and the first comment say nothing of the goal: they go.
        assert!(gone("Splits a field line"), "{r:#?}");
        assert!(gone("as the reference parser"), "{r:#?}");
        assert!(gone("Values may hold colons"), "{r:#?}");
        // The definition's code stays, and so does the comment about the goal, and the lone one.
        for line in [
            "pub fn parse_header",
            "split_once",
            "The header name is case-insensitive",
            "the parser lowercases it here",
            "to_lowercase()",
            "// once",
            "Header { name, value }",
        ] {
            assert!(stays(line), "{line}: {r:#?}");
        }
    }

    #[test]
    fn a_goal_about_documentation_keeps_the_comments() {
        let r = reasons(COMMENTED, "typo in the header name lowercase docs");
        for needle in ["Splits a field line", "Values may hold colons"] {
            assert!(
                r.iter().any(|(k, _, l)| *k && l.contains(needle)),
                "{needle}: {r:#?}"
            );
        }
    }

    #[test]
    fn a_docstring_goes_whole_but_a_string_the_code_uses_stays() {
        let src = "def parse_header(line):
    \"\"\"Split a line at its first colon.

    Both sides are stripped, as the reference parser does.
    \"\"\"
    name, value = line.split(':', 1)
    query = \"\"\"
        SELECT value FROM seen
        WHERE key = ?
    \"\"\"
    return name.lower(), value

def render_body(body):
    return body.text
";
        let r = reasons(src, "header name lower");
        // The docstring, its blank line included, says nothing of the goal.
        for (i, (keep, reason, line)) in r.iter().enumerate().take(5).skip(1) {
            assert!(!keep && *reason == Reason::Doc, "{i} {line}: {r:#?}");
        }
        // The code stays, the string it assigns (no term of the goal either) whole.
        for (i, (keep, _, line)) in r.iter().enumerate().take(11).skip(5) {
            assert!(keep, "{i} {line}: {r:#?}");
        }
    }

    /// The whole engine's plan at the default limits: (kept, line) per line, and the reasons of
    /// the removed runs.
    fn engine_plan(src: &str, goal: &str) -> (Vec<(bool, String)>, Vec<String>) {
        use crate::contract::types::SourceType;
        use crate::prune::engine::{Limits, plan, split_lines};
        let lines = split_lines(src);
        let p = plan(&lines, goal, SourceType::Code, &Limits::default());
        let kept = lines
            .iter()
            .zip(&p.keep)
            .map(|(l, k)| (*k, l.to_string()))
            .collect();
        (kept, p.removed.into_iter().map(|r| r.reason).collect())
    }

    /// Whether the first line holding `needle` is kept (a test names only lines it wrote once).
    fn is_kept(kept: &[(bool, String)], needle: &str) -> bool {
        kept.iter()
            .find(|(_, l)| l.contains(needle))
            .unwrap_or_else(|| panic!("no line holds {needle}"))
            .0
    }

    /// Asserts that the line holding each of `needles` is kept (`want`) or removed (`!want`).
    fn assert_kept(kept: &[(bool, String)], needles: &[&str], want: bool) {
        for needle in needles {
            assert_eq!(is_kept(kept, needle), want, "{needle}: {kept:#?}");
        }
    }

    /// Unrelated functions (Rust, or Python with `python`) around `middle`, so the goal keeps
    /// only what it names.
    fn among_others(middle: &str, python: bool) -> String {
        let mut src = String::new();
        for k in 0..8 {
            src.push_str(&if python {
                format!("def unrelated_{k}(x):\n    y = x * {k}\n    return y + 1\n\n\n")
            } else {
                format!("fn unrelated_{k}(x: u32) -> u32 {{\n    let y = x.wrapping_mul({k});\n    y + 1\n}}\n\n")
            });
            if k == 3 {
                src.push_str(middle);
                src.push('\n');
            }
        }
        src
    }

    #[test]
    fn end_to_end_a_kept_function_loses_the_prose_off_the_goal_and_keeps_the_rest() {
        let src = among_others(
            "/// Reads one field of a message as the reference implementation does, returning the
/// raw bytes untouched when the field was never set by the sender of the message.
/// See the protocol notes for the historical reasons behind this behaviour.
pub fn parse_header(line: &str) -> Header {
    /* The reference implementation accepts any byte here, and older senders relied on

       that when they wrote their own framing on top of the protocol, years ago. */
    let (name, value) = line.split_once(':').unwrap();
    // The header name is case-insensitive, as every version of the protocol says,
    // so the parser lowercases the header name once, here, and every lookup after
    // this point compares the lowercase header name with lowercase keys only.
    let name = name.to_lowercase();
    // SAFETY: the split above leaves valid UTF-8 on both sides of the colon,
    // as the caller checked the whole line before handing it over to us, and
    // splitting at an ASCII byte never cuts a multi-byte character in two.
    let value = unsafe { std::str::from_utf8_unchecked(value.as_bytes()) };
    /* kept */ let _ = name.len();
    Header { name, value }
}
",
            false,
        );
        let (kept, reasons) = engine_plan(&src, "header name lowercase");
        assert!(reasons.iter().any(|r| r == "doc hors focus"), "{reasons:?}");
        // The doc comment and the block comment (both paragraphs, its opening and closing) go.
        assert_kept(
            &kept,
            &[
                "Reads one field",
                "See the protocol notes",
                "The reference implementation accepts",
                "that when they wrote",
            ],
            false,
        );
        // The code stays, and so do the comment about the goal, the safety argument and a
        // comment followed by code on its line.
        assert_kept(
            &kept,
            &[
                "pub fn parse_header",
                "split_once",
                "The header name is case-insensitive",
                "lowercases the header name once",
                "SAFETY: the split above",
                "as the caller checked",
                "/* kept */ let _",
                "Header { name, value }",
            ],
            true,
        );
    }

    #[test]
    fn end_to_end_a_kept_function_whose_docstring_goes_keeps_its_signature() {
        let mut src = String::new();
        for k in 0..6 {
            src.push_str(&format!(
                "def unrelated_{k}(x):\n    y = x * {k}\n    return y + 1\n\n\n\
def apply_{k}(item, settings):\n    \"\"\"Apply the settings to one item of the batch.\n\n\
    Items are processed in the order the batch was built in, and the settings are\n\
    applied as given, without copying them first.\n    \"\"\"\n\
    name = item.header_name.lower()\n    return name\n\n\n"
            ));
        }
        let (kept, _) = engine_plan(&src, "header name lower");
        let mut seen = 0;
        for (i, (k, line)) in kept.iter().enumerate() {
            if line.contains("item.header_name.lower()") {
                seen += 1;
                assert!(*k, "{line}");
                // Its `def` line is kept even though the docstring between them is gone.
                assert!(
                    kept[i - 6].0 && kept[i - 6].1.starts_with("def apply_"),
                    "{kept:#?}"
                );
                assert!(!kept[i - 5].0, "the docstring stays: {kept:#?}");
            }
        }
        assert_eq!(seen, 6);
    }

    #[test]
    fn end_to_end_strings_the_code_uses_stay() {
        let src = among_others(
            "def load_header_names(cursor):
    cursor.execute(
        \"\"\"
        SELECT key, value, created, updated, owner, origin, checksum, flags
        FROM settings_table_for_every_account_and_every_region_of_the_service
        WHERE flags & 1 = 0 AND owner IS NOT NULL ORDER BY created DESC
        \"\"\",
    )
    usage = \"\"\"Usage: load [options]
        Loads every stored setting of every account into the cache.
    \"\"\"
    # Nothing here depends on the region of the account or on its owner,
    # and the cache is rebuilt from scratch every time this runs anyway, so a
    # failure halfway leaves nothing behind that a second run would trip over.
    return [row.header_name for row in cursor.fetchall()], usage
",
            true,
        );
        let (kept, _) = engine_plan(&src, "load header names");
        assert_kept(
            &kept,
            &[
                "SELECT key",
                "FROM settings_table",
                "ORDER BY created",
                "Usage: load",
                "Loads every stored",
                "return [row.header_name",
            ],
            true,
        );
        assert_kept(&kept, &["Nothing here depends"], false);
    }

    #[test]
    fn end_to_end_comment_lookalikes_in_strings_and_continued_comments_stay() {
        let src = among_others(
            "pub fn header_shader(name: &str) -> String {
    let stage = r#\"
        // vertex stage: reads the uniform buffer once per draw call and writes
        // the result to the output without any change, so that every fragment
        // of the quad sees the same value, whatever the driver does with it
    \"#;
    let n = stage.len(); /* the count below is what the protocol allowed when
        this was written, and older peers still send the first form of it, so it
        cannot change without a flag that every peer understands the same way */
    format!(\"{stage}{name}{n}\")
}
",
            false,
        );
        let (kept, _) = engine_plan(&src, "header shader name");
        assert_kept(
            &kept,
            &[
                "// vertex stage",
                "// of the quad sees",
                "the count below",
                "this was written",
                "cannot change without a flag",
            ],
            true,
        );
    }
}
