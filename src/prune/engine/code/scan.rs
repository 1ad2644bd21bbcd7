//! Lexical scan of brace languages (Rust, C family, Java, JS/TS, Go, ...): brace depth at each
//! line, and whether a line is a comment, a doc comment, or the continuation of a string.
//!
//! Owns skipping strings, character literals and comments well enough to count braces. It must
//! never try to parse a language: unknown syntax degrades to approximate depths, never to a panic.

use super::skip::skip_plain;
use crate::prune::engine::draft::trimmed_start;

/// What the scanner learned about one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LineScan {
    /// Brace depth at the start of the line.
    pub(crate) before: i32,
    /// Brace depth at the end of the line.
    pub(crate) after: i32,
    /// Lowest depth reached inside the line (below `before` when the line closes a block first).
    pub(crate) low: i32,
    /// The line starts as a comment (`//`, `/*`) or inside a block comment; code may follow the
    /// comment's end on it (`*/ f();`). Never for a line that starts inside a string.
    pub(crate) comment: bool,
    /// The line starts inside a block comment (it continues one, it does not open one).
    pub(crate) in_comment: bool,
    /// The line is (part of) a doc comment: `///`, `//!`, `/** */`, `/*! */`.
    pub(crate) doc: bool,
    /// The line starts inside a string literal that began on an earlier line.
    pub(crate) in_string: bool,
}

/// Where the scanner is at the end of a line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// In code.
    Code,
    /// Inside a block comment.
    Block {
        /// A doc comment (`/**`, `/*!`).
        doc: bool,
    },
    /// Inside a string.
    Str,
    /// Inside a raw string (`r#"…"#`).
    Raw {
        /// The `#`s that close it.
        hashes: usize,
    },
    /// Inside a template literal.
    Template,
}

/// Scans every line, carrying comment and string state across lines.
pub(crate) fn scan(lines: &[&str]) -> Vec<LineScan> {
    let mut state = State::Code;
    let mut depth = 0i32;
    // The marker that ends the heredoc the lines are in (`EOT` of PHP's `<<<EOT`).
    let mut heredoc: Option<&str> = None;
    lines
        .iter()
        .map(|line| {
            let trimmed = trimmed_start(line);
            if let Some(marker) = heredoc {
                // A heredoc's lines are its text, braces and quotes included, through the line
                // its marker starts (`EOT;`, `    HTML,`).
                let ends = trimmed.strip_prefix(marker).is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                if ends {
                    heredoc = None;
                }
                return LineScan {
                    before: depth,
                    after: depth,
                    low: depth,
                    in_string: true,
                    ..LineScan::default()
                };
            }
            let started = state;
            let mut out = LineScan {
                before: depth,
                in_string: matches!(started, State::Str | State::Raw { .. } | State::Template),
                ..LineScan::default()
            };
            // A line that starts inside a string is the string's, whatever it reads like.
            let code = started == State::Code;
            out.in_comment = matches!(started, State::Block { .. });
            out.comment = out.in_comment
                || (code && (trimmed.starts_with("//") || trimmed.starts_with("/*")));
            out.doc = matches!(started, State::Block { doc: true })
                || (code
                    && (trimmed.starts_with("///")
                        || trimmed.starts_with("//!")
                        || (trimmed.starts_with("/**") && !trimmed.starts_with("/**/"))
                        || trimmed.starts_with("/*!")));
            if matches!(started, State::Block { .. })
                && trimmed.starts_with('*')
                && !trimmed.starts_with("*/")
                && memchr::memmem::find(line.as_bytes(), b"*/").is_some()
            {
                // A `*`-led line inside a block comment: a `*/` before its end closes an
                // example's inner comment (`@Test fun foo() { /*...*/ }`, nested as Kotlin,
                // Swift, Scala and Rust allow); the comment itself ends only at a `*/` that
                // ends the line.
                if line.trim_end().ends_with("*/") {
                    state = State::Code;
                }
                out.after = depth;
                out.low = depth;
                return out;
            }
            if code && is_hash_comment(trimmed) {
                // A shell, Perl, R or PHP comment: its quotes and braces are prose.
                out.comment = true;
                out.after = depth;
                out.low = depth;
                return out;
            }
            let quotes_are_strings = single_quotes_pair::<true>(line.as_bytes(), state);
            let mut low = depth;
            state = scan_line::<true>(
                line.as_bytes(),
                state,
                quotes_are_strings,
                &mut depth,
                &mut low,
            );
            out.after = depth;
            out.low = low;
            if state == State::Code && !out.comment {
                heredoc = heredoc_marker(line);
            }
            out
        })
        .collect()
}

