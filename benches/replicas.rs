//! Benchmark (not a test): the shared recovery store (issue 38) against the in-memory one, in the
//! same run, on real `serve` processes and a real `redis-server`/`valkey-server` started here.
//!
//! 1. Recovery page latency: lock-step `recover_text` of a 40-line page from the middle of a
//!    stored 2,000-line read, from one server on the in-memory store, and on the shared store
//!    from a replica that did not store it (every page a round trip) and from the one that did
//!    (its near copy), in interleaved rounds; p50/p99 of each and the p50 the shared store adds
//!    (target <= 2 ms).
//! 2. Throughput: `CLIENTS` client threads, each with its own keep-alive connections, calling
//!    `read` then `recover_text` (a page of it) in a loop for `SECS` seconds: one replica on the
//!    in-memory store, then three replicas on one shared store with the requests spread
//!    round-robin over them (what a plain L7 load balancer does), in interleaved rounds (all
//!    servers up throughout, so both sides see the same machine); calls/s of each, median of the
//!    rounds, and the ratio (target >= 0.85). Two workloads: the same output read again (its id
//!    re-issued, the page from any replica's near copy) and a new output on every read (every
//!    read stores one; the store at its cap evicts).
//!
//! Run: `cargo bench --bench replicas`. Knobs: `REPLICAS_BENCH_SECS` (default 4 per round),
//! `REPLICAS_BENCH_CLIENTS` (default 8), `REPLICAS_BENCH_ROUNDS` (default 5), `REDIS_SERVER`
//! (default: valkey-server or redis-server on PATH). Without a server binary it says so and ends.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let Some(redis_bin) = redis_binary() else {
        println!("replicas bench: skipped: no valkey-server or redis-server (set REDIS_SERVER)");
        return;
    };
    let secs = env_u64("REPLICAS_BENCH_SECS", 4);
    let clients = env_u64("REPLICAS_BENCH_CLIENTS", 8) as usize;
    let rounds = env_u64("REPLICAS_BENCH_ROUNDS", 5) as usize;
    let redis = Redis::start(&redis_bin);
    let store = format!("redis://127.0.0.1:{}/0", redis.port);
    let root = tempfile::tempdir().expect("temp dir");
    let file: String = (1..=2000)
        .map(|i| format!("    let value_{i} = compute(input, {i}); // step {i} of the pipeline\n"))
        .collect();
    std::fs::write(root.path().join("file.rs"), &file).expect("write file.rs");
    println!(
        "replicas bench: file.rs ({} bytes, 2000 lines) on {}; {} client threads, {secs} s a round, {rounds} rounds",
        file.len(),
        redis_bin.display(),
        clients
    );

    // 1. Latency of one recovery page: from the in-memory store; through the shared store (a
    // replica that did not store the output, so every page is a round trip); and from the near
    // copy of the replica that stored it.
    let mem = Server::serve(root.path(), &[]);
    let holder = Server::serve(root.path(), &["--store", &store]);
    let other = Server::serve(root.path(), &["--store", &store]);
    let client = client();
    let page = |s: &Server, id: &str| {
        json!({"name": "recover_text", "arguments": {"prune_id": id, "ranges": [{"start_line": 1000, "end_line": 1039}]}})
            .pipe(|p| s.call(&client, "tools/call", &p))
    };
    let id_mem = stored_id(&mem.call(&client, "tools/call", &read_call()));
    let id_shared = stored_id(&holder.call(&client, "tools/call", &read_call()));
    let want = page(&mem, &id_mem)["result"]["content"][0]["text"].clone();
    for s in [&other, &holder] {
        let got = page(s, &id_shared)["result"]["content"][0]["text"].clone();
        assert_eq!(
            strip_id(&want, &id_mem),
            strip_id(&got, &id_shared),
            "the same page from both stores"
        );
    }
    let mut lat = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds.max(1) * 2 {
        for (i, (s, id)) in [(&mem, &id_mem), (&other, &id_shared), (&holder, &id_shared)]
            .into_iter()
            .enumerate()
        {
            for _ in 0..250 {
                let t = Instant::now();
                let v = page(s, id);
                assert!(v.get("result").is_some(), "{v}");
                lat[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    println!(
        "recovery page (40 lines, lock-step, {} calls each):",
        lat[0].len()
    );
    let mut p50 = [0.0; 3];
    for (i, name) in [
        "in-memory store",
        "shared (redis), through the store",
        "shared (redis), the near copy",
    ]
    .into_iter()
    .enumerate()
    {
        p50[i] = pct(&mut lat[i], 50.0);
        println!(
            "  {name:36} p50 {:.3} ms  p99 {:.3} ms",
            p50[i],
            pct(&mut lat[i], 99.0)
        );
    }
    println!(
        "  added by the shared store: p50 {:+.3} ms through the store (target <= 2 ms), {:+.3} ms from the near copy",
        p50[1] - p50[0],
        p50[2] - p50[0]
    );
    drop((mem, holder, other));

    // 2. Throughput: one replica in memory vs three on the shared store, for two workloads:
    // the same output read again (the shared store re-issues its id) and a new output on
    // every read (every read stores one).
    let m = Server::serve(root.path(), &[]);
    let n = env_u64("REPLICAS_BENCH_REPLICAS", 3);
    let reps: Vec<Server> = (0..n)
        .map(|_| Server::serve(root.path(), &["--store", &store]))
        .collect();
    let refs: Vec<&Server> = reps.iter().collect();
    // Reference: as many replicas each on its own in-memory store, each client kept on one
    // (what the processes alone cost on these cores, without any shared store).
    let alone: Vec<Server> = (0..n).map(|_| Server::serve(root.path(), &[])).collect();
    let alone_refs: Vec<&Server> = alone.iter().collect();
    let body: String = file
        .lines()
        .take(1000)
        .map(|l| format!("{l} // new\n"))
        .collect();
    for fresh in [None, Some((root.path(), body.as_str()))] {
        let what = if fresh.is_some() {
            "a new output on every read"
        } else {
            "the same output read again"
        };
        let (mut one, mut three, mut sticky) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds.max(1) {
            let r = load(&[&m], clients, secs, false, fresh);
            let t = load(&refs, clients, secs, false, fresh);
            let a = load(&alone_refs, clients, secs, true, fresh);
            println!(
                "  {what}, round {}: 1 replica, memory store {r:.0} calls/s; {n} replicas, shared store {t:.0} calls/s; {n} replicas, own memory stores, sticky clients {a:.0} calls/s",
                round + 1
            );
            one.push(r);
            three.push(t);
            sticky.push(a);
        }
        let (a, b, c) = (median(&mut one), median(&mut three), median(&mut sticky));
        println!(
            "throughput, {what} ({clients} clients, read + recover_text pairs, median of {} rounds):",
            one.len()
        );
        println!("  1 replica, in-memory store        {a:.0} calls/s");
        println!("  {n} replicas, one shared redis store {b:.0} calls/s");
        println!("  {n} replicas, own memory stores, sticky clients (reference) {c:.0} calls/s");
        println!(
            "  ratio {n}-on-redis / 1-on-memory: {:.3} (target >= 0.85)",
            b / a
        );
        println!(
            "  ratio {n}-on-redis / {n}-sticky-on-memory (the store's own share): {:.3}",
            b / c
        );
    }
    drop((m, reps, alone));
}

trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

/// A `read` of `file.rs`.
fn read_call() -> Value {
    json!({"name": "read", "arguments": {"path": "file.rs"}})
}

/// Numbers the new outputs of every thread and round, so that no two reads repeat one.
static NEXT_OUTPUT: AtomicU64 = AtomicU64::new(0);

/// For a new output on every read: rewrites thread `t`'s own file (`new-T.rs`, the 1,000 lines
/// of `body` under a line no other read had) and returns the `read` of it.
fn new_output(root: &Path, t: usize, body: &str) -> Value {
    let n = NEXT_OUTPUT.fetch_add(1, Ordering::Relaxed);
    let name = format!("new-{t}.rs");
    std::fs::write(root.join(&name), format!("// output {n}\n{body}")).expect("write the file");
    json!({"name": "read", "arguments": {"path": name}})
}

fn stored_id(v: &Value) -> String {
    v["result"]["_meta"]["mcp-pruner/result"]["artifactRef"]
        .as_str()
        .or_else(|| v["result"]["structuredContent"]["artifactRef"].as_str())
        .unwrap_or_else(|| panic!("a stored read: {v}"))
        .to_string()
}

/// A page's text with its prune id taken out (the ids differ between the two stores).
fn strip_id(v: &Value, id: &str) -> String {
    v.as_str().unwrap_or_default().replace(id, "ID")
}

/// `clients` threads calling read + recover_text for `secs` seconds, request `k` of each thread
/// to server `k % servers.len()` (`sticky`: every request of thread `t` to server `t % n`), a
/// new output on every read when `fresh` (the root and the body of the files it writes);
/// returns calls per second. Any error answer panics.
fn load(
    servers: &[&Server],
    clients: usize,
    secs: u64,
    sticky: bool,
    fresh: Option<(&Path, &str)>,
) -> f64 {
    let stop = AtomicBool::new(false);
    let calls = AtomicU64::new(0);
    // Warm-up: every server has the file's id.
    let c = client();
    for s in servers {
        stored_id(&s.call(&c, "tools/call", &read_call()));
    }
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..clients {
            let (stop, calls) = (&stop, &calls);
            scope.spawn(move || {
                // One client (one connection pool, one runtime thread) per thread for every
                // server: round-robin and sticky clients then cost the client the same.
                let conn = client();
                let mut k = t;
                // Pages start within the output (1,000 lines for the new outputs).
                let span = if fresh.is_some() { 960 } else { 1900 };
                let pick = |k: usize| if sticky { t % servers.len() } else { k % servers.len() };
                while !stop.load(Ordering::Relaxed) {
                    let i = pick(k);
                    let read = match fresh {
                        Some((root, body)) => new_output(root, t, body),
                        None => read_call(),
                    };
                    let id = stored_id(&servers[i].call(&conn, "tools/call", &read));
                    k += 1;
                    let j = pick(k);
                    let v = servers[j].call(
                        &conn,
                        "tools/call",
                        &json!({"name": "recover_text", "arguments": {"prune_id": id, "ranges": [{"start_line": 1 + (k % span), "end_line": 40 + (k % span)}]}}),
                    );
                    assert!(
                        v.get("result").is_some_and(|r| r.get("isError").is_none_or(|e| e == false)),
                        "error answer: {v}"
                    );
                    k += 1;
                    calls.fetch_add(2, Ordering::Relaxed);
                }
            });
        }
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
    });
    calls.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p / 100.0).round() as usize]
}

fn median(v: &mut [f64]) -> f64 {
    pct(v, 50.0)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

fn client() -> reqwest::blocking::Client {
    mcp_pruner::http_client::install_tls_provider();
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("HTTP client")
}

fn redis_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REDIS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["valkey-server", "redis-server"].into_iter().find_map(|b| {
        std::env::split_paths(&path)
            .map(|d| d.join(b))
            .find(|f| f.is_file())
    })
}

/// A server on a free loopback port, without persistence.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start(bin: &Path) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the store");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the store did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Redis { child, port }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `serve` child on an ephemeral loopback port (no ledger).
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn serve(root: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-pruner"))
            .args(["serve", "--port", "0", "--no-ledger", "--root"])
            .arg(root)
            .args(extra)
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

    fn call(&self, client: &reqwest::blocking::Client, method: &str, params: &Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let r = client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
            .send()
            .expect("POST /mcp");
        assert_eq!(r.status(), 200, "POST /mcp answered {}", r.status());
        r.json().expect("JSON response")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
