//! Code cases: Rust functions with a `///` doc comment in registry crates. The gold function is
//! found with a lexer of its own (independent of the engine's outline), so the benchmark does not
//! grade the engine against itself.

use crate::{Case, crate_name, files_with};
use std::collections::HashSet;
use std::path::PathBuf;

/// Files of this many lines are used.
const MIN_LINES: usize = 100;
const MAX_LINES: usize = 1500;

struct Candidate {
    doc: std::ops::Range<usize>,
    sig: usize,
    close: usize,
    query: String,
}

/// Up to `count` cases, at most one per file, round-robin over crates (sorted), so that no crate
/// dominates.
pub fn cases(crates: &[PathBuf], count: usize) -> Vec<Case> {
    let mut per_crate: Vec<Vec<PathBuf>> = Vec::new();
    for dir in crates {
        let name = crate_name(dir);
        if name.ends_with("-sys") || name.ends_with("_data") || name.contains("unicode") {
            continue;
        }
        let mut files = Vec::new();
        files_with(&dir.join("src"), ".rs", &mut files);
        if !files.is_empty() {
            per_crate.push(files);
        }
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < count && per_crate.iter().any(|f| f.len() > round) {
        for files in &per_crate {
            let Some(path) = files.get(round) else {
                continue;
            };
            if out.len() >= count {
                break;
            }
            if let Some(case) = case_for(path, &mut seen) {
                out.push(case);
            }
        }
        round += 1;
    }
    out
}

fn case_for(path: &PathBuf, seen: &mut HashSet<String>) -> Option<Case> {
    let text = std::fs::read_to_string(path).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    if !(MIN_LINES..=MAX_LINES).contains(&lines.len()) || !seen.insert(text.clone()) {
        return None;
    }
    let candidates = candidates(&text, &lines);
    let c = candidates.get(candidates.len() / 2)?;
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !c.doc.contains(i))
        .map(|(_, l)| *l)
        .collect();
    let shift = c.doc.len();
    let mut out = kept.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    Some(Case {
        query: c.query.clone(),
        text: out,
        source_type: "code",
        gold_lines: (c.sig - shift + 1..=c.close - shift + 1).collect(),
        origin: path.to_string_lossy().into_owned(),
    })
}

fn candidates(text: &str, lines: &[&str]) -> Vec<Candidate> {
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !is_fn_line(line.trim_start()) {
            continue;
        }
        let mut k = i;
        while k > 0 && is_attr(lines[k - 1].trim()) {
            k -= 1;
        }
        let doc_end = k;
        while k > 0 && is_doc(lines[k - 1]) {
            k -= 1;
        }
        if k == doc_end {
            continue;
        }
        let Some(query) = first_sentence(&lines[k..doc_end]) else {
            continue;
        };
        let Some(close_offset) = body_end(text.as_bytes(), offsets[i]) else {
            continue;
        };
        let close = offsets.partition_point(|&o| o <= close_offset) - 1;
        let fn_lines = close + 1 - i;
        if fn_lines < 3 || fn_lines * 4 > lines.len() {
            continue;
        }
        out.push(Candidate {
            doc: k..doc_end,
            sig: i,
            close,
            query,
        });
    }
    out
}

fn is_doc(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("///") && !t.starts_with("////")
}

fn is_attr(t: &str) -> bool {
    t.starts_with("#[") && t.ends_with(']')
}

/// `fn name` after optional visibility and qualifiers.
fn is_fn_line(t: &str) -> bool {
    let mut rest = t;
    loop {
        if let Some(r) = rest.strip_prefix("pub(") {
            rest = r.split_once(')').map_or("", |(_, a)| a).trim_start();
        } else if let Some(r) = [
            "pub ",
            "const ",
            "async ",
            "unsafe ",
            "default ",
            "extern \"C\" ",
            "extern \"Rust\" ",
        ]
        .iter()
        .find_map(|p| rest.strip_prefix(p))
        {
            rest = r.trim_start();
        } else {
            return rest
                .strip_prefix("fn ")
                .is_some_and(|r| r.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        }
    }
}

/// The doc comment's first sentence (first paragraph, up to the first period followed by a space
/// or the end), when it is a usable query.
fn first_sentence(doc: &[&str]) -> Option<String> {
    let mut para = String::new();
    for line in doc {
        let t = line.trim_start().trim_start_matches("///");
        let t = t.strip_prefix(' ').unwrap_or(t).trim_end();
        if t.is_empty() {
            break;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(t);
    }
    let sentence = match para.find(". ") {
        Some(i) => &para[..=i],
        None => para.as_str(),
    };
    let words = sentence.split_whitespace().count();
    let usable = (4..=60).contains(&words) && !sentence.starts_with(['#', '`', '[', '<', '|', '*']);
    usable.then(|| sentence.to_string())
}

/// Byte offset of the brace closing the body of the `fn` starting at `start`, or `None` for a
/// declaration without body (or unbalanced text).
fn body_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let mut parens = 0i32;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i);
                continue;
            }
            b'"' => {
                i = skip_string(b, i);
                continue;
            }
            b'r' if !prev_ident(b, i) && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
                if let Some(end) = skip_raw_string(b, i) {
                    i = end;
                    continue;
                }
            }
            b'\'' => {
                i = skip_char_literal(b, i);
                continue;
            }
            b'(' | b'[' => parens += 1,
            b')' | b']' => parens -= 1,
            b';' if depth == 0 && parens == 0 => return None,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn prev_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut level = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            level += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            level -= 1;
            i += 2;
            if level == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

fn skip_raw_string(b: &[u8], i: usize) -> Option<usize> {
    let mut k = i + 1;
    let mut hashes = 0;
    while b.get(k) == Some(&b'#') {
        hashes += 1;
        k += 1;
    }
    if b.get(k) != Some(&b'"') {
        return None;
    }
    k += 1;
    while k < b.len() {
        if b[k] == b'"'
            && b[k + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == b'#')
                .count()
                == hashes
        {
            return Some(k + 1 + hashes);
        }
        k += 1;
    }
    Some(k)
}

/// Skips a character literal (`'a'`, `'\n'`, `'\u{1F600}'`, `'é'`); a lifetime is one byte.
fn skip_char_literal(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let mut k = i + 2;
        while k < b.len() && k < i + 12 {
            if b[k] == b'\'' {
                return k + 1;
            }
            k += 1;
        }
        return i + 1;
    }
    let len = match b.get(i + 1) {
        Some(c) if *c < 0x80 => 1,
        Some(c) if *c >= 0xF0 => 4,
        Some(c) if *c >= 0xE0 => 3,
        Some(_) => 2,
        None => return i + 1,
    };
    if b.get(i + 1 + len) == Some(&b'\'') {
        i + 2 + len
    } else {
        i + 1
    }
}
