//! Configuration and data files read as code: a Maven `pom.xml`, a Gradle version catalog, a YAML
//! rule set, a `package.json`, an Android manifest. Most of their lines are a key and its value
//! or an element, often with no blank line between their parts, and what a question asks for is a
//! few lines (one dependency's version, one rule's setting) that name what it names. Definitions
//! and paragraphs do not fit them: a paragraph of such a file is most of it, and one holding many
//! of the question's common words outranks the line that holds its rare one. Here each line
//! ranks by the question's terms it holds, and the lines that rank close to the best come back
//! with their neighbours and the lines that open what holds them (the `<dependency>`, the
//! `[versions]` section, the parent keys).
//!
//! Owns recognising such a file and deciding its lines. It must never touch a file whose
//! definitions the outline found.

use super::super::draft::{Draft, Reason, is_blank};
use super::super::terms::Matches;
use super::outline::Outline;
use super::{MAX_POINTED_LINES, UNRANKED_TOP_SHARE};
use std::collections::HashMap;
use std::ops::Range;

/// A file is data when at least this share of its lines (not blank, not comments) are shaped
/// like data ([`data_shaped`]) and the outline found no definition in it.
const DATA_SHARE: f32 = 0.85;
/// A line is kept when the question's terms it holds weigh at least this share of the best
/// line's.
const LINE_OF_BEST: f32 = 0.5;
/// Lines kept on each side of a kept line, within what holds it.
const CONTEXT: usize = 2;

/// Whether `lines`, outlined as `o`, are a configuration or data file: no definition outlined (or
/// a JSON document, whose objects the brace outline takes for some) and at least [`DATA_SHARE`]
/// of the lines shaped like data.
pub(super) fn is_data(lines: &[&str], o: &Outline) -> bool {
    // JSON's objects are blocks the brace outline takes for definitions.
    let json = lines
        .iter()
        .find(|l| !is_blank(l))
        .is_some_and(|l| matches!(l.trim(), "{" | "["));
    if !json && (!o.units.is_empty() || !o.containers.is_empty()) {
        return false;
    }
    let (mut shaped, mut counted) = (0usize, 0usize);
    for (i, line) in lines.iter().enumerate() {
        if is_blank(line) || o.comment[i] || is_markup_comment(line) {
            continue;
        }
        counted += 1;
        shaped += usize::from(data_shaped(line));
    }
    counted >= MIN_LINES && shaped as f32 >= DATA_SHARE * counted as f32
}

/// Fewer lines than this are no file to tell the shape of.
const MIN_LINES: usize = 20;

/// An XML or HTML comment line (`<!-- ... -->`) or its continuation's end.
fn is_markup_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("<!--") || t.starts_with("-->")
}

/// A line shaped like data: markup (`<version>1.2</version>`, `</plugin>`), a key and its value
/// (`okhttp = "4.12.0"`, `name: web`, `"lodash": "^4.17.21",`, `a.b=c`, PHP's or Ruby's
/// `'key' => value`), a list item (`- x`), a section (`[versions]`), or a bracket alone (`{`,
/// `},`, `]`).
fn data_shaped(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with('<') || t.starts_with("- ") || t == "-" {
        return true;
    }
    if is_section(t) {
        return true;
    }
    if t.trim_end_matches(',').chars().all(|c| "{}[]".contains(c)) {
        return true;
    }
    key_and_rest(t).is_some_and(|(_, rest)| {
        (rest.starts_with(':') && !rest.starts_with("::"))
            || (rest.starts_with('=') && !rest.starts_with("=="))
    })
}

/// A line's leading key, maybe quoted, and what follows it past its closing quote: `"lodash":
/// "^4"` -> `lodash` and `: "^4"`. `None` when the line starts with no key character.
fn key_and_rest(t: &str) -> Option<(&str, &str)> {
    let key = t.trim_start_matches(['"', '\'']);
    let end = key
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@')))
        .unwrap_or(key.len());
    (end > 0).then(|| {
        let rest = key[end..].trim_start_matches(['"', '\'']).trim_start();
        (&key[..end], rest)
    })
}

/// A TOML or INI section header (`[versions]`), trimmed.
fn is_section(t: &str) -> bool {
    t.starts_with('[') && t.ends_with(']')
}

