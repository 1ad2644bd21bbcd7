//! The outline of a source file: which lines are imports, the file header, definition signatures,
//! closing braces, attributes, doc comments and bodies of definitions, or loose statements.
//!
//! Owns finding definitions by brace depth (brace languages) or by indentation (Python-like), and
//! containers (`impl`, `class`, `mod`, `trait`, ...) whose members are outlined in turn. It must
//! never judge relevance.

use super::super::draft::{is_blank, trimmed, trimmed_start};
use super::super::evidence::trailing_ident;
use super::ada;
use super::braces::Braces;
use super::indent;
use super::indented::Indent;
use super::scan;
use std::ops::Range;

/// The role of one line in the outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Whitespace only.
    Blank,
    /// An import / use / include statement.
    Import,
    /// The first lines of the file's leading comment.
    Header,
    /// A definition's signature (header through the line opening its body), or a declaration.
    Sig,
    /// The line closing a container (`impl`, `class`, ...).
    Close,
    /// An attribute, annotation or decorator not attached to a definition with a body.
    Attr,
    /// A comment or attribute attached to definition `n` (its doc comment, its decorators).
    Pre(u32),
    /// A line of definition `n`'s body.
    Body(u32),
    /// Anything else: statements and comments outside definitions.
    Loose,
}

/// One definition with a body (a function, a struct, a top-level block, ...), not a container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    /// Doc comment and attributes above the signature.
    pub(crate) pre: Range<usize>,
    /// Signature lines.
    pub(crate) sig: Range<usize>,
    /// Body lines, through the closing line when there is one.
    pub(crate) body: Range<usize>,
    /// The closing line (`}`), the last line of `body`; `None` for indentation blocks and for a
    /// block that never closes.
    pub(crate) close: Option<usize>,
}

/// Roles of all lines plus the definitions they refer to.
pub(crate) struct Outline {
    /// Each line's role.
    pub(crate) roles: Vec<Role>,
    /// The definitions, in line order.
    pub(crate) units: Vec<Unit>,
    /// Containers: from their signature's first line through their closing line.
    pub(crate) containers: Vec<Range<usize>>,
    /// Lines that are documentation (doc comments; Python docstrings and other multi-line strings).
    pub(crate) doc: Vec<bool>,
    /// Lines that start as a comment or inside a block comment (doc comments included; a line may
    /// hold code after a comment's end: `*/ f();`); never a line that starts inside a string.
    pub(crate) comment: Vec<bool>,
    /// Lines that open a comment (`//`, `/*`, Python's `#`), as opposed to continuing a block one.
    pub(crate) opens_comment: Vec<bool>,
    /// Lines of a Python docstring: a triple-quoted string that opens the line right after a
    /// statement ending with `:` (a `def` or `class` signature, or any other block opener),
    /// through its closing line.
    pub(crate) docstring: Vec<bool>,
    /// Lines that start inside a string literal begun on an earlier line (a template in a raw
    /// string, a heredoc, a docstring's continuation): nothing on them starts a definition.
    pub(crate) in_string: Vec<bool>,
}

/// At most this many lines of the header's first paragraph are kept whatever the goal; the rest of
/// the header (licence text, long module docs) is scored like any comment.
const HEADER_KEEP: usize = 4;
/// Containers nested deeper than this are outlined as plain definitions: the walk recurses once per
/// container level, and a hostile or generated file must not exhaust the stack.
pub(super) const MAX_NESTING: usize = 64;
/// A multi-line signature is at most this many lines above the line opening the body.
pub(super) const MAX_SIG_LINES: usize = 12;

/// Outlines `lines`, choosing indentation mode when `:`-opened blocks outnumber `{`-opened ones.
pub(crate) fn outline(lines: &[&str]) -> Outline {
    let (mut braces, mut colons, mut keyword_openers, mut ends, mut ml_openers) = (0, 0, 0, 0, 0);
    let mut named_ends = 0;
    let roles = lines
        .iter()
        .map(|l| {
            let t = trimmed(l);
            braces += usize::from(t.ends_with('{'));
            colons += usize::from(is_py_opener(t));
            keyword_openers += usize::from(is_end_opener(t));
            ends += usize::from(is_end_closer(t));
            ml_openers += usize::from(is_ml_opener(t));
            named_ends += usize::from(ada::is_named_end(t));
            if t.is_empty() {
                Role::Blank
            } else {
                Role::Loose
            }
        })
        .collect();
    let mut o = Outline {
        roles,
        units: Vec::new(),
        containers: Vec::new(),
        doc: vec![false; lines.len()],
        comment: Vec::new(),
        opens_comment: Vec::new(),
        docstring: vec![false; lines.len()],
        in_string: vec![false; lines.len()],
    };
    // Ada: blocks closed by `end Name;`.
    if named_ends >= 2
        && named_ends > braces.max(colons)
        && lines.iter().any(|l| ada::starts_opener(trimmed(l)))
    {
        o.comment = lines
            .iter()
            .map(|l| trimmed_start(l).starts_with("--"))
            .collect();
        o.opens_comment = o.comment.clone();
        let first_code = header(lines, &o.comment, &mut o.roles, |_| false);
        ada::Ada { lines }.level(&mut o, first_code, lines.len(), 0);
        return o;
    }
    // Ruby-like: `def`/`class`/`module` blocks closed by `end` (at the opener's indentation).
    let end_blocks = keyword_openers > braces.max(colons) && ends * 2 >= keyword_openers;
    // F# and OCaml: `let f x =`, `member this.Get() =`, `type Parser() =` open the lines indented
    // deeper below them (the offside rule); `{` only opens records and computation expressions.
    let offside = !end_blocks && ml_openers > braces.max(colons);
    if colons > braces || end_blocks || offside {
        let mut s = indent::scan(lines);
        if end_blocks {
            for (l, line) in s.iter_mut().zip(lines) {
                l.colon = !l.in_string && !l.comment && is_end_opener(trimmed(line));
            }
        }
        for (i, (d, l)) in o.doc.iter_mut().zip(&s).enumerate() {
            let t = trimmed_start(lines[i]);
            *d = l.in_string
                || t.starts_with("\"\"\"")
                || t.starts_with("'''")
                || t.starts_with("r\"\"\"");
        }
        o.comment = s.iter().map(|l| l.comment).collect();
        o.in_string = s.iter().map(|l| l.in_string).collect();
        o.opens_comment = o.comment.clone();
        o.docstring = docstrings(lines, &s);
        let first_code = header(lines, &o.comment, &mut o.roles, |i| s[i].in_string);
        Indent {
            lines,
            s: &s,
            end_closes: end_blocks,
            offside,
        }
        .level(&mut o, first_code, lines.len(), 0);
    } else {
        let s = scan::scan(lines);
        for (d, l) in o.doc.iter_mut().zip(&s) {
            *d = l.doc;
        }
        o.comment = s.iter().map(|l| l.comment).collect();
        o.in_string = s.iter().map(|l| l.in_string).collect();
        o.opens_comment = s.iter().map(|l| l.comment && !l.in_comment).collect();
        let first_code = header(lines, &o.comment, &mut o.roles, |_| false);
        // A text cut out of a file may start inside a block: its top level is the lowest depth.
        let top = s
            .iter()
            .map(|l| l.low.min(l.before))
            .min()
            .unwrap_or(0)
            .min(0);
        Braces { lines, s: &s }.level(&mut o, first_code, lines.len(), top, 0);
    }
    o
}

/// The lines of each docstring ([`Outline::docstring`]): a line outside any string that starts
/// with triple quotes (an `r` or `u` prefix allowed) right after a non-blank line ending with `:`,
/// and the lines that start inside that string (its closing line is the last of them).
fn docstrings(lines: &[&str], s: &[indent::PyLine]) -> Vec<bool> {
    let mut out = vec![false; lines.len()];
    let mut after_colon = false;
    let mut i = 0;
    while i < lines.len() {
        let t = trimmed_start(lines[i]);
        if is_blank(t) {
            i += 1;
            continue;
        }
        // `r"""` and `u"""` open docstrings too; `b"""` and `f"""` are values, not documentation.
        let t = t.strip_prefix(['r', 'R', 'u', 'U']).unwrap_or(t);
        let opens =
            !s[i].in_string && !s[i].cont && (t.starts_with("\"\"\"") || t.starts_with("'''"));
        if after_colon && opens {
            out[i] = true;
            i += 1;
            while i < lines.len() && s[i].in_string {
                out[i] = true;
                i += 1;
            }
            after_colon = false;
            continue;
        }
        after_colon = !s[i].in_string && s[i].colon;
        i += 1;
    }
    out
}

/// A line opening a definition closed by `end` ([`is_end_closer`]): Ruby's and Crystal's `def`,
/// `class` or `module` without a Python `:` or a `{` (not a one-line `def x = y` nor `class A;
/// end`), Elixir's `do` blocks, Lua's and Julia's `function`, a Fortran procedure.
pub(super) fn is_end_opener(t: &str) -> bool {
    let t = t
        .strip_prefix("private ")
        .or_else(|| t.strip_prefix("protected "))
        .or_else(|| t.strip_prefix("public "))
        .or_else(|| t.strip_prefix("local "))
        .unwrap_or(t);
    let word = t.split([' ', '(']).next().unwrap_or("");
    // Elixir's one-line forms (`def f(x), do: x`) open no block; its block forms end in `do`.
    let elixir = END_KEYWORDS_ELIXIR.contains(&word);
    // A Ruby keyword stands before a space and a name: not Fortran's `class(shape_t), intent(in)
    // :: self` nor its `module procedure :: parse` (a declaration, `::` between spaces).
    ((matches!(word, "def" | "class" | "module")
        && t[word.len()..].starts_with(' ')
        && !t.contains(" :: "))
        || (elixir && t.ends_with(" do"))
        || fortran_procedure(t)
        || (word == "function" && t.contains('('))
        || (t.contains("= function(") && !word.is_empty()))
        && !t.ends_with(':')
        && !t.ends_with('{')
        && !t.ends_with(" end")
        && !t.ends_with("; end")
        && !(word == "def" && t.contains(") ="))
        && !t.starts_with("class <<")
}

/// A Fortran procedure's first line: `subroutine name(`, `program name`, or `function name(`
/// after its prefixes and result type (`pure logical function eq(a, b)`, `module subroutine`,
/// `real(dp) function norm(x)`), closed by `end subroutine name` ([`is_end_closer`]).
fn fortran_procedure(t: &str) -> bool {
    let mut words = t.split_whitespace().peekable();
    // `real(dp)`, `type(string_type)`: a type and its parameters.
    while words
        .next_if(|w| FORTRAN_PREFIXES.contains(&w.split('(').next().unwrap_or(w)))
        .is_some()
    {}
    words.next().is_some_and(|w| FORTRAN_UNITS.contains(&w))
        && words
            .next()
            .is_some_and(|name| name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '('))
}

/// Words that may stand before a Fortran procedure's keyword: attributes and result types.
const FORTRAN_PREFIXES: &[&str] = &[
    "pure",
    "impure",
    "elemental",
    "recursive",
    "non_recursive",
    "module",
    "integer",
    "real",
    "logical",
    "complex",
    "character",
    "double",
    "precision",
    "type",
    "class",
];

/// A line closing a block that `end` closes: `end`, or Fortran's `end subroutine name`, `end
/// function`, `end module name`, `end program` (also written `endsubroutine`).
pub(super) fn is_end_closer(t: &str) -> bool {
    if t == "end" {
        return true;
    }
    let rest = t.strip_prefix("end").unwrap_or("");
    let kind = rest.split_whitespace().next().unwrap_or("");
    kind == "module" || FORTRAN_UNITS.contains(&kind)
}

/// The Fortran blocks that define a procedure or a program: opened by [`fortran_procedure`] and
/// closed by `end` and their kind ([`is_end_closer`]).
const FORTRAN_UNITS: &[&str] = &["subroutine", "function", "program", "submodule"];

/// Elixir's definitions that open a `do ... end` block.
const END_KEYWORDS_ELIXIR: &[&str] = &[
    "defmodule",
    "defp",
    "defmacro",
    "defmacrop",
    "defimpl",
    "defprotocol",
    "defguard",
];

/// The keywords that start an F# or OCaml definition (`let rec`, `static member`, `type X() =`,
/// `module Routing =`, `and`, a constructor's `new`), first on its line.
const ML_DEFINITION_KEYWORDS: &[&str] = &[
    "let",
    "member",
    "override",
    "abstract",
    "default",
    "static",
    "type",
    "module",
    "and",
    "new",
    "interface",
];

