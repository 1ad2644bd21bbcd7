//! Lexical scan of indentation languages (Python and the like): indentation, statement
//! continuation, triple-quoted strings, and whether a statement opens a block (ends with `:`).
//!
//! Owns the per-line facts the indentation outline needs. It must never parse expressions:
//! strings and brackets are tracked only to know where statements end.

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
}

/// Scans every line, carrying triple-quoted strings and bracket depth across lines.
pub(crate) fn scan(lines: &[&str]) -> Vec<PyLine> {
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
            let mut out = PyLine {
                indent,
                cont: brackets > 0 || backslash,
                in_string: triple.is_some(),
                comment: triple.is_none() && line.trim_start().starts_with('#'),
                colon: false,
            };
            let mut last = 0u8;
            let mut i = 0;
            while i < b.len() {
                if let Some(q) = triple {
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
                match b[i] {
                    b'#' => break,
                    q @ (b'"' | b'\'') => {
                        if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                            triple = Some(q);
                            i += 3;
                            continue;
                        }
                        i = close_quote(b, i, q);
                        last = q;
                    }
                    b'(' | b'[' | b'{' => brackets += 1,
                    b')' | b']' | b'}' => brackets = (brackets - 1).max(0),
                    c if !c.is_ascii_whitespace() => last = c,
                    _ => {}
                }
                i += 1;
            }
            backslash = triple.is_none() && line.trim_end().ends_with('\\');
            out.colon = triple.is_none() && brackets == 0 && last == b':';
            out
        })
        .collect()
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

    #[test]
    fn backslash_continues() {
        let s = scan(&["if a and \\", "   b:", "    pass"]);
        assert!(s[1].cont && s[1].colon && !s[2].cont);
    }
}
