//! `grep`: a regex (or literal) search over files under the root, in-process with ripgrep's crates
//! (`ignore` for the walk and its .gitignore rules, `grep-searcher`/`grep-regex` for matching).
//! Matches come back sorted by path and line, paged with an opaque cursor, cut to the budget, and
//! all of them stay recoverable as an artifact. Owns the search and its result shape.
//!
//! Memory stays bounded whatever the number of matches: walker threads render each file's matches
//! into a small buffer flushed (every [`FLUSH_BYTES`]) to an unlinked temp file, keeping per file
//! only its path, match count and where its rows are. After the walk the files are sorted by path
//! (within a file, matches come in line order), and one pass over the temp file writes the sorted
//! artifact through a [`SpillWriter`] (spilled past [`crate::store::SPILL_THRESHOLD`]) while
//! keeping only the requested page's matches. Must never collect every match in memory.

use super::result::Pipeline;
use super::{Failure, ToolCtx, ToolOutput, beneath, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    ErrorReason, GrepInput, GrepMatch, GrepResult, GrepResultTool, PruningMetadata, RpcError,
    SourceType, ToolName,
};
use crate::protocol::message;
use crate::store::{SpillWriter, anonymous_file};
use crate::sync::Unpoisoned;
use grep_matcher::Matcher;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Default `max_matches` (seed 000).
pub const DEFAULT_MAX_MATCHES: usize = 500;
/// A walker thread flushes a file's rendered matches to the temp file past this many bytes.
pub const FLUSH_BYTES: usize = 1024 * 1024;

/// Runs `grep`.
pub async fn run(mut input: GrepInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let p = Pipeline::new(ctx, "grep", input.max_output_bytes.as_ref().map(|m| m.0));
    let start = p.start;
    let cfg = &ctx.app.config;
    let root = cfg.root.clone();
    let cwd_lex = match &input.cwd {
        Some(c) => paths::lexical(&root, &root, c)
            .map_err(|m| message::invalid_field("/arguments/cwd", m))?,
        None => root.clone(),
    };
    // Without `paths`, the search covers `cwd` (the root unless given).
    if input.paths.is_empty() {
        input.paths.push(".".into());
    }
    let mut targets = Vec::new();
    for (i, p) in input.paths.iter().enumerate() {
        targets.push(
            paths::lexical(&root, &cwd_lex, p)
                .map_err(|m| message::invalid_field(&format!("/arguments/paths/{i}"), m))?,
        );
    }
    let fingerprint = fingerprint(&input);
    let (skip, cursor_artifact) = match &input.cursor {
        None => (0, None),
        Some(c) => decode_cursor(c, fingerprint).ok_or_else(|| {
            message::invalid_field(
                "/arguments/cursor",
                "not a cursor from a previous grep with the same pattern, paths and flags",
            )
        })?,
    };
    let page_size = input
        .max_matches
        .map(|m| m.get() as usize)
        .unwrap_or(DEFAULT_MAX_MATCHES);
    let timeout = Duration::from_millis(
        input
            .timeout_ms
            .as_ref()
            .map(|t| t.0 as u64)
            .unwrap_or(crate::tools::bash::DEFAULT_TIMEOUT_MS),
    );

    let resolved = match resolve_targets(&root, &cwd_lex, &input, &targets) {
        Ok(r) => r,
        Err(f) => return Ok(p.fail(f)),
    };
    let matcher = match matcher_of(&input) {
        Ok(m) => m,
        Err(f) => return Ok(p.fail(f)),
    };

    // A page after the first comes from the matches the first call stored, while they live.
    if let Some(id) = cursor_artifact.as_deref()
        && let Some(searched) = stored_search(ctx, id, fingerprint, skip, page_size).await
    {
        crate::events::exec_ok(
            &ctx.request_id,
            "grep",
            ms_since(start),
            searched.total as u64,
        );
        return Ok(respond(&p, &input, searched, skip, fingerprint).await);
    }

    let cancel = ctx.cancel.clone();
    let root2 = root.clone();
    let search = tokio::task::spawn_blocking(move || {
        let found = search(&matcher, &resolved, &root2, start + timeout, &cancel)?;
        let sorted = if found.stopped.is_none() {
            Some(assemble(&found, skip, page_size)?)
        } else {
            None
        };
        Ok::<_, std::io::Error>((found, sorted))
    });
    let (found, sorted) = match search.await {
        Ok(Ok(f)) => f,
        Ok(Err(e)) => {
            return Ok(p.fail(fail(
                ErrorReason::IoError,
                format!("writing matches to a temp file: {e}"),
            )));
        }
        Err(e) => {
            return Ok(p.fail(fail(
                ErrorReason::Internal,
                format!("search task failed: {e}"),
            )));
        }
    };
    if let Some(f) = stopped(ctx, &found, timeout) {
        return Ok(p.fail(f));
    }
    let (raw_page, all) = sorted.expect("assembled when not stopped");
    crate::events::exec_ok(&ctx.request_id, "grep", ms_since(start), found.total as u64);
    let searched = Searched {
        total: found.total,
        files: found.files,
        files_matched: found.files_matched,
        raw_page,
        artifact: Artifact::New(
            all,
            found
                .per_file
                .iter()
                .map(|f| (f.path.clone(), f.chunks.iter().map(|c| c.2).sum()))
                .collect(),
        ),
    };
    Ok(respond(&p, &input, searched, skip, fingerprint).await)
}

