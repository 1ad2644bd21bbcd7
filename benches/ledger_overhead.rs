//! The savings ledger's cost per tool call (issue 14), as a ratio to the same call without it,
//! measured in one run: the same `read` calls through the real dispatcher in process, rounds
//! alternating between a server with the ledger on (a temp SQLite file) and one with it off;
//! best round of each. The ledger only enqueues on the call path (a writer thread does the SQL),
//! so the ratio should stay near 1.
//!
//! `cargo bench --bench ledger_overhead` (CALLS=N and ROUNDS=N to change the workload).

use mcp_pruner::app::App;
use mcp_pruner::config::Config;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn round(app: &Arc<App>, calls: usize) -> Duration {
    let session = Arc::new(mcp_pruner::protocol::Session::new("bench"));
    let server = mcp_pruner::rpc::Server::new(app.clone());
    let started = Instant::now();
    for i in 0..calls {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let msg = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"read","arguments":{"path":"f.txt"}}});
        let r = mcp_pruner::rpc::handle(&server, &session, msg, tx, None).await;
        assert!(r.is_some());
    }
    started.elapsed()
}

fn main() {
    let calls = env_usize("CALLS", 3000);
    let rounds = env_usize("ROUNDS", 5);
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=200)
        .map(|i| format!("line {i} of a small file\n"))
        .collect();
    std::fs::write(dir.path().join("f.txt"), body).unwrap();
    let off = Config::for_root(dir.path());
    let mut on = off.clone();
    on.ledger = Some(dir.path().join("ledger.sqlite3"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (app_off, app_on) = (App::new(off), App::new(on));
    let (mut best_off, mut best_on) = (Duration::MAX, Duration::MAX);
    rt.block_on(async {
        round(&app_off, calls / 10).await;
        round(&app_on, calls / 10).await;
        for _ in 0..rounds {
            best_off = best_off.min(round(&app_off, calls).await);
            best_on = best_on.min(round(&app_on, calls).await);
        }
    });
    app_on.ledger.close();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / calls as f64;
    println!(
        "ledger_overhead: {calls} read calls x {rounds} rounds (best): without ledger {:.1} us/call, with ledger {:.1} us/call, ratio {:.3}x; rows dropped {}",
        per(best_off),
        per(best_on),
        best_on.as_secs_f64() / best_off.as_secs_f64(),
        app_on.ledger.dropped()
    );
}
