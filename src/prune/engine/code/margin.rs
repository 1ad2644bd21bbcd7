//! Definitions of languages whose definitions start at the left margin and go on in indented
//! lines: Haskell's and OCaml's equations, Erlang's function clauses, the Lisps' `(defn ...)`
//! forms (a docstring's lines at the margin start nothing), SQL's `CREATE` statements (with their
//! `RETURNS`, `$BODY$`, `DECLARE` and `BEGIN`), Pascal's procedures (with their `var` and
//! `begin`). The brace and indentation walks find no definitions there
//! (or an Erlang record's braces) and leave most of the code loose; the code strategy then ranks
//! its paragraphs. These definitions name what its markers hide: each run of lines from a line at
//! the margin through the lines before the next one, the consecutive clauses of one name (a type
//! signature and its equations, `foo(a) ->` and `foo(b) ->`) one definition.
//!
//! Owns finding those definitions and their labels. It must never judge relevance, and never
//! name anything in a file whose definitions the walks found.

use super::super::draft::{is_blank, trimmed};
use super::UNKNOWN_LOOSE_SHARE;
use super::labels::cut_label;
use super::outline::{Outline, Role};
use std::ops::Range;

/// Lines ending with `{` must be fewer than the lines at the margin that can start a definition
/// divided by this: more, and the file is a brace language's (every Rust, Go or JavaScript
/// function opens one; a Haskell record or an Erlang map now and then).
const BRACES_PER_START: usize = 2;

/// Words before a definition's name that say what it defines (`data Token`, `instance Show T`,
/// `let rec parse`, Erlang's `-spec parse(`): they are skipped to find the name, and the label
/// keeps the first of those that say what kind of thing it is ([`KIND_WORDS`]).
const LEAD_WORDS: &[&str] = &[
    "var",
    "const",
    "function",
    "def",
    "fn",
    "func",
    "sub",
    "proc",
    "procedure",
    "constructor",
    "destructor",
    "local",
    "async",
    "let",
    "rec",
    "and",
    "val",
    "fun",
    "data",
    "type",
    "newtype",
    "class",
    "instance",
    "module",
    "signature",
    "functor",
    "struct",
    "deriving",
    "pattern",
    "-spec",
    "-callback",
    "-type",
    "-record",
    "-define",
    "private",
    "public",
    "inline",
    "static",
    "export",
];

/// The words of [`LEAD_WORDS`] that a label keeps before the name (`data Token`, `module Lexer`).
const KIND_WORDS: &[&str] = &[
    "var",
    "const",
    "function",
    "def",
    "fn",
    "func",
    "sub",
    "proc",
    "procedure",
    "constructor",
    "destructor",
    "data",
    "type",
    "newtype",
    "class",
    "instance",
    "module",
    "signature",
    "functor",
    "-record",
    "-define",
    "-type",
];

/// Words at the margin that continue what is above them rather than start a definition (OCaml's
/// `in`, Haskell's `where` or `deriving` on a line of their own, a Lisp's or Ruby's `end`, the
/// `begin` of a Pascal procedure's body, the `DECLARE` and `BEGIN` of a SQL function's).
const CONTINUING_WORDS: &[&str] = &[
    "in", "then", "else", "where", "deriving", "end", "do", "with", "of", "begin", "BEGIN",
    "Begin", "declare", "DECLARE", "END",
];

/// One definition found at the margin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MarginUnit {
    /// Its lines: the comments right above it, its first line, and what follows through the
    /// line before the next definition (trailing blank lines and comments excluded).
    pub(crate) range: Range<usize>,
    /// Its first line at the margin: the one that names it.
    pub(crate) line: usize,
    /// How markers name it ([`label`]).
    pub(crate) label: String,
}

