//! Outline of indentation languages: a statement ending with `:` (or with a lone `=` followed by
//! deeper lines: Nim's `proc f() =`) opens a block made of the following lines indented deeper;
//! `class` blocks are containers, other blocks are units. F# and OCaml (the offside rule): a
//! `let`, `member` or `type` line ending with `=` opens the deeper lines after it, and a `type`
//! or `module` whose lines are such definitions is a container. The same walk serves languages whose
//! `def`/`class`/`module` blocks close with an `end` at the opener's indentation (Ruby): that
//! line is the block's closing line.
//!
//! Owns walking indentation into units and containers. It must never judge relevance.

use super::super::draft::{is_blank, trimmed};
use super::indent::PyLine;
use super::line_kinds::{
    first_keyword, is_attribute, is_end_closer, is_import, is_ml_definition, is_ml_opener,
};
use super::outline::{MAX_NESTING, Outline, Role, Unit, attach_preamble};

/// Outline of indentation languages.
pub(super) struct Indent<'a> {
    /// The text's lines.
    pub(super) lines: &'a [&'a str],
    /// Their scan (indentation, strings, comments, openers in `colon`).
    pub(super) s: &'a [PyLine],
    /// Blocks close with an `end` line at the opener's indentation (Ruby): it belongs to them.
    pub(super) end_closes: bool,
    /// F# or OCaml ([`is_ml_opener`] lines outnumber the other openers): an ML definition
    /// opens with its `=` or its `with`, and a `type` or `module` whose members are definitions
    /// is a container.
    pub(super) offside: bool,
}

impl Indent<'_> {
    /// Whether the first line of code after `last` (before `hi`) is indented deeper than line
    /// `first`, where the statement starts: a definition ending with `=` has its body there
    /// (Nim's `proc f() =`).
    fn deeper_after(&self, first: usize, last: usize, hi: usize) -> bool {
        (last + 1..hi)
            .find(|&j| !is_blank(self.lines[j]) && !self.s[j].comment && !self.s[j].in_string)
            .is_some_and(|j| self.s[j].indent > self.s[first].indent)
    }

    /// Whether the block `lo..hi` holds ML definitions ([`is_ml_definition`]) at its own
    /// indentation (a type's `member`s, a module's `let`s), so it is a container, not a union's
    /// cases or a record's fields.
    fn holds_definitions(&self, lo: usize, hi: usize) -> bool {
        let code = |j: &usize| {
            !is_blank(self.lines[*j])
                && !self.s[*j].comment
                && !self.s[*j].in_string
                && !self.s[*j].cont
        };
        let Some(first) = (lo..hi).find(code) else {
            return false;
        };
        let indent = self.s[first].indent;
        (first..hi)
            .filter(code)
            .any(|j| self.s[j].indent == indent && is_ml_definition(trimmed(self.lines[j])))
    }

    /// Outlines the statements of lines `lo..hi` (one indentation level), `nest` classes deep (past
    /// [`MAX_NESTING`], a class is outlined as a plain definition).
    pub(super) fn level(&self, o: &mut Outline, lo: usize, hi: usize, nest: usize) {
        let mut i = lo;
        while i < hi {
            let s = self.s[i];
            if o.roles[i] != Role::Loose || s.in_string || s.cont || s.comment {
                i += 1;
                continue;
            }
            let mut last = i;
            while last + 1 < hi && (self.s[last + 1].cont || self.s[last + 1].in_string) {
                last += 1;
            }
            let t = trimmed(self.lines[i]);
            // F#'s `let f x = seq {` / `member _.Run() = task {`: the definition's body is the
            // computation expression its first line opens, through the bracket's close.
            let ml_bracket = self.offside
                && last > i
                && is_ml_definition(t)
                && (t.ends_with('{') || t.ends_with('[') || t.ends_with("[|"));
            let last = if ml_bracket { i } else { last };
            // Python's opener ends its last line (`def f(a,\n      b):`); a block that `end`
            // closes is opened by its first (`function f(a,\n b)`, Ruby's and Lua's alike); an
            // ML definition by its `=` or a type's `with`, with deeper lines after it.
            let opens = ml_bracket
                || self.s[last].colon
                || (self.end_closes && self.s[i].colon)
                || (!self.end_closes && self.s[last].equals && self.deeper_after(i, last, hi))
                || (self.offside
                    && is_ml_opener(trimmed(self.lines[last]))
                    && self.deeper_after(i, last, hi));
            if !opens {
                if is_attribute(t) {
                    o.roles[i..=last].fill(Role::Attr);
                } else if is_import(t) {
                    o.roles[i..=last].fill(Role::Import);
                }
                i = last + 1;
                continue;
            }
            let mut end = last + 1;
            while end < hi {
                let e = self.s[end];
                let blank = is_blank(self.lines[end]);
                // Comments do not end a block (Python ignores their indentation).
                if !blank && !e.comment && !e.in_string && !e.cont && e.indent <= s.indent {
                    break;
                }
                end += 1;
            }
            // Trailing blank lines and outdented comments belong to what follows.
            while end > last + 1 {
                let e = self.s[end - 1];
                if !(is_blank(self.lines[end - 1]) || (e.comment && e.indent <= s.indent)) {
                    break;
                }
                end -= 1;
            }
            // `end` at the opener's indentation closes the block (Ruby).
            let close = (self.end_closes
                && end < hi
                && self.s[end].indent == s.indent
                && is_end_closer(trimmed(self.lines[end])))
            .then_some(end);
            let inner_end = end;
            let end = close.map_or(end, |c| c + 1);
            let keyword = first_keyword(t);
            if (keyword == "class"
                || (self.end_closes
                    && matches!(keyword, "module" | "defmodule" | "defprotocol" | "defimpl"))
                || (self.offside
                    && matches!(keyword, "type" | "module" | "interface")
                    && self.holds_definitions(last + 1, inner_end)))
                && nest < MAX_NESTING
            {
                o.roles[i..=last].fill(Role::Sig);
                attach_preamble(self.lines, |k| self.s[k].comment, &mut o.roles, i, lo, None);
                if let Some(c) = close {
                    o.roles[c] = Role::Close;
                }
                o.containers.push(i..end);
                self.level(o, last + 1, inner_end, nest + 1);
            } else {
                let id = o.units.len() as u32;
                let pre = attach_preamble(
                    self.lines,
                    |k| self.s[k].comment,
                    &mut o.roles,
                    i,
                    lo,
                    Some(id),
                );
                o.roles[i..=last].fill(Role::Sig);
                o.roles[last + 1..end]
                    .iter_mut()
                    .filter(|r| **r == Role::Loose || **r == Role::Blank)
                    .for_each(|r| *r = Role::Body(id));
                o.units.push(Unit {
                    pre: pre..i,
                    sig: i..last + 1,
                    body: last + 1..end,
                    close,
                });
            }
            i = end;
        }
    }
}
