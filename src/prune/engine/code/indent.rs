//! Lexical scan of indentation languages (Python and the like): indentation, statement
//! continuation, triple-quoted strings, and whether a statement opens a block (ends with `:`, or
//! with a lone `=` as Nim's definitions do).
//!
//! Owns the per-line facts the indentation outline needs. It must never parse expressions:
//! strings and brackets are tracked only to know where statements end.

use super::super::draft::{trimmed, trimmed_start};
use super::skip::skip_plain;

/// What the scanner learned about one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PyLine {
    /// Leading whitespace width (a tab counts 4).
    pub(crate) indent: usize,
    /// The line continues the previous statement (open bracket or trailing backslash).
    pub(crate) cont: bool,
    /// The line starts inside a triple-quoted string.
    pub(crate) in_string: bool,
    /// The line holds only a `#` comment.
    pub(crate) comment: bool,
    /// The code on this line (outside strings and comments) ends with `:`.
    pub(crate) colon: bool,
    /// The code on this line ends with a lone `=` outside brackets (not `==`, `<=`, `+=`, ...):
    /// a definition whose body follows, indented (Nim's `proc f() =`). Never in Python, where
    /// such a line is a syntax error.
    pub(crate) equals: bool,
}

/// The bytes that can change the scanner's state in code: a comment, quotes, brackets.
const PY_SPECIALS: [u8; 9] = [b'#', b'"', b'\'', b'(', b'[', b'{', b')', b']', b'}'];

/// Scans every line, carrying triple-quoted strings and bracket depth across lines.
pub(crate) fn scan(lines: &[&str]) -> Vec<PyLine> {
    scan_with::<true>(lines)
}

/// [`scan`]; with `SKIP`, runs of plain code are skipped a word at a time and the inside of a
/// triple-quoted string up to its next backslash or quote at once (the same result as byte by
/// byte, which is what `SKIP = false` does: the reference a property test compares with).
fn scan_with<const SKIP: bool>(lines: &[&str]) -> Vec<PyLine> {
    let mut triple: Option<u8> = None;
    let mut brackets = 0i32;
    let mut backslash = false;
    lines
        .iter()
        .map(|line| {
            let b = line.as_bytes();
            let indent = b
                .iter()
                .take_while(|c| **c == b' ' || **c == b'\t')
                .map(|c| if *c == b'\t' { 4 } else { 1 })
                .sum();
            if triple.is_none() && starts_definition(line) {
                // No bracket is open across a definition: one left open before it was a
                // bracket the scan misread (inside a Ruby regex literal, `/(?:;#/`, whose `#`
                // reads as a comment), and would make the rest of the file one statement.
                brackets = 0;
                backslash = false;
            }
            let mut out = PyLine {
                indent,
                cont: brackets > 0 || backslash,
                in_string: triple.is_some(),
                // `#` (Python, Ruby, Elixir), `--` (Lua) or `//` (F#; never code at the start of
                // a Python line).
                comment: triple.is_none() && {
                    let t = trimmed_start(line);
                    t.starts_with('#') || t.starts_with("--") || t.starts_with("//")
                },
                colon: false,
                equals: false,
            };
            let mut last = 0u8;
            // Where `last` is, to tell a lone `=` from `==`, `<=`, `+=`.
            let mut last_at = 0usize;
            let mut i = 0;
            while i < b.len() {
                if let Some(q) = triple {
                    if SKIP {
                        match memchr::memchr2(b'\\', q, &b[i..]) {
                            Some(k) => i += k,
                            None => break,
                        }
                    }
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                        triple = None;
                        last = q;
                        i += 3;
                        continue;
                    }
                    i += 1;
                    continue;
                }
                if SKIP {
                    let plain = skip_plain(b, i, &PY_SPECIALS);
                    if plain > i {
                        if let Some(k) = b[i..plain].iter().rposition(|c| !c.is_ascii_whitespace())
                        {
                            last = b[i + k];
                            last_at = i + k;
                        }
                        i = plain;
                        if i == b.len() {
                            break;
                        }
                    }
                }
                match b[i] {
                    // Not after a word or a bracket: Lua's length operator (`s:sub(#base)`).
                    b'#' if i == 0 || b[i - 1].is_ascii_whitespace() => break,
                    // An F# or OCaml type variable (`GetService<'T>()`), no quote.
                    b'\'' if is_type_variable(b, i) => {
                        last = b'\'';
                        last_at = i;
                    }
                    q @ (b'"' | b'\'') => {
                        if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                            triple = Some(q);
                            i += 3;
                            continue;
                        }
                        i = close_quote(b, i, q);
                        last = q;
                        last_at = i;
                    }
                    b'(' | b'[' | b'{' => brackets += 1,
                    b')' | b']' | b'}' => brackets = (brackets - 1).max(0),
                    c if !c.is_ascii_whitespace() => {
                        last = c;
                        last_at = i;
                    }
                    _ => {}
                }
                i += 1;
            }
            backslash = triple.is_none() && trimmed(line).ends_with('\\');
            out.colon = triple.is_none() && brackets == 0 && last == b':';
            out.equals = triple.is_none() && brackets == 0 && is_lone_equals(b, last_at);
            out
        })
        .collect()
}

