//! Named statements outside the definitions the outline ranks: a constant or a global
//! (`const RETRIES = ...`, `DEFAULT_LIMITS = Limits(...)`, `static char buf[N];`), a field
//! (`private final Cache cache;`), a `#define`, the entries of a Go `const (` group, an enum's
//! members, and a definition inside a block that names nothing (`if sys.version_info < (3, 9):`
//! then `def evaluate_fwd_ref(`). A marker that hides one can name it (`const RETRIES`), so the
//! model knows it is there.
//!
//! Owns where such a statement starts and ends (its comment above, its continuation lines) and
//! its label. It must never change what is kept or how anything ranks: it only tells markers
//! what they may name.

use super::super::draft::{is_blank, trimmed};
use super::super::evidence::trailing_ident;
use super::labels::{LABEL_KEYWORDS, assigned, assignment, label};
use super::line_kinds::{first_keyword, is_control, leading_word};
use super::outline::{Outline, Role};
use std::ops::Range;

/// A statement longer than this many lines is cut there (a generated table, a lost bracket).
const MAX_STATEMENT_LINES: usize = 200;

/// One named statement: its lines (a comment right above included), the line naming it, and the
/// label a marker shows.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Its lines, 0-based, from the comment directly above it through its last line.
    pub(crate) range: Range<usize>,
    /// The line that names it.
    pub(crate) line: usize,
    /// As a marker writes it (`const RETRIES`, `#define IS_TRANSIENT`, `buf`, `def f`).
    pub(crate) label: String,
}

/// The named statements of `lines` outlined as `o` (its units labelled `labels`, as
/// [`unit_labels`](super::labels::unit_labels) gives them), in line order: at a file's or a
/// container's level (lines the outline left loose, one-line declarations), and in the bodies of
/// blocks that name nothing (`if TYPE_CHECKING:`, an anonymous `enum {`).
pub(crate) fn statements(lines: &[&str], o: &Outline, labels: &[Option<String>]) -> Vec<Statement> {
    let n = lines.len().min(o.roles.len());
    // Signature lines of definitions and containers: named already.
    let mut named_sig = vec![false; n];
    for u in &o.units {
        named_sig[u.sig.start.min(n)..u.sig.end.min(n)].fill(true);
    }
    for c in &o.containers {
        let mut k = c.start;
        while k < c.end.min(n) && o.roles[k] == Role::Sig {
            named_sig[k] = true;
            k += 1;
        }
    }
    // Where a line may belong to a statement: 0 at a file's or container's level, `u + 1` in the
    // body of unlabelled unit `u`.
    let region = |i: usize| -> Option<usize> {
        match o.roles[i] {
            Role::Loose | Role::Blank => Some(0),
            Role::Sig if !named_sig[i] => Some(0),
            Role::Body(u) if labels.get(u as usize).is_some_and(Option::is_none) => {
                Some(u as usize + 1)
            }
            _ => None,
        }
    };
    let prose = |i: usize| o.comment[i] || o.doc[i];
    let mut out = Vec::new();
    let mut i = 0;
    // One past the last line an earlier statement took: a comment above is never taken twice.
    let mut taken = 0;
    while i < n {
        let Some(at) = region(i) else {
            i += 1;
            continue;
        };
        if is_blank(lines[i]) || prose(i) {
            i += 1;
            continue;
        }
        let t = trimmed(lines[i]);
        // Go's `const (` group: each entry is a statement of its own.
        if matches!(t, "const (" | "var (" | "type (") {
            i += 1;
            continue;
        }
        let name = statement_label(t);
        let end = statement_end(lines, i, name.is_some(), |j| region(j) == Some(at));
        if let Some(label) = name {
            let mut start = i;
            while start > taken
                && region(start - 1) == Some(at)
                && prose(start - 1)
                && !is_blank(lines[start - 1])
            {
                start -= 1;
            }
            out.push(Statement {
                range: start..end,
                line: i,
                label,
            });
        }
        i = end.max(i + 1);
        taken = i;
    }
    out
}