/// True when `t` (a trimmed line) starts with an ML definition keyword
/// ([`ML_DEFINITION_KEYWORDS`]).
pub(super) fn is_ml_definition(t: &str) -> bool {
    ML_DEFINITION_KEYWORDS.contains(&first_word(t))
}

/// An F# or OCaml definition whose body follows on deeper lines: an ML definition keyword
/// ([`ML_DEFINITION_KEYWORDS`]) first and a lone `=` last (`let parse (s : string) =`, not
/// `let x = 1` nor `a <= b`), or a type extended or implemented `with` members (`type
/// HttpContext with`, `interface IDisposable with`).
pub(super) fn is_ml_opener(t: &str) -> bool {
    let lone_equals = t
        .len()
        .checked_sub(1)
        .is_some_and(|at| indent::is_lone_equals(t.as_bytes(), at));
    (lone_equals && is_ml_definition(t))
        || (t.ends_with(" with") && matches!(first_word(t), "type" | "interface" | "and"))
}

/// The first whitespace-separated word of `t`.
fn first_word(t: &str) -> &str {
    t.split_whitespace().next().unwrap_or("")
}

pub(super) fn is_py_opener(t: &str) -> bool {
    t.ends_with(':')
        && (t.starts_with("def ")
            || t.starts_with("class ")
            || t.starts_with("async def ")
            || t.starts_with("if ")
            || t.starts_with("for "))
}

/// Marks the file header (leading comments, not the doc comment of the first item) and returns
/// the index of the first line after it. `in_string` tells lines inside a module docstring.
pub(super) fn header(
    lines: &[&str],
    comment: &[bool],
    roles: &mut [Role],
    in_string: impl Fn(usize) -> bool,
) -> usize {
    let n = lines.len();
    let mut end = 0;
    while end < n {
        let t = trimmed(lines[end]);
        let docstring_start = end == first_non_blank(lines)
            && (t.starts_with("\"\"\"") || t.starts_with("'''") || t.starts_with("r\"\"\""));
        if t.is_empty()
            || comment[end]
            || t.starts_with("#!")
            || docstring_start
            || in_string(end)
            || t.starts_with("//!")
        {
            end += 1;
        } else {
            break;
        }
    }
    // A comment block touching the first code line documents that item, unless it is `//!`.
    let mut cut = end;
    while cut > 0
        && !is_blank(lines[cut - 1])
        && comment[cut - 1]
        && !trimmed_start(lines[cut - 1]).starts_with("//!")
        && !in_string(cut - 1)
    {
        cut -= 1;
    }
    // Keep the header's first paragraph (its title, or the copyright line of a licence).
    let mut kept = 0;
    for (role, line) in roles.iter_mut().zip(lines).take(cut) {
        if *role != Role::Loose {
            continue;
        }
        let empty_comment = line
            .trim()
            .trim_matches(['/', '!', '*', '#', '"', '\'', '-'])
            .trim()
            .is_empty();
        if kept == HEADER_KEEP || (kept > 0 && empty_comment) {
            break;
        }
        *role = Role::Header;
        kept += 1;
    }
    cut
}

pub(super) fn first_non_blank(lines: &[&str]) -> usize {
    lines
        .iter()
        .position(|l| !is_blank(l))
        .unwrap_or(lines.len())
}

/// What a definition header introduces.
#[derive(PartialEq, Eq)]
pub(super) enum Kind {
    Container,
    Import,
    Unit,
}

/// Classifies a header by its first keyword after modifiers.
pub(super) fn classify(first_line: &str) -> Kind {
    let word = first_keyword(first_line);
    match word {
        "impl" | "trait" | "mod" | "class" | "namespace" | "interface" | "extern" | "object"
        | "module" | "protocol" | "extension" | "actor" | "defmodule" | "defprotocol"
        | "defimpl" => Kind::Container,
        "use" | "import" | "from" | "#include" | "require" | "using" | "package" => Kind::Import,
        _ => Kind::Unit,
    }
}

/// Words that may stand before a declaration's keyword or name (visibility and other modifiers).
const MODIFIERS: &[&str] = &[
    "pub",
    "export",
    "default",
    "async",
    "unsafe",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "sealed",
    "partial",
    "open",
    "override",
    "inline",
    "virtual",
    "const",
    "declare",
    "data",
    "case",
    "local",
];

/// The first word of a declaration after visibility and other modifiers.
pub(super) fn first_keyword(line: &str) -> &str {
    // A byte order mark before the first line's first word is no part of it.
    let mut rest = line.trim_start().trim_start_matches('\u{feff}');
    loop {
        if let Some(r) = rest.strip_prefix("pub(") {
            rest = r
                .split_once(')')
                .map_or("", |(_, after)| after)
                .trim_start();
            continue;
        }
        if let Some(r) = rest.strip_prefix("extern \"") {
            let after = r
                .split_once('"')
                .map_or("", |(_, after)| after)
                .trim_start();
            if after.starts_with('{') {
                return "extern";
            }
            rest = after;
            continue;
        }
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#' || c == '!'))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        if MODIFIERS.contains(&word) && rest[word_end..].starts_with(' ') {
            rest = rest[word_end..].trim_start();
            continue;
        }
        return word;
    }
}

/// The line of a definition's signature that names it: the first, unless that line names nothing
/// by itself and a later one of the signature does (C's return type on a line of its own, `int`
/// above `cmd_join_pane_exec(struct cmd *self)`; C++'s `template <typename T>` above the
/// function): then the first later line that opens a parameter list.
pub(crate) fn naming_line<'a>(lines: &[&'a str], sig: &Range<usize>) -> &'a str {
    let Some(&first) = lines.get(sig.start) else {
        return "";
    };
    let t = first.trim();
    // C's BSD and GNU style: a return type alone (`static enum cmd_retval`, `const char *`),
    // the name opening its parameter list at the start of the next line.
    if sig.len() > 1
        && !t.contains(['(', '{', '=', ';', ':', ','])
        && let Some(&next) = lines.get(sig.start + 1)
        && opens_parameters(next)
    {
        return next;
    }
    let names_nothing = first_keyword(t) == "template"
        || !(t.contains('(') || t.contains('{') || label_with(t, false).is_some());
    if sig.len() > 1 && names_nothing {
        let end = sig.end.min(lines.len());
        let later = &lines[sig.start + 1..end];
        // The name before its parameters, past a return type that holds parentheses of its own
        // (`typename std::enable_if<sizeof(T) == 8, bool>::type` above `format(T value) {`).
        if let Some(&line) = later.iter().find(|l| opens_parameters(l)).or_else(|| {
            later
                .iter()
                .find(|l| l.contains('(') || label_with(l, false).is_some())
        }) {
            return line;
        }
    }
    first
}

/// True when `line` starts with a (possibly qualified) name before `(`: `foo(int x)`,
/// `Widget::resize(int w,`, `*dup_string(const char *s)`, GNU's `main (int argc,`.
fn opens_parameters(line: &str) -> bool {
    let t = line.trim_start().trim_start_matches(['*', '&']);
    let name_end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '~'))
        .unwrap_or(t.len());
    name_end > 0
        && t[..name_end].starts_with(|c: char| c.is_alphabetic() || c == '_')
        && t[name_end..].trim_start().starts_with('(')
}

/// The label of each unit of `o`, in order, as markers write it ([`label`] of its
/// [`naming_line`]).
pub(crate) fn unit_labels(lines: &[&str], o: &Outline) -> Vec<Option<String>> {
    o.units
        .iter()
        .map(|u| {
            let naming = naming_line(lines, &u.sig);
            label(naming).or_else(|| {
                // `typedef struct {` ... `} uv_buf_t;`: named where it closes.
                let last = u.close.unwrap_or(u.body.end.max(1) - 1);
                (first_keyword(trimmed(naming)) == "typedef")
                    .then(|| typedef_close_name(lines.get(last)?))
                    .flatten()
                    .map(|n| format!("typedef {n}"))
            })
        })
        .collect()
}

/// The name a definition's first signature line defines: the word after its keyword (`fn`,
/// `def`, `func` past a Go receiver, `class`, `struct`, `type`, ...), else the last identifier
/// before the first `(`, `<`, `=`, `:` or `{` (JavaScript methods and assigned functions:
/// `render(x) {`, `self.render = function`, `render: function`). `None` when there is none.
pub(crate) fn defined_name(sig: &str) -> Option<&str> {
    let t = sig.trim_start();
    if let Some((_, name)) = ada::header_name(t) {
        return Some(name);
    }
    let keyword = first_keyword(t);
    if DEFINING_KEYWORDS.contains(&keyword) || nim_definition(keyword, t) {
        let at = t.find(keyword).map_or(0, |k| k + keyword.len());
        if let Some(decided) = after_keyword(keyword, t[at..].trim_start()) {
            return decided;
        }
    }
    if let Some((head, _)) = t.split_once("<-")
        && let name = head.trim_end()
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        // R's names hold dots: `setequal.data.frame <- function(x, y)` is one name.
        return Some(name);
    }
    let cut = t.find(['(', '<', '=', ':', '{']).unwrap_or(t.len());
    trailing_ident(&t[..cut]).filter(|&name| name != "function")
}

/// Keywords a definition's name follows ([`defined_name`]).
const DEFINING_KEYWORDS: &[&str] = &[
    "fn",
    "def",
    "func",
    "fun",
    "function",
    "class",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "interface",
    "typedef",
    "const",
    "let",
    "var",
    "val",
    "static",
    "sub",
    "defp",
    "defmacro",
    "defmacrop",
    "defmodule",
    "defimpl",
    "defprotocol",
    "module",
];

/// The name after a defining `keyword`, `rest` being the signature past it: `Some` when the
/// keyword settles it (a name, or `None` for none), `None` when it does not (a `function`
/// keyword followed by no name: `function (x) {`, read like any other line).
fn after_keyword<'a>(keyword: &str, mut rest: &'a str) -> Option<Option<&'a str>> {
    if keyword == "typedef" {
        return Some(typedef_name(rest));
    }
    if keyword == "func" {
        if rest.starts_with('(') {
            // Go's receiver: `func (s *Server) Serve(`.
            rest = rest.split_once(')').map_or("", |(_, r)| r).trim_start();
        }
        if let Some(op) = swift_operator(rest) {
            return Some(Some(op));
        }
    }
    if rest.starts_with('<') {
        // Kotlin's type parameters before the name: `fun <T> parse(`.
        rest = skip_generics(rest).trim_start();
    }
    if keyword == "fun" {
        // An extension function is named after its receiver: `fun String.trimEnd(`.
        let cut = rest.find(['(', '=', ':', '{']).unwrap_or(rest.len());
        return Some(trailing_ident(&rest[..cut]));
    }
    if keyword == "def"
        && let Some(op) = operator_method(rest)
    {
        return Some(Some(op));
    }
    rest = rest.trim_start_matches(['*', '&']);
    match keyword {
        "let" | "val" => {
            // ML's bindings put their modifiers after the keyword: `let rec helper x =`, `let
            // private parse`, `let inline (|>)`, `let mutable count` (OCaml, F#).
            while let Some((word, after)) = rest.split_once(' ')
                && ML_BINDING_MODIFIERS.contains(&word)
            {
                rest = after.trim_start();
            }
        }
        "defmodule" | "defimpl" | "defprotocol" | "module" => {
            // A module's path: `defmodule Phoenix.CodeReloader.Server do`, Elm's `module
            // VirtualDom.Styled exposing`, Ruby's `module Rack::Utils`.
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
                .unwrap_or(rest.len());
            return Some((end > 0).then(|| rest[..end].trim_end_matches(['.', ':'])));
        }
        // Elm's `type alias Model =`.
        "type" => rest = rest.strip_prefix("alias ").map_or(rest, str::trim_start),
        "function" => {
            if let Some(open) = rest.find('(')
                && rest[..open].contains(['.', ':'])
            {
                // Lua's `function M.parse(` and `function Parser:next(`: the last name.
                return Some(trailing_ident(&rest[..open]));
            }
            rest = skip_sv_function_words(rest);
        }
        _ => {}
    }
    if let Some(mut end) = ident_end(rest) {
        // PowerShell's verb-noun names: `function Get-ChildItemSize {`.
        while keyword == "function"
            && rest[end..].starts_with('-')
            && let Some(more) = ident_end(&rest[end + 1..])
        {
            end += 1 + more;
        }
        return Some(Some(&rest[..end]));
    }
    (keyword != "function").then_some(None)
}

