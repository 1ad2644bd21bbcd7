//! Near copies for the shared store: the texts this replica itself stored or re-issued, kept in
//! its memory so that the same output read again, or paged again, costs no round trip to the
//! server. A cache, never the truth: the server decides what is live.
//!
//! Owns the copies, their freshness and the refreshes they defer (an entry's recency, TTL and
//! session listing), which a background thread sends to the server once a [`TICK`] in one
//! pipeline. The same pipeline reads the server's epoch (it changes when the server loses its
//! data) and its eviction log; a copy the server may have lost is dropped there. Must never
//! serve a copy while the last successful check is older than [`STALE_AFTER`], past the copy's
//! own deadline, or for a session the server has not listed it under; must never fetch a whole
//! text from the server to fill itself (a copy is only what this process already held).

use super::resp::{Cmd, Pool, Value};
use super::shared::{Known, PREFIX, epoch_cmds, note_epoch};
use crate::sync::Unpoisoned;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// How often the refreshes are sent and the server's epoch and eviction log are read.
pub const TICK: Duration = Duration::from_millis(50);
/// A copy is served only while the last successful check was sent within this long: an
/// eviction, expiry or loss of data elsewhere reaches this replica within it.
pub const STALE_AFTER: Duration = Duration::from_millis(100);
/// Bytes all copies may hold together (texts and their line indexes).
pub const NEAR_MAX_BYTES: usize = 32 << 20;
/// Largest text kept as a copy.
pub const COPY_MAX: usize = 4 << 20;
/// A copy re-issued must have at least this long left before its deadline, so the deferred
/// TTL refresh reaches the server before the entry could expire there.
const MARGIN: Duration = Duration::from_secs(1);
/// Evicted ids the server keeps in its log (`evlog`) at least (it trims the log to this many
/// once it holds twice as many); a replica that missed more drops every copy.
pub const EVLOG_MAX: i64 = 256;

/// A text this replica holds, as the server has it.
#[derive(Debug)]
pub struct Copy {
    /// What produced it.
    pub origin: String,
    /// Its label.
    pub label: String,
    /// The text, byte-exact.
    pub text: String,
    /// Byte offset of each line's start.
    pub line_starts: Vec<usize>,
}

/// An output a put hands to the copies.
pub struct Output<'a> {
    /// What produced it.
    pub origin: &'a str,
    /// Its label.
    pub label: &'a str,
    /// Its text.
    pub text: &'a str,
    /// Hash of the three (the `by_content` key).
    pub hash: u64,
}

/// A copy with what its freshness needs.
struct Slot {
    /// The copy itself.
    copy: Arc<Copy>,
    /// The server's content key of the text (`c:HASH`), refreshed with the entry.
    ckey: String,
    /// Keyed hash of origin, label and text (the `by_content` key).
    hash: u64,
    /// Until when the server keeps the entry, as far as this replica knows (its own refreshes).
    deadline: Instant,
    /// Sessions the server lists the id under (a re-issue for another goes to the server).
    owners: Vec<String>,
}

/// A deferred refresh of one id.
enum Touch {
    /// Paged: its recency.
    Used,
    /// Re-issued: recency, TTL (entry, text, index, content key) and the session's listing.
    Reissued {
        /// The content key to refresh.
        ckey: String,
        /// The session the id was re-issued to, whose listing gets it.
        owner: String,
    },
}

#[derive(Default)]
struct State {
    /// Copies by id.
    slots: HashMap<String, Slot>,
    /// Ids by `Slot::hash`, to re-issue an identical output's id without a round trip.
    by_content: HashMap<u64, String>,
    /// Ids in the order they were copied, to drop the oldest when over [`NEAR_MAX_BYTES`].
    order: VecDeque<String>,
    /// Bytes the copies hold.
    bytes: usize,
    /// Refreshes owed to the server, sent with the next round trip.
    touches: HashMap<String, Touch>,
    /// When the last successful check was sent.
    checked: Option<Instant>,
    /// The eviction count last read from the server.
    evseq: Option<i64>,
}

