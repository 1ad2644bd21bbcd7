//! Happy paths over HTTP (`serve`): handshake with a session, every tool, `/rpc` without a
//! session (seed 001 style), health endpoints, SSE progress, cancellation, session end.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn session_handshake_and_tools() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let sid = s.initialize();
    assert_eq!(sid.len(), 32);
    let r = s.call(&sid, "read", json!({"path":"hello.txt"}));
    assert_valid_result("read", &r["result"]);
    assert_eq!(r["result"]["content"][0]["text"], "hello\nworld\n");
    let r = s.call(&sid, "bash", json!({"cmd":"printf 'a\\nb\\n' | wc -l"}));
    assert_valid_result("bash", &r["result"]);
    assert_eq!(text(&r["result"]).lines().nth(1).unwrap().trim(), "2");
    let r = s.call(&sid, "grep", json!({"pattern":"beta","paths":["."]}));
    assert_valid_result("grep", &r["result"]);
    assert_eq!(structured(&r["result"])["match_count"], 2);
    let r = s.call(&sid, "health", json!({}));
    assert_valid_result("health", &r["result"]);

    // Seed 001's /rpc, no initialize, no session: tools/list and tools/call just work.
    let r: Value = s
        .post(
            "/rpc",
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}),
            None,
        )
        .json()
        .unwrap();
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 6);
    let r: Value = s
        .post(
            "/rpc",
            &json!({"jsonrpc":"2.0","id":2,"method":"health"}),
            None,
        )
        .json()
        .unwrap();
    assert_eq!(r["result"]["status"], "healthy");

    // DELETE ends the session; it is then unknown (404).
    let d = s
        .client
        .delete(format!("{}/mcp", s.base))
        .header("mcp-session-id", &sid)
        .send()
        .unwrap();
    assert_eq!(d.status(), 204);
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
        Some(&sid),
    );
    assert_eq!(r.status(), 404);
}

#[test]
fn health_endpoints_match_their_schemas() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let hz: Value = s
        .client
        .get(format!("{}/healthz", s.base))
        .send()
        .unwrap()
        .json()
        .unwrap();
    mcp_pruner::contract::contract()
        .validate("Healthz", &hz)
        .unwrap();
    assert_eq!(
        (hz["ok"].clone(), hz["status"].clone()),
        (json!(true), json!("ok"))
    );
    let h: Value = s
        .client
        .get(format!("{}/health", s.base))
        .send()
        .unwrap()
        .json()
        .unwrap();
    mcp_pruner::contract::contract()
        .validate("HealthResult", &h)
        .unwrap();
    // The ready event carried host, port and root (seed 000 event table).
    let logs = s.logs.lock().unwrap();
    let ready = logs
        .iter()
        .find(|l| l["event"] == "mcp_pruner.ready")
        .unwrap();
    assert_eq!(ready["data"]["host"], "127.0.0.1");
    assert_eq!(
        ready["data"]["root"],
        root_path(&root).to_string_lossy().as_ref()
    );
    assert!(ready["ts"].is_string() && ready["level"] == "info");
}

/// Reads an SSE body into its JSON `data:` payloads.
fn sse_messages(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|ev| {
            ev.lines()
                .find_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).unwrap())
        })
        .collect()
}

#[test]
fn progress_streams_as_sse_and_ends_with_the_result() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let sid = s.initialize();
    let req = json!({"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":"bash","arguments":{"cmd":"for i in 1 2 3 4 5 6 7 8; do echo step $i; sleep 0.1; done"},"_meta":{"progressToken":"pt"}}});
    let r = s.post("/mcp", &req, Some(&sid));
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let msgs = sse_messages(&r.text().unwrap());
    let last = msgs.last().unwrap();
    assert_eq!(last["id"], "p1", "the response is the last event");
    assert_eq!(structured(&last["result"])["exit_code"], 0);
    let progress: Vec<&Value> = msgs
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty());
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "pt")
    );
    assert_eq!(
        msgs.iter().filter(|m| m.get("id").is_some()).count(),
        1,
        "exactly one terminal response"
    );
}

#[test]
fn cancel_over_http_kills_the_command() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--kill-grace-ms", "300"]);
    let sid = s.initialize();
    let base = s.base.clone();
    let sid2 = sid.clone();
    let waiter = std::thread::spawn(move || {
        let c = blocking_client(Duration::from_secs(30));
        let body = json!({"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"bash","arguments":{"cmd":"echo $$ > leader.pid; (trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60"}}});
        let r = c
            .post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("mcp-session-id", sid2)
            .body(body.to_string())
            .send()
            .unwrap();
        r.json::<Value>().unwrap()
    });
    wait_for_file(&root.path().join("child.pid"));
    let t = Instant::now();
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"41"}}),
        Some(&sid),
    );
    assert_eq!(r.status(), 202);
    let resp = waiter.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(structured(&resp["result"])["error"]["code"], "CANCELLED");
    // The shell and its background child, which ignores SIGTERM, are both gone (SIGKILL after
    // the grace): no orphan survives a cancel.
    assert_processes_gone(
        root.path(),
        &["leader.pid", "child.pid"],
        Duration::from_secs(3),
        "the cancel",
    );
}