/// Where the identifier that starts `s` ends (letters, digits, `_`, `$`), if it is not empty.
fn ident_end(s: &str) -> Option<usize> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    (end > 0).then_some(end)
}

/// Swift's operator functions: `static func == (lhs:`, `func <=(lhs:` (not type parameters,
/// which Swift writes after the name). `rest` is what follows `func`.
fn swift_operator(rest: &str) -> Option<&str> {
    let end = rest
        .find(|c: char| !"=+-*/<>!~%&|^?.".contains(c))
        .unwrap_or(rest.len());
    (end > 0 && rest[end..].trim_start().starts_with('(')).then(|| &rest[..end])
}

/// Ruby's operator methods: `def [](key)`, `def []=(k, v)`, `def <=>(other)`; Scala's before
/// their type parameters: `def ~~[V](p: P[V])` is `~~`. `rest` is what follows `def`.
fn operator_method(rest: &str) -> Option<&str> {
    let end = if let Some(after) = rest.strip_prefix("[]") {
        2 + usize::from(after.starts_with('='))
    } else {
        rest.find(|c: char| !"=+-*/<>!~%&|^@".contains(c))
            .unwrap_or(rest.len())
    };
    (end > 0).then(|| &rest[..end])
}

/// SystemVerilog's lifetime and return type before a function's name: `function void flush();`,
/// `function automatic logic [31:0] decode(` ([`SV_FUNCTION_WORDS`], each with its range).
fn skip_sv_function_words(mut rest: &str) -> &str {
    while let Some(after) = SV_FUNCTION_WORDS
        .iter()
        .find_map(|w| rest.strip_prefix(w).filter(|a| a.starts_with([' ', '['])))
    {
        rest = after.trim_start();
        if rest.starts_with('[') {
            rest = skip_balanced(rest, '[', ']').unwrap_or("").trim_start();
        }
    }
    rest
}

/// SystemVerilog's words between `function` and the name: a lifetime and a return type
/// ([`defined_name`]).
const SV_FUNCTION_WORDS: &[&str] = &[
    "automatic",
    "static",
    "void",
    "logic",
    "bit",
    "int",
    "integer",
    "byte",
    "shortint",
    "longint",
    "real",
    "string",
    "signed",
    "unsigned",
];

/// Words between `let` (or `val`) and the name it binds ([`defined_name`]). `mut` is Rust's.
const ML_BINDING_MODIFIERS: &[&str] = &[
    "rec", "private", "inline", "mutable", "mut", "lazy", "internal", "public",
];

/// The name a C `typedef` defines, from what follows the keyword: a function pointer's
/// (`void (*uv_close_cb)(uv_handle_t*);`), the last word of a one-line alias (`unsigned long
/// uv_rid_t;`), else a struct, enum or union's tag (`struct uv_buf_s {`). `None` for an
/// anonymous one (`struct {`): its name is on its closing line ([`typedef_close_name`]).
fn typedef_name(rest: &str) -> Option<&str> {
    if let Some(p) = rest.find("(*") {
        return Some(leading_word(rest[p + 2..].trim_start())).filter(|w| !w.is_empty());
    }
    if let Some(semi) = rest.find(';') {
        let head = rest[..semi].split('[').next().unwrap_or("").trim_end();
        return trailing_ident(head);
    }
    let mut words = rest.split_whitespace();
    match words.next()? {
        "struct" | "enum" | "union" | "class" => {
            Some(leading_word(words.next()?)).filter(|w| !w.is_empty())
        }
        _ => None,
    }
}

/// The identifier `s` starts with (letters, digits, `_`; empty when none): `uv_buf_s` of
/// `uv_buf_s {`.
pub(super) fn leading_word(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The name an anonymous `typedef struct {` defines, on the line that closes it: `} uv_buf_t;`.
fn typedef_close_name(line: &str) -> Option<&str> {
    let t = line.trim();
    let inner = t.strip_prefix('}')?.strip_suffix(';')?.trim();
    let name = inner.rsplit(',').next()?.trim().trim_start_matches('*');
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// Keywords a definition's label keeps before its name (`fn parse_escape`, `class Cookie`): what
/// the language writes, so the model reads the label as it would read the signature.
pub(super) const LABEL_KEYWORDS: &[&str] = &[
    "fn",
    "def",
    "func",
    "fun",
    "function",
    "class",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "interface",
    "typedef",
    "mod",
    "module",
    "namespace",
    "object",
    "protocol",
    "extension",
    "actor",
    "record",
    "const",
    "let",
    "var",
    "val",
    "macro_rules!",
    "sub",
    "defp",
    "defmacro",
    "defmacrop",
    "defmodule",
    "defimpl",
    "defprotocol",
];

/// Nim's definition keywords. Only on a line ending with `=` (a definition and its body), since
/// C++ writes `iterator` as a type: `iterator out() {` is `out()`.
const NIM_KEYWORDS: &[&str] = &[
    "proc",
    "func",
    "iterator",
    "method",
    "converter",
    "macro",
    "template",
];

/// Whether `keyword` starts a Nim definition on line `t` ([`NIM_KEYWORDS`]).
fn nim_definition(keyword: &str, t: &str) -> bool {
    NIM_KEYWORDS.contains(&keyword) && t.trim_end().ends_with('=')
}

/// A label longer than this many bytes is cut (a generated name, a long `impl` header).
const MAX_LABEL_BYTES: usize = 48;

/// How a marker names the definition whose signature starts with `sig`: its keyword and name as
/// the language writes them (`fn parse_escape`, `def _check_width`, `class Cookie`, `impl Display
/// for Foo`), or the name with `()` where the keyword is a type or absent (Java, C, C# methods,
/// JavaScript methods: `parse()`). `None` when the line defines no name.
pub(crate) fn label(sig: &str) -> Option<String> {
    label_with(sig, true)
}

/// [`label`], with the names found only by [`declared`] (operators, assigned blocks, C#
/// properties) when `declared_too`.
fn label_with(sig: &str, declared_too: bool) -> Option<String> {
    let t = trimmed(sig);
    if let Some(block) = labelled_block(t) {
        return Some(block);
    }
    let keyword = first_keyword(t);
    if BLOCK_OPENERS.contains(&keyword) {
        return None;
    }
    if keyword == "template" && !nim_definition(keyword, t) {
        // C++: `template <typename T> struct formatter<T> {` is labelled as the struct.
        let at = t.find("template").map_or(0, |k| k + "template".len());
        let rest = t[at..].trim_start();
        return rest
            .starts_with('<')
            .then(|| label_with(skip_generics(rest), declared_too))
            .flatten();
    }
    if let Some(selector) = objc_method(t) {
        return Some(selector);
    }
    if let Some((kind, name)) = ada::header_name(t) {
        return Some(cut_label(format!("{kind} {name}")));
    }
    let text = if keyword == "impl" {
        impl_label(t)?
    } else if keyword == "namespace" {
        namespace_label(t)?
    } else if keyword == "class"
        && let Some(at) = t.find("class ")
        && let rest = t[at + "class ".len()..].trim_start()
        && matches!(
            first_word(rest),
            "function" | "procedure" | "constructor" | "destructor" | "operator"
        )
    {
        // Pascal's class methods: `class function TJwt.Verify(const Token: string)` is a
        // function.
        return label_with(rest, declared_too);
    } else if keyword == "def"
        && let Some(name) = ruby_method_name(t)
    {
        format!("def {name}")
    } else if keyword == "proc"
        && let Some(name) = tcl_proc_name(t)
    {
        format!("proc {name}")
    } else if LABEL_KEYWORDS.contains(&keyword) || nim_definition(keyword, t) {
        format!("{keyword} {}", defined_name(t)?)
    } else if let Some(name) = made_by_call(t) {
        name
    } else {
        call_label(t, declared_too)?
    };
    Some(cut_label(text))
}

/// `impl<T: X> Display for Foo<T> {` -> `impl Display for Foo`; `None` for an `impl` naming
/// nothing.
fn impl_label(t: &str) -> Option<String> {
    let at = t.find("impl").map_or(0, |k| k + 4);
    let mut rest = t[at..].trim_start();
    if rest.starts_with('<') {
        rest = skip_generics(rest).trim_start();
    }
    let head: String = rest
        .split(['{', '<'])
        .next()
        .unwrap_or("")
        .split(" where ")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!head.is_empty()).then(|| format!("impl {head}"))
}

/// A namespace by its whole path (`namespace AutoMapper.Mappers`, `namespace
/// PHPMailer\PHPMailer;`, `namespace fmt::detail {`); C++'s `namespace {` as compilers and
/// debuggers call it.
fn namespace_label(t: &str) -> Option<String> {
    let at = t.find("namespace").map_or(0, |k| k + "namespace".len());
    let rest = t[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '\\' | ':')))
        .unwrap_or(rest.len());
    match &rest[..end] {
        "" if rest.starts_with('{') => Some("(anonymous namespace)".to_owned()),
        "" => None,
        path => Some(format!("namespace {path}")),
    }
}

/// A method or function whose keyword is a type (Java, C, C#) or absent (JavaScript): the
/// identifier right before its parameters (`List<Split> getSplits(` -> getSplits, `<T> T get(`
/// -> get), or an arrow function's name (`handler = (req) =>`). A line without parameters names
/// nothing (a signature's continuation: `mut line: &str,`), unless `declared_too` and it
/// declares something ([`declared`]).
fn call_label(t: &str, declared_too: bool) -> Option<String> {
    let named = t.find('(').and_then(|open| {
        let head = strip_type_arguments(t[..open].trim_end());
        // Nim marks an exported name with `*`: `proc parse*(`.
        let head = match head.strip_suffix('*') {
            Some(name) if name.ends_with(|c: char| c.is_alphanumeric() || c == '_') => name,
            _ => head,
        };
        trailing_ident(head)
            .filter(|n| {
                // After a return type, a control word or modifier is a method's name
                // (`Elements select(`, `Connection data(`, `iterator node_data::begin(`).
                let before = head[..head.len() - n.len()].trim_end();
                // `name <- function(` (R), `exports.name = function(`: named below.
                // A modifier alone before its parameters and a block is a method's name
                // (Vue's `data() {`, `open() {`), not a modifier.
                let method = before.is_empty()
                    && is_modifier(n)
                    && *n != "async"
                    && (t.ends_with(") {") || t.ends_with("){"));
                !matches!(*n, "operator" | "function")
                    && (after_type(before)
                        || method
                        || !(BLOCK_OPENERS.contains(n) || is_modifier(n)))
            })
            .or_else(|| {
                (t.contains("=>") || t.contains("function"))
                    .then(|| defined_name(t))
                    .flatten()
            })
    });
    match named {
        Some(name) => Some(format!("{name}()")),
        None if declared_too => declared(t),
        None => None,
    }
}

/// A Tcl procedure's name as `proc` writes it, its namespace included (`proc ::ncgi::decode {str}
/// {` -> `::ncgi::decode`): a word followed by its braced (or bare) argument list. `None` for
/// Nim's `proc parse*(s: string) =`, whose name [`defined_name`] takes.
fn tcl_proc_name(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("proc ")?.trim_start();
    // Never 0: `rest` starts with what follows the spaces after `proc`.
    let end = rest.find(char::is_whitespace)?;
    let (name, args) = (&rest[..end], rest[end..].trim_start());
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.');
    (name.chars().all(word)
        && (args.starts_with('{') || args.starts_with(|c: char| c.is_alphanumeric()))
        && !t.trim_end().ends_with('='))
    .then_some(name)
}

