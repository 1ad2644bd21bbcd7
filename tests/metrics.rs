//! `GET /metrics` (issue 38): Prometheus text behind the bearer token, counting calls, errors and
//! latency by tool, tokens raw/read/saved, the store's entries and evictions.

mod common;

use common::*;
use serde_json::json;

#[test]
fn metrics_count_calls_tokens_and_the_store_behind_the_token() {
    let root = fixture_root();
    let big: String = (1..=2000)
        .map(|i| format!("fn item_{i}() {{}}\n"))
        .collect();
    std::fs::write(root.path().join("big.rs"), &big).unwrap();
    std::fs::write(root.path().join("big2.rs"), big.replace("fn", "pub fn")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let s = HttpServer::start(
        root.path(),
        &[
            "--auth-token-file",
            token_file.to_str().unwrap(),
            "--store-max-entries",
            "1",
        ],
    );
    let get = |auth: Option<&str>| {
        let mut rb = s.client.get(format!("{}/metrics", s.base));
        if let Some(a) = auth {
            rb = rb.header("authorization", format!("Bearer {a}"));
        }
        rb.send().unwrap()
    };
    assert_eq!(get(None).status(), 401);
    assert_eq!(get(Some("wrong")).status(), 401);
    let post = |body: serde_json::Value| {
        s.client
            .post(format!("{}/mcp", s.base))
            .header("authorization", "Bearer s3cret")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
            .send()
            .unwrap()
            .json::<serde_json::Value>()
            .unwrap()
    };
    let call = |name: &str, args: serde_json::Value| {
        post(
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":args}}),
        )
    };
    call("read", json!({"path": "big.rs"}));
    call(
        "read",
        json!({"path": "big2.rs", "context_focus_question": "what is item_1500?"}),
    );
    call("read", json!({"path": "missing.rs"}));
    call(
        "recover_text",
        json!({"prune_id": "prn_1_00000000000000000000"}),
    );
    let r = get(Some("s3cret"));
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let m = r.text().unwrap();
    assert_eq!(
        metric_sample(&m, "mcp_pruner_tool_calls_total{tool=\"read\"}"),
        3.0
    );
    assert_eq!(
        metric_sample(&m, "mcp_pruner_tool_errors_total{tool=\"read\"}"),
        1.0
    );
    assert_eq!(
        metric_sample(&m, "mcp_pruner_tool_errors_total{tool=\"recover_text\"}"),
        1.0
    );
    assert_eq!(
        metric_sample(&m, "mcp_pruner_tool_duration_seconds_count{tool=\"read\"}"),
        3.0
    );
    assert_eq!(
        metric_sample(
            &m,
            "mcp_pruner_tool_duration_seconds_bucket{tool=\"read\",le=\"+Inf\"}"
        ),
        3.0
    );
    let (raw, read, saved) = (
        metric_sample(&m, "mcp_pruner_tokens_total{kind=\"raw\"}"),
        metric_sample(&m, "mcp_pruner_tokens_total{kind=\"read\"}"),
        metric_sample(&m, "mcp_pruner_tokens_total{kind=\"saved\"}"),
    );
    assert!(raw > read && read > 0.0 && saved == raw - read, "{m}");
    // Two outputs stored with room for one: one entry, one eviction.
    assert_eq!(
        metric_sample(&m, "mcp_pruner_store_entries{backend=\"memory\"}"),
        1.0
    );
    assert_eq!(
        metric_sample(&m, "mcp_pruner_store_evictions_total{backend=\"memory\"}"),
        1.0
    );
    assert_eq!(metric_sample(&m, "mcp_pruner_pruner_fallbacks_total"), 0.0);
}