#[test]
fn a_client_that_goes_away_leaves_no_process_behind() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--kill-grace-ms", "300"]);
    let impatient = blocking_client(Duration::from_millis(1500));
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"cmd":"echo $$ > leader.pid; (trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60"}}});
    let r = impatient
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send();
    assert!(r.is_err(), "the client gave up before the command ended");
    wait_for_file(&root.path().join("child.pid"));
    assert_processes_gone(
        root.path(),
        &["leader.pid", "child.pid"],
        Duration::from_secs(5),
        "the dropped request",
    );
}

#[test]
fn a_client_that_leaves_an_sse_stream_leaves_no_process_behind() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--kill-grace-ms", "300"]);
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"cmd":"echo $$ > leader.pid; (trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60"},"_meta":{"progressToken":"p"}}});
    let r = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .unwrap();
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    wait_for_file(&root.path().join("child.pid"));
    drop(r);
    assert_processes_gone(
        root.path(),
        &["leader.pid", "child.pid"],
        Duration::from_secs(5),
        "the client leaving the SSE stream",
    );
}

/// Stored outputs are scoped (issue 15): `resources/list` shows a session the outputs stored for
/// it, a stateless request lists nothing, and any id stays readable by whoever holds it.
#[test]
fn stored_outputs_are_listed_only_to_their_session() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let a = s.initialize();
    let b = s.initialize();
    let r = s.call(&a, "bash", json!({"cmd": "seq 1 5000"}));
    let id = structured(&r["result"])["artifactRef"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("a stored output: {r}"));
    assert!(
        id.strip_prefix("prn_")
            .and_then(|r| r.split_once('_'))
            .is_some_and(|(n, tag)| n.parse::<u64>().is_ok()
                && tag.len() == 20
                && tag.bytes().all(|b| b.is_ascii_digit())),
        "{id}"
    );
    let list = |sid: Option<&str>| s.resource_names(sid);
    assert!(list(Some(&a)).contains(&id));
    assert!(!list(Some(&b)).contains(&id));
    assert!(list(None).is_empty());
    // With the id, another session recovers the lines.
    let r = s.call(
        &b,
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 1, "end_line": 2}], "include_line_numbers": false}),
    );
    let body: Value = serde_json::from_str(text(&r["result"])).unwrap();
    assert_eq!(body["raw_text"], "1\n2\n", "{r}");
}

/// Issue 13: a client that stalls is dropped after --header-timeout-ms: one that sends half a
/// header, one that sends nothing, and a kept-alive connection left idle after its request; the
/// server keeps serving others.
#[test]
fn stalled_connections_are_closed_after_the_header_timeout() {
    use std::io::{Read, Write};
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--header-timeout-ms", "400"]);
    let closes_within = |payload: &[u8], what: &str| {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(payload).unwrap();
        let started = std::time::Instant::now();
        let mut got = Vec::new();
        // Ok(0) is the close; an error is the 5 s read timeout, i.e. still open.
        let closed = loop {
            let mut buf = [0u8; 4096];
            match c.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(_) => break false,
            }
        };
        assert!(closed, "{what}: still open after 5 s");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{what}: closed only after {:?}",
            started.elapsed()
        );
        got
    };
    closes_within(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
        "half a header",
    );
    closes_within(b"", "nothing sent");
    let got = closes_within(
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "an idle kept-alive connection",
    );
    assert!(
        got.starts_with(b"HTTP/1.1 200 OK"),
        "the request was served first"
    );
    // 50 stalled clients at once do not keep the server from answering.
    let stalled: Vec<_> = (0..50)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
            c.write_all(b"POST /mcp HTTP/1.1\r\n").unwrap();
            c
        })
        .collect();
    let r = s.client.get(format!("{}/healthz", s.base)).send().unwrap();
    assert_eq!(r.status(), 200);
    drop(stalled);
}

/// Issue 13: a session unused for --session-idle-s ends; its id then gets the documented 404.
#[test]
fn an_idle_session_expires_with_a_404() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--session-idle-s", "1"]);
    let sid = s.initialize();
    // Used within the idle time: alive.
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
        Some(&sid),
    );
    assert_eq!(r.status(), 200);
    std::thread::sleep(Duration::from_millis(1600));
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
        Some(&sid),
    );
    assert_eq!(r.status(), 404);
    let body: Value = r.json().unwrap();
    assert_eq!(body["error"]["code"], -32001);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sessions end after 1 s without a request"),
        "{body}"
    );
}
