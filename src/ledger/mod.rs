//! The savings ledger: one SQLite row per tool call ([`Record`]: counts and names only), kept
//! across processes in the user's data directory, so `mcp-pruner stats` can say what pruning saved
//! and how often the agent had to take removed lines back.
//!
//! Owns the file (WAL mode, so several servers write at once), its schema version (migrated
//! forward by `PRAGMA user_version`), setting a corrupted file aside, and a writer thread that
//! takes records off a queue. It must never block or fail a tool call: [`Ledger::record`] copies a
//! fixed-size [`Record`] into a lock-free ring (`queue::Ring`): no allocation, no lock, no
//! syscall. The writer sleeps while idle (the first record after a quiet spell wakes it, one
//! `unpark`), and while busy wakes every `BATCH_WINDOW` to write what gathered in one
//! transaction, so callers never wake it. Every database error becomes a warning event and
//! dropped rows. It never sees file contents, command output or questions.

mod queue;
pub mod stats;

use crate::sync::Unpoisoned;
use rusqlite::{Connection, OpenFlags, params};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// Records waiting for the writer at most; beyond it records are dropped (and counted), never
/// blocking. About 1 MiB of fixed-size slots.
const QUEUE: usize = 8192;

/// How long a writer waits for another process's lock before giving up on a batch.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Most rows written in one transaction.
const BATCH: usize = 512;

/// While records keep coming, the writer sleeps this long between batches (callers never wake it).
const BATCH_WINDOW: Duration = Duration::from_millis(20);

/// A `prune_id` held inline (`prn_<n>_<20 digits>` is at most 45 bytes); longer ids are not ours
/// and are kept empty.
#[derive(Clone, Copy)]
pub struct PruneId {
    /// Bytes of `bytes` in use (0: no id, or not ours).
    len: u8,
    /// The id's bytes, inline so an entry is `Copy` and queues without allocating.
    bytes: [u8; 47],
}

impl PruneId {
    /// `id` inline; empty when longer than the room.
    pub fn new(id: &str) -> PruneId {
        let mut p = PruneId {
            len: 0,
            bytes: [0; 47],
        };
        if id.len() <= p.bytes.len() {
            p.bytes[..id.len()].copy_from_slice(id.as_bytes());
            p.len = id.len() as u8;
        }
        p
    }

    /// The id (empty when none).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

/// One call's row, fixed size and `Copy`: names are `'static` (tools, reasons and backends are
/// closed sets), the client is an id from [`Ledger::client_id`], the root is the ledger's.
#[derive(Clone, Copy)]
pub struct Record {
    /// When the call ended, Unix milliseconds.
    pub ts_ms: u64,
    /// The client `(name, version)` id from [`Ledger::client_id`].
    pub client: u32,
    /// The tool's canonical name.
    pub tool: &'static str,
    /// o200k tokens the model would have read without pruning.
    pub tokens_raw: u64,
    /// o200k tokens of what the model reads.
    pub tokens_read: u64,
    /// Whether pruning removed lines.
    pub pruning_applied: bool,
    /// PruningMetadata.reason when pruning was not applied; empty otherwise.
    pub pruning_reason: &'static str,
    /// The pruning backend.
    pub backend: &'static str,
    /// The call's duration.
    pub duration_ms: u64,
    /// Whether the call ended as a tool error.
    pub is_error: bool,
    /// The prune_id whose lines pruning removed (empty when none).
    pub prune_id: PruneId,
}

/// What the writer is handed.
#[derive(Clone, Copy)]
enum Entry {
    /// Insert a row.
    Row(Record),
    /// Mark the pruned rows of this prune_id recovered.
    Recovered(PruneId),
}

/// What the callers and the writer share.
struct Shared {
    /// The records the callers push and the writer pops.
    ring: queue::Ring<Entry>,
    /// The writer is (about to be) parked with nothing to do: the next record unparks it.
    sleeping: AtomicBool,
    /// Stop once the queue is written.
    closed: AtomicBool,
    /// Callers waiting for everything queued before their request to be written.
    flushes: Mutex<Vec<SyncSender<()>>>,
    /// Client `(name, version)` pairs, indexed by [`Record::client`].
    clients: Mutex<Vec<(String, String)>>,
    /// Rows dropped because the queue was full or the database refused them.
    dropped: AtomicU64,
    /// The server's root, the same on every row of this process.
    root: String,
}

/// Distinct clients remembered at most; later ones share the unknown client's id (0).
const MAX_CLIENTS: usize = 1024;

/// A handle on the ledger; a disabled one (`--no-ledger`, or a file that could not be opened)
/// accepts every call and records nothing.
pub struct Ledger {
    /// The file, when enabled.
    path: Option<PathBuf>,
    /// Queue and flags; `None` when disabled.
    shared: Option<Arc<Shared>>,
    /// The writer thread (unparked through its handle), joined by [`Ledger::close`].
    writer: Mutex<Option<JoinHandle<()>>>,
    /// The writer's handle for `unpark`.
    thread: Option<std::thread::Thread>,
}

impl Ledger {
    /// A ledger that records nothing.
    pub fn disabled() -> Ledger {
        Ledger {
            path: None,
            shared: None,
            writer: Mutex::new(None),
            thread: None,
        }
    }

