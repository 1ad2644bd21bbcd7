//! `mcp-pruner proxy --upstream URL` in front of an upstream that speaks only the 2026-07-28
//! revision: `interop/upstreams/modern_only.py` (plain http.server), which refuses `initialize`,
//! sessions and any request without its envelope, and logs every message it gets. The handshake
//! fallback against handshake-only upstreams is covered by `tests/proxy.rs` (server-everything
//! over HTTP).

mod common;

use common::{StdioClient, content_texts, free_port, spawn_everything_http, spawn_listening};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The modern-only upstream, running, and the file it logs received methods to.
struct Modern {
    child: Child,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Modern {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Modern {
    fn start() -> Modern {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("received.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/upstreams/modern_only.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .expect("PORT n")
            .to_string();
        Modern {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            log,
            _dir: dir,
        }
    }

    /// The lines the upstream logged, one per message received.
    fn received(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The proxy over stdio in front of `up`, initialized (the downstream handshake era).
fn proxy(up: &Modern, extra: &[&str]) -> StdioClient {
    let mut args: Vec<String> = vec!["proxy".into(), "--no-ledger".into()];
    args.extend(["--upstream".to_string(), up.url.clone()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut c = StdioClient::spawn_program(&common::bin(), &args, &[]);
    c.initialize();
    c
}

fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[test]
fn a_modern_upstream_is_discovered_never_initialized_and_its_tools_listed() {
    let up = Modern::start();
    let mut p = proxy(&up, &[]);
    let r = p.request("tools/list", json!({}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["build_log", "slow", "fail", "recover_text"], "{r}");
    // A handshake-era client gets no member of the revision's result envelope.
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(r["result"].get(key).is_none(), "{key} in {r}");
    }
    // A 2026-07-28 client gets this server's envelope, not the upstream's.
    let r = p.request("tools/list", json!({ "_meta": envelope() }));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-pruner",
        "{r}"
    );
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 4, "{r}");
    let d = p.request("server/discover", json!({ "_meta": envelope() }));
    assert!(
        d["result"]["instructions"]
            .as_str()
            .unwrap()
            .starts_with("A modern-only test server."),
        "{d}"
    );
    assert_eq!(
        up.received(),
        ["server/discover", "tools/list", "tools/list"],
        "one discover, then self-contained requests; no initialize, nothing refused"
    );
}

#[test]
fn a_modern_upstream_call_is_pruned_to_a_question_and_recovered() {
    let up = Modern::start();
    let mut p = proxy(&up, &[]);
    let q = "why did the build fail to link?";
    let r = p.call_within(
        "build_log",
        json!({ "context_focus_question": q }),
        Duration::from_secs(60),
    );
    let shown = content_texts(&r["result"]);
    assert!(
        shown.contains("ERROR linker: undefined reference to `ws_reconnect_backoff'"),
        "{shown}"
    );
    assert!(shown.len() < 20_000, "{}", shown.len());
    let at = shown.find("prune_id=").expect("a prune_id") + 9;
    let id: String = shown[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let rec = p.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 2998, "end_line": 3000}]}),
    );
    let raw = common::structured(&rec["result"])["raw_text"]
        .as_str()
        .unwrap()
        .to_string();
    let lines: Vec<&str> = raw
        .lines()
        .map(|l| l.split_once("│ ").map_or(l, |(_, rest)| rest))
        .collect();
    assert_eq!(
        lines,
        [
            "[02998] INFO compiling module_88.c (986 ms)",
            "[02999] INFO compiling module_89.c (993 ms)",
            "[03000] INFO compiling module_90.c (0 ms)",
        ],
        "recovered byte for byte"
    );
    // The proxy lists the tools once (to know which arguments they own), then calls.
    let received = up.received();
    assert_eq!(
        received,
        ["server/discover", "tools/list", "tools/call"],
        "{received:?}"
    );
}

#[test]
fn a_modern_upstream_error_passes_through() {
    let up = Modern::start();
    let mut p = proxy(&up, &[]);
    let r = p.call("fail", json!({ "why": "asked" }));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "fail was asked to fail: asked", "data": {"why": "asked"}}),
        "{r}"
    );
    let r = p.request("resources/read", json!({ "uri": "file:///nowhere" }));
    assert_eq!(
        r["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "file:///nowhere"}}),
        "{r}"
    );
    assert_eq!(
        up.received(),
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "resources/read"
        ]
    );
}

