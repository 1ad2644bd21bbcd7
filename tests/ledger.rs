//! The savings ledger from the outside (issue 14): real servers write it, `mcp-pruner stats` reads
//! it (table, JSON, HTML), several servers write at once without losing a row, and a locked or
//! corrupted file never stops a call.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

fn ledger_env(path: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("MCP_PRUNER_NO_LEDGER", "0".to_string()),
        ("MCP_PRUNER_LEDGER", path.to_string_lossy().into_owned()),
    ]
}

fn stdio_with_ledger(root: &Path, ledger: &Path) -> StdioClient {
    stdio_with_ledger_args(root, ledger, &[])
}

fn stdio_with_ledger_args(root: &Path, ledger: &Path, args: &[&str]) -> StdioClient {
    let env = ledger_env(ledger);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    StdioClient::spawn_env(root, args, &env)
}

/// The `by_tool` row of a `stats --json` report for `name`.
fn tool_row(report: &Value, name: &str) -> Value {
    report["by_tool"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

/// A root with a long source file, so that a focused read prunes.
fn project() -> tempfile::TempDir {
    let root = fixture_root();
    let mut src = String::new();
    for i in 0..400 {
        src.push_str(&format!(
            "/// Step {i} of the pipeline.\npub fn step_{i}(input: &[u8]) -> usize {{\n    let mut total = {i};\n    for b in input {{\n        total += *b as usize;\n    }}\n    total\n}}\n\n"
        ));
    }
    src.push_str(
        "pub fn parse_config(text: &str) -> Option<u32> {\n    text.trim().parse().ok()\n}\n",
    );
    std::fs::write(root.path().join("src/pipeline.rs"), src).unwrap();
    root
}

#[test]
fn a_scripted_session_is_counted_and_reported() {
    let root = project();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let mut c = stdio_with_ledger(root.path(), &ledger);
    c.request(
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scripted-agent","version":"9.1"}}),
    );
    let r = c.call(
        "read",
        json!({"path": "src/pipeline.rs", "context_focus_question": "where is the config text parsed?"}),
    );
    let meta = structured(&r["result"]);
    assert_eq!(meta["pruning"]["applied"], true, "{meta}");
    let id = meta["pruning"]["prune_id"].as_str().unwrap().to_string();
    c.call("grep", json!({"pattern": "parse_config", "paths": ["."]}));
    let build = c.call(
        "bash",
        json!({"cmd": "for i in $(seq 1 300); do echo compiling unit $i; done; echo 'error[E0425]: cannot find value `x`' >&2; exit 101", "context_focus_question": "why did the build fail?"}),
    );
    assert_eq!(build["result"]["isError"], true);
    // A short failure with a question: pruning is tried, leaves it whole, and the model reads it
    // with the error header (more tokens than the output alone).
    let short = c.call(
        "bash",
        json!({"cmd": "echo 'error: could not find Cargo.toml' >&2; exit 101", "context_focus_question": "why did the build fail?"}),
    );
    assert_eq!(structured(&short["result"])["pruning"]["applied"], false);
    let back = c.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 1, "end_line": 3}]}),
    );
    assert!(back["result"]["isError"].as_bool() != Some(true), "{back}");
    // The ledger's lifetime totals appear in health beside the process counters.
    let h = structured(&c.call("health", json!({}))["result"]);
    assert_eq!(h["ledger"]["path"], json!(ledger.to_string_lossy()));
    assert!(
        h["ledger"]["lifetime"]["calls"].as_u64().unwrap() >= 3,
        "{h}"
    );
    assert!(c.close().success());

    let report: Value = serde_json::from_str(&stats(&ledger, &["--json"])).unwrap();
    assert_eq!(report["total"]["calls"], 6, "{report}");
    let read = tool_row(&report, "read");
    assert_eq!(
        (&read["pruned_calls"], &read["recovered_calls"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(read["recovery_rate"], 1.0);
    assert!(read["tokens_saved"].as_u64().unwrap() > 1000, "{read}");
    assert_eq!(report["by_client"][0]["key"], "scripted-agent@9.1");
    // Saved = raw - read on every row (the README's definition), the failing build included: a
    // call pruning did not shorten read what it would have read raw.
    for row in report["by_tool"].as_array().unwrap() {
        let n = |k: &str| row[k].as_u64().unwrap();
        assert_eq!(
            n("tokens_saved"),
            n("tokens_raw") - n("tokens_read"),
            "{row}"
        );
    }
    let table = stats(&ledger, &[]);
    assert!(
        table.contains("by tool") && table.contains("by day"),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("read ")), "{table}");
    let by_client = stats(&ledger, &["--by", "client", "--since", "all"]);
    assert!(by_client.contains("scripted-agent@9.1"), "{by_client}");

    // The HTML page: self-contained, one chart per grouping, a bar per row.
    let page_path = dir.path().join("savings.html");
    let said = stats(&ledger, &["--html", page_path.to_str().unwrap()]);
    assert!(said.starts_with("wrote "), "{said}");
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<svg ").count(), 2);
    let tools = report["by_tool"].as_array().unwrap().len();
    let days = report["by_day"].as_array().unwrap().len();
    assert_eq!(
        page.matches(r#"<rect class="bar saved""#).count(),
        tools + days
    );
    for external in ["<script", "<link", "src=", "url(", "https://"] {
        assert!(
            !page.contains(external),
            "the page fetches something: {external}"
        );
    }
    // No file contents, questions or commands in the ledger: only counts and names.
    let raw = std::fs::read(&ledger).unwrap();
    let text = String::from_utf8_lossy(&raw);
    for secret in [
        "config text parsed",
        "compiling unit",
        "E0425",
        "parse_config",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into the ledger");
    }
}

/// An output cut to its budget without being pruned (here because the pruner cannot be reached)
/// saved what was cut: the ledger's row counts what `health` counts.
#[test]
fn an_output_cut_without_pruning_saves_what_health_says() {
    let root = project();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    // Nothing listens on port 9 (discard) here: the call fails at once and falls back.
    let args = [
        "--pruner",
        "http",
        "--pruner-endpoint",
        "http://127.0.0.1:9/prune",
    ];
    let mut c = stdio_with_ledger_args(root.path(), &ledger, &args);
    c.request(
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cut","version":"1"}}),
    );
    let r = c.call(
        "bash",
        json!({"cmd": "seq 1 20000", "context_focus_question": "which number is missing?"}),
    );
    let meta = structured(&r["result"]);
    let pruning = &meta["pruning"];
    assert_eq!(
        (
            &pruning["applied"],
            &pruning["fallback"],
            &meta["truncated"]
        ),
        (&json!(false), &json!(true), &json!(true)),
        "{meta}"
    );
    let (before, after) = (
        pruning["tokens_before"].as_u64().unwrap(),
        pruning["tokens_after"].as_u64().unwrap(),
    );
    assert!(before > after * 5, "{meta}");
    let h = structured(&c.call("health", json!({}))["result"]);
    assert_eq!(h["tokens_saved"], before - after, "{h}");
    assert!(c.close().success());
    let report: Value = serde_json::from_str(&stats(&ledger, &["--json"])).unwrap();
    let bash = tool_row(&report, "bash");
    assert_eq!(
        (
            &bash["tokens_raw"],
            &bash["tokens_read"],
            &bash["tokens_saved"]
        ),
        (&json!(before), &json!(after), &json!(before - after)),
        "{report}"
    );
    assert_eq!(bash["pruned_calls"], 0, "{report}");
}

/// A recovery that gives no line back recovers nothing: of three pruned reads, the one whose
/// recovery by question answers "nothing new" stays unrecovered; the one recovered by ranges and
/// the one read back as a resource by question are marked.
#[test]
fn only_a_recovery_that_returns_lines_counts() {
    let root = project();
    let copy = std::fs::read_to_string(root.path().join("src/pipeline.rs")).unwrap();
    std::fs::write(root.path().join("src/pipeline2.rs"), copy).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let mut c = stdio_with_ledger(root.path(), &ledger);
    c.initialize();
    let question = "where is the config text parsed?";
    let read = |c: &mut StdioClient, path: &str| {
        let r = c.call(
            "read",
            json!({"path": path, "context_focus_question": question}),
        );
        let s = structured(&r["result"]);
        assert_eq!(s["pruning"]["applied"], true, "{s}");
        let id = s["pruning"]["prune_id"].as_str().unwrap().to_string();
        (id, s["total_lines"].as_u64().unwrap())
    };
    let (first, total) = read(&mut c, "src/pipeline.rs");
    // Limited to the last line, which the read showed (the end of `parse_config`): nothing new.
    let empty = c.call(
        "recover_text",
        json!({"prune_id": first, "context_focus_question": question, "ranges": [{"start_line": total, "end_line": total}]}),
    );
    let meta = structured(&empty["result"]);
    assert_eq!(meta["metadata"]["returned_lines"], 0, "{empty}");
    let (second, _) = read(&mut c, "src/pipeline2.rs");
    assert_ne!(first, second);
    let back = c.call(
        "recover_text",
        json!({"prune_id": second, "ranges": [{"start_line": 1, "end_line": 3}]}),
    );
    assert!(
        back.get("result").is_some() && back["result"]["isError"].as_bool() != Some(true),
        "{back}"
    );
    // A resource read by question that gives lines back is a recovery too.
    let copy = std::fs::read_to_string(root.path().join("src/pipeline.rs")).unwrap();
    std::fs::write(root.path().join("src/pipeline3.rs"), copy).unwrap();
    let (third, _) = read(&mut c, "src/pipeline3.rs");
    let res = c.request(
        "resources/read",
        json!({"uri": format!("prune://{third}?question=step_7")}),
    );
    let got = res["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(got.contains("pub fn step_7("), "{res}");
    assert!(c.close().success());
    let report: Value = serde_json::from_str(&stats(&ledger, &["--json"])).unwrap();
    let read_row = tool_row(&report, "read");
    assert_eq!(
        (&read_row["pruned_calls"], &read_row["recovered_calls"]),
        (&json!(3), &json!(2)),
        "{report}"
    );
}

#[test]
fn two_stdio_servers_and_one_http_server_lose_no_row() {
    const CALLS: usize = 10_000;
    let root = fixture_root();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let per = [3_334, 3_333, 3_333];
    assert_eq!(per.iter().sum::<usize>(), CALLS);
    let stdio = |n: usize| {
        let (root, ledger) = (root.path().to_path_buf(), ledger.clone());
        std::thread::spawn(move || {
            let mut c = stdio_with_ledger(&root, &ledger);
            c.initialize();
            // Pipelined: every request written, then every answer read.
            let ids: Vec<Value> = (0..n)
                .map(|_| {
                    c.request_async(
                        "tools/call",
                        json!({"name": "read", "arguments": {"path": "hello.txt"}}),
                    )
                })
                .collect();
            for id in ids {
                let r = c.wait_for(&id, Duration::from_secs(60));
                assert!(r.get("result").is_some(), "{r}");
            }
            assert!(c.close().success());
        })
    };
    let a = stdio(per[0]);
    let b = stdio(per[1]);
    let env = ledger_env(&ledger);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut s = HttpServer::start_env(root.path(), &[], &env);
    let sid = s.initialize();
    for _ in 0..per[2] {
        let r = s.call(&sid, "read", json!({"path": "hello.txt"}));
        assert!(r.get("result").is_some(), "{r}");
    }
    a.join().unwrap();
    b.join().unwrap();
    // SIGTERM: the server writes what is queued before it exits.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let _ = s.child.wait();
    let report: Value =
        serde_json::from_str(&stats(&ledger, &["--json", "--since", "all"])).unwrap();
    assert_eq!(
        report["total"]["calls"], CALLS as u64,
        "rows lost: {report}"
    );
}

#[test]
fn a_locked_or_corrupted_ledger_never_stops_a_call() {
    let root = fixture_root();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");

    // Corrupted: set aside, a new one started, the call answered and counted.
    std::fs::write(&ledger, vec![b'x'; 4096]).unwrap();
    let mut c = stdio_with_ledger(root.path(), &ledger);
    c.initialize();
    assert!(c.call("read", json!({"path": "hello.txt"}))["result"].is_object());
    assert!(c.close().success());
    let aside = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".corrupt-")
        })
        .count();
    assert_eq!(aside, 1);
    let report: Value =
        serde_json::from_str(&stats(&ledger, &["--json", "--since", "all"])).unwrap();
    assert_eq!(report["total"]["calls"], 1);

    // Locked by another writer: calls are answered at once; the rows land once it lets go.
    let holder = rusqlite::Connection::open(&ledger).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut c = stdio_with_ledger(root.path(), &ledger);
    c.initialize();
    let started = std::time::Instant::now();
    for _ in 0..20 {
        assert!(c.call("read", json!({"path": "hello.txt"}))["result"].is_object());
    }
    let answered_in = started.elapsed();
    assert!(
        answered_in < Duration::from_secs(5),
        "calls waited on the locked ledger: {answered_in:?}"
    );
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    assert!(c.close().success());
    let report: Value =
        serde_json::from_str(&stats(&ledger, &["--json", "--since", "all"])).unwrap();
    assert_eq!(report["total"]["calls"], 21, "{report}");

    // An unusable path: a warning, and the server serves.
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "x").unwrap();
    let mut c = stdio_with_ledger(root.path(), &blocked.join("ledger.sqlite3"));
    c.initialize();
    assert!(c.call("read", json!({"path": "hello.txt"}))["result"].is_object());
    assert!(c.close().success());
}