    /// Opens (creating, migrating or replacing a corrupted file as needed) the ledger at `path`
    /// for a server at `root` and starts its writer. Fails open: on any error, a warning event and
    /// a disabled ledger.
    pub fn open(path: &Path, root: &str) -> Ledger {
        match open_db(path) {
            Ok(conn) => {
                let shared = Arc::new(Shared {
                    ring: queue::Ring::new(QUEUE),
                    sleeping: AtomicBool::new(false),
                    closed: AtomicBool::new(false),
                    flushes: Mutex::new(Vec::new()),
                    clients: Mutex::new(vec![(String::new(), String::new())]),
                    dropped: AtomicU64::new(0),
                    root: root.to_string(),
                });
                let s = shared.clone();
                let shown = path.to_path_buf();
                let writer = std::thread::Builder::new()
                    .name("ledger-writer".into())
                    .spawn(move || write_loop(conn, &s, &shown))
                    .ok();
                let Some(writer) = writer else {
                    return Ledger::disabled();
                };
                Ledger {
                    path: Some(path.to_path_buf()),
                    thread: Some(writer.thread().clone()),
                    shared: Some(shared),
                    writer: Mutex::new(Some(writer)),
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

    /// Whether rows are recorded.
    pub fn enabled(&self) -> bool {
        self.shared.is_some()
    }

    /// Rows dropped so far (full queue, or the database refused them).
    pub fn dropped(&self) -> u64 {
        self.shared
            .as_ref()
            .map_or(0, |s| s.dropped.load(Ordering::Relaxed))
    }

    /// The id of a client `(name, version)` for [`Record::client`] (0: unknown or empty).
    /// Takes a lock: callers keep the id (a session asks once).
    pub fn client_id(&self, name: &str, version: &str) -> u32 {
        let Some(s) = &self.shared else { return 0 };
        if name.is_empty() && version.is_empty() {
            return 0;
        }
        let mut clients = s.clients.locked();
        if let Some(i) = clients.iter().position(|(n, v)| n == name && v == version) {
            return i as u32;
        }
        if clients.len() >= MAX_CLIENTS {
            return 0;
        }
        clients.push((name.to_string(), version.to_string()));
        (clients.len() - 1) as u32
    }

    /// Queues a row; never blocks, allocates or takes a lock.
    pub fn record(&self, row: Record) {
        self.send(Entry::Row(row));
    }

    /// Marks the pruned calls whose removed lines live behind `prune_id` as recovered.
    pub fn recovered(&self, prune_id: &str) {
        self.send(Entry::Recovered(PruneId::new(prune_id)));
    }

    fn send(&self, e: Entry) {
        let Some(s) = &self.shared else { return };
        if s.ring.push(e).is_err() {
            s.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // Pairs with the writer's fence between setting `sleeping` and looking at the ring: either
        // it sees this record or this sees it asleep.
        fence(Ordering::SeqCst);
        if s.sleeping.load(Ordering::Relaxed)
            && s.sleeping.swap(false, Ordering::AcqRel)
            && let Some(t) = &self.thread
        {
            t.unpark();
        }
    }

    /// Waits (at most `within`) until every queued row is written.
    pub fn flush(&self, within: Duration) {
        let (Some(s), Some(t)) = (&self.shared, &self.thread) else {
            return;
        };
        if self.writer.locked().is_none() {
            return;
        }
        let (done_tx, done_rx) = sync_channel(1);
        s.flushes.locked().push(done_tx);
        t.unpark();
        let _ = done_rx.recv_timeout(within);
    }

    /// Writes what is queued and stops the writer (at exit).
    pub fn close(&self) {
        self.flush(Duration::from_secs(5));
        if let Some(s) = &self.shared {
            s.closed.store(true, Ordering::SeqCst);
        }
        if let Some(t) = &self.thread {
            t.unpark();
        }
        if let Some(w) = self.writer.locked().take() {
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

impl Drop for Ledger {
    /// A ledger dropped without [`Ledger::close`] still lets its writer write what is queued and end.
    fn drop(&mut self) {
        if let Some(s) = &self.shared {
            s.closed.store(true, Ordering::SeqCst);
        }
        if let Some(t) = &self.thread {
            t.unpark();
        }
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

fn write_loop(mut conn: Connection, s: &Shared, path: &Path) {
    let mut batch: Vec<Entry> = Vec::with_capacity(BATCH);
    let mut clients: Vec<(String, String)> = Vec::new();
    loop {
        let flushes = std::mem::take(&mut *s.flushes.locked());
        let closing = s.closed.load(Ordering::SeqCst);
        let mut wrote = false;
        loop {
            batch.clear();
            while batch.len() < BATCH {
                match s.ring.pop() {
                    Some(e) => batch.push(e),
                    None => break,
                }
            }
            if batch.is_empty() {
                break;
            }
            wrote = true;
            if batch
                .iter()
                .any(|e| matches!(e, Entry::Row(r) if r.client as usize >= clients.len()))
            {
                clients.clone_from(&s.clients.locked());
            }
            if let Err(e) = write_batch(&mut conn, &batch, &s.root, &clients) {
                let rows = batch.len() as u64;
                s.dropped.fetch_add(rows, Ordering::Relaxed);
                crate::events::ledger_write_failed(&path.to_string_lossy(), rows, &e.to_string());
            }
            if batch.len() < BATCH {
                break;
            }
        }
        for done in flushes {
            let _ = done.try_send(());
        }
        if closing {
            return;
        }
        if wrote {
            // More are likely on the way: let them gather (callers do not wake a timed sleep).
            std::thread::park_timeout(BATCH_WINDOW);
        } else {
            s.sleeping.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            let idle = s.ring.is_empty()
                && !s.closed.load(Ordering::SeqCst)
                && s.flushes.locked().is_empty();
            if idle {
                std::thread::park();
            }
            s.sleeping.store(false, Ordering::SeqCst);
        }
    }
}

fn write_batch(
    conn: &mut Connection,
    batch: &[Entry],
    root: &str,
    clients: &[(String, String)],
) -> rusqlite::Result<()> {
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
        for e in batch {
            match e {
                Entry::Row(r) => {
                    let (name, version) = clients
                        .get(r.client as usize)
                        .map_or(("", ""), |(n, v)| (n.as_str(), v.as_str()));
                    insert.execute(params![
                        r.ts_ms as i64,
                        root,
                        name,
                        version,
                        r.tool,
                        r.tokens_raw as i64,
                        r.tokens_read as i64,
                        r.pruning_applied,
                        r.pruning_reason,
                        r.backend,
                        r.duration_ms as i64,
                        r.is_error,
                        r.prune_id.as_str(),
                        false,
                    ])?;
                }
                Entry::Recovered(id) => {
                    recover.execute(params![id.as_str()])?;
                }
            }
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tool: &'static str, raw: u64, read: u64, prune_id: &str) -> Record {
        Record {
            ts_ms: 1_700_000_000_000,
            client: 0,
            tool,
            tokens_raw: raw,
            tokens_read: read,
            pruning_applied: !prune_id.is_empty(),
            pruning_reason: "",
            backend: "builtin",
            duration_ms: 3,
            is_error: false,
            prune_id: PruneId::new(prune_id),
        }
    }

    #[test]
    fn rows_and_recoveries_are_written_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        let l = Ledger::open(&path, "/r");
        l.record(row("read", 1000, 200, "prn_1_x"));
        l.record(row("bash", 500, 500, ""));
        l.recovered("prn_1_x");
        l.close();
        let t = Ledger::open(&path, "/r").lifetime().unwrap();
        assert_eq!(
            (t.calls, t.tokens_raw, t.tokens_read, t.tokens_saved),
            (2, 1500, 700, 800)
        );
        assert_eq!((t.pruned_calls, t.recovered_calls), (1, 1));
        assert_eq!(t.recovery_rate, 1.0);
    }

    #[test]
    fn clients_root_and_names_reach_the_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        let l = Ledger::open(&path, "/the/root");
        let a = l.client_id("claude-code", "2.1");
        assert_eq!(l.client_id("claude-code", "2.1"), a, "interned once");
        assert_eq!(l.client_id("", ""), 0);
        let b = l.client_id("codex", "0.9");
        assert_ne!(a, b);
        let mut r = row("grep", 10, 4, "prn_12_01234567890123456789");
        r.client = b;
        r.pruning_reason = "no_savings";
        l.record(r);
        l.close();
        let conn = Connection::open(&path).unwrap();
        let got: (String, String, String, String, String, String) = conn
            .query_row(
                "SELECT root, client_name, client_version, tool, pruning_reason, prune_id FROM calls",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .unwrap();
        assert_eq!(
            got,
            (
                "/the/root".into(),
                "codex".into(),
                "0.9".into(),
                "grep".into(),
                "no_savings".into(),
                "prn_12_01234567890123456789".into()
            )
        );
    }

    #[test]
    fn a_burst_past_the_queue_is_counted_not_blocked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite3");
        let l = Ledger::open(&path, "/r");
        for _ in 0..3 * QUEUE {
            l.record(row("read", 1, 1, ""));
        }
        l.close();
        let written = Ledger::open(&path, "/r").lifetime().unwrap().calls;
        assert_eq!(written + l.dropped(), 3 * QUEUE as u64);
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
        let l = Ledger::open(&path, "/r");
        assert!(l.path().is_some(), "a new ledger was started");
        l.record(row("read", 10, 5, ""));
        l.close();
        assert_eq!(Ledger::open(&path, "/r").lifetime().unwrap().calls, 1);
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
        let l = Ledger::open(&file.join("sub/l.sqlite3"), "/r");
        assert!(l.path().is_none());
        l.record(row("read", 1, 1, ""));
        l.close();
    }
}
