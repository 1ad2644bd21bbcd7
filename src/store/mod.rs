//! The recovery / artifact store: raw text kept under a `prune_id` so that anything pruned or cut
//! from a response can be returned exactly (`recover_text`, `resources/read`). Bounded in bytes and
//! entries, expires by TTL, evicts the least recently used entry first, and remembers why an id is
//! gone so the error can say so. Never persisted, never sent anywhere.
//!
//! Small texts live in memory. Texts over [`SPILL_THRESHOLD`] (written through a [`SpillWriter`])
//! live in an unlinked temp file (`disk`), and a huge file's `read` artifact is the file itself
//! (a referenced entry, valid while the file's identity — device, inode, length, mtime — holds).
//! Either is read back by line through a sparse index, so neither the store nor a recovery ever
//! holds a huge text in memory. Spill bytes count in the byte cap; a referenced file costs only its
//! index. Must never read a whole disk entry into memory except through [`Entry::text_up_to`].
//!
//! Memory is bounded as a whole, not only per text: in-memory texts (with their line index) take
//! at most [`MEMORY_MAX`] together; a text that would go past it is spilled to an unlinked temp
//! file like a large one.
//!
//! With `--store redis://…` ([`target`]) every entry lives in a Valkey/Redis server instead
//! ([`shared`]), so that replicas share their ids; the API is the same, and an entry read from
//! there is fetched by range as it is read. An output the server cannot take is refused like an
//! oversized one ([`Store::refused`], [`Store::not_stored`]).
//!
//! Here: [`Store`] and its bookkeeping (slots, LRU order, TTL, caps, ids and their tags), getting
//! and listing entries, and the counters. The rest, one file each: `entry.rs` one stored text and
//! its reading by line ([`Entry`], [`line_starts`]), `put.rs` putting an output (re-issue of the
//! same one, spilling past the memory bound, insertion with eviction), `missing.rs` why an id is
//! gone ([`Missing`]), `disk.rs` spilled and referenced texts, `target.rs` where the store lives,
//! `shared/` the Valkey/Redis backend, with `resp.rs` its client, `near.rs` its near copies and
//! `lua.rs` the Lua its scripts share.

#[macro_use]
mod lua;
mod disk;
mod entry;
mod missing;
mod near;
mod put;
mod resp;
pub mod shared;
pub mod target;

use crate::sync::Unpoisoned;
pub use disk::{
    DiskText, FileKey, INDEX_STEP, LineIndex, LossyDecoder, ReadError, SPILL_THRESHOLD,
    SpillWriter, Written, anonymous_file, find_newline,
};
use entry::{Body, Check};
pub use entry::{Entry, line_starts};
pub use missing::Missing;
use missing::remember_gone;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes all in-memory texts of a store may hold together (line indexes included): past it,
/// a new text is spilled to an unlinked temp file.
pub const MEMORY_MAX: usize = 64 * 1024 * 1024;

/// A live entry with its bookkeeping.
struct Slot {
    /// The entry.
    entry: Arc<Entry>,
    /// Logical clock of the last put or get, for LRU eviction.
    last_used: u64,
    /// When the id was last issued to a client: the TTL runs from here.
    issued: Instant,
    /// Hash of (origin, label, text), the key of `Inner::by_content`.
    content: u64,
    /// Sessions the id was issued to: `resources/list` shows an entry to these only.
    owners: Vec<String>,
}

#[derive(Default)]
struct Inner {
    /// Live entries by id.
    slots: HashMap<String, Slot>,
    /// Live ids by content hash, so storing the same output again (paging a big file, a repeated
    /// grep) re-issues its id instead of filling the store with copies.
    by_content: HashMap<u64, String>,
    /// Bytes counted against the cap ([`Stats::bytes`]).
    bytes: usize,
    /// Bytes held in memory by live in-memory texts ([`Entry::memory`]).
    memory: usize,
    /// Ids that left the store and why (bounded; oldest forgotten first).
    gone: HashMap<String, Missing>,
    /// The ids in `gone`, oldest first: the next to forget.
    gone_order: std::collections::VecDeque<String>,
    /// Live ids by their last use (`Slot::last_used`, unique ticks): the least recently used is
    /// the first, so an eviction does not scan every slot.
    lru: std::collections::BTreeMap<u64, String>,
    /// No entry expires before this (a lower bound: re-issues only push expiries later); `None`
    /// when none can. Until then a call does not scan the slots for expired ones.
    earliest: Option<Instant>,
}

