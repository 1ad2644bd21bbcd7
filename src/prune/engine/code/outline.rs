//! The outline of a source file: which lines are imports, the file header, definition signatures,
//! closing braces, attributes, doc comments and bodies of definitions, or loose statements.
//!
//! Owns the outline's types ([`Role`], [`Unit`], [`Outline`]) and [`outline`], which picks the
//! walk for a text (brace depths in `braces`, indentation in `indented`, Ada's `end` blocks in
//! `ada`) and assembles its result: the file header, the doc comments and attributes each
//! definition takes along, Python docstrings. Containers (`impl`, `class`, `mod`, `trait`, ...)
//! have their members outlined in turn. How a line is classified lives in `line_kinds`, how a
//! definition is named in `labels`. It must never judge relevance.

use super::super::draft::{is_blank, trimmed, trimmed_start};
use super::ada;
use super::braces::Braces;
use super::indent;
use super::indented::Indent;
use super::line_kinds::{is_attribute, is_end_closer, is_end_opener, is_ml_opener, is_py_opener};
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
    use super::super::labels::{label, naming_line, unit_labels};
    use super::super::line_kinds::is_import;
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

    #[test]
    fn unbalanced_braces_do_not_panic() {
        let r = roles("  x();\n}\nfn a() {\n  y();\n}\n");
        assert_eq!(r, [Loose, Loose, Sig, Body(0), Body(0)]);
        let r = roles("fn a() {\n  x\n");
        assert_eq!(r, [Sig, Body(0)]);
    }
}