/// The marker of a heredoc a line opens: PHP's `<<<EOT`, `<<<'EOT'`, `<<< "EOT"`; a shell's,
/// Perl's or Ruby's `<<'EOF'`, `<<"EOF"`, `<<-EOF`, `<<~SQL`. Not a shift or a stream (`1 <<
/// SHIFT`, `std::cout << x`, `cout<<"Hi"`): a bare `<<` needs a quote, `-` or `~` right after it
/// and a marker in capitals.
fn heredoc_marker(line: &str) -> Option<&str> {
    let at = memchr::memmem::find(line.as_bytes(), b"<<")?;
    let rest = &line[at + 2..];
    let php = rest.starts_with('<');
    let rest = if let Some(r) = rest.strip_prefix('<') {
        r.trim_start()
    } else if let Some(r) = rest.strip_prefix(['-', '~']) {
        r
    } else if rest.starts_with(['\'', '"']) {
        rest
    } else {
        return None;
    };
    let quote = rest.chars().next().filter(|c| matches!(c, '\'' | '"'));
    let rest = quote.map_or(rest, |q| &rest[q.len_utf8()..]);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let marker = &rest[..end];
    // Erlang's binaries (`<<"GET">>`) close with `>>`.
    let closed = quote.is_none_or(|q| {
        rest[end..]
            .strip_prefix(q)
            .is_some_and(|after| !after.starts_with('>'))
    });
    let capitals = php || !marker.chars().any(|c| c.is_ascii_lowercase());
    (closed && capitals && marker.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .then_some(marker)
}

#[cfg(test)]
mod heredoc_tests {
    use super::*;

    #[test]
    fn heredoc_markers() {
        for (line, marker) in [
            ("    const T = <<<EOT", Some("EOT")),
            ("$x = <<<'SQL'", Some("SQL")),
            ("$x = <<< \"HTML\"", Some("HTML")),
            ("cat <<'EOF' > out.txt", Some("EOF")),
            ("cat <<-EOF", Some("EOF")),
            ("sql = <<~SQL", Some("SQL")),
            ("x = 1 << SHIFT;", None),
            ("std::cout << \"x\";", None),
            ("cout<<\"Hello\"<<endl;", None),
            ("a <<-b;", None),
            ("handle(<<\"GET\">>, Req) ->", None),
        ] {
            assert_eq!(heredoc_marker(line), marker, "{line}");
        }
    }

    #[test]
    fn a_heredoc_hides_its_braces() {
        let lines = [
            "class A",
            "{",
            "    const T = <<<EOT",
            "    Hello {name} {{",
            "    EOT;",
            "    function f() {",
            "    }",
            "}",
        ];
        let s = scan(&lines);
        assert!(s[3].in_string && s[4].in_string);
        assert_eq!((s[5].before, s[5].after), (1, 2));
        assert_eq!(s[7].after, 0);
    }
}

/// A line (trimmed at its start) that is a `#` comment: `# text`, `## text`, a lone `#`, a
/// shebang, R's `#' doc`; not a C preprocessor directive written with a space (`#  define`, `# if`), a Rust
/// attribute (`#[`, `#![`), a CSS selector or a private field (`#name`).
fn is_hash_comment(t: &str) -> bool {
    /// Preprocessor directives, which C lets follow `#` after spaces.
    const DIRECTIVES: &[&str] = &[
        "define", "undef", "include", "if", "ifdef", "ifndef", "elif", "else", "endif", "pragma",
        "error", "warning", "line", "import",
    ];
    let Some(rest) = t.strip_prefix('#') else {
        return false;
    };
    // A shebang; R's roxygen documentation (`#' @param df`).
    if rest.starts_with("!/") || rest == "'" || rest.starts_with("' ") {
        return true;
    }
    if !(rest.is_empty() || rest.starts_with([' ', '\t', '#'])) {
        return false;
    }
    let word = rest
        .trim_start_matches([' ', '\t'])
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    !DIRECTIVES.contains(&word)
}

/// Whether the `'` of this line (outside double-quoted strings and comments) come in pairs: then
/// they delimit strings or character literals; otherwise they are Rust lifetimes or apostrophes.
/// With `SKIP`, what cannot change the count is skipped ([`next_telling`]); without, every byte is
/// looked at (the reference the tests compare with).
fn single_quotes_pair<const SKIP: bool>(b: &[u8], start: State) -> bool {
    if memchr::memchr(b'\'', b).is_none() || quoted_strings_close(b, start) {
        return true;
    }
    let mut state = start;
    let mut count = 0;
    let mut i = 0;
    while i < b.len() {
        if SKIP {
            match next_telling(b, i, state) {
                Some(next) => i = next,
                None => break,
            }
        }
        match state {
            State::Code => match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => break,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    state = State::Block { doc: false };
                    i += 1;
                }
                b'"' => state = string_start(b, i),
                b'`' => state = State::Template,
                b'\'' => match char_literal_end(b, i) {
                    // `'"'`, `'{'`, `'\''`: a character literal, whatever the rest of the line.
                    Some(end) => {
                        count += 2;
                        i = end;
                    }
                    None if i == 0 || b[i - 1] != b'\\' => count += 1,
                    None => {}
                },
                _ => {}
            },
            _ => state = step_literal(b, &mut i, state),
        }
        i += 1;
    }
    count % 2 == 0
}

