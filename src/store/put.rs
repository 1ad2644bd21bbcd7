//! Putting an output in the store: [`Store::put`] and its kin (`put_async`, `put_written`,
//! `put_file`, `reissue_file`) give a text its id. Owns how an output already stored is
//! recognised and its id re-issued ([`content_key`], `reissue`), the memory bound (a text past it,
//! [`MEMORY_MAX`](super::MEMORY_MAX) by default, is spilled like a large one), the insertion of a
//! new entry with the eviction of the least recently used ones to make room, and the shared
//! store's put path (an id it refused is remembered with why). Must never let the store go past
//! its caps (an output larger than the byte cap is refused, its id issued all the same), never
//! re-issue an id for an output its entry does not match (the same text, spill hash or file
//! identity), and never issue an id twice.

use super::entry::{Body, Check, memory_cost};
use super::missing::remember_gone;
use super::{
    DiskText, Entry, FileKey, LineIndex, MAX_OWNERS, Missing, Slot, SpillWriter, Store, Written,
    line_starts, shared,
};
use crate::sync::Unpoisoned;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The `by_content` key of a stored output. A fast unkeyed hash (FxHash, which hashes long byte
/// strings a word at a time) rather than SipHash: a key only finds a candidate, which is compared
/// byte for byte before its id is re-issued, so a collision costs a second copy, never a wrong
/// answer; and the whole text is hashed on every store.
fn content_key(what: &impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(what)
}

impl Store {
    /// Stores `content` in the shared store and returns its id; an id that could not be stored
    /// is remembered as refused (too large, or the server unreachable).
    fn put_shared(
        &self,
        s: &shared::Shared,
        owner: &str,
        origin: &str,
        label: &str,
        content: shared::Content<'_>,
    ) -> String {
        let mut fresh = None;
        let put = s.put(owner, origin, label, content, || self.fresh_id(&mut fresh));
        self.put_shared_end(s, put, fresh)
    }

    /// [`Store::put`] for async callers: a shared store's round trip is awaited instead of
    /// holding the thread ([`shared::Shared::put_async`]).
    pub async fn put_async(&self, owner: &str, origin: &str, label: &str, text: String) -> String {
        let Some(s) = &self.shared else {
            return self.put(owner, origin, label, text);
        };
        let mut fresh = None;
        let put = s
            .put_async(owner, origin, label, &text, || self.fresh_id(&mut fresh))
            .await;
        self.put_shared_end(s, put, fresh)
    }

    /// A new id, remembered in `fresh`.
    fn fresh_id(&self, fresh: &mut Option<String>) -> String {
        let id = self.new_id(self.next_id.fetch_add(1, Ordering::Relaxed));
        *fresh = Some(id.clone());
        id
    }

    /// The id a shared store's `put` ended with; one it refused (`fresh`, or a new one if it
    /// refused before issuing any) is remembered with why.
    fn put_shared_end(
        &self,
        s: &shared::Shared,
        put: std::io::Result<shared::Put>,
        fresh: Option<String>,
    ) -> String {
        let (id, why) = match put {
            Ok(shared::Put::Stored(id)) => return id,
            Ok(shared::Put::TooLarge) => {
                let id = fresh
                    .unwrap_or_else(|| self.new_id(self.next_id.fetch_add(1, Ordering::Relaxed)));
                s.refused_too_large(&id);
                (id, Missing::TooLarge)
            }
            Err(e) => {
                tracing::warn!(server = %s.describe(), error = %e, "store.put_failed");
                let id = fresh
                    .unwrap_or_else(|| self.new_id(self.next_id.fetch_add(1, Ordering::Relaxed)));
                (id, Missing::Unavailable)
            }
        };
        self.refused.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.inner.locked();
        remember_gone(&mut inner, &id, why);
        id
    }

    /// Stores `text` and returns its id. The same text from the same origin and label gets the id
    /// it already has (recency and TTL refreshed). A text larger than the byte cap is not stored:
    /// the store never exceeds its caps. Its id is still issued and answers
    /// [`Missing::TooLarge`]; [`Store::refused`] tells the tool, which says so in its result.
    pub fn put(&self, owner: &str, origin: &str, label: &str, text: String) -> String {
        if let Some(s) = &self.shared {
            return self.put_shared(s, owner, origin, label, shared::Content::Text(&text));
        }
        let content = content_key(&(origin, label, &text));
        let same = |e: &Entry| matches!(&e.body, Body::Memory { text: t, .. } if *t == text);
        if let Some(id) = self.reissue(content, owner, origin, same) {
            return id;
        }
        let mut starts = line_starts(&text);
        starts.shrink_to_fit();
        let mut text = text;
        text.shrink_to_fit();
        let held = memory_cost(&text, &starts);
        let full = {
            let inner = self.inner.locked();
            inner.memory + held > self.max_memory
        };
        if full && !text.is_empty() {
            // Past the store's memory bound: on disk like a large text (kept in memory only if
            // no temp file can be had).
            let mut w = SpillWriter::with_threshold(0);
            if w.push_str(&text).is_ok()
                && let Ok(written @ Written::Disk(..)) = w.finish()
            {
                drop((text, starts));
                return self.put_written(owner, origin, label, written);
            }
        }
        let body = Body::Memory {
            line_starts: starts,
            text,
        };
        self.insert(content, owner, origin, label, body, Check::Text)
    }

    /// Stores what a [`SpillWriter`] wrote (in memory or spilled) and returns its id; an identical
    /// text from the same origin and label re-issues its id, as [`Store::put`] does.
    pub fn put_written(&self, owner: &str, origin: &str, label: &str, written: Written) -> String {
        match written {
            Written::Memory(text) => self.put(owner, origin, label, text),
            Written::Disk(disk, _) if self.shared.is_some() => {
                let s = self.shared.as_ref().expect("checked");
                self.put_shared(s, owner, origin, label, shared::Content::Disk(&disk))
            }
            Written::Disk(disk, hash) => {
                let check = Check::Hash(hash, disk.len());
                let content = content_key(&(origin, label, "spill", hash));
                if let Some(id) = self.reissue(content, owner, origin, |e| e.check == check) {
                    return id;
                }
                self.insert(content, owner, origin, label, Body::Disk(disk), check)
            }
        }
    }

    /// The id of the live referenced-file entry for this file identity, if any (re-issued).
    pub fn reissue_file(
        &self,
        owner: &str,
        origin: &str,
        label: &str,
        key: FileKey,
    ) -> Option<String> {
        if self.shared.is_some() {
            // The shared store holds a copy, recognised by its content when stored again.
            return None;
        }
        let content = content_key(&(origin, label, "file", key));
        self.reissue(content, owner, origin, |e| e.check == Check::File(key))
    }

    /// Stores a referenced file (the file itself is the artifact, valid while `key` holds; its
    /// text must be valid UTF-8) with the index a scan built, and returns its id.
    pub fn put_file(
        &self,
        owner: &str,
        origin: &str,
        label: &str,
        path: std::path::PathBuf,
        key: FileKey,
        index: LineIndex,
    ) -> String {
        if let Some(s) = &self.shared {
            // Other replicas cannot open this file: the store keeps a copy of its text.
            let disk = DiskText::referenced(path, key, index);
            return self.put_shared(s, owner, origin, label, shared::Content::Disk(&disk));
        }
        if let Some(id) = self.reissue_file(owner, origin, label, key) {
            return id;
        }
        let content = content_key(&(origin, label, "file", key));
        let body = Body::Disk(DiskText::referenced(path, key, index));
        self.insert(content, owner, origin, label, body, Check::File(key))
    }

    /// Re-issues the live id stored under `content` if `same` recognises its entry, and lets
    /// `owner` list it.
    fn reissue(
        &self,
        content: u64,
        owner: &str,
        origin: &str,
        same: impl Fn(&Entry) -> bool,
    ) -> Option<String> {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.inner.locked();
        self.expire(&mut inner);
        let id = inner.by_content.get(&content).cloned()?;
        let slot = inner.slots.get_mut(&id)?;
        if !(slot.entry.origin == origin && same(&slot.entry)) {
            return None;
        }
        slot.issued = Instant::now();
        inner.touch(&id, tick);
        let slot = inner.slots.get_mut(&id)?;
        if !slot.owners.iter().any(|o| o == owner) {
            if slot.owners.len() == MAX_OWNERS {
                slot.owners.remove(0);
            }
            slot.owners.push(owner.to_string());
        }
        Some(id)
    }

    /// Inserts a new entry under a new id, evicting least recently used entries to make room.
    fn insert(
        &self,
        content: u64,
        owner: &str,
        origin: &str,
        label: &str,
        body: Body,
        check: Check,
    ) -> String {
        let id = self.new_id(self.next_id.fetch_add(1, Ordering::Relaxed));
        let entry = Arc::new(Entry {
            id: id.clone(),
            origin: origin.into(),
            label: label.chars().take(200).collect(),
            body,
            check,
            shown: Mutex::new(Vec::new()),
        });
        let size = entry.cost();
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.inner.locked();
        self.expire(&mut inner);
        if size > self.max_bytes {
            // Dropping the entry frees its text (a spilled one's file is deleted with it).
            remember_gone(&mut inner, &id, Missing::TooLarge);
            self.refused.fetch_add(1, Ordering::Relaxed);
            return id;
        }
        while !inner.slots.is_empty()
            && (inner.bytes + size > self.max_bytes || inner.slots.len() + 1 > self.max_entries)
        {
            let oldest = match inner.lru.first_key_value() {
                Some((_, id)) => id.clone(),
                None => break,
            };
            self.remove(&mut inner, &oldest, Missing::Evicted);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
        inner.bytes += size;
        inner.memory += entry.memory();
        inner.by_content.insert(content, id.clone());
        inner.lru.insert(tick, id.clone());
        if inner.earliest.is_none() {
            inner.earliest = Instant::now().checked_add(self.ttl);
        }
        inner.slots.insert(
            id.clone(),
            Slot {
                entry,
                last_used: tick,
                issued: Instant::now(),
                content,
                owners: vec![owner.to_string()],
            },
        );
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn texts_past_the_memory_bound_are_spilled_and_read_back_exactly() {
        let s = Store::new(1 << 20, 100, Duration::from_secs(60)).with_memory_max(200);
        let texts: Vec<String> = (0..4)
            .map(|i| format!("text {i}\n").repeat(12) + "tail")
            .collect();
        let ids: Vec<String> = texts
            .iter()
            .map(|t| s.put("o", "bash", "c", t.clone()))
            .collect();
        let on_disk: Vec<bool> = ids.iter().map(|id| s.get(id).unwrap().on_disk()).collect();
        assert_eq!(
            on_disk,
            [false, true, true, true],
            "only the first fits in 200 bytes"
        );
        assert!(s.stats().memory <= 200, "{:?}", s.stats());
        for (id, t) in ids.iter().zip(&texts) {
            let e = s.get(id).unwrap();
            assert_eq!(e.lines(1, 1000).unwrap(), *t);
        }
        // The same text again gets its id, spilled or not.
        assert_eq!(s.put("o", "bash", "c", texts[2].clone()), ids[2]);
        assert_eq!(s.put("o", "bash", "c", texts[0].clone()), ids[0]);
    }

    #[test]
    fn storing_the_same_output_again_reissues_its_id() {
        let s = Store::new(100, 10, Duration::from_secs(60));
        let a = s.put("o", "read", "f.rs", "same".into());
        let b = s.put("o", "grep", "f.rs", "same".into());
        assert_ne!(a, b, "another origin is another entry");
        assert_eq!(s.put("o", "read", "f.rs", "same".into()), a);
        assert_ne!(s.put("o", "read", "f.rs", "other".into()), a);
        assert_eq!(s.stats().entries, 3);
        // An evicted id is not re-issued; the text is stored anew.
        let s = Store::new(8, 10, Duration::from_secs(60));
        let a = s.put("o", "t", "", "aaaa".into());
        s.put("o", "t", "", "bbbbbbbb".into());
        assert_eq!(s.get(&a).unwrap_err(), Missing::Evicted);
        let again = s.put("o", "t", "", "aaaa".into());
        assert_ne!(again, a);
        assert_eq!(s.get(&again).unwrap().lines(1, 1).unwrap(), "aaaa");
    }

    #[test]
    fn spilled_entries_are_counted_reissued_and_evicted() {
        let write = |text: &str| {
            let mut w = SpillWriter::with_threshold(16);
            w.push_str(text).unwrap();
            w.finish().unwrap()
        };
        let s = Store::new(100, 10, Duration::from_secs(60));
        let text = "0123456789\n".repeat(5);
        let a = s.put_written("o", "grep", "p", write(&text));
        let e = s.get(&a).unwrap();
        assert!(e.on_disk());
        assert_eq!((e.line_count(), e.len()), (5, 55));
        assert_eq!(e.lines(2, 3).unwrap(), "0123456789\n0123456789\n");
        assert_eq!(s.stats().bytes, 55);
        assert_eq!(
            s.put_written("o", "grep", "p", write(&text)),
            a,
            "same text, same id"
        );
        assert_eq!(s.stats().entries, 1);
        let small = s.put_written("o", "grep", "p", write("small"));
        assert!(!s.get(&small).unwrap().on_disk());
        // Another big one: the first is evicted and its file goes with its last handle.
        let b = s.put_written("o", "grep", "q", write(&"x".repeat(60)));
        assert_eq!(s.get(&a).unwrap_err(), Missing::Evicted);
        assert_eq!(
            s.get(&b).unwrap().text_up_to(100).unwrap().unwrap(),
            "x".repeat(60)
        );
        assert_eq!(s.get(&b).unwrap().text_up_to(10).unwrap(), None);
    }
}
