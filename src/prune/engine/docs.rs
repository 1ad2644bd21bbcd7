//! Pruning prose documents (Markdown, reStructuredText, plain text): keep every heading, keep whole
//! the sections whose heading is about the goal, keep the paragraphs and fenced blocks about the
//! goal or holding a phrase it quotes, remove the others. A fenced block is never cut in half.
//!
//! Owns the docs decisions. It must never remove a heading line, and never split a fenced block.

use super::draft::{Draft, Reason, is_blank};
use super::evidence::{Evidence, telling_lines};
use super::names::Name;
use super::terms::{Matches, Query};

/// A phrase the goal quotes points at the lines holding it when it is found on at most this many.
const MAX_QUOTED_LINES: usize = 3;

/// A block (paragraph or fenced block) is relevant when it reaches this fraction of the best
/// block's score and this fraction of the goal's total IDF mass.
const REL_OF_BEST: f32 = 0.6;
const REL_OF_TOTAL: f32 = 0.25;
/// A section is kept whole when its heading reaches this fraction of the best heading's score
/// and this fraction of the goal's total IDF mass.
const SECTION_OF_BEST: f32 = 0.6;
const SECTION_OF_TOTAL: f32 = 0.5;

/// A run of more non-blank lines than this is not read as one paragraph: its lines are blocks
/// of their own. A prose paragraph wraps to a few lines; a run this long is a text written line
/// by line (notes, a plain-text log), and as one block it was kept or removed whole, and cut at
/// its tail when over the budget, the line that answers the goal with it. At 24 lines, long
/// Markdown lists split too, and the realistic docs cases lost 1.5 points of recall on dev; at
/// 60 and at 150 no dev case changes.
const MAX_PARAGRAPH_LINES: usize = 60;

/// What a line is in the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    Blank,
    /// A heading text line with its level (1 = top).
    Heading(u8),
    /// The underline (or overline) of a setext / reStructuredText heading.
    Rule,
    /// Part of block `n` (paragraph or fenced block).
    Block(u32),
}

/// Decides every line of a document.
pub(crate) fn plan(lines: &[&str], q: &Query, m: &Matches, draft: &mut Draft) {
    let (kinds, blocks) = parse(lines, &mut draft.atoms);
    let n = lines.len();
    let quoted = quoted_lines(lines, &q.evidence);
    let mut block_scores: Vec<f32> = blocks.iter().map(|r| m.span(r.clone())).collect();
    let best_block = block_scores.iter().copied().fold(0.0, f32::max);
    // A block holding a phrase the goal quotes (the typo, the wrong example) ranks with the best.
    for (score, r) in block_scores.iter_mut().zip(&blocks) {
        if quoted[r.clone()].contains(&true) {
            *score = score.max(best_block).max(f32::MIN_POSITIVE);
        }
    }
    let block_threshold = (REL_OF_BEST * best_block).max(REL_OF_TOTAL * m.total);
    let headings: Vec<(usize, u8)> = kinds
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            if let Line::Heading(l) = k {
                Some((i, *l))
            } else {
                None
            }
        })
        .collect();
    let heading_scores: Vec<f32> = headings.iter().map(|&(i, _)| m.line(i)).collect();
    draft.names = headings
        .iter()
        .zip(&heading_scores)
        .map(|(&(line, level), &weight)| Name {
            line,
            text: heading_label(lines[line], level),
            weight,
        })
        .collect();
    let best_heading = heading_scores.iter().copied().fold(0.0, f32::max);
    let section_threshold = (SECTION_OF_BEST * best_heading).max(SECTION_OF_TOTAL * m.total);

    let mut keep = vec![false; n];
    let mut section_score = vec![0.0f32; n];
    for (h, &(start, level)) in headings.iter().enumerate() {
        let end = headings[h + 1..]
            .iter()
            .find(|&&(_, l)| l <= level)
            .map_or(n, |&(i, _)| i);
        let score = heading_scores[h];
        for s in &mut section_score[start..end] {
            *s = s.max(score);
        }
        if score > 0.0 && score >= section_threshold {
            keep[start..end].fill(true);
        }
    }
    for (b, range) in blocks.iter().enumerate() {
        let score = block_scores[b];
        if score > 0.0 && score >= block_threshold || quoted[range.clone()].contains(&true) {
            keep[range.clone()].fill(true);
        }
    }
    for i in 0..n {
        draft.score[i] = match kinds[i] {
            Line::Block(b) => block_scores[b as usize],
            _ => 0.0,
        } + 0.5 * section_score[i];
        let structural = matches!(kinds[i], Line::Heading(_) | Line::Rule);
        if !keep[i] && !structural {
            draft.remove(i, Reason::OffFocus);
        }
    }
}