/// Whether reading every `'` of this line (outside double-quoted strings and comments) as
/// opening a string that the next unescaped `'` closes leaves none open: then they are strings
/// whatever they hold, a URL's `//` (`'file://'`) or a media range's `/*` (`'*/*'`) included,
/// which the pair count alone reads as a comment that hides the quote closing the string.
fn quoted_strings_close(b: &[u8], start: State) -> bool {
    let mut state = start;
    let mut i = 0;
    while i < b.len() {
        match state {
            State::Code => match b[i] {
                b'/' if matches!(b.get(i + 1), Some(b'/' | b'*')) => return true,
                b'"' => state = string_start(b, i),
                b'`' => state = State::Template,
                b'\'' => match char_literal_end(b, i) {
                    Some(end) => i = end,
                    None => {
                        let end = skip_single_quoted(b, i);
                        if end == i {
                            return false;
                        }
                        i = end;
                    }
                },
                _ => {}
            },
            _ => state = step_literal(b, &mut i, state),
        }
        i += 1;
    }
    true
}

/// Scans one line from `state`, updating `depth` and `low`; returns the state at the line's end.
/// With `SKIP`, what cannot change the state or depth is skipped ([`next_telling`]: plain code a
/// word at a time, the inside of strings and comments up to their next telling byte); without,
/// every byte is looked at (the reference the tests compare with).
fn scan_line<const SKIP: bool>(
    b: &[u8],
    mut state: State,
    quotes: bool,
    depth: &mut i32,
    low: &mut i32,
) -> State {
    let mut i = 0;
    while i < b.len() {
        if SKIP {
            match next_telling(b, i, state) {
                Some(next) => i = next,
                None => break,
            }
        }
        match state {
            State::Code => match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => return State::Code,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    let doc =
                        matches!(b.get(i + 2), Some(b'*' | b'!')) && b.get(i + 3) != Some(&b'/');
                    state = State::Block { doc };
                    i += 1;
                }
                b'"' => state = string_start(b, i),
                b'`' => state = State::Template,
                b'\'' => {
                    if let Some(end) = char_literal_end(b, i) {
                        i = end;
                    } else if quotes {
                        i = skip_single_quoted(b, i);
                    }
                }
                b'{' => *depth += 1,
                b'}' => {
                    *depth -= 1;
                    *low = (*low).min(*depth);
                }
                _ => {}
            },
            _ => state = step_literal(b, &mut i, state),
        }
        i += 1;
    }
    state
}

