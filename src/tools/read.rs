//! `read`: a UTF-8 text file under the root, paged by lines (`offset`/`limit`), optionally pruned
//! to a focus question, always within the response budget. Owns file access checks and paging;
//! pruning is [`crate::prune`], fitting arithmetic is [`crate::budget`].
//!
//! Memory stays bounded whatever the file size. A file up to [`STREAM_ABOVE`] bytes is read
//! whole, as before. A larger one is never loaded: one streaming pass in [`SCAN_CHUNK`] chunks
//! counts its lines (so `total_lines` stays exact), checks it is valid UTF-8, builds the sparse
//! line index of its artifact, and keeps only the page's window, clipped to what the page can
//! use (the response budget, or `--max-prune-input-bytes` with a question, plus a few bytes to know
//! there is more). When such a page is cut, or a window of the file (an offset or a limit) is
//! pruned for a question, its artifact is the file itself (a referenced store entry, recovered by
//! line through the index and refused once the file changes), not a copy; a huge file with invalid
//! UTF-8 is instead copied, decoded, into a spilled entry in a second streaming pass, so that its
//! recovered lines match the page's replacement characters. A pruned window's markers give the
//! file's line numbers, which its artifact recovers.
//! Must never read a file over [`STREAM_ABOVE`] into memory.

use super::result::Pipeline;
use super::{Failure, ToolCtx, ToolOutput, beneath, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    ErrorReason, ReadInput, ReadResult, ReadResultEncoding, ReadResultTool, RpcError, ToolName,
};
use crate::protocol::message;
use crate::store::{FileKey, LineIndex, LossyDecoder, SpillWriter, line_starts};
use std::io::Read;
use std::path::Path;

/// Files up to this size are read on the calling worker thread: from the page cache that takes
/// microseconds, less than handing the read to the blocking pool and back.
const INLINE_READ_MAX: u64 = 256 * 1024;

/// Files over this many bytes are streamed rather than read whole.
pub const STREAM_ABOVE: u64 = 8 * 1024 * 1024;
/// Read size of the streaming pass.
pub const SCAN_CHUNK: usize = 256 * 1024;

/// Runs `read`.
pub async fn run(input: ReadInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let p = Pipeline::new(ctx, "read", input.max_output_bytes.as_ref().map(|m| m.0));
    let root = &ctx.app.config.root;
    let lexical = paths::lexical(root, root, &input.path)
        .map_err(|m| message::invalid_field("/arguments/path", m))?;
    Ok(match page(&p, &input, &lexical).await {
        Ok(out) | Err(out) => out,
    })
}

