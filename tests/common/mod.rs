//! Test harness: spawns the real `mcp-pruner` binary and speaks MCP to it over stdio or HTTP.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long a request waits for its answer ([`StdioClient::request`], [`StdioClient::call`]).
const DEADLINE: Duration = Duration::from_secs(30);

/// Path of the binary under test: this build's, or `MCP_PRUNER_TEST_BIN` (to show that a test
/// fails on an older build).
pub fn bin() -> String {
    std::env::var("MCP_PRUNER_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-pruner").into())
}

/// Writes `src` as `name` in a fresh root and `read`s it with `question` over stdio: the root
/// (kept alive while the client runs), the client and the response.
pub fn read_with_question(
    name: &str,
    src: &str,
    question: &str,
) -> (tempfile::TempDir, StdioClient, Value) {
    read_with_question_on(&[], name, src, question)
}

/// [`read_with_question`] on a server started with `flags`.
pub fn read_with_question_on(
    flags: &[&str],
    name: &str,
    src: &str,
    question: &str,
) -> (tempfile::TempDir, StdioClient, Value) {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(name), src).unwrap();
    let mut c = StdioClient::spawn(root.path(), flags);
    c.initialize();
    let r = c.call(
        "read",
        json!({"path": name, "context_focus_question": question}),
    );
    (root, c, r)
}

/// A temp root with a few files.
pub fn fixture_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("hello.txt"), "hello\nworld\n").unwrap();
    std::fs::create_dir_all(p.join("src/nested")).unwrap();
    std::fs::write(
        p.join("src/lib.rs"),
        "pub fn alpha() -> u32 {\n    1\n}\n\npub fn beta() -> u32 {\n    2\n}\n",
    )
    .unwrap();
    std::fs::write(p.join("src/nested/deep.md"), "# Title\n\nalpha beta\n").unwrap();
    std::fs::write(p.join("bad-utf8.txt"), b"ok \xff\xfe end\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", p.join("escape-link")).unwrap();
    std::os::unix::fs::symlink("/etc", p.join("escape-dir")).unwrap();
    std::os::unix::fs::symlink("hello.txt", p.join("inside-link")).unwrap();
    dir
}

/// The `_meta` key carrying a result's metadata (the structured result without its bulk).
pub const RESULT_META: &str = "mcp-pruner/result";

/// The structured result of a `tools/call` result, as a program sees it: `_meta[RESULT_META]`
/// (metadata) merged with `structuredContent` when output schemas are on (the model's view), or
/// the JSON of `content[0].text` for seed 001's tools (whose text is the result).
pub fn structured(result: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(Value::Object(m)) = result.get("_meta").and_then(|m| m.get(RESULT_META)) {
        out.extend(m.clone());
    } else if let Some(text) = result.pointer("/content/0/text").and_then(Value::as_str)
        && let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text)
    {
        out.extend(m);
    }
    if let Some(Value::Object(m)) = result.get("structuredContent") {
        out.extend(m.clone());
    }
    Value::Object(out)
}

