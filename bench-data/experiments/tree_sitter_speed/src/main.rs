//! Tree-sitter's parse time against the engine's whole code plan, on the same text in the same
//! run: for each language with a grammar here that the benchmark file holds, 1 MiB made of the benchmark file's code texts of that
//! language (concatenated in order, repeated if needed), then best of `ROUNDS` alternating rounds.
//!
//! Run: `cargo run --release -- ../../realistic.jsonl` (or `../../multilang.jsonl`) from this
//! directory.

use mcp_pruner::contract::types::SourceType;
use mcp_pruner::prune::engine::{self, Limits};
use std::time::Instant;

/// Size of each language's text.
const SIZE: usize = 1 << 20;
/// Rounds of each measurement; the best is kept (the machine is shared and noisy).
const ROUNDS: usize = 10;
/// The goal the engine plans for (the speed bench's).
const GOAL: &str = "parse the request header value and return an error on invalid utf8";

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: tree_sitter_speed BENCHMARK.jsonl");
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .expect("benchmark file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();
    let grammars: [(&str, tree_sitter::Language); 12] = [
        ("rust", tree_sitter_rust::LANGUAGE.into()),
        ("python", tree_sitter_python::LANGUAGE.into()),
        ("go", tree_sitter_go::LANGUAGE.into()),
        ("javascript", tree_sitter_javascript::LANGUAGE.into()),
        (
            "typescript",
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        ),
        ("c", tree_sitter_c::LANGUAGE.into()),
        ("cpp", tree_sitter_cpp::LANGUAGE.into()),
        ("java", tree_sitter_java::LANGUAGE.into()),
        ("csharp", tree_sitter_c_sharp::LANGUAGE.into()),
        ("kotlin", tree_sitter_kotlin_ng::LANGUAGE.into()),
        ("ruby", tree_sitter_ruby::LANGUAGE.into()),
        ("php", tree_sitter_php::LANGUAGE_PHP.into()),
    ];
    // The languages the benchmark file holds code of.
    let present = |name: &str| {
        rows.iter()
            .any(|r| r["source_type"] == "code" && r["language"] == name)
    };
    println!("1 MiB per language, best of {ROUNDS} alternating rounds");
    println!(
        "{:<11} {:>14} {:>16} {:>8}",
        "language", "our plan ms", "tree-sitter ms", "ratio"
    );
    for (name, language) in grammars.into_iter().filter(|(n, _)| present(n)) {
        let text = text_of(&rows, name);
        let lines = engine::split_lines(&text);
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&language).expect("grammar version");
        let (mut ours, mut theirs) = (f64::MAX, f64::MAX);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let plan = engine::plan(&lines, GOAL, SourceType::Code, &Limits::default());
            ours = ours.min(t.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(plan);
            let t = Instant::now();
            let tree = parser.parse(&text, None).expect("a tree");
            theirs = theirs.min(t.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(tree);
        }
        println!(
            "{name:<11} {ours:>14.1} {theirs:>16.1} {:>7.1}x",
            theirs / ours
        );
    }
}

/// `SIZE` bytes (cut at a line end) of the code texts of `language` in the benchmark file.
fn text_of(rows: &[serde_json::Value], language: &str) -> String {
    let texts: Vec<&str> = rows
        .iter()
        .filter(|r| r["source_type"] == "code" && r["language"] == language)
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert!(
        !texts.is_empty(),
        "no {language} code in the benchmark file"
    );
    let mut text = String::with_capacity(SIZE + (1 << 16));
    for t in texts.iter().cycle() {
        if text.len() >= SIZE {
            break;
        }
        text.push_str(t);
        text.push('\n');
    }
    let cut = text[..SIZE].rfind('\n').unwrap_or(SIZE);
    text.truncate(cut);
    text
}
