//! One stored text and its reading: where the text is ([`Body`]: in memory with its line starts,
//! on disk, or in the shared store), how a new output is recognised as it ([`Check`]), which of
//! its lines results showed, and reading it by line ([`Entry::reader_at`], [`Entry::lines`],
//! [`Entry::part_up_to`], [`Entry::text_up_to`]). Owns an entry's line index ([`line_starts`])
//! and what it costs against the store's caps; must never decide whether or where a text is kept
//! (the store does), never change an entry's text once it is stored (only what was shown), and
//! never read a whole disk or shared text into memory except through [`Entry::text_up_to`].

use super::shared;
use super::{DiskText, FileKey, ReadError};
use crate::sync::Unpoisoned;
use std::io::{BufRead, Read};
use std::sync::Mutex;

/// Where an entry's text is.
#[derive(Debug)]
pub(super) enum Body {
    /// In memory, with the byte offset where each line starts (a line ends at the next start,
    /// terminator included).
    Memory {
        /// The text.
        text: String,
        /// Byte offset of each line's start.
        line_starts: Vec<usize>,
    },
    /// On disk (a spill file or a referenced file).
    Disk(DiskText),
    /// In the shared store (Valkey/Redis), read by range.
    Shared(shared::SharedText),
}

/// How a new output is recognised as one already stored (so its id is re-issued).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// Compare the in-memory text.
    Text,
    /// A spilled text's 128-bit content hash and length.
    Hash(u128, u64),
    /// A referenced file's identity.
    File(FileKey),
}

/// One stored text with its line index.
#[derive(Debug)]
pub struct Entry {
    /// The id clients use (`prn_…`).
    pub id: String,
    /// What produced it (`read`, `bash`, `grep`, `prune_text`), for listings.
    pub origin: String,
    /// Short human label (file path, command), for listings.
    pub label: String,
    /// Where its text is.
    pub(super) body: Body,
    /// How a new output is recognised as this one, so its id is re-issued.
    pub(super) check: Check,
    /// The lines (0-based ranges) the last result of this text showed the model, plus what
    /// recoveries by question returned since, so that the next one returns what none showed.
    /// Empty: nothing recorded (an output cut to a budget), and every line counts as not shown.
    pub(super) shown: Mutex<Vec<std::ops::Range<usize>>>,
}

impl Entry {
    /// Records which lines a pruned result showed (`keep`, one flag per line), replacing what an
    /// earlier result of the same text recorded.
    pub async fn set_shown(&self, keep: &[bool]) {
        let runs = runs_of(keep);
        if let Body::Shared(s) = &self.body {
            // Best effort: without the record a recovery by question counts every line unshown.
            if let Err(e) = s.set_shown(&runs).await {
                tracing::warn!(prune_id = %self.id, error = %e, "store.shown_not_recorded");
            }
            return;
        }
        *self.shown.locked() = runs;
    }

    /// Adds the lines flagged in `seen` to those recorded as shown, keeping what is recorded
    /// (a recovery by question adds what it returned, a `read` window what its page showed).
    /// `seen[0]` is line `first` (0-based) of the text: a window or a part flags only its own
    /// lines. Atomic: additions to the same text at once all land.
    pub async fn add_shown(&self, first: usize, seen: &[bool]) {
        let runs: Vec<_> = runs_of(seen)
            .into_iter()
            .map(|r| r.start + first..r.end + first)
            .collect();
        if let Body::Shared(s) = &self.body {
            if let Err(e) = s.add_shown(&runs).await {
                tracing::warn!(prune_id = %self.id, error = %e, "store.shown_not_recorded");
            }
            return;
        }
        let mut shown = self.shown.locked();
        let n = shown.iter().chain(&runs).map(|r| r.end).max().unwrap_or(0);
        let mut all = vec![false; n];
        for r in shown.iter().chain(&runs) {
            all[r.clone()].fill(true);
        }
        *shown = runs_of(&all);
    }

    /// One flag per line of the text: `true` where the last pruned result showed it.
    pub fn shown(&self) -> Vec<bool> {
        let mut out = vec![false; self.line_count()];
        let runs = match &self.body {
            Body::Shared(s) => s.shown(),
            _ => self.shown.locked().clone(),
        };
        for r in runs.iter() {
            let end = r.end.min(out.len());
            if r.start < end {
                out[r.start..end].fill(true);
            }
        }
        out
    }

    /// Number of lines (a final line without terminator counts; a trailing terminator opens none).
    pub fn line_count(&self) -> usize {
        match &self.body {
            Body::Memory { line_starts, .. } => line_starts.len(),
            Body::Disk(d) => d.lines(),
            Body::Shared(s) => s.lines(),
        }
    }