/// A Ruby or Crystal method's name as `def` writes it, with its receiver and its `?`, `!` or `=`
/// (`def self.settings` -> `self.settings`, `def static!(path)` -> `static!`, `def name=(v)` ->
/// `name=`); `None` for an operator (`def [](key)`: [`defined_name`]). The name ranked and
/// called stays [`defined_name`]'s (`settings`, `static`).
fn ruby_method_name(t: &str) -> Option<&str> {
    let at = t.find("def ")? + "def ".len();
    let rest = t[at..].trim_start();
    let ident_end = |s: &str| {
        s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut end = ident_end(rest);
    if end == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // A receiver: `self.`, `Base.`.
    if rest[end..].starts_with('.') {
        let more = ident_end(&rest[end + 1..]);
        if more == 0 {
            return None;
        }
        end += 1 + more;
    }
    let after = &rest[end..];
    if after.starts_with(['?', '!'])
        || (after.starts_with('=') && !after[1..].starts_with(['=', '~', '>']))
    {
        end += 1;
    }
    Some(&rest[..end])
}

/// `text` cut to [`MAX_LABEL_BYTES`] (at a character boundary, with `…`) when longer.
pub(super) fn cut_label(text: String) -> String {
    if text.len() <= MAX_LABEL_BYTES {
        return text;
    }
    let mut end = MAX_LABEL_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A block named by a word and quoted labels (HCL, Terraform; Pester's tests): `resource
/// "aws_s3_bucket" "logs" {` -> `resource "aws_s3_bucket" "logs"`, `module "vpc" {` -> `module
/// "vpc"`, `Describe 'Public API' {` -> `Describe 'Public API'`.
fn labelled_block(t: &str) -> Option<String> {
    let head = t.strip_suffix('{')?.trim_end();
    let (word, mut rest) = head.split_once(' ')?;
    let lower = word.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    // Pester's `Describe`, `Context`, `It`: a capital, then letters.
    let capital = word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_alphabetic());
    if word.is_empty() || !(lower || capital) {
        return None;
    }
    let mut labels = 0;
    while let Some(quoted) = rest.trim_start().strip_prefix(['"', '\'']) {
        let quote = if rest.trim_start().starts_with('"') {
            '"'
        } else {
            '\''
        };
        let end = quoted.find(quote)?;
        rest = &quoted[end + 1..];
        labels += 1;
    }
    (labels > 0 && rest.trim().is_empty()).then(|| cut_label(head.to_owned()))
}

/// The name a definition made by a call is assigned to, as the assignment writes it: `const
/// ChipRoot = styled('div', {` -> `const ChipRoot`, `export const selectUser = createSelector(`
/// -> `const selectUser`, `static ref RE: Regex = Regex::new(` -> `static RE`, Java's
/// `TypeAdapter<Number> DOUBLE = new TypeAdapter<Number>() {` -> `DOUBLE`. The function that
/// makes it (`styled`, `forwardRef`, `createSelector`) names what many definitions of a file
/// share, not this one. `None` for a function expression or an arrow's parameters (`= function(`,
/// `= async (req) =>`), which name it otherwise.
fn made_by_call(t: &str) -> Option<String> {
    let t = t.strip_prefix("export ").map_or(t, str::trim_start);
    let open = t.find('(')?;
    let eq = assignment(t)?;
    let callee = t[eq + 1..open].trim();
    let callee = callee.strip_prefix("new ").map_or(callee, str::trim_start);
    let callee = strip_type_arguments(callee);
    let plain = !callee.is_empty()
        && callee
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$'))
        && !matches!(callee, "function" | "async" | "func" | "fun" | "lambda");
    if plain { assigned(t, eq) } else { None }
}

/// True when `before` (the text before a name and its parameters) ends with a type or a
/// qualifier rather than with a keyword: `public static Elements`, `node_data::`, `T[]`.
fn after_type(before: &str) -> bool {
    if before.ends_with("::") || before.ends_with('.') {
        return true;
    }
    if !before
        .ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '>' | ']' | '*' | '&' | '?'))
    {
        return false;
    }
    let last = before
        .rsplit(|c: char| c.is_whitespace() || c == '}' || c == ';')
        .next()
        .unwrap_or("");
    // `for x in items(`: `in` ends no type either.
    !(is_control(last) || is_modifier(last) || last == "in")
}

/// `t` past its leading modifiers (`public companion object {` -> `companion object {`).
fn strip_modifiers(t: &str) -> &str {
    let mut rest = t;
    while let Some((word, after)) = rest.split_once(' ') {
        if !is_modifier(word) {
            break;
        }
        rest = after.trim_start();
    }
    rest
}

/// An Objective-C method's label, its kind and first selector part: `- (NSInteger)count:(int)x {`
/// -> `-count:`, `+ (instancetype)shared {` -> `+shared`.
fn objc_method(t: &str) -> Option<String> {
    let kind = t.chars().next().filter(|c| matches!(c, '-' | '+'))?;
    let rest = t[1..].trim_start().strip_prefix('(')?;
    let rest = rest[rest.find(')')? + 1..].trim_start();
    let name = leading_word(rest);
    if name.is_empty() {
        return None;
    }
    let colon = if rest[name.len()..].starts_with(':') {
        ":"
    } else {
        ""
    };
    Some(format!("{kind}{name}{colon}"))
}

/// `head` without the type parameters that end it: C#'s and TypeScript's generic methods put
/// them after the name (`TDestination Map<TDestination>` -> `TDestination Map`).
fn strip_type_arguments(head: &str) -> &str {
    // An assignment's `new TypeAdapter<Number>()` calls a constructor: no name of a definition.
    if !head.ends_with('>') || head.ends_with("=>") || head.ends_with("->") || head.contains('=') {
        return head;
    }
    let mut depth = 0;
    for (i, c) in head.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return head[..i].trim_end();
                }
            }
            _ => {}
        }
    }
    head
}

/// The label of a definition [`label`] finds no name for in the usual places: a C++ operator
/// (`text_style &operator&=(…)` -> `operator&=()`), a block assigned to a name (Java's
/// `TypeAdapter<Number> DOUBLE = new TypeAdapter<Number>() {` -> `DOUBLE`, Rust's `const
/// DEFAULT: Config = Config {` -> `const DEFAULT`), a C# property (`public string Name` -> `Name`),
/// Kotlin's `companion object`.
fn declared(t: &str) -> Option<String> {
    if let Some(k) = t.find("operator")
        && !t[..k].ends_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        let rest = &t[k + "operator".len()..];
        let symbol = if rest.starts_with("()") {
            "()"
        } else {
            rest.split('(').next().unwrap_or("").trim()
        };
        let plain = !symbol.is_empty()
            && !symbol.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            && symbol.len() <= 4;
        return plain.then(|| format!("operator{symbol}()"));
    }
    // Kotlin's and Java's initializer blocks: `init {`, `static {`.
    if matches!(t, "init {" | "init" | "static {" | "static") {
        return Some(t.trim_end_matches(" {").to_string());
    }
    if let Some(rest) = strip_modifiers(t).strip_prefix("companion object") {
        let name = rest.split(['{', ':']).next().unwrap_or("").trim();
        return Some(if name.is_empty() {
            "companion object".to_string()
        } else {
            format!("companion object {name}")
        });
    }
    if let Some(eq) = assignment(t) {
        return assigned(t, eq);
    }
    let open = t.find('(').unwrap_or(t.len());
    if open < t.len() || t.contains([':', ';', ',']) {
        return None;
    }
    // `public string Name` (the body on the next line): words only, the last one the name.
    let words: Vec<&str> = t.trim_end_matches('{').split_whitespace().collect();
    let typed = words.len() >= 2
        && words.iter().all(|w| {
            w.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '<' | '>' | '?' | '[' | ']'))
        });
    let name = *words.last()?;
    (typed
        && !is_control(words[0])
        && !TYPE_WORDS.contains(&name)
        && trailing_ident(name) == Some(name))
    .then(|| name.to_string())
}

/// Where the assignment of `t` is, when one comes before any parameter list (not `==`, `=>`,
/// `<=`, `>=`, `!=`).
pub(super) fn assignment(t: &str) -> Option<usize> {
    let bytes = t.as_bytes();
    let open = t.find('(').unwrap_or(t.len());
    (0..open).find(|&i| {
        bytes[i] == b'='
            && bytes.get(i + 1).is_none_or(|&c| c != b'=' && c != b'>')
            && (i == 0 || !matches!(bytes[i - 1], b'=' | b'<' | b'>' | b'!'))
    })
}

/// The name the assignment at `eq` (found by [`assignment`]) defines: `TypeAdapter<Number>
/// DOUBLE = new ...` -> `DOUBLE`, `const DEFAULT: Config = ...` -> `const DEFAULT`, `RETRIES = 3`
/// -> `RETRIES`, Fortran's `integer, parameter :: TICKS = 8` -> `TICKS`.
pub(super) fn assigned(t: &str, eq: usize) -> Option<String> {
    let left = t[..eq].trim_end();
    // Fortran declares its names after ` :: ` (`integer, parameter, private :: TICKS = int64`).
    if let Some((_, names)) = left.rsplit_once(" :: ") {
        return trailing_ident(names).map(str::to_string);
    }
    // Past a type annotation: `const DEFAULT: Config` -> `const DEFAULT`.
    let left = left.split_once(':').map_or(left, |(l, _)| l).trim_end();
    let first = left.split_whitespace().next().unwrap_or("");
    if matches!(first, "let" | "val") {
        // The bound name comes first: `let mut total =`, and ML's functions, `let rec
        // helper x y =` (OCaml, F#), whose parameters follow it.
        let name = left
            .split_whitespace()
            .skip(1)
            .find(|w| !ML_BINDING_MODIFIERS.contains(w))?;
        let end = name
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
            .unwrap_or(name.len());
        return (end > 0).then(|| format!("{first} {}", &name[..end]));
    }
    // A wildcard defines nothing: Go's `_ = x`, Haskell's `f _ = mempty`.
    let name = trailing_ident(left).filter(|n| *n != "_")?;
    Some(
        if matches!(first, "const" | "static" | "let" | "var" | "val") && first != name {
            format!("{first} {name}")
        } else {
            name.to_string()
        },
    )
}

/// Words that open a block which defines nothing (a top-level `if TYPE_CHECKING:`, `try:`,
/// `#ifdef X`, `} while (`): a block they open names no definition, and a name with parameters
/// after one is a condition or a loop, not a method (`if (`, `catch (`).
const BLOCK_OPENERS: &[&str] = &[
    "if", "elif", "else", "for", "while", "try", "except", "finally", "with", "match", "switch",
    "do", "loop", "unless", "until", "begin", "rescue", "ensure", "return", "catch", "foreach",
    "select", "when", "#if", "#ifdef", "#ifndef", "#else", "#elif",
];

/// Words that open a statement which defines nothing in some language (`throw x`, `go f()`,
/// `print x`, PHP's `echo`), beside [`BLOCK_OPENERS`]. Each is also a common method name
/// (`delete(id)`, `print()`, `include(path)`), so a name with parameters may be one of them.
const STATEMENT_WORDS: &[&str] = &[
    "throw", "raise", "yield", "await", "new", "delete", "goto", "case", "break", "continue",
    "assert", "print", "pass", "del", "defer", "go", "echo", "require", "include",
];

/// True when `word` opens a block or a statement that defines nothing ([`BLOCK_OPENERS`],
/// [`STATEMENT_WORDS`]).
pub(super) fn is_control(word: &str) -> bool {
    BLOCK_OPENERS.contains(&word) || STATEMENT_WORDS.contains(&word)
}

/// Type words that end a C return type on a line of its own (`static int`), never a name.
const TYPE_WORDS: &[&str] = &[
    "int", "void", "char", "long", "short", "unsigned", "signed", "float", "double", "bool",
    "size_t", "ssize_t", "auto", "string", "object", "struct", "enum", "union", "const",
];

/// Control-flow and statement keywords of some language that no language lets name a
/// definition, with or without parameters after them: CMake's `if(COND)` (`if()`),
/// SystemVerilog's `unique case (x)` (`case()`), C++'s `enable_if<sizeof(T) == 8>` (`sizeof()`),
/// a Vue attribute `v-if=` or Svelte's `<Label for=…>` (`if`, `for`), SQL's `END IF;`.
const NEVER_NAMES: &[&str] = &[
    "if", "else", "elif", "elsif", "elseif", "endif", "for", "foreach", "while", "switch", "case",
    "sizeof", "typeof", "alignof", "decltype", "return", "unless", "until", "goto",
];

/// Keywords that name nothing alone (Pascal's and SQL's `begin`, `DECLARE`, a bare `procedure`),
/// though some are a method's name before parameters (C++'s `begin()` and `end()`, a promise's
/// `then()`, RxJS's `do()`).
const NEVER_BARE_NAMES: &[&str] = &[
    "begin",
    "end",
    "then",
    "do",
    "declare",
    "procedure",
    "function",
    "constructor",
    "destructor",
];

/// Primitive type keywords, as written: the type a field or a return type starts with, never the
/// name of what it declares (C#'s `private string[] record;` is `record`).
const PRIMITIVE_TYPES: &[&str] = &[
    "void", "char", "int", "bool", "boolean", "float", "double", "long", "short", "unsigned",
    "signed", "byte", "string", "integer",
];

