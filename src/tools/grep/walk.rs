//! The search itself: walker threads (`ignore`) match each file (`grep-searcher`), render its
//! rows into a small buffer flushed to an unlinked temp file, and keep only counts and offsets;
//! [`assemble`] then sorts the files by path and writes the artifact in one pass, keeping the
//! requested page.
//!
//! Owns the walk, the temp file and the order of the rows. It must never collect every match in
//! memory, nor decide what a page shows (the tool's result does).

use super::super::{beneath, paths};
use super::{FLUSH_BYTES, render_line};
use crate::budget;
use crate::contract::types::{ErrorReason, GrepMatch};
use crate::store::{SpillWriter, anonymous_file};
use crate::sync::Unpoisoned;
use grep_matcher::Matcher;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// One searched file with matches: its display path, and where its rendered rows are in the
/// temp file (offset, bytes, rows), in line order.
pub(super) struct FileRows {
    /// The file's path as rows show it.
    pub(super) path: String,
    /// Its rendered rows in the temp file: (offset, bytes, rows) per run, in line order.
    pub(super) chunks: Vec<(u64, usize, usize)>,
}

/// The temp file walker threads append rendered rows to, with its length.
struct Rows {
    /// The temp file.
    file: File,
    /// Bytes appended so far: where the next run of rows goes.
    len: u64,
}

/// What a search found: the rows in their temp file and the counts the result reports.
pub(super) struct Found {
    /// Files with matches, sorted by path.
    pub(super) per_file: Vec<FileRows>,
    /// The temp file holding every rendered row.
    rows: File,
    /// Matches found.
    pub(super) total: usize,
    /// Files searched.
    pub(super) files: usize,
    /// Files with at least one match.
    pub(super) files_matched: usize,
    /// Why the walk stopped early (timeout, cancellation), if it did.
    pub(super) stopped: Option<ErrorReason>,
}

/// Why the call must stop now: cancelled, or past its deadline.
fn stop_reason(
    cancel: &tokio_util::sync::CancellationToken,
    deadline: Instant,
) -> Option<ErrorReason> {
    if cancel.is_cancelled() {
        Some(ErrorReason::Cancelled)
    } else if Instant::now() > deadline {
        Some(ErrorReason::Timeout)
    } else {
        None
    }
}

/// What the walker threads share while they search.
struct Walk<'a> {
    /// The regex every file is searched with.
    matcher: &'a grep_regex::RegexMatcher,
    /// One handle on the root for every open of the walk.
    beneath: beneath::Beneath,
    /// The root, for the paths rows show.
    root: &'a std::path::Path,
    /// The call's deadline.
    deadline: Instant,
    /// The call's cancellation.
    cancel: &'a tokio_util::sync::CancellationToken,
    /// The temp file of rendered rows.
    rows: Mutex<Rows>,
    /// Files with matches, in the order their searches ended.
    per_file: Mutex<Vec<FileRows>>,
    /// Files searched.
    files: AtomicUsize,
    /// Matches found.
    total: AtomicUsize,
    /// Why the walk stopped early (timeout, cancellation), if it did.
    stop: Mutex<Option<ErrorReason>>,
    /// A failed write to the temp file: the search fails with it.
    write_error: Mutex<Option<std::io::Error>>,
    /// Set once the walk must end: every thread quits at its next entry.
    halted: AtomicBool,
}