/// The page `input` asks for, or the failure that stopped it, each as the model reads it.
async fn page(
    p: &Pipeline<'_>,
    input: &ReadInput,
    lexical: &Path,
) -> Result<ToolOutput, ToolOutput> {
    let ctx = p.ctx;
    let cfg = &ctx.app.config;
    let budget = p.budget;
    // Any I/O failure on the file, named with the path as the client gave it.
    let io_failed = |e: &dyn std::fmt::Display| {
        p.fail(fail(ErrorReason::IoError, format!("{}: {e}", input.path)))
    };

    // Opened once, beneath the root (no check-then-open race); every read below goes through this
    // handle, never through the path again. A stat and an open are microseconds: done inline
    // rather than through the blocking pool (two thread hand-offs were most of a small read's
    // latency).
    let beneath::Opened { file, meta, real } =
        beneath::open_file(&cfg.root, lexical).map_err(|e| open_failure(p, &input.path, e))?;
    let offset = input.offset.map(|o| o.get() as usize).unwrap_or(1);
    let limit = input.limit.map(|l| l.get() as usize).unwrap_or(usize::MAX);
    let question = input.context_focus_question.as_deref().map(String::as_str);
    // What the page can use: the budget's worth of text, or the pruner's input limit.
    let cap = if question.is_some() {
        budget.max(cfg.max_prune_input_bytes)
    } else {
        budget
    } + 8;
    let loaded = load(file, meta.len(), offset, limit, cap)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => p.fail(fail(
                ErrorReason::PermissionDenied,
                format!("permission denied: {}", input.path),
            )),
            _ => io_failed(&e),
        })?;
    crate::events::exec_ok(
        &ctx.request_id,
        "read",
        ms_since(p.start),
        loaded.file_bytes,
    );

    let display_path = paths::display(&cfg.root, &real);
    let file = StoredFile {
        label: &display_path,
        path: &real,
    };
    let (first, last, total_lines, file_bytes, replaced) = (
        loaded.first,
        loaded.last,
        loaded.total_lines,
        loaded.file_bytes,
        loaded.replaced,
    );
    let PrunedPage {
        pruned,
        within,
        source,
        selected,
    } = prune_page(p, loaded, question, &file)
        .await
        .map_err(|e| io_failed(&e))?;
    let selected = selected.as_str();
    let body: &str = pruned.text.as_deref().unwrap_or(selected);
    let applied = pruned.metadata.applied;

    let mut result = ReadResult {
        tool: ReadResultTool::Read,
        summary: String::new(),
        path: display_path.clone(),
        encoding: Some(ReadResultEncoding::Utf8),
        content: None,
        truncated: false,
        bytes: Some(file_bytes),
        total_lines: total_lines as u64,
        start_line: std::num::NonZeroU64::new(first as u64).expect("first >= 1"),
        end_line: last.max(first.saturating_sub(1)) as u64,
        replaced_invalid_utf8: replaced.then_some(true),
        has_more: None,
        next_cursor: None,
        artifact_ref: None,
        duration_ms: None,
        pruning: Some(pruned.metadata.clone()),
    };
    let body_starts = line_starts(body);
    let page = Page {
        first,
        total_lines,
        past_end: (first > total_lines)
            .then(|| format!("offset {offset} is past the end ({total_lines} lines)")),
        applied,
        replaced,
        body,
        body_starts: &body_starts,
        file_bytes,
        budget,
    };
    let full = page.render(body, pruned_note(&result), &mut result.clone());
    let out = if p.fits(&full) {
        if let Some(w) = &within {
            // The page shows the window as pruned (or whole, when pruning saved nothing).
            let shown = pruned
                .keep
                .clone()
                .unwrap_or_else(|| vec![true; line_count(selected)]);
            w.add_shown(&ctx.app.store, &shown).await;
        }
        full
    } else {
        let artifact = cut_artifact(p, &result, within.as_ref(), source, &file)
            .await
            .map_err(|e| io_failed(&e))?;
        page.cut(p, &mut result, &artifact)
    };
    Ok(finish(p, out, applied))
}

/// The file a page comes from, as the store names and reopens it.
struct StoredFile<'a> {
    /// The path as results show it (relative to the root).
    label: &'a str,
    /// The resolved path, reopened beneath the root for a decoded copy.
    path: &'a Path,
}

/// A page's text as pruning left it.
struct PrunedPage {
    /// The pruner's answer for the page's text.
    pruned: crate::prune::Pruned,
    /// Where the page sits in the stored file, when it is a window pruned for a question.
    within: Option<crate::prune::Within>,
    /// What a cut page's artifact is made from, unless the window's storing took it already.
    source: Option<Source>,
    /// The page's raw text (the window of the file).
    selected: String,
}