#[test]
fn the_handshake_era_forced_against_a_modern_upstream_fails_at_start() {
    let up = Modern::start();
    let out = Command::new(common::bin())
        .args([
            "proxy",
            "--no-ledger",
            "--upstream-era",
            "2025",
            "--upstream",
        ])
        .arg(&up.url)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("initialize was refused"), "{err}");
    assert!(
        up.received()
            .iter()
            .any(|l| l.starts_with("REFUSED initialize")),
        "{:?}",
        up.received()
    );
}

/// The proxy over stdio in front of `url`, initialized, its log lines (stderr) going to `log`.
fn logged_proxy(url: &str, extra: &[&str], log: &Path) -> StdioClient {
    let mut args: Vec<String> = vec![
        "-c".into(),
        format!("exec \"$0\" \"$@\" 2>>'{}'", log.display()),
        common::bin(),
        "proxy".into(),
        "--no-ledger".into(),
        "--upstream".into(),
        url.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut c = StdioClient::spawn_program("sh", &args, &[]);
    c.initialize();
    c
}

/// The era the proxy logged for its upstream (`proxy.upstream_era`): `true` for 2026-07-28.
fn logged_era(log: &Path) -> bool {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("proxy.upstream_era"))
        .unwrap_or_else(|| panic!("no proxy.upstream_era in {text}"));
    let v: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("{line}"));
    v["data"]["modern"]
        .as_bool()
        .or_else(|| v["modern"].as_bool())
        .unwrap_or_else(|| panic!("{line}"))
}

#[test]
fn this_servers_own_serve_is_spoken_to_in_the_era_asked() {
    let root = common::fixture_root();
    let serve = common::HttpServer::start(root.path(), &[]);
    let url = format!("{}/mcp", serve.base);
    for (extra, modern) in [(&[][..], true), (&["--upstream-era", "2025"][..], false)] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("proxy.log");
        let mut p = logged_proxy(&url, extra, &log);
        let r = p.request("tools/list", json!({}));
        let tools = r["result"]["tools"].as_array().expect("tools");
        assert!(tools.iter().any(|t| t["name"] == "read"), "{r}");
        assert!(r["result"].get("resultType").is_none(), "{r}");
        let r = p.call("read", json!({ "path": "hello.txt" }));
        assert!(content_texts(&r["result"]).contains("hello\nworld"), "{r}");
        assert_eq!(logged_era(&log), modern, "{extra:?}");
    }
}

#[test]
fn a_handshake_only_upstream_gets_the_handshake_unless_2026_is_forced() {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interop/upstreams/node_modules/.bin/mcp-server-everything");
    if !exe.exists() {
        eprintln!(
            "skipped: {} is not installed (run `bash interop/upstreams/install.sh`)",
            exe.display()
        );
        return;
    }
    let port = free_port();
    let mut up = spawn_everything_http(&exe, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("proxy.log");
    let mut p = logged_proxy(&url, &[], &log);
    let r = p.call("echo", json!({ "message": "fallback" }));
    assert_eq!(content_texts(&r["result"]), "Echo: fallback", "{r}");
    assert!(!logged_era(&log), "auto fell back to the handshake");
    drop(p);
    let out = Command::new(common::bin())
        .args([
            "proxy",
            "--no-ledger",
            "--upstream-era",
            "2026-07-28",
            "--upstream",
        ])
        .arg(&url)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("server/discover"), "{err}");
    let _ = up.kill();
    let _ = up.wait();
}

