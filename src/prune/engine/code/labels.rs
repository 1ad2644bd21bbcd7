//! Naming definitions: the line of a signature that names it ([`naming_line`]), the bare name it
//! defines, which calls are matched to ([`defined_name`]), and the label a marker shows for it:
//! its keyword and name as the language writes them (`fn parse_escape`, `class Cookie`,
//! `parse()`: [`label`], [`unit_labels`]), and whether a label names a definition at all
//! ([`names_no_definition`]).
//!
//! Owns reading names out of signature lines, in every language the outline knows. It must never
//! decide where a definition starts or ends (the outline's walks do), nor judge relevance.

use super::super::draft::trimmed;
use super::super::evidence::trailing_ident;
use super::ada;
use super::line_kinds::{
    BLOCK_OPENERS, MODIFIERS, first_keyword, first_word, is_control, leading_word, skip_balanced,
    skip_generics,
};
use super::outline::Outline;
use std::ops::Range;

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

#[cfg(test)]
mod tests {
    use super::super::outline::outline;
    use super::*;

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

    /// Perl: `sub name {` is labelled as written.
    #[test]
    fn perl_subs_are_labelled_with_their_keyword() {
        assert_eq!(
            label("sub clearcache    {").as_deref(),
            Some("sub clearcache")
        );
        assert_eq!(label("sub import {").as_deref(), Some("sub import"));
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
            let o = super::super::outline::outline(&lines);
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