/// Prunes the page `loaded` holds for `question`. A window of the file (an offset or a limit) is
/// pruned where it sits: the whole file is stored first, so the markers give the file's line
/// numbers and its prune_id recovers them. The same artifact serves a cut page. What the page
/// shows is recorded once it is known (the caller's [`crate::prune::Within::add_shown`]).
async fn prune_page(
    p: &Pipeline<'_>,
    loaded: Loaded,
    question: Option<&str>,
    file: &StoredFile<'_>,
) -> std::io::Result<PrunedPage> {
    let Loaded {
        selected,
        window_bytes,
        total_lines,
        first,
        last,
        artifact,
        ..
    } = loaded;
    let source_type = crate::prune::detect_source(&selected, Some(file.label));
    let window = first > 1 || last < total_lines || window_bytes > selected.len() as u64;
    let attempted = p.ctx.app.pruner.declines(question, &selected).is_none();
    let (mut pruned, within, source) = if window && attempted {
        let at = crate::prune::Within {
            prune_id: store_artifact(p, file, artifact).await?,
            first_line: first,
            total_lines,
        };
        let pruned = p
            .prune_within(
                &selected,
                question,
                source_type,
                file.label,
                p.pruned_budget(),
                Some(at.clone()),
            )
            .await;
        (pruned, Some(at), None)
    } else {
        let pruned = p.prune(&selected, question, source_type, file.label).await;
        (pruned, None, Some(artifact))
    };
    if window_bytes > selected.len() as u64 {
        // The window was clipped to what the page can use: report its real size.
        pruned.metadata.raw_bytes = window_bytes;
    }
    Ok(PrunedPage {
        pruned,
        within,
        source,
        selected,
    })
}

/// The artifact a cut page names. Pruned output is cut: its prune_id holds the raw lines its
/// markers number. Raw output is cut: the whole file is the artifact, numbered as the file is (a
/// window's is stored already).
async fn cut_artifact(
    p: &Pipeline<'_>,
    result: &ReadResult,
    within: Option<&crate::prune::Within>,
    source: Option<Source>,
    file: &StoredFile<'_>,
) -> std::io::Result<String> {
    let applied = result.pruning.as_ref().is_some_and(|m| m.applied);
    let pruned_id = result.pruning.as_ref().and_then(|m| m.prune_id.clone());
    let artifact = match (pruned_id, applied, within) {
        (Some(id), true, _) => id,
        (_, _, Some(w)) => w.prune_id.clone(),
        _ => {
            let source = source.expect("the source is taken only for a window");
            store_artifact(p, file, source).await?
        }
    };
    if applied && within.is_none() {
        // The pruned text is cut: what the page shows is not what pruning kept. Nothing is
        // recorded as shown, so a recovery by question may return a line twice, never skip one.
        // (A cut window records nothing of its own and leaves the other windows' records.)
        p.ctx.app.store.record_shown(&artifact, &[]).await;
    }
    Ok(artifact)
}

/// A page of `read` as it is rendered: what it shows of the file and how a cut one says so.
/// [`Page::render`] is called once for the whole page and again for each shorter cut the budget
/// fitting tries.
struct Page<'a> {
    /// The page's first line number (`offset`).
    first: usize,
    /// Lines in the whole file.
    total_lines: usize,
    /// Set when `offset` is past the end: what the summary says instead of a line range.
    past_end: Option<String>,
    /// The page was pruned for a question (its lines are then not consecutive).
    applied: bool,
    /// Invalid UTF-8 was replaced in the page.
    replaced: bool,
    /// The page's text: pruned with markers, or the raw window.
    body: &'a str,
    /// Byte offsets of the starts of `body`'s lines.
    body_starts: &'a [usize],
    /// Bytes of the whole file, named in a cut raw page's note.
    file_bytes: u64,
    /// The call's response budget, named in a cut pruned page's note.
    budget: usize,
}