#[test]
fn a_stdio_upstream_is_spoken_to_in_2026_07_28_when_forced() {
    let root = common::fixture_root();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("proxy.log");
    let args: Vec<String> = vec![
        "-c".into(),
        format!("exec \"$0\" \"$@\" 2>>'{}'", log.display()),
        common::bin(),
        "proxy".into(),
        "--no-ledger".into(),
        "--upstream-era".into(),
        "2026-07-28".into(),
        "--".into(),
        common::bin(),
        "stdio".into(),
        "--root".into(),
        root.path().to_string_lossy().into_owned(),
    ];
    let mut p = StdioClient::spawn_program("sh", &args, &[]);
    p.initialize();
    let r = p.call("read", json!({ "path": "src/lib.rs" }));
    assert!(content_texts(&r["result"]).contains("pub fn beta()"), "{r}");
    assert!(logged_era(&log), "2026-07-28 over stdio");
}

#[test]
fn the_python_sdk_over_http_is_spoken_to_in_2026_07_28() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/upstreams");
    let python = dir.join(".venv/bin/python");
    if !python.exists() {
        eprintln!(
            "skipped: {} is not installed (run `bash interop/upstreams/install.sh`)",
            python.display()
        );
        return;
    }
    let port = free_port();
    let mut up = spawn_listening(
        Command::new(&python)
            .arg(dir.join("issues_server.py"))
            .args(["--http", &port.to_string()]),
        port,
        Duration::from_secs(30),
        "issues_server.py",
    );
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("proxy.log");
    let mut p = logged_proxy(&format!("http://127.0.0.1:{port}/mcp"), &[], &log);
    let r = p.request("tools/list", json!({}));
    assert!(r["result"].get("resultType").is_none(), "{r}");
    assert!(
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "build_log"),
        "{r}"
    );
    let q = "why did the build fail to link?";
    let r = p.call_within(
        "build_log",
        json!({ "context_focus_question": q }),
        Duration::from_secs(60),
    );
    let shown = content_texts(&r["result"]);
    assert!(
        shown.contains("undefined reference to `ws_reconnect_backoff'"),
        "{shown}"
    );
    assert!(shown.contains("prune_id="), "{shown}");
    let r = p.call("fail", json!({}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(logged_era(&log), "the SDK offers 2026-07-28");
    let _ = up.kill();
    let _ = up.wait();
}

#[test]
fn a_modern_upstream_gets_the_log_level_and_its_log_lines_are_relayed() {
    let up = Modern::start();
    let mut p = proxy(&up, &[]);
    let r = p.request("logging/setLevel", json!({ "level": "info" }));
    assert_eq!(r["result"], json!({}), "{r}");
    let r = p.call_within("build_log", json!({}), Duration::from_secs(60));
    assert!(r.get("result").is_some(), "{r}");
    let logged = p
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .unwrap_or_else(|| panic!("no log line relayed: {:?}", p.notifications));
    assert_eq!(logged["params"]["data"], "linking websocket/client.o");
    assert_eq!(
        up.received(),
        ["server/discover", "tools/list", "tools/call logLevel=info"],
        "logging/setLevel (removed in 2026-07-28) is not sent; the level travels with the call"
    );
}

#[test]
fn a_modern_upstream_call_is_cancelled_by_closing_its_post() {
    let up = Modern::start();
    let mut p = proxy(&up, &[]);
    let started = std::time::Instant::now();
    let id = p.request_async(
        "tools/call",
        json!({"name": "slow", "arguments": {"seconds": 30}}),
    );
    std::thread::sleep(Duration::from_millis(800));
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "test"}}));
    let r = p.wait_for(&id, Duration::from_secs(20));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(content_texts(&r["result"]).contains("CANCELLED"), "{r}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !up.received().iter().any(|l| l == "CLOSED slow") {
        assert!(
            std::time::Instant::now() < deadline,
            "the upstream's stream was not closed: {:?}",
            up.received()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        up.received(),
        ["server/discover", "tools/list", "tools/call", "CLOSED slow"],
        "cancelled by closing the POST, no notifications/cancelled"
    );
    // The upstream is still serving.
    let r = p.call("slow", json!({"seconds": 0.1}));
    assert_eq!(content_texts(&r["result"]), "slept 0.1 s", "{r}");
}
