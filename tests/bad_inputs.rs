//! At least 25 bad inputs, each answered with its documented error and no crash, over stdio and
//! over HTTP: JSON-RPC errors (-32700/-32600/-32601/-32602 with field_errors, -32004) for what
//! validation catches, tool errors (`isError`, code + reason) for what only the filesystem knows.

mod common;
use common::*;
use serde_json::{Value, json};

enum Expect {
    /// JSON-RPC error with this code; for -32602 the first field error starts with this pointer.
    Rpc(i64, &'static str),
    /// Tool error with this seed-003 code and seed-000 reason.
    Tool(&'static str, &'static str),
}
use Expect::*;

fn call(tool: &str, args: Value) -> Value {
    json!({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":tool,"arguments":args}})
}

fn cases() -> Vec<(&'static str, Value, Expect)> {
    vec![
        (
            "read: .. traversal",
            call("read", json!({"path":"../etc/passwd"})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: absolute path outside root",
            call("read", json!({"path":"/etc/passwd"})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: NUL byte",
            call("read", json!({"path":"hello\u{0}.txt"})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: empty path",
            call("read", json!({"path":""})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: path wrong type",
            call("read", json!({"path":123})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: path missing",
            call("read", json!({})),
            Rpc(-32602, "/arguments/path"),
        ),
        (
            "read: unknown field",
            call("read", json!({"path":"hello.txt","bogus":1})),
            Rpc(-32602, "/arguments/bogus"),
        ),
        (
            "read: symlink to a file outside",
            call("read", json!({"path":"escape-link"})),
            Tool("INVALID_REQUEST", "invalid_path"),
        ),
        (
            "read: through a symlinked dir outside",
            call("read", json!({"path":"escape-dir/passwd"})),
            Tool("INVALID_REQUEST", "invalid_path"),
        ),
        (
            "read: missing file",
            call("read", json!({"path":"nope.txt"})),
            Tool("NOT_FOUND", "not_found"),
        ),
        (
            "read: a directory",
            call("read", json!({"path":"src"})),
            Tool("INVALID_REQUEST", "invalid_path"),
        ),
        (
            "read: encoding not utf-8",
            call("read", json!({"path":"hello.txt","encoding":"latin1"})),
            Rpc(-32602, "/arguments/encoding"),
        ),
        (
            "read: max_output_bytes below range",
            call("read", json!({"path":"hello.txt","max_output_bytes":10})),
            Rpc(-32602, "/arguments/max_output_bytes"),
        ),
        (
            "read: max_output_bytes above range",
            call(
                "read",
                json!({"path":"hello.txt","max_output_bytes":99999999}),
            ),
            Rpc(-32602, "/arguments/max_output_bytes"),
        ),
        (
            "read: offset 0",
            call("read", json!({"path":"hello.txt","offset":0})),
            Rpc(-32602, "/arguments/offset"),
        ),
        (
            "read: blank focus question",
            call(
                "read",
                json!({"path":"hello.txt","context_focus_question":"   "}),
            ),
            Rpc(-32602, "/arguments/context_focus_question"),
        ),
        (
            "read: focus question too long",
            call(
                "read",
                json!({"path":"hello.txt","context_focus_question":"q".repeat(1001)}),
            ),
            Rpc(-32602, "/arguments/context_focus_question"),
        ),
        (
            "bash: empty cmd",
            call("bash", json!({"cmd":""})),
            Rpc(-32602, "/arguments/cmd"),
        ),
        (
            "bash: cmd too long",
            call("bash", json!({"cmd":"x".repeat(50_001)})),
            Rpc(-32602, "/arguments/cmd"),
        ),
        (
            "bash: timeout below range",
            call("bash", json!({"cmd":"true","timeout_ms":50})),
            Rpc(-32602, "/arguments/timeout_ms"),
        ),
        (
            "bash: timeout wrong type",
            call("bash", json!({"cmd":"true","timeout_ms":"fast"})),
            Rpc(-32602, "/arguments/timeout_ms"),
        ),
        (
            "bash: env key lowercase",
            call("bash", json!({"cmd":"true","env":{"lower":"x"}})),
            Rpc(-32602, "/arguments/env"),
        ),
        (
            "bash: cmd with NUL",
            call("bash", json!({"cmd":"echo a\u{0}b"})),
            Rpc(-32602, "/arguments/cmd"),
        ),
        (
            "bash: env value with NUL",
            call("bash", json!({"cmd":"true","env":{"X":"a\u{0}b"}})),
            Rpc(-32602, "/arguments/env/X"),
        ),
        (
            "bash: cwd escapes root",
            call("bash", json!({"cmd":"true","cwd":"../.."})),
            Rpc(-32602, "/arguments/cwd"),
        ),
        (
            "bash: cwd missing",
            call("bash", json!({"cmd":"true","cwd":"nope"})),
            Tool("INVALID_REQUEST", "invalid_cwd"),
        ),
        (
            "bash: cwd symlink outside",
            call("bash", json!({"cmd":"true","cwd":"escape-dir"})),
            Tool("INVALID_REQUEST", "invalid_cwd"),
        ),
        (
            "grep: no paths",
            call("grep", json!({"pattern":"a","paths":[]})),
            Rpc(-32602, "/arguments/paths"),
        ),
        (
            "grep: path escapes",
            call("grep", json!({"pattern":"a","paths":["src","../"]})),
            Rpc(-32602, "/arguments/paths/1"),
        ),
        (
            "grep: invalid regex",
            call("grep", json!({"pattern":"(","paths":["."]})),
            Tool("INVALID_REQUEST", "rg_error"),
        ),
        (
            "grep: max_matches 0",
            call("grep", json!({"pattern":"a","paths":["."],"max_matches":0})),
            Rpc(-32602, "/arguments/max_matches"),
        ),
        (
            "grep: max_matches too big",
            call(
                "grep",
                json!({"pattern":"a","paths":["."],"max_matches":6000}),
            ),
            Rpc(-32602, "/arguments/max_matches"),
        ),
        (
            "grep: symlinked dir outside",
            call("grep", json!({"pattern":"root","paths":["escape-dir"]})),
            Tool("INVALID_REQUEST", "invalid_path"),
        ),
        (
            "grep: forged cursor",
            call(
                "grep",
                json!({"pattern":"a","paths":["."],"cursor":"g1.0.0"}),
            ),
            Rpc(-32602, "/arguments/cursor"),
        ),
        (
            "recover_text: unknown id",
            call("recover_text", json!({"prune_id":"prn_nope"})),
            Rpc(-32004, ""),
        ),
        (
            "recover_text: line 0 is invalid_range (seed 001 section 8)",
            call(
                "recover_text",
                json!({"prune_id":"p","ranges":[{"start_line":0,"end_line":1}]}),
            ),
            Rpc(-32005, "/arguments/ranges/0/start_line"),
        ),
        (
            "recover_text: bad range type",
            call(
                "recover_text",
                json!({"prune_id":"p","ranges":[{"start_line":"1","end_line":1}]}),
            ),
            Rpc(-32602, "/arguments/ranges/0/start_line"),
        ),
        (
            "tools/call: unknown tool",
            json!({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"rm_rf","arguments":{}}}),
            Rpc(-32602, "/name"),
        ),
        (
            "tools/call: arguments not an object",
            json!({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read","arguments":"hello.txt"}}),
            Rpc(-32602, "/arguments"),
        ),
        (
            "unknown method",
            json!({"jsonrpc":"2.0","id":"x","method":"files/delete"}),
            Rpc(-32601, ""),
        ),
        (
            "wrong jsonrpc version",
            json!({"jsonrpc":"1.0","id":"x","method":"ping"}),
            Rpc(-32600, ""),
        ),
        (
            "method not a string",
            json!({"jsonrpc":"2.0","id":"x","method":7}),
            Rpc(-32600, ""),
        ),
        (
            "initialize without protocolVersion",
            json!({"jsonrpc":"2.0","id":"x","method":"initialize","params":{}}),
            Rpc(-32602, "/protocolVersion"),
        ),
        (
            "logging/setLevel with unknown level",
            json!({"jsonrpc":"2.0","id":"x","method":"logging/setLevel","params":{"level":"loud"}}),
            Rpc(-32602, "/level"),
        ),
    ]
}

fn check(name: &str, resp: &Value, expect: &Expect) {
    match expect {
        Rpc(code, field) => {
            assert_eq!(
                resp["error"]["code"],
                json!(code),
                "{name}: expected JSON-RPC {code}, got {resp}"
            );
            assert!(
                resp["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{name}: error message"
            );
            if *code == -32602 {
                let errors = resp["error"]["data"]["field_errors"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{name}: -32602 needs data.field_errors: {resp}"));
                assert!(
                    errors
                        .iter()
                        .any(|e| e["field"].as_str().unwrap().starts_with(field)
                            && !e["message"].as_str().unwrap().is_empty()),
                    "{name}: expected a field error at {field}: {resp}"
                );
            }
            // Seed 001 section 8: message and data.code carry the domain code.
            let domain = match *code {
                -32004 => Some("prune_id_not_found"),
                -32005 => Some("invalid_range"),
                _ => None,
            };
            if let Some(d) = domain {
                assert_eq!(resp["error"]["message"], d, "{name}: {resp}");
                assert_eq!(resp["error"]["data"]["code"], d, "{name}: {resp}");
            }
        }
        Tool(code, reason) => {
            let result = &resp["result"];
            assert_eq!(
                result["isError"],
                json!(true),
                "{name}: expected a tool error, got {resp}"
            );
            assert_eq!(
                structured(result)["error"]["code"],
                json!(code),
                "{name}: {resp}"
            );
            assert_eq!(
                structured(result)["error"]["reason"],
                json!(reason),
                "{name}: {resp}"
            );
            let tool = structured(result)["tool"].as_str().unwrap().to_string();
            let tool = tool.as_str();
            assert_valid_result(tool, result);
        }
    }
}

#[test]
fn every_bad_input_over_stdio_gets_its_documented_error() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let cases = cases();
    assert!(cases.len() >= 25);
    for (i, (name, mut msg, expect)) in cases.into_iter().enumerate() {
        msg["id"] = json!(format!("case-{i}"));
        c.send(&msg);
        let resp = c.wait_for(&msg["id"], std::time::Duration::from_secs(20));
        check(name, &resp, &expect);
    }
    // Malformed JSON: -32700 with a null id, and the server is still alive afterwards.
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
    let resp = c.next_message(std::time::Duration::from_secs(10));
    assert_eq!(
        (resp["error"]["code"].clone(), resp["id"].clone()),
        (json!(-32700), Value::Null),
        "{resp}"
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    // A value too long to repeat is cut, with its own length (not its JSON form's, quotes and
    // escapes included: a 1,001-character question was said to have 1,003).
    let question = format!("{}?", "why \"x\" ".repeat(125));
    let r = c.call(
        "read",
        json!({"path": "hello.txt", "context_focus_question": question}),
    );
    let message = r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(message.contains("… (1001 characters)"), "{message}");
    assert!(c.close().success());
}

/// An argument named as another tool names it (Claude Code's `file_path`, `command`; `path` for
/// grep's `paths`) gets an error that lists what the tool takes and names the field it meant, so
/// the model's next call is right.
#[test]
fn an_unknown_argument_is_answered_with_the_fields_the_tool_takes() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    for (tool, args, field, meant) in [
        (
            "read",
            json!({"file_path": "hello.txt"}),
            "file_path",
            Some("path"),
        ),
        ("bash", json!({"command": "ls"}), "command", Some("cmd")),
        (
            "grep",
            json!({"pattern": "x", "path": "."}),
            "path",
            Some("paths"),
        ),
        (
            "read",
            json!({"path": "hello.txt", "question": "why?"}),
            "question",
            Some("context_focus_question"),
        ),
        (
            "bash",
            json!({"cmd": "ls", "timout_ms": 5}),
            "timout_ms",
            Some("timeout_ms"),
        ),
        (
            "read",
            json!({"path": "hello.txt", "bogus": 1}),
            "bogus",
            None,
        ),
    ] {
        let r = c.call(tool, args);
        assert_eq!(r["error"]["code"], json!(-32602), "{r}");
        let errors = r["error"]["data"]["field_errors"]
            .as_array()
            .expect("field_errors");
        let e = errors
            .iter()
            .find(|e| e["field"] == json!(format!("/arguments/{field}")))
            .unwrap_or_else(|| panic!("no error for {field}: {r}"));
        let message = e["message"].as_str().expect("message");
        assert!(
            message.starts_with("unknown field: not in the tool's inputSchema, which takes "),
            "{message}"
        );
        assert!(message.contains("context_focus_question"), "{message}");
        match meant {
            Some(m) => assert!(
                message.ends_with(&format!(" (did you mean `{m}`?)")),
                "{message}"
            ),
            None => assert!(!message.contains("did you mean"), "{message}"),
        }
    }
    // The whole message: the fields `tools/list` publishes (not the fixed `encoding`), then the
    // one meant.
    let r = c.call("read", json!({"file_path": "hello.txt"}));
    assert_eq!(
        r["error"]["data"]["field_errors"][0]["message"],
        json!(
            "unknown field: not in the tool's inputSchema, which takes path, offset, limit, \
             max_output_bytes, context_focus_question (did you mean `path`?)"
        ),
        "{r}"
    );
    assert!(c.close().success());
}

#[test]
fn every_bad_input_over_http_gets_its_documented_error() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let sid = s.initialize();
    for (name, msg, expect) in cases() {
        let r = s.post("/mcp", &msg, Some(&sid));
        assert_eq!(r.status(), 200, "{name}");
        check(name, &r.json().unwrap(), &expect);
    }
    let r = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    let v: Value = r.json().unwrap();
    assert_eq!(v["error"]["code"], json!(-32700));
    assert_eq!(
        s.post(
            "/mcp",
            &json!({"jsonrpc":"2.0","id":9,"method":"ping"}),
            Some(&sid)
        )
        .json::<Value>()
        .unwrap()["result"],
        json!({})
    );
}

/// Transport-level errors: each with the `{ok:false,error:{code,message}}` shape (or JSON-RPC for
/// MCP session/version errors), and the server keeps serving.
#[test]
fn http_level_errors_have_the_contract_shape() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--max-body-bytes", "2048"]);
    let c = &s.client;
    let url = |p: &str| format!("{}{p}", s.base);
    let shape = |r: reqwest::blocking::Response, status: u16, code: &str| {
        assert_eq!(r.status().as_u16(), status);
        let v: Value = r.json().unwrap();
        assert_eq!(v["ok"], json!(false), "{v}");
        assert_eq!(v["error"]["code"], json!(code), "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        mcp_pruner::contract::contract()
            .validate("HttpErrorBody", &v)
            .unwrap();
    };
    shape(
        c.post(url("/mcp"))
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .unwrap(),
        415,
        "unsupported_media_type",
    );
    shape(
        c.post(url("/mcp")).body("{}").send().unwrap(),
        415,
        "unsupported_media_type",
    );
    let r = c.get(url("/mcp")).send().unwrap();
    assert_eq!(r.headers()["allow"], "POST, DELETE");
    shape(r, 405, "method_not_allowed");
    shape(
        c.put(url("/healthz")).send().unwrap(),
        405,
        "method_not_allowed",
    );
    shape(
        c.get(url("/prune")).send().unwrap(),
        405,
        "method_not_allowed",
    );
    shape(
        c.post(url("/mcp"))
            .header("content-type", "application/json")
            .body("x".repeat(5000))
            .send()
            .unwrap(),
        413,
        "payload_too_large",
    );
    shape(c.get(url("/nope")).send().unwrap(), 404, "not_found");
    shape(
        c.post(url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "text/html")
            .body("{}")
            .send()
            .unwrap(),
        406,
        "not_acceptable",
    );
    shape(
        c.post(url("/mcp"))
            .header("content-type", "application/json")
            .header("origin", "https://evil.example")
            .body("{}")
            .send()
            .unwrap(),
        403,
        "forbidden",
    );
    shape(
        c.get(url("/healthz"))
            .header("host", "evil.example:80")
            .send()
            .unwrap(),
        403,
        "forbidden",
    );
    // Rebinding names that merely start like a loopback address are not loopback.
    for host in [
        "127.evil.example:80",
        "127.0.0.1.nip.io",
        "localhost.evil.example",
    ] {
        shape(
            c.get(url("/healthz")).header("host", host).send().unwrap(),
            403,
            "forbidden",
        );
    }
    for origin in [
        "http://127.evil.example",
        "http://localhost.evil.example:8080",
    ] {
        shape(
            c.post(url("/mcp"))
                .header("content-type", "application/json")
                .header("origin", origin)
                .body("{}")
                .send()
                .unwrap(),
            403,
            "forbidden",
        );
    }
    shape(c.delete(url("/mcp")).send().unwrap(), 400, "bad_request");
    // Session and protocol-version errors answer in JSON-RPC shape.
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":1,"method":"ping"}),
        Some("not-a-session"),
    );
    assert_eq!(r.status(), 404);
    assert!(
        r.json::<Value>().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session")
    );
    let r = c
        .post(url("/mcp"))
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "1999-01-01")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .unwrap();
    assert_eq!(r.status(), 400);
    // An allowed Origin and loopback Host pass.
    let r = c
        .get(url("/healthz"))
        .header("origin", format!("http://localhost:{}", s.port))
        .send()
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[test]
fn bearer_token_is_enforced_when_configured() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &["--auth-token", "s3cret"]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let r = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .body(ping)
        .send()
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    let r = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("authorization", "Bearer wrong")
        .body(ping)
        .send()
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = s
        .client
        .post(format!("{}/mcp", s.base))
        .header("content-type", "application/json")
        .header("authorization", "Bearer s3cret")
        .body(ping)
        .send()
        .unwrap();
    assert_eq!(r.status(), 200);
    // The scheme's name is case-insensitive (RFC 9110, 11.1), the token is not.
    for (auth, status) in [
        ("bearer s3cret", 200),
        ("BEARER  s3cret", 200),
        ("bearer S3CRET", 401),
    ] {
        let r = s
            .client
            .post(format!("{}/mcp", s.base))
            .header("content-type", "application/json")
            .header("authorization", auth)
            .body(ping)
            .send()
            .unwrap();
        assert_eq!(r.status(), status, "{auth}");
    }
    // The runner's health probe stays open.
    assert_eq!(
        s.client
            .get(format!("{}/healthz", s.base))
            .send()
            .unwrap()
            .status(),
        200
    );
}

/// JSON-RPC ids come back byte for byte as sent (integers of any size, `-0`); ids JSON-RPC does
/// not allow (fractions, exponents, booleans, objects, arrays) are -32600 with a null id. Raw
/// lines in, raw lines out over stdio.
#[test]
fn ids_are_echoed_exactly_and_bad_ids_refused() {
    use std::io::{BufRead, Write};
    let root = fixture_root();
    let mut child = std::process::Command::new(common::bin())
        .env("MCP_PRUNER_NO_LEDGER", "1")
        .args(["stdio", "--log-level", "error", "--root"])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let refused = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: `id` must be a string or an integer (no fraction or exponent)"}}"#;
    let not_scalar = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: `id` must be a string or an integer"}}"#;
    for (id, expected) in [
        (
            "123456789012345678901234567890",
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}"#,
        ),
        (
            "18446744073709551616",
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}"#,
        ),
        ("-0", r#"{"jsonrpc":"2.0","id":-0,"result":{}}"#),
        ("-7", r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#),
        (r#""x""#, r#"{"jsonrpc":"2.0","id":"x","result":{}}"#),
        ("1.5", refused),
        ("1e3", refused),
        ("1.0", refused),
        ("true", not_scalar),
        (r#"{"a":1}"#, not_scalar),
        ("[1]", not_scalar),
    ] {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).unwrap();
        stdin.flush().unwrap();
        let got = lines.next().unwrap().unwrap();
        assert_eq!(got, expected, "id {id}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The Host/Origin check fails closed (issue 15): each request is written raw to the socket, so
/// missing, repeated and non-UTF-8 headers reach the server exactly as listed.
#[test]
fn host_and_origin_are_parsed_strictly() {
    use std::io::{Read, Write};
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let status = |head: &[u8]| -> u16 {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        c.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
        c.write_all(head).unwrap();
        c.write_all(b"Connection: close\r\n\r\n").unwrap();
        let mut out = Vec::new();
        c.read_to_end(&mut out).unwrap();
        let line = String::from_utf8_lossy(&out);
        line.split(' ').nth(1).unwrap().parse().unwrap()
    };
    let host = format!("Host: localhost:{}\r\n", s.port);
    let ok_origin = format!("Origin: http://127.0.0.1:{}\r\n", s.port);
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("loopback Host", host.clone().into_bytes(), 200),
        (
            "loopback Host and Origin",
            format!("{host}{ok_origin}").into_bytes(),
            200,
        ),
        (
            "IPv6 Host",
            format!("Host: [::1]:{}\r\n", s.port).into_bytes(),
            200,
        ),
        ("no Host", Vec::new(), 400),
        ("two Hosts", format!("{host}{host}").into_bytes(), 400),
        (
            "Host not UTF-8",
            [b"Host: local\xffhost\r\n".as_slice()].concat(),
            400,
        ),
        (
            "Host with userinfo",
            format!("Host: localhost:{}@evil.com\r\n", s.port).into_bytes(),
            400,
        ),
        (
            "Host with empty port",
            b"Host: localhost:\r\n".to_vec(),
            400,
        ),
        (
            "two Origins",
            format!("{host}{ok_origin}{ok_origin}").into_bytes(),
            400,
        ),
        (
            "Origin not UTF-8",
            [host.as_bytes(), b"Origin: http://local\xffhost\r\n"].concat(),
            400,
        ),
        (
            "Origin with userinfo",
            format!("{host}Origin: http://localhost:80@evil.com\r\n").into_bytes(),
            403,
        ),
        (
            "Origin of a name after an IPv6 literal",
            format!("{host}Origin: http://[::1].evil.com\r\n").into_bytes(),
            403,
        ),
        (
            "Origin with a path",
            format!("{host}Origin: http://localhost/x\r\n").into_bytes(),
            403,
        ),
    ];
    for (name, head, want) in cases {
        assert_eq!(status(&head), want, "{name}");
    }
}

/// A stdio message over `--max-body-bytes` is skipped without being held, answered with -32600,
/// and the server keeps serving (issue 13).
#[test]
fn an_oversized_stdio_message_is_refused_and_the_server_lives() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--max-body-bytes", "1024"]);
    c.initialize();
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    c.send_raw(&big);
    let resp = c.next_message(std::time::Duration::from_secs(10));
    assert_eq!(resp["error"]["code"], json!(-32600), "{resp}");
    assert_eq!(resp["id"], Value::Null);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the 1024-byte limit"),
        "{resp}"
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    assert!(c.close().success());
}

#[test]
fn an_initialize_answered_with_an_error_leaves_no_session() {
    let root = fixture_root();
    let s = HttpServer::start(root.path(), &[]);
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":"not an object"}),
        None,
    );
    assert_eq!(r.status(), 200);
    assert!(
        r.headers().get("mcp-session-id").is_none(),
        "an error answer minted a session: {:?}",
        r.headers()
    );
    let body: Value = r.json().unwrap();
    assert!(body.get("error").is_some(), "{body}");
    // A good one still gets its session, which then answers.
    let id = s.initialize();
    let r = s.post(
        "/mcp",
        &json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
        Some(&id),
    );
    assert_eq!(r.status(), 200);
}
