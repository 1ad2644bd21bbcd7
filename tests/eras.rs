//! Both MCP eras from the outside (issue 11): requests that declare the 2026-07-28 revision (in
//! `params._meta`, the `MCP-Protocol-Version` header, or by calling `server/discover`) are served
//! statelessly with the revision's envelope and errors, over HTTP and stdio; everything else is
//! the handshake era, unchanged (its snapshots live in `tests/contract.rs`). Each error is
//! asserted on the exact bytes sent back.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const MODERN: &str = "2026-07-28";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A request envelope declaring `version`.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "eras-test", "version": "1"}
    })
}

fn request(id: u64, method: &str, mut params: Value, version: &str) -> Value {
    params["_meta"] = meta(version);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs `body` with the routing headers a modern client mirrors (`extra` added or overriding);
/// returns the status, whether a session id came back, and the body.
fn post(s: &HttpServer, body: &Value, headers: &[(&str, &str)]) -> (u16, Option<String>, String) {
    let mut rb = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let r = rb.body(body.to_string()).send().unwrap();
    let status = r.status().as_u16();
    let sid = r
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    (status, sid, r.text().unwrap())
}

/// The routing headers of a modern request for `method` (and `name`, when it has one).
fn routing<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(n) = name {
        h.push(("mcp-name", n));
    }
    h
}

fn discover_result() -> String {
    format!(
        r#"{{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{{"tools":{{"listChanged":false}},"logging":{{}},"resources":{{"listChanged":false}},"prompts":{{"listChanged":false}}}},"instructions":"Add context_focus_question to read/bash/grep to get only the lines it needs; removed blocks show as [… lines a-b: what they hide] (numbers of the original text). recover_text with the prune_id the result names returns them: by ranges, or pass context_focus_question to get what the result did not show for it.","ttlMs":3600000,"cacheScope":"public","resultType":"complete","_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"mcp-pruner","version":"{VERSION}"}}}}}}"#
    )
}

#[test]
fn server_discover_answers_without_a_session_on_both_transports() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let body = request(1, "server/discover", json!({}), MODERN);
    let (status, sid, text) = post(&s, &body, &routing("server/discover", None));
    assert_eq!(status, 200);
    assert_eq!(sid, None, "no Mcp-Session-Id for a modern request");
    let want = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        discover_result()
    );
    assert_eq!(text, want);

    // Stdio: no initialize first.
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.send(&body);
    let got = c.next_message(Duration::from_secs(10));
    assert_eq!(got.to_string(), want);
    assert!(c.close().success());
}

#[test]
fn an_unsupported_declared_version_is_32022_naming_every_version_served() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let body = request(7, "tools/list", json!({}), "2099-01-01");
    let (status, sid, text) = post(
        &s,
        &body,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
    );
    let want = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"data":{"requested":"2099-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]},"message":"Unsupported protocol version"}}"#;
    assert_eq!((status, sid, text.as_str()), (400, None, want));

    let mut c = StdioClient::spawn(root.path(), &[]);
    c.send(&body);
    assert_eq!(c.next_message(Duration::from_secs(10)).to_string(), want);
    // The handshake era on the same connection is untouched.
    assert_eq!(
        c.initialize()["result"]["protocolVersion"],
        json!("2025-11-25")
    );
    assert!(c.close().success());
}

