//! The savings ledger: one SQLite row per tool call ([`LedgerRow`]: counts and names only), kept
//! across processes in the user's data directory, so `mcp-pruner stats` can say what pruning saved
//! and how often the agent had to take removed lines back.
//!
//! Owns the file (WAL mode, so several servers write at once), its schema version (migrated
//! forward by `PRAGMA user_version`), setting a corrupted file aside, and a writer thread that
//! takes rows off a queue. It must never block or fail a tool call: [`Ledger::record`] only
//! enqueues, and every database error becomes a warning event and a dropped row. It never sees
//! file contents, command output or questions.

pub mod stats;

use crate::contract::types::LedgerRow;
use rusqlite::{Connection, OpenFlags, params};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// Rows waiting for the writer at most; beyond it rows are dropped (and counted), never blocking.
const QUEUE: usize = 65_536;

/// How long a writer waits for another process's lock before giving up on a batch.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Most rows written in one transaction.
const BATCH: usize = 512;

/// What the writer thread is asked to do.
enum Msg {
    /// Insert a row.
    Row(Box<LedgerRow>),
    /// Mark the pruned rows of this prune_id recovered.
    Recovered(String),
    /// Write what is queued and answer.
    Flush(SyncSender<()>),
}

/// A handle on the ledger; a disabled one (`--no-ledger`, or a file that could not be opened)
/// accepts every call and records nothing.
pub struct Ledger {
    /// The file, when enabled.
    path: Option<PathBuf>,
    /// The writer's queue; `None` when disabled or closed.
    tx: Mutex<Option<SyncSender<Msg>>>,
    /// The writer thread, joined by [`Ledger::close`].
    writer: Mutex<Option<JoinHandle<()>>>,
    /// Rows dropped because the queue was full or the database refused them.
    dropped: std::sync::Arc<AtomicU64>,
}

impl Ledger {
    /// A ledger that records nothing.
    pub fn disabled() -> Ledger {
        Ledger {
            path: None,
            tx: Mutex::new(None),
            writer: Mutex::new(None),
            dropped: Default::default(),
        }
    }

    /// Opens (creating, migrating or replacing a corrupted file as needed) the ledger at `path`
    /// and starts its writer. Fails open: on any error, a warning event and a disabled ledger.
    pub fn open(path: &Path) -> Ledger {
        match open_db(path) {
            Ok(conn) => {
                let (tx, rx) = sync_channel(QUEUE);
                let dropped: std::sync::Arc<AtomicU64> = Default::default();
                let d = dropped.clone();
                let shown = path.to_path_buf();
                let writer = std::thread::Builder::new()
                    .name("ledger-writer".into())
                    .spawn(move || write_loop(conn, rx, d, &shown))
                    .ok();
                Ledger {
                    path: Some(path.to_path_buf()),
                    tx: Mutex::new(writer.is_some().then_some(tx)),
                    writer: Mutex::new(writer),
                    dropped,
                }
            }
            Err(e) => {
                crate::events::ledger_unavailable(&path.to_string_lossy(), &e);
                Ledger::disabled()
            }
        }
    }

    /// The file, when the ledger is on.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Rows dropped so far (full queue, or the database refused them).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Queues a row; never blocks.
    pub fn record(&self, row: LedgerRow) {
        self.send(Msg::Row(Box::new(row)));
    }

    /// Marks the pruned calls whose removed lines live behind `prune_id` as recovered.
    pub fn recovered(&self, prune_id: &str) {
        self.send(Msg::Recovered(prune_id.to_string()));
    }

    fn send(&self, msg: Msg) {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = tx.as_ref() {
            match tx.try_send(msg) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Waits (at most `within`) until every queued row is written.
    pub fn flush(&self, within: Duration) {
        let (done_tx, done_rx) = sync_channel(1);
        self.send(Msg::Flush(done_tx));
        let _ = done_rx.recv_timeout(within);
    }

    /// Writes what is queued and stops the writer (at exit).
    pub fn close(&self) {
        self.flush(Duration::from_secs(5));
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = w.join();
        }
    }

    /// Lifetime totals over every row of the file (for `health`); `None` when off or unreadable.
    pub fn lifetime(&self) -> Option<crate::contract::types::StatsRow> {
        let path = self.path.as_ref()?;
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
        conn.busy_timeout(Duration::from_millis(500)).ok()?;
        stats::totals(&conn, 0, None, "total").ok()
    }
}

/// Opens the file: WAL, a busy timeout, the schema migrated to [`SCHEMA_VERSION`]. A file that is
/// not a readable SQLite database is renamed `<name>.corrupt-<unix ms>` and a new one started.
fn open_db(path: &Path) -> Result<Connection, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    match prepare(path) {
        Ok(c) => Ok(c),
        Err(e) if is_corrupt(&e) => {
            let aside = path.with_extension(format!(
                "sqlite3.corrupt-{}",
                chrono::Utc::now().timestamp_millis()
            ));
            std::fs::rename(path, &aside)
                .map_err(|r| format!("corrupted ({e}) and cannot be set aside: {r}"))?;
            for suffix in ["-wal", "-shm"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(side));
            }
            crate::events::ledger_set_aside(
                &path.to_string_lossy(),
                &aside.to_string_lossy(),
                &e.to_string(),
            );
            prepare(path).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

fn prepare(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    migrate(&conn)?;
    Ok(conn)
}

/// Brings the schema forward from whatever version the file has; a newer file is left alone
/// (its extra columns are ignored by this build's inserts and queries).
pub(crate) fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version < 1 {
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS calls (
                 id INTEGER PRIMARY KEY,
                 ts_ms INTEGER NOT NULL,
                 root TEXT NOT NULL,
                 client_name TEXT NOT NULL,
                 client_version TEXT NOT NULL,
                 tool TEXT NOT NULL,
                 tokens_raw INTEGER NOT NULL,
                 tokens_read INTEGER NOT NULL,
                 pruning_applied INTEGER NOT NULL,
                 pruning_reason TEXT NOT NULL,
                 backend TEXT NOT NULL,
                 duration_ms INTEGER NOT NULL,
                 is_error INTEGER NOT NULL,
                 prune_id TEXT NOT NULL,
                 recovered INTEGER NOT NULL DEFAULT 0
             );
             CREATE INDEX IF NOT EXISTS calls_ts ON calls (ts_ms);
             CREATE INDEX IF NOT EXISTS calls_prune_id ON calls (prune_id) WHERE prune_id <> '';
             PRAGMA user_version = 1;
             COMMIT;",
        )?;
    }
    Ok(())
}

