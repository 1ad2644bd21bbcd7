//! Pruning backends against fake pruner servers on 127.0.0.1: a pruner that times out, answers
//! 500, answers garbage, answers the wrong shape, rewrites lines, or answers correctly. Each gives
//! seed 000's documented `PruningMetadata`, and the raw output is never lost.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

/// A one-thread HTTP server: the path picks the behaviour. Requests are checked against the
/// contract the backend claims to speak (400 otherwise).
fn fake_pruner() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .to_string();
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h == "\r\n" || h.is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let contract = mcp_pruner::contract::contract();
                let (status, reply) = match path.as_str() {
                    "/slow" => {
                        std::thread::sleep(Duration::from_secs(3));
                        (200, json!({"output":"late","output_bytes":4}).to_string())
                    }
                    "/500" => (500, "{\"detail\":\"model crashed\"}".into()),
                    "/garbage" => (200, "<html>not json</html>".into()),
                    "/shape" => (200, json!({"pruned":"x"}).to_string()),
                    // A backend that keeps every line: what it returns is over any budget.
                    "/keepall" => {
                        let input = req["input"].as_str().unwrap_or("");
                        (
                            200,
                            json!({"output": input, "output_bytes": input.len()}).to_string(),
                        )
                    }
                    "/rewrite" => (
                        200,
                        json!({"output":"a summary of the log","output_bytes":20}).to_string(),
                    ),
                    "/valid" => {
                        if contract.validate("PrunerRequest", &req).is_err() {
                            (400, "bad request".into())
                        } else {
                            let input = req["input"].as_str().unwrap();
                            let kept: Vec<&str> = input
                                .lines()
                                .enumerate()
                                .filter(|(i, l)| *i < 25 || l.contains("ERROR"))
                                .map(|(_, l)| l)
                                .collect();
                            let out = kept.join("\n") + "\n";
                            (200, json!({"output_bytes": out.len(), "output": out, "extra": "ignored"}).to_string())
                        }
                    }
                    "/swe" | "/swe-text" => {
                        if contract.validate("SwePrunerRequest", &req).is_err() {
                            (400, "bad request".into())
                        } else {
                            let (pruned_code, kept_frags) =
                                swe_prune(req["code"].as_str().unwrap());
                            let mut reply = json!({"score": 0.4, "pruned_code": pruned_code, "token_scores": [], "kept_frags": kept_frags, "origin_token_cnt": 900, "left_token_cnt": 300, "model_input_token_cnt": 950, "error_msg": null});
                            if path == "/swe-text" {
                                reply.as_object_mut().unwrap().remove("kept_frags");
                            }
                            (200, reply.to_string())
                        }
                    }
                    _ => (404, "{}".into()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            });
        }
    });
    port
}

/// What the SWE-Pruner service answers (its `prune_code_lines`): kept lines (here the first 25 and
/// the ERROR lines), blank lines dropped, each removed gap as one `(filtered N lines)` row, and
/// `kept_frags` listing the kept 1-based line numbers.
fn swe_prune(code: &str) -> (String, Vec<usize>) {
    let lines: Vec<&str> = code.lines().collect();
    let kept: Vec<usize> = (1..=lines.len())
        .filter(|&n| n <= 25 || lines[n - 1].contains("ERROR"))
        .collect();
    let (mut out, mut gap) = (Vec::new(), 0);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() || !kept.contains(&(i + 1)) {
            gap += 1;
            continue;
        }
        if gap > 0 {
            out.push(format!("(filtered {gap} lines)"));
            gap = 0;
        }
        out.push(line.to_string());
    }
    if gap > 0 {
        out.push(format!("(filtered {gap} lines)"));
    }
    (out.join("\n"), kept)
}

fn log_root() -> (tempfile::TempDir, String) {
    let root = fixture_root();
    let mut log = String::new();
    for i in 1..=200 {
        if i % 50 == 0 {
            log.push_str(&format!(
                "2026-11-22 ERROR worker {i} failed: connection reset\n"
            ));
        } else {
            log.push_str(&format!(
                "2026-11-22 INFO worker {i} processed batch {}\n",
                i * 7
            ));
        }
    }
    std::fs::write(root.path().join("app.log"), &log).unwrap();
    (root, log)
}

fn read_with(mode: &str, backend: &str, port: u16) -> (Value, String, StdioClient) {
    read_at(&format!("http://127.0.0.1:{port}/{mode}"), backend)
}

