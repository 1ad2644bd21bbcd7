//! `read`: a UTF-8 text file under the root, paged by lines (`offset`/`limit`), optionally pruned
//! to a focus question, always within the response budget. Owns file access checks and paging;
//! pruning is [`crate::prune`], fitting arithmetic is [`crate::budget`].

use super::{Failure, ToolCtx, ToolOutput, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    ErrorReason, ReadInput, ReadResult, ReadResultEncoding, ReadResultTool, RpcError, ToolName,
};
use crate::prune::Job;
use crate::rpc::message;
use crate::store::line_starts;
use std::time::Instant;

/// Runs `read`.
pub async fn run(input: ReadInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let start = Instant::now();
    let cfg = &ctx.app.config;
    let root = &cfg.root;
    let lexical = paths::lexical(root, root, &input.path)
        .map_err(|m| message::invalid_field("/arguments/path", m))?;
    let budget = budget::for_call(cfg, input.max_output_bytes.as_ref().map(|m| m.0));
    let fail = |reason, msg: String| Failure::new(ToolName::Read, reason, msg, 0);

    let real = match paths::resolve(root, &lexical) {
        Ok(p) => p,
        Err(paths::ResolveError::NotFound) => {
            return Ok(done(
                ctx,
                fail(
                    ErrorReason::NotFound,
                    format!("no such file: {}", input.path),
                )
                .hint("paths are relative to the root; use grep or bash ls to find the file"),
                start,
            ));
        }
        Err(paths::ResolveError::OutsideRoot(real)) => {
            return Ok(done(
                ctx,
                fail(
                    ErrorReason::InvalidPath,
                    format!(
                        "{} resolves outside the root (to {}) through a symlink",
                        input.path,
                        real.display()
                    ),
                ),
                start,
            ));
        }
        Err(paths::ResolveError::PermissionDenied) => {
            return Ok(done(
                ctx,
                fail(
                    ErrorReason::PermissionDenied,
                    format!("permission denied: {}", input.path),
                ),
                start,
            ));
        }
        Err(paths::ResolveError::Io(e)) => {
            return Ok(done(
                ctx,
                fail(ErrorReason::IoError, format!("{}: {e}", input.path)),
                start,
            ));
        }
    };
    let meta = match tokio::fs::metadata(&real).await {
        Ok(m) => m,
        Err(e) => {
            return Ok(done(
                ctx,
                fail(ErrorReason::IoError, format!("{}: {e}", input.path)),
                start,
            ));
        }
    };
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        let hint = if meta.is_dir() {
            "list it with bash (ls) or search it with grep"
        } else {
            "read only regular files"
        };
        return Ok(done(
            ctx,
            fail(
                ErrorReason::InvalidPath,
                format!("{} is {what}", input.path),
            )
            .hint(hint),
            start,
        ));
    }
    let bytes = match tokio::fs::read(&real).await {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Ok(done(
                ctx,
                fail(
                    ErrorReason::PermissionDenied,
                    format!("permission denied: {}", input.path),
                ),
                start,
            ));
        }
        Err(e) => {
            return Ok(done(
                ctx,
                fail(ErrorReason::IoError, format!("{}: {e}", input.path)),
                start,
            ));
        }
    };
    let file_bytes = bytes.len() as u64;
    let (text, replaced) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    crate::events::exec_ok(&ctx.request_id, "read", ms_since(start), file_bytes);

    // Line window.
    let starts = line_starts(&text);
    let total_lines = starts.len();
    let offset = input.offset.map(|o| o.get() as usize).unwrap_or(1);
    let limit = input.limit.map(|l| l.get() as usize).unwrap_or(usize::MAX);
    let first = offset.min(total_lines + 1);
    let last = first
        .saturating_add(limit)
        .saturating_sub(1)
        .min(total_lines);
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
    let selected = &text[from..to];

    let display_path = paths::display(root, &real);
    let source = crate::prune::detect_source(selected, Some(&display_path));
    let question = input.context_focus_question.as_deref().map(String::as_str);
    let pruned = ctx
        .app
        .pruner
        .apply(
            ctx,
            Job {
                tool: "read",
                text: selected,
                question,
                source,
                label: &display_path,
                budget: Some(budget::for_pruned_text(budget)),
            },
        )
        .await;
    let body: &str = pruned.text.as_deref().unwrap_or(selected);

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
        pruning: Some(pruned.metadata),
    };
    let window = if first > total_lines {
        format!("offset {offset} is past the end ({total_lines} lines)")
    } else {
        format!("lines {first}-{last} of {total_lines}")
    };
    let applied = pruned_applied(&result);

    // Fit the body to the budget: whole lines first, a clipped line if not even one fits.
    let body_starts = line_starts(body);
    let render = |shown: &str, note: Option<String>, result: &mut ReadResult| -> ToolOutput {
        result.content = Some(shown.to_string());
        let mut text = shown.to_string();
        if let Some(n) = &note {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(n);
        }
        result.summary = budget::summary(&format!(
            "{}: {window}{}{}{}",
            result.path,
            if applied { ", pruned to focus" } else { "" },
            if result.truncated { ", truncated" } else { "" },
            if replaced {
                ", invalid UTF-8 replaced"
            } else {
                ""
            }
        ));
        ToolOutput::ok(text, result)
    };
    let schemas = cfg.output_schemas;
    let limit_bytes = budget;
    let full = render(body, pruned_note(&result), &mut result.clone());
    let out = if full.model_bytes(schemas) <= limit_bytes {
        full
    } else {
        result.truncated = true;
        // Pruned output is cut: its prune_id holds the raw lines its markers number. Raw output is
        // cut: the whole file is the artifact, numbered as the file is.
        let artifact = match (
            result.pruning.as_ref().and_then(|p| p.prune_id.as_ref()),
            applied,
        ) {
            (Some(id), true) => id.clone(),
            _ => ctx.app.store.put("read", &display_path, text.clone()),
        };
        result.artifact_ref = Some(artifact.clone());
        result.has_more = Some(true);
        let note_for = |shown_lines: usize, clipped: bool| -> String {
            if applied {
                format!(
                    "[truncated: pruned output cut after {shown_lines} lines to fit {}; raw lines: recover_text prune_id={artifact}]",
                    budget::human_bytes(budget as u64)
                )
            } else {
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
                        body_starts.get(shown_lines).copied().unwrap_or(body.len()) as u64
                    ),
                    budget::human_bytes(file_bytes)
                )
            }
        };
        let k = budget::largest_fitting(body_starts.len(), |k| {
            let end = body_starts.get(k).copied().unwrap_or(body.len());
            render(&body[..end], Some(note_for(k, false)), &mut result.clone()).model_bytes(schemas)
                <= limit_bytes
        });
        if k > 0 {
            let end = body_starts.get(k).copied().unwrap_or(body.len());
            if !applied {
                result.end_line = (first + k - 1) as u64;
            }
            render(&body[..end], Some(note_for(k, false)), &mut result)
        } else {
            let first_line_end = body_starts.get(1).copied().unwrap_or(body.len());
            let n = budget::largest_fitting(first_line_end, |n| {
                render(
                    budget::clip_utf8(body, n),
                    Some(note_for(1, true)),
                    &mut result.clone(),
                )
                .model_bytes(schemas)
                    <= limit_bytes
            });
            result.end_line = first as u64;
            render(
                budget::clip_utf8(body, n),
                Some(note_for(1, true)),
                &mut result,
            )
        }
    };
    Ok(finish(ctx, out, start, applied))
}

