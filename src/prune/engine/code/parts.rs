//! What a marker can name in a source file: its definitions and containers as the walks outline
//! them (or, where the walks found none, the definitions at the left margin; in a data file, its
//! blocks), its blocks of imports and its named statements. One list, read two ways: weighted
//! by the goal for the markers ([`names`]) and measured for the benchmark's visible recall
//! ([`extents`]).
//!
//! Owns choosing a file's named parts and their labels. It must never decide a line.

use super::super::names::{Extent, Name};
use super::super::terms::Matches;
use super::data::{self, Tree};
use super::labels::{label, names_no_definition, unit_labels};
use super::margin;
use super::outline::{Outline, Role, outline};
use super::statements;
use std::ops::Range;

/// How a marker names a block of imports it hides (`use`, `import`, `#include`, ...).
const IMPORTS: &str = "imports";

/// What a named part of a file is: it says how the goal weighs it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// The walks' definition of this index in `Outline::units`: weighs its score.
    Unit(usize),
    /// A container the walks found: weighs its best member's score.
    Container,
    /// A definition at the left margin: weighs the goal's terms in its lines.
    Margin,
    /// A block of a data file: weighs its best line.
    Block,
    /// A run of imports: weighs nothing (a marker lists it last).
    Imports,
    /// A named statement (a constant, a field): after every definition and block of imports.
    Statement,
}

/// One named part of a file.
struct Part {
    /// Its lines: a unit from its doc comment through its body, a container from its signature
    /// through its closing line.
    range: Range<usize>,
    /// The line that names it.
    line: usize,
    /// As markers write it; `None` for a definition the labels cannot name.
    label: Option<String>,
    /// What it is.
    kind: Kind,
}

/// The named parts of `lines` (outlined as `o`), in the order markers list them on a tie of
/// lines: definitions, containers, margin definitions, imports, statements. A data file
/// (`data`: its tree) has only its blocks. A label that names no definition (a keyword or a type
/// in the name's place: [`names_no_definition`]) is dropped, the part kept unnamed.
fn parts(lines: &[&str], o: &Outline, data: Option<&Tree>) -> Vec<Part> {
    if let Some(tree) = data {
        return data::blocks(lines, tree)
            .into_iter()
            .map(|b| Part {
                line: b.range.start,
                range: b.range,
                label: Some(b.label),
                kind: Kind::Block,
            })
            .collect();
    }
    let labels = unit_labels(lines, o);
    let at_margin = margin::units(lines, o);
    let mut out = Vec::new();
    if at_margin.is_empty() {
        out.extend(
            o.units
                .iter()
                .zip(&labels)
                .enumerate()
                .map(|(k, (u, l))| Part {
                    range: u.pre.start.min(u.sig.start)..u.body.end.max(u.sig.end),
                    line: u.sig.start,
                    label: l.clone(),
                    kind: Kind::Unit(k),
                }),
        );
        out.extend(o.containers.iter().map(|c| Part {
            range: c.clone(),
            line: c.start,
            label: lines.get(c.start).and_then(|l| label(l)),
            kind: Kind::Container,
        }));
    } else {
        // The walks did not find this file's definitions: those at the margin are named.
        out.extend(at_margin.into_iter().map(|u| Part {
            range: u.range,
            line: u.line,
            label: Some(u.label),
            kind: Kind::Margin,
        }));
    }
    out.extend(import_blocks(lines, o).into_iter().map(|r| Part {
        line: r.start,
        range: r,
        label: Some(IMPORTS.to_string()),
        kind: Kind::Imports,
    }));
    out.extend(
        statements::statements(lines, o, &labels)
            .into_iter()
            .map(|s| Part {
                range: s.range,
                line: s.line,
                label: Some(s.label),
                kind: Kind::Statement,
            }),
    );
    // A keyword or a type where a name should be (`if()`, `begin`, `char`) names nothing.
    for p in &mut out {
        if p.label.as_deref().is_some_and(names_no_definition) {
            p.label = None;
        }
    }
    out
}

/// The parts of `lines` a marker can name, with their lines, for [`super::super::names::visible`].
pub(crate) fn extents(lines: &[&str]) -> Vec<Extent> {
    let o = outline(lines);
    let tree = data::is_data(lines, &o).then(|| Tree::new(lines));
    parts(lines, &o, tree.as_ref())
        .into_iter()
        .map(|p| Extent {
            statement: p.kind == Kind::Statement,
            range: p.range,
            line: p.line,
            label: p.label,
        })
        .collect()
}

