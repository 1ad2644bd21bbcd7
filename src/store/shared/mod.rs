//! The shared store: stored outputs in a Valkey/Redis server, so that every replica on it answers
//! every `prune_id`. Owns the key layout under [`PREFIX`]; must never return bytes of another
//! output than the one asked for, never read a whole text for a page, and never let the key space
//! grow without bound (the caps and TTL are enforced by the server-side admission script; every
//! key expires but the few fleet-wide ones, each bounded).
//!
//! Per entry: `e:ID` (hash: origin, label, bytes, lines, shown runs; its life is the entry's),
//! `t:ID` (the text, read by `GETRANGE`), `x:ID` (the byte offset of every [`STEP`]th line, 8
//! bytes each, so a page reads one mark and at most [`STEP`] lines before its first). Shared:
//! `lru` (sorted set: id by last use), `sz` and `bytes` (costs), `c:HASH` (BLAKE3 of origin,
//! label and text -> id, so the same output re-issues its id), `o:OWNER` (ids issued to a
//! session, for `resources/list`),
//! `g:ID` (why an id left: evicted, too large), `epoch` (changes when the server loses its data),
//! `evseq` and `evlog` (how many entries were evicted, and at least the last
//! `near::EVLOG_MAX` of them, at most twice that, so replicas drop their near copies;
//! bounded, never expire).
//! Calls block on the network (a store round trip is a fraction of a millisecond); the texts a
//! replica stored itself are also kept near (`near`), which spares the round trip of
//! the same output re-issued or paged again.
//!
//! Here: the key layout, the client [`Shared`] (put, get, list, stats) and [`probe`]. The rest,
//! one file each: `text.rs` the stored text a get hands out ([`SharedText`], read by range),
//! `scripts.rs` the Lua that runs on the server, `marks.rs` the line index `x:ID`, `known.rs`
//! what this process remembers of entries and of the server's epoch (and why an id is missing).

mod known;
mod marks;
mod scripts;
mod text;

use super::DiskText;
use super::resp::{Cmd, Pool, Value};
use super::target::Target;
use crate::sync::Unpoisoned;
pub use known::Known;
use known::{epoch_changed, why_missing};
pub(super) use known::{epoch_cmds, note_epoch};
use marks::Marks;
use scripts::{ADMIT, REISSUE, set_field_cmd};
use std::io::{self, BufRead};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use text::page_cmd;
pub use text::{SharedText, TextGone};

/// Prefix of every key.
pub const PREFIX: &str = "mcp-pruner:";
/// One line-index mark every this many lines.
pub const STEP: usize = 64;
/// How much longer than its entry a text and its index live, so a reader that found the entry
/// finds its text (eviction deletes all three at once).
pub(super) const GRACE_MS: u64 = 60_000;
/// Upload batch: bytes sent in one pipeline.
const UPLOAD_BATCH: usize = 4 << 20;
/// Largest in-memory text uploaded with its admission in one round trip, before knowing whether
/// the same output's id can be re-issued instead (a larger one asks first).
const ONE_TRIP_MAX: usize = 256 << 10;
/// Most ids remembered per session for `resources/list`.
pub(super) const LIST_MAX: usize = 1000;

/// Why the shared store has no entry for an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMiss {
    /// Evicted to stay within the caps (recorded by the evicting replica).
    Evicted,
    /// Never stored: larger than the byte cap.
    TooLarge,
    /// The server lost its data (restart, flush) within an id's lifetime.
    Lost,
    /// Not there: expired, or never issued.
    Absent,
    /// The server could not be reached.
    Unavailable,
}

/// What a put did.
pub enum Put {
    /// Stored under a new id, or re-issued (the same output's live id).
    Stored(String),
    /// Larger than the byte cap: not stored.
    TooLarge,
}

/// What [`Shared::get_at`] found without the network, or the round trip that fetches it.
enum Fetch {
    /// From the near copy, or from what this process knows of the entry.
    Done((String, String, SharedText)),
    /// The entry's fields, its recency, and the first page if asked.
    Trip(Vec<Cmd>),
}

/// How far [`Shared::put`] got without the network.
enum Begun<'a> {
    /// Done: re-issued from a near copy, refused as too large, or stored in round trips of its
    /// own.
    Done(Put),
    /// One round trip left: the upload and the admission.
    Trip(Trip<'a>),
}