/// True when the label a marker would show names no definition, in any language: its name (the
/// last word, past `()`) is a control-flow or statement keyword ([`NEVER_NAMES`], in any case
/// before parameters: CMake's `IF(`; alone, in lower case, [`NEVER_BARE_NAMES`] too: a constant
/// may be called `IF` or `BEGIN`), a primitive type ([`PRIMITIVE_TYPES`]; after a keyword,
/// `function void` of SystemVerilog's `function void flush();`, a C type but `string` and
/// `integer`), or a number (Pascal's case label `0: begin`). Every label passes here before a
/// marker shows it ([`super::parts`]).
pub(super) fn names_no_definition(label: &str) -> bool {
    let (kind, last) = match label.rsplit_once(' ') {
        Some((kind, last)) => (Some(kind), last),
        None => (None, label),
    };
    let called = last.ends_with("()");
    let name = last.trim_end_matches("()");
    let lower = name.to_ascii_lowercase();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return kind.is_none();
    }
    match kind {
        None if called => NEVER_NAMES.contains(&lower.as_str()),
        None => {
            NEVER_NAMES.contains(&name)
                || NEVER_BARE_NAMES.contains(&name)
                || PRIMITIVE_TYPES.contains(&name)
        }
        // A keyword and its name (`def text`, `fn end`): the keyword says a definition starts,
        // so only a type in the name's place tells the name was missed.
        Some(_) => PRIMITIVE_TYPES.contains(&name) && !matches!(name, "string" | "integer"),
    }
}

/// A modifier word that may stand before a definition's name ([`MODIFIERS`], and `new` of a
/// C# `public new void F()`).
fn is_modifier(word: &str) -> bool {
    MODIFIERS.contains(&word) || word == "new"
}

/// `s` past the balanced `<...>` it starts with.
pub(super) fn skip_generics(s: &str) -> &str {
    skip_balanced(s, '<', '>').unwrap_or("")
}

/// `s` past the first group `open`...`close` it holds, nested groups inside it included
/// (`None` when the group never closes).
fn skip_balanced(s: &str, open: char, close: char) -> Option<&str> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(&s[i + c.len_utf8()..]);
            }
        }
    }
    None
}

/// A line that declares something by itself (`fn f();`, `mod m;`, `struct S;`, `type T = U;`).
pub(super) fn is_declaration(line: &str) -> bool {
    matches!(
        first_keyword(line),
        "fn" | "def"
            | "func"
            | "function"
            | "mod"
            | "struct"
            | "enum"
            | "union"
            | "type"
            | "trait"
            | "class"
            | "interface"
            | "typedef"
    )
}

/// A line that is an attribute of the definition below it: Rust's `#[...]`, Java's and Python's
/// `@Name`, C#'s `[Name]` ([`is_bracket_attribute`]), and C and C++'s on a line of their own, GNU's
/// `__attribute__((destructor))` and the standard `[[nodiscard]]`.
pub(super) fn is_attribute(t: &str) -> bool {
    t.starts_with("#[")
        || t.starts_with("#![")
        || (t.starts_with('@') && t.len() > 1 && t.as_bytes()[1].is_ascii_alphabetic())
        || is_bracket_attribute(t)
        || t.starts_with("__attribute__") && t.ends_with("))")
        || is_standard_attribute(t)
}

/// C++'s standard attribute on a line of its own: `[[nodiscard]]`, `[[gnu::always_inline]]`,
/// `[[deprecated("use g")]]`: a name (maybe namespaced) right after `[[`, then `]]` or its
/// arguments. Not a nested vector (Clojure's `[[k v] m]`).
fn is_standard_attribute(t: &str) -> bool {
    let Some(inner) = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) else {
        return false;
    };
    let end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(inner.len());
    end > 0 && inner.starts_with(|c: char| c.is_ascii_alphabetic()) && {
        let rest = &inner[end..];
        rest.is_empty() || rest.starts_with('(')
    }
}

/// C#'s attributes: a line that is one bracketed list of names, each maybe with arguments
/// (`[ApiController]`, `[Route("api/[controller]")]`, `[Fact, Trait("a", "b")]`, `[assembly:
/// InternalsVisibleTo("X")]`), its first bracket closed by its last. Not an array or a
/// destructuring (`[1, 2]`, `[a, b] = [b, a]`), a Clojure vector (`[x y]`) nor an Objective-C
/// message (`[self run];`).
fn is_bracket_attribute(t: &str) -> bool {
    if t.len() < 3 || !t.starts_with('[') || !t.ends_with(']') {
        return false;
    }
    // An attribute's name is capitalised (`Fact`, `HttpGet`), or a target names what it applies
    // to (`assembly:`, `return:`); a Clojure parameter vector (`[x y]`) or a list is neither.
    let name = leading_word(&t[1..]);
    let target = matches!(
        name,
        "assembly" | "module" | "return" | "field" | "property" | "method" | "type" | "param"
    ) && t[1 + name.len()..].starts_with(':');
    if !(name.starts_with(|c: char| c.is_ascii_uppercase()) || target)
        || !t[1 + name.len()..].starts_with([']', '(', ',', ':', '.', '<'])
    {
        return false;
    }
    skip_balanced(t, '[', ']').is_some_and(str::is_empty)
}

pub(super) fn is_import(t: &str) -> bool {
    // The keyword is a statement's (`from x import y`), not a name (`from: Option<PathBuf>,`, a
    // parameter called `use` or `package`): a space follows it.
    let t = t.trim_start_matches('\u{feff}');
    let keyword = first_keyword(t);
    let spaced = t
        .find(keyword)
        .is_some_and(|k| t[k + keyword.len()..].starts_with([' ', '\t']));
    (classify(t) == Kind::Import && spaced && !t.ends_with('{'))
        || t.starts_with("extern crate ")
        || (t.ends_with(';') && t.contains("require("))
}