/// The page `skip..skip + page_size` of the matches an earlier call stored under `id`, found with
/// the same pattern, paths and flags (`fingerprint`). `None`, and the caller searches again, when
/// the entry or its index is gone or the page cannot be read back.
async fn stored_search(
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

/// The failure of a search the deadline or a cancel stopped (logged), if one did.
fn stopped(ctx: &ToolCtx, found: &Found, timeout: Duration) -> Option<Failure> {
    match found.stopped? {
        ErrorReason::Timeout => {
            let ms = timeout.as_millis() as u64;
            crate::events::exec_timeout(&ctx.request_id, "grep", ms);
            let mut f = fail(
                ErrorReason::Timeout,
                format!(
                    "search timed out after {ms} ms ({} files searched, {} matches so far)",
                    found.files, found.total
                ),
            )
            .hint("raise timeout_ms or search fewer paths");
            f.body.error.timeout_ms = Some(ms);
            Some(f)
        }
        ErrorReason::Cancelled => {
            crate::events::cancelled(&ctx.request_id, "grep");
            Some(fail(
                ErrorReason::Cancelled,
                "cancelled by the client".into(),
            ))
        }
        // The walk stops for nothing else; were it to, the result would have no page.
        other => Some(fail(
            ErrorReason::Internal,
            format!("search stopped: {other}"),
        )),
    }
}

/// The search's targets (`targets`, lexically under the root) resolved on disk, or the failure
/// that names the first one that is missing or leaves the root, or a `cwd` that is no directory.
fn resolve_targets(
    root: &std::path::Path,
    cwd_lex: &std::path::Path,
    input: &GrepInput,
    targets: &[std::path::PathBuf],
) -> Result<Vec<std::path::PathBuf>, Failure> {
    if let Some(c) = &input.cwd {
        match paths::resolve(root, cwd_lex) {
            Ok(p) if p.is_dir() => {}
            _ => {
                return Err(fail(
                    ErrorReason::InvalidPath,
                    format!("cwd {c:?} is not a directory under the root"),
                ));
            }
        }
    }
    let mut resolved = Vec::new();
    for (raw, lex) in input.paths.iter().zip(targets) {
        match paths::resolve(root, lex) {
            Ok(p) => resolved.push(p),
            Err(paths::ResolveError::NotFound) => {
                return Err(fail(
                    ErrorReason::NotFound,
                    format!("no such file or directory: {raw}"),
                ));
            }
            Err(paths::ResolveError::OutsideRoot) => {
                return Err(fail(
                    ErrorReason::InvalidPath,
                    format!("{raw} resolves outside the root through a symlink"),
                ));
            }
            Err(e) => return Err(fail(ErrorReason::IoError, format!("{raw}: {e:?}"))),
        }
    }
    Ok(resolved)
}

/// A `grep` failure for `reason`, saying `message`.
fn fail(reason: ErrorReason, message: String) -> Failure {
    Failure::new(ToolName::Grep, reason, message, 0)
}

/// The matcher of `input.pattern` with its flags, or the failure naming why the pattern is
/// invalid.
fn matcher_of(input: &GrepInput) -> Result<grep_regex::RegexMatcher, Failure> {
    RegexMatcherBuilder::new()
        // As ripgrep does: a match never spans lines, which lets the searcher look for
        // candidate lines over whole buffers (and a regex's inner literals first).
        .line_terminator(Some(b'\n'))
        .case_insensitive(input.case_sensitive == Some(false))
        .fixed_strings(input.fixed_string == Some(true))
        .build(&input.pattern)
        .map_err(|e| {
            fail(ErrorReason::RgError, format!("invalid pattern: {e}"))
                .hint("the pattern is a Rust regex; pass fixed_string=true to search it literally")
        })
}

/// What a search (or the stored matches of an earlier one) gives a page.
struct Searched {
    /// Matches in all.
    total: usize,
    /// Files searched.
    files: usize,
    /// Files with matches.
    files_matched: usize,
    /// The requested page's matches, as stored (not yet clipped for display).
    raw_page: Vec<GrepMatch>,
    /// Every match as text lines.
    artifact: Artifact,
}

/// Every match of a search: just written (with each matched file's path and match count, in
/// order), or already in the store under an id.
enum Artifact {
    New(crate::store::Written, Vec<(String, usize)>),
    Stored(String),
}

/// The page of `searched` that starts at match `skip`, pruned, fitted to the budget.
async fn respond(
    p: &Pipeline<'_>,
    input: &GrepInput,
    searched: Searched,
    skip: usize,
    fingerprint: [u8; 32],
) -> ToolOutput {
    let budget = p.budget;
    let Searched {
        total,
        files,
        files_matched,
        raw_page,
        artifact,
    } = searched;

    // The page this cursor asks for, then pruning over it.
    let page: Vec<GrepMatch> = raw_page.iter().map(clip_line).collect();
    let rendered: String = page.iter().map(render_line).collect();
    let question = input.context_focus_question.as_deref().map(String::as_str);
    let pruned = p
        .prune(&rendered, question, SourceType::Logs, &input.pattern)
        .await;
    let shown: Vec<GrepMatch> = match &pruned.keep {
        Some(keep) => page
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(m, _)| m.clone())
            .collect(),
        None => page.clone(),
    };
    let pruned_away = page.len() - shown.len();

    // All matches stay recoverable as text lines.
    // Stored when matches are left for later pages, when the page is bulky, or when a shown line
    // was clipped (the artifact has it whole).
    let clipped = raw_page
        .iter()
        .any(|m| m.text.len() > budget::MAX_LINE_BYTES);
    let needs_artifact = total > page.len()
        || clipped
        || budget::json_len(&serde_json::to_value(&page).unwrap_or_default()) * 2 > budget;
    let artifact = match artifact {
        Artifact::Stored(id) => Some(id),
        Artifact::New(all, per_file) => needs_artifact.then(|| {
            let index = StoredIndex {
                fingerprint,
                total,
                files,
                per_file,
            };
            store_matches(p, &input.pattern, all, index)
        }),
    };
    let view = PageView {
        input,
        page: &page,
        shown: &shown,
        pruned_away,
        pruning: &pruned.metadata,
        skip,
        total,
        files,
        files_matched,
        fingerprint,
        artifact,
        duration_ms: ms_since(p.start),
    };
    let k = p.largest(shown.len(), |k| view.output(k));
    if let (Some(keep), Some(id), true) = (
        &pruned.keep,
        pruned.metadata.prune_id.as_deref(),
        pruned.metadata.applied && k < shown.len(),
    ) {
        // The page shows only the first `k` kept matches: the others are not recorded as shown,
        // so a recovery by question can still return them.
        p.ctx.app.store.record_shown(id, &first_kept(keep, k)).await;
    }
    p.respond(view.output(k), pruned.metadata.applied)
}