/// True when `b[at]` is a lone `=`: an assignment or a definition's, not part of `==`, `<=`,
/// `+=`, `:=` or another operator ending with `=`.
pub(super) fn is_lone_equals(b: &[u8], at: usize) -> bool {
    b.get(at) == Some(&b'=') && (at == 0 || !b"=!<>:+-*/%&|^~.".contains(&b[at - 1]))
}

/// True when the `'` at `b[i]` starts an ML type variable in a type's arguments: right after `<`
/// and followed by a name that ends at `>` or `,` (`Option<'T>`, `Map<'K, 'V>`), where a quote
/// would have closed (`x<'a'`, Ruby's `<<'EOF'`).
fn is_type_variable(b: &[u8], i: usize) -> bool {
    if i == 0 || b[i - 1] != b'<' || !b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let end = b[i + 1..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .map_or(b.len(), |k| i + 1 + k);
    matches!(b.get(end), Some(b'>' | b','))
}

/// The line starts a `def`, `class` or `module` (a decorator's target, a Ruby method): no
/// expression continues into it.
fn starts_definition(line: &str) -> bool {
    let t = trimmed_start(line);
    let t = t.strip_prefix("async ").unwrap_or(t);
    [
        "def ",
        "class ",
        "module ",
        "defp ",
        "defmodule ",
        "function ",
        "local function ",
    ]
    .iter()
    .any(|k| t.starts_with(k))
}

/// Index of the quote closing the one-line string opened at `i` (end of line if unclosed).
fn close_quote(b: &[u8], i: usize, q: u8) -> usize {
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            c if c == q => return k,
            _ => k += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_openers_and_continuations() {
        let lines = [
            "def f(a,",
            "      b):",
            "    x = {'a': 1}  # c:",
            "    return x",
        ];
        let s = scan(&lines);
        assert!(!s[0].colon && s[1].cont && s[1].colon);
        assert!(!s[2].colon && !s[2].cont);
        assert_eq!(s[3].indent, 4);
    }

    #[test]
    fn a_definition_continues_no_bracket_left_open() {
        // sinatra's base.rb: a regex literal's `#` cut its line before the parens it closed.
        let lines = [
            "  HEADER_VALUE = /(?:(?:\\w+|\\*)\\/(?:\\w+)*)\\s*(?:;#/",
            "  def accept",
            "    @env['x']",
            "  end",
        ];
        let s = scan(&lines);
        assert!(!s[1].cont && !s[2].cont);
        let python = ["x = f(", "    def_value,", ")"];
        assert!(scan(&python)[1].cont);
    }

    #[test]
    fn triple_quoted_strings_span_lines() {
        let lines = [
            "def f():",
            "    \"\"\"Doc:",
            "not code:",
            "    \"\"\"",
            "    pass",
        ];
        let s = scan(&lines);
        assert!(s[2].in_string && s[3].in_string && !s[4].in_string);
        assert!(!s[1].colon && !s[2].colon);
    }

    #[test]
    fn comments_and_strings_do_not_open_blocks() {
        let s = scan(&["# note:", "x = 'a:'", "y = \"#:\""]);
        assert!(s[0].comment && !s[0].colon);
        assert!(!s[1].colon && !s[2].colon);
    }

    proptest::proptest! {
        /// Skipping plain code a word at a time and the inside of a triple-quoted string up to its
        /// next backslash or quote finds what the byte-by-byte scan finds, on every line.
        #[test]
        fn skipping_changes_no_line(
            lines in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::prop_oneof![
                        // What the scanner looks at...
                        1 => proptest::sample::select(vec![
                            "#", "\"", "'", "\"\"\"", "'''", "(", "[", "{", ")", "]", "}", "\\",
                        ]),
                        // ...and, three times as often, plain code it may skip (with the `:`
                        // ending a block opener, which must be the last byte it remembers).
                        3 => proptest::sample::select(vec![
                            ":", " ", "\t", "\x0c", "a", "def", "é", "x = 1", "abcdefghij",
                        ]),
                    ],
                    0..24,
                ),
                0..12,
            ),
        ) {
            let lines: Vec<String> = lines.into_iter().map(|parts| parts.concat()).collect();
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(scan_with::<true>(&lines), scan_with::<false>(&lines));
        }
    }

    #[test]
    fn backslash_continues() {
        let s = scan(&["if a and \\", "   b:", "    pass"]);
        assert!(s[1].cont && s[1].colon && !s[2].cont);
    }
}