/// The round trip that stores a text in memory, and what its end needs.
struct Trip<'a> {
    /// The upload, the admission script last.
    batch: Vec<Cmd>,
    /// The id the text is stored under if it is new.
    id: String,
    /// The session whose outputs list the text.
    owner: &'a str,
    /// The tool that produced it (`read`, `bash`, ...).
    origin: &'a str,
    /// Its short label (a path, a command).
    label: String,
    /// The text, for the near copy.
    text: Option<ForNear<'a>>,
    /// The content key of the same output from the same origin and label.
    ckey: String,
}

/// A text in memory as its near copy takes it, with what the put already worked out.
struct ForNear<'a> {
    /// The text itself.
    text: &'a str,
    /// Its [`super::near::Near::output`] hash.
    hash: u64,
    /// Its line starts, when the put built the line index from them.
    starts: Option<Vec<usize>>,
}

/// A text to store.
pub enum Content<'a> {
    /// In memory.
    Text(&'a str),
    /// On disk (a spill file or a referenced file), read twice: to hash, then to upload.
    Disk(&'a DiskText),
}

impl Content<'_> {
    fn len(&self) -> u64 {
        match self {
            Content::Text(t) => t.len() as u64,
            Content::Disk(d) => d.len(),
        }
    }

    /// Feeds the whole text to `f` in chunks.
    fn each_chunk(&self, mut f: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        match self {
            Content::Text(t) => f(t.as_bytes()),
            Content::Disk(d) => {
                let mut r = d
                    .reader_at(1)
                    .map_err(|e| io::Error::other(e.to_string()))?;
                loop {
                    let buf = r.fill_buf()?;
                    if buf.is_empty() {
                        return Ok(());
                    }
                    let n = buf.len();
                    f(buf)?;
                    r.consume(n);
                }
            }
        }
    }
}

fn key(kind: &str, id: &str) -> String {
    format!("{PREFIX}{kind}:{id}")
}

/// The fields of entry `id` an opened text needs: origin, label, bytes, lines.
fn fields_cmd(id: &str) -> Cmd {
    Cmd::new("HMGET")
        .arg(key("e", id))
        .arg("o")
        .arg("l")
        .arg("b")
        .arg("n")
}

/// The content key of an output: the BLAKE3 hash of its origin, label and text (not SHA-256: the
/// same collision resistance, since a content key names the id a later put re-issues and two
/// outputs must never share one, for a third of the CPU).
fn content_key(origin: &str, label: &str, content: &Content<'_>) -> io::Result<String> {
    let mut hash = blake3::Hasher::new();
    for part in [origin.as_bytes(), b"\0", label.as_bytes(), b"\0"] {
        hash.update(part);
    }
    content.each_chunk(|c| {
        hash.update(c);
        Ok(())
    })?;
    Ok(key("c", &hash.finalize().to_hex()))
}