/// Whether pruning was applied to this result's text.
fn pruned_applied(result: &ReadResult) -> bool {
    result.pruning.as_ref().is_some_and(|p| p.applied)
}

/// A note after pruned output saying how to get the rest.
fn pruned_note(result: &ReadResult) -> Option<String> {
    let pruning = result.pruning.as_ref().filter(|p| p.applied)?;
    let id = pruning.prune_id.as_ref()?;
    Some(format!(
        "[pruned to the focus question; removed lines: recover_text prune_id={id}]"
    ))
}

/// Sets `duration_ms` in a finished output and logs the response.
fn finish(ctx: &ToolCtx, mut out: ToolOutput, start: Instant, applied: bool) -> ToolOutput {
    let ms = ms_since(start);
    out.structured["duration_ms"] = ms.into();
    crate::events::respond_ok(
        &ctx.request_id,
        "read",
        if applied { "pruned" } else { "raw" },
        out.text.len() as u64,
    );
    out
}

/// Logs and finishes a failure.
fn done(ctx: &ToolCtx, mut failure: Failure, start: Instant) -> ToolOutput {
    failure.body.duration_ms = Some(ms_since(start));
    crate::events::exec_failed(
        &ctx.request_id,
        "read",
        &failure.body.error.reason.to_string(),
        &failure.body.error.message,
        None,
    );
    failure.output()
}