/// `read` of a 200-line log through the `backend` pruner at `endpoint` (300 ms timeout).
fn read_at(endpoint: &str, backend: &str) -> (Value, String, StdioClient) {
    let (root, log) = log_root();
    let mut c = StdioClient::spawn_env(
        root.path(),
        &["--pruner", backend],
        &[
            ("JEEVES_PRUNER_ENDPOINT", endpoint),
            ("JEEVES_PRUNER_TIMEOUT_MS", "300"),
        ],
    );
    c.initialize();
    let r = c.call("read", json!({"path":"app.log","context_focus_question":"which workers failed?","max_output_bytes":100000}))["result"].clone();
    assert_valid_result("read", &r);
    std::mem::forget(root);
    (r, log, c)
}

fn assert_fallback(mode: &str, code: &str) {
    let port = fake_pruner();
    let (r, log, _c) = read_with(mode, "http", port);
    let p = &structured(&r)["pruning"];
    assert_eq!(
        (
            p["attempted"].clone(),
            p["applied"].clone(),
            p["fallback"].clone(),
            p["reason"].clone(),
            p["backend"].clone()
        ),
        (
            json!(true),
            json!(false),
            json!(true),
            json!("pruner_error"),
            json!("http")
        ),
        "{mode}: {p}"
    );
    assert_eq!(p["error"]["code"], code, "{mode}: {p}");
    assert!(
        p["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert_eq!(p["raw_bytes"], log.len());
    assert_eq!(text(&r), log, "{mode}: the raw output is returned whole");
    assert!(
        r.get("isError").is_none(),
        "a pruner failure is not a tool failure"
    );
}

#[test]
fn pruner_timeout_falls_back_to_raw() {
    let t = std::time::Instant::now();
    assert_fallback("slow", "timeout");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the 300 ms pruner timeout bounds the call"
    );
}

#[test]
fn pruner_500_falls_back_to_raw() {
    assert_fallback("500", "http_error");
}

#[test]
fn pruner_garbage_falls_back_to_raw() {
    assert_fallback("garbage", "invalid_response");
    assert_fallback("shape", "invalid_response");
    assert_fallback("rewrite", "invalid_response");
}

#[test]
fn unreachable_pruner_falls_back_to_raw() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (r, _, _c) = read_with("valid", "http", port);
    assert_eq!(structured(&r)["pruning"]["error"]["code"], "http_error");
}

#[test]
fn an_https_pruner_endpoint_gets_a_tls_handshake() {
    // A listener that records the first bytes the server sends, then hangs up: a TLS client
    // opens with a handshake record (0x16) of a TLS 1.x version (0x03, _).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = [0u8; 3];
        let _ = stream.read_exact(&mut head);
        tx.send(head).unwrap();
    });
    let (r, log, _c) = read_at(&format!("https://127.0.0.1:{port}/valid"), "http");
    let head = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(head[..2], [0x16, 0x03], "a TLS ClientHello, got {head:?}");
    let p = &structured(&r)["pruning"];
    assert_eq!(p["error"]["code"], "http_error", "{p}");
    assert_eq!(text(&r), log, "the raw output is returned whole");
}

fn assert_applied(r: &Value, log: &str, c: &mut StdioClient, backend: &str) {
    let p = &structured(r)["pruning"];
    assert_eq!(
        (
            p["attempted"].clone(),
            p["applied"].clone(),
            p["fallback"].clone(),
            p["backend"].clone()
        ),
        (json!(true), json!(true), json!(false), json!(backend)),
        "{p}"
    );
    assert!(p.get("reason").is_none() && p.get("error").is_none(), "{p}");
    let content = text(r);
    assert!(p["pruned_bytes"].as_u64().unwrap() < log.len() as u64);
    assert!(p["tokens_after"].as_u64().unwrap() < p["tokens_before"].as_u64().unwrap());
    assert!(
        content.contains("worker 150 failed")
            && content.contains("[… lines ")
            && content.ends_with(&format!(
                "\n[pruned lines: recover_text prune_id={}]",
                p["prune_id"].as_str().unwrap()
            )),
        "{content}"
    );
    assert!(!content.contains("worker 120 processed"));
    // Every byte comes back.
    let id = p["prune_id"].as_str().unwrap();
    let rec = c.call(
        "recover_text",
        json!({"prune_id":id,"include_line_numbers":false,"max_output_bytes":100000}),
    )["result"]
        .clone();
    assert_eq!(structured(&rec)["raw_text"], log);
}

#[test]
fn valid_seed_000_pruner_is_applied_and_recoverable() {
    let port = fake_pruner();
    let (r, log, mut c) = read_with("valid", "http", port);
    assert_applied(&r, &log, &mut c, "http");
}

#[test]
fn swe_pruner_api_is_applied_and_recoverable() {
    let port = fake_pruner();
    let (r, log, mut c) = read_with("swe", "swe-pruner", port);
    assert_applied(&r, &log, &mut c, "swe-pruner");
    let content = text(&r);
    assert!(!content.contains("(filtered "), "{content}");
    // A SWE-Pruner-compatible service that sends only the text is read from its text.
    let (r, log, mut c) = read_with("swe-text", "swe-pruner", port);
    assert_applied(&r, &log, &mut c, "swe-pruner");
}