/// Stores every match of a search under a new id, with its index (for the replicas of a shared
/// store, which page it without searching again, and for this process's next pages); the id.
fn store_matches(
    p: &Pipeline<'_>,
    pattern: &str,
    all: crate::store::Written,
    index: StoredIndex,
) -> String {
    let id = p.store_written(pattern, all);
    if let Some(json) = index.to_json() {
        p.ctx.app.store.attach(&id, &json);
    }
    remember_index(&id, Arc::new(index));
    id
}

/// One page of a search, pruned, ready to be rendered with its first `k` shown matches.
struct PageView<'a> {
    /// The call's input (pattern, paths).
    input: &'a GrepInput,
    /// The page's matches, clipped for display.
    page: &'a [GrepMatch],
    /// The matches of `page` pruning kept, in order.
    shown: &'a [GrepMatch],
    /// Matches of `page` pruning removed.
    pruned_away: usize,
    /// What pruning did.
    pruning: &'a PruningMetadata,
    /// Matches before this page.
    skip: usize,
    /// Matches of the whole search.
    total: usize,
    /// Files searched.
    files: usize,
    /// Files with a match.
    files_matched: usize,
    /// The search's fingerprint, which cursors carry.
    fingerprint: [u8; 32],
    /// The id holding every match, when stored.
    artifact: Option<String>,
    /// Time of the call so far.
    duration_ms: u64,
}

