//! What more than one bench needs from a `serve` child (`mod support;` in each bench).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::mpsc::channel;
use std::time::Duration;

/// Reads `serve`'s stdout until the `mcp_pruner.ready` event and returns its port; keeps
/// draining stdout afterwards so the server never blocks on a full pipe.
pub fn ready_port(stdout: std::process::ChildStdout) -> u16 {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["event"] == "mcp_pruner.ready"
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(v["data"]["port"].as_u64().unwrap_or(0) as u16);
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("mcp_pruner.ready with the bound port")
}