/// The labelled parts of `lines` (outlined as `o`, matched in `m`, its units scored `scores`; a
/// data file's `data` tree) by line, each weighted for the goal as its [`Kind`] says.
pub(super) fn names(
    lines: &[&str],
    o: &Outline,
    m: &Matches,
    scores: &[f32],
    data: Option<&Tree>,
) -> Vec<Name> {
    let mut out: Vec<Name> = parts(lines, o, data)
        .into_iter()
        .filter_map(|p| {
            let weight = match p.kind {
                Kind::Unit(k) => scores[k],
                Kind::Container => o
                    .units
                    .iter()
                    .zip(scores)
                    .filter(|(u, _)| p.range.contains(&u.sig.start))
                    .map(|(_, &s)| s)
                    .fold(0.0, f32::max),
                Kind::Margin => m.span(p.range.clone()),
                Kind::Block => m.best_line(p.range.clone()),
                Kind::Imports => 0.0,
                // The more of the goal its lines hold, the sooner.
                Kind::Statement => -1.0 / (1.0 + m.best_line(p.range.clone())),
            };
            Some(Name {
                line: p.line,
                text: p.label?,
                weight,
            })
        })
        .collect();
    out.sort_by_key(|n| n.line);
    out
}

/// The blocks of import lines: each a run of them with at most blank lines between. A C++ or C#
/// alias (`using mapped_type_t = typename T::mapped_type;`) defines a name: it is no import.
fn import_blocks(lines: &[&str], o: &Outline) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut last_import: Option<usize> = None;
    for (i, role) in o.roles.iter().enumerate() {
        let alias = || {
            let t = lines.get(i).map_or("", |l| l.trim_start());
            t.starts_with("using ") && t.contains('=')
        };
        match role {
            Role::Import if !alias() => {
                match (last_import, out.last_mut()) {
                    (Some(_), Some(block)) => block.end = i + 1,
                    _ => out.push(i..i + 1),
                }
                last_import = Some(i);
            }
            Role::Blank => {}
            _ => last_import = None,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::terms::Query;

    #[test]
    fn a_block_of_imports_is_named_imports() {
        let src = "use std::fmt;\nuse std::io;\n\nuse crate::a;\n\nfn run() {\n    go();\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        assert_eq!(import_blocks(&lines, &o), vec![0..4]);
        let e = extents(&lines);
        assert!(
            e.iter()
                .any(|e| e.range == (0..4) && e.label.as_deref() == Some("imports")),
            "{e:?}"
        );
        let m = Matches::new(&Query::new("", true), &lines);
        let n = names(&lines, &o, &m, &vec![1.0; o.units.len()], None);
        assert_eq!(
            n.first().map(|n| (n.line, n.text.as_str())),
            Some((0, "imports"))
        );
        assert_eq!(
            n.first().map(|n| n.weight),
            Some(0.0),
            "listed last on its marker"
        );
        // A C++ alias declares a name: not an import.
        let cpp = "#include <vector>\n#include <map>\n\nusing key_type_t = typename T::key_type;\nusing namespace std;\n";
        let lines: Vec<&str> = cpp.lines().collect();
        let o = outline(&lines);
        assert!(!import_blocks(&lines, &o).iter().any(|b| b.contains(&3)));
    }

    #[test]
    fn markers_and_visible_recall_read_the_same_parts() {
        // A container, its member, a statement: each named once, on the line naming it.
        let src = "class Jar:\n    LIMIT = 3\n\n    def add(self, c):\n        self.c = c\n";
        let lines: Vec<&str> = src.lines().collect();
        let o = outline(&lines);
        let m = Matches::new(&Query::new("add cookie", true), &lines);
        let n = names(&lines, &o, &m, &vec![2.0; o.units.len()], None);
        let e = extents(&lines);
        for name in &n {
            assert!(
                e.iter()
                    .any(|e| e.line == name.line && e.label.as_deref() == Some(&name.text)),
                "{} at {} has no extent: {e:?}",
                name.text,
                name.line
            );
        }
        assert!(
            n.iter().any(|n| n.text == "def add" && n.weight == 2.0),
            "{n:?}"
        );
        assert!(
            n.iter().any(|n| n.text == "class Jar" && n.weight == 2.0),
            "{n:?}"
        );
    }
}
