//! Benchmark (not a test): the real `mcp-pruner` binary under load, spoken to the way clients do.
//!
//! 1. `tools/call read` of a 4 KiB file: requests per second and p50/p99 latency over HTTP
//!    (`serve`, `POST /mcp`, keep-alive) and over stdio (`stdio`, newline-delimited JSON-RPC),
//!    one client in lock-step and several in flight at once. The baseline, measured in the same
//!    run on the same transport, is MCP `ping`: the protocol's floor, so `read / ping` says what
//!    the tool itself costs.
//! 2. `grep` over a large tree (the cargo registry sources by default) against the `rg` command
//!    on the same tree and pattern, in the same run: wall time of a whole `tools/call` (all matches
//!    found, sorted, stored for recovery, first page returned) over the wall time of `rg`
//!    (parallel, unsorted) and of `rg --sort path` (sorted, single-threaded). Match counts are
//!    printed side by side, read from what the default mode sends (`_meta`), and the bench
//!    panics when they disagree with rg's.
//!
//! Both servers run at the default log level (one JSON event per request step, drained by the
//! bench), as users run them.
//!
//! Run: `cargo bench --bench serve`. Knobs: `SERVE_BENCH_REQUESTS` (default 2000 per case),
//! `SERVE_BENCH_CONCURRENCY` (default 4), `GREP_BENCH_TREE` (default `$CARGO_HOME/registry/src`),
//! `GREP_BENCH_RUNS` (default 3; the best run counts), `RG` (default `rg` on `PATH`).

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

fn main() {
    let requests = env_usize("SERVE_BENCH_REQUESTS", 2000);
    let concurrency = env_usize("SERVE_BENCH_CONCURRENCY", 4).max(1);
    let root = tempfile::tempdir().expect("temp dir");
    let file = four_kib_file();
    std::fs::write(root.path().join("file.rs"), &file).expect("write the 4 KiB file");
    let read = json!({"name": "read", "arguments": {"path": "file.rs"}});

    println!(
        "tools/call read of a {} byte file, {requests} requests per case (best of warm runs); \
         baseline: MCP ping on the same transport",
        file.len()
    );
    println!(
        "{:<8} {:<6} {:>9} {:>10} {:>9} {:>9}",
        "transport", "call", "clients", "req/s", "p50 ms", "p99 ms"
    );
    let http = Server::serve(root.path());
    let stdio = Stdio1::spawn(root.path());
    let mut rows = Vec::new();
    for clients in [1, concurrency] {
        let ping = http.run("ping", &json!({}), requests, clients);
        let r = http.run("tools/call", &read, requests, clients);
        check_read(&http.call("tools/call", &read));
        rows.push(("http", clients, ping, r));
    }
    for window in [1, concurrency] {
        let ping = stdio.run("ping", &json!({}), requests, window);
        let r = stdio.run("tools/call", &read, requests, window);
        rows.push(("stdio", window, ping, r));
    }
    for (transport, clients, ping, read) in &rows {
        ping.print(transport, "ping", *clients);
        read.print(transport, "read", *clients);
        println!(
            "{:<8} {:<6} read/ping: {:.2}x the latency (p50), {:.2}x the throughput",
            "",
            "",
            read.p50 / ping.p50,
            read.rps / ping.rps
        );
    }
    drop(http);
    drop(stdio);

    println!();
    grep_vs_rg();
}

/// A Rust-looking 4 KiB file (what an agent reads most).
fn four_kib_file() -> String {
    let mut s =
        String::from("//! A module the benchmark reads.\nuse std::collections::HashMap;\n\n");
    let mut i = 0;
    while s.len() < 4096 - 80 {
        s.push_str(&format!(
            "pub fn item_{i}(map: &HashMap<String, u64>) -> u64 {{\n    map.len() as u64 + {i}\n}}\n\n"
        ));
        i += 1;
    }
    while s.len() < 4096 {
        s.push_str("//\n");
    }
    s.truncate(4096);
    s
}

fn check_read(response: &Value) {
    let text = response["result"]["content"][0]["text"].as_str();
    assert!(
        text.is_some_and(|t| t.starts_with("//! A module"))
            && response["result"]["isError"] != true,
        "read did not return the file: {response}"
    );
}

/// Latencies of one case.
struct Figures {
    rps: f64,
    p50: f64,
    p99: f64,
}

impl Figures {
    fn from(mut latencies: Vec<Duration>, elapsed: Duration) -> Figures {
        latencies.sort();
        let at = |q: f64| {
            let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
            latencies[i].as_secs_f64() * 1e3
        };
        Figures {
            rps: latencies.len() as f64 / elapsed.as_secs_f64(),
            p50: at(0.50),
            p99: at(0.99),
        }
    }