/// Marks attributes and comments directly above `start` as the preamble of unit `unit`; for a
/// container (`None`) attributes stay structural and comments stay loose prose.
pub(super) fn attach_preamble(
    lines: &[&str],
    comment: impl Fn(usize) -> bool,
    roles: &mut [Role],
    start: usize,
    lo: usize,
    unit: Option<u32>,
) -> usize {
    let mut k = start;
    while k > lo && matches!(roles[k - 1], Role::Loose | Role::Attr) {
        let t = trimmed(lines[k - 1]);
        // The walk marks every line of an attribute as one (a Python decorator over several
        // lines: `@app.route(`, its arguments, `)`).
        if roles[k - 1] == Role::Attr || is_attribute(t) {
            roles[k - 1] = unit.map_or(Role::Attr, Role::Pre);
        } else if comment(k - 1) {
            if let Some(u) = unit {
                roles[k - 1] = Role::Pre(u);
            }
        } else {
            break;
        }
        k -= 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::*;

    fn roles(src: &str) -> Vec<Role> {
        let lines: Vec<&str> = src.lines().collect();
        outline(&lines).roles
    }

    #[test]
    fn python_docstrings_with_prefixes() {
        let src = r#"def a():
    u"""Unicode doc.

    More."""
    return 1

def b():
    R'''Raw doc.'''
    return 2

def c():
    f"""{x}
    """
    return 3
"#;
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let doc: Vec<usize> = (0..lines.len()).filter(|&i| o.docstring[i]).collect();
        assert_eq!(doc, [1, 2, 3, 7], "{lines:#?}");
    }

    #[test]
    fn rust_file() {
        let src = "//! Crate doc.\n\nuse std::io;\n\n/// Adds.\n#[inline]\npub fn add(\n    a: u8,\n) -> u8 {\n    a + 1\n}\n\nimpl Foo {\n    fn f(&self) {\n        x();\n    }\n    fn decl(&self);\n}\n";
        assert_eq!(
            roles(src),
            [
                Header,
                Blank,
                Import,
                Blank,
                Pre(0),
                Pre(0),
                Sig,
                Sig,
                Sig,
                Body(0),
                Body(0),
                Blank,
                Sig,
                Sig,
                Body(1),
                Body(1),
                Sig,
                Close
            ]
        );
    }

    #[test]
    fn units_have_ranges() {
        let src = "/// d\nfn a() {\n  x;\n  y;\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(
            o.units,
            vec![Unit {
                pre: 0..1,
                sig: 1..2,
                body: 2..5,
                close: Some(4),
            }]
        );
    }

    #[test]
    fn header_is_not_the_first_item_doc() {
        assert_eq!(
            roles("/// Doc of a.\nfn a() {\n  x;\n}\n"),
            [Pre(0), Sig, Body(0), Body(0)]
        );
        assert_eq!(
            roles("// License.\n\n/// Doc.\nfn a() {\n}\n"),
            [Header, Blank, Pre(0), Sig, Body(0)]
        );
    }

    #[test]
    fn python_file() {
        let src = "\"\"\"Module doc.\"\"\"\nimport os\n\nclass A:\n    # note\n    @property\n    def f(self):\n        return 1\n\n    def g(self,\n          x):\n        pass\n\nX = 1\n";
        assert_eq!(
            roles(src),
            [
                Header,
                Import,
                Blank,
                Sig,
                Pre(0),
                Pre(0),
                Sig,
                Body(0),
                Blank,
                Sig,
                Sig,
                Body(1),
                Blank,
                Loose
            ]
        );
    }

    #[test]
    fn python_body_ends_at_dedent_and_keeps_nested_blocks() {
        let src = "def f():\n    if x:\n        y()\n\n    z()\nw = 2\n";
        assert_eq!(roles(src), [Sig, Body(0), Body(0), Body(0), Body(0), Loose]);
    }

    #[test]
    fn c_style_and_js() {
        let src = "#include <stdio.h>\nint main(void)\n{\n  return 0;\n}\nclass A {\n  m() {\n    a();\n  }\n}\n";
        assert_eq!(
            roles(src),
            [
                Import,
                Sig,
                Sig,
                Body(0),
                Body(0),
                Sig,
                Sig,
                Body(1),
                Body(1),
                Close
            ]
        );
    }

    #[test]
    fn a_go_import_group_is_imports_through_its_paren() {
        let src = "package gin\n\nimport (\n\t\"bytes\"\n\n\t\"github.com/x/y\"\n)\n\nvar (\n\ta = 1\n)\n\nfunc f() {\n\tx()\n}\n";
        assert_eq!(
            roles(src),
            [
                Import,
                Blank,
                Import,
                Import,
                Blank,
                Import,
                Import,
                Blank,
                Loose,
                Loose,
                Loose,
                Blank,
                Sig,
                Body(0),
                Body(0)
            ]
        );
    }

    #[test]
    fn expression_bodied_functions_are_definitions() {
        let src = "package a\n\n/** Doc. */\nfun f(x: Int): Int =\n    x + 1\n\noverride fun toString() = name\nclass C {\n    public int Count() => items.Count;\n    list.ForEach(x => x.Go());\n    onWarn?: (w: W) => void\n    public Expression Map(Expression a,\n        Expression b) =>\n        Call(a, b);\n}\n";
        assert_eq!(
            roles(src),
            [
                Import,
                Blank,
                Pre(0),
                Sig,
                Body(0),
                Blank,
                Sig,
                Sig,
                Sig,
                Loose,
                Loose,
                Sig,
                Body(3),
                Body(3),
                Close
            ]
        );
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.units.len(), 4);
        assert!(
            is_import("\u{feff}using System;"),
            "a byte order mark hides no import"
        );
        assert_eq!(
            label(naming_line(&lines, &o.units[1].sig)).as_deref(),
            Some("fun toString")
        );
    }

    #[test]
    fn swift_types_members_and_extensions() {
        let src = "import Foundation\n\n/// A queue.\npublic final class Queue<T> {\n    private var items: [T] = []\n\n    public init(items: [T]) {\n        self.items = items\n    }\n\n    @discardableResult\n    public func pop() -> T? {\n        return items.popLast()\n    }\n\n    var count: Int {\n        items.count\n    }\n}\n\nextension Queue: CustomStringConvertible {\n    public var description: String { \"Queue(\\(count))\" }\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("init()".to_owned()),
                Some("func pop".to_owned()),
                Some("var count".to_owned())
            ]
        );
        assert_eq!(o.containers.len(), 2);
        assert_eq!(
            label(lines[o.containers[0].start]).as_deref(),
            Some("class Queue")
        );
        assert_eq!(
            label(lines[o.containers[1].start]).as_deref(),
            Some("extension Queue")
        );
        assert_eq!(
            o.roles[10],
            Role::Pre(1),
            "the attribute goes with its function"
        );
    }

    #[test]
    fn keywords_after_modifiers() {
        assert_eq!(first_keyword("pub(crate) async fn x()"), "fn");
        assert_eq!(first_keyword("pub unsafe impl<T> Send for X {"), "impl");
        assert_eq!(first_keyword("extern \"C\" {"), "extern");
        assert_eq!(first_keyword("pub const fn f()"), "fn");
        assert_eq!(first_keyword("export default class A {"), "class");
    }

    #[test]
    fn defined_names() {
        for (sig, name) in [
            (
                "pub(crate) async fn parse_header<'a>(line: &str) {",
                "parse_header",
            ),
            ("pub enum Numeric {", "Numeric"),
            ("func (r *Route) GetName() string {", "GetName"),
            ("type Route struct {", "Route"),
            ("def load(self, path):", "load"),
            ("class Store(Base):", "Store"),
            ("export default function render(x) {", "render"),
            ("  self.render = function (x) {", "render"),
            ("  render: function (x) {", "render"),
            ("  async handle(req, res) {", "handle"),
            ("const handler = (req) => {", "handler"),
        ] {
            assert_eq!(defined_name(sig), Some(name), "{sig}");
        }
        assert_eq!(defined_name("function (x) {"), None);
        assert_eq!(defined_name("⟦NO_PRUNE_BEGIN⟧ x("), Some("x"));
        assert_eq!(defined_name("é⟧("), None);
    }

    #[test]
    fn a_parameter_named_like_an_import_keyword_is_part_of_its_signature() {
        let src = "impl B {\n    fn add_str(\n        &mut self,\n        from: Option<PathBuf>,\n        gitignore: &str,\n    ) -> Result<(), E> {\n        x();\n    }\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.units[0].sig, 1..6);
        assert_eq!(
            label(lines[o.units[0].sig.start]).as_deref(),
            Some("fn add_str")
        );
        assert!(is_import("from x import y") && is_import("use std::io;"));
    }

    /// A Swift or C# `struct` holding methods is a container of them; one holding fields only
    /// stays one definition.
    #[test]
    fn a_struct_with_methods_is_a_container() {
        let src = "public struct JSON {\n    var object: Any\n\n    public init(_ object: Any) {\n        self.object = object\n    }\n\n    public static func parse(_ s: String) -> JSON {\n        return JSON(s)\n    }\n}\n\nstruct Point {\n    var x: Int\n    var y: Int\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, vec![0..11]);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("init()".to_string()),
                Some("func parse".to_string()),
                Some("struct Point".to_string())
            ]
        );
    }

    /// Elixir: `defmodule ... do` is a container, `def`/`defp ... do` blocks closed by `end` are
    /// definitions labelled as written; a one-line `def f(x), do: x` opens nothing.
    #[test]
    fn elixir_modules_and_functions() {
        let src = "defmodule Phoenix.CodeReloader.Server do\n  use GenServer\n\n  def start_link(_) do\n    GenServer.start_link(__MODULE__, :ok)\n  end\n\n  defp os_symlink(_),\n    do: \"\"\n\n  defp can_symlink?() do\n    case File.ln_s(a, b) do\n      :ok -> true\n    end\n  end\nend\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, vec![0..16]);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("def start_link".to_string()),
                Some("defp can_symlink".to_string())
            ]
        );
        assert_eq!(o.units[1].body.end, 15);
        assert_eq!(
            label(lines[0]).as_deref(),
            Some("defmodule Phoenix.CodeReloader.Server")
        );
    }

    /// An inner `/*...*/` on a `*`-led line of a KDoc does not end it, and a class header whose
    /// supertype call lists one argument a line past twelve lines is still one signature.
    #[test]
    fn kotlin_kdoc_examples_and_long_class_headers() {
        let args: String = (0..14).map(|k| format!("        a{k} = {k},\n")).collect();
        let src = format!(
            "/**\n * Example:\n *    @Test fun foo() {{ /*...*/ }}\n */\npublic class AnnotationRule :\n    StandardRule(\n{args}    ) {{\n    override fun visit(node: Node) {{\n        check(node)\n    }}\n\n    private fun check(node: Node) {{\n        node.x()\n    }}\n}}\n"
        );
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert!(o.comment[..4].iter().all(|c| *c), "{:?}", &o.comment[..5]);
        assert_eq!(
            o.containers.first().map(|c| c.start),
            Some(4),
            "{:?}",
            o.containers
        );
        assert_eq!(
            unit_labels(&lines, &o),
            [Some("fun visit".to_string()), Some("fun check".to_string())]
        );
    }

    /// Perl: `sub name {` is labelled as written.
    #[test]
    fn perl_subs_are_labelled_with_their_keyword() {
        assert_eq!(
            label("sub clearcache    {").as_deref(),
            Some("sub clearcache")
        );
        assert_eq!(label("sub import {").as_deref(), Some("sub import"));
    }

    /// Lua: `function M.f(`, `local function g(` blocks closed by `end`, named by their last
    /// name; `#` is the length operator (no comment), `--` opens a comment.
    #[test]
    fn lua_functions() {
        let src = "local M = {}\n\n-- Finds the server.\nlocal function find(url, servers)\n  for _, s in ipairs(servers) do\n    if url:sub(#s + 1) == s then\n      return s\n    end\n  end\nend\n\nfunction M.fetch(url)\n  return find(url, {})\nend\n\nreturn M\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("function find".to_string()),
                Some("function fetch".to_string())
            ]
        );
        assert_eq!((o.units[0].pre.start, o.units[0].body.end), (2, 10));
        assert_eq!(o.units[1].sig.start, 11);
    }

    /// A macro block around items (tokio's `cfg_rt! {`, `cfg_if! {`) holds definitions of its
    /// own; `macro_rules!` holds rules, not items, and stays one definition.
    #[test]
    fn a_macro_block_around_items_is_a_container() {
        let src = "cfg_io_util! {\n    /// Reads.\n    pub fn try_read_buf(&self) -> usize {\n        0\n    }\n\n    pub(crate) fn poll(&self) {\n    }\n}\n\nmacro_rules! m {\n    ($x:expr) => {\n        fn f() {}\n    };\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, vec![0..9]);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("fn try_read_buf".to_string()),
                Some("fn poll".to_string()),
                Some("macro_rules! m".to_string())
            ]
        );
    }

    /// CommonJS imports several names in one destructuring `require`: an import, like ES's
    /// `import {` block, not a definition without a name.
    #[test]
    fn a_destructuring_require_is_an_import() {
        let src = "const {\n  wrapTextMultiline,\n  lowercaseTrim,\n} = require(\"../common/utils\");\n\nconst config = {\n  a: 1,\n};\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.roles[..4], [Role::Import; 4]);
        assert_ne!(o.roles[5], Role::Import);
    }

    #[test]
    fn ruby_blocks_close_with_their_end() {
        let src = "# frozen_string_literal: true\n\nrequire 'rack'\n\nmodule Rack\n  class Lint\n    # Checks the env.\n    def check_env(env)\n      if env.nil?\n        raise 'x'\n      end\n    end\n\n    def call(env) = check_env(env)\n  end\nend\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, [4..16, 5..15]);
        assert_eq!(o.units.len(), 1);
        let u = &o.units[0];
        assert_eq!(
            (u.pre.clone(), u.sig.clone(), u.body.clone()),
            (6..7, 7..8, 8..12)
        );
        assert_eq!(u.close, Some(11));
        assert_eq!(o.roles[2], Import);
        assert_eq!(o.roles[14], Close);
        assert_eq!(o.roles[15], Close);
        assert_eq!(label(lines[7]).as_deref(), Some("def check_env"));
        // A brace language with a `class ... end`-looking line stays a brace language.
        let js = roles("class A {\n  m() {\n    x();\n  }\n}\n");
        assert_eq!(js[1], Sig);
    }

    #[test]
    fn a_signature_over_several_lines_opens_a_block_that_end_closes() {
        // Julia and Ruby: the opener is the signature's first line, its last holds no keyword.
        let julia = "function DataFrame(column_eltypes::AbstractVector{T}, cnames,\n                   nrows::Integer)::DataFrame where T<:Type\n    columns = Vector{Any}(undef, nrows)\n    if nrows > 0\n        push!(columns, 1)\n    end\n    columns\nend\n\nfunction nrow(df)\n    size(df, 1)\nend\n";
        let lines: Vec<&str> = julia.lines().collect();
        let o = outline(&lines);
        let spans: Vec<_> = o
            .units
            .iter()
            .map(|u| (u.sig.clone(), u.body.clone(), u.close))
            .collect();
        assert_eq!(spans, [(0..2, 2..8, Some(7)), (9..10, 10..12, Some(11))]);
        assert_eq!(label(lines[0]).as_deref(), Some("function DataFrame"));
        let ruby =
            "class Jar\n  def add(cookie,\n          options = {})\n    @c << cookie\n  end\nend\n";
        let lines: Vec<&str> = ruby.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.units.len(), 1);
        assert_eq!((o.units[0].sig.clone(), o.units[0].close), (1..3, Some(4)));
    }

    #[test]
    fn fsharp_definitions_open_at_their_equals_and_types_hold_their_members() {
        // F#: a type extended `with` members is a container of them; a `let` whose body is a
        // computation expression opens at its first line; a union is one definition; the `{`
        // of `task {` does not make the file a brace language.
        let fs = "module Giraffe.Core\n\nopen System\n\ntype Color =\n    | Red\n    | Blue\n\ntype HttpContext with\n    /// The service.\n    member this.GetService<'T>() =\n        this.RequestServices.GetService(typeof<'T>) :?> 'T\n\n    member this.BindAsync() =\n        task {\n            return 1\n        }\n\nlet routes = seq {\n    yield 1\n}\n\nlet rec parse (s : string) =\n    s.Trim()\n";
        let lines: Vec<&str> = fs.lines().collect();
        let o = outline(&lines);
        let spans: Vec<_> = o
            .units
            .iter()
            .map(|u| (u.pre.clone(), u.sig.clone(), u.body.clone()))
            .collect();
        assert_eq!(
            spans,
            [
                (4..4, 4..5, 5..7),
                (9..10, 10..11, 11..12),
                (13..13, 13..14, 14..17),
                (18..18, 18..19, 19..21),
                (22..22, 22..23, 23..24),
            ]
        );
        assert_eq!(o.containers, vec![8..17]);
        assert_eq!(label(lines[10]).as_deref(), Some("GetService()"));
        assert_eq!(label(lines[22]).as_deref(), Some("let parse"));
        // `<'T` is a type variable, not a quote that would hide the line's `=`; `<'a =` opens one.
        let s = super::super::indent::scan(&["member this.Get<'T>() =", "x<'a =", "s = 'T>'"]);
        assert_eq!(
            s.iter().map(|l| l.equals).collect::<Vec<_>>(),
            [true, false, false]
        );
    }

    #[test]
    fn a_definition_ending_with_equals_opens_its_indented_body() {
        // Nim: `proc f() =` and an indented body; its `if x:` blocks are the body's, not units.
        let nim = "import std/tables\n\nproc hasKey*(t: Table[string, int], dep: string): bool =\n  if dep in t:\n    return true\n  false\n\nproc getKey(t: Table[string, int],\n            dep: string): int =\n  t[dep]\n\nlet limit = 3\n";
        let lines: Vec<&str> = nim.lines().collect();
        let o = outline(&lines);
        let spans: Vec<_> = o
            .units
            .iter()
            .map(|u| (u.sig.clone(), u.body.clone()))
            .collect();
        assert_eq!(spans, [(2..3, 3..6), (7..9, 9..10)]);
        assert_eq!(label(lines[2]).as_deref(), Some("proc hasKey"));
        // A comparison or an update ending a line opens nothing.
        let s = super::super::indent::scan(&["x ==", "y <=", "z +=", "proc f() ="]);
        assert_eq!(
            s.iter().map(|l| l.equals).collect::<Vec<_>>(),
            [false, false, false, true]
        );
    }

    #[test]
    fn a_script_wrapped_in_a_block_is_a_container_of_its_shell_functions() {
        // nvm.sh: `{ ... }` around the whole script, so that it runs only once downloaded.
        let sh = "{ # the whole script\n\nnvm_echo() {\n  printf '%s' \"$*\"\n}\n\nnvm_err() {\n  nvm_echo \"$@\" >&2\n}\n\nnvm_has () {\n  type \"$1\" > /dev/null 2>&1\n}\n\n}\n";
        let lines: Vec<&str> = sh.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers.first(), Some(&(0..15)));
        assert_eq!(o.containers.len(), 1);
        let labels = unit_labels(&lines, &o);
        assert_eq!(
            labels,
            [
                Some("nvm_echo()".to_string()),
                Some("nvm_err()".to_string()),
                Some("nvm_has()".to_string())
            ]
        );
    }

    #[test]
    fn fortran_procedures_close_with_their_end_line() {
        let f90 = "module stdlib_logger\n    implicit none\ncontains\n    pure logical function is_open(self)\n        is_open = self%unit > 0\n    end function is_open\n\n    subroutine log_error(self, message)\n        call write(self, message)\n    end subroutine log_error\nend module stdlib_logger\n";
        let lines: Vec<&str> = f90.lines().collect();
        let o = outline(&lines);
        // `contains` at the module's indentation ends what the walk reads as its body; the
        // procedures after it are definitions of their own.
        let spans: Vec<_> = o.units.iter().map(|u| (u.sig.clone(), u.close)).collect();
        assert_eq!(spans, [(3..4, Some(5)), (7..8, Some(9))]);
        for (t, closes) in [
            ("end subroutine log_error", true),
            ("endfunction", true),
            ("end", true),
            ("end if", false),
            ("endpoint = url", false),
        ] {
            assert_eq!(is_end_closer(t), closes, "{t}");
        }
    }

    #[test]
    fn fortran_declarations_are_not_ruby_openers() {
        // `class(version_t), intent(in) :: lhs` declares an argument and `module procedure ::`
        // names one: counted as Ruby's `class` and `module` openers they outnumbered the `end`
        // lines, and the file (fpm's `versioning.f90`) had no outline at all.
        let mut f90 = String::from(
            "module fpm_versioning\n    interface new_version\n        module procedure :: new_version_from_int\n    end interface new_version\ncontains\n",
        );
        for name in ["equals", "greater", "less"] {
            f90.push_str(&format!("    elemental function {name}(lhs, rhs) result(ok)\n        class(version_t), intent(in) :: lhs\n        class(version_t), intent(in) :: rhs\n        logical :: ok\n        ok = size(lhs%num) > 0\n    end function {name}\n\n"));
        }
        f90.push_str("end module fpm_versioning\n");
        let lines: Vec<&str> = f90.lines().collect();
        let o = outline(&lines);
        let sigs: Vec<&str> = o.units.iter().map(|u| lines[u.sig.start].trim()).collect();
        assert_eq!(sigs.len(), 3, "{sigs:?}");
        assert!(
            sigs[1].starts_with("elemental function greater("),
            "{sigs:?}"
        );
        for t in [
            "class(version_t), intent(in) :: lhs",
            "module procedure :: parse",
        ] {
            assert!(!is_end_opener(t), "{t}");
        }
        for t in ["class Cookie < Base", "module Rack", "def call(env)"] {
            assert!(is_end_opener(t), "{t}");
        }
    }

    #[test]
    fn an_object_literal_of_methods_is_a_container_of_them() {
        let src = "export default {\n  data() {\n    return { n: 0 }\n  },\n  mounted() {\n    this.n = 1\n  },\n  methods: {\n    inc(x) {\n      return x + 1\n    },\n    dec(x) {\n      return x - 1\n    },\n  },\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let labels = unit_labels(&lines, &o);
        for name in ["inc()", "dec()"] {
            assert!(
                labels.iter().any(|l| l.as_deref() == Some(name)),
                "{labels:?}"
            );
        }
        assert_eq!(o.containers.len(), 2, "export default and methods");
        // With one method of its own beside `methods: {`, the component is still a container:
        // its `methods: {` counts as a member when it holds methods itself.
        let src = "export default {\n  name: 'Users',\n  data() {\n    return { n: 0 }\n  },\n  methods: {\n    inc(x) {\n      return x + 1\n    },\n    dec(x) {\n      return x - 1\n    },\n  },\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, vec![0..14, 5..13]);
        let labels = unit_labels(&lines, &o);
        assert!(
            labels.iter().any(|l| l.as_deref() == Some("dec()")),
            "{labels:?}"
        );
        // A key holding one method, or plain data, does not make its object a container.
        let src = "export default {\n  data() {\n    return { n: 0 }\n  },\n  computed: {\n    total() {\n      return 1\n    },\n  },\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        assert!(outline(&lines).containers.is_empty());
    }

    /// A decorator over several lines (`@app.route(`, its arguments, `)`) belongs to the
    /// function below it, as a one-line one does: it goes with it.
    #[test]
    fn a_decorator_over_several_lines_is_the_functions_preamble() {
        let src = "@app.route(\n    \"/a\",\n    methods=[\"POST\"],\n)\ndef a():\n    return 1\n\n\n@pytest.mark.parametrize(\n    \"x\",\n    [1, 2],\n)\ndef test_b(x):\n    assert x\n";
        let r = roles(src);
        assert_eq!(r[..4], [Pre(0); 4]);
        assert_eq!(r[4], Sig);
        assert_eq!(r[8..12], [Pre(1); 4]);
        assert_eq!(r[12], Sig);
    }

    /// An IIFE or AMD module wrapping named functions is a container of them, however short.
    #[test]
    fn a_module_wrapper_of_named_functions_is_a_container() {
        let src = "(function (root) {\n  function a(x) {\n    return x;\n  }\n\n  function b(x) {\n    return x;\n  }\n\n  async function c(x) {\n    return x;\n  }\n  root.lib = { a: a };\n})(this);\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers.len(), 1);
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("function a".to_string()),
                Some("function b".to_string()),
                Some("function c".to_string())
            ]
        );
        // Two callbacks in a short function do not make it one.
        let src = "function f(xs) {\n  xs.map(function (x) {\n    return x;\n  });\n  xs.forEach((x) => {\n    g(x);\n  });\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        assert!(outline(&lines).containers.is_empty());
    }

    /// A C++ class template is a class: its members are outlined one by one.
    #[test]
    fn a_class_template_is_a_container() {
        for src in [
            "template <typename T>\nclass Cache {\n public:\n  bool put(const T& v) {\n    return true;\n  }\n\n  bool drop(const T& v) {\n    return false;\n  }\n};\n",
            "template <typename T> class Cache {\n public:\n  bool put(const T& v) {\n    return true;\n  }\n\n  bool drop(const T& v) {\n    return false;\n  }\n};\n",
        ] {
            let lines: Vec<&str> = src.lines().collect();
            let o = outline(&lines);
            assert_eq!(o.containers.len(), 1, "{src}");
            assert_eq!(
                unit_labels(&lines, &o),
                [Some("put()".to_string()), Some("drop()".to_string())],
                "{src}"
            );
        }
    }

    /// C#'s attributes stand above a class or method as annotations do in Java: a class with
    /// `[ApiController]` over it is still a container of its methods.
    #[test]
    fn csharp_attributes_are_attributes() {
        for t in [
            "[ApiController]",
            "[Route(\"api/[controller]\")]",
            "[HttpPost(\"a\"), Authorize]",
            "[assembly: InternalsVisibleTo(\"Tests\")]",
            "[Theory]",
        ] {
            assert!(is_attribute(t), "{t}");
        }
        for t in [
            "[1, 2, 3]",
            "[a, b] = [b, a]",
            "[x y]",
            "[self run];",
            "[Foo] = 1",
        ] {
            assert!(!is_attribute(t), "{t}");
        }
        let src = "namespace Shop;\n\n[ApiController]\npublic class UsersController : ControllerBase\n{\n    [HttpPost(\"a\")]\n    public int A(int id)\n    {\n        return 1;\n    }\n\n    public int B(int id)\n    {\n        return 2;\n    }\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(o.containers, vec![3..16]);
        assert_eq!(o.roles[5], Role::Pre(0));
        assert_eq!(
            unit_labels(&lines, &o),
            [Some("A()".to_string()), Some("B()".to_string())]
        );
    }

    /// C and C++ attributes on a line of their own belong to the function below: its label is
    /// the function's (before, `__attribute__((destructor))` read `__attribute__()`), and a
    /// Clojure vector of vectors is no attribute.
    #[test]
    fn c_and_cpp_attribute_lines_are_the_functions_preamble() {
        for t in [
            "__attribute__((destructor))",
            "[[nodiscard]]",
            "[[gnu::always_inline]]",
            "[[deprecated(\"use at_pointer\")]]",
        ] {
            assert!(is_attribute(t), "{t}");
        }
        for t in ["[[k v] m]", "[[1 2] [3 4]]", "[[self alloc] init];", "[[]]"] {
            assert!(!is_attribute(t), "{t}");
        }
        let src = "#include <stdlib.h>\n\n__attribute__((destructor))\nstatic void free_args_mem(void) {\n  free(args_mem);\n}\n\n[[nodiscard]]\nint twice(int x) {\n  return 2 * x;\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!((o.roles[2], o.roles[7]), (Role::Pre(0), Role::Pre(1)));
        assert_eq!(
            unit_labels(&lines, &o),
            [
                Some("free_args_mem()".to_string()),
                Some("twice()".to_string())
            ]
        );
    }

    /// A definition made by a call is named by what it is assigned to, not by the function
    /// that makes it (every `styled(` of a file would read `styled()`); function expressions and
    /// arrow functions keep their own names.
    #[test]
    fn a_definition_made_by_a_call_is_named_by_its_assignment() {
        for (sig, name) in [
            ("const ChipRoot = styled('div', {", Some("const ChipRoot")),
            (
                "const Chip = React.forwardRef(function Chip(inProps, ref) {",
                Some("const Chip"),
            ),
            (
                "export const selectUser = createSelector([selectState], (state) => {",
                Some("const selectUser"),
            ),
            (
                "export const Button = React.forwardRef<HTMLButtonElement, Props>((props, ref) => {",
                Some("const Button"),
            ),
            ("const styles = StyleSheet.create({", Some("const styles")),
            (
                "static ref RE: Regex = Regex::new(r\"x\").map(|r| {",
                Some("static RE"),
            ),
            (
                "public static final TypeAdapter<Number> DOUBLE = new TypeAdapter<Number>() {",
                Some("DOUBLE"),
            ),
            (
                "handler := http.HandlerFunc(func(w http.ResponseWriter) {",
                Some("handler"),
            ),
            ("const handleKeyUp = (event) => {", Some("handleKeyUp()")),
            ("exports.parse = function(text) {", Some("parse()")),
            ("describe('Chip', () => {", Some("describe()")),
            // A method may be named like a statement word of some language.
            (
                "  async delete(id: string): Promise<void> {",
                Some("delete()"),
            ),
            ("  async echo(@Param('id') id: string) {", Some("echo()")),
            ("    print() {", Some("print()")),
            ("} catch (err) {", None),
            ("if (ready) {", None),
        ] {
            assert_eq!(label(sig).as_deref(), name, "{sig}");
        }
    }

    #[test]
    fn a_wildcard_defines_nothing() {
        for t in ["_ = fmt.Sprintf(\"%d\", n)", "freeVars' _ = mempty"] {
            assert_eq!(assigned(t, assignment(t).unwrap()), None, "{t}");
        }
        let t = "freeVars' e = freeVars' x";
        assert!(assigned(t, assignment(t).unwrap()).is_some());
    }

    #[test]
    fn a_typedef_or_namespace_is_named_by_the_name_it_defines() {
        for (sig, name) in [
            (
                "typedef void (*uv_close_cb)(uv_handle_t* handle);",
                "uv_close_cb",
            ),
            ("typedef unsigned long uv_rid_t;", "uv_rid_t"),
            ("typedef char name_t[16];", "name_t"),
            ("typedef struct uv_buf_s {", "uv_buf_s"),
            ("typedef enum uv_run_mode {", "uv_run_mode"),
        ] {
            assert_eq!(defined_name(sig), Some(name), "{sig}");
            assert_eq!(label(sig), Some(format!("typedef {name}")), "{sig}");
        }
        assert_eq!(defined_name("typedef struct {"), None);
        let src = "typedef struct {\n  char* base;\n  size_t len;\n} uv_buf_t;\n\nint uv_run(uv_loop_t* loop) {\n  return 0;\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let labels = unit_labels(&lines, &o);
        assert!(
            labels
                .iter()
                .any(|l| l.as_deref() == Some("typedef uv_buf_t")),
            "{labels:?}"
        );
        for (ns, l) in [
            ("namespace {", "(anonymous namespace)"),
            ("inline namespace v8 {", "namespace v8"),
            ("namespace detail {", "namespace detail"),
            ("namespace fmt::detail {", "namespace fmt::detail"),
            (
                "namespace PHPMailer\\PHPMailer;",
                "namespace PHPMailer\\PHPMailer",
            ),
            (
                "namespace AutoMapper.Configuration;",
                "namespace AutoMapper.Configuration",
            ),
        ] {
            assert_eq!(label(ns).as_deref(), Some(l));
        }
    }

    #[test]
    fn a_signature_is_named_by_its_line_that_names_something() {
        let bsd = [
            "static enum cmd_retval",
            "cmd_set_option_exec(struct cmd *self, struct cmdq_item *item)",
            "{",
        ];
        assert_eq!(
            label(naming_line(&bsd, &(0..3))).as_deref(),
            Some("cmd_set_option_exec()")
        );
        let gnu = ["static struct option const", "long_options (void)", "{"];
        assert_eq!(naming_line(&gnu, &(0..3)), gnu[1]);
        let ptr = [
            "static struct options_entry *",
            "*find_entry(const char *s)",
        ];
        assert_eq!(naming_line(&ptr, &(0..2)), ptr[1]);
        for (sig, l) in [
            (
                "public static Elements select(String query, Element root) {",
                "select()",
            ),
            (
                "public Connection data(String key, String value) {",
                "data()",
            ),
            ("node_iterator node_data::begin() {", "begin()"),
            ("public companion object {", "companion object"),
            ("init {", "init"),
            ("- (NSInteger)helper3:(NSInteger)x {", "-helper3:"),
            ("+ (instancetype)sharedInstance {", "+sharedInstance"),
            ("- (x) - (y)", "-"),
            ("function Get-ChildItemSize {", "function Get-ChildItemSize"),
            ("function add(a, b) {", "function add"),
            ("weighted_mean <- function(x, w) {", "weighted_mean()"),
            (
                "setequal.data.frame <- function(x, y, ...) {",
                "setequal.data.frame()",
            ),
            ("type alias Model =", "type Model"),
            (
                "module VirtualDom.Styled exposing",
                "module VirtualDom.Styled",
            ),
            ("module Rack::Utils", "module Rack::Utils"),
            ("exports.render = function(view, options) {", "render()"),
            ("def []=(key, value)", "def []="),
            ("proc ::ncgi::decode {str} {", "proc ::ncgi::decode"),
            ("proc parse_query {{query {}}} {", "proc parse_query"),
            (
                "public func <=(lhs: NSNumber, rhs: NSNumber) -> Bool {",
                "func <=",
            ),
            ("static func == (lhs: JSON, rhs: JSON) -> Bool {", "func =="),
            ("static {", "static"),
            (
                "private val cachedString: String by lazy {",
                "val cachedString",
            ),
            ("} else if (x) {", "-"),
            ("else if (ready) {", "-"),
            (
                "TDestination IMapper.Map<TDestination>(object source)",
                "Map()",
            ),
            (
                "public Task<T> RunAsync<T, U>(Func<T, U> f) where T : class",
                "RunAsync()",
            ),
            ("  parse<T extends Node>(input: string): T {", "parse()"),
            (
                "std::ostream& operator>>(std::istream& in, X& x) {",
                "operator>>()",
            ),
        ] {
            assert_eq!(label(sig).as_deref(), (l != "-").then_some(l), "{sig}");
        }
        let c = ["static int", "cmd_join_pane_exec(struct cmd *self)", "{"];
        assert_eq!(naming_line(&c, &(0..3)), c[1]);
        assert_eq!(
            label(naming_line(&c, &(0..3))).as_deref(),
            Some("cmd_join_pane_exec()")
        );
        let cpp = ["template <typename T>", "void format_to(T out, int n) {"];
        assert_eq!(defined_name(naming_line(&cpp, &(0..2))), Some("format_to"));
        // A class template whose parameters take lines, under an export macro: no line of it
        // opens a parameter list; the one that declares the struct names it.
        let tpl = [
            "FMT_EXPORT",
            "template <typename FormatContext, typename OutputIt, typename Rep,",
            "          typename Period>",
            "struct duration_formatter {",
        ];
        assert_eq!(
            label(naming_line(&tpl, &(0..4))).as_deref(),
            Some("struct duration_formatter")
        );
        let rust = ["pub fn parse(", "    line: &str,", ") -> X {"];
        assert_eq!(naming_line(&rust, &(0..3)), rust[0]);
        assert_eq!(naming_line(&["int"], &(0..1)), "int");
        assert_eq!(defined_name("fun <T> parse(x: T): T {"), Some("parse"));
        assert_eq!(
            defined_name("fun String.trimEnd(): String ="),
            Some("trimEnd")
        );
        assert_eq!(
            defined_name("override fun toString() = name"),
            Some("toString")
        );
    }

    #[test]
    fn labels_say_kind_and_name_as_written() {
        for (sig, want) in [
            (
                "pub(crate) fn parse_escape(s: &str) -> u8 {",
                "fn parse_escape",
            ),
            ("    def _check_width(self, w):", "def _check_width"),
            ("async def fetch(url):", "def fetch"),
            ("class Cookie(dict):", "class Cookie"),
            (
                "impl<T: Clone> Display for Wrapper<T> {",
                "impl Display for Wrapper",
            ),
            ("impl Parser {", "impl Parser"),
            ("func (r *Route) GetName() string {", "func GetName"),
            ("public static int parseInt(String s) {", "parseInt()"),
            ("public final class Strings {", "class Strings"),
            ("static int decode_hex(const char *p)", "decode_hex()"),
            ("fun bind(view: View) {", "fun bind"),
            (
                "resource \"aws_s3_bucket\" \"logs\" {",
                "resource \"aws_s3_bucket\" \"logs\"",
            ),
            ("module \"vpc\" {", "module \"vpc\""),
            ("  render(x) {", "render()"),
            ("export const handler = (req) => {", "handler()"),
            ("    public List<Split> getSplits() {", "getSplits()"),
            (
                "    public <T> T get(final Supplier<T> supplier) {",
                "get()",
            ),
            (
                "    public StopWatch(final String message) {",
                "StopWatch()",
            ),
            ("public function handle($request)", "function handle"),
            ("module Rack", "module Rack"),
            (
                "template <typename Char> struct formatter<std::tm, Char> {",
                "struct formatter",
            ),
            (
                "FMT_CONSTEXPR text_style &operator&=(const text_style &rhs) FMT_NOEXCEPT {",
                "operator&=()",
            ),
            ("bool operator()(const T& a) const {", "operator()()"),
            (
                "public static final TypeAdapter<Number> DOUBLE = new TypeAdapter<Number>() {",
                "DOUBLE",
            ),
            (
                "const DEFAULT_ERROR_CONFIG: FinalConfig = FinalConfig {",
                "const DEFAULT_ERROR_CONFIG",
            ),
            ("    public string PropertyName", "PropertyName"),
            ("companion object {", "companion object"),
            ("let rec isList (t : Type) =", "let isList"),
            ("Describe 'Public API' {", "Describe 'Public API'"),
            (
                "proc dumpPackageVersionTable*(pkg: PackageInfo) =",
                "proc dumpPackageVersionTable",
            ),
            ("iterator items*[T](s: Seq[T]): T =", "iterator items"),
            ("template check(cond: untyped) =", "template check"),
            ("iterator out() { return out_; }", "out()"),
            ("proc downloadAndExtract*(", "downloadAndExtract()"),
            ("  data() {", "data()"),
            ("  open(path) {", "open()"),
            (
                "    Context \"when the repo is empty\" {",
                "Context \"when the repo is empty\"",
            ),
            ("    It 'returns the branch' {", "It 'returns the branch'"),
            ("    let private genericTypeDef t =", "let genericTypeDef"),
            ("let inline private trim (s : string) =", "let trim"),
            ("let mut total = 0;", "let total"),
        ] {
            assert_eq!(label(sig).as_deref(), Some(want), "{sig}");
        }
        assert_eq!(label("function (x) {"), None);
        for control in [
            "if TYPE_CHECKING:",
            "try:",
            "except ImportError:",
            "with open(p) as f:",
            "        mut line: &str,",
            "        gitignore: &str,",
            "else {",
            "enum {",
            "x == y {",
        ] {
            assert_eq!(label(control), None, "{control}");
        }
        let long = format!("fn {}() {{", "a".repeat(80));
        assert!(label(&long).unwrap().ends_with('…'));
    }

    #[test]
    fn labels_keep_the_whole_name_not_a_type_or_a_keyword() {
        for (sig, want) in [
            // Ruby and Crystal: the receiver and the `!`, `?` or `=` are the name's.
            ("  def self.settings", "def self.settings"),
            ("    def static!(path = nil)", "def static!"),
            ("  def valid?(value)", "def valid?"),
            ("  def name=(value)", "def name="),
            ("  def []=(key, value)", "def []="),
            // Scala's operator methods end where their type parameters start.
            (
                "  override def ~~[V, R](p: P[V])(implicit s: Sequencer[T, V, R])",
                "def ~~",
            ),
            ("  def ~ [U](q: => Parser[U]): Parser[~[T, U]] = {", "def ~"),
            // SystemVerilog: a return type between `function` and the name.
            ("    function void flushDecode ();", "function flushDecode"),
            (
                "  function automatic logic [31:0] decode(input logic [31:0] i);",
                "function decode",
            ),
            // Pascal's class methods, without their parameters.
            (
                "class function TJwtAbstract.VerifyPayload(const Token, ExpectedSubject: RawUtf8;",
                "function VerifyPayload",
            ),
        ] {
            assert_eq!(label(sig).as_deref(), Some(want), "{sig}");
        }
        // The name ranked and matched to calls stays the bare one.
        assert_eq!(defined_name("  def self.settings"), Some("self"));
        assert_eq!(defined_name("    def static!(path = nil)"), Some("static"));
        // A C++ function whose return type holds parentheses is named by its own line.
        let src = "template <typename Double>\nFMT_FUNC typename std::enable_if<sizeof(Double) == sizeof(uint64_t), bool>::type\ngrisu2_format(Double value, buffer& buf, int precision) {\n  return true;\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(
            unit_labels(&lines, &o),
            [Some("grisu2_format()".to_string())]
        );
    }

    #[test]
    fn keywords_and_types_name_no_definition() {
        for no in [
            "if()",
            "case()",
            "sizeof()",
            "if",
            "for",
            "IF()",
            "begin",
            "char",
            "string",
            "0",
            "1",
            "procedure",
            "function void",
        ] {
            assert!(names_no_definition(no), "{no}");
        }
        for yes in [
            "begin()",
            "end()",
            "then()",
            "def text",
            "fn end",
            "text",
            "def case",
            "Record",
            "BOOLEAN",
            "INTEGER",
            "IF",
            "fn parse_escape",
            "typedef uv_buf_t",
            "(anonymous namespace)",
            "FIND_PROGRAM()",
        ] {
            assert!(!names_no_definition(yes), "{yes}");
        }
    }

    #[test]
    fn unbalanced_braces_do_not_panic() {
        let r = roles("  x();\n}\nfn a() {\n  y();\n}\n");
        assert_eq!(r, [Loose, Loose, Sig, Body(0), Body(0)]);
        let r = roles("fn a() {\n  x\n");
        assert_eq!(r, [Sig, Body(0)]);
    }
}
#[cfg(test)]
mod label_probe {
    /// How many definitions of each language's dev cases have no label (a marker can only count
    /// them), and the naming lines of those in `LABEL_LANG` (all when unset):
    /// `VIS_DATA=bench-data/multilang.jsonl LABEL_LANG=java cargo test --release --lib
    /// unlabelled_units -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn unlabelled_units() {
        let mut n: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        let only = std::env::var("LABEL_LANG").ok();
        for v in crate::prune::engine::dev_code_cases() {
            let lang = v["language"].as_str().unwrap_or("").to_string();
            let lines = crate::prune::engine::split_lines(v["text"].as_str().unwrap());
            let o = super::outline(&lines);
            for (u, l) in o.units.iter().zip(super::unit_labels(&lines, &o)) {
                let e = n.entry(lang.clone()).or_default();
                e.0 += 1;
                if l.is_none() {
                    e.1 += 1;
                    if only.as_deref().is_none_or(|w| w == lang) {
                        let line = super::naming_line(&lines, &u.sig).trim();
                        println!("{lang}: {line} @{} {}", u.sig.start + 1, v["origin"]);
                    }
                }
            }
        }
        for (lang, (units, unlabelled)) in n {
            println!("{lang}: {unlabelled} of {units} definitions without a label");
        }
    }
}