/// The first index from `i` whose byte can change `state` (or the depth): in code, past runs of
/// plain 8-byte words ([`skip_plain_code`]); in a string, the next backslash or closing quote; in
/// a block comment, the next `*`; in a raw string, the next `"`. `None` when no such byte is left
/// on the line. Every byte skipped would have left the state and depth as they were.
fn next_telling(b: &[u8], i: usize, state: State) -> Option<usize> {
    let rest = &b[i..];
    let found = match state {
        State::Code => {
            let next = skip_plain_code(b, i);
            return (next < b.len()).then_some(next);
        }
        State::Str => memchr::memchr2(b'\\', b'"', rest),
        State::Template => memchr::memchr2(b'\\', b'`', rest),
        State::Block { .. } => memchr::memchr(b'*', rest),
        State::Raw { .. } => memchr::memchr(b'"', rest),
    };
    found.map(|k| i + k)
}

/// The bytes that can change the scanner's state or depth in code: comments, quotes, braces.
const CODE_SPECIALS: [u8; 6] = [b'/', b'"', b'`', b'\'', b'{', b'}'];

/// The first index from `i` that is not inside a run of 8-byte words holding none of
/// [`CODE_SPECIALS`] (most of a line of code: indentation, identifiers, operators), so the
/// byte-wise scan starts there. Exact: a word is skipped only when it holds no special byte.
fn skip_plain_code(b: &[u8], i: usize) -> usize {
    skip_plain(b, i, &CODE_SPECIALS)
}

