//! Outline of Ada: a `procedure`, `function`, `package body`, `task
//! body` or `protected body` whose header ends with `is` opens a block that `end Name;` closes.
//! A package is a container of what it holds; a subprogram is one definition, its declarative
//! part, `begin` and nested subprograms included. Keywords are matched in any case.
//!
//! Owns walking Ada's named blocks into units and containers. It must never judge relevance.

use super::super::draft::{is_blank, trimmed};
use super::outline::{MAX_NESTING, Outline, Role, Unit, attach_preamble};

/// Keywords that open a named block when the header ends with `is`.
const OPENERS: &[&str] = &[
    "procedure",
    "function",
    "package",
    "task",
    "protected",
    "entry",
];

/// Words that an Ada `end` closes without a name: `end if;`, `end loop;`, `end record;`.
const UNNAMED_ENDS: &[&str] = &["if", "loop", "case", "record", "select", "return", "do"];

/// A header's lines are looked for its `is` this far at most (a parameter list over many lines).
const MAX_HEADER_LINES: usize = 30;

/// The code of a line: trimmed, without its `--` comment (outside a string).
fn code(line: &str) -> &str {
    let t = trimmed(line);
    let mut in_string = false;
    let b = t.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'"' => in_string = !in_string,
            b'-' if !in_string && b.get(i + 1) == Some(&b'-') => return t[..i].trim_end(),
            _ => {}
        }
    }
    t
}

/// True when the first word of `t` (a line's code) is `word` in any case.
fn first_word_is(t: &str, word: &str) -> bool {
    t.split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
}

/// True when `t` (a line's code) closes a named block: `end Parser;`, `end Alire.Index;`.
pub(super) fn is_named_end(t: &str) -> bool {
    if !t.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("end ")) {
        return false;
    }
    let Some(name) = t[4..].trim().strip_suffix(';') else {
        return false;
    };
    let name = name.trim();
    !name.is_empty()
        && !UNNAMED_ENDS.contains(&name.to_ascii_lowercase().as_str())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"')
}

/// True when `t` (a trimmed line) starts with an opener keyword, after `overriding`.
pub(super) fn starts_opener(t: &str) -> bool {
    let mut words = t.split_whitespace();
    let mut word = words.next().unwrap_or("");
    if word.eq_ignore_ascii_case("not") {
        word = words.next().unwrap_or("");
    }
    if word.eq_ignore_ascii_case("overriding") {
        word = words.next().unwrap_or("");
    }
    OPENERS.iter().any(|k| word.eq_ignore_ascii_case(k))
}