impl State {
    fn fresh(&self) -> bool {
        self.checked.is_some_and(|t| t.elapsed() < STALE_AFTER)
    }

    fn drop_id(&mut self, id: &str) {
        if let Some(s) = self.slots.remove(id) {
            self.bytes -= s.copy.held();
            if self.by_content.get(&s.hash).is_some_and(|i| i == id) {
                self.by_content.remove(&s.hash);
            }
        }
        self.touches.remove(id);
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.by_content.clear();
        self.order.clear();
        self.bytes = 0;
        self.touches.clear();
    }
}

/// This replica's copies of shared texts.
pub struct Near {
    /// The copies and their bookkeeping, behind one lock.
    state: Mutex<State>,
    /// Hashes a copy's origin, label and text to find it again (never sent anywhere). Unkeyed
    /// and fast: a hit is compared byte for byte before it is used, so a collision only misses.
    hasher: rustc_hash::FxBuildHasher,
    /// The store's TTL: a refresh keeps an entry this long.
    ttl: Duration,
    /// Calls answered from a copy (a page, or a re-issue), for `/metrics`.
    pub hits: AtomicU64,
    /// The thread that checks the copies: woken when a first copy waits for its first check,
    /// so that re-reads right after a start (or after every copy left) need not wait a tick.
    ticker: Mutex<Option<std::thread::Thread>>,
}

impl Copy {
    /// Bytes of memory it holds (text and line index).
    fn held(&self) -> usize {
        self.text.len() + self.line_starts.len() * std::mem::size_of::<usize>()
    }
}

impl Near {
    /// Copies for entries of `ttl`, refreshed through `pool` by a background thread that ends
    /// with the last reference to them. Reads the server's eviction count (one round trip).
    pub fn start(pool: Arc<Pool>, known: Arc<Known>, ttl: Duration) -> Arc<Near> {
        // The eviction count now: an eviction after it is in the log the first check reads
        // (unknown, the first check drops every copy).
        let evseq = pool
            .one(Cmd::new("GET").arg(format!("{PREFIX}evseq")))
            .ok()
            .map(|v| v.int().unwrap_or(0));
        let near = Arc::new(Near {
            state: Mutex::new(State {
                evseq,
                ..State::default()
            }),
            hasher: rustc_hash::FxBuildHasher,
            ttl,
            hits: AtomicU64::new(0),
            ticker: Mutex::new(None),
        });
        let weak = Arc::downgrade(&near);
        let spawned = std::thread::Builder::new()
            .name("store-near".into())
            .spawn(move || run(weak, &pool, &known));
        match spawned {
            Ok(handle) => {
                *near.ticker.locked() = Some(handle.thread().clone());
            }
            // Without the thread no check ever succeeds: no copy is ever served.
            Err(e) => tracing::warn!(error = %e, "store.near_thread_failed"),
        }
        near
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.locked()
    }

