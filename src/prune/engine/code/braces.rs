//! Outline of brace languages: definitions are blocks opened at the depth of their container
//! (the file, an `impl`, a `class`, a `mod`, ...) and closed when the depth comes back.
//!
//! Owns walking brace depths into units and containers. It must never judge relevance, and never
//! panic on unbalanced braces (a block that never closes runs to the end of its container).

use super::labels::label;
use super::line_kinds::{
    Kind, classify, first_keyword, is_attribute, is_declaration, is_import, skip_generics,
};
use super::outline::{MAX_NESTING, MAX_SIG_LINES, Outline, Role, Unit, attach_preamble};
use super::scan::LineScan;
use crate::prune::engine::draft::trimmed;
use std::borrow::Cow;
use std::ops::Range;

/// A definition body of at least this many lines... (150 before stop 46: a 146-line React
/// component holding its event handlers as `const handleX = (event) => {` stayed one
/// definition. 80: realistic dev +0.2 reduction at the same recall, multilang and issue reports
/// unchanged; test unchanged; holdout +0.5 recall.)
const BIG_BODY: usize = 80;
/// ...that opens at least this many functions of its own is outlined as a container.
const MIN_NESTED: usize = 3;
/// A signature whose parameter list is still open past [`MAX_SIG_LINES`] lines above its
/// opening line reaches up to this many lines for its first.
const MAX_PARAMETER_LINES: usize = 64;
/// A `struct` or `record` whose body opens at least this many named blocks (methods) is
/// outlined as a container, whatever its size.
const TYPE_METHODS: usize = 2;

/// A line that defines a function by an expression instead of a block: Kotlin's `fun f(x: Int) =
/// x + 1` (also over several lines, and `fun f(...)` whose body opens on a later line) and C#'s
/// expression-bodied members (`public int Count() => items.Count;`).
fn is_expression_definition(t: &str) -> bool {
    let keyword = first_keyword(t);
    if keyword == "fun" {
        return true;
    }
    // `) =>` after a member's type, name and parameters (`int Count() =>`): not a lambda passed
    // as an argument, nor a TypeScript function type (`onWarn?: (w: W) => void`).
    t.find(") =>").is_some_and(|k| {
        let head = &t[..k];
        let before_params = head.split('(').next().unwrap_or("");
        head.contains('(')
            && !head.contains('=')
            && !before_params.contains([':', '?'])
            && before_params.split_whitespace().count() >= 2
            && keyword != "return"
    })
}

/// Leading whitespace width of `line` (a tab counts 4).
fn indentation(line: &str) -> usize {
    line.bytes()
        .take_while(|c| *c == b' ' || *c == b'\t')
        .map(|c| if c == b'\t' { 4 } else { 1 })
        .sum()
}

/// Outline of brace languages.
pub(super) struct Braces<'a> {
    /// The text's lines.
    pub(super) lines: &'a [&'a str],
    /// What the scanner found on each line (brace depths, comments).
    pub(super) s: &'a [LineScan],
}

