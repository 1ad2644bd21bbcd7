//! Process-wide state shared by every transport and request: configuration, the recovery store,
//! the pruner, the in-flight table, the savings ledger and counters. Built once from a [`Config`]; owns no I/O itself.

use crate::config::Config;
use crate::ledger::Ledger;
use crate::protocol::inflight::InFlight;
use crate::prune::Pruner;
use crate::store::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Shared server state.
pub struct App {
    /// Validated configuration.
    pub config: Arc<Config>,
    /// Recovery / artifact store (prune ids).
    pub store: Store,
    /// The configured pruning backend.
    pub pruner: Pruner,
    /// Running requests, for cancellation.
    pub inflight: InFlight,
    /// Wall-clock start, for `/healthz` `started_at`.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// Monotonic start, for uptime.
    pub started: Instant,
    /// o200k tokens removed by pruning since start (reported by `health`).
    pub tokens_saved: AtomicU64,
    /// The savings ledger (one row per tool call; disabled by `--no-ledger`).
    pub ledger: Ledger,
    /// Counter for request ids that are unique in this process.
    next_request: AtomicU64,
}

impl App {
    /// Builds the state from a validated configuration.
    pub fn new(config: Config) -> Arc<App> {
        let config = Arc::new(config);
        let store = store(&config);
        // Replicas on a shared store seal cursors with the key stored there, so that any of
        // them continues a page another began.
        let mut mine = [0u8; 32];
        crate::secret::fill_random(&mut mine)
            .expect("the kernel's random source (getrandom) is unavailable");
        if let Some(key) = store.shared_cursor_key(mine) {
            crate::secret::init_with(&key);
        }
        // The cursor key, from the kernel's random source: a server without one does not start.
        crate::secret::init().expect("the kernel's random source (getrandom) is unavailable");
        // Every result reports tokens: build the o200k encoder now, not on the first call.
        crate::tokens::warm_up();
        Arc::new(App {
            store,
            pruner: Pruner::new(&config),
            inflight: InFlight::default(),
            started_at: chrono::Utc::now(),
            started: Instant::now(),
            tokens_saved: AtomicU64::new(0),
            ledger: config
                .ledger
                .as_deref()
                .map(|path| Ledger::open(path, &config.root.to_string_lossy()))
                .unwrap_or_else(Ledger::disabled),
            next_request: AtomicU64::new(1),
            config,
        })
    }

    /// A new server-side `request_id` (seed 000 `req:received`).
    pub fn new_request_id(&self) -> String {
        format!("req_{}", self.next_request.fetch_add(1, Ordering::Relaxed))
    }

    /// The `/metrics` text: this process's counters and the store's figures.
    pub fn metrics(&self) -> String {
        let stats = self.store.stats();
        crate::metrics::render(&crate::metrics::StoreFigures {
            backend: if self.store.shared_server().is_some() {
                "redis"
            } else {
                "memory"
            },
            entries: stats.entries,
            bytes: stats.bytes,
            evictions: self.store.evictions(),
            refused: self.store.refused_total(),
            near: self.store.near(),
        })
    }

    /// Milliseconds since start.
    pub fn uptime_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// The recovery store `config` names: this process's memory, or a shared Valkey/Redis server
/// (which need not be up yet: calls say so until it is).
fn store(config: &Config) -> Store {
    let (bytes, entries, ttl) = (
        config.store_max_bytes,
        config.store_max_entries,
        config.prune_id_ttl,
    );
    match &config.store {
        None => Store::new(bytes, entries, ttl),
        Some(t) => Store::shared(t.clone(), bytes, entries, ttl)
            .expect("the TLS configuration of the shared store (the platform's roots)"),
    }
}