#[test]
fn mirrored_headers_that_disagree_with_the_body_are_32020() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let call = request(
        3,
        "tools/call",
        json!({"name": "health", "arguments": {}}),
        MODERN,
    );
    let err = |message: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32020,"message":"{message}"}}}}"#)
    };
    let cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (
            vec![
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "health"),
            ],
            err(
                "MCP-Protocol-Version header does not match the request envelope's protocol version",
            ),
        ),
        (
            vec![("mcp-method", "tools/call"), ("mcp-name", "health")],
            err(
                "MCP-Protocol-Version header does not match the request envelope's protocol version",
            ),
        ),
        (
            routing("tools/list", Some("health")),
            err("Mcp-Method header does not match the request body's method"),
        ),
        (
            routing("tools/call", Some("bash")),
            err(r#"Mcp-Name header does not match the request body's \"name\" parameter"#),
        ),
        (
            routing("tools/call", None),
            err(r#"Mcp-Name header does not match the request body's \"name\" parameter"#),
        ),
        (
            [
                routing("tools/call", Some("health")),
                vec![("mcp-method", "tools/call")],
            ]
            .concat(),
            err("mcp-method header appears more than once"),
        ),
    ];
    for (headers, want) in cases {
        let (status, sid, text) = post(&s, &call, &headers);
        assert_eq!((status, sid, text), (400, None, want), "{headers:?}");
    }
    // The same request with agreeing headers (the name base64-mirrored, as clients may) runs.
    let (status, sid, text) = post(
        &s,
        &call,
        &routing("tools/call", Some("=?base64?aGVhbHRo?=")),
    );
    assert_eq!((status, sid), (200, None), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert_eq!(
        v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-pruner"
    );
    assert!(v["result"].get("isError").is_none_or(|e| e == false), "{v}");
}

#[test]
fn a_modern_request_without_its_envelope_is_32602() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let body = json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}});
    let (status, sid, text) = post(&s, &body, &routing("tools/list", None));
    assert_eq!(status, 400);
    assert_eq!(sid, None);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"params._meta must be an object carrying the required \"io.modelcontextprotocol/protocolVersion\" and \"io.modelcontextprotocol/clientCapabilities\" envelope keys"}}"#
    );
    let mut partial = request(5, "tools/list", json!({}), MODERN);
    partial["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let (status, _, text) = post(&s, &partial, &routing("tools/list", None));
    assert_eq!(status, 400);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities"}}"#
    );
    // A batch cannot be a modern request.
    let (status, _, text) = post(&s, &json!([partial]), &routing("tools/list", None));
    assert_eq!(status, 400);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the body must be a single JSON-RPC request or notification object"}}"#
    );
}

#[test]
fn methods_the_revision_removed_are_method_not_found() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let mut c = StdioClient::spawn(root.path(), &[]);
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]
    .into_iter()
    .enumerate()
    {
        let body = request(
            i as u64,
            method,
            json!({"level": "info", "uri": "prune://x"}),
            MODERN,
        );
        let want = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32601,"message":"Method not found: {method} (removed in protocol revision 2026-07-28)"}}}}"#
        );
        let (status, sid, text) = post(&s, &body, &routing(method, None));
        assert_eq!((status, sid, text), (404, None, want.clone()), "{method}");
        c.send(&body);
        assert_eq!(c.next_message(Duration::from_secs(10)).to_string(), want);
    }
    // An unknown method is 404 too; the handshake era still answers ping.
    let unknown = request(9, "nope/nothing", json!({}), MODERN);
    let want = r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: nope/nothing"}}"#;
    let (status, sid, text) = post(&s, &unknown, &routing("nope/nothing", None));
    assert_eq!((status, sid, text.as_str()), (404, None, want));
    c.send(&unknown);
    assert_eq!(c.next_message(Duration::from_secs(10)).to_string(), want);
    // A declared version that is not a string (stdio: no header to disagree with).
    let mut bad = request(10, "tools/list", json!({}), MODERN);
    bad["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
    c.send(&bad);
    assert_eq!(
        c.next_message(Duration::from_secs(10)).to_string(),
        r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"the protocol-version envelope value must be a string"}}"#
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    assert!(c.close().success());
}

#[test]
fn listings_carry_cache_hints_and_results_the_server_stamp() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.send(&request(1, "tools/list", json!({}), MODERN));
    let list = c.next_message(Duration::from_secs(10));
    let r = &list["result"];
    assert_eq!(
        (&r["ttlMs"], &r["cacheScope"], &r["resultType"]),
        (&json!(3_600_000), &json!("public"), &json!("complete"))
    );
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "mcp-pruner", "version": VERSION})
    );
    // The tools are the handshake era's, byte for byte.
    let legacy = c.request("tools/list", json!({}));
    assert_eq!(r["tools"], legacy["result"]["tools"]);
    assert!(legacy["result"].get("resultType").is_none());

    c.send(&request(2, "resources/list", json!({}), MODERN));
    let r = &c.next_message(Duration::from_secs(10))["result"];
    assert_eq!(
        (&r["ttlMs"], &r["cacheScope"]),
        (&json!(0), &json!("private"))
    );
    c.send(&request(
        3,
        "tools/call",
        json!({"name": "read", "arguments": {"path": "hello.txt"}}),
        MODERN,
    ));
    let r = &c.next_message(Duration::from_secs(10))["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"][0]["text"], "hello\nworld\n", "{r}");
    assert!(r["_meta"]["mcp-pruner/result"].is_object(), "{r}");
    assert!(r.get("ttlMs").is_none());
    assert!(c.close().success());
}