/// SQL's type names, written in capitals after the name they type (`_sql TEXT;` of a PL/pgSQL
/// `DECLARE` block).
const SQL_TYPES: &[&str] = &[
    "TEXT",
    "INTEGER",
    "INT",
    "BIGINT",
    "SMALLINT",
    "BOOLEAN",
    "BOOL",
    "JSON",
    "JSONB",
    "VARCHAR",
    "CHAR",
    "NUMERIC",
    "DECIMAL",
    "REAL",
    "FLOAT",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "INTERVAL",
    "UUID",
    "BYTEA",
    "REGCLASS",
    "NAME",
    "OID",
    "RECORD",
];

/// The label of a statement whose first line is `t` (trimmed), when it defines a name.
fn statement_label(t: &str) -> Option<String> {
    if let Some(rest) = t
        .strip_prefix('#')
        .and_then(|r| r.trim_start().strip_prefix("define"))
    {
        let name = leading_word(rest.trim_start());
        return (!name.is_empty()).then(|| format!("#define {name}"));
    }
    let word = t.split_whitespace().next().unwrap_or("");
    let keyword = first_keyword(t);
    // Nor does an `end` (SQL's `END IF;`, Pascal's `end;`).
    if is_control(word)
        || is_control(keyword)
        || t.starts_with(['#', '@', '}', ')'])
        || word.eq_ignore_ascii_case("end")
    {
        return None;
    }
    // A keyword that defines (`def f(`, `type Options = {`): labelled as the outline labels it,
    // unless an assignment says better what is defined (`let mut total =`, `module.exports =`).
    let eq = assignment(t);
    if keyword == "type" || (LABEL_KEYWORDS.contains(&keyword) && eq.is_none()) {
        return label(t);
    }
    // An assignment (`const RETRIES = 3`, `val x = f(`, `DEFAULT = Limits(`): the name before it.
    if let Some(eq) = eq {
        return assigned(t, eq);
    }
    let open = t.find('(').unwrap_or(t.len());
    if t.ends_with(';') {
        // A field, a global or a prototype: a type, then the name (`static char buf[N];`,
        // `private final Cache cache;`, `int parse(const char *s);`).
        let head = t[..open].trim_end();
        let cut = head.find([';', ':']).unwrap_or(head.len());
        // An array's brackets go, whether the type's (C#'s `char[] buffer;`) or the name's
        // (C's `buf[N];`): the name is the last word left.
        let head = without_brackets(&head[..cut]);
        let head = head.trim_end();
        let words = head.split_whitespace().count();
        // SQL declares a name, then its type: `_sql TEXT;` in a PL/pgSQL `DECLARE` block.
        if let Some((name, ty)) = head.split_once(' ')
            && SQL_TYPES.contains(&ty.trim())
            && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        {
            return Some(name.to_string());
        }
        let plain = head.chars().all(|c| {
            c.is_alphanumeric()
                || c.is_whitespace()
                || matches!(c, '_' | '<' | '>' | '*' | '&' | ',' | '?' | '$')
        });
        if words >= 2 && plain {
            let name = trailing_ident(head)?;
            return Some(if open < t.len() {
                format!("{name}()")
            } else {
                name.to_string()
            });
        }
        return None;
    }
    // An annotated name without a value (`__slots__: tuple[str, ...]`, `name: string`).
    let (left, right) = t.split_once(':')?;
    let plain = !left.is_empty() && left.chars().all(|c| c.is_alphanumeric() || c == '_');
    (plain && !right.trim().is_empty() && !t.ends_with(',') && right.starts_with(' '))
        .then(|| left.to_string())
}