#[test]
fn remote_backends_never_remove_a_no_prune_block() {
    let port = fake_pruner();
    let root = fixture_root();
    let mut log = String::new();
    for i in 1..=200 {
        log.push_str(&format!("2026-11-22 INFO worker {i} processed batch\n"));
        if i == 120 {
            log.push_str("⟦NO_PRUNE_BEGIN⟧\nlicence: keep this audit trail\n⟦NO_PRUNE_END⟧\n");
        }
    }
    std::fs::write(root.path().join("app.log"), &log).unwrap();
    for (mode, backend) in [("valid", "http"), ("swe", "swe-pruner")] {
        let endpoint = format!("http://127.0.0.1:{port}/{mode}");
        let mut c = StdioClient::spawn_env(
            root.path(),
            &["--pruner", backend],
            &[("JEEVES_PRUNER_ENDPOINT", &endpoint)],
        );
        c.initialize();
        let r = c.call("read", json!({"path":"app.log","context_focus_question":"which workers failed?","max_output_bytes":100000}))["result"].clone();
        assert_valid_result("read", &r);
        assert_eq!(structured(&r)["pruning"]["applied"], true, "{backend}");
        let content = text(&r);
        assert!(
            content.contains("⟦NO_PRUNE_BEGIN⟧\nlicence: keep this audit trail\n⟦NO_PRUNE_END⟧\n"),
            "{backend} dropped the protected block: {content}"
        );
        assert!(!content.contains("worker 150 processed"), "{backend}");
    }
}

/// `read` of `path` with `question`, pruned by the fake backend that keeps every line (so its
/// answer is over any budget): the valid result and the client.
fn read_through_keepall(
    root: &Path,
    port: u16,
    path: &str,
    question: &str,
) -> (Value, StdioClient) {
    let endpoint = format!("http://127.0.0.1:{port}/keepall");
    let mut c = StdioClient::spawn_env(
        root,
        &["--pruner", "http"],
        &[("JEEVES_PRUNER_ENDPOINT", &endpoint)],
    );
    c.initialize();
    let r = c.call(
        "read",
        json!({"path": path, "context_focus_question": question}),
    )["result"]
        .clone();
    assert_valid_result("read", &r);
    (r, c)
}

#[test]
fn an_over_budget_remote_answer_is_fitted_by_relevance() {
    let port = fake_pruner();
    let root = fixture_root();
    // The one failure sits in the middle: a cut by position (head and tail) would miss it.
    let log: String = (1..=2000)
        .map(|i| {
            if i == 1000 {
                format!("2026-11-22 ERROR worker {i} failed: connection reset\n")
            } else {
                format!("2026-11-22 INFO worker {i} processed batch {}\n", i * 7)
            }
        })
        .collect();
    std::fs::write(root.path().join("app.log"), &log).unwrap();
    let (r, mut c) = read_through_keepall(root.path(), port, "app.log", "which workers failed?");
    let p = &structured(&r)["pruning"];
    assert_eq!(p["applied"], true, "{p}");
    let content = text(&r);
    assert!(content.contains("worker 1000 failed"), "{content}");
    // Every marker cites raw lines, and recover_text returns exactly them.
    let raw: Vec<&str> = log.lines().collect();
    let id = p["prune_id"].as_str().unwrap();
    let mut markers = 0;
    let marker = regex::Regex::new(mcp_pruner::prune::render::COMPACT_MARKER_PATTERN).unwrap();
    for line in content.lines() {
        let Some(caps) = marker.captures(line) else {
            continue;
        };
        let a: usize = caps["start"].parse().unwrap();
        let b: usize = caps.name("end").map_or(a, |e| e.as_str().parse().unwrap());
        // A log's marker says what kind of lines it hides when its range does not: these are
        // ordinary lines only (`997 other lines` said no more than the range).
        assert!(caps.name("names").is_none(), "{line}");
        let rec = c.call(
            "recover_text",
            json!({"prune_id":id,"ranges":[{"start_line":a,"end_line":b}],"include_line_numbers":false,"max_output_bytes":1000000}),
        )["result"]
            .clone();
        let got = structured(&rec)["raw_text"].as_str().unwrap().to_string();
        assert_eq!(got, raw[a - 1..b].join("\n") + "\n", "lines {a}-{b}");
        markers += 1;
    }
    assert!(markers > 0, "{content}");
}

