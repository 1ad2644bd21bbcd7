//! `grep`: a regex (or literal) search over files under the root, in-process with ripgrep's crates
//! (`ignore` for the walk and its .gitignore rules, `grep-searcher`/`grep-regex` for matching).
//! Matches come back sorted by path and line, paged with an opaque cursor, cut to the budget, and
//! all of them stay recoverable as an artifact. Owns the search and its result shape.
//!
//! Memory stays bounded whatever the number of matches: walker threads render each file's matches
//! into a small buffer flushed (every [`FLUSH_BYTES`]) to an unlinked temp file, keeping per file
//! only its path, match count and where its rows are. After the walk the files are sorted by path
//! (within a file, matches come in line order), and one pass over the temp file writes the sorted
//! artifact through a spill writer (spilled past [`crate::store::SPILL_THRESHOLD`]) while
//! keeping only the requested page's matches (`walk`, with `crate::store::SpillWriter`). Must
//! never collect every match in memory.
//!
//! Its parts: `walk` (the search and the sorted artifact), `cursor` (what a page cursor seals),
//! `stored` (later pages read back from a stored artifact instead of searching again); this file
//! holds the tool's call and its result.

mod cursor;
mod stored;
mod walk;

use cursor::{decode_cursor, encode_cursor, fingerprint};
use stored::{StoredIndex, remember_index, stored_search};
use walk::{Found, assemble, search};

use super::result::Pipeline;
use super::{Failure, ToolCtx, ToolOutput, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    ErrorReason, GrepInput, GrepMatch, GrepResult, GrepResultTool, PruningMetadata, RpcError,
    SourceType, ToolName,
};
use crate::protocol::message;
use grep_regex::RegexMatcherBuilder;
use std::sync::Arc;
use std::time::Duration;

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