impl Page<'_> {
    /// The result showing `shown` (the page or a cut of it) with `note` after it, and its
    /// summary written into `result`.
    fn render(&self, shown: &str, note: Option<String>, result: &mut ReadResult) -> ToolOutput {
        result.content = Some(shown.to_string());
        let mut text = shown.to_string();
        if let Some(n) = &note {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(n);
        }
        // The page's own lines: a cut raw page ends where the page ends (`end_line`); a cut
        // pruned page says how many of its lines are shown.
        let window = self.past_end.clone().unwrap_or_else(|| {
            format!(
                "lines {}-{} of {}",
                self.first, result.end_line, self.total_lines
            )
        });
        let cut = match (result.truncated, self.applied) {
            (false, _) => String::new(),
            (true, false) => ", truncated".to_string(),
            (true, true) => format!(", truncated to its first {} lines", line_count(shown)),
        };
        result.summary = budget::summary(&format!(
            "{}: {window}{}{cut}{}",
            result.path,
            if self.applied {
                ", pruned to focus"
            } else {
                ""
            },
            if self.replaced {
                ", invalid UTF-8 replaced"
            } else {
                ""
            }
        ));
        ToolOutput::ok(text, result)
    }

    /// The page cut to what the budget holds, naming `artifact` for the rest: its first whole
    /// lines, or its first line clipped when not even one fits. `result` is marked truncated.
    fn cut(&self, p: &Pipeline<'_>, result: &mut ReadResult, artifact: &str) -> ToolOutput {
        result.truncated = true;
        result.artifact_ref = Some(artifact.to_string());
        result.has_more = Some(true);
        let (body, starts) = (self.body, self.body_starts);
        let note_for =
            |shown_lines: usize, clipped: bool| self.cut_note(shown_lines, clipped, artifact);
        let k = p.largest(starts.len(), |k| {
            let end = starts.get(k).copied().unwrap_or(body.len());
            self.render(&body[..end], Some(note_for(k, false)), &mut result.clone())
        });
        if k > 0 {
            let end = starts.get(k).copied().unwrap_or(body.len());
            if !self.applied {
                result.end_line = (self.first + k - 1) as u64;
            }
            return self.render(&body[..end], Some(note_for(k, false)), result);
        }
        let first_line_end = starts.get(1).copied().unwrap_or(body.len());
        let n = p.largest(first_line_end, |n| {
            self.render(
                budget::clip_utf8(body, n),
                Some(note_for(1, true)),
                &mut result.clone(),
            )
        });
        result.end_line = self.first as u64;
        self.render(budget::clip_utf8(body, n), Some(note_for(1, true)), result)
    }

    /// The note after a page cut to its first `shown_lines` lines (`clipped`: its first line
    /// cut too), naming how to get the rest from `artifact`.
    fn cut_note(&self, shown_lines: usize, clipped: bool, artifact: &str) -> String {
        let (first, total_lines) = (self.first, self.total_lines);
        if self.applied {
            return format!(
                "[truncated: pruned output cut after {shown_lines} lines to fit {}; raw lines: recover_text prune_id={artifact}]",
                budget::human_bytes(self.budget as u64)
            );
        }
        let shown_last = first + shown_lines.saturating_sub(1);
        let next = if clipped {
            format!(
                "line {first} is longer than the budget; read it with recover_text prune_id={artifact} ranges=[{{start_line:{first},end_line:{first}}}]"
            )
        } else {
            format!("next page: read offset={}", shown_last + 1)
        };
        format!(
            "[truncated: showing lines {first}-{shown_last} of {total_lines} ({} of {}); {next}; every byte: recover_text prune_id={artifact}]",
            budget::human_bytes(
                self.body_starts
                    .get(shown_lines)
                    .copied()
                    .unwrap_or(self.body.len()) as u64
            ),
            budget::human_bytes(self.file_bytes)
        )
    }
}

/// A `read` failure for `reason`, saying `message`.
fn fail(reason: ErrorReason, message: String) -> Failure {
    Failure::new(ToolName::Read, reason, message, 0)
}

/// The failure a file that could not be opened beneath the root answers, named with the path as
/// the client gave it.
fn open_failure(p: &Pipeline<'_>, path: &str, e: beneath::OpenError) -> ToolOutput {
    p.fail(match e {
        beneath::OpenError::NotFound => {
            fail(ErrorReason::NotFound, format!("no such file: {path}"))
                .hint("paths are relative to the root; use grep or bash ls to find the file")
        }
        beneath::OpenError::OutsideRoot => fail(
            ErrorReason::InvalidPath,
            format!("{path} resolves outside the root through a symlink"),
        ),
        beneath::OpenError::PermissionDenied => fail(
            ErrorReason::PermissionDenied,
            format!("permission denied: {path}"),
        ),
        beneath::OpenError::NotRegular { dir } => {
            let (what, hint) = if dir {
                (
                    "a directory",
                    "list it with bash (ls) or search it with grep",
                )
            } else {
                ("not a regular file", "read only regular files")
            };
            fail(ErrorReason::InvalidPath, format!("{path} is {what}")).hint(hint)
        }
        beneath::OpenError::Io(e) => fail(ErrorReason::IoError, format!("{path}: {e}")),
    })
}