impl Inner {
    /// Marks `id` used at `tick`.
    fn touch(&mut self, id: &str, tick: u64) {
        if let Some(slot) = self.slots.get_mut(id) {
            self.lru.remove(&slot.last_used);
            slot.last_used = tick;
            self.lru.insert(tick, id.to_string());
        }
    }
}

/// Store counters for `health`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Live entries.
    pub entries: usize,
    /// Bytes counted against the cap: texts in memory or spilled, referenced files' indexes.
    pub bytes: usize,
    /// Bytes held in memory by texts kept there (at most [`MEMORY_MAX`], give or take the texts
    /// being stored at the same moment).
    pub memory: usize,
}

/// The bounded store.
pub struct Store {
    /// Entries and their bookkeeping, behind one lock.
    inner: Mutex<Inner>,
    /// Byte cap: the least recently used entries are evicted past it.
    max_bytes: usize,
    /// Entry cap, enforced the same way.
    max_entries: usize,
    /// Bytes in-memory texts may hold together before new ones are spilled.
    max_memory: usize,
    /// How long an id lives after it was last issued.
    ttl: Duration,
    /// Logical clock of puts and gets, for LRU order.
    clock: AtomicU64,
    /// Counter the next id is made from.
    next_id: AtomicU64,
    /// Entries evicted to stay within the caps.
    evicted: AtomicU64,
    /// Outputs not stored (too large, or the shared store unreachable).
    refused: AtomicU64,
    /// Secret key of this process's id tags (SipHash, seeded from the OS's randomness): an id
    /// cannot be guessed from another, and one from another process or run does not verify.
    tag_key: std::hash::RandomState,
    /// The shared store, when entries live in Valkey/Redis (`inner` then only remembers the ids
    /// this process could not store, and why).
    shared: Option<shared::Shared>,
}

/// Sessions remembered per entry for `resources/list` (the oldest is forgotten first).
const MAX_OWNERS: usize = 16;
/// Digits of an id's tag: a 64-bit keyed hash in decimal, zero-padded. The model copies the id
/// from every pruned result it reads, and o200k counts three digits a token: the id costs 12
/// tokens, where 16 base64url characters (96 bits) cost 20. Guessing 64 bits online is hopeless.
const TAG_DIGITS: usize = 20;

impl Store {
    /// An empty store with the given caps.
    pub fn new(max_bytes: usize, max_entries: usize, ttl: Duration) -> Store {
        Store {
            inner: Mutex::new(Inner::default()),
            max_bytes,
            max_entries,
            max_memory: MEMORY_MAX,
            ttl,
            clock: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            evicted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            tag_key: std::hash::RandomState::new(),
            shared: None,
        }
    }

    /// A store whose entries live in the Valkey/Redis server `target`, shared with every
    /// process using it, under the same caps and TTL (enforced for all of them together).
    pub fn shared(
        target: target::Target,
        max_bytes: usize,
        max_entries: usize,
        ttl: Duration,
    ) -> std::io::Result<Store> {
        let mut s = Store::new(max_bytes, max_entries, ttl);
        s.shared = Some(shared::Shared::new(target, max_bytes, max_entries, ttl)?);
        Ok(s)
    }

    /// The shared store's server (no credentials), when there is one.
    pub fn shared_server(&self) -> Option<String> {
        self.shared.as_ref().map(shared::Shared::describe)
    }

    /// The paging-cursor key shared by every process on the shared store (`mine` if it is the
    /// first); `None` for a store in memory or a shared store that cannot be reached.
    pub fn shared_cursor_key(&self, mine: [u8; 32]) -> Option<[u8; 32]> {
        let s = self.shared.as_ref()?;
        match s.cursor_key(mine) {
            Ok(k) => Some(k),
            Err(e) => {
                tracing::warn!(server = %s.describe(), error = %e, "store.cursor_key_unavailable");
                None
            }
        }
    }

