//! Docs cases: Markdown files shipped in registry crates (READMEs, design notes, guides; no
//! changelogs or licences). Query = a section heading's text, gold = that section (the heading
//! line through the line before the next heading of the same or a higher level).

use crate::{Case, files_with, spread};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const MIN_LINES: usize = 100;
const MAX_LINES: usize = 1500;

/// Up to `count` cases, one per file, spread over the eligible files in path order.
pub fn cases(crates: &[PathBuf], count: usize) -> Vec<Case> {
    let mut seen = HashSet::new();
    let mut eligible = Vec::new();
    for dir in crates {
        let mut files = Vec::new();
        files_with(dir, ".md", &mut files);
        for path in files {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_lowercase();
            if [
                "changelog",
                "changes",
                "release",
                "license",
                "code_of_conduct",
                "notice",
            ]
            .iter()
            .any(|s| name.contains(s))
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let n = text.lines().count();
            if !(MIN_LINES..=MAX_LINES).contains(&n) || !seen.insert(text.clone()) {
                continue;
            }
            if let Some(case) = case_for(&path, &text) {
                eligible.push(case);
            }
        }
    }
    spread(&eligible, count)
        .into_iter()
        .map(|c| Case {
            query: c.0,
            text: c.1,
            source_type: "docs",
            gold_lines: c.2,
            origin: c.3,
        })
        .collect()
}

fn case_for(path: &Path, text: &str) -> Option<(String, String, Vec<usize>, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let headings = headings(&lines);
    let mut candidates = Vec::new();
    for (h, &(i, level, ref title)) in headings.iter().enumerate() {
        let end = headings[h + 1..]
            .iter()
            .find(|(_, l, _)| *l <= level)
            .map_or(lines.len(), |(j, _, _)| *j);
        let mut last = end;
        while last > i + 1 && lines[last - 1].trim().is_empty() {
            last -= 1;
        }
        let size = last - i;
        let words = title
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count();
        let unique = headings
            .iter()
            .filter(|(_, _, t)| t.eq_ignore_ascii_case(title))
            .count()
            == 1;
        if level >= 2 && words >= 2 && unique && size >= 5 && size * 100 <= lines.len() * 40 {
            candidates.push((title.clone(), (i + 1..=last).collect::<Vec<usize>>()));
        }
    }
    let (query, gold) = candidates.get(candidates.len() / 2)?.clone();
    Some((
        query,
        text.to_string(),
        gold,
        path.to_string_lossy().into_owned(),
    ))
}

/// ATX headings outside fenced blocks: (line index, level, cleaned title).
fn headings(lines: &[&str]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if t.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        let level = line.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&level) && line[level..].starts_with(' ') {
            let title: String = line[level..]
                .trim()
                .trim_end_matches('#')
                .replace(['`', '*', '[', ']'], "");
            out.push((i, level, title.trim().to_string()));
        }
    }
    out
}