/// The window `offset`/`limit` of an opened file of `len` bytes: small files are read inline
/// (like the open: a stat and a read are microseconds, two thread hand-offs were most of a small
/// read's latency), larger ones on the blocking pool, and files over [`STREAM_ABOVE`] streamed,
/// keeping at most `cap` bytes of the window.
async fn load(
    file: std::fs::File,
    len: u64,
    offset: usize,
    limit: usize,
    cap: usize,
) -> std::io::Result<Loaded> {
    if len <= INLINE_READ_MAX {
        read_all(file, len).map(|bytes| whole(bytes, offset, limit))
    } else if len <= STREAM_ABOVE {
        tokio::task::spawn_blocking(move || read_all(file, len))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
            .map(|bytes| whole(bytes, offset, limit))
    } else {
        tokio::task::spawn_blocking(move || scan(file, offset, limit, cap))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// Lines in `text` (a last line without a newline counts).
fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// A file's page window and what is known of the whole file.
struct Loaded {
    /// The window's text (lines `first..=last`), clipped for a streamed file.
    selected: String,
    /// Bytes of the window in the file (more than `selected` when clipped).
    window_bytes: u64,
    /// Lines in the file.
    total_lines: usize,
    /// First line of the window (`offset`, or `total_lines + 1` past the end).
    first: usize,
    /// Last line of the window (`first - 1` when empty).
    last: usize,
    /// The file's size in bytes.
    file_bytes: u64,
    /// Whether the file has invalid UTF-8 (replaced in what is shown and stored).
    replaced: bool,
    /// What the artifact is made from if the page is cut.
    artifact: Source,
}

/// What the artifact of a cut page is made from.
enum Source {
    /// The whole (decoded) text of a small file.
    Text(String),
    /// A streamed file: its identity and line index (valid UTF-8), or just its identity when it
    /// needs a decoded copy.
    Scanned {
        /// The file's identity.
        key: FileKey,
        /// Its line index; `None` when it needs a decoded copy.
        index: Option<LineIndex>,
    },
}

/// The window of a file read whole.
fn whole(bytes: Vec<u8>, offset: usize, limit: usize) -> Loaded {
    let file_bytes = bytes.len() as u64;
    let (text, replaced) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let starts = line_starts(&text);
    let total_lines = starts.len();
    let (first, last) = line_window(offset, limit, total_lines);
    let from = if first <= total_lines {
        starts[first - 1]
    } else {
        text.len()
    };
    let to = if last >= total_lines {
        text.len()
    } else {
        starts[last]
    };
    let selected = text[from..to].to_string();
    Loaded {
        window_bytes: selected.len() as u64,
        selected,
        total_lines,
        first,
        last,
        file_bytes,
        replaced,
        artifact: Source::Text(text),
    }
}

/// First and last line of the window `offset`, `limit` in a file of `total_lines`.
fn line_window(offset: usize, limit: usize, total_lines: usize) -> (usize, usize) {
    let first = offset.min(total_lines + 1);
    let last = first
        .saturating_add(limit)
        .saturating_sub(1)
        .min(total_lines);
    (first, last)
}

/// The whole of an open file (`len`: its size when opened, a capacity hint).
fn read_all(mut file: std::fs::File, len: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(len as usize);
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// One streaming pass over a large file: line count, UTF-8 validity, line index, and the bytes
/// of lines `offset..offset + limit` up to `cap` (the window's full size is counted).
fn scan(file: std::fs::File, offset: usize, limit: usize, cap: usize) -> std::io::Result<Loaded> {
    let key = FileKey::of(&file.metadata()?);
    // Only the bytes the identity covers: an append during the scan makes the entry stale, not
    // inconsistent.
    let mut file = file.take(key.len);
    let wanted_last = offset.saturating_add(limit).saturating_sub(1);
    let mut index = LineIndex::new();
    let mut buf = vec![0u8; SCAN_CHUNK + 4];
    let mut carry = 0usize;
    let mut valid = true;
    let mut line = 1usize;
    let mut window: Vec<u8> = Vec::new();
    let mut window_bytes = 0u64;
    loop {
        let n = match file.read(&mut buf[carry..carry + SCAN_CHUNK]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[carry..carry + n];
        index.feed(chunk);
        // Lines of this chunk: keep the window's bytes.
        let mut from = 0;
        while from < chunk.len() && line <= wanted_last {
            let end =
                crate::store::find_newline(&chunk[from..]).map_or(chunk.len(), |i| from + i + 1);
            if line >= offset {
                window_bytes += (end - from) as u64;
                let room = cap.saturating_sub(window.len());
                window.extend_from_slice(&chunk[from..end.min(from + room)]);
            }
            if chunk[end - 1] == b'\n' {
                line += 1;
            }
            from = end;
        }
        // UTF-8, with an incomplete sequence at the end carried into the next read.
        let filled = carry + n;
        carry = 0;
        if valid && let Err(e) = std::str::from_utf8(&buf[..filled]) {
            if e.error_len().is_none() {
                let start = e.valid_up_to();
                buf.copy_within(start..filled, 0);
                carry = filled - start;
            } else {
                valid = false;
            }
        }
    }
    if carry > 0 {
        valid = false;
    }
    let total_lines = index.lines;
    let (first, last) = line_window(offset, limit, total_lines);
    let clipped = window_bytes > window.len() as u64;
    let selected = LossyDecoder::default().decode(&window, !clipped);
    Ok(Loaded {
        selected,
        window_bytes,
        total_lines,
        first,
        last,
        file_bytes: key.len,
        replaced: !valid,
        artifact: Source::Scanned {
            key,
            index: valid.then_some(index),
        },
    })
}

/// Stores the artifact of a cut raw page and returns its id: the whole text of a small file, the
/// file itself for a large valid one, a decoded copy (spilled) for a large invalid one.
async fn store_artifact(
    p: &Pipeline<'_>,
    file: &StoredFile<'_>,
    source: Source,
) -> std::io::Result<String> {
    let (label, path) = (file.label, file.path);
    let ctx = p.ctx;
    let store = &ctx.app.store;
    match source {
        Source::Text(text) => Ok(p.store(label, text).await),
        Source::Scanned {
            key,
            index: Some(index),
        } => Ok(store.put_file(
            &ctx.session.id,
            "read",
            label,
            path.to_path_buf(),
            key,
            index,
        )),
        Source::Scanned { key, index: None } => {
            let (root, path) = (ctx.app.config.root.clone(), path.to_path_buf());
            let written = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
                // Reopened beneath the root, and only if it is still the file just scanned.
                let opened = beneath::open_file(&root, &path)
                    .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
                if FileKey::of(&opened.meta) != key {
                    return Err(std::io::Error::other("the file changed while it was read"));
                }
                let mut file = opened.file.take(key.len);
                let mut decoder = LossyDecoder::default();
                let mut out = SpillWriter::new();
                let mut buf = vec![0u8; SCAN_CHUNK];
                loop {
                    let n = file.read(&mut buf)?;
                    out.push_str(&decoder.decode(&buf[..n], n == 0))?;
                    if n == 0 {
                        break;
                    }
                }
                out.finish()
            })
            .await
            .map_err(std::io::Error::other)??;
            Ok(p.store_written(label, written))
        }
    }
}

/// A note after pruned output saying how to get the rest.
fn pruned_note(result: &ReadResult) -> Option<String> {
    let pruning = result.pruning.as_ref().filter(|p| p.applied)?;
    let id = pruning.prune_id.as_ref()?;
    Some(crate::prune::render::compact_note("", id))
}

/// Sets `duration_ms` in a finished output and logs the response.
fn finish(p: &Pipeline, mut out: ToolOutput, applied: bool) -> ToolOutput {
    out.structured["duration_ms"] = ms_since(p.start).into();
    p.respond(out, applied)
}