/// An Ada header read from its opener keyword (after `overriding` or `not overriding`): the
/// keyword with the `body` or `type` written after it, and the name it defines as written, up to a
/// space, `(` or `;`. `procedure Rebuild (A : String) is` -> (`procedure`, `Rebuild`),
/// `package body Alire.Index is` -> (`package body`, `Alire.Index`), `function "+" (L, R : T)` ->
/// (`function`, `"+"`). `None` when `t` opens with no opener keyword or names nothing.
fn parse_header(t: &str) -> Option<(&str, &str)> {
    let mut rest = t.trim_start();
    for prefix in ["not overriding ", "overriding "] {
        if rest
            .get(..prefix.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(prefix))
        {
            rest = rest[prefix.len()..].trim_start();
        }
    }
    let keyword_end = rest.find(char::is_whitespace)?;
    if !OPENERS
        .iter()
        .any(|k| rest[..keyword_end].eq_ignore_ascii_case(k))
    {
        return None;
    }
    let mut kind = &rest[..keyword_end];
    let mut after = rest[keyword_end..].trim_start();
    for second in ["body ", "type "] {
        if after
            .get(..second.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(second))
        {
            kind = &rest[..rest.len() - after.len() + second.len() - 1];
            after = after[second.len()..].trim_start();
            break;
        }
    }
    let end = after
        .find(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .unwrap_or(after.len());
    (end > 0).then(|| (kind, &after[..end]))
}

/// The name a header defines, lowercased: what its `end Name;` must repeat.
fn defined(t: &str) -> Option<String> {
    parse_header(t).map(|(_, name)| name.to_ascii_lowercase())
}

/// The name an Ada header defines and the words before it, for the opener keywords other
/// languages do not share or use otherwise (`procedure`, `package ... is`, `package body`, `task
/// body`, `protected body`; `function` is every language's): `procedure Rebuild (A : String)
/// is` -> (`procedure`, `Rebuild`), `package body Alire.Index is` -> (`package body`,
/// `Alire.Index`). `None` for anything else (Java's `package com.acme;`, `protected void f()`).
pub(super) fn header_name(t: &str) -> Option<(&str, &str)> {
    let (kind, name) = parse_header(t)?;
    let keyword = kind.split_whitespace().next().unwrap_or(kind);
    let is = |k: &str| keyword.eq_ignore_ascii_case(k);
    let has_body =
        kind.len() > keyword.len() && kind[keyword.len()..].trim().eq_ignore_ascii_case("body");
    let line = t.trim_end();
    let ends_with_is = line
        .get(line.len().saturating_sub(3)..)
        .is_some_and(|e| e.eq_ignore_ascii_case(" is"));
    // Java's `package com.acme;` and `protected void run()` are no Ada headers; Ada's `task
    // type` and `protected type` are no definitions with a body of their own.
    let ada = if has_body {
        is("procedure") || is("package") || is("task") || is("protected")
    } else {
        is("procedure") || is("package") && ends_with_is
    };
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(name.len());
    (ada && end > 0).then(|| (kind, &name[..end]))
}

/// The walk over Ada's named blocks.
pub(super) struct Ada<'a> {
    /// The text's lines.
    pub(super) lines: &'a [&'a str],
}