impl PageView<'_> {
    /// The result showing the first `k` kept matches, its notes (pruned matches, the next
    /// page's cursor, where all matches are) after them.
    fn output(&self, k: usize) -> ToolOutput {
        let (total, skip) = (self.total, self.skip);
        let visible = &self.shown[..k];
        // Next page starts after the last match of the page that was considered.
        let consumed = if k == self.shown.len() {
            self.page.len()
        } else {
            index_in_page(self.page, self.shown, k)
        };
        let next = skip + consumed;
        let has_more = next < total;
        let cursor = || encode_cursor(next, self.fingerprint, self.artifact.as_deref());
        let mut text: String = visible.iter().map(render_line).collect();
        let mut notes = Vec::new();
        if self.pruning.applied {
            notes.push(format!("{} matches pruned as off-focus", self.pruned_away));
        }
        if has_more {
            notes.push(format!(
                "showing {}-{} of {total} matches; next page: grep with cursor={}",
                skip + 1,
                skip + consumed,
                cursor()
            ));
        }
        if let Some(a) = &self.artifact {
            notes.push(format!("all matches: recover_text prune_id={a}"));
        }
        if total == 0 {
            text.push_str(&format!("no matches ({} files searched)", self.files));
        } else if !notes.is_empty() {
            text.push_str(&format!("[{}]", notes.join("; ")));
        }
        let input = self.input;
        let r = GrepResult {
            tool: GrepResultTool::Grep,
            summary: budget::summary(&format!(
                "{total} matches in {} files for {:?}{}",
                self.files_matched,
                input.pattern,
                if has_more { ", more pages" } else { "" }
            )),
            pattern: budget::clip_long_line(&input.pattern)
                .unwrap_or_else(|| input.pattern.clone()),
            paths: input.paths.clone(),
            matches: visible.to_vec(),
            match_count: total as u64,
            files_searched: Some(self.files as u64),
            truncated: has_more || k < self.shown.len(),
            has_more,
            next_cursor: has_more.then(cursor),
            artifact_ref: self.artifact.clone(),
            duration_ms: Some(self.duration_ms),
            pruning: Some(self.pruning.clone()),
        };
        ToolOutput::ok(text, &r)
    }
}

/// `keep` with only its first `k` kept lines left kept.
fn first_kept(keep: &[bool], k: usize) -> Vec<bool> {
    let mut left = k;
    keep.iter()
        .map(|&kept| {
            let shown = kept && left > 0;
            left -= usize::from(shown);
            shown
        })
        .collect()
}

/// How many page entries precede the `k`-th shown match (so the cursor resumes right after the
/// last shown one, never skipping a match that was cut for budget).
fn index_in_page(page: &[GrepMatch], shown: &[GrepMatch], k: usize) -> usize {
    if k == 0 {
        return page
            .iter()
            .position(|m| Some(m) == shown.first())
            .unwrap_or(0);
    }
    let last = &shown[k - 1];
    page.iter()
        .position(|m| m == last)
        .map(|i| i + 1)
        .unwrap_or(k)
}

/// A match as shown: a line longer than [`budget::MAX_LINE_BYTES`] is clipped, saying how many
/// bytes were left out (the stored artifact keeps the whole line).
fn clip_line(m: &GrepMatch) -> GrepMatch {
    let mut m = m.clone();
    if let Some(c) = budget::clip_long_line(&m.text) {
        m.text = c;
    }
    m
}

/// `path:line:col: text\n`.
fn render_line(m: &GrepMatch) -> String {
    match m.column {
        Some(c) => format!("{}:{}:{}: {}\n", m.path, m.line, c, m.text),
        None => format!("{}:{}: {}\n", m.path, m.line, m.text),
    }
}