/// The index of the closing quote when a character literal starts at `b[i] == '\''`: one character
/// (`'"'`, `'{'`, `'é'`) or one escape (`'\''`, `'\\'`, `'\n'`, `'\x7f'`, `'\u{1F600}'`). A Rust
/// lifetime (`'de`, `'static`) is not one: its name is not followed by a quote.
fn char_literal_end(b: &[u8], i: usize) -> Option<usize> {
    let next = *b.get(i + 1)?;
    if next == b'\\' {
        // Escapes inside are skipped, so an escaped quote (`'\''`, `'don\'t'`) does not close it.
        let mut j = i + 1;
        while j < b.len().min(i + 14) {
            match b[j] {
                b'\\' => j += 2,
                b'\'' => return Some(j),
                _ => j += 1,
            }
        }
        return None;
    }
    if next == b'\'' {
        return None;
    }
    let len = match next {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
}

/// Advances inside a comment or string by one byte (or an escape); returns the new state.
fn step_literal(b: &[u8], i: &mut usize, state: State) -> State {
    match state {
        State::Block { .. } if b[*i] == b'*' && b.get(*i + 1) == Some(&b'/') => {
            *i += 1;
            State::Code
        }
        State::Str | State::Template if b[*i] == b'\\' => {
            *i += 1;
            state
        }
        State::Str if b[*i] == b'"' => State::Code,
        State::Template if b[*i] == b'`' => State::Code,
        State::Raw { hashes }
            if b[*i] == b'"'
                && b[*i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|c| **c == b'#')
                    .count()
                    == hashes =>
        {
            *i += hashes;
            State::Code
        }
        _ => state,
    }
}

/// The state entered at the `"` at `i`: a Rust raw string when preceded by `r`/`br` and hashes.
fn string_start(b: &[u8], i: usize) -> State {
    let mut k = i;
    while k > 0 && b[k - 1] == b'#' {
        k -= 1;
    }
    let hashes = i - k;
    let raw = k > 0
        && b[k - 1] == b'r'
        && (k < 2 || !b[k - 2].is_ascii_alphanumeric() || b[k - 2] == b'b');
    if raw {
        State::Raw { hashes }
    } else {
        State::Str
    }
}

/// Index of the closing `'` of the single-quoted literal opening at `i` (or `i` if unclosed).
fn skip_single_quoted(b: &[u8], i: usize) -> usize {
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'\'' => return k,
            _ => k += 1,
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depths(src: &str) -> Vec<(i32, i32)> {
        let lines: Vec<&str> = src.lines().collect();
        scan(&lines).iter().map(|s| (s.before, s.after)).collect()
    }

    #[test]
    fn hash_comments_hide_their_quotes_and_braces() {
        // A shell comment's lone `"` must not open a string that swallows the functions below.
        let src = "# it says \"no {\nstep() {\n  echo \"a\"\n}\n";
        assert_eq!(depths(src), vec![(0, 0), (0, 1), (1, 1), (1, 0)]);
        let lines: Vec<&str> = src.lines().collect();
        assert!(scan(&lines)[0].comment);
        for t in [
            "#",
            "## Usage",
            "#!/bin/sh",
            "#\tnote",
            "#' @param df a data frame",
        ] {
            assert!(is_hash_comment(t), "{t}");
        }
        for t in [
            "#include \"a.h\"",
            "#  define X \"{\"",
            "# if FOO",
            "#[derive(Debug)]",
            "#![allow(x)]",
            "#wrapper {",
            "#x = 1;",
        ] {
            assert!(!is_hash_comment(t), "{t}");
        }
    }

    #[test]
    fn comment_openers_inside_single_quoted_strings_are_the_strings() {
        // composer's Url.php: `'file://'` once hid the brace of its `if`, and every definition
        // after it was read one level too deep.
        let src = "function f($u) {\n    if (0 === strpos($u, 'file://')) {\n        return 1;\n    }\n    $h = ['Accept' => '*/*'];\n}\nfunction g() {\n}\n";
        assert_eq!(
            depths(src),
            [
                (0, 1),
                (1, 2),
                (2, 2),
                (2, 1),
                (1, 1),
                (1, 0),
                (0, 1),
                (1, 0)
            ]
        );
        // A lifetime beside an apostrophe in a comment is still no string.
        assert_eq!(depths("impl<'a> X<'a> { // don't\n}\n"), [(0, 1), (1, 0)]);
    }

    #[test]
    fn quote_characters_in_char_literals_open_no_string() {
        // serde_json's de.rs: `b'"' => {` once made the rest of the file one string.
        let src = "fn a<'de>(x: &'de u8) {\n    match c {\n        b'\"' => {\n            eat();\n        }\n        b'\\\\' | b'\\'' => {}\n    }\n}\nfn b() {\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let s = scan(&lines);
        assert!(s.iter().all(|l| !l.in_string), "{s:?}");
        assert_eq!(
            s.iter().map(|l| (l.before, l.after)).collect::<Vec<_>>(),
            [
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 3),
                (3, 2),
                (2, 2),
                (2, 1),
                (1, 0),
                (0, 1),
                (1, 0)
            ]
        );
    }

    #[test]
    fn escaped_quotes_inside_single_quoted_literals() {
        // Python: the `{` is inside the string, not a block.
        let d = depths("def f():\n    s = '\\\\n don\\'t {'\n    return s\n");
        assert!(d.iter().all(|&(b, a)| b == 0 && a == 0), "{d:?}");
        // Rust: escaped quote and backslash literals.
        let d = depths("fn a() {\n    let q = '\\''; let b = '\\\\';\n}\n");
        assert_eq!(d.last(), Some(&(1, 0)));
    }

    proptest::proptest! {
        /// Skipping what cannot change the state finds the states, depths and quote pairings the
        /// byte-by-byte scan finds, line after line.
        #[test]
        fn skipping_plain_code_changes_no_scan(
            lines in proptest::collection::vec("[ a-z0-9_#rb/*'\"`{}\\\\!é]{0,40}", 0..8)
        ) {
            let (mut fast, mut reference) = (State::Code, State::Code);
            let (mut d1, mut l1, mut d2, mut l2) = (0, 0, 0, 0);
            for line in &lines {
                let b = line.as_bytes();
                let quotes = single_quotes_pair::<true>(b, fast);
                proptest::prop_assert_eq!(quotes, single_quotes_pair::<false>(b, fast), "{:?}", line);
                fast = scan_line::<true>(b, fast, quotes, &mut d1, &mut l1);
                reference = scan_line::<false>(b, reference, quotes, &mut d2, &mut l2);
                proptest::prop_assert!(fast == reference && d1 == d2 && l1 == l2, "{line:?}");
            }
        }
    }

    #[test]
    fn skipping_plain_words_finds_every_special_byte() {
        let line =
            b"    let value = compute(alpha, beta) + gamma * delta; x{y}z /* c */ 'q' \"s\" `t`";
        for start in 0..line.len() {
            let skipped = skip_plain_code(line, start);
            assert!(skipped >= start && skipped <= line.len());
            assert!(
                !line[start..skipped]
                    .iter()
                    .any(|c| CODE_SPECIALS.contains(c)),
                "skipped a special byte from {start} to {skipped}"
            );
            // It stops at most 7 bytes before the next special byte (or the end).
            let next = line[start..]
                .iter()
                .position(|c| CODE_SPECIALS.contains(c))
                .map_or(line.len(), |p| start + p);
            assert!(
                next - skipped < 8 || skipped == next,
                "{start}: {skipped} vs {next}"
            );
        }
    }

    #[test]
    fn counts_braces_per_line() {
        let d = depths("fn a() {\n    if x {\n    }\n}\n");
        assert_eq!(d, [(0, 1), (1, 2), (2, 1), (1, 0)]);
    }

    #[test]
    fn ignores_braces_in_strings_chars_and_comments() {
        let src =
            "fn a() {\n let s = \"{\";\n let c = '{';\n // {\n /* { */\n let r = r#\"}\"#;\n}\n";
        assert_eq!(depths(src).last(), Some(&(1, 0)));
        assert!(
            depths(src)
                .iter()
                .skip(1)
                .take(5)
                .all(|&(b, a)| b == 1 && a == 1)
        );
    }

    #[test]
    fn lifetimes_do_not_hide_braces() {
        assert_eq!(depths("impl<'a> Foo<'a> {\n}\n"), [(0, 1), (1, 0)]);
        assert_eq!(depths("fn f(x: &'a str) {\n}\n"), [(0, 1), (1, 0)]);
        assert_eq!(
            depths("fn f<'a, 'b>(x: &'a str) -> &'b str {\n}\n"),
            [(0, 1), (1, 0)]
        );
    }

    #[test]
    fn multi_line_strings_and_comments_carry_over() {
        let lines = [
            "let s = \"a {",
            "b }\";",
            "/** doc {",
            " * more",
            " */",
            "x {",
        ];
        let s = scan(&lines);
        assert!(s[1].in_string && !s[0].in_string);
        assert!(s[3].comment && s[3].doc);
        assert_eq!(s[5].after, 1);
        assert!(s.iter().take(5).all(|l| l.after == 0));
    }

    #[test]
    fn doc_and_plain_comments() {
        let s = scan(&["/// doc", "// plain", "code();"]);
        assert!(s[0].doc && s[0].comment);
        assert!(!s[1].doc && s[1].comment);
        assert!(!s[2].comment);
    }

    #[test]
    fn closing_then_opening_records_low() {
        let s = scan(&["if a {", "} else {", "}"]);
        assert_eq!((s[1].before, s[1].low, s[1].after), (1, 0, 1));
    }
}