/// The text the model reads (`content[0].text`).
pub fn text(result: &Value) -> &str {
    result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no content[0].text in {result:#}"))
}

/// The lines of a `recover_text` answer by question as the model reads them: `content[0].text`
/// is the returned lines and markers, plain, closed by the result's summary in brackets (checked
/// against the structured result in `_meta`, which leaves the lines out).
pub fn answer_lines(result: &Value) -> &str {
    let all = text(result);
    let at = all.rfind('\n').map_or(0, |i| i + 1);
    let (lines, note) = all.split_at(at);
    let summary = structured(result)["summary"].as_str().unwrap().to_string();
    assert_eq!(note, format!("[{summary}]"), "the closing note: {result:#}");
    assert!(
        result["_meta"][RESULT_META].get("raw_text").is_none(),
        "the lines never travel in _meta: {result:#}"
    );
    lines
}

/// The rows of a result by question, each with its line number in the stored text, read as the
/// model reads them: a marker `[… lines a-b]` says the next row is line b+1, every other row
/// follows the one above, and the first starts at line 1. No row carries a `N│ ` prefix (the
/// question form is unnumbered unless asked).
pub fn located(text: &str) -> Vec<(usize, String)> {
    let marker = regex::Regex::new(mcp_pruner::prune::render::COMPACT_MARKER_PATTERN).unwrap();
    let mut next = 1;
    let mut rows = Vec::new();
    for l in text.lines() {
        if let Some(m) = marker.captures(l) {
            let end = m.name("end").unwrap_or(m.name("start").unwrap());
            next = end.as_str().parse::<usize>().unwrap() + 1;
        } else {
            assert!(!l.contains("│ "), "an unnumbered row: {l:?}");
            rows.push((next, l.to_string()));
            next += 1;
        }
    }
    rows
}

/// The name lists of the compact markers in `shown` (`[… lines 4-9: fn a, fn b]` -> `fn a, fn b`),
/// one per marker that names anything.
pub fn marker_names(shown: &str) -> Vec<String> {
    let marker = regex::Regex::new(mcp_pruner::prune::render::COMPACT_MARKER_PATTERN).unwrap();
    shown
        .lines()
        .filter_map(|l| marker.captures(l))
        .filter_map(|m| m.name("names").map(|n| n.as_str().to_string()))
        .collect()
}

/// Every `text` of a result's `content`, joined by newlines (a proxied result may hold several).
#[allow(dead_code)]
pub fn content_texts(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {result:#}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Validates a result against the tool's output schema (or ToolFailure on errors): the `_meta`
/// view, `structuredContent` when present, and their union; bulk never travels in `_meta`,
/// metadata never in `structuredContent`.
pub fn assert_valid_result(tool: &str, result: &Value) {
    let c = mcp_pruner::contract::contract();
    let check = |what: &str, v: &Value| {
        let verdict = if result["isError"] == json!(true) {
            c.validate("ToolFailure", v)
        } else {
            c.tool(tool).unwrap().validate_output(v)
        };
        if let Err(e) = verdict {
            panic!("{tool} {what} does not match its schema: {e:?}\n{v:#}");
        }
    };
    if let Some(meta) = result.get("_meta").and_then(|m| m.get(RESULT_META)) {
        check("_meta", meta);
        for bulk in ["content", "stdout", "stderr", "matches", "raw_text"] {
            assert!(meta.get(bulk).is_none(), "{tool}: bulk {bulk} in _meta");
        }
    }
    if let Some(sc) = result.get("structuredContent") {
        check("structuredContent", sc);
        if result.get("_meta").is_some() {
            for meta in ["pruning", "duration_ms", "bytes", "stdout_bytes"] {
                assert!(
                    sc.get(meta).is_none(),
                    "{tool}: metadata {meta} in structuredContent"
                );
            }
        }
    }
    let whole = structured(result);
    check("structured result", &whole);
    let summary = whole["summary"].as_str().unwrap_or("");
    assert!(
        summary.chars().count() <= 100 && !summary.contains('\n'),
        "summary must be one line <= 100 chars: {summary:?}"
    );
}

/// An MCP client over the binary's stdin/stdout.
pub struct StdioClient {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: u64,
    /// Notifications received so far.
    pub notifications: Vec<Value>,
    pending: Vec<Value>,
}

impl StdioClient {
    pub fn spawn(root: &Path, extra: &[&str]) -> StdioClient {
        Self::spawn_env(root, extra, &[])
    }

    pub fn spawn_env(root: &Path, extra: &[&str], env: &[(&str, &str)]) -> StdioClient {
        let mut args: Vec<String> = vec!["stdio".into(), "--root".into()];
        args.push(root.to_string_lossy().into_owned());
        args.extend(extra.iter().map(|s| s.to_string()));
        Self::spawn_program(&bin(), &args, env)
    }

    /// Any program speaking MCP over stdio (the binary's `proxy`, or an upstream server itself).
    pub fn spawn_program(program: &str, args: &[String], env: &[(&str, &str)]) -> StdioClient {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Tests never write the user's savings ledger; tests/ledger.rs points it elsewhere.
            .env("MCP_PRUNER_NO_LEDGER", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        // The server logs to stderr: drained so that a long test never blocks it on a full pipe.
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut sink = std::io::sink();
            let _ = std::io::copy(&mut BufReader::new(stderr), &mut sink);
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        StdioClient {
            child,
            stdin,
            rx,
            next_id: 1,
            notifications: Vec::new(),
            pending: Vec::new(),
        }
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: &Value) {
        self.send_raw(&msg.to_string());
    }

    /// Sends a request and returns its id.
    pub fn request_async(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        id
    }

    /// Waits for the response with `id`, collecting notifications.
    pub fn wait_for(&mut self, id: &Value, timeout: Duration) -> Value {
        if let Some(i) = self.pending.iter().position(|m| &m["id"] == id) {
            return self.pending.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if m.get("method").is_some() && m.get("id").is_none() => {
                    self.notifications.push(m)
                }
                Ok(m) if &m["id"] == id => return m,
                Ok(m) => self.pending.push(m),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no response to id {id} within {timeout:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("server closed stdout before answering id {id}")
                }
            }
        }
    }

    /// Next message of any kind.
    pub fn next_message(&mut self, timeout: Duration) -> Value {
        if !self.pending.is_empty() {
            return self.pending.remove(0);
        }
        self.rx.recv_timeout(timeout).expect("a message")
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_async(method, params);
        self.wait_for(&id, DEADLINE)
    }

    pub fn initialize(&mut self) -> Value {
        let r = self.request("initialize", json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tests","version":"0"}}));
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        r
    }

    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        self.call_within(tool, args, DEADLINE)
    }

    /// [`StdioClient::call`] with its own deadline: for a call that streams gigabytes through a
    /// debug build, where [`DEADLINE`] is too short on a busy machine (it only catches a hang).
    pub fn call_within(&mut self, tool: &str, args: Value, timeout: Duration) -> Value {
        let id = self.request_async("tools/call", json!({"name":tool,"arguments":args}));
        self.wait_for(&id, timeout)
    }

    /// Closes stdin and waits for the process to exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit after stdin EOF"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `serve` child bound to an ephemeral loopback port.
pub struct HttpServer {
    pub child: Child,
    pub port: u16,
    pub base: String,
    pub client: reqwest::blocking::Client,
    /// Log lines read from stdout after the ready event.
    pub logs: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl HttpServer {
    pub fn start(root: &Path, extra: &[&str]) -> HttpServer {
        Self::start_env(root, extra, &[])
    }

    pub fn start_env(root: &Path, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .arg("--port")
            .arg("0")
            .arg("--root")
            .arg(root)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .env("MCP_PRUNER_NO_LEDGER", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let logs2 = logs.clone();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                // Logged before the port is sent: a test that reads the logs once the server
                // is up finds the ready line in them.
                let ready = (!sent && v["event"] == "mcp_pruner.ready")
                    .then(|| v["data"]["port"].as_u64().unwrap() as u16);
                logs2.lock().unwrap().push(v);
                if let Some(port) = ready {
                    let _ = tx.send(port);
                    sent = true;
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("ready event with the bound port");
        HttpServer {
            child,
            port,
            base: format!("http://127.0.0.1:{port}"),
            client: blocking_client(Duration::from_secs(60)),
            logs,
        }
    }

    /// POST a JSON-RPC value to /mcp with standard headers (and an optional session).
    pub fn post(
        &self,
        path: &str,
        body: &Value,
        session: Option<&str>,
    ) -> reqwest::blocking::Response {
        let mut rb = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s);
        }
        rb.send().unwrap()
    }

    /// The names `resources/list` gives `session` (none: a request without one).
    pub fn resource_names(&self, session: Option<&str>) -> Vec<String> {
        let r = self.post(
            "/mcp",
            &json!({"jsonrpc":"2.0","id":9,"method":"resources/list","params":{}}),
            session,
        );
        r.json::<Value>().unwrap()["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Initializes and returns the session id.
    pub fn initialize(&self) -> String {
        let r = self.post("/mcp", &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tests"}}}), None);
        assert_eq!(r.status(), 200);
        let sid = r
            .headers()
            .get("mcp-session-id")
            .expect("Mcp-Session-Id issued at initialize")
            .to_str()
            .unwrap()
            .to_string();
        let r = self.post(
            "/mcp",
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            Some(&sid),
        );
        assert_eq!(r.status(), 202);
        sid
    }

    pub fn call(&self, session: &str, tool: &str, args: Value) -> Value {
        let r = self.post("/mcp", &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":tool,"arguments":args}}), Some(session));
        assert_eq!(r.status(), 200);
        r.json().unwrap()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcp-pruner stats --ledger LEDGER ARGS...`: its stdout, the command asserted to succeed.
pub fn stats(ledger: &Path, args: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("stats")
        .arg("--ledger")
        .arg(ledger)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn root_path(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

/// Waits (up to 20 s) until `path` exists and is non-empty: a command has started.
pub fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(true)
    {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that the processes whose pids a command wrote to `files` (under `dir`) are gone within
/// `within`: no orphan survived `what`.
pub fn assert_processes_gone(dir: &Path, files: &[&str], within: Duration, what: &str) {
    for file in files {
        let pid: i32 = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{file} was never written before {what}: {e}"))
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + within;
        while mcp_pruner::process::pid_alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !mcp_pruner::process::pid_alive(pid),
            "{file} {pid} survived {what}"
        );
    }
}

/// A free loopback port (bound, then let go for a child to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Spawns `cmd`, a server that listens on loopback `port` (its output discarded), and waits up
/// to `within` for it to accept a connection; past that, panics saying `what` did not listen.
pub fn spawn_listening(cmd: &mut Command, port: u16, within: Duration, what: &str) -> Child {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + within;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// The reference `everything` server (`exe`, from `interop/upstreams`) serving streamable HTTP
/// on `port`, once it listens.
pub fn spawn_everything_http(exe: impl AsRef<std::ffi::OsStr>, port: u16) -> Child {
    spawn_listening(
        Command::new(exe)
            .arg("streamableHttp")
            .env("PORT", port.to_string()),
        port,
        Duration::from_secs(20),
        "server-everything",
    )
}

/// The value of the Prometheus sample `name` (with its labels, if given) in `text`.
pub fn metric_sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sample {name} in\n{text}"))
}

/// A blocking HTTP client with this `timeout`, the TLS provider installed first (a client panics
/// without one, even for `http://` URLs).
pub fn blocking_client(timeout: Duration) -> reqwest::blocking::Client {
    mcp_pruner::http_client::install_tls_provider();
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .build()
        .unwrap()
}