impl Ada<'_> {
    /// The line of the header starting at `start` that ends with `is` (the block opens), or
    /// `None` when the header ends with `;` first (a declaration, `is new`, `is separate;`).
    fn header_end(&self, start: usize, hi: usize) -> Option<usize> {
        let mut depth = 0i32;
        for j in start..hi.min(start + MAX_HEADER_LINES) {
            let t = code(self.lines[j]);
            for c in t.bytes() {
                match c {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    b';' if depth <= 0 => return None,
                    _ => {}
                }
            }
            let lower = t.to_ascii_lowercase();
            if depth <= 0 && (lower == "is" || lower.ends_with(" is") || lower.ends_with(")is")) {
                return Some(j);
            }
        }
        None
    }

    /// The line closing the block named `name` opened at `start`: `end Name;` (any case), at
    /// the opener's indentation when one is.
    fn close(&self, start: usize, from: usize, hi: usize, name: &str) -> Option<usize> {
        let indent = |l: &str| l.len() - l.trim_start().len();
        let wanted = format!("end {name};");
        let mut found = None;
        for k in from..hi {
            let t = code(self.lines[k]);
            if t.len() == wanted.len() && t.eq_ignore_ascii_case(&wanted) {
                if indent(self.lines[k]) == indent(self.lines[start]) {
                    return Some(k);
                }
                found.get_or_insert(k);
            }
        }
        found
    }

    /// Outlines lines `lo..hi`, `nest` packages deep.
    pub(super) fn level(&self, o: &mut Outline, lo: usize, hi: usize, nest: usize) {
        let mut i = lo;
        while i < hi {
            let t = code(self.lines[i]);
            if o.roles[i] != Role::Loose || t.is_empty() || !starts_opener(t) {
                i += 1;
                continue;
            }
            let Some(last) = self.header_end(i, hi) else {
                i += 1;
                continue;
            };
            let Some(name) = defined(t) else {
                i += 1;
                continue;
            };
            let Some(close) = self.close(i, last + 1, hi, &name) else {
                i += 1;
                continue;
            };
            // `overriding` alone on the line above belongs to the header.
            let start = if i > lo
                && o.roles[i - 1] == Role::Loose
                && matches!(
                    code(self.lines[i - 1]).to_ascii_lowercase().as_str(),
                    "overriding" | "not overriding"
                ) {
                i - 1
            } else {
                i
            };
            let comment = |k: usize| trimmed(self.lines[k]).starts_with("--");
            if first_word_is(t, "package") && nest < MAX_NESTING {
                o.roles[start..=last].fill(Role::Sig);
                attach_preamble(self.lines, comment, &mut o.roles, start, lo, None);
                o.roles[close] = Role::Close;
                o.containers.push(start..close + 1);
                self.level(o, last + 1, close, nest + 1);
            } else {
                let id = o.units.len() as u32;
                let pre = attach_preamble(self.lines, comment, &mut o.roles, start, lo, Some(id));
                o.roles[start..=last].fill(Role::Sig);
                o.roles[last + 1..=close]
                    .iter_mut()
                    .filter(|r| matches!(r, Role::Loose | Role::Blank))
                    .for_each(|r| *r = Role::Body(id));
                o.units.push(Unit {
                    pre: pre..start,
                    sig: start..last + 1,
                    body: last + 1..close + 1,
                    close: Some(close),
                });
            }
            i = close + 1;
            while i < hi && is_blank(self.lines[i]) {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::labels::label;
    use super::super::outline::outline;
    use super::*;

    const BODY: &str = "with Ada.Text_IO;\n\npackage body Alr.Bootstrap is\n\n   Executable : constant String := \"alr\";\n\n   -- Rebuilds the binary.\n   procedure Rebuild (Alr_File : String := \"\";\n                      Force    : Boolean := False) is\n      use Ada.Directories;\n   begin\n      if Alr_File /= \"\" then\n         Delete_File (Alr_File);\n      end if;\n   end Rebuild;\n\n   overriding\n   function Is_Rolling (This : Session)\n     return Boolean\n   is\n      function Inner return Boolean is (True);\n   begin\n      return Inner;\n   end Is_Rolling;\n\n   procedure Interrupted;\n\nend Alr.Bootstrap;\n";

    #[test]
    fn a_package_body_holds_its_subprograms_closed_by_their_names() {
        let lines: Vec<&str> = BODY.lines().collect();
        let o = outline(&lines);
        let spans: Vec<_> = o
            .units
            .iter()
            .map(|u| (u.pre.clone(), u.sig.clone(), u.body.clone(), u.close))
            .collect();
        assert_eq!(
            spans,
            [
                (6..7, 7..9, 9..15, Some(14)),
                (16..16, 16..20, 20..24, Some(23)),
            ]
        );
        assert_eq!(o.containers, vec![2..28]);
        // The declaration `procedure Interrupted;` opens nothing.
        assert_eq!(o.roles[25], Role::Loose);
        assert_eq!(label(lines[7]).as_deref(), Some("procedure Rebuild"));
        assert_eq!(
            label(lines[2]).as_deref(),
            Some("package body Alr.Bootstrap")
        );
        assert_eq!(
            super::super::labels::defined_name(lines[7]),
            Some("Rebuild")
        );
    }

    #[test]
    fn other_languages_keep_their_words() {
        // `end if;` closes no named block, and Java's `package` and `protected` are no headers.
        assert!(!is_named_end("end if;") && is_named_end("end Alire.Index;"));
        assert_eq!(header_name("package com.acme.util;"), None);
        assert_eq!(header_name("protected void run() {"), None);
        assert_eq!(
            header_name("package Alire.Index is"),
            Some(("package", "Alire.Index"))
        );
        // A prefix's length that ends inside a character: no panic, no header.
        assert_eq!(header_name("overridingé x"), None);
        assert_eq!(
            header_name("package bodyé x is"),
            Some(("package", "bodyé"))
        );
    }
}