impl Braces<'_> {
    /// Outlines lines `lo..hi` whose depth is `d` (the inside of a container, or the file), `nest`
    /// containers deep (past [`MAX_NESTING`], a container is outlined as a plain definition).
    pub(super) fn level(&self, o: &mut Outline, lo: usize, hi: usize, d: i32, nest: usize) {
        let mut i = lo;
        while i < hi {
            let s = self.s[i];
            if o.roles[i] != Role::Loose {
                i += 1;
                continue;
            }
            let t = trimmed(self.lines[i]);
            // A line that closes a block first (`} else {`) opens none at this level.
            let opens = self.opens_at(i, d) && s.low >= d;
            if !opens {
                if !s.comment && !s.in_string && s.before == d {
                    if is_attribute(t) {
                        o.roles[i] = Role::Attr;
                    } else if is_import(t) {
                        // Go's `import (` groups its paths, in paragraphs, up to a `)` line.
                        let last = t
                            .ends_with('(')
                            .then(|| (i + 1..hi).find(|&j| trimmed(self.lines[j]) == ")"))
                            .flatten()
                            .unwrap_or(i);
                        for role in &mut o.roles[i..=last] {
                            if *role != Role::Blank {
                                *role = Role::Import;
                            }
                        }
                        i = last + 1;
                        continue;
                    } else if is_declaration(t) && t.ends_with(';') {
                        o.roles[i] = Role::Sig;
                    } else if is_expression_definition(&self.statement_head(i, hi)) {
                        i = self.expression_unit(o, i, lo, hi, d);
                        continue;
                    }
                }
                i += 1;
                continue;
            }
            let close = self.close_of(i, hi, d);
            let end = close.map_or(hi, |j| j + 1);
            let start = self.sig_start(o, i, lo);
            let mut kind = classify(self.declaration(start, i));
            if kind == Kind::Unit && close.is_some_and(|j| self.destructures_require(start, j)) {
                kind = Kind::Import;
            }
            if kind == Kind::Unit
                && (self.holds_definitions(i + 1, close.unwrap_or(hi), d + 1)
                    || self.type_with_methods(start, i + 1, close.unwrap_or(hi), d + 1)
                    || self.wraps_items(start, i, close.unwrap_or(hi), d + 1))
            {
                kind = Kind::Container;
            }
            if kind == Kind::Container && nest >= MAX_NESTING {
                kind = Kind::Unit;
            }
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
                    self.level(o, i + 1, close.unwrap_or(hi), d + 1, nest + 1);
                }
                // The closing line goes with the body: a removed body takes its brace along, so
                // that one marker covers it and the next definition's doc comment.
                Kind::Unit => self.push_unit(o, start..i + 1, i + 1..end, lo, close),
            }
            i = end;
        }
    }

    /// The first lines of the statement starting on line `i`, joined: through the first that
    /// holds `=>` or ends it (`;`, `{`), at most [`MAX_SIG_LINES`] lines, never past a blank one
    /// (a C# member's parameters over several lines before its `=>`). The line itself, with
    /// nothing joined, when it ends the head (most statements end with `;`).
    fn statement_head(&self, i: usize, hi: usize) -> Cow<'_, str> {
        let first = trimmed(self.lines[i]);
        let ends_head = |t: &str| t.contains("=>") || t.ends_with([';', '{']);
        if ends_head(first) {
            return Cow::Borrowed(first);
        }
        let mut head = String::new();
        for line in &self.lines[i..hi.min(i + MAX_SIG_LINES)] {
            let t = trimmed(line);
            if t.is_empty() {
                break;
            }
            if !head.is_empty() {
                head.push(' ');
            }
            head.push_str(t);
            if ends_head(t) {
                break;
            }
        }
        Cow::Owned(head)
    }

    /// Outlines the definition written as one expression that starts on line `i` (see
    /// [`is_expression_definition`]) as a unit: its first line the signature, the lines that
    /// continue the expression its body (those indented deeper than the first, those opening with
    /// a closing bracket or an operator, and any block they open). Returns the line after it.
    fn expression_unit(&self, o: &mut Outline, i: usize, lo: usize, hi: usize, d: i32) -> usize {
        let indent = indentation(self.lines[i]);
        let mut end = i + 1;
        while end < hi && o.roles[end] == Role::Loose {
            let s = self.s[end];
            let line = self.lines[end];
            let t = trimmed(line);
            let continues = s.before > d
                || (!s.comment
                    && (indentation(line) > indent
                        || t.starts_with([')', ']', '.', '?', ':', '=', '+', '-', '*', '|', '&'])));
            if !continues {
                break;
            }
            end += 1;
        }
        self.push_unit(o, i..i + 1, i + 1..end, lo, None);
        end
    }

    /// Adds the definition of signature lines `sig` and body lines `body` (through its closing
    /// line `close`, if any), with the comments and attributes right above it (down to `lo`).
    fn push_unit(
        &self,
        o: &mut Outline,
        sig: Range<usize>,
        body: Range<usize>,
        lo: usize,
        close: Option<usize>,
    ) {
        let id = o.units.len() as u32;
        let pre = attach_preamble(
            self.lines,
            |k| self.s[k].comment,
            &mut o.roles,
            sig.start,
            lo,
            Some(id),
        );
        o.roles[sig.clone()].fill(Role::Sig);
        o.roles[body.clone()].fill(Role::Body(id));
        o.units.push(Unit {
            pre: pre..sig.start,
            sig,
            body,
            close,
        });
    }

    /// True when the body `lo..hi` (at depth `d`) is long and defines functions of its own (a
    /// JavaScript module pattern, a constructor function assigning methods, a Go function full of
    /// closures): it is then outlined as a container, so that its members are judged one by one.
    fn holds_definitions(&self, lo: usize, hi: usize, d: i32) -> bool {
        // Named function declarations (`function parse(`, `async function load(`, a shell's
        // `nvm_ls() {`) are definitions whatever the size of what holds them: an IIFE or an AMD
        // module wrapping a library's functions, a script wrapped in `{ ... }` so that it runs
        // only once downloaded whole.
        let declared = (lo..hi)
            .filter(|&k| {
                let t = trimmed(self.lines[k]);
                let t = t.strip_prefix("async ").unwrap_or(t);
                self.opens_at(k, d)
                    && (t
                        .strip_prefix("function ")
                        .is_some_and(|r| r.starts_with(|c: char| c.is_alphabetic() || c == '_'))
                        || is_shell_function(t))
            })
            .nth(MIN_NESTED - 1)
            .is_some();
        if declared {
            return true;
        }
        if hi.saturating_sub(lo) < BIG_BODY {
            return false;
        }
        let nested = (lo..hi)
            .filter(|&k| {
                let t = self.lines[k];
                self.opens_at(k, d)
                    && (t.contains("function") || t.contains("=>") || t.contains("func("))
            })
            .count();
        nested >= MIN_NESTED
    }

    /// Whether the block of lines `lo..hi` (at depth `d`) is the body of a data type that holds
    /// methods of its own (a Swift or C# `struct`, a C++ `struct` with member functions; its
    /// header on line `start`): at least [`TYPE_METHODS`] named blocks open at its top level,
    /// each then a definition of its own; or an object literal (`export default {`, `x = {`,
    /// `methods: {`) holding as many methods (Vue's options API, a
    /// `module.exports = {` table: realistic JavaScript dev 37.8 -> 38.5% reduction at the same
    /// recall, test 38.8 -> 39.0). Not an `enum`: a Java enum's constants lead its body
    /// and ranked worse as loose lines (multilang dev, Java: recall 86.4 -> 81.6).
    fn type_with_methods(&self, start: usize, lo: usize, hi: usize, d: i32) -> bool {
        let header = trimmed(self.lines[lo - 1]);
        // An object literal of methods: Vue's `export default {` and its `methods: {`, a
        // `module.exports = {` table.
        let object = header == "export default {"
            || header.ends_with("= {") && !header.contains('(')
            || is_object_key(header);
        if !object
            && !matches!(
                first_keyword(self.lines[start]),
                "struct" | "record" | "union"
            )
        {
            return false;
        }
        (lo..hi)
            .filter(|&k| {
                self.opens_at(k, d)
                    && (if object {
                        let t = trimmed(self.lines[k]);
                        t.ends_with(") {") || is_object_key(t) && self.key_holds_methods(k, hi, d)
                    } else {
                        label(self.lines[k]).is_some()
                    })
            })
            .nth(TYPE_METHODS - 1)
            .is_some()
    }

    /// Whether the object literal a key opens on line `k` (`methods: {`, inside a block whose
    /// lines sit at depth `d` and end before `hi`) holds [`TYPE_METHODS`] methods of its own: it
    /// is then a member of the object around it as a method is (Vue's `export default {` holding
    /// `data() {` and `methods: {`). One level only: each line is looked at by its block's check
    /// and its parent's, never by every ancestor's.
    fn key_holds_methods(&self, k: usize, hi: usize, d: i32) -> bool {
        let close = self.close_of(k, hi, d).unwrap_or(hi);
        (k + 1..close)
            .filter(|&j| self.opens_at(j, d + 1) && trimmed(self.lines[j]).ends_with(") {"))
            .nth(TYPE_METHODS - 1)
            .is_some()
    }

    /// Whether line `k` opens a block at depth `d`: it starts there and ends deeper, in code (not
    /// inside a string or a comment).
    fn opens_at(&self, k: usize, d: i32) -> bool {
        let s = self.s[k];
        s.before == d && s.after > d && !s.in_string && !s.comment
    }

    /// The line closing the block line `i` opens from depth `d`: the first after it back at `d`
    /// or above, before `hi` (`None`: it never closes).
    fn close_of(&self, i: usize, hi: usize, d: i32) -> Option<usize> {
        (i + 1..hi).find(|&j| self.s[j].after <= d)
    }

    /// Whether lines `start..=close` are one CommonJS import of several names:
    /// `const {` (or `let`, `var`), the names, `} = require("./utils");`.
    fn destructures_require(&self, start: usize, close: usize) -> bool {
        matches!(trimmed(self.lines[start]), "const {" | "let {" | "var {")
            && trimmed(self.lines[close]).starts_with('}')
            && self.lines[close].contains("require(")
    }

    /// Whether the block opened on line `i` (its header from `start`) is a macro invocation that
    /// wraps items: Rust's `cfg_if! {`, `pin_project! {`, tokio's `cfg_rt! {` around functions,
    /// structs and impls, each a definition of its own (`macro_rules! m {` names its macro after
    /// the `!`, so it is not one).
    fn wraps_items(&self, start: usize, i: usize, hi: usize, d: i32) -> bool {
        let head = trimmed(self.lines[start]);
        let Some(name) = opened_after(head, "!") else {
            return false;
        };
        if start != i
            || name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            return false;
        }
        (i + 1..hi).any(|k| {
            let s = self.s[k];
            s.before == d
                && !s.in_string
                && !s.comment
                && matches!(
                    first_keyword(self.lines[k]),
                    "fn" | "struct" | "enum" | "impl" | "trait" | "mod" | "union" | "type" | "use"
                )
        })
    }

    /// The declaration a signature from line `start` (its body opening on line `i`) makes, past
    /// C++'s template clause: `template <typename T> class Cache {` and a `template <...>` line
    /// above `class Cache {` declare a class, as the class line alone does (before, a class
    /// template was one definition, its members never outlined). Only for what [`classify`]
    /// reads: a template `struct` with methods ([`Self::type_with_methods`]) read as a container
    /// too cost the issue-report set's C++ dev 3.5 points of recall (fmt's `formatter<T>`
    /// specializations, whose `parse` and `format` go together); classes alone: multilang C++
    /// dev recall 66.9 -> 69.2% at 58.5 -> 57.9% reduction, issue reports C++ dev 82.7% at 48.0
    /// -> 47.4% (10 KiB 66.1 -> 68.2% recall); test: issue reports C++ 87.6 -> 83.5% recall at
    /// 34.7 -> 43.5% reduction, multilang C++ 78.3% at 35.4 -> 33.1%.
    fn declaration(&self, start: usize, i: usize) -> &str {
        let line = self.lines[start];
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("template") else {
            return line;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('<') {
            return line;
        }
        let after = skip_generics(rest).trim_start();
        if after.is_empty() && start < i {
            self.declaration(start + 1, i)
        } else {
            after
        }
    }

    /// First line of the signature whose body opens on line `i`.
    fn sig_start(&self, o: &Outline, i: usize, lo: usize) -> usize {
        let mut k = i;
        // Closing minus opening parentheses of lines `k..=i`: above 0, the lines above are
        // still inside the parameter list the opener closes (a Kotlin class's supertype call,
        // a Scala constructor, one argument a line).
        let mut inside = paren_balance(self.lines[i]);
        // ...or the line above leaves the header open (`public class AnnotationRule :`).
        let open_above = |k: usize| trimmed(self.lines[k - 1]).ends_with([':', ',', '(', '=']);
        while k > lo
            && (i - k < MAX_SIG_LINES
                || (i - k < MAX_PARAMETER_LINES && (inside > 0 || open_above(k))))
            && o.roles[k - 1] == Role::Loose
        {
            let t = trimmed(self.lines[k - 1]);
            let s = self.s[k - 1];
            if s.comment || s.in_string || is_attribute(t) || t.ends_with([';', '}', '{']) {
                break;
            }
            k -= 1;
            inside += paren_balance(self.lines[k]);
        }
        k
    }
}

