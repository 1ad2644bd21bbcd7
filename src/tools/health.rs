//! `health` (tool and seed 001's legacy JSON-RPC method): status, pruning backend, recovery store
//! and token counters. Read-only; never probes the network.

use super::{ToolCtx, ToolOutput};
use crate::app::App;
use crate::budget;
use crate::contract::types::{
    HealthResult, HealthResultBackend, HealthResultLedger, HealthResultStatus, HealthResultStore,
};
use crate::version::{SERVER_NAME, TOOLING_VERSION};
use std::sync::atomic::Ordering;

/// Current status.
pub fn status(app: &App) -> HealthResult {
    let stats = app.store.stats();
    let (max_bytes, max_entries, ttl) = app.store.limits();
    let backend: HealthResultBackend = app
        .config
        .backend
        .as_str()
        .parse()
        .expect("backend names match the schema");
    let saved = app.tokens_saved.load(Ordering::Relaxed);
    HealthResult {
        summary: budget::summary(&format!(
            "healthy; backend {}; {} stored outputs; {saved} tokens saved",
            app.config.backend.as_str(),
            stats.entries
        )),
        status: HealthResultStatus::Healthy,
        server: SERVER_NAME.into(),
        version: TOOLING_VERSION.into(),
        capabilities: [
            "prune_text",
            "recover_text",
            "annotations",
            "markers",
            "read",
            "bash",
            "grep",
            "resources",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        timestamp: chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        uptime_ms: app.uptime_ms(),
        backend,
        tokenizer: "o200k_base".into(),
        store: HealthResultStore {
            entries: stats.entries as u64,
            bytes: stats.bytes as u64,
            max_entries: max_entries as u64,
            max_bytes: max_bytes as u64,
            ttl_s: ttl.as_secs(),
        },
        tokens_saved: saved,
        ledger: app.ledger.path().and_then(|path| {
            Some(HealthResultLedger {
                path: path.to_string_lossy().into_owned(),
                lifetime: app.ledger.lifetime()?,
                dropped_rows: app.ledger.dropped(),
            })
        }),
    }
}

/// Runs the `health` tool.
pub fn run(ctx: &ToolCtx) -> ToolOutput {
    let s = status(&ctx.app);
    ToolOutput::json(&s)
}