impl Walk<'_> {
    /// Ends the walk early, for `why`.
    fn halt(&self, why: ErrorReason) {
        *self.stop.locked() = Some(why);
        self.halted.store(true, Ordering::Relaxed);
    }

    /// Appends a file's buffered rows to the temp file and notes where they went; `false` when
    /// the write failed (kept as the search's error, and the walk ends).
    fn flush(&self, buf: &mut String, in_buf: &mut usize, this: &mut FileRows) -> bool {
        let mut rows = self.rows.locked();
        let at = rows.len;
        let written = match rows.file.write_all(buf.as_bytes()) {
            Ok(()) => true,
            Err(e) => {
                *self.write_error.locked() = Some(e);
                self.halted.store(true, Ordering::Relaxed);
                false
            }
        };
        rows.len += buf.len() as u64;
        this.chunks.push((at, buf.len(), *in_buf));
        buf.clear();
        *in_buf = 0;
        written
    }

    /// One entry of the walk: a file is searched and its rows kept; anything else is skipped.
    fn visit(
        &self,
        searcher: &mut grep_searcher::Searcher,
        buf: &mut String,
        entry: Result<ignore::DirEntry, ignore::Error>,
    ) -> ignore::WalkState {
        if self.halted.load(Ordering::Relaxed) {
            return ignore::WalkState::Quit;
        }
        if let Some(why) = stop_reason(self.cancel, self.deadline) {
            self.halt(why);
            return ignore::WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return ignore::WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return ignore::WalkState::Continue;
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        // Opened beneath the root and searched through the handle: a file swapped for a link
        // (or a FIFO) after the walk saw it is skipped, never followed out.
        let Ok(opened) = self.beneath.open_file(entry.path()) else {
            return ignore::WalkState::Continue;
        };
        let mut this = FileRows {
            path: paths::display(self.root, entry.path()),
            chunks: Vec::new(),
        };
        let mut in_buf = 0;
        let mut written = true;
        let mut tripped = None;
        let reader = Watched {
            inner: opened.file,
            deadline: self.deadline,
            cancel: self.cancel,
            tripped: &mut tripped,
        };
        let _ = searcher.search_reader(
            self.matcher,
            reader,
            Lossy(|lnum, line| {
                buf.push_str(&render_line(&self.row(&this.path, lnum, line)));
                in_buf += 1;
                if buf.len() >= FLUSH_BYTES {
                    written &= self.flush(buf, &mut in_buf, &mut this);
                }
                Ok(true)
            }),
        );
        if in_buf > 0 {
            written &= self.flush(buf, &mut in_buf, &mut this);
        }
        if !written {
            return ignore::WalkState::Quit;
        }
        if !this.chunks.is_empty() {
            let n: usize = this.chunks.iter().map(|c| c.2).sum();
            self.total.fetch_add(n, Ordering::Relaxed);
            self.per_file.locked().push(this);
        }
        // The deadline or a cancel stopped this file mid-way: what it matched so far is kept,
        // and the walk stops.
        if let Some(why) = tripped {
            self.halt(why);
            return ignore::WalkState::Quit;
        }
        ignore::WalkState::Continue
    }

    /// The match on line `lnum` of the file shown as `path`: its first match's column, its text
    /// clipped for storage.
    fn row(&self, path: &str, lnum: u64, line: &str) -> GrepMatch {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let column = self
            .matcher
            .find(line.as_bytes())
            .ok()
            .flatten()
            .map(|m| std::num::NonZeroU64::new(m.start() as u64 + 1).expect("+1"));
        GrepMatch {
            path: path.to_owned(),
            line: std::num::NonZeroU64::new(lnum.max(1)).expect("max(1)"),
            column,
            text: budget::clip_with_count(line, budget::MAX_STORED_LINE_BYTES)
                .unwrap_or_else(|| line.to_string()),
        }
    }
}