/// The owner under which an entry is listed: none for a stateless request's session (`anon-…`,
/// one request long, which can never list), so those add no key.
fn listed_owner(owner: &str) -> &str {
    if owner.starts_with("anon-") {
        ""
    } else {
        owner
    }
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The shared store's client side.
pub struct Shared {
    /// The connections to the server.
    pool: std::sync::Arc<Pool>,
    /// What this process knows of live entries, shared with the texts it hands out.
    known: std::sync::Arc<Known>,
    /// The store's byte cap, which the admission script enforces by eviction.
    max_bytes: usize,
    /// The store's entry cap, enforced the same way.
    max_entries: usize,
    /// An entry's time to live once stored (the configured `prune_id_ttl`).
    ttl: Duration,
    /// Entries this process evicted.
    pub evictions: AtomicU64,
    /// Copies of the texts this replica stored, so that re-reading or paging them costs no
    /// round trip while the server is known to still hold them.
    pub near: std::sync::Arc<super::near::Near>,
}

impl Shared {
    /// A client of `target` with the store's caps. The server is asked for its epoch now; if it
    /// cannot be reached the first calls report it unavailable until it can.
    pub fn new(
        target: Target,
        max_bytes: usize,
        max_entries: usize,
        ttl: Duration,
    ) -> io::Result<Shared> {
        let pool = std::sync::Arc::new(Pool::new(target)?);
        let known = std::sync::Arc::new(Known::new(ttl));
        let s = Shared {
            near: super::near::Near::start(pool.clone(), known.clone(), ttl),
            pool,
            known,
            max_bytes,
            max_entries,
            ttl,
            evictions: AtomicU64::new(0),
        };
        let _ = s.epoch_changed();
        Ok(s)
    }

    /// The server, for messages (no credentials).
    pub fn describe(&self) -> String {
        self.pool.describe()
    }

    fn ttl_ms(&self) -> u64 {
        self.ttl.as_millis().max(1) as u64
    }

    fn epoch_changed(&self) -> io::Result<bool> {
        epoch_changed(&self.pool, &self.known)
    }

    /// The cursor key every replica on this server uses: the one stored there, or `mine`
    /// stored as it if there is none yet. Never expires.
    pub fn cursor_key(&self, mine: [u8; 32]) -> io::Result<[u8; 32]> {
        let k = format!("{PREFIX}cursor-key");
        let r = self.pool.run(&[
            Cmd::new("SET").arg(&k).arg(mine).arg("NX"),
            Cmd::new("GET").arg(&k),
        ])?;
        check(r.clone())?;
        r.into_iter()
            .nth(1)
            .and_then(Value::bytes)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| io::Error::other("the store's cursor key is not 32 bytes"))
    }

    /// Stores `content` for `owner` (or re-issues the id of the same output), under `new_id`
    /// when it is new.
    pub fn put(
        &self,
        owner: &str,
        origin: &str,
        label: &str,
        content: Content<'_>,
        new_id: impl FnOnce() -> String,
    ) -> io::Result<Put> {
        match self.put_begin(owner, origin, label, content, new_id)? {
            Begun::Done(put) => Ok(put),
            Begun::Trip(trip) => {
                let replies = self.pool.run(&trip.batch);
                self.put_end(trip, replies)
            }
        }
    }

    /// [`Shared::put`] for async callers: the one round trip of a text in memory up to
    /// `ONE_TRIP_MAX` is awaited (`Pool::run_async`) instead of holding the thread.
    pub async fn put_async(
        &self,
        owner: &str,
        origin: &str,
        label: &str,
        text: &str,
        new_id: impl FnOnce() -> String,
    ) -> io::Result<Put> {
        match self.put_begin(owner, origin, label, Content::Text(text), new_id)? {
            Begun::Done(put) => Ok(put),
            Begun::Trip(trip) => {
                let replies = self.pool.run_async(&trip.batch).await;
                self.put_end(trip, replies)
            }
        }
    }

    /// What [`Shared::put`] can do without the network, or in several round trips of its own (a
    /// text on disk or larger than [`ONE_TRIP_MAX`]); else the one round trip left to make.
    fn put_begin<'a>(
        &self,
        owner: &'a str,
        origin: &'a str,
        label: &str,
        content: Content<'a>,
        new_id: impl FnOnce() -> String,
    ) -> io::Result<Begun<'a>> {
        let label: String = label.chars().take(200).collect();
        let owner = listed_owner(owner);
        let bytes = content.len();
        // The index costs 8 bytes a STEP lines; bounded by the text's own size.
        if bytes.saturating_add(bytes / 8) > self.max_bytes as u64 {
            return Ok(Begun::Done(Put::TooLarge));
        }
        let copyable = match content {
            Content::Text(t) => Some(t),
            Content::Disk(_) => None,
        };
        let mut near = None;
        if let Some(t) = copyable {
            let out = self.near.output(origin, &label, t);
            if let Some(id) = self.near.reissue(owner, &out) {
                return Ok(Begun::Done(Put::Stored(id)));
            }
            near = Some(ForNear {
                text: t,
                hash: out.hash,
                starts: None,
            });
        }
        let ckey = content_key(origin, &label, &content)?;
        let (now, ttl) = (now_ms(), self.ttl_ms());
        // A text in memory up to ONE_TRIP_MAX goes up with its admission in one round trip (the
        // script re-issues the same output's id instead, if it is live, and drops the upload);
        // a larger one is uploaded only if its id cannot be re-issued first.
        let one_trip = copyable.is_some_and(|t| t.len() <= ONE_TRIP_MAX);
        if !one_trip && let Some(id) = self.reissue(owner, origin, &label, &ckey, now, ttl)? {
            return Ok(Begun::Done(
                self.stored(id, owner, origin, &label, near, &ckey),
            ));
        }
        let id = new_id();
        let tk = key("t", &id);
        let (batch, marks) = self.upload(&tk, &content, near.as_mut(), ttl)?;
        if marks.bytes != bytes {
            let _ = self.pool.one(Cmd::new("DEL").arg(&tk));
            return Err(io::Error::other("the text changed while it was stored"));
        }
        let cost = bytes + marks.index.len() as u64;
        let admit = Cmd::script(ADMIT)
            .num(0)
            .arg(PREFIX)
            .arg(&id)
            .num(cost)
            .num(now)
            .num(ttl)
            .num(self.max_bytes)
            .num(self.max_entries)
            .arg(owner)
            .arg(&ckey)
            .arg(origin)
            .arg(&label)
            .num(bytes)
            .num(marks.lines)
            .arg(&marks.index)
            .num(LIST_MAX)
            .num(GRACE_MS)
            .num(super::near::EVLOG_MAX as u64)
            .num(one_trip as u64)
            .num(ttl + GRACE_MS)
            .num(now.saturating_sub(ttl));
        let mut trip = Trip {
            batch,
            id,
            owner,
            origin,
            label,
            text: near,
            ckey,
        };
        if one_trip {
            trip.batch.push(admit);
            return Ok(Begun::Trip(trip));
        }
        check(self.pool.run(&trip.batch)?)?;
        let admitted = self.pool.one(admit);
        trip.batch.clear();
        self.put_end(trip, admitted.map(|v| vec![v]))
            .map(Begun::Done)
    }

    /// The id of the same output, live in the store, re-issued to `owner` (the script lists it
    /// among the owner's outputs and renews it), if there is one.
    fn reissue(
        &self,
        owner: &str,
        origin: &str,
        label: &str,
        ckey: &str,
        now: u64,
        ttl: u64,
    ) -> io::Result<Option<String>> {
        let again = self.pool.one(
            Cmd::script(REISSUE)
                .num(0)
                .arg(PREFIX)
                .arg(ckey)
                .num(now)
                .num(ttl)
                .arg(owner)
                .arg(origin)
                .arg(label)
                .num(LIST_MAX)
                .num(GRACE_MS),
        )?;
        Ok(again.text())
    }

    /// The commands that upload `content` under the text key `tk` (what is left of them: full
    /// batches of [`UPLOAD_BATCH`] bytes are sent as they fill), and the line index built on the
    /// way. The first piece is the SET that creates the text (with its TTL), the rest APPENDs:
    /// the server keeps a SET's large argument as the value itself, where an APPEND copies it.
    /// A text the near copy will keep has its line starts found once, for the index too.
    fn upload(
        &self,
        tk: &str,
        content: &Content<'_>,
        near: Option<&mut ForNear<'_>>,
        ttl: u64,
    ) -> io::Result<(Vec<Cmd>, Marks)> {
        let mut marks = Marks::default();
        let fed = match near {
            Some(n) if n.text.len() <= super::near::COPY_MAX => {
                let starts = super::line_starts(n.text);
                marks = Marks::from_starts(n.text.len(), &starts);
                n.starts = Some(starts);
                false
            }
            _ => true,
        };
        let set = |piece: &[u8]| {
            Cmd::new("SET")
                .arg(tk)
                .arg(piece)
                .arg("PX")
                .num(ttl + GRACE_MS)
        };
        let mut batch: Vec<Cmd> = Vec::new();
        let mut created = false;
        let mut pending = 0usize;
        content.each_chunk(|c| {
            if fed {
                marks.feed(c);
            }
            for piece in c.chunks(1 << 20) {
                batch.push(if created {
                    Cmd::new("APPEND").arg(tk).arg(piece)
                } else {
                    set(piece)
                });
                created = true;
                pending += piece.len();
                if pending >= UPLOAD_BATCH {
                    check(self.pool.run(&std::mem::take(&mut batch))?)?;
                    pending = 0;
                }
            }
            Ok(())
        })?;
        if !created {
            batch.push(set(b""));
        }
        Ok((batch, marks))
    }

    /// The end of a [`Trip`] from its batch's `replies`: the admission's (the last) says whether
    /// the text was stored, re-issued or lost.
    fn put_end(&self, trip: Trip<'_>, replies: io::Result<Vec<Value>>) -> io::Result<Put> {
        let mut replies = replies?;
        let admitted = replies.pop().unwrap_or(Value::Nil);
        check(replies)?;
        let Trip {
            id,
            owner,
            origin,
            label,
            text,
            ckey,
            ..
        } = trip;
        let evicted = match admitted {
            Value::Int(n) => n,
            Value::Error(e) => return Err(io::Error::other(format!("store: {e}"))),
            again => match again.text() {
                Some(id) => return Ok(self.stored(id, owner, origin, &label, text, &ckey)),
                None => -1,
            },
        };
        if evicted < 0 {
            return Err(io::Error::other(
                "the store lost the text while it was being stored",
            ));
        }
        self.evictions.fetch_add(evicted as u64, Ordering::Relaxed);
        Ok(self.stored(id, owner, origin, &label, text, &ckey))
    }

    /// `id` stored (or re-issued) for `owner`: a near copy of the text when it is in memory.
    fn stored(
        &self,
        id: String,
        owner: &str,
        origin: &str,
        label: &str,
        text: Option<ForNear<'_>>,
        ckey: &str,
    ) -> Put {
        if let Some(n) = text {
            let out = super::near::Output {
                origin,
                label,
                text: n.text,
                hash: n.hash,
            };
            self.near.insert(&id, owner, &out, n.starts, ckey);
        }
        Put::Stored(id)
    }

    /// Records that `id` was refused as too large (so any replica can say why it is missing).
    pub fn refused_too_large(&self, id: &str) {
        let _ = self.pool.one(
            Cmd::new("SET")
                .arg(key("g", id))
                .arg("too_large")
                .arg("PX")
                .num(self.ttl_ms()),
        );
    }

    /// The entry for `id` (origin, label, text), refreshing its recency; or why it is missing.
    pub fn get(&self, id: &str) -> Result<(String, String, SharedText), SharedMiss> {
        self.get_at(id, None)
    }

    /// [`Shared::get`] for a caller about to read `page` (1-based lines; the last may be past
    /// the text): an entry this process does not know comes with those lines in the same round
    /// trip.
    pub fn get_at(
        &self,
        id: &str,
        page: Option<std::ops::RangeInclusive<usize>>,
    ) -> Result<(String, String, SharedText), SharedMiss> {
        let first = page.as_ref().map(|p| *p.start());
        match self.get_begin(id, page)? {
            Fetch::Done(found) => Ok(found),
            Fetch::Trip(cmds) => self.get_end(id, first, self.pool.run(&cmds)),
        }
    }

    /// [`Shared::get_at`] for async callers: its round trip is awaited (`Pool::run_async`).
    pub async fn get_at_async(
        &self,
        id: &str,
        page: Option<std::ops::RangeInclusive<usize>>,
    ) -> Result<(String, String, SharedText), SharedMiss> {
        let first = page.as_ref().map(|p| *p.start());
        match self.get_begin(id, page)? {
            Fetch::Done(found) => Ok(found),
            Fetch::Trip(cmds) => self.get_end(id, first, self.pool.run_async(&cmds).await),
        }
    }

    /// The entry from this process's near copy or what it knows of `id`, or the commands that
    /// fetch it (and the lines of `page`).
    fn get_begin(
        &self,
        id: &str,
        page: Option<std::ops::RangeInclusive<usize>>,
    ) -> Result<Fetch, SharedMiss> {
        if !id.starts_with("prn_") || id.len() > 80 {
            return Err(SharedMiss::Absent);
        }
        if let Some(c) = self.near.get(id) {
            let mut t = self.text(id, c.text.len() as u64, c.line_starts.len());
            let (origin, label) = (c.origin.clone(), c.label.clone());
            t.local = Some(c);
            return Ok(Fetch::Done((origin, label, t)));
        }
        if let Some((origin, label, bytes, lines)) = self.known.get(id) {
            return Ok(Fetch::Done((origin, label, self.text(id, bytes, lines))));
        }
        // The entry's recency: the page's script refreshes it, else a ZADD of its own.
        let second = match page {
            Some(lines) => page_cmd(id, lines),
            None => Cmd::new("ZADD")
                .arg(format!("{PREFIX}lru"))
                .arg("XX")
                .num(now_ms())
                .arg(id),
        };
        Ok(Fetch::Trip(vec![fields_cmd(id), second]))
    }

    /// The entry `id` from the replies to [`Shared::get_begin`]'s commands.
    fn get_end(
        &self,
        id: &str,
        first: Option<usize>,
        replies: io::Result<Vec<Value>>,
    ) -> Result<(String, String, SharedText), SharedMiss> {
        let mut r = replies.map_err(|_| SharedMiss::Unavailable)?.into_iter();
        let entry = r.next();
        let page = first.zip(r.next());
        match entry {
            Some(Value::Array(f)) if f.len() == 4 && f[0] != Value::Nil => {
                let mut f = f.into_iter();
                let origin = f.next().and_then(Value::text).unwrap_or_default();
                let label = f.next().and_then(Value::text).unwrap_or_default();
                let bytes = f.next().and_then(|v| v.int()).unwrap_or(0).max(0) as u64;
                let lines = f.next().and_then(|v| v.int()).unwrap_or(0).max(0) as usize;
                self.known
                    .remember(id, (origin.clone(), label.clone(), bytes, lines));
                let t = self.text(id, bytes, lines);
                *t.prefetched.locked() = page;
                Ok((origin, label, t))
            }
            Some(Value::Array(_)) => Err(self.why_missing(id)),
            _ => Err(SharedMiss::Unavailable),
        }
    }

    /// The text of entry `id` of `bytes` and `lines`, read from the server.
    fn text(&self, id: &str, bytes: u64, lines: usize) -> SharedText {
        SharedText {
            pool: self.pool.clone(),
            known: self.known.clone(),
            id: id.to_string(),
            bytes,
            lines,
            local: None,
            prefetched: Mutex::new(None),
        }
    }

    fn why_missing(&self, id: &str) -> SharedMiss {
        why_missing(&self.pool, &self.known, id)
    }

    /// Live entries issued to `owner`, most recent first.
    pub fn list(&self, owner: &str) -> Vec<(String, String, String, SharedText)> {
        if listed_owner(owner).is_empty() {
            return Vec::new();
        }
        let Ok(ids) = self.pool.one(
            Cmd::new("ZREVRANGE")
                .arg(key("o", owner))
                .num(0)
                .num(LIST_MAX - 1),
        ) else {
            return Vec::new();
        };
        let Value::Array(ids) = ids else {
            return Vec::new();
        };
        let ids: Vec<String> = ids.into_iter().filter_map(Value::text).collect();
        let cmds: Vec<Cmd> = ids.iter().map(|id| fields_cmd(id)).collect();
        let Ok(rows) = self.pool.run(&cmds) else {
            return Vec::new();
        };
        ids.into_iter()
            .zip(rows)
            .filter_map(|(id, row)| {
                let Value::Array(f) = row else { return None };
                if f.len() != 4 || f[0] == Value::Nil {
                    return None;
                }
                let mut f = f.into_iter();
                let origin = f.next()?.text()?;
                let label = f.next()?.text().unwrap_or_default();
                let bytes = f.next()?.int()?.max(0) as u64;
                let lines = f.next()?.int()?.max(0) as usize;
                let text = self.text(&id, bytes, lines);
                Some((id, origin, label, text))
            })
            .collect()
    }

    /// Attaches `data` to the live entry `id` (a tool's own index of it, such as `grep`'s), for
    /// any replica to read with [`Shared::attachment`]; nothing if the entry is gone.
    pub fn attach(&self, id: &str, data: &[u8]) -> io::Result<()> {
        self.pool.one(set_field_cmd(id, "a", data))?;
        Ok(())
    }

    /// What [`Shared::attach`] attached to `id`, if the entry and its attachment are there.
    pub fn attachment(&self, id: &str) -> Option<Vec<u8>> {
        self.pool
            .one(Cmd::new("HGET").arg(key("e", id)).arg("a"))
            .ok()?
            .bytes()
    }

    /// Entries and bytes the server holds for the whole fleet; `None` when it cannot be reached.
    pub fn stats(&self) -> Option<(usize, usize)> {
        let r = self
            .pool
            .run(&[
                Cmd::new("ZCARD").arg(format!("{PREFIX}lru")),
                Cmd::new("GET").arg(format!("{PREFIX}bytes")),
            ])
            .ok()?;
        let n = r.first()?.int()?.max(0) as usize;
        let b = r.get(1)?.int().unwrap_or(0).max(0) as usize;
        Some((n, b))
    }
}

/// Asks the server at `target` who it is (`doctor`): `PING`, then `INFO server`'s engine and
/// version (`valkey 8.0.1`, `redis 7.0.15`); an error says why it cannot be used.
pub fn probe(target: &Target) -> io::Result<String> {
    let pool = Pool::new(target.clone())?;
    let r = pool.run(&[Cmd::new("PING"), Cmd::new("INFO").arg("server")])?;
    check(r.clone())?;
    let info = r.get(1).cloned().and_then(Value::text).unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    Ok(match (field("valkey_version:"), field("redis_version:")) {
        (Some(v), _) => format!("valkey {v}"),
        (None, Some(v)) => format!("redis {v}"),
        (None, None) => "a server that answers PING".to_string(),
    })
}

/// The first command error of a pipeline, as an `Err`.
fn check(replies: Vec<Value>) -> io::Result<()> {
    match replies.into_iter().find_map(|v| match v {
        Value::Error(e) => Some(e),
        _ => None,
    }) {
        Some(e) => Err(io::Error::other(format!("store: {e}"))),
        None => Ok(()),
    }
}