    /// Bytes of text.
    pub fn len(&self) -> u64 {
        match &self.body {
            Body::Memory { text, .. } => text.len() as u64,
            Body::Disk(d) => d.len(),
            Body::Shared(s) => s.len(),
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the text is on disk (spilled or referenced) rather than in memory.
    pub fn on_disk(&self) -> bool {
        matches!(self.body, Body::Disk(_))
    }

    /// Bytes this entry costs against the store's byte cap.
    pub(super) fn cost(&self) -> usize {
        match &self.body {
            Body::Memory { text, .. } => text.len(),
            Body::Disk(d) => d.cost(),
            Body::Shared(_) => 0,
        }
    }

    /// Bytes of memory this entry's text holds (text and line index; 0 on disk).
    pub(super) fn memory(&self) -> usize {
        match &self.body {
            Body::Memory { text, line_starts } => memory_cost(text, line_starts),
            Body::Disk(_) | Body::Shared(_) => 0,
        }
    }

    /// A reader of the text from the start of `line` (1-based; past the last line: at the end),
    /// reading only what is consumed.
    pub fn reader_at(&self, line: usize) -> Result<Box<dyn BufRead + Send + '_>, ReadError> {
        match &self.body {
            Body::Memory { text, line_starts } => {
                let from = line_starts
                    .get(line.max(1) - 1)
                    .copied()
                    .unwrap_or(text.len());
                Ok(Box::new(&text.as_bytes()[from..]))
            }
            Body::Disk(d) => d.reader_at(line),
            Body::Shared(s) => Ok(s.reader_at(line)?),
        }
    }

    /// The whole text if it is at most `max` bytes.
    pub fn text_up_to(&self, max: usize) -> Result<Option<String>, ReadError> {
        if self.len() > max as u64 {
            return Ok(None);
        }
        match &self.body {
            Body::Memory { text, .. } => Ok(Some(text.clone())),
            Body::Disk(_) | Body::Shared(_) => {
                let mut out = Vec::new();
                self.reader_at(1)?.read_to_end(&mut out)?;
                Ok(Some(String::from_utf8(out).unwrap_or_else(|e| {
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                })))
            }
        }
    }

    /// Whole lines from line `first` (1-based) on, as many as fit in `max` bytes (at least none).
    pub fn part_up_to(&self, first: usize, max: usize) -> Result<String, ReadError> {
        let mut reader = self.reader_at(first)?;
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 || out.len() + line.len() > max {
                break;
            }
            out.extend_from_slice(&line);
        }
        Ok(String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    /// Exact bytes of lines `start..=end` (1-based, clamped), terminators included, so that
    /// consecutive ranges concatenate to the original text. Reads the whole range: for small
    /// ranges (page through [`Entry::reader_at`] otherwise).
    pub fn lines(&self, start: usize, end: usize) -> Result<String, ReadError> {
        // Line 0 is read as line 1, as `reader_at` reads it: `lines(0, k)` is `lines(1, k)`.
        let start = start.max(1);
        let n = self.line_count();
        if n == 0 || start > n || start > end {
            return Ok(String::new());
        }
        let mut reader = self.reader_at(start)?;
        let mut out = Vec::new();
        for _ in start..=end.min(n) {
            if reader.read_until(b'\n', &mut out)? == 0 {
                break;
            }
        }
        Ok(String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

/// Bytes of memory that an in-memory text and its line index hold.
pub(super) fn memory_cost(text: &str, line_starts: &Vec<usize>) -> usize {
    text.len() + line_starts.capacity() * std::mem::size_of::<usize>()
}

/// The maximal runs of `true` in `flags`, as 0-based half-open ranges, in order.
fn runs_of(flags: &[bool]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < flags.len() {
        if flags[i] {
            let start = i;
            while i < flags.len() && flags[i] {
                i += 1;
            }
            runs.push(start..i);
        } else {
            i += 1;
        }
    }
    runs
}

/// Byte offsets of line starts in `text`.
pub fn line_starts(text: &str) -> Vec<usize> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut starts = vec![0];
    // The memchr crate's vectorised search (AVX2): `match_indices` scans with core's
    // word-at-a-time one.
    starts.extend(
        memchr::memchr_iter(b'\n', text.as_bytes())
            .map(|i| i + 1)
            .filter(|&i| i < text.len()),
    );
    starts
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use std::sync::Arc;
    use std::time::Duration;

    /// A result records what it showed in place of what was recorded; recoveries add theirs, and
    /// recoveries of the same id at once all land (none writes over another's).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recoveries_add_to_what_was_shown_and_a_new_result_replaces_it() {
        let s = Arc::new(Store::new(1 << 20, 10, Duration::from_secs(60)));
        let id = s.put("o", "read", "f", "line\n".repeat(40));
        let flags = |r: std::ops::Range<usize>| (0..40).map(|i| r.contains(&i)).collect::<Vec<_>>();
        s.record_shown(&id, &flags(0..5)).await;
        let tasks: Vec<_> = (0..7)
            .map(|k| {
                let (s, id) = (Arc::clone(&s), id.clone());
                tokio::spawn(async move {
                    let e = s.get_at_async(&id, None).await.unwrap();
                    e.add_shown(0, &flags(5 + 5 * k..10 + 5 * k)).await;
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let e = s.get_at_async(&id, None).await.unwrap();
        assert_eq!(e.shown(), vec![true; 40]);
        s.record_shown(&id, &flags(3..4)).await;
        assert_eq!(e.shown(), flags(3..4));
    }

    #[test]
    fn lines_concatenate_to_original() {
        for text in ["", "a", "a\n", "a\nb", "a\r\nb\r\n\n", "\n\n"] {
            let s = Store::new(1 << 20, 10, Duration::from_secs(60));
            let id = s.put("o", "t", "", text.to_string());
            let e = s.get(&id).unwrap();
            let all: String = (1..=e.line_count())
                .map(|i| e.lines(i, i).unwrap())
                .collect();
            assert_eq!(all, text);
            assert_eq!(e.lines(1, usize::MAX).unwrap(), text);
            // Clamped at both ends: line 0 is line 1.
            assert_eq!(e.lines(0, 1).unwrap(), e.lines(1, 1).unwrap());
        }
    }
}