/// `s` without its bracketed groups (`[N]`, `[]`), nested ones included.
fn without_brackets(s: &str) -> String {
    let mut depth = 0usize;
    s.chars()
        .filter(|&c| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// One past the last line of the statement starting at line `i`: through its open brackets, its
/// continuation lines (a trailing `\`, `,`, operator or open bracket), and, for a named statement
/// ending with `:`, the more indented block after it (a `def` inside an `if`). Never past a line
/// `inside` rejects.
fn statement_end(lines: &[&str], i: usize, named: bool, inside: impl Fn(usize) -> bool) -> usize {
    let n = lines.len();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut depth = 0i32;
    let mut template = false;
    let mut j = i;
    loop {
        depth += bracket_delta(lines[j], &mut template);
        let t = trimmed(lines[j]);
        j += 1;
        let open = depth > 0
            || template
            || t.ends_with([
                '\\', ',', '(', '[', '{', '=', '+', '-', '*', '/', '&', '|', '.', '?',
            ])
            || t.ends_with("=>");
        if !open || j >= n || !inside(j) || j - i >= MAX_STATEMENT_LINES {
            if named && !open && t.ends_with(':') {
                let start = indent(lines[i]);
                let mut last = j;
                while j < n && inside(j) && j - i < MAX_STATEMENT_LINES {
                    if is_blank(lines[j]) {
                        j += 1;
                        continue;
                    }
                    if indent(lines[j]) <= start {
                        break;
                    }
                    j += 1;
                    last = j;
                }
                return last;
            }
            return j;
        }
    }
}

/// Opening minus closing brackets of `line` outside strings and comments; `template` carries a
/// JavaScript template literal from one line to the next.
fn bracket_delta(line: &str, template: &mut bool) -> i32 {
    let b = line.as_bytes();
    let mut delta = 0;
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if *template {
            match c {
                b'\\' => k += 1,
                b'`' => *template = false,
                _ => {}
            }
            k += 1;
            continue;
        }
        match c {
            b'`' => *template = true,
            b'"' | b'\'' => {
                // A quote opens a literal only if it closes on this line (an apostrophe or a
                // Rust lifetime does not).
                let mut e = k + 1;
                while e < b.len() && b[e] != c {
                    e += if b[e] == b'\\' { 2 } else { 1 };
                }
                if e < b.len() {
                    k = e;
                }
            }
            b'/' if b.get(k + 1) == Some(&b'/') => break,
            b'/' if b.get(k + 1) == Some(&b'*') => match line[k + 2..].find("*/") {
                Some(e) => k += e + 3,
                None => break,
            },
            b'#' if (k == 0 || b[k - 1] == b' ') && b.get(k + 1).is_none_or(|&n| n == b' ') => {
                break;
            }
            b'(' | b'[' | b'{' => delta += 1,
            b')' | b']' | b'}' => delta -= 1,
            _ => {}
        }
        k += 1;
    }
    delta
}

#[cfg(test)]
mod tests {
    use super::super::labels::unit_labels;
    use super::super::outline::outline;
    use super::*;

    fn named(src: &str) -> Vec<(Range<usize>, String)> {
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        statements(&lines, &o, &unit_labels(&lines, &o))
            .into_iter()
            .map(|s| (s.range, s.label))
            .collect()
    }

    #[test]
    fn array_fields_and_fortran_declarations_are_named_by_their_name() {
        let cs = "class CsvParser\n{\n    private readonly char[] readerBuffer;\n    private string[] record;\n    static char buf[64];\n}\n";
        let got: Vec<String> = named(cs).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, ["readerBuffer", "record", "buf"]);
        assert_eq!(
            statement_label("integer, parameter, private :: TICKS = int64").as_deref(),
            Some("TICKS")
        );
        assert_eq!(statement_label("_sql TEXT;").as_deref(), Some("_sql"));
        assert_eq!(statement_label("END IF;"), None);
    }

    #[test]
    fn javascript_constants_with_their_comments_and_continuations() {
        let src = "const a = require('a');\n\n// Count the tokens.\nconst PATs = Object.keys(process.env).filter((key) =>\n  /PAT_\\d*$/.exec(key),\n).length;\nconst RETRIES = PATs;\n\nfunction f() {\n  return 1;\n}\n";
        assert_eq!(
            named(src),
            vec![
                (2..6, "const PATs".to_string()),
                (6..7, "const RETRIES".to_string())
            ]
        );
    }

    #[test]
    fn python_module_assignments_and_defs_in_unnamed_blocks() {
        let src = "import sys\n\nDEFAULT_LIMITS = Limits(soft=10,\n    hard=100)\n\nif sys.version_info < (3, 9):\n    def evaluate(ref):\n        return ref\nelse:\n    def evaluate(ref):\n        return ref.x\n\ndef main():\n    x = 1\n";
        let got = named(src);
        assert_eq!(got[0], (2..4, "DEFAULT_LIMITS".to_string()));
        assert!(got.contains(&(6..8, "def evaluate".to_string())), "{got:?}");
        assert!(
            got.contains(&(9..11, "def evaluate".to_string())),
            "{got:?}"
        );
        // A function's own body is the function's: none of its assignments is named.
        assert!(!got.iter().any(|(_, l)| l == "x"), "{got:?}");
    }

    #[test]
    fn c_globals_defines_fields_and_go_groups() {
        let src = "#include <stdio.h>\n\n#define IS_TRANSIENT(e) \\\n  ((e) == EAGAIN)\nstatic char buf[MAXPATHLEN + 1];\nint parse(const char *s);\n\nint main(void) {\n  return 0;\n}\n";
        assert_eq!(
            named(src),
            vec![
                (2..4, "#define IS_TRANSIENT".to_string()),
                (4..5, "buf".to_string()),
                (5..6, "parse()".to_string()),
            ]
        );
        let go = "package p\n\nconst (\n\t// baseDelay is the first wait.\n\tbaseDelay = 1.0 * time.Second\n\tfactor = 1.6\n)\n\nfunc f() {\n}\n";
        assert_eq!(
            named(go),
            vec![
                (3..5, "baseDelay".to_string()),
                (5..6, "factor".to_string())
            ]
        );
        let java = "class A {\n    private final Cache cache;\n    private static final int MAX = 5;\n\n    void run() {\n        cache.clear();\n    }\n}\n";
        assert_eq!(
            named(java),
            vec![(1..2, "cache".to_string()), (2..3, "MAX".to_string())]
        );
    }

    proptest::proptest! {
        /// Whatever the text, statements come in line order, never overlap, stay inside the
        /// text, hold the line naming them, and carry a label.
        #[test]
        fn statements_are_ordered_disjoint_and_inside(
            lines in proptest::collection::vec(
                proptest::sample::select(vec![
                    "const A = f(", "  x,", ")", "let b = {", "}", "#define M(a) \\", "  (a)",
                    "static int n;", "def f():", "    return 1", "if x:", "    def g():",
                    "        pass", "class C {", "  private int k;", "  void m() {", "  }",
                    "// note", "/* a", " */", "\"unterminated", "`tpl", "end`", "", "  ",
                    "const (", "\tv = 1", "end", "function M.f(x)", "local n = #t",
                ]),
                0..40,
            ),
        ) {
            let o = super::super::outline::outline(&lines);
            let found = statements(&lines, &o, &super::super::labels::unit_labels(&lines, &o));
            let mut end = 0;
            for s in &found {
                proptest::prop_assert!(s.range.start >= end, "{found:?}");
                proptest::prop_assert!(s.range.contains(&s.line), "{found:?}");
                proptest::prop_assert!(s.range.end <= lines.len(), "{found:?}");
                proptest::prop_assert!(!s.label.is_empty());
                end = s.range.end;
            }
        }
    }

    #[test]
    fn type_aliases_keep_their_keyword_and_assignments_their_name() {
        for (t, label) in [
            ("export type Options = {", Some("type Options")),
            ("val indent = config.indent(", Some("val indent")),
            ("let mut total = sum(", Some("let total")),
            ("let rec helper_2 x acc =", Some("let helper_2")),
            ("let (a, b) = pair", None),
        ] {
            assert_eq!(statement_label(t).as_deref(), label, "{t}");
        }
    }

    #[test]
    fn calls_and_control_statements_name_nothing() {
        let src = "app.use(cors());\nsetup(config);\nif (x) y = 1;\nreturn a;\nmodule.exports = router;\n";
        assert_eq!(named(src), vec![(4..5, "exports".to_string())]);
    }
}