/// Decides the lines of a data file for the goal matched in `m`: the lines weighing at least
/// [`LINE_OF_BEST`] of the best one, [`CONTEXT`] lines around each within what holds it, and the
/// lines that open what holds it (each line above it indented less); the rest goes. Kept lines
/// score as the line they serve.
pub(super) fn decide(lines: &[&str], tree: &Tree, goal: &str, m: &Matches, draft: &mut Draft) {
    let n = lines.len();
    let mut scores: Vec<f32> = (0..n).map(|i| m.line(i)).collect();
    let mut best = scores.iter().copied().fold(0.0, f32::max);
    // A key or coordinate the goal writes whole (`grpc.version`, `org.apache.tika:tika-core`) on
    // at most `MAX_POINTED_LINES` lines points at them, as a quoted source line points at code.
    let keys = written_keys(goal);
    let lowered: Vec<String> = if keys.is_empty() {
        Vec::new()
    } else {
        lines.iter().map(|l| l.to_lowercase()).collect()
    };
    for key in keys {
        let on: Vec<usize> = (0..n).filter(|&i| lowered[i].contains(&key)).collect();
        if !on.is_empty() && on.len() <= MAX_POINTED_LINES {
            let raised = best.max(f32::MIN_POSITIVE);
            for i in on {
                scores[i] = scores[i].max(raised);
            }
            best = raised;
        }
    }
    let mut keep = vec![false; n];
    let mut score = vec![0.0f32; n];
    if best <= 0.0 {
        // With no line holding a term, the file is kept from the top, as a definition file is.
        let top = ((n as f32) * UNRANKED_TOP_SHARE).ceil() as usize;
        keep[..top.min(n)].fill(true);
    } else {
        for i in (0..n).filter(|&i| scores[i] >= LINE_OF_BEST * best) {
            bring(lines, tree, i, scores[i], &mut keep, &mut score);
        }
    }
    // What a kept line refers to (`${grpc.version}`, `version.ref = "tika"`) is defined elsewhere:
    // the line defining it comes back too.
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for (k, line) in lines.iter().enumerate() {
        if let Some(key) = defined_key(line) {
            defined.entry(key).or_insert(k);
        }
    }
    let kept: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
    for i in kept {
        for name in references(lines[i]) {
            if let Some(&d) = defined.get(name) {
                keep[d] = true;
                score[d] = score[d].max(score[i]);
            }
        }
    }
    for i in 0..n {
        draft.score[i] = score[i].max(scores[i]);
        if !keep[i] {
            draft.remove(i, Reason::OffFocus);
        }
    }
}

/// Keeps line `i` for a line scoring `s`, with [`CONTEXT`] neighbours at least as deep (the rest
/// of its element or entry) and the lines that hold it (each line above it indented less).
fn bring(lines: &[&str], tree: &Tree, i: usize, s: f32, keep: &mut [bool], score: &mut [f32]) {
    // A neighbour belongs to the line's element or entry unless it is shallower.
    let within = |k: usize| is_blank(lines[k]) || tree.indent[k] >= tree.indent[i];
    let before = (i.saturating_sub(CONTEXT)..i)
        .rev()
        .take_while(|&k| within(k));
    let after = (i + 1..(i + 1 + CONTEXT).min(lines.len())).take_while(|&k| within(k));
    for k in std::iter::once(i).chain(before).chain(after) {
        keep[k] = true;
        score[k] = score[k].max(s);
    }
    let mut up = tree.parent[i];
    while let Some(k) = up {
        if keep[k] && score[k] >= s {
            break;
        }
        keep[k] = true;
        score[k] = score[k].max(s);
        up = tree.parent[k];
    }
}

/// The keys and coordinates the goal writes whole, lowercase: words of at least five characters
/// holding a `.`, `:`, `/` or `-` between letters or digits (`grpc.version`, `tika-core`,
/// `Style/ComparableBetween`), and each side of a `group:artifact` coordinate.
fn written_keys(goal: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in goal.split(|c: char| !(c.is_alphanumeric() || "._-:/@".contains(c))) {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        for key in std::iter::once(word).chain(word.split(':')) {
            let joined = key.contains(['.', ':', '/', '-']);
            if joined && key.len() >= 5 && key.chars().any(char::is_alphabetic) {
                let key = key.to_lowercase();
                if !out.contains(&key) {
                    out.push(key);
                }
            }
        }
    }
    out
}