/// The definitions at the left margin of `lines`, when the walks that made `o` left more than
/// [`UNKNOWN_LOOSE_SHARE`] of the code loose; none otherwise. Only loose lines (and the walks'
/// misreadings: anything but imports, the header and blank lines) take part.
pub(crate) fn units(lines: &[&str], o: &Outline) -> Vec<MarginUnit> {
    // Half of the lines in definitions: the walks found them (and no line need be read).
    let outlined = o
        .roles
        .iter()
        .filter(|r| matches!(r, Role::Sig | Role::Body(_) | Role::Pre(_) | Role::Close))
        .count();
    if outlined * 2 > lines.len() {
        return Vec::new();
    }
    let comment: Vec<bool> = (0..lines.len())
        .map(|i| o.comment[i] || comment_at_margin(lines[i]))
        .collect();
    let is_comment = |i: usize| comment[i];
    let code = (0..lines.len())
        .filter(|&i| !is_blank(lines[i]) && !is_comment(i))
        .count();
    let loose = (0..lines.len())
        .filter(|&i| o.roles[i] == Role::Loose && !is_blank(lines[i]) && !is_comment(i))
        .count();
    if code == 0 || (loose as f32) <= UNKNOWN_LOOSE_SHARE * code as f32 {
        return Vec::new();
    }
    let open: Vec<bool> = o
        .roles
        .iter()
        .map(|r| !matches!(r, Role::Import | Role::Header))
        .collect();
    let mut in_string = o.in_string.clone();
    // A Lisp's docstrings go on at the margin (`"Return the file.\nIf it is not tracked, nil."`):
    // their lines start nothing. The walks' scan knows neither its strings over several lines
    // nor its character literals (`?\"`).
    let lisp = lisp_strings(lines);
    let forms = (0..lines.len())
        .filter(|&i| lines[i].starts_with('(') && !is_comment(i) && !lisp[i])
        .count();
    let margin_lines = (0..lines.len())
        .filter(|&i| starts_definition(lines[i]) && !is_comment(i) && !lisp[i])
        .count();
    if forms * 2 > margin_lines {
        in_string = lisp;
    }
    let starts: Vec<bool> = (0..lines.len())
        .map(|i| {
            open[i] && !is_comment(i) && !o.doc[i] && !in_string[i] && starts_definition(lines[i])
        })
        .collect();
    // A brace language whose walk went wrong (a file cut out of a larger one, a template in a
    // raw string) opens a block at the end of most of its definitions' lines: the margin says
    // nothing about it.
    let braces = (0..lines.len())
        .filter(|&i| !is_comment(i) && trimmed(lines[i]).ends_with('{'))
        .count();
    if braces * BRACES_PER_START > starts.iter().filter(|&&s| s).count() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !starts[i] {
            i += 1;
            continue;
        }
        let name = name(lines[i]);
        // The group: this start, what follows it that is no start, and the next starts of the
        // same name with what follows them.
        let mut end = i + 1;
        loop {
            while end < lines.len() && open[end] && !starts[end] {
                end += 1;
            }
            if end < lines.len() && starts[end] && name.is_some() && name == self::name(lines[end])
            {
                end += 1;
                continue;
            }
            break;
        }
        // Trailing blank lines and comments belong to what follows (a comment above the next
        // definition is its doc).
        while end > i + 1 && (is_blank(lines[end - 1]) || is_comment(end - 1)) {
            end -= 1;
        }
        let next = end;
        // One line (an attribute, a one-line equation) is named by its own text.
        if end - i >= 2
            && let Some(label) = label(lines[i])
        {
            let mut pre = i;
            while pre > 0 && open[pre - 1] && is_comment(pre - 1) && !is_blank(lines[pre - 1]) {
                pre -= 1;
            }
            out.push(MarginUnit {
                range: pre..end,
                line: i,
                label,
            });
        }
        i = next;
    }
    out
}

