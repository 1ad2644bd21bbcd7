//! Seed 001's `prune_text` / `recover_text` contract, spoken over stdio to the real binary:
//! annotations and markers (byte-identical, the seed's parsing regex, never line-numbered), the
//! limits, recovery through the `recover_range` alias, the fail-open no-op (`input_too_large`)
//! that still returns a recoverable `prune_id`, and an expired id explained as such.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

/// Seed 001 section 6.2's parsing regex.
const MARKER: &str = r"^⟦PRUNÉ: prune_id=(?P<prune_id>[^\s]+) lignes (?P<start>\d+)-(?P<end>\d+) \((?P<count>\d+)\) raison=(?P<reason>.*)⟧$";

fn worker_log() -> String {
    (1..=200)
        .map(|i| {
            if i == 150 {
                "2026-11-22 ERROR worker 150 failed: connection reset by ledger-db\n".to_string()
            } else {
                format!("2026-11-22 INFO worker {i} processed batch {}\n", i * 7)
            }
        })
        .collect()
}

fn prune(c: &mut StdioClient, text: &str, options: Value) -> Value {
    let r = c.call(
        "prune_text",
        json!({"text": text, "goal_hint": "which worker failed and why?", "source_type": "logs", "options": options, "max_output_bytes": 100000}),
    )["result"]
        .clone();
    assert_valid_result("prune_text", &r);
    let s = structured(&r).clone();
    let from_text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        from_text["prune_id"], s["prune_id"],
        "content[0].text carries the result as JSON (seed 001 section 4.1)"
    );
    s
}

#[test]
fn annotations_markers_limits_and_recovery() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let log = worker_log();
    let original: Vec<&str> = log.lines().collect();
    let s = prune(
        &mut c,
        &log,
        json!({"max_prune_ratio": 0.75, "min_keep_lines": 10, "timeout_ms": 1500, "annotate_lines": true, "include_markers": true}),
    );
    let stats = &s["stats"];
    assert_eq!(stats["used_fallback"], false, "{s}");
    assert_eq!(stats["original_lines"], 200);
    let kept = stats["kept_lines"].as_u64().unwrap();
    assert!(
        kept >= 10 && stats["pruned_ratio"].as_f64().unwrap() <= 0.75,
        "{stats}"
    );
    assert!(
        stats["tokens_est_after"].as_u64().unwrap() < stats["tokens_est_before"].as_u64().unwrap()
    );
    assert_eq!(
        stats["tokens_est_before"],
        mcp_pruner::tokens::count(&log),
        "o200k count"
    );

    let pruned = s["pruned_text"].as_str().unwrap();
    let regex = regex::Regex::new(MARKER).unwrap();
    let annotations = s["annotations"].as_array().unwrap();
    assert!(!annotations.is_empty());
    let mut removed = 0;
    for a in annotations {
        let marker = a["marker"].as_str().unwrap();
        let caps = regex
            .captures(marker)
            .unwrap_or_else(|| panic!("{marker:?}"));
        assert_eq!(caps["prune_id"], *s["prune_id"].as_str().unwrap());
        assert_eq!(caps["start"], a["original_start_line"].to_string());
        assert_eq!(caps["end"], a["original_end_line"].to_string());
        assert_eq!(caps["count"], a["pruned_line_count"].to_string());
        assert!(
            pruned.lines().any(|l| l == marker),
            "the marker line is byte-identical to its annotation and not numbered"
        );
        removed += a["pruned_line_count"].as_u64().unwrap();
    }
    assert_eq!(removed + kept, 200);
    // Kept lines are `N│ line` with their original number, in order.
    let mut last = 0;
    for l in pruned.lines().filter(|l| !l.starts_with('⟦')) {
        let (n, text) = l.split_once("│ ").unwrap_or_else(|| panic!("{l:?}"));
        let n: usize = n.parse().unwrap();
        assert!(n > last, "order preserved");
        assert_eq!(text, original[n - 1]);
        last = n;
    }
    assert!(pruned.contains("150│ 2026-11-22 ERROR worker 150 failed"));

    // recover_range (seed 001's alias) returns one removed block exactly.
    let a = &annotations[0];
    let (from, to) = (
        a["original_start_line"].as_u64().unwrap() as usize,
        a["original_end_line"].as_u64().unwrap() as usize,
    );
    let r = c.call(
        "recover_range",
        json!({"prune_id": s["prune_id"], "ranges": [{"start_line": from, "end_line": to}], "include_line_numbers": false, "max_output_bytes": 100000}),
    )["result"]
        .clone();
    let expected: String = original[from - 1..to]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(structured(&r)["raw_text"], expected);
    assert_eq!(structured(&r)["metadata"]["line_numbering"], "original");
}