/// Every section of a document (its heading through the next heading of the same or a higher
/// level) with its heading's line and label, for [`super::names::visible`].
pub(crate) fn extents(lines: &[&str]) -> Vec<super::names::Extent> {
    let (kinds, _) = parse(lines, &mut Vec::new());
    let headings: Vec<(usize, u8)> = kinds
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match k {
            Line::Heading(l) => Some((i, *l)),
            _ => None,
        })
        .collect();
    headings
        .iter()
        .enumerate()
        .map(|(h, &(start, level))| {
            let end = headings[h + 1..]
                .iter()
                .find(|&&(_, l)| l <= level)
                .map_or(lines.len(), |&(i, _)| i);
            super::names::Extent {
                range: start..end,
                line: start,
                label: Some(heading_label(lines[start], level)),
                statement: false,
            }
        })
        .collect()
}

/// How a marker names a heading: as Markdown writes it (`## Install`), whatever the source's
/// syntax (an underlined title gets the `#`s of its level), cut to 48 bytes.
fn heading_label(line: &str, level: u8) -> String {
    let title = line
        .trim()
        .trim_start_matches('#')
        .trim()
        .trim_end_matches('#')
        .trim();
    let mut end = title.len().min(48);
    while !title.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < title.len() { "…" } else { "" };
    format!(
        "{} {}{cut}",
        "#".repeat(level.max(1) as usize),
        &title[..end]
    )
}

/// The lines holding a phrase the goal quotes verbatim (on one line or wrapped over two), for the
/// phrases found on at most [`MAX_QUOTED_LINES`] lines (`"it's"` is everywhere and tells nothing).
fn quoted_lines(lines: &[&str], ev: &Evidence) -> Vec<bool> {
    if ev.phrase_count() == 0 {
        return vec![false; lines.len()];
    }
    let mut found: Vec<u32> = lines.iter().map(|l| ev.phrases_in(l)).collect();
    // A phrase wrapped from one line to the next (in a paragraph, mostly) is found on both.
    for i in 1..lines.len() {
        let across = ev.phrases_across(lines[i - 1], lines[i]);
        found[i - 1] |= across;
        found[i] |= across;
    }
    Evidence::prefer_verbatim(&mut found);
    telling_lines(&found, MAX_QUOTED_LINES)
}

/// Classifies lines and returns the blocks' line ranges; fenced blocks are pushed to `atoms`.
fn parse(
    lines: &[&str],
    atoms: &mut Vec<std::ops::Range<usize>>,
) -> (Vec<Line>, Vec<std::ops::Range<usize>>) {
    let n = lines.len();
    let mut kinds = vec![Line::Blank; n];
    let mut blocks = Vec::new();
    let markdown = lines.iter().any(|l| atx_level(l).is_some());
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut i = 0;
    while i < n {
        if is_blank(lines[i]) {
            i += 1;
            continue;
        }
        if let Some(end) = fence_end(lines, i) {
            kinds[i..end].fill(Line::Block(blocks.len() as u32));
            atoms.push(i..end);
            blocks.push(i..end);
            i = end;
            continue;
        }
        if let Some(level) = atx_level(lines[i]) {
            kinds[i] = Line::Heading(level);
            i += 1;
            continue;
        }
        if let Some((span, style)) = underlined(lines, i) {
            let level = match style {
                ('=', false) if markdown => 1,
                ('-', false) if markdown => 2,
                _ => {
                    if !styles.contains(&style) {
                        styles.push(style);
                    }
                    styles
                        .iter()
                        .position(|s| *s == style)
                        .map_or(6, |p| (p + 1).min(6) as u8)
                }
            };
            let title = if style.1 { i + 1 } else { i };
            kinds[i..i + span].fill(Line::Rule);
            kinds[title] = Line::Heading(level);
            i += span;
            continue;
        }
        // A paragraph: up to a blank line, a heading (ATX or underlined) or a fence.
        let start = i;
        i += 1;
        while i < n
            && !is_blank(lines[i])
            && atx_level(lines[i]).is_none()
            && fence_end(lines, i).is_none()
            && underlined(lines, i).is_none()
        {
            i += 1;
        }
        if i - start > MAX_PARAGRAPH_LINES {
            // Not a paragraph: lines with no blank one between them (a list, notes, a plain
            // text file, a long table). Each line is ranked on its own, but an indented line
            // that is no list item continues the one above (a wrapped list item stays whole);
            // a table's header and its `|---|` rule stay, as a heading does, so a kept row
            // keeps its column names.
            let mut start = start;
            if lines[start].contains('|') && is_table_rule(lines[start + 1]) {
                kinds[start] = Line::Rule;
                kinds[start + 1] = Line::Rule;
                start += 2;
            }
            for l in start..i {
                let continues =
                    l > start && lines[l].starts_with([' ', '\t']) && !is_list_item(lines[l]);
                match blocks.last_mut() {
                    Some(b) if continues && b.end == l => b.end = l + 1,
                    _ => blocks.push(l..l + 1),
                }
                kinds[l] = Line::Block(blocks.len() as u32 - 1);
            }
            continue;
        }
        kinds[start..i].fill(Line::Block(blocks.len() as u32));
        blocks.push(start..i);
    }
    (kinds, blocks)
}