    /// `text` from `origin` and `label` as [`Near::reissue`] and [`Near::insert`] take it: hashed
    /// once per put.
    pub fn output<'a>(&self, origin: &'a str, label: &'a str, text: &'a str) -> Output<'a> {
        Output {
            origin,
            label,
            text,
            hash: self.hasher.hash_one((origin, label, text)),
        }
    }

    /// The id of the same output if this replica holds it fresh and the server lists it for
    /// `owner` already; its refresh is deferred to the next tick.
    pub fn reissue(&self, owner: &str, out: &Output<'_>) -> Option<String> {
        let (h, origin, label, text) = (out.hash, out.origin, out.label, out.text);
        let mut st = self.lock();
        if !st.fresh() {
            return None;
        }
        let id = st.by_content.get(&h)?.clone();
        let slot = st.slots.get_mut(&id)?;
        let c = &slot.copy;
        if c.origin != origin || c.label != label || c.text != text {
            return None;
        }
        let now = Instant::now();
        if slot.deadline < now + MARGIN
            || (!owner.is_empty() && !slot.owners.iter().any(|o| o == owner))
        {
            return None;
        }
        slot.deadline = now + self.ttl;
        let touch = Touch::Reissued {
            ckey: slot.ckey.clone(),
            owner: owner.to_string(),
        };
        st.touches.insert(id.clone(), touch);
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(id)
    }

    /// The copy of `id` if this replica holds it fresh; its recency is refreshed at the next tick.
    pub fn get(&self, id: &str) -> Option<Arc<Copy>> {
        let mut st = self.lock();
        if !st.fresh() {
            return None;
        }
        let slot = st.slots.get(id)?;
        if slot.deadline <= Instant::now() {
            return None;
        }
        let copy = slot.copy.clone();
        st.touches.entry(id.to_string()).or_insert(Touch::Used);
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(copy)
    }

    /// Keeps a copy of `out`, which the server just stored or re-issued as `id` (content key
    /// `ckey`) and listed for `owner` (empty: no listing); `line_starts` are its text's, if the
    /// caller has them.
    pub fn insert(
        &self,
        id: &str,
        owner: &str,
        out: &Output<'_>,
        line_starts: Option<Vec<usize>>,
        ckey: &str,
    ) {
        let (hash, origin, label, text) = (out.hash, out.origin, out.label, out.text);
        if text.len() > COPY_MAX {
            return;
        }
        let deadline = Instant::now() + self.ttl;
        let refreshed = |st: &mut State| {
            let Some(slot) = st.slots.get_mut(id) else {
                return false;
            };
            slot.deadline = deadline;
            if !owner.is_empty() && !slot.owners.iter().any(|o| o == owner) {
                slot.owners.push(owner.to_string());
            }
            true
        };
        if refreshed(&mut self.lock()) {
            return;
        }
        // The copy and its line index are made outside the lock: pages and re-issues of other
        // copies do not wait for them.
        let copy = Arc::new(Copy {
            origin: origin.to_string(),
            label: label.to_string(),
            text: text.to_string(),
            line_starts: line_starts.unwrap_or_else(|| super::line_starts(text)),
        });
        let mut st = self.lock();
        if refreshed(&mut st) {
            return;
        }
        while st.bytes + copy.held() > NEAR_MAX_BYTES {
            let Some(old) = st.order.pop_front() else {
                break;
            };
            st.drop_id(&old);
        }
        st.bytes += copy.held();
        st.order.push_back(id.to_string());
        st.by_content.insert(hash, id.to_string());
        let owners = if owner.is_empty() {
            Vec::new()
        } else {
            vec![owner.to_string()]
        };
        st.slots.insert(
            id.to_string(),
            Slot {
                copy,
                ckey: ckey.to_string(),
                hash,
                deadline,
                owners,
            },
        );
        let unchecked = st.checked.is_none();
        drop(st);
        if unchecked && let Some(t) = &*self.ticker.locked() {
            t.unpark();
        }
    }

    /// Forgets the copy of `id` (the server said it is gone).
    pub fn forget(&self, id: &str) {
        self.lock().drop_id(id);
    }

    /// Copies held, and the bytes they hold.
    pub fn size(&self) -> (usize, usize) {
        let st = self.lock();
        (st.slots.len(), st.bytes)
    }

    /// One check: sends the deferred refreshes, reads the epoch and the eviction count, and
    /// drops every copy the server may have lost. Nothing to do without copies.
    fn tick(&self, pool: &Pool, known: &Known) {
        let sent = Instant::now();
        let (touches, evseq) = {
            let mut st = self.lock();
            if st.slots.is_empty() {
                st.touches.clear();
                st.checked = None;
                return;
            }
            (std::mem::take(&mut st.touches), st.evseq)
        };
        let (now_ms, ttl) = (super::shared::now_ms(), self.ttl.as_millis().max(1) as u64);
        let mut cmds = epoch_cmds();
        cmds.push(Cmd::new("GET").arg(format!("{PREFIX}evseq")));
        let mut touch = Cmd::script(TOUCH)
            .num(0)
            .arg(PREFIX)
            .num(now_ms)
            .num(ttl)
            .num(super::shared::GRACE_MS)
            .num(super::shared::LIST_MAX);
        for (id, t) in &touches {
            touch = match t {
                Touch::Used => touch.arg(id).arg("").arg(""),
                Touch::Reissued { ckey, owner } => touch.arg(id).arg(ckey).arg(owner),
            };
        }
        if !touches.is_empty() {
            cmds.push(touch);
        }
        let Ok(r) = pool.run(&cmds) else {
            let mut st = self.lock();
            st.clear();
            st.checked = None;
            return;
        };
        let mut r = r.into_iter();
        let _set = r.next();
        let epoch = r.next().and_then(Value::bytes);
        let seq = r.next().and_then(|v| v.int()).unwrap_or(0);
        let gone = r.next();
        let lost = note_epoch(known, epoch);
        // Ids evicted since the last check, when the log still holds them all.
        let evicted: Option<Vec<String>> = match evseq {
            Some(was) if was == seq => Some(Vec::new()),
            Some(was) if seq > was && seq - was <= EVLOG_MAX => pool
                .one(
                    Cmd::new("LRANGE")
                        .arg(format!("{PREFIX}evlog"))
                        .num(0)
                        .num((seq - was - 1) as u64),
                )
                .ok()
                .and_then(|v| match v {
                    Value::Array(ids) => Some(ids.into_iter().filter_map(Value::text).collect()),
                    _ => None,
                }),
            _ => None,
        };
        let mut st = self.lock();
        st.evseq = Some(seq);
        match (lost, evicted) {
            (false, Some(ids)) => {
                for id in ids {
                    st.drop_id(&id);
                }
                if let Some(Value::Array(ids)) = gone {
                    for id in ids.into_iter().filter_map(Value::text) {
                        st.drop_id(&id);
                    }
                } else if !touches.is_empty() {
                    // The refreshes did not run: the copies they were for are not known live.
                    for id in touches.keys() {
                        st.drop_id(id);
                    }
                }
                st.checked = Some(sent);
            }
            _ => {
                st.clear();
                st.checked = Some(sent);
            }
        }
        let order: VecDeque<String> = std::mem::take(&mut st.order)
            .into_iter()
            .filter(|id| st.slots.contains_key(id))
            .collect();
        st.order = order;
    }
}