/// The names a line refers to: Maven's and Gradle's `${name}`, a version catalog's
/// `version.ref = "name"`.
fn references(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else { break };
        out.push(&after[..end]);
        rest = &after[end..];
    }
    if let Some(at) = line.find(".ref") {
        let after = line[at + 4..]
            .trim_start()
            .trim_start_matches('=')
            .trim_start();
        if let Some(quoted) = after.strip_prefix('"')
            && let Some(end) = quoted.find('"')
        {
            out.push(&quoted[..end]);
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// The name `line` defines, if any: the element it opens (`<grpc.version>` -> `grpc.version`) or
/// its key (`tika = "3.3.2"`, `name: x`, `"name": x` -> `tika`, `name`).
fn defined_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if let Some(tag) = t.strip_prefix('<') {
        let end = tag.find(['>', ' ', '/'])?;
        return (tag[end..].starts_with('>') && end > 0).then(|| &tag[..end]);
    }
    key_and_rest(t)
        .filter(|(_, rest)| rest.starts_with('=') || rest.starts_with(':'))
        .map(|(key, _)| key)
}

/// A block of a data file that a marker can name: a line holding others (a section, an element
/// with children, a key with nested keys) through its last line.
pub(crate) struct Block {
    /// From the line that opens it through its last nested line.
    pub(crate) range: Range<usize>,
    /// How markers name it: a section as written (`[versions]`), an element's or a key's name
    /// (`dependencies`, `metadata`).
    pub(crate) label: String,
}

/// The blocks of a data file at most [`NAMED_DEPTH`] levels deep, in line order.
pub(crate) fn blocks(lines: &[&str], tree: &Tree) -> Vec<Block> {
    let parent = &tree.parent;
    let mut depth = vec![0usize; lines.len()];
    let mut last: Vec<usize> = (0..lines.len()).collect();
    let mut children = vec![false; lines.len()];
    for i in (0..lines.len()).filter(|&i| !is_blank(lines[i])) {
        if let Some(p) = parent[i] {
            depth[i] = depth[p] + 1;
            children[p] = true;
        }
    }
    // A line's last nested line reaches its ancestors (children come after their parents, so
    // one backward pass carries it up).
    for i in (0..lines.len()).rev().filter(|&i| !is_blank(lines[i])) {
        if let Some(p) = parent[i] {
            last[p] = last[p].max(last[i]);
        }
    }
    (0..lines.len())
        .filter(|&i| children[i] && depth[i] <= NAMED_DEPTH)
        .filter_map(|i| {
            let t = lines[i].trim();
            let label = if is_section(t) {
                t.to_owned()
            } else {
                defined_key(lines[i])?.to_owned()
            };
            Some(Block {
                range: i..last[i] + 1,
                label,
            })
        })
        .collect()
}

/// Blocks deeper than this are not named: a marker names the parts of the file, not every
/// element of a list.
const NAMED_DEPTH: usize = 2;

/// How a data file's lines nest, computed once for the plan and the names.
pub(crate) struct Tree {
    /// Each line's depth ([`depths`]).
    indent: Vec<usize>,
    /// Each line's parent ([`parents`]): the line that holds it.
    parent: Vec<Option<usize>>,
}

impl Tree {
    /// The nesting of `lines`.
    pub(crate) fn new(lines: &[&str]) -> Tree {
        let indent = depths(lines);
        let parent = parents(lines, &indent);
        Tree { indent, parent }
    }
}

/// For each line, the nearest line above it that is not blank and is indented less (what holds
/// it), in one pass with a stack of the open lines.
fn parents(lines: &[&str], indent: &[usize]) -> Vec<Option<usize>> {
    let mut open: Vec<usize> = Vec::new();
    let mut out = vec![None; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if is_blank(line) {
            out[i] = open.last().copied();
            continue;
        }
        while open.last().is_some_and(|&k| indent[k] >= indent[i]) {
            open.pop();
        }
        out[i] = open.last().copied();
        open.push(i);
    }
    out
}

/// Each line's depth: the width of its leading whitespace (a tab counts as one), plus one for the
/// keys under a section header (TOML's and INI's `[versions]`, which holds the unindented lines
/// up to the next one).
fn depths(lines: &[&str]) -> Vec<usize> {
    let mut in_section = false;
    lines
        .iter()
        .map(|l| {
            let width = indentation(l);
            let t = l.trim();
            if width == 0 && is_section(t) {
                in_section = true;
                0
            } else {
                width + usize::from(in_section)
            }
        })
        .collect()
}

/// The width of a line's leading whitespace (a tab counts as one).
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::code::outline::outline;
    use crate::prune::engine::terms::Query;

    fn pom() -> String {
        let mut s = String::from("<project>\n  <properties>\n");
        for k in 0..30 {
            s.push_str(&format!("    <lib{k}.version>1.{k}</lib{k}.version>\n"));
        }
        s.push_str(
            "    <failsafe.version>3.5.0</failsafe.version>\n  </properties>\n  <dependencies>\n",
        );
        for k in 0..20 {
            s.push_str(&format!(
                "    <dependency>\n      <groupId>org.example</groupId>\n      <artifactId>lib{k}</artifactId>\n      <version>${{lib{k}.version}}</version>\n    </dependency>\n"
            ));
        }
        s.push_str("  </dependencies>\n</project>\n");
        s
    }

    #[test]
    fn a_version_catalog_entry_brings_its_version_back() {
        let mut text = String::from("[versions]\n");
        for k in 0..30 {
            text.push_str(&format!("lib{k} = \"1.{k}\"\n"));
        }
        text.push_str("tika = \"3.3.2\"\n\n[libraries]\n");
        for k in 0..30 {
            text.push_str(&format!(
                "lib{k}-core = {{ module = \"org.example:lib{k}-core\", version.ref = \"lib{k}\" }}\n"
            ));
        }
        text.push_str(
            "tika-core = { module = \"org.apache.tika:tika-core\", version.ref = \"tika\" }\n",
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(is_data(&lines, &outline(&lines)));
        let goal = "deps: update org.apache.tika:tika-core to v4";
        let m = Matches::new(&Query::new(goal, true), &lines);
        let mut draft = Draft::keep_all(lines.len());
        decide(&lines, &Tree::new(&lines), goal, &m, &mut draft);
        let kept: Vec<&str> = (0..lines.len())
            .filter(|&i| draft.keep[i])
            .map(|i| lines[i])
            .collect();
        assert!(kept.contains(&"tika = \"3.3.2\""), "{kept:?}");
        assert!(kept.len() < 12, "{kept:?}");
    }

    #[test]
    fn data_shaped_lines() {
        for line in [
            "<version>1.2</version>",
            "  </plugin>",
            "okhttp = \"4.12.0\"",
            "  name: web",
            "\"lodash\": \"^4.17.21\",",
            "a.b.c=1",
            "- item",
            "[versions]",
            "},",
            "  'driver' => 'mysql',",
        ] {
            assert!(data_shaped(line), "{line}");
        }
        for line in [
            "run();",
            "if x == 1 {",
            "std::mem::take(&mut v)",
            "return a;",
        ] {
            assert!(!data_shaped(line), "{line}");
        }
    }

    #[test]
    fn references_and_the_keys_that_define_them() {
        assert_eq!(
            references("<version>${grpc.version}</version>"),
            ["grpc.version"]
        );
        assert_eq!(
            references(
                "tika-core = { module = \"org.apache.tika:tika-core\", version.ref = \"tika\" }"
            ),
            ["tika"]
        );
        assert_eq!(
            defined_key("    <grpc.version>1.65.1</grpc.version>"),
            Some("grpc.version")
        );
        assert_eq!(defined_key("tika = \"3.3.2\""), Some("tika"));
        assert_eq!(defined_key("  Style/Foo:"), Some("Style/Foo"));
        assert_eq!(defined_key("<dependency attr=\"x\">"), None);
    }

    #[test]
    fn a_json_document_is_data_though_its_objects_are_outlined() {
        let mut text = String::from("{\n  \"name\": \"app\",\n  \"dependencies\": {\n");
        for k in 0..30 {
            text.push_str(&format!("    \"lib{k}\": \"^1.{k}.0\",\n"));
        }
        text.push_str("    \"last\": \"1.0.0\"\n  }\n}\n");
        let lines: Vec<&str> = text.lines().collect();
        assert!(is_data(&lines, &outline(&lines)));
    }

    #[test]
    fn a_pom_is_data_and_a_rust_file_is_not() {
        let text = pom();
        let lines: Vec<&str> = text.lines().collect();
        assert!(is_data(&lines, &outline(&lines)));
        let rust = "fn main() {\n    run();\n}\n".repeat(10);
        let lines: Vec<&str> = rust.lines().collect();
        assert!(!is_data(&lines, &outline(&lines)));
    }

    #[test]
    fn the_line_naming_the_rare_term_comes_back_with_what_holds_it() {
        let text = pom();
        let lines: Vec<&str> = text.lines().collect();
        let q = Query::new("Bump maven-failsafe-plugin from 3.5.0 to 3.5.1", true);
        let m = Matches::new(&q, &lines);
        let mut draft = Draft::keep_all(lines.len());
        decide(
            &lines,
            &Tree::new(&lines),
            "Bump maven-failsafe-plugin from 3.5.0 to 3.5.1",
            &m,
            &mut draft,
        );
        let kept: Vec<&str> = (0..lines.len())
            .filter(|&i| draft.keep[i])
            .map(|i| lines[i].trim())
            .collect();
        assert!(kept.contains(&"<failsafe.version>3.5.0</failsafe.version>"));
        assert!(kept.contains(&"<properties>") && kept.contains(&"<project>"));
        assert!(kept.len() < 12, "{kept:?}");
    }
}