/// Whether `line` opens a list item: `-`, `*` or `+` then a space, or digits then `.` or `)` and
/// a space, after any indentation.
fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

/// A Markdown table's rule under its header: `|---|:--:|`, pipes, dashes, colons and spaces.
fn is_table_rule(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Level of an ATX heading (`# Title` .. `###### Title`).
pub(super) fn atx_level(line: &str) -> Option<u8> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    let rest = &t[hashes..];
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then_some(hashes as u8)
}

/// End (exclusive) of the fenced block opening at `i` (``` or ~~~), to the end if unclosed.
pub(super) fn fence_end(lines: &[&str], i: usize) -> Option<usize> {
    let t = lines[i].trim_start();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|x| *x == c).count();
    if len < 3 || (c == '`' && t[len..].contains('`')) {
        return None;
    }
    let close = (i + 1..lines.len()).find(|&j| {
        let u = lines[j].trim();
        u.chars().take_while(|x| *x == c).count() >= len && u.chars().all(|x| x == c)
    });
    Some(close.map_or(lines.len(), |j| j + 1))
}

/// A line made of one repeated punctuation character (at least 3), usable as an underline.
fn rule_char(line: &str) -> Option<char> {
    let t = line.trim_end();
    let c = t.chars().next()?;
    ("=-~^\"'`*+#:._".contains(c) && t.chars().count() >= 3 && t.chars().all(|x| x == c))
        .then_some(c)
}