    /// Outputs this process could not store (too large, or the shared store unreachable).
    pub fn refused_total(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Attaches `data` to entry `id` in a shared store, where any replica reads it back with
    /// [`Store::attachment`] (a tool's index of its output). Nothing for the in-memory store,
    /// whose process keeps such an index itself. Best effort: a failure is logged.
    pub fn attach(&self, id: &str, data: &[u8]) {
        if let Some(s) = &self.shared
            && let Err(e) = s.attach(id, data)
        {
            tracing::warn!(prune_id = %id, error = %e, "store.attach_failed");
        }
    }

    /// What was attached to `id` in a shared store ([`Store::attach`]); `None` without one.
    pub fn attachment(&self, id: &str) -> Option<Vec<u8>> {
        self.shared.as_ref()?.attachment(id)
    }

    /// Calls this replica answered from its near copy of a shared text (no round trip), and
    /// the bytes those copies hold; `None` without a shared store.
    pub fn near(&self) -> Option<(u64, usize)> {
        let s = self.shared.as_ref()?;
        Some((s.near.hits.load(Ordering::Relaxed), s.near.size().1))
    }

    /// Entries this process evicted to stay within the caps.
    pub fn evictions(&self) -> u64 {
        match &self.shared {
            Some(s) => s.evictions.load(Ordering::Relaxed),
            None => self.evicted.load(Ordering::Relaxed),
        }
    }

    /// Records that a result showed the lines of `id` flagged in `keep`, replacing what an
    /// earlier result of the same text recorded ([`Entry::set_shown`]); nothing when `id` is
    /// gone.
    pub async fn record_shown(&self, id: &str, keep: &[bool]) {
        if let Ok(entry) = self.get_at_async(id, None).await {
            entry.set_shown(keep).await;
        }
    }

    /// An entry read from the shared store.
    fn shared_entry(
        id: &str,
        origin: String,
        label: String,
        text: shared::SharedText,
    ) -> Arc<Entry> {
        Arc::new(Entry {
            id: id.to_string(),
            origin,
            label,
            body: Body::Shared(text),
            check: Check::Text,
            shown: Mutex::new(Vec::new()),
        })
    }

    /// Caps and TTL, for `health`.
    pub fn limits(&self) -> (usize, usize, Duration) {
        (self.max_bytes, self.max_entries, self.ttl)
    }

    /// A store whose in-memory texts may hold `max_memory` bytes together (tests).
    pub fn with_memory_max(mut self, max_memory: usize) -> Store {
        self.max_memory = max_memory;
        self
    }

    /// The entry for `id`, refreshing its recency; or why it is missing.
    pub fn get(&self, id: &str) -> Result<Arc<Entry>, Missing> {
        self.get_at(id, None)
    }

    /// [`Store::get`] for a caller about to read the lines of `page` (1-based, the last may be
    /// past the text): from a shared store, an entry this process does not know comes with
    /// them in one round trip.
    pub fn get_at(
        &self,
        id: &str,
        page: Option<std::ops::RangeInclusive<usize>>,
    ) -> Result<Arc<Entry>, Missing> {
        if let Some(s) = &self.shared {
            self.not_gone(id)?;
            return self.shared_found(id, s.get_at(id, page));
        }
        self.get_memory(id)
    }

    /// [`Store::get_at`] for async callers: a shared store's round trip is awaited.
    pub async fn get_at_async(
        &self,
        id: &str,
        page: Option<std::ops::RangeInclusive<usize>>,
    ) -> Result<Arc<Entry>, Missing> {
        if let Some(s) = &self.shared {
            self.not_gone(id)?;
            return self.shared_found(id, s.get_at_async(id, page).await);
        }
        self.get_memory(id)
    }

    /// Why `id` is missing if this process already knows it is.
    fn not_gone(&self, id: &str) -> Result<(), Missing> {
        match self.inner.locked().gone.get(id) {
            Some(why) => Err(*why),
            None => Ok(()),
        }
    }

    /// The entry a shared store found for `id`, or why it is missing.
    fn shared_found(
        &self,
        id: &str,
        found: Result<(String, String, shared::SharedText), shared::SharedMiss>,
    ) -> Result<Arc<Entry>, Missing> {
        match found {
            Ok((origin, label, text)) => Ok(Store::shared_entry(id, origin, label, text)),
            Err(shared::SharedMiss::Evicted) => Err(Missing::Evicted),
            Err(shared::SharedMiss::TooLarge) => Err(Missing::TooLarge),
            Err(shared::SharedMiss::Lost) => Err(Missing::Lost),
            Err(shared::SharedMiss::Unavailable) => Err(Missing::Unavailable),
            Err(shared::SharedMiss::Absent) => Err(if self.issued_here(id) {
                Missing::Gone
            } else {
                Missing::Absent
            }),
        }
    }

    /// The entry for `id` in this process's memory, refreshing its recency.
    fn get_memory(&self, id: &str) -> Result<Arc<Entry>, Missing> {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.inner.locked();
        self.expire(&mut inner);
        inner.touch(id, tick);
        match inner.slots.get(id) {
            Some(slot) => Ok(slot.entry.clone()),
            None => Err(inner.gone.get(id).copied().unwrap_or_else(|| {
                if self.issued_here(id) {
                    Missing::Gone
                } else {
                    Missing::Unknown
                }
            })),
        }
    }

    /// The id of the `n`th entry: `prn_<n>_<tag>`, the tag a keyed hash of `n` ([`TAG_DIGITS`]).
    fn new_id(&self, n: u64) -> String {
        format!("prn_{n}_{}", self.tag(n))
    }

    /// SipHash of `n` under this process's secret key, as [`TAG_DIGITS`] decimal digits.
    fn tag(&self, n: u64) -> String {
        format!("{:0width$}", self.tag_key.hash_one(n), width = TAG_DIGITS)
    }

    /// Whether this process issued `id` (its tag verifies): ids are never reused, so such an id
    /// that is not live has left the store.
    fn issued_here(&self, id: &str) -> bool {
        let Some((n, tag)) = id.strip_prefix("prn_").and_then(|r| r.split_once('_')) else {
            return false;
        };
        // Digits only: `+5` parses as a number, but no id was ever written that way.
        n.bytes().all(|b| b.is_ascii_digit())
            && n.parse::<u64>().is_ok_and(|n| {
                n >= 1
                    && n < self.next_id.load(Ordering::Relaxed)
                    && crate::secret::same_bytes(self.tag(n).as_bytes(), tag.as_bytes())
            })
    }

    /// Live entries issued to session `owner`, most recent first (for `resources/list`).
    pub fn list(&self, owner: &str) -> Vec<Arc<Entry>> {
        if let Some(s) = &self.shared {
            return s
                .list(owner)
                .into_iter()
                .map(|(id, origin, label, text)| Store::shared_entry(&id, origin, label, text))
                .collect();
        }
        let mut inner = self.inner.locked();
        self.expire(&mut inner);
        let mut slots: Vec<_> = inner
            .slots
            .values()
            .filter(|s| s.owners.iter().any(|o| o == owner))
            .map(|s| (s.last_used, s.entry.clone()))
            .collect();
        slots.sort_by_key(|s| std::cmp::Reverse(s.0));
        slots.into_iter().map(|(_, e)| e).collect()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        if let Some(s) = &self.shared {
            let (entries, bytes) = s.stats().unwrap_or_default();
            return Stats {
                entries,
                bytes,
                memory: 0,
            };
        }
        let inner = self.inner.locked();
        Stats {
            entries: inner.slots.len(),
            bytes: inner.bytes,
            memory: inner.memory,
        }
    }

    /// Removes the entries whose TTL ran out: one look at the clock while none can have
    /// ([`Inner::earliest`]), a scan of every slot only once one may have.
    fn expire(&self, inner: &mut Inner) {
        let now = Instant::now();
        if inner.earliest.is_none_or(|e| now < e) {
            return;
        }
        let expired: Vec<String> = inner
            .slots
            .iter()
            .filter(|(_, s)| now.duration_since(s.issued) >= self.ttl)
            .map(|(k, _)| k.clone())
            .collect();
        for id in expired {
            self.remove(inner, &id, Missing::Expired);
        }
        inner.earliest = inner
            .slots
            .values()
            .filter_map(|s| s.issued.checked_add(self.ttl))
            .min();
    }

    fn remove(&self, inner: &mut Inner, id: &str, why: Missing) {
        if let Some(slot) = inner.slots.remove(id) {
            inner.lru.remove(&slot.last_used);
            inner.bytes -= slot.entry.cost();
            inner.memory -= slot.entry.memory();
            if inner.by_content.get(&slot.content).is_some_and(|i| i == id) {
                inner.by_content.remove(&slot.content);
            }
            remember_gone(inner, id, why);
        }
    }

    /// Whether `id` was issued without its output being stored, too large or refused by an
    /// unreachable shared store ([`Store::not_stored`] says which; the result must say so).
    pub fn refused(&self, id: &str) -> bool {
        self.not_stored(id).is_some()
    }

    /// Why `id` was issued without its output being stored (too large, or the shared store
    /// unreachable), if it was.
    pub fn not_stored(&self, id: &str) -> Option<Missing> {
        let inner = self.inner.locked();
        inner
            .gone
            .get(id)
            .copied()
            .filter(|w| matches!(w, Missing::TooLarge | Missing::Unavailable))
    }
}

#[cfg(test)]
mod tests {
    use super::missing::GONE_MEMORY;
    use super::*;