    fn print(&self, transport: &str, call: &str, clients: usize) {
        println!(
            "{:<8} {:<6} {:>9} {:>10.0} {:>9.3} {:>9.3}",
            transport, call, clients, self.rps, self.p50, self.p99
        );
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn request(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A `serve` child on an ephemeral loopback port.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn serve(root: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-pruner"))
            .args(["serve", "--port", "0", "--root"])
            .arg(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn mcp-pruner serve");
        let port = support::ready_port(child.stdout.take().expect("stdout"));
        Server {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn client() -> reqwest::blocking::Client {
        mcp_pruner::http_client::install_tls_provider();
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("HTTP client")
    }

    fn post(&self, client: &reqwest::blocking::Client, body: String) -> Value {
        let r = client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
            .expect("POST /mcp");
        assert_eq!(r.status(), 200, "POST /mcp answered {}", r.status());
        r.json().expect("JSON response")
    }

    fn call(&self, method: &str, params: &Value) -> Value {
        self.post(&Self::client(), request(1, method, params))
    }

    /// `n` requests spread over `clients` threads, each with its own keep-alive connection.
    fn run(&self, method: &str, params: &Value, n: usize, clients: usize) -> Figures {
        let body = request(1, method, params);
        best_of_two(|| {
            let start = Instant::now();
            let latencies = std::thread::scope(|s| {
                let workers: Vec<_> = (0..clients)
                    .map(|c| {
                        let body = body.clone();
                        s.spawn(move || {
                            let client = Self::client();
                            let share = n / clients + usize::from(c < n % clients);
                            (0..share)
                                .map(|_| {
                                    let t = Instant::now();
                                    let v = self.post(&client, body.clone());
                                    assert!(v.get("result").is_some(), "error answer: {v}");
                                    t.elapsed()
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().expect("client thread"))
                    .collect::<Vec<_>>()
            });
            Figures::from(latencies, start.elapsed())
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `stdio` child; responses are read on a thread and handed over by channel.
struct Stdio1 {
    child: Child,
    stdin: std::cell::RefCell<std::process::ChildStdin>,
    responses: Receiver<(Instant, Value)>,
}

impl Stdio1 {
    fn spawn(root: &Path) -> Stdio1 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-pruner"))
            .args(["stdio", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp-pruner stdio");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, responses) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line).expect("stdout carries JSON only");
                if tx.send((Instant::now(), v)).is_err() {
                    break;
                }
            }
        });
        let s = Stdio1 {
            stdin: std::cell::RefCell::new(child.stdin.take().expect("stdin")),
            child,
            responses,
        };
        s.send(&request(
            0,
            "initialize",
            &json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench"}}),
        ));
        s.recv();
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        s
    }

    fn send(&self, line: &str) {
        let mut stdin = self.stdin.borrow_mut();
        stdin.write_all(line.as_bytes()).expect("write stdin");
        stdin.write_all(b"\n").expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    fn recv(&self) -> (Instant, Value) {
        self.responses
            .recv_timeout(Duration::from_secs(60))
            .expect("a response on stdout")
    }

    /// `n` requests with up to `window` in flight (1 = lock-step).
    fn run(&self, method: &str, params: &Value, n: usize, window: usize) -> Figures {
        best_of_two(|| {
            let mut sent_at = std::collections::HashMap::new();
            let mut latencies = Vec::with_capacity(n);
            let start = Instant::now();
            let mut next = 1u64;
            while latencies.len() < n {
                while sent_at.len() < window && (next as usize) <= n {
                    sent_at.insert(next, Instant::now());
                    self.send(&request(next, method, params));
                    next += 1;
                }
                let (at, v) = self.recv();
                assert!(v.get("result").is_some(), "error answer: {v}");
                let id = v["id"].as_u64().expect("numeric id");
                let sent = sent_at.remove(&id).expect("an id this run sent");
                latencies.push(at - sent);
            }
            Figures::from(latencies, start.elapsed())
        })
    }
}

impl Drop for Stdio1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a case twice (the first also warms caches and connections) and keeps the faster.
fn best_of_two(mut case: impl FnMut() -> Figures) -> Figures {
    let a = case();
    let b = case();
    if b.rps > a.rps { b } else { a }
}

/// One grep pattern of the comparison.
struct Pattern {
    label: &'static str,
    pattern: &'static str,
    fixed: bool,
    case_insensitive: bool,
}

const PATTERNS: [Pattern; 3] = [
    Pattern {
        label: "literal, few matches",
        pattern: "unsafe impl Send for",
        fixed: true,
        case_insensitive: false,
    },
    Pattern {
        label: "regex, many matches",
        pattern: r"fn [a-z_]+\(&mut self",
        fixed: false,
        case_insensitive: false,
    },
    Pattern {
        label: "case-insensitive",
        pattern: "todo|fixme",
        fixed: false,
        case_insensitive: true,
    },
];

fn grep_vs_rg() {
    let tree = std::env::var_os("GREP_BENCH_TREE")
        .map(PathBuf::from)
        .unwrap_or_else(registry_src);
    let rg = std::env::var("RG").unwrap_or_else(|_| "rg".into());
    let runs = env_usize("GREP_BENCH_RUNS", 5).max(1);
    let Ok(tree) = std::fs::canonicalize(&tree) else {
        println!("grep vs rg skipped: no tree at {}", tree.display());
        return;
    };
    let rg_version = Command::new(&rg).arg("--version").output().ok();
    let Some(rg_version) = rg_version.filter(|o| o.status.success()) else {
        println!(
            "grep vs rg skipped: `{rg}` not found (apt-get install ripgrep, or cargo install ripgrep)"
        );
        return;
    };
    let rg_version = String::from_utf8_lossy(&rg_version.stdout);
    println!(
        "grep over {} ({} files) vs {} ({runs} interleaved runs: ours, rg, ours, ...; median, best in brackets)",
        tree.display(),
        count_files(&tree),
        rg_version.lines().next().unwrap_or("rg")
    );
    println!(
        "{:<22} {:>8} {:>8} {:>16} {:>9} {:>16} {:>7} {:>7} {:>10}",
        "pattern",
        "matches",
        "rg lines",
        "ours ms",
        "server ms",
        "rg ms",
        "ratio",
        "(best)",
        "rg sort ms"
    );
    let server_proc = Stdio1::spawn(&tree);
    let mut id = 100u64;
    for p in &PATTERNS {
        let args = json!({
            "pattern": p.pattern,
            "paths": ["."],
            "fixed_string": p.fixed,
            "case_sensitive": !p.case_insensitive,
            "timeout_ms": 300000,
        });
        let mut flags = vec!["--no-messages", "-n", "--column"];
        if p.fixed {
            flags.push("-F");
        }
        if p.case_insensitive {
            flags.push("-i");
        }
        let (mut ours, mut server, mut rgs) = (Vec::new(), Vec::new(), Vec::new());
        let mut matches = 0;
        let mut rg_lines = 0;
        for _ in 0..runs {
            id += 1;
            let t = Instant::now();
            server_send(&server_proc, id, &args);
            let (_, v) = server_proc.recv();
            ours.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(v["result"]["isError"] != true, "grep failed: {v}");
            let s = result_of(&v);
            server.push(
                s["duration_ms"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("grep result without duration_ms: {s}"))
                    as f64,
            );
            matches = s["match_count"]
                .as_u64()
                .unwrap_or_else(|| panic!("grep result without match_count: {s}"));
            let (ms, lines) = best_rg(&rg, &tree, &flags, p.pattern, 1);
            rgs.push(ms);
            rg_lines = lines;
        }
        let mut sorted_flags = flags.clone();
        sorted_flags.extend(["--sort", "path"]);
        let (rg_sorted_ms, _) = best_rg(&rg, &tree, &sorted_flags, p.pattern, runs);
        assert_eq!(
            matches,
            rg_lines as u64,
            "grep {:?} over {}: the server counted {matches} matching lines, `{rg} {}` printed {rg_lines}: \
             the two searches disagree",
            p.pattern,
            tree.display(),
            flags.join(" ")
        );
        let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        println!(
            "{:<22} {:>8} {:>8} {:>7.1} ({:>6.1}) {:>9.0} {:>7.1} ({:>6.1}) {:>6.2}x {:>6.2}x {:>10.1}",
            p.label,
            matches,
            rg_lines,
            median(&ours),
            best(&ours),
            median(&server),
            median(&rgs),
            best(&rgs),
            median(&ours) / median(&rgs),
            best(&ours) / best(&rgs),
            rg_sorted_ms
        );
    }
    println!(
        "ratio = ours / rg (parallel, unsorted, to a pipe). ours is a whole tools/call over stdio: \
         search, sort, store every match for recovery, serialize the first page. \
         ratio on the medians, (best) on the best runs."
    );
}

/// Sends one `grep` call with `args`.
fn server_send(server: &Stdio1, id: u64, args: &Value) {
    server.send(&request(
        id,
        "tools/call",
        &json!({"name": "grep", "arguments": args}),
    ));
}

/// The median of `v` (not empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

/// The structured result as the default mode sends it: `_meta["mcp-pruner/result"]` (the
/// metadata), merged with `structuredContent` when a server runs with `--output-schemas`.
fn result_of(response: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for part in [
        &response["result"]["_meta"]["mcp-pruner/result"],
        &response["result"]["structuredContent"],
    ] {
        if let Value::Object(m) = part {
            out.extend(m.clone());
        }
    }
    assert!(
        !out.is_empty(),
        "the response carries neither _meta[\"mcp-pruner/result\"] nor structuredContent: {response}"
    );
    Value::Object(out)
}

/// Best wall time of `rg FLAGS PATTERN .` in `tree` (output to a pipe and counted), and its
/// number of output lines.
fn best_rg(rg: &str, tree: &Path, flags: &[&str], pattern: &str, runs: usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut lines = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let out = Command::new(rg)
            .args(flags)
            .arg("--")
            .arg(pattern)
            .arg(".")
            .current_dir(tree)
            .stdin(Stdio::null())
            .output()
            .expect("run rg");
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
    }
    (best, lines)
}

fn registry_src() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    home.join("registry").join("src")
}

fn count_files(tree: &Path) -> usize {
    ignore::WalkBuilder::new(tree)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .count()
}
