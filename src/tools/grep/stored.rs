//! Later pages of a search whose matches were stored: the search's index (files and match counts
//! in artifact order) kept by this process or attached to the entry in a shared store, and the
//! page read back from the stored artifact instead of searching again.
//!
//! Owns the kept indexes and their bounds. It must never serve a page for another search's
//! fingerprint, nor let the kept indexes grow past their caps.

use super::super::ToolCtx;
use super::walk::parse_row;
use super::{Artifact, Searched};
use crate::contract::types::GrepMatch;
use crate::sync::Unpoisoned;
use std::sync::{Arc, Mutex};

/// The page `skip..skip + page_size` of the matches an earlier call stored under `id`, found with
/// the same pattern, paths and flags (`fingerprint`). `None`, and the caller searches again, when
/// the entry or its index is gone or the page cannot be read back.
pub(super) async fn stored_search(
    ctx: &ToolCtx,
    id: &str,
    fingerprint: [u8; 32],
    skip: usize,
    page_size: usize,
) -> Option<Searched> {
    let entry = ctx.app.store.get(id).ok()?;
    let index = stored_index(&ctx.app.store, id, fingerprint)?;
    let i = index.clone();
    let raw_page = tokio::task::spawn_blocking(move || stored_page(&entry, &i, skip, page_size))
        .await
        .ok()?
        .ok()?;
    Some(Searched {
        total: index.total,
        files: index.files,
        files_matched: index.per_file.len(),
        raw_page,
        artifact: Artifact::Stored(id.to_string()),
    })
}

/// What a later page needs to know of a search whose matches are stored: its fingerprint (a
/// cursor of another search cannot use it), counts, and each matched file's path and number of
/// matches in artifact order (a row's path is found by position, never parsed out of the row).
/// Kept by this process; with a shared store also attached to the entry (JSON), so that another
/// replica pages the matches too.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct StoredIndex {
    /// The search's fingerprint, which its cursors carry.
    pub(super) fingerprint: [u8; 32],
    /// Matches stored.
    pub(super) total: usize,
    /// Files searched.
    pub(super) files: usize,
    /// Each matched file's path and number of matches, in artifact order.
    pub(super) per_file: Vec<(String, usize)>,
}

/// Indexes of the most recent searches whose matches were stored, by artifact id (newest last):
/// at most [`STORED_INDEXES`] of at most [`STORED_INDEX_MAX_BYTES`] each.
/// Ids carry a per-store secret tag, so ids of two stores in one process never collide.
static STORED: Mutex<Vec<(String, Arc<StoredIndex>)>> = Mutex::new(Vec::new());
/// How many search indexes are kept (each costs its matched files' paths).
const STORED_INDEXES: usize = 32;

/// An index whose paths take more than this is not kept (its later pages search again), so the
/// kept indexes stay within [`STORED_INDEXES`] times this.
const STORED_INDEX_MAX_BYTES: usize = 4 << 20;

impl StoredIndex {
    /// Bytes its paths take (with per-file overhead).
    fn bytes(&self) -> usize {
        self.per_file.iter().map(|(p, _)| p.len() + 32).sum()
    }

    /// Its JSON, unless larger than [`STORED_INDEX_MAX_BYTES`].
    pub(super) fn to_json(&self) -> Option<Vec<u8>> {
        (self.bytes() <= STORED_INDEX_MAX_BYTES)
            .then(|| serde_json::to_vec(self).ok())
            .flatten()
    }
}

pub(super) fn remember_index(id: &str, index: Arc<StoredIndex>) {
    if index.bytes() > STORED_INDEX_MAX_BYTES {
        return;
    }
    let mut stored = STORED.locked();
    stored.retain(|(k, _)| k != id);
    if stored.len() >= STORED_INDEXES {
        stored.remove(0);
    }
    stored.push((id.to_string(), index));
}

/// The index of the search stored under `id`, if it is `fingerprint`'s: this process's, else the
/// one attached to the entry in a shared store (by the replica that searched).
fn stored_index(
    store: &crate::store::Store,
    id: &str,
    fingerprint: [u8; 32],
) -> Option<Arc<StoredIndex>> {
    let here = {
        let stored = STORED.locked();
        stored.iter().find(|(k, _)| k == id).map(|(_, i)| i.clone())
    };
    let index = match here {
        Some(i) => i,
        None => {
            let json = store.attachment(id)?;
            let index: Arc<StoredIndex> = Arc::new(serde_json::from_slice(&json).ok()?);
            if index.fingerprint == fingerprint {
                remember_index(id, index.clone());
            }
            index
        }
    };
    (index.fingerprint == fingerprint).then_some(index)
}

/// Matches `skip..skip + page_size` read back from the stored artifact (one row per line, in
/// the order of `index.per_file`), reading only from the page's first line on.
fn stored_page(
    entry: &crate::store::Entry,
    index: &StoredIndex,
    skip: usize,
    page_size: usize,
) -> Result<Vec<GrepMatch>, crate::store::ReadError> {
    use std::io::BufRead;
    let mut page = Vec::new();
    if entry.line_count() != index.total {
        return Err(std::io::Error::other("the stored matches do not match their index").into());
    }
    if skip >= index.total {
        return Ok(page);
    }
    // The file of match `skip`, and how many of its matches come before it.
    let mut file = 0;
    let mut before = 0;
    while before + index.per_file[file].1 <= skip {
        before += index.per_file[file].1;
        file += 1;
    }
    let mut reader = entry.reader_at(skip + 1)?;
    let mut row = Vec::new();
    let mut at = skip;
    while page.len() < page_size && at < index.total {
        while at >= before + index.per_file[file].1 {
            before += index.per_file[file].1;
            file += 1;
        }
        row.clear();
        if reader.read_until(b'\n', &mut row)? == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&row);
        match parse_row(&index.per_file[file].0, &text) {
            Some(m) => page.push(m),
            None => {
                return Err(std::io::Error::other(format!("unreadable match row {text:?}")).into());
            }
        }
        at += 1;
    }
    Ok(page)
}