/// A line opening an object under a plain key: `methods: {`, `computed: {`.
fn is_object_key(t: &str) -> bool {
    t.strip_suffix(": {")
        .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Closing minus opening parentheses of `line` (strings and comments not skipped: a signature's
/// parameter lines seldom hold either).
fn paren_balance(line: &str) -> i32 {
    line.bytes().fold(0, |n, b| match b {
        b')' => n + 1,
        b'(' => n - 1,
        _ => n,
    })
}

/// What comes before `marker` on a line that ends with `marker {` (spaces allowed before the
/// brace): `cfg_if` of `cfg_if! {`, `nvm_ls` of `nvm_ls() {`.
fn opened_after<'t>(t: &'t str, marker: &str) -> Option<&'t str> {
    t.strip_suffix('{')
        .map(str::trim_end)
        .and_then(|h| h.strip_suffix(marker))
}

/// A shell function's first line, `name() {` (also `name () {`, names like `nvm_ls-remote` or
/// `git::clone`): a name and an empty parameter list opening a block.
fn is_shell_function(t: &str) -> bool {
    let Some(head) = opened_after(t, "()") else {
        return false;
    };
    let name = head.trim_end();
    // A bare `function() {` or `func() {` on its own line is an anonymous callback.
    !name.is_empty()
        && !matches!(name, "function" | "func" | "fn" | "fun" | "lambda")
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))
}

#[cfg(test)]
mod tests {
    use super::is_shell_function;

    #[test]
    fn a_shell_function_is_a_name_and_empty_parentheses_opening_a_block() {
        for t in ["nvm_ls() {", "nvm_ls () {", "git::clone() {", "_acme-sh(){"] {
            assert!(is_shell_function(t), "{t}");
        }
        for t in [
            "function() {",
            "func() {",
            "x = f() {",
            "if (x) {",
            "nvm_ls()",
            "parse(s) {",
        ] {
            assert!(!is_shell_function(t), "{t}");
        }
    }
}