#[test]
fn a_cancelled_modern_bash_call_leaves_no_process_on_either_transport() {
    let cmd = "echo $$ > leader.pid; (trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60";
    // Stdio: notifications/cancelled for the request id.
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "300"]);
    c.send(&request(
        11,
        "tools/call",
        json!({"name": "bash", "arguments": {"cmd": cmd}}),
        MODERN,
    ));
    wait_for_file(&root.path().join("child.pid"));
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11}}));
    let r = c.wait_for(&json!(11), Duration::from_secs(10));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["resultType"], "complete");
    assert_processes_gone(
        root.path(),
        &["leader.pid", "child.pid"],
        Duration::from_secs(5),
        "a cancelled modern call over stdio",
    );
    assert!(c.close().success());

    // HTTP: the client closes the response stream (SSE, as progress was asked for).
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--kill-grace-ms", "300"]);
    let mut body = request(
        12,
        "tools/call",
        json!({"name": "bash", "arguments": {"cmd": cmd}}),
        MODERN,
    );
    body["params"]["_meta"]["progressToken"] = json!("p");
    let mut rb = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in routing("tools/call", Some("bash")) {
        rb = rb.header(k, v);
    }
    let r = rb.body(body.to_string()).send().unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert!(r.headers().get("mcp-session-id").is_none());
    wait_for_file(&root.path().join("child.pid"));
    drop(r);
    assert_processes_gone(
        root.path(),
        &["leader.pid", "child.pid"],
        Duration::from_secs(5),
        "a modern SSE client that left",
    );

    // A tool timeout is kept in the new era as in the old.
    let body = request(
        13,
        "tools/call",
        json!({"name": "bash", "arguments": {"cmd": "sleep 30", "timeout_ms": 300}}),
        MODERN,
    );
    let started = std::time::Instant::now();
    let (status, _, text) = post(&s, &body, &routing("tools/call", Some("bash")));
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(5));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(
        v["result"]["_meta"]["mcp-pruner/result"]["error"]["code"],
        "TOOL_TIMEOUT"
    );
}

/// Over HTTP too, a modern request's `logLevel` opts it in to `notifications/message`: they arrive
/// on the request's own SSE stream before its result, and a request without it gets none.
#[test]
fn a_modern_http_request_with_a_log_level_gets_its_log_messages_over_sse() {
    let root = fixture_root();
    let s = HttpServer::start_env(
        root.path(),
        &[],
        &[
            ("JEEVES_PRUNER_ENDPOINT", "http://127.0.0.1:9/prune"),
            ("JEEVES_PRUNER_TIMEOUT_MS", "200"),
        ],
    );
    let read = json!({"name": "read", "arguments": {"path": "hello.txt", "context_focus_question": "what?"}});
    let events = |text: &str| -> Vec<Value> {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect()
    };
    let mut body = request(31, "tools/call", read.clone(), MODERN);
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let (status, sid, text) = post(&s, &body, &routing("tools/call", Some("read")));
    assert_eq!((status, sid), (200, None), "{text}");
    let got = events(&text);
    let msg = got
        .iter()
        .position(|e| e["method"] == "notifications/message")
        .unwrap_or_else(|| panic!("no log message on the stream: {text}"));
    assert_eq!(got[msg]["params"]["level"], "warning");
    assert_eq!(got[msg]["params"]["data"]["event"], "pruner.call_failed");
    let result = got
        .iter()
        .position(|e| e["id"] == 31)
        .unwrap_or_else(|| panic!("no result on the stream: {text}"));
    assert!(msg < result, "the message comes before the result: {text}");
    assert_eq!(got[result]["result"]["resultType"], "complete");

    let body = request(32, "tools/call", read, MODERN);
    let (status, _, text) = post(&s, &body, &routing("tools/call", Some("read")));
    assert_eq!(status, 200);
    assert!(!text.contains("notifications/message"), "{text}");
}