    #[test]
    fn lru_eviction_and_reasons() {
        let s = Store::new(10, 100, Duration::from_secs(60));
        let a = s.put("o", "t", "", "aaaa".into());
        let b = s.put("o", "t", "", "bbbb".into());
        s.get(&a).unwrap();
        let c = s.put("o", "t", "", "cccc".into());
        assert_eq!(s.get(&b).unwrap_err(), Missing::Evicted);
        assert!(s.get(&a).is_ok() && s.get(&c).is_ok());
        assert_eq!(s.get("prn_nope").unwrap_err(), Missing::Unknown);
        let s = Store::new(100, 2, Duration::from_secs(60));
        let ids: Vec<_> = (0..3)
            .map(|i| s.put("o", "t", "", format!("{i}")))
            .collect();
        assert_eq!(s.get(&ids[0]).unwrap_err(), Missing::Evicted);
        assert_eq!(s.stats().entries, 2);
    }

    #[test]
    fn ids_evicted_beyond_the_remembered_ones_are_gone_not_unknown() {
        let s = Store::new(100, 1, Duration::from_secs(60));
        let first = s.put("o", "t", "", "first".into());
        for i in 0..GONE_MEMORY + 5 {
            s.put("o", "t", "", format!("{i}"));
        }
        assert_eq!(s.get(&first).unwrap_err(), Missing::Gone);
        // A forged tag, a number never given out, and another store's id are unknown.
        let (n, tag) = first.strip_prefix("prn_").unwrap().split_once('_').unwrap();
        assert!(
            tag.len() == TAG_DIGITS && tag.bytes().all(|b| b.is_ascii_digit()),
            "{tag}"
        );
        let forged = format!("prn_{n}_{}", "1".repeat(TAG_DIGITS));
        assert_eq!(s.get(&forged).unwrap_err(), Missing::Unknown);
        assert_eq!(
            s.get(&format!("prn_+{n}_{tag}")).unwrap_err(),
            Missing::Unknown,
            "a number is written in digits only"
        );
        assert_eq!(
            s.get(&format!("prn_999999999_{tag}")).unwrap_err(),
            Missing::Unknown
        );
        let other = Store::new(100, 1, Duration::from_secs(60));
        let theirs = other.put("o", "t", "", "first".into());
        assert_eq!(s.get(&theirs).unwrap_err(), Missing::Unknown);
    }