/// The background thread: a check every [`TICK`] while the copies live.
fn run(near: Weak<Near>, pool: &Pool, known: &Known) {
    loop {
        // Woken early by the first copy after none (`Near::insert`); a spurious wake-up only
        // checks early.
        std::thread::park_timeout(TICK);
        let Some(near) = near.upgrade() else {
            return;
        };
        near.tick(pool, known);
    }
}

/// Applies deferred refreshes: ARGV = prefix, now (ms), ttl (ms), grace (ms), list max, then per
/// id: id, content key (empty: only recency), owner. Returns the ids whose entry is gone.
const TOUCH: &str = concat!(
    lua_prelude!(),
    r#"
local p, now, ttl, grace, listmax = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local gone = {}
for i = 6, #ARGV, 3 do
  local id, ckey, owner = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local e = p .. 'e:' .. id
  if redis.call('EXISTS', e) == 0 then
    gone[#gone + 1] = id
  else
    redis.call('ZADD', p .. 'lru', 'XX', now, id)
    if ckey ~= '' then
      refresh(p, id, ttl, grace)
      if redis.call('GET', ckey) == id then redis.call('PEXPIRE', ckey, ttl) end
      list_for(p, owner, id, now, ttl, listmax)
    end
  end
end
return gone
"#
);
