//! What one line of code is, read from that line alone: an import, an attribute, a declaration
//! without a body, a word that opens control flow and defines nothing ([`is_control`]), the kind
//! of definition a header introduces ([`classify`], by its [`first_keyword`] after modifiers),
//! and the lines that open and close the blocks of languages without braces (Python's `def ...:`,
//! the blocks `end` closes in Ruby, Elixir, Lua, Julia and Fortran, F#'s and OCaml's definitions
//! ending with `=`); with the small readers of a line's words they share ([`leading_word`],
//! [`skip_balanced`], [`skip_generics`]).
//!
//! Owns these predicates and their keyword tables. It must never look past the line it is given
//! (depths, indentation, strings and comments are for the scanners and the walks to track), nor
//! judge relevance. Of the outline's other parts it uses only the scanners' byte readers
//! (`indent`): the walks, the outline and the labels read lines through it, never the other
//! way round.

use super::indent;

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
pub(super) fn first_word(t: &str) -> &str {
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

/// Words that open a block which defines nothing (a top-level `if TYPE_CHECKING:`, `try:`,
/// `#ifdef X`, `} while (`): a block they open names no definition, and a name with parameters
/// after one is a condition or a loop, not a method (`if (`, `catch (`).
pub(super) const BLOCK_OPENERS: &[&str] = &[
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
pub(super) const MODIFIERS: &[&str] = &[
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

/// The identifier `s` starts with (letters, digits, `_`; empty when none): `uv_buf_s` of
/// `uv_buf_s {`.
pub(super) fn leading_word(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// `s` past the balanced `<...>` it starts with.
pub(super) fn skip_generics(s: &str) -> &str {
    skip_balanced(s, '<', '>').unwrap_or("")
}

/// `s` past the first group `open`...`close` it holds, nested groups inside it included
/// (`None` when the group never closes).
pub(super) fn skip_balanced(s: &str, open: char, close: char) -> Option<&str> {
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

#[cfg(test)]
mod tests {
    use super::super::labels::{label, unit_labels};
    use super::super::outline::{Role, outline};
    use super::*;

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

    #[test]
    fn keywords_after_modifiers() {
        assert_eq!(first_keyword("pub(crate) async fn x()"), "fn");
        assert_eq!(first_keyword("pub unsafe impl<T> Send for X {"), "impl");
        assert_eq!(first_keyword("extern \"C\" {"), "extern");
        assert_eq!(first_keyword("pub const fn f()"), "fn");
        assert_eq!(first_keyword("export default class A {"), "class");
    }
}