/// A heading made of a title line and an underline (optionally an overline) starting at `i`:
/// returns the number of lines and the style (underline character, has overline).
fn underlined(lines: &[&str], i: usize) -> Option<(usize, (char, bool))> {
    let title_ok = |j: usize| {
        lines.get(j).is_some_and(|l| {
            !is_blank(l)
                && rule_char(l).is_none()
                && atx_level(l).is_none()
                && !l.starts_with([' ', '\t'])
        })
    };
    if let Some(c) = rule_char(lines[i])
        && title_ok(i + 1)
        && lines.get(i + 2).and_then(|l| rule_char(l)) == Some(c)
    {
        return Some((3, (c, true)));
    }
    let c = rule_char(lines.get(i + 1)?)?;
    let long_enough = lines[i + 1].trim_end().chars().count() >= lines[i].trim().chars().count()
        || c == '='
        || c == '-';
    (title_ok(i) && long_enough).then_some((2, (c, false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(doc: &str, goal: &str) -> (Vec<String>, Draft) {
        let lines: Vec<&str> = doc.lines().collect();
        let q = Query::new(goal, false);
        let m = Matches::new(&q, &lines);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &q, &m, &mut d);
        let kept = lines
            .iter()
            .zip(&d.keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| l.to_string())
            .collect();
        (kept, d)
    }

    /// A list of 80 wrapped items (no blank line): the item about the goal is kept with its
    /// continuation line, not cut in half.
    #[test]
    fn a_long_list_keeps_a_wrapped_item_whole() {
        let mut doc = String::new();
        for i in 0..80 {
            doc.push_str(&format!(
                "- Release {i}: fixed the parser for case {i},\n  and more.\n"
            ));
        }
        doc.push_str(
            "- Fixed the websocket reconnect loop leaking memory\n  after a TLS timeout.\n",
        );
        let (kept, _) = run(&doc, "which release fixed the websocket reconnect leak?");
        assert_eq!(
            kept,
            [
                "- Fixed the websocket reconnect loop leaking memory",
                "  after a TLS timeout."
            ]
        );
    }

    /// A table of 100 rows (no blank line): the row about the goal is kept with the table's
    /// header and rule, not the rest.
    #[test]
    fn a_long_table_keeps_its_header_with_the_row_about_the_goal() {
        let mut doc = String::from("| setting | default | meaning |\n|---|:-:|---|\n");
        for i in 0..100 {
            doc.push_str(&format!("| option_{i} | {i} | plain value number {i} |\n"));
        }
        doc.push_str("| reconnect_backoff | 30 | seconds between websocket reconnects |\n");
        let (kept, _) = run(&doc, "what is the websocket reconnect backoff?");
        assert_eq!(
            kept,
            [
                "| setting | default | meaning |",
                "|---|:-:|---|",
                "| reconnect_backoff | 30 | seconds between websocket reconnects |"
            ]
        );
    }

    const DOC: &str = "# Tool

Intro paragraph about the tool.

## Installation

Run the installer with cargo.

```sh
cargo install tool
```

## Configuration

Set the port in the config file.
Ports below 1024 need root.

### Logging

Logs go to stderr.
";

    #[test]
    fn a_phrase_the_goal_quotes_keeps_its_paragraph() {
        let mut doc = String::from("# Guide\n\n");
        for k in 0..20 {
            doc.push_str(&format!("Paragraph {k} talks about options and flags.\n\n"));
        }
        doc.push_str("You can pass it in to the command.\n\n");
        let (kept, _) = run(&doc, "docs: fix typo \"in to\" to \"into\"");
        assert!(
            kept.contains(&"You can pass it in to the command.".to_string()),
            "{kept:#?}"
        );
        assert!(!kept.contains(&"Paragraph 3 talks about options and flags.".to_string()));
        // A phrase found on too many lines points at none of them.
        let ev = Evidence::new("fix \"in to\"");
        let few = ["a", "log in to it", "b"];
        assert_eq!(quoted_lines(&few, &ev), [false, true, false]);
        let many = ["in to", "in to", "in to", "in to"];
        assert_eq!(quoted_lines(&many, &ev), [false; 4]);
    }

    #[test]
    fn keeps_matching_section_whole_and_all_headings() {
        let (k, _) = run(DOC, "configuration");
        for h in [
            "# Tool",
            "## Installation",
            "## Configuration",
            "### Logging",
        ] {
            assert!(k.contains(&h.to_string()), "{h} missing from {k:#?}");
        }
        assert!(k.contains(&"Logs go to stderr.".to_string()));
        assert!(k.contains(&"Ports below 1024 need root.".to_string()));
        assert!(!k.contains(&"Run the installer with cargo.".to_string()));
    }

    #[test]
    fn relevant_paragraph_and_fences_whole() {
        let (k, d) = run(DOC, "cargo install");
        assert!(k.contains(&"cargo install tool".to_string()));
        assert!(k.contains(&"```sh".to_string()) && k.contains(&"```".to_string()));
        assert_eq!(d.atoms, vec![8..11]);
        assert!(!k.contains(&"Logs go to stderr.".to_string()));
    }

    #[test]
    fn setext_and_rst_headings() {
        let doc = "Title\n=====\n\ntext one\n\nSub\n---\n\ntext two\n";
        let lines: Vec<&str> = doc.lines().collect();
        let (kinds, _) = parse(&lines, &mut Vec::new());
        assert_eq!(kinds[0], Line::Heading(1));
        assert_eq!(kinds[1], Line::Rule);
        assert_eq!(kinds[5], Line::Heading(2));
        let rst = "=====\nTitle\n=====\n\nSection\n-------\n\nbody\n";
        let lines: Vec<&str> = rst.lines().collect();
        let (kinds, _) = parse(&lines, &mut Vec::new());
        assert_eq!(&kinds[..3], &[Line::Rule, Line::Heading(1), Line::Rule]);
        assert_eq!(kinds[4], Line::Heading(2));
    }

    #[test]
    fn unclosed_fence_runs_to_the_end() {
        let lines = ["text", "```", "code", "more"];
        assert_eq!(fence_end(&lines, 1), Some(4));
        assert_eq!(fence_end(&lines, 0), None);
        assert_eq!(fence_end(&["``` inline ` code"], 0), None);
    }
}
