//! What this process knows of the shared store without asking it: the entries it has seen
//! (origin, label, bytes and lines, which never change for an id) and the server's epoch, and
//! from those why an id is missing. Owns [`Known`] and the reading and recording of the epoch;
//! must never be taken for the truth of what is live (a page of a known id still learns from its
//! own read whether the text is gone), never hold more than [`KNOWN_MAX`] entries, and never
//! call an id lost without having seen the epoch change within its TTL.

use super::{PREFIX, SharedMiss, key, now_ms};
use crate::store::resp::{Cmd, Pool, Value};
use crate::sync::Unpoisoned;
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What this process knows of live entries: origin, label, bytes and lines, which never change
/// for an id. Lets a page of a known id skip the entry lookup (the page's own read finds out
/// if the text is gone). Bounded: cleared when full.
/// Also what this process saw of the server's epoch, so that a page finding its text gone can
/// say why as a lookup would.
#[derive(Debug)]
pub struct Known {
    /// Per id: origin, label, bytes and lines.
    entries: Mutex<std::collections::HashMap<String, (String, String, u64, usize)>>,
    /// The server's `epoch` as this process last saw it, and when it saw it change.
    epoch: Mutex<(Option<Vec<u8>>, Option<Instant>)>,
    /// The entries' TTL: a loss seen within it may explain a missing id.
    ttl: Duration,
}

/// Entries [`Known`] remembers at most.
const KNOWN_MAX: usize = 4096;

impl Known {
    pub(super) fn new(ttl: Duration) -> Known {
        Known {
            entries: Mutex::default(),
            epoch: Mutex::new((None, None)),
            ttl,
        }
    }

    pub(super) fn get(&self, id: &str) -> Option<(String, String, u64, usize)> {
        self.entries.locked().get(id).cloned()
    }

    pub(super) fn remember(&self, id: &str, what: (String, String, u64, usize)) {
        let mut m = self.entries.locked();
        if m.len() >= KNOWN_MAX {
            m.clear();
        }
        m.insert(id.to_string(), what);
    }

    pub(super) fn forget(&self, id: &str) {
        self.entries.locked().remove(id);
    }
}

/// Reads the server's epoch (creating it if absent) and says whether it differs from the one
/// `known` saw before (the server lost its data since). Remembers when it did.
pub(super) fn epoch_changed(pool: &Pool, known: &Known) -> io::Result<bool> {
    let r = pool.run(&epoch_cmds())?;
    Ok(note_epoch(
        known,
        r.into_iter().nth(1).and_then(Value::bytes),
    ))
}

/// Two commands: create the epoch if absent (a random value), then read it.
pub(in crate::store) fn epoch_cmds() -> Vec<Cmd> {
    let mut fresh = [0u8; 16];
    // Without randomness the value is still new to every server that lost its data (the time).
    if crate::secret::fill_random(&mut fresh).is_err() {
        fresh[..8].copy_from_slice(&now_ms().to_le_bytes());
    }
    let fresh: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
    let ek = format!("{PREFIX}epoch");
    vec![
        Cmd::new("SET").arg(&ek).arg(&fresh).arg("NX"),
        Cmd::new("GET").arg(&ek),
    ]
}

/// Records the epoch just read; whether it differs from the one seen before (the server lost
/// its data since), remembering when.
pub(in crate::store) fn note_epoch(known: &Known, now: Option<Vec<u8>>) -> bool {
    let mut seen = known.epoch.locked();
    let changed = seen.0.is_some() && seen.0 != now;
    if changed {
        seen.1 = Some(Instant::now());
    }
    seen.0 = now;
    changed
}

/// Why the server has no entry `id`: its `g:ID` record, else a loss of data seen within the
/// TTL, else absent (expired or never issued).
pub(super) fn why_missing(pool: &Pool, known: &Known, id: &str) -> SharedMiss {
    let why = match pool.one(Cmd::new("GET").arg(key("g", id))) {
        Ok(v) => v.text(),
        Err(_) => return SharedMiss::Unavailable,
    };
    match why.as_deref() {
        Some("evicted") => return SharedMiss::Evicted,
        Some("too_large") => return SharedMiss::TooLarge,
        _ => {}
    }
    let Ok(changed) = epoch_changed(pool, known) else {
        return SharedMiss::Unavailable;
    };
    let lost_at = known.epoch.locked().1;
    if changed || lost_at.is_some_and(|t| t.elapsed() < known.ttl) {
        SharedMiss::Lost
    } else {
        SharedMiss::Absent
    }
}