fn write_loop(
    mut conn: Connection,
    rx: Receiver<Msg>,
    dropped: std::sync::Arc<AtomicU64>,
    path: &Path,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let mut waiting = Vec::new();
        let rows = batch
            .iter()
            .filter(|m| matches!(m, Msg::Row(_) | Msg::Recovered(_)))
            .count() as u64;
        if let Err(e) = write_batch(&mut conn, &batch) {
            dropped.fetch_add(rows, Ordering::Relaxed);
            crate::events::ledger_write_failed(&path.to_string_lossy(), rows, &e.to_string());
        }
        for m in batch {
            if let Msg::Flush(done) = m {
                waiting.push(done);
            }
        }
        for done in waiting {
            let _ = done.try_send(());
        }
    }
}

fn write_batch(conn: &mut Connection, batch: &[Msg]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO calls (ts_ms, root, client_name, client_version, tool, tokens_raw,
                 tokens_read, pruning_applied, pruning_reason, backend, duration_ms, is_error,
                 prune_id, recovered)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        let mut recover = tx.prepare_cached(
            "UPDATE calls SET recovered = 1 WHERE prune_id = ?1 AND pruning_applied = 1",
        )?;
        for m in batch {
            match m {
                Msg::Row(r) => {
                    insert.execute(params![
                        r.ts_ms as i64,
                        r.root,
                        r.client_name,
                        r.client_version,
                        r.tool,
                        r.tokens_raw as i64,
                        r.tokens_read as i64,
                        r.pruning_applied,
                        r.pruning_reason,
                        r.backend,
                        r.duration_ms as i64,
                        r.is_error,
                        r.prune_id,
                        r.recovered,
                    ])?;
                }
                Msg::Recovered(id) => {
                    recover.execute(params![id])?;
                }
                Msg::Flush(_) => {}
            }
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tool: &str, raw: u64, read: u64, prune_id: &str) -> LedgerRow {
        LedgerRow {
            ts_ms: 1_700_000_000_000,
            root: "/r".into(),
            client_name: "c".into(),
            client_version: "1".into(),
            tool: tool.into(),
            tokens_raw: raw,
            tokens_read: read,
            pruning_applied: !prune_id.is_empty(),
            pruning_reason: String::new(),
            backend: "builtin".into(),
            duration_ms: 3,
            is_error: false,
            prune_id: prune_id.into(),
            recovered: false,
        }
    }

    #[test]
    fn rows_and_recoveries_are_written_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        let l = Ledger::open(&path);
        l.record(row("read", 1000, 200, "prn_1_x"));
        l.record(row("bash", 500, 500, ""));
        l.recovered("prn_1_x");
        l.close();
        let t = Ledger::open(&path).lifetime().unwrap();
        assert_eq!(
            (t.calls, t.tokens_raw, t.tokens_read, t.tokens_saved),
            (2, 1500, 700, 800)
        );
        assert_eq!((t.pruned_calls, t.recovered_calls), (1, 1));
        assert_eq!(t.recovery_rate, 1.0);
    }

    #[test]
    fn a_corrupted_file_is_set_aside_and_a_new_one_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        std::fs::write(
            &path,
            b"this is not a database, it is sixty-four bytes of garbage text!!",
        )
        .unwrap();
        let l = Ledger::open(&path);
        assert!(l.path().is_some(), "a new ledger was started");
        l.record(row("read", 10, 5, ""));
        l.close();
        assert_eq!(Ledger::open(&path).lifetime().unwrap().calls, 1);
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
    }

    #[test]
    fn an_unopenable_path_fails_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        // A directory cannot be created under a regular file.
        let l = Ledger::open(&file.join("sub/l.sqlite3"));
        assert!(l.path().is_none());
        l.record(row("read", 1, 1, ""));
        l.close();
    }
}