/// One searched file with matches: its display path, and where its rendered rows are in the
/// temp file (offset, bytes, rows), in line order.
struct FileRows {
    /// The file's path as rows show it.
    path: String,
    /// Its rendered rows in the temp file: (offset, bytes, rows) per run, in line order.
    chunks: Vec<(u64, usize, usize)>,
}

/// The temp file walker threads append rendered rows to, with its length.
struct Rows {
    /// The temp file.
    file: File,
    /// Bytes appended so far: where the next run of rows goes.
    len: u64,
}

/// What a search found: the rows in their temp file and the counts the result reports.
struct Found {
    /// Files with matches, sorted by path.
    per_file: Vec<FileRows>,
    /// The temp file holding every rendered row.
    rows: File,
    /// Matches found.
    total: usize,
    /// Files searched.
    files: usize,
    /// Files with at least one match.
    files_matched: usize,
    /// Why the walk stopped early (timeout, cancellation), if it did.
    stopped: Option<ErrorReason>,
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
fn search(
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
fn assemble(
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
fn parse_row(path: &str, row: &str) -> Option<GrepMatch> {
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

/// A digest of everything that determines the match list, so a cursor cannot be replayed on
/// another search.
fn fingerprint(input: &GrepInput) -> [u8; 32] {
    let canonical = serde_json::to_vec(&serde_json::json!([
        &input.pattern,
        &input.paths,
        &input.cwd,
        input.fixed_string,
        input.case_sensitive,
    ]))
    .expect("serializes");
    crate::secret::digest(&canonical)
}

/// Kind under which `grep` cursors are sealed.
const CURSOR_KIND: &str = "grep";

/// `g1.OFFSET`, or `g2.OFFSET.ID` when every match is stored under `ID` (later pages are then
/// read from it instead of searching again), sealed with the process's key over itself and the
/// search ([`crate::secret::seal`]): neither the offset nor the id can be forged.
fn encode_cursor(offset: usize, fingerprint: [u8; 32], artifact: Option<&str>) -> String {
    let body = match artifact {
        Some(id) => format!("g2.{offset:x}.{id}"),
        None => format!("g1.{offset:x}"),
    };
    crate::secret::seal(CURSOR_KIND, &fingerprint, &body)
}

/// The offset and, for a `g2` cursor, the artifact id of a cursor sealed for this search.
fn decode_cursor(cursor: &str, fingerprint: [u8; 32]) -> Option<(usize, Option<String>)> {
    let body = crate::secret::open(CURSOR_KIND, &fingerprint, cursor)?;
    let mut parts = body.split('.');
    let version = parts.next()?;
    let offset = usize::from_str_radix(parts.next()?, 16).ok()?;
    let artifact = match version {
        "g1" => None,
        "g2" => Some(
            parts
                .next()
                .filter(|id| id.starts_with("prn_"))?
                .to_string(),
        ),
        _ => return None,
    };
    parts.next().is_none().then_some((offset, artifact))
}

/// What a later page needs to know of a search whose matches are stored: its fingerprint (a
/// cursor of another search cannot use it), counts, and each matched file's path and number of
/// matches in artifact order (a row's path is found by position, never parsed out of the row).
/// Kept by this process; with a shared store also attached to the entry (JSON), so that another
/// replica pages the matches too.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredIndex {
    /// The search's fingerprint, which its cursors carry.
    fingerprint: [u8; 32],
    /// Matches stored.
    total: usize,
    /// Files searched.
    files: usize,
    /// Each matched file's path and number of matches, in artifact order.
    per_file: Vec<(String, usize)>,
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
    fn to_json(&self) -> Option<Vec<u8>> {
        (self.bytes() <= STORED_INDEX_MAX_BYTES)
            .then(|| serde_json::to_vec(self).ok())
            .flatten()
    }
}

fn remember_index(id: &str, index: Arc<StoredIndex>) {
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

#[cfg(test)]
mod tests {
    use super::first_kept;

    #[test]
    fn first_kept_leaves_only_the_first_k_kept_lines() {
        let keep = [false, true, true, false, true, true];
        assert_eq!(
            first_kept(&keep, 3),
            [false, true, true, false, true, false]
        );
        assert_eq!(first_kept(&keep, 0), [false; 6]);
        assert_eq!(first_kept(&keep, 9), keep);
    }
}