#[test]
fn a_remote_answer_for_deeply_nested_code_does_not_kill_the_server() {
    let port = fake_pruner();
    let root = fixture_root();
    let mut src = String::new();
    for k in 0..10_000 {
        src += &format!("mod cookie{k} {{\n");
    }
    src += "fn f() {\n    x();\n}\n";
    src += &"}\n".repeat(10_000);
    std::fs::write(root.path().join("deep.rs"), &src).unwrap();
    let (_, c) = read_through_keepall(root.path(), port, "deep.rs", "where is the cookie module?");
    assert!(c.close().success());
}

#[test]
fn one_instance_is_another_ones_pruner() {
    let (root, log) = log_root();
    let a = HttpServer::start(root.path(), &[]);
    // The seed-000 contract served by the builtin engine.
    let direct: Value = a
        .client
        .post(format!("{}/prune", a.base))
        .json(&json!({"request_id":"r1","tool":"bash","focus_question":"which workers failed?","input":log,"input_bytes":log.len()}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    mcp_pruner::contract::contract()
        .validate("PrunerResponse", &direct)
        .unwrap();
    assert_eq!(
        direct["output_bytes"],
        direct["output"].as_str().unwrap().len()
    );
    let bad = a
        .client
        .post(format!("{}/prune", a.base))
        .json(&json!({"tool":"bash"}))
        .send()
        .unwrap();
    assert_eq!(bad.status(), 400);
    let endpoint = format!("{}/prune", a.base);
    let mut b = StdioClient::spawn_env(root.path(), &[], &[("JEEVES_PRUNER_ENDPOINT", &endpoint)]);
    b.initialize();
    let r = b.call("read", json!({"path":"app.log","context_focus_question":"which workers failed?","max_output_bytes":100000}))["result"].clone();
    assert_applied(&r, &log, &mut b, "http");
}

#[test]
fn eligibility_reasons() {
    let (root, _) = log_root();
    std::fs::write(root.path().join("empty.txt"), "").unwrap();
    std::fs::write(root.path().join("big.txt"), "x\n".repeat(300_000)).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let reason = |c: &mut StdioClient, args: Value| {
        structured(&c.call("read", args)["result"])["pruning"].clone()
    };
    let p = reason(
        &mut c,
        json!({"path":"empty.txt","context_focus_question":"q?"}),
    );
    assert_eq!(
        (p["attempted"].clone(), p["reason"].clone()),
        (json!(false), json!("output_empty"))
    );
    let p = reason(
        &mut c,
        json!({"path":"big.txt","context_focus_question":"q?"}),
    );
    assert_eq!(
        (
            p["attempted"].clone(),
            p["reason"].clone(),
            p["raw_bytes"].clone()
        ),
        (json!(false), json!("too_large"), json!(600_000))
    );
    let p = reason(&mut c, json!({"path":"app.log"}));
    assert_eq!(p["reason"], "no_focus_question");
    drop(c);
    let mut off = StdioClient::spawn(root.path(), &["--pruner", "off"]);
    off.initialize();
    let p = reason(
        &mut off,
        json!({"path":"app.log","context_focus_question":"q?"}),
    );
    assert_eq!(
        (
            p["attempted"].clone(),
            p["applied"].clone(),
            p["reason"].clone()
        ),
        (
            json!(false),
            json!(false),
            json!("disabled_or_unconfigured")
        )
    );
}

#[test]
fn failed_calls_report_why_nothing_was_pruned() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let pruning = |c: &mut StdioClient, args: Value| {
        let r = c.call("bash", args)["result"].clone();
        assert_valid_result("bash", &r);
        assert_eq!(r["isError"], true);
        structured(&r)["pruning"].clone()
    };
    // The output went through the pruning decision: its reason stays.
    let p = pruning(
        &mut c,
        json!({"cmd":"exit 3","context_focus_question":"why?"}),
    );
    assert_eq!(p["reason"], "output_empty", "{p}");
    let p = pruning(&mut c, json!({"cmd":"exit 3"}));
    assert_eq!(p["reason"], "no_focus_question", "{p}");
    // Cut short before pruning: a question was asked, so "no question" would be false.
    let p = pruning(
        &mut c,
        json!({"cmd":"echo started; sleep 5","timeout_ms":300,"context_focus_question":"why?"}),
    );
    assert_eq!(p["attempted"], false);
    assert!(p.get("reason").is_none(), "{p}");
    // A tool failure before any output.
    let r = c.call(
        "read",
        json!({"path":"missing.txt","context_focus_question":"why?"}),
    )["result"]
        .clone();
    assert!(structured(&r)["pruning"].get("reason").is_none(), "{r}");
    let r = c.call("read", json!({"path":"missing.txt"}))["result"].clone();
    assert_eq!(structured(&r)["pruning"]["reason"], "no_focus_question");
}
