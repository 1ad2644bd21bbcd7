//! What the model reads, in o200k tokens, for three real results (a pruned `read`, a failing
//! `bash`, a `grep` page) over this repository, under the two client behaviours: Claude Code and
//! Codex feed the model `JSON.stringify(structuredContent)` when a result has it and `content`
//! otherwise; other clients feed `content`. Not a test: it prints figures.
//!
//! Run: `cargo bench --bench model_tokens`. With `MODEL_TOKENS_BASELINE=/path/to/mcp-pruner` (an
//! earlier build) the same calls are made to it too, and the ratios printed.

use mcp_pruner::tokens::count;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The three calls: (label, tool, arguments).
fn calls() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "pruned read",
            "read",
            json!({"path": "src/prune/pipeline.rs",
                   "context_focus_question": "how does pruning fall back to the raw output when the backend times out?"}),
        ),
        (
            "bash failure",
            "bash",
            json!({"cmd": "python3 -m json.tool bench-data/realistic_repos.txt"}),
        ),
        (
            "grep page",
            "grep",
            json!({"pattern": "fn [a-z_]+\\(", "paths": ["src"]}),
        ),
    ]
}

/// Results of `calls()` from the server at `bin`, root = this repository.
fn results(bin: &str) -> Vec<Value> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut child = Command::new(bin)
        .args(["stdio", "--root", root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "{bin} closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "model-tokens", "version": "1"}}),
    );
    let out = calls()
        .into_iter()
        .enumerate()
        .map(|(i, (_, tool, args))| {
            request(
                i as u64 + 1,
                "tools/call",
                json!({"name": tool, "arguments": args}),
            )["result"]
                .clone()
        })
        .collect();
    drop(stdin);
    let _ = child.wait();
    out
}

/// What Claude Code and Codex feed the model.
fn structured_first(result: &Value) -> String {
    match result.get("structuredContent") {
        Some(sc) => sc.to_string(),
        None => content(result),
    }
}

/// What a client without structured-content support feeds the model.
fn content(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn main() {
    let ours = env!("CARGO_BIN_EXE_mcp-pruner");
    let baseline = std::env::var("MODEL_TOKENS_BASELINE").ok();
    let now = results(ours);
    let before = baseline.as_deref().map(results);
    println!(
        "o200k tokens the model reads (Claude Code / Codex: structuredContent JSON if present, else content)"
    );
    println!(
        "{:<14} {:>10} {:>10} {:>7} | {:>15} {:>15} {:>7} | {:>10}",
        "result",
        "baseline",
        "ours",
        "ratio",
        "baseline text B",
        "ours text B",
        "ratio",
        "ours wire B"
    );
    for (i, (label, _, _)) in calls().into_iter().enumerate() {
        let ours_tokens = count(&structured_first(&now[i]));
        let text = content(&now[i]).len();
        let (base, ratio, base_text, text_ratio) = match &before {
            Some(b) => {
                let t = count(&structured_first(&b[i]));
                let bt = content(&b[i]).len();
                (
                    t.to_string(),
                    format!("{:.2}x", ours_tokens as f64 / t as f64),
                    bt.to_string(),
                    format!("{:.2}x", text as f64 / bt as f64),
                )
            }
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{label:<14} {base:>10} {ours_tokens:>10} {ratio:>7} | {base_text:>15} {text:>15} {text_ratio:>7} | {:>10}",
            now[i].to_string().len()
        );
    }
    println!(
        "text B = bytes of content[0].text: the page of file, output or matches the result carries."
    );
    if before.is_none() {
        println!("(set MODEL_TOKENS_BASELINE to an earlier build to compare)");
    }
}