#[test]
fn too_large_input_fails_open_with_a_recoverable_id() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--max-input-chars", "1000"]);
    c.initialize();
    let log = worker_log();
    let s = prune(&mut c, &log, json!({}));
    assert_eq!(s["pruned_text"], log, "no-op: pruned_text == text");
    assert_eq!(s["annotations"], json!([]));
    assert_eq!(s["stats"]["used_fallback"], true);
    assert!(
        s["warnings"]
            .as_array()
            .unwrap()
            .contains(&json!("input_too_large"))
    );
    let r = c.call(
        "recover_text",
        json!({"prune_id": s["prune_id"], "include_line_numbers": false, "max_output_bytes": 100000}),
    )["result"]
        .clone();
    assert_eq!(structured(&r)["raw_text"], log);
}

#[test]
fn an_expired_id_says_so() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--prune-id-ttl-s", "1"]);
    c.initialize();
    let s = prune(&mut c, &worker_log(), json!({}));
    std::thread::sleep(Duration::from_millis(1300));
    let r = c.call(
        "recover_text",
        json!({"prune_id": s["prune_id"], "ranges": [{"start_line": 1, "end_line": 2}]}),
    );
    assert_eq!(r["error"]["code"], -32004, "{r}");
    assert_eq!(r["error"]["message"], "prune_id_not_found");
    assert_eq!(r["error"]["data"]["code"], "prune_id_not_found");
    assert_eq!(r["error"]["data"]["prune_id"], s["prune_id"]);
    assert!(
        r["error"]["data"]["hint"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{r}"
    );
}

/// Text that JSON escapes heavily (a coloured build log's `\u001b`, a template's quotes) is
/// pruned to fit the budget as JSON: every removed range is a numbered marker with its
/// annotation, never a head-and-tail cut that names no line numbers (which the 85% allowance
/// for escaping gave a Svelte file and a coloured log before).
#[test]
fn escaped_text_is_pruned_to_fit_as_json_with_numbered_markers() {
    let log: String = (1..=400)
        .map(|i| {
            if i == 300 {
                "\u{1b}[1m\u{1b}[31merror\u{1b}[0m: link failed for \u{1b}[1mcrate300\u{1b}[0m\n".into()
            } else {
                format!("\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m \u{1b}[1mcrate{i}\u{1b}[0m v0.{i}.0 \u{1b}[2m(/src/crate{i})\u{1b}[0m\n")
            }
        })
        .collect();
    let quoted: String = (1..=300)
        .map(|i| {
            format!(
                "  \"f{i}\": \"{{\\\"id\\\":\\\"f{i}\\\",\\\"class\\\":\\\"field\\\",\\\"on\\\":\\\"save\\\"}}\",\n"
            )
        })
        .collect();
    assert!(
        quoted.starts_with("  \"f1\": \"{\\\"id\\\":\\\"f1\\\","),
        "{quoted:.80}"
    );
    let root = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let marker = regex::Regex::new(MARKER).unwrap();
    for (input, goal) in [
        (&log, "which crates were compiled before the link failed?"),
        (&quoted, "where is the field f150 saved?"),
    ] {
        for budget in [2048, 4096, 10240] {
            let r = c.call(
                "prune_text",
                json!({"text": input, "goal_hint": goal, "max_output_bytes": budget}),
            );
            let t = common::text(&r["result"]);
            assert!(t.len() <= budget, "{} > {budget}", t.len());
            let v: Value = serde_json::from_str(t).unwrap();
            let pruned = v["pruned_text"].as_str().unwrap();
            assert!(!pruned.contains("omitted here"), "{budget}: {pruned}");
            let markers = pruned.lines().filter(|l| l.starts_with('⟦')).count();
            assert!(markers > 0, "{budget}: {pruned}");
            assert!(
                pruned
                    .lines()
                    .filter(|l| l.starts_with('⟦'))
                    .all(|l| marker.is_match(l)),
                "{budget}: {pruned}"
            );
            assert_eq!(v["stats"]["used_fallback"], false, "{v}");
        }
    }
}