/// Which lines of a Lisp start inside a string begun on an earlier line (a docstring's second
/// line on): `"` opens and closes strings, `\` escapes in them, `;` comments out the rest of a
/// line, and a character literal (Clojure's `\"`, Emacs Lisp's `?\"` and `?"`, Racket's and
/// Common Lisp's `#\"`) opens none.
fn lisp_strings(lines: &[&str]) -> Vec<bool> {
    let mut inside = false;
    lines
        .iter()
        .map(|line| {
            let starts_inside = inside;
            let b = line.as_bytes();
            let mut k = 0;
            while k < b.len() {
                match (inside, b[k]) {
                    (true, b'\\') => k += 1,
                    (true, b'"') | (false, b'"') => inside = !inside,
                    (false, b';') => break,
                    (false, b'\\') => k += 1,
                    (false, b'?') if b.get(k + 1) == Some(&b'"') => k += 1,
                    _ => {}
                }
                k += 1;
            }
            starts_inside
        })
        .collect()
}

/// A comment in the syntaxes of the margin languages, at the start of a line: Haskell's and
/// SQL's `--`, `{-`, the Lisps' `;`, Erlang's and TeX's `%`, OCaml's `(*`, a shell's `#`.
fn comment_at_margin(line: &str) -> bool {
    let t = line.trim_start();
    ["--", "{-", ";", "%", "(*", "#", "//"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// A line at the left margin that can start a definition: not indented, not a continuation of
/// what is above it (a closing bracket, an operator, `in`, `where`, `end`, a Pascal procedure's
/// `var` and `begin`, a SQL function's `RETURNS`, `$BODY$` and `DECLARE`).
fn starts_definition(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    if !(first.is_alphanumeric() || matches!(first, '_' | '(' | '-' | '@' | '$' | '.')) {
        return false;
    }
    if first == '.' || line.starts_with("-}") || line.starts_with("->") || dollar_quote(line) {
        return false;
    }
    let word = trimmed(line)
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    // Pascal's `var` or `const` alone opens a procedure's declarations, above its `begin`.
    let section = matches!(trimmed(line), "var" | "const" | "VAR" | "CONST");
    let sql_clause = SQL_CLAUSES.iter().any(|c| word.eq_ignore_ascii_case(c));
    !CONTINUING_WORDS.contains(&word) && !section && !sql_clause
}

/// The clauses of a SQL `CREATE FUNCTION` written at the margin below its parameters: they go
/// on with it.
const SQL_CLAUSES: &[&str] = &[
    "returns",
    "language",
    "as",
    "immutable",
    "stable",
    "volatile",
    "strict",
    "security",
    "parallel",
    "cost",
];

/// A line opening or closing a SQL function's dollar-quoted body (`$$`, `$BODY$ DECLARE`): the
/// function goes on.
fn dollar_quote(line: &str) -> bool {
    line.strip_prefix('$')
        .and_then(|r| r.split_once('$'))
        .is_some_and(|(tag, _)| tag.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// The name a line at the margin defines, past the words that say what kind of thing it is:
/// `checkFoo params t =` and `checkFoo :: Parameters` -> `checkFoo`, `(defn parse [s]` -> `parse`,
/// `-spec init(Req) ->` -> `init`, `let rec walk t =` -> `walk`, `(<>) :: a` -> `(<>)`.
fn name(line: &str) -> Option<&str> {
    let rest = trimmed(line);
    if let Some((_, name)) = sql_object(rest) {
        return Some(name);
    }
    if let Some(form) = rest.strip_prefix('(')
        && let Some(after) = lisp_definer(form)
    {
        return ident(after.trim_start().trim_start_matches(['(', '[']), true);
    }
    let (_, rest) = lead(rest);
    if rest.starts_with('(') {
        // An operator: `(<>) ::`, symbols only between the parentheses; a Lisp form that
        // defines nothing (`(provide ...)`, `(when ...)`) names nothing.
        let end = rest.find(')')? + 1;
        let symbol = rest[1..end - 1].chars().all(|c| c.is_ascii_punctuation());
        return (end > 2 && symbol).then(|| &rest[..end]);
    }
    ident(rest, false)
}

/// SQL's words between `CREATE` (or `ALTER`) and the kind of object it makes: `OR REPLACE`,
/// `TEMPORARY`, `UNIQUE`, ...
const SQL_MODIFIERS: &[&str] = &[
    "or",
    "replace",
    "temp",
    "temporary",
    "unique",
    "materialized",
    "global",
    "local",
    "recursive",
    "external",
    "unlogged",
    "definer",
];

/// The kinds of object a SQL `CREATE` makes that a marker names.
const SQL_KINDS: &[&str] = &[
    "table",
    "view",
    "function",
    "procedure",
    "index",
    "trigger",
    "type",
    "sequence",
    "schema",
    "extension",
    "domain",
    "policy",
    "database",
    "role",
    "aggregate",
    "rule",
];

/// A SQL statement making an object: its kind and name as written (`CREATE OR REPLACE FUNCTION
/// touch(` -> `FUNCTION`, `touch`; `create table if not exists users (` -> `table`, `users`).
fn sql_object(t: &str) -> Option<(&str, &str)> {
    let mut words = t.split_whitespace();
    let first = words.next()?;
    if !(first.eq_ignore_ascii_case("create") || first.eq_ignore_ascii_case("alter")) {
        return None;
    }
    let is = |w: &str, list: &[&str]| list.iter().any(|k| w.eq_ignore_ascii_case(k));
    let mut kind = words.next()?;
    while is(kind, SQL_MODIFIERS) {
        kind = words.next()?;
    }
    if !is(kind, SQL_KINDS) {
        return None;
    }
    let mut name = words.next()?;
    while is(name, &["if", "not", "exists"]) {
        name = words.next()?;
    }
    let name = name
        .split('(')
        .next()
        .unwrap_or(name)
        .trim_end_matches([';', ',']);
    (!name.is_empty()).then_some((kind, name))
}

/// Splits the [`LEAD_WORDS`] off the start of `t` (a word ends at whitespace or at the `(` of an
/// Erlang attribute: `-record(state,`): the first of them in [`KIND_WORDS`], and the rest.
fn lead(t: &str) -> (Option<&str>, &str) {
    let mut kind = None;
    let mut rest = t;
    loop {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '(')
            .unwrap_or(rest.len());
        let word = &rest[..end];
        if end == 0 || !LEAD_WORDS.contains(&word) {
            return (kind, rest);
        }
        // Pascal's `class function` is a function, `class procedure` a procedure.
        if matches!(kind, None | Some("class")) && KIND_WORDS.contains(&word) {
            kind = Some(word);
        }
        rest = rest[end..].trim_start();
        rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    }
}

/// After a Lisp form's `(`: the rest past its defining word (`defn`, `defn-`, `defmacro`,
/// `define`, `defun`, `defmethod`, ..., and Clojure's `ns`; a part of the word after a `-`, `/` or
/// `:` may say it: Racket's `define/cond-contract`, Emacs Lisp's `cl-defgeneric` and
/// `gv-define-setter`, `s/defn`), or `None` when the form defines nothing (`provide`, `require`,
/// `when`, `let`, `declaim`).
fn lisp_definer(form: &str) -> Option<&str> {
    let word_end = form
        .find(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .unwrap_or(form.len());
    let word = &form[..word_end];
    let defines = word
        .split(['-', '/', ':'])
        .any(|part| part.starts_with("def") && !part.starts_with("default"));
    (defines || word == "ns").then(|| &form[word_end..])
}

/// The identifier `s` starts with, or `None`: letters, digits, `_`, a Haskell or OCaml `'`, a
/// Ruby-like trailing `?` or `!`, and a `.` between names (Pascal's `TForm.Create`, Haskell's
/// `Data.Map`); in a Lisp name (`lisp`) also `-`, `*`, `<`, `>`, `/`, `+` and `=`, first too
/// (`put!`, `<!!`, `ring.util/response`, Racket's `-filter`), with a letter somewhere.
fn ident(s: &str, lisp: bool) -> Option<&str> {
    let b = s.as_bytes();
    let end = s
        .char_indices()
        .find(|&(k, c)| {
            let dotted = c == '.'
                && k > 0
                && b.get(k + 1)
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == b'_');
            !(c.is_alphanumeric()
                || matches!(c, '_' | '\'' | '?' | '!')
                || dotted
                || (lisp && matches!(c, '*' | '>' | '<' | '-' | '/' | '+' | '=' | '.')))
        })
        .map_or(s.len(), |(k, _)| k);
    let name = s[..end].trim_end_matches(['.', '/', '-']);
    let starts = if lisp {
        name.contains(char::is_alphabetic)
    } else {
        name.starts_with(|c: char| c.is_alphabetic() || c == '_')
    };
    starts.then_some(name)
}

/// How a marker names a definition found at the margin, as the language writes it: `checkFoo`,
/// `data Token`, `defn parse`, `init()` (Erlang and Makefile-like `name(`), `(<>)`.
pub(crate) fn label(line: &str) -> Option<String> {
    let t = trimmed(line);
    if let Some((kind, name)) = sql_object(t) {
        return Some(cut_label(format!("{kind} {name}")));
    }
    if let Some(form) = t.strip_prefix('(')
        && let Some(after) = lisp_definer(form)
    {
        let definer = form[..form.len() - after.len()].trim();
        return name(line).map(|n| cut_label(format!("{definer} {n}")));
    }
    let n = name(line)?;
    let (kind, rest) = lead(t);
    let after = rest
        .find(n)
        .map_or("", |at| rest[at + n.len()..].trim_start());
    let text = match kind {
        // A Haskell instance or class is named by its whole head: `instance Show Mat`.
        Some(k @ ("instance" | "class")) => {
            let head = rest.split(" where").next().unwrap_or(rest);
            let head: Vec<&str> = head.split_whitespace().collect();
            format!("{k} {}", head.join(" "))
        }
        Some(k) => format!("{} {n}", k.trim_start_matches('-')),
        None if after.starts_with('(') => format!("{n}()"),
        None => n.to_owned(),
    };
    Some(cut_label(text))
}

#[cfg(test)]
mod tests {
    use super::super::outline::outline;
    use super::*;

    fn found(src: &str) -> Vec<(String, Range<usize>)> {
        let lines: Vec<&str> = src.lines().collect();
        units(&lines, &outline(&lines))
            .into_iter()
            .map(|u| (u.label, u.range))
            .collect()
    }

    fn labels(src: &str) -> Vec<String> {
        found(src).into_iter().map(|(l, _)| l).collect()
    }

    #[test]
    fn haskell_equations_with_their_signature_and_where_are_one_definition() {
        let src = "module Checks where\n\nimport Data.List\n\n-- | Warn on unquoted expansions.\ncheckQuotes :: Parameters -> Token -> IO ()\ncheckQuotes params t =\n    mapM_ warn (words t)\n  where\n    warn w = print w\n\nprop_checkQuotes = verify checkQuotes \"echo $a\"\n\ndata Severity = Error\n    | Warning\n    deriving (Show)\n";
        assert_eq!(
            found(src),
            [
                ("checkQuotes".to_owned(), 4..10),
                ("data Severity".to_owned(), 13..16)
            ]
        );
    }

    #[test]
    fn erlang_clauses_of_one_function_are_one_definition() {
        let src = "-module(router).\n-export([init/2]).\n\n-spec init(Req, Opts) -> {ok, Req, Opts}.\ninit(Req, #{method := <<\"GET\">>} = Opts) ->\n    reply(Req, Opts);\ninit(Req, Opts) ->\n    {ok, Req, Opts}.\n\nreply(Req, Opts) ->\n    cowboy_req:reply(200, Req),\n    {ok, Req, Opts}.\n\nterminate(_Reason, _Req, _State) ->\n    ok.\n\ninfo(Msg, Req, State) ->\n    logger:info(Msg),\n    {ok, Req, State}.\n";
        assert_eq!(labels(src), ["init()", "reply()", "terminate()", "info()"]);
    }

    #[test]
    fn attributes_and_kinds_are_named_as_written() {
        assert_eq!(label("-record(state, {").as_deref(), Some("record state"));
        assert_eq!(label("-spec init(Req) -> ok.").as_deref(), Some("init()"));
        assert_eq!(
            label("instance Show Mat where").as_deref(),
            Some("instance Show Mat")
        );
        assert_eq!(label("(<>) :: a -> a -> a").as_deref(), Some("(<>)"));
        assert_eq!(label("let rec walk t =").as_deref(), Some("walk"));
        assert_eq!(
            label("function setup(opts)").as_deref(),
            Some("function setup")
        );
        assert_eq!(label("42 -> done").as_deref(), None);
        assert_eq!(
            label("CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger AS $$").as_deref(),
            Some("FUNCTION touch_updated_at")
        );
        assert_eq!(
            label("create table if not exists users (").as_deref(),
            Some("table users")
        );
    }

    #[test]
    fn lisp_forms_are_named_by_their_definer() {
        let src = "(ns core.async\n  (:require [clojure.core :as c]))\n\n;; Puts a value.\n(defn put!\n  [port val]\n  (>!! port val))\n\n(defmacro go\n  [& body]\n  `(thread ~@body))\n";
        assert_eq!(labels(src), ["ns core.async", "defn put!", "defmacro go"]);
    }

    #[test]
    fn lisp_definers_are_named_and_other_forms_are_not() {
        let rkt = "#lang racket/base\n\n(require (rename-in (rep type-rep) [make-Base make-Base*]))\n\n(provide (except-out (all-defined-out) make-Base)\n         -filter)\n\n(define/cond-contract (-filter t i [p null])\n  (->* (Type? name-ref/c) (path-elems?) Filter?)\n  (make-TypeFilter t p i))\n\n(when (eq? (system-type) 'windows)\n  (displayln \"windows\"))\n\n(define (make-Base name contract)\n  (Base name contract))\n";
        assert_eq!(
            labels(rkt),
            ["define/cond-contract -filter", "define make-Base"]
        );
        let el = "(cl-defgeneric magit-buffer-value ()\n  \"Return the value of the current buffer.\")\n\n(gv-define-setter magit-get (val &rest keys)\n  `(magit-set ,val ,@keys))\n\n(let (autodoc-symbol)\n  (setq autodoc-symbol 1))\n";
        assert_eq!(
            labels(el),
            [
                "cl-defgeneric magit-buffer-value",
                "gv-define-setter magit-get"
            ]
        );
    }

    #[test]
    fn a_lisp_docstring_at_the_margin_starts_nothing() {
        let src = "(defun magit-toplevel (&optional directory)\n  \"Return the absolute path to the toplevel of the current repository.\n\nIf optional DIRECTORY is non-nil, return the toplevel of that\ndirectory instead, returning the truename.\"\n  (let ((dir (or directory default-directory)))\n    (magit--with-refresh-cache dir)))\n\n(defun magit-file-tracked-p (file)\n  \"Return t if FILE is a tracked file.\"\n  (magit-git-success \"ls-files\" \"--error-unmatch\" file))\n\n(defvar magit--char ?\\\" \"a quote character\")\n\n(defun magit-rev-parse (&rest args)\n  \"Execute `git rev-parse ARGS'.\nIf the revision is a\nrange, return nil.\"\n  (magit-git-string \"rev-parse\" args))\n";
        assert_eq!(
            labels(src),
            [
                "defun magit-toplevel",
                "defun magit-file-tracked-p",
                "defun magit-rev-parse"
            ]
        );
        // Clojure writes a quote character `\"`: no string opens.
        let clj = "(def quote-char \\\")\n\n(defn escape\n  \"Escapes s.\nQuotes too.\"\n  [s]\n  (str quote-char s))\n\n(defn unescape\n  [s]\n  (subs s 1))\n";
        assert_eq!(labels(clj), ["defn escape", "defn unescape"]);
    }

    #[test]
    fn pascal_and_sql_bodies_belong_to_their_header() {
        let pas = "unit copytable;\n\ninterface\n\nuses Classes;\n\nimplementation\n\nprocedure TCopyTableForm.FormCreate(Sender: TObject);\nbegin\n  InheritFont(Font);\nend;\n\nclass function TJwtAbstract.VerifyPayload(const Token: RawUtf8): TJwtResult;\nvar\n  P: integer;\nbegin\n  result := jwtValid;\nend;\n\nconstructor TJwtAbstract.Create(aAlgo: RawUtf8);\nbegin\n  inherited Create;\nend;\n";
        let got = found(pas);
        assert!(
            got.contains(&("procedure TCopyTableForm.FormCreate".to_owned(), 8..12)),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|(l, r)| l == "function TJwtAbstract.VerifyPayload" && r.end == 19),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|(l, _)| l == "constructor TJwtAbstract.Create"),
            "{got:?}"
        );
        assert!(!got.iter().any(|(l, _)| l == "begin"), "{got:?}");
        let sql = "CREATE OR REPLACE FUNCTION touch(\n    _name TEXT\n)\nRETURNS void\nLANGUAGE plpgsql AS\n$BODY$\nDECLARE\n    _sql TEXT;\nBEGIN\n    _sql := 'x';\nEND;\n$BODY$;\n\nCREATE TABLE users (\n    id INT\n);\n";
        assert_eq!(
            found(sql),
            [
                ("FUNCTION touch".to_owned(), 0..12),
                ("TABLE users".to_owned(), 13..16)
            ]
        );
    }

    #[test]
    fn ocaml_lets_stop_at_the_next_let_and_not_at_in() {
        // No line ends with the `=` that opens an indented body: the walks leave the file to
        // the margin.
        let src = "let rec walk t = match t with\n  | Leaf -> 0\n  | Node (l, r) -> walk l + walk r\n\nlet size t = let n = walk t\nin\n  n + 1\n";
        assert_eq!(labels(src), ["walk", "size"]);
        // Where they do, the offside walk (`indented.rs`) outlines the lets, and the margin
        // names nothing more.
        let src = "let rec walk t =\n  match t with\n  | Leaf -> 0\n  | Node (l, r) -> walk l + walk r\n\nlet size t =\n  let n = walk t\n  in\n  n + 1\n";
        let lines: Vec<&str> = src.lines().collect();
        assert_eq!(outline(&lines).units.len(), 2);
        assert_eq!(labels(src), Vec::<String>::new());
    }

    #[test]
    fn sql_statements_are_named_by_the_object_they_make() {
        let src = "CREATE TABLE users (\n    id SERIAL PRIMARY KEY,\n    name TEXT\n);\n\nCREATE TABLE orders (\n    id SERIAL PRIMARY KEY,\n    user_id INT\n);\n\nCREATE INDEX idx_orders_user ON orders (user_id);\n";
        assert_eq!(labels(src), ["TABLE users", "TABLE orders"]);
    }

    #[test]
    fn lines_inside_a_string_start_nothing() {
        let src = "package cli\n\nvar helpTemplate = `NAME:\n   {{.Name}} - {{.Usage}}\n\nUSAGE:\n   {{.HelpName}} [options]\n\nCOPYRIGHT:\n   {{.Copyright}}\n`\n\nvar usageTemplate = `Usage:\n   run it\n`\n";
        assert_eq!(labels(src), ["var helpTemplate", "var usageTemplate"]);
    }

    #[test]
    fn a_language_the_walks_know_is_left_alone() {
        let src = "fn main() {\n    run();\n}\n\nfn run() {\n    go();\n}\n";
        assert_eq!(labels(src), Vec::<String>::new());
    }
}