/// Walks `paths` in parallel (ripgrep's rules: .gitignore, hidden files skipped, binary files
/// skipped), writing every match's row to a temp file, and returns where each file's rows are,
/// files sorted by path.
pub(super) fn search(
    matcher: &grep_regex::RegexMatcher,
    paths: &[PathBuf],
    root: &std::path::Path,
    deadline: Instant,
    cancel: &tokio_util::sync::CancellationToken,
) -> std::io::Result<Found> {
    let mut builder = ignore::WalkBuilder::new(&paths[0]);
    for p in &paths[1..] {
        builder.add(p);
    }
    builder.threads(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(8),
    );
    let beneath = match beneath::Beneath::new(root) {
        Ok(b) => b,
        Err(beneath::OpenError::Io(e)) => return Err(e),
        Err(e) => {
            return Err(std::io::Error::other(format!(
                "cannot open the root: {e:?}"
            )));
        }
    };
    let walk = Walk {
        matcher,
        beneath,
        root,
        deadline,
        cancel,
        rows: Mutex::new(Rows {
            file: anonymous_file()?,
            len: 0,
        }),
        per_file: Mutex::default(),
        files: AtomicUsize::new(0),
        total: AtomicUsize::new(0),
        stop: Mutex::default(),
        write_error: Mutex::default(),
        halted: AtomicBool::new(false),
    };
    builder.build_parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build();
        let mut buf = String::new();
        let walk = &walk;
        Box::new(move |entry| walk.visit(&mut searcher, &mut buf, entry))
    });
    if let Some(e) = walk.write_error.into_unpoisoned() {
        return Err(e);
    }
    let mut per_file = walk.per_file.into_unpoisoned();
    per_file.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Found {
        files_matched: per_file.len(),
        per_file,
        rows: walk.rows.into_unpoisoned().file,
        total: walk.total.into_inner(),
        files: walk.files.into_inner(),
        stopped: walk.stop.into_unpoisoned(),
    })
}

/// A file read that stops once the call's deadline passes or it is cancelled, so one huge file
/// cannot hold `grep` past its `timeout_ms` (the walk checks both only between files).
struct Watched<'a> {
    /// The open file.
    inner: std::fs::File,
    /// The call's deadline.
    deadline: Instant,
    /// The call's cancellation.
    cancel: &'a tokio_util::sync::CancellationToken,
    /// Set to why the read was stopped.
    tripped: &'a mut Option<ErrorReason>,
}

impl std::io::Read for Watched<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(w) = stop_reason(self.cancel, self.deadline) {
            *self.tripped = Some(w);
            return Err(std::io::Error::other("grep stopped: deadline or cancel"));
        }
        self.inner.read(buf)
    }
}

/// One pass over the rows in sorted order: the matches `skip..skip + page_size` (as stored, not
/// yet clipped for display) and every row written to the artifact.
pub(super) fn assemble(
    found: &Found,
    skip: usize,
    page_size: usize,
) -> std::io::Result<(Vec<GrepMatch>, crate::store::Written)> {
    let mut page = Vec::new();
    let mut all = SpillWriter::new();
    let mut index = 0usize;
    let want = skip..skip.saturating_add(page_size);
    let mut bytes = Vec::new();
    for f in &found.per_file {
        for &(at, len, n) in &f.chunks {
            bytes.resize(len, 0);
            found.rows.read_exact_at(&mut bytes, at)?;
            let text = std::str::from_utf8(&bytes).map_err(std::io::Error::other)?;
            all.push_str(text)?;
            if index < want.end && index + n > want.start {
                for (k, row) in text.split_inclusive('\n').enumerate() {
                    if want.contains(&(index + k)) {
                        page.push(parse_row(&f.path, row).ok_or_else(|| {
                            std::io::Error::other(format!("unreadable match row {row:?}"))
                        })?);
                    }
                }
            }
            index += n;
        }
    }
    Ok((page, all.finish()?))
}

/// The match a `path:line:col: text` (or `path:line: text`) row was rendered from.
pub(super) fn parse_row(path: &str, row: &str) -> Option<GrepMatch> {
    let rest = row
        .strip_suffix('\n')?
        .strip_prefix(path)?
        .strip_prefix(':')?;
    let (line, rest) = rest.split_once(':')?;
    let (column, text) = match rest.strip_prefix(' ') {
        Some(text) => (None, text),
        None => {
            let (col, text) = rest.split_once(": ")?;
            (Some(col.parse().ok()?), text)
        }
    };
    Some(GrepMatch {
        path: path.to_string(),
        line: line.parse().ok()?,
        column,
        text: text.to_string(),
    })
}
