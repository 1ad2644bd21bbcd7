//! Outline of brace languages: definitions are blocks opened at the depth of their container
//! (the file, an `impl`, a `class`, a `mod`, ...) and closed when the depth comes back.
//!
//! Owns walking brace depths into units and containers. It must never judge relevance, and never
//! panic on unbalanced braces (a block that never closes runs to the end of its container).

use super::outline::{
    Kind, MAX_SIG_LINES, Outline, Role, Unit, attach_preamble, classify, is_attribute,
    is_declaration, is_import,
};
use super::scan::LineScan;

/// Outline of brace languages.
pub(super) struct Braces<'a> {
    pub(super) lines: &'a [&'a str],
    pub(super) s: &'a [LineScan],
}

impl Braces<'_> {
    /// Outlines lines `lo..hi` whose depth is `d` (the inside of a container, or the file).
    pub(super) fn level(&self, o: &mut Outline, lo: usize, hi: usize, d: i32) {
        let mut i = lo;
        while i < hi {
            let s = self.s[i];
            if o.roles[i] != Role::Loose {
                i += 1;
                continue;
            }
            let t = self.lines[i].trim();
            let opens = s.before == d && s.after > d && s.low >= d && !s.in_string && !s.comment;
            if !opens {
                if !s.comment && !s.in_string && s.before == d {
                    if is_attribute(t) {
                        o.roles[i] = Role::Attr;
                    } else if is_import(t) {
                        o.roles[i] = Role::Import;
                    } else if is_declaration(t) && t.ends_with(';') {
                        o.roles[i] = Role::Sig;
                    }
                }
                i += 1;
                continue;
            }
            let close = (i + 1..hi).find(|&j| self.s[j].after <= d);
            let end = close.map_or(hi, |j| j + 1);
            let start = self.sig_start(o, i, lo);
            let kind = classify(self.lines[start]);
            match kind {
                Kind::Import => o.roles[start..end].fill(Role::Import),
                Kind::Container => {
                    o.roles[start..=i].fill(Role::Sig);
                    if let Some(j) = close {
                        o.roles[j] = Role::Close;
                    }
                    attach_preamble(
                        self.lines,
                        |k| self.s[k].comment,
                        &mut o.roles,
                        start,
                        lo,
                        None,
                    );
                    o.containers.push(start..end);
                    self.level(o, i + 1, close.unwrap_or(hi), d + 1);
                }
                Kind::Unit => {
                    let id = o.units.len() as u32;
                    let pre = attach_preamble(
                        self.lines,
                        |k| self.s[k].comment,
                        &mut o.roles,
                        start,
                        lo,
                        Some(id),
                    );
                    o.roles[start..=i].fill(Role::Sig);
                    // The closing line goes with the body: a removed body takes its brace along,
                    // so that one marker covers it and the next definition's doc comment.
                    let body = i + 1..end;
                    o.roles[body.clone()].fill(Role::Body(id));
                    o.units.push(Unit {
                        pre: pre..start,
                        sig: start..i + 1,
                        body,
                        close,
                    });
                }
            }
            i = end;
        }
    }

    /// First line of the signature whose body opens on line `i`.
    fn sig_start(&self, o: &Outline, i: usize, lo: usize) -> usize {
        let mut k = i;
        while k > lo && i - k < MAX_SIG_LINES && o.roles[k - 1] == Role::Loose {
            let t = self.lines[k - 1].trim();
            let s = self.s[k - 1];
            if s.comment || s.in_string || is_attribute(t) || t.ends_with([';', '}', '{']) {
                break;
            }
            k -= 1;
        }
        k
    }
}