    proptest::proptest! {
        /// Whatever the sequence of stores and reads, the entries evicted are the least recently
        /// used ones (the ordered index agrees with a plain list kept alongside).
        #[test]
        fn eviction_follows_recency(ops in proptest::collection::vec((0u8..2, 0u8..6), 1..60)) {
            let s = Store::new(1 << 20, 3, Duration::from_secs(60));
            // Live ids, least recently used first, with their text.
            let mut model: Vec<(String, String)> = Vec::new();
            let mut evicted: Vec<String> = Vec::new();
            for (op, k) in ops {
                let text = format!("text {k}");
                if op == 0 {
                    let id = s.put("o", "t", "", text.clone());
                    if let Some(at) = model.iter().position(|(_, t)| *t == text) {
                        proptest::prop_assert_eq!(&model[at].0, &id);
                        let e = model.remove(at);
                        model.push(e);
                    } else {
                        model.push((id, text));
                        if model.len() > 3 {
                            evicted.push(model.remove(0).0);
                        }
                    }
                } else if let Some(at) = model.iter().position(|(_, t)| *t == text) {
                    proptest::prop_assert!(s.get(&model[at].0).is_ok());
                    let e = model.remove(at);
                    model.push(e);
                }
            }
            proptest::prop_assert_eq!(s.stats().entries, model.len());
            for id in &evicted {
                proptest::prop_assert_eq!(s.get(id).unwrap_err(), Missing::Evicted);
            }
            for (id, _) in &model {
                proptest::prop_assert!(s.get(id).is_ok());
            }
        }
    }

    #[test]
    fn ttl_runs_from_the_last_issue() {
        let s = Store::new(100, 10, Duration::from_millis(1000));
        let a = s.put("o", "t", "", "x".into());
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(s.put("o", "t", "", "x".into()), a);
        std::thread::sleep(Duration::from_millis(600));
        assert!(s.get(&a).is_ok(), "re-issued 600 ms ago, TTL 1000 ms");
    }

    #[test]
    fn ttl_expiry() {
        let s = Store::new(100, 10, Duration::from_millis(20));
        let a = s.put("o", "t", "", "x".into());
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(s.get(&a).unwrap_err(), Missing::Expired);
        assert_eq!(s.stats().bytes, 0);
    }
}