/// The envelope is read per request: `logLevel` opts that request (and only that one) in to
/// `notifications/message`, a `progressToken` gets progress, and `clientInfo` names the client in
/// the savings ledger, all with no `initialize` on the connection.
#[test]
fn client_info_log_level_and_progress_come_from_each_requests_envelope() {
    let root = fixture_root();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let ledger_str = ledger.to_str().unwrap();
    // An unreachable pruner: its fallback is reported as a warning notification.
    let mut c = StdioClient::spawn_env(
        root.path(),
        &[],
        &[
            ("JEEVES_PRUNER_ENDPOINT", "http://127.0.0.1:9/prune"),
            ("JEEVES_PRUNER_TIMEOUT_MS", "200"),
            ("MCP_PRUNER_NO_LEDGER", "0"),
            ("MCP_PRUNER_LEDGER", ledger_str),
        ],
    );
    let read = json!({"name": "read", "arguments": {"path": "hello.txt", "context_focus_question": "what?"}});
    let messages = |c: &StdioClient| {
        c.notifications
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .count()
    };
    c.send(&request(21, "tools/call", read.clone(), MODERN));
    let r = c.wait_for(&json!(21), Duration::from_secs(10));
    assert_eq!(
        r["result"]["_meta"]["mcp-pruner/result"]["pruning"]["fallback"], true,
        "{r}"
    );
    assert_eq!(messages(&c), 0, "no logLevel, no log notifications");

    let mut with_level = request(22, "tools/call", read.clone(), MODERN);
    with_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    c.send(&with_level);
    c.wait_for(&json!(22), Duration::from_secs(10));
    let msg = c
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .expect("a warning notification for the request that asked")
        .clone();
    assert_eq!(msg["params"]["level"], "warning");
    assert_eq!(msg["params"]["data"]["event"], "pruner.call_failed");

    // The level belonged to that request only.
    c.send(&request(23, "tools/call", read, MODERN));
    c.wait_for(&json!(23), Duration::from_secs(10));
    assert_eq!(messages(&c), 1, "logLevel is not sticky across requests");

    let mut progress = request(
        24,
        "tools/call",
        json!({"name": "bash", "arguments": {"cmd": "for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.3; done"}}),
        MODERN,
    );
    progress["params"]["_meta"]["progressToken"] = json!("modern-p");
    c.send(&progress);
    let r = c.wait_for(&json!(24), Duration::from_secs(20));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(
        c.notifications
            .iter()
            .any(|n| n["method"] == "notifications/progress"
                && n["params"]["progressToken"] == "modern-p"),
        "progress for the modern call: {:?}",
        c.notifications
    );
    assert!(c.close().success());

    let report: Value =
        serde_json::from_str(&stats(&ledger, &["--json", "--since", "all"])).unwrap();
    assert_eq!(report["total"]["calls"], 4, "{report}");
    assert_eq!(report["by_client"][0]["key"], "eras-test@1", "{report}");
}

/// Issue 35, conformance: what `server/discover` declares is what is answered (prompts: an empty
/// list, and `prompts/get` of any name is -32602); mirrored routing headers are compared
/// without their optional whitespace (RFC 9110 section 5.5); a resource that is not found names
/// the URI requested in the error's data (SEP-2164).
#[test]
fn declared_capabilities_trimmed_headers_and_resource_not_found_data() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let (_, _, text) = post(
        &s,
        &request(1, "server/discover", json!({}), MODERN),
        &routing("server/discover", None),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["result"]["capabilities"]["prompts"],
        json!({"listChanged": false}),
        "{v}"
    );
    let (status, _, text) = post(
        &s,
        &request(2, "prompts/list", json!({}), MODERN),
        &routing("prompts/list", None),
    );
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["result"]["prompts"], json!([]), "{v}");
    let (_, _, text) = post(
        &s,
        &request(3, "prompts/get", json!({"name": "x"}), MODERN),
        &routing("prompts/get", Some("x")),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // Optional whitespace around a mirrored name is not part of it.
    let call = request(
        4,
        "tools/call",
        json!({"name": "health", "arguments": {}}),
        MODERN,
    );
    for name in [" health", "health\t", " \thealth  "] {
        let (status, _, text) = post(&s, &call, &routing("tools/call", Some(name)));
        assert_eq!(status, 200, "{name:?}: {text}");
    }
    let (status, _, _) = post(&s, &call, &routing("tools/call", Some("heal th")));
    assert_eq!(status, 400);
    // resources/read of a URI that names nothing: the error's data has the URI.
    let uri = "prune://prn_999_00000000000000000000";
    let (_, _, text) = post(
        &s,
        &request(5, "resources/read", json!({"uri": uri}), MODERN),
        &routing("resources/read", Some(uri)),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["data"]["uri"], uri, "{v}");
    // Over stdio in the handshake era too.
    let mut c = StdioClient::spawn(root.path(), &[]);
    let init = c.initialize();
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": false})
    );
    let r = c.request("resources/read", json!({"uri": uri}));
    assert_eq!(r["error"]["data"]["uri"], uri, "{r}");
}
