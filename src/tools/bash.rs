//! `bash`: one command through `bash -lc` in a directory under the root, with a timeout, a tree
//! kill, progress from its latest output lines, optional pruning, and a budgeted result whose full
//! streams stay recoverable. Owns argument checks and result shaping; spawning is
//! [`crate::process`].

use super::{Failure, ToolCtx, ToolOutput, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    BashInput, BashResult, BashResultTool, ErrorReason, PruningMetadata, RpcError, SourceType,
    ToolName,
};
use crate::process::{self, Ending, Spec};
use crate::prune::Job;
use crate::rpc::message;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default `timeout_ms` (seed 000).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Variables never passed to commands: our own secrets.
const SCRUBBED_ENV: &[&str] = &["MCP_PRUNER_AUTH_TOKEN"];

/// Runs `bash`.
pub async fn run(input: BashInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let start = Instant::now();
    let cfg = &ctx.app.config;
    let root = &cfg.root;
    if input.cmd.contains('\0') {
        // An argument cannot hold a NUL: the command could never be run as written.
        return Err(message::invalid_field(
            "/arguments/cmd",
            "command contains a NUL byte",
        ));
    }
    let cwd_lex = match &input.cwd {
        Some(c) => paths::lexical(root, root, c)
            .map_err(|m| message::invalid_field("/arguments/cwd", m))?,
        None => root.clone(),
    };
    let mut env: Vec<(String, String)> = input
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.sort();
    if let Some((k, _)) = env.iter().find(|(_, v)| v.contains('\0')) {
        return Err(message::invalid_field(
            &format!("/arguments/env/{k}"),
            "value contains a NUL byte",
        ));
    }
    let timeout_ms = input
        .timeout_ms
        .as_ref()
        .map(|t| t.0 as u64)
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    let budget = budget::for_call(cfg, input.max_output_bytes.as_ref().map(|m| m.0));

    let cwd = match paths::resolve(root, &cwd_lex) {
        Ok(p) if p.is_dir() => p,
        Ok(p) => {
            return Ok(fail(
                ctx,
                Failure::new(
                    ToolName::Bash,
                    ErrorReason::InvalidCwd,
                    format!("cwd {} is not a directory", paths::display(root, &p)),
                    0,
                ),
                start,
            ));
        }
        Err(paths::ResolveError::OutsideRoot) => {
            return Ok(fail(
                ctx,
                Failure::new(
                    ToolName::Bash,
                    ErrorReason::InvalidCwd,
                    "cwd resolves outside the root through a symlink".to_string(),
                    0,
                ),
                start,
            ));
        }
        Err(_) => {
            let shown = input.cwd.clone().unwrap_or_default();
            return Ok(fail(
                ctx,
                Failure::new(
                    ToolName::Bash,
                    ErrorReason::InvalidCwd,
                    format!("cwd {shown:?} does not exist under the root"),
                    0,
                )
                .hint("create it first or pass an existing directory"),
                start,
            ));
        }
    };
    for name in SCRUBBED_ENV {
        if !env.iter().any(|(k, _)| k == name) && std::env::var_os(name).is_some() {
            env.push((name.to_string(), String::new()));
        }
    }

    let progress = ctx.progress.clone();
    let on_output: Option<process::OnOutput> = progress.enabled().then(|| {
        Arc::new(move |lines: &str| progress.report(lines.to_string())) as process::OnOutput
    });
    let spec = Spec {
        program: "bash".into(),
        args: vec!["-lc".into(), input.cmd.clone()],
        cwd: cwd.clone(),
        env,
        timeout: Duration::from_millis(timeout_ms),
        kill_grace: cfg.kill_grace,
        capture_max: cfg.capture_max_bytes,
    };
    let outcome = match process::run(spec, &ctx.cancel, on_output).await {
        Ok(o) => o,
        Err(e) => {
            return Ok(fail(
                ctx,
                Failure::new(
                    ToolName::Bash,
                    ErrorReason::SpawnError,
                    format!("cannot start bash: {e}"),
                    0,
                )
                .hint("is bash installed and on PATH?"),
                start,
            ));
        }
    };
    if outcome.kill_escalated {
        crate::events::tool_kill_escalated(
            &ctx.request_id,
            "bash",
            cfg.kill_grace.as_millis() as u64,
        );
    }
    if outcome.leftovers_killed {
        crate::events::tool_leftovers_killed(&ctx.request_id, "bash");
    }
    let capture_cut = outcome.capture_truncated();
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
    let cwd_shown = paths::display(root, &cwd);
    let label = budget::summary(&input.cmd);

    let (reason, message, exit_code) = match outcome.ending {
        Ending::Exited(0) => (None, String::new(), 0),
        Ending::Exited(c) => (
            Some(ErrorReason::NonzeroExit),
            format!("command exited with status {c}"),
            c as i64,
        ),
        Ending::Signaled(s) => (
            Some(ErrorReason::NonzeroExit),
            format!("command killed by signal {s}"),
            128 + s as i64,
        ),
        Ending::TimedOut => {
            crate::events::exec_timeout(&ctx.request_id, "bash", timeout_ms);
            (
                Some(ErrorReason::Timeout),
                format!("timed out after {timeout_ms} ms; its process group was killed"),
                -1,
            )
        }
        Ending::Cancelled => {
            crate::events::cancelled(&ctx.request_id, "bash");
            (
                Some(ErrorReason::Cancelled),
                "cancelled by the client; its process group was killed".to_string(),
                -1,
            )
        }
    };
    if reason.is_none() {
        crate::events::exec_ok(
            &ctx.request_id,
            "bash",
            ms_since(start),
            outcome.stdout_total + outcome.stderr_total,
        );
    }

    // Pruning: each non-empty stream, with the same question, unless the call was cut short.
    let question = input.context_focus_question.as_deref().map(String::as_str);
    let prunable = matches!(outcome.ending, Ending::Exited(_) | Ending::Signaled(_));
    let (out_view, err_view, pruning) = prune_streams(
        ctx,
        &stdout,
        &stderr,
        if prunable { question } else { None },
        &label,
        budget::for_pruned_text(budget, cfg.output_schemas),
    )
    .await;

    let duration_ms = ms_since(start);
    let head = |reason: Option<ErrorReason>| match reason {
        None => format!("[exit 0 · {duration_ms} ms]"),
        Some(ErrorReason::Timeout) => format!("[timed out after {timeout_ms} ms]"),
        Some(ErrorReason::Cancelled) => "[cancelled]".to_string(),
        Some(_) => format!("[exit {exit_code} · {duration_ms} ms]"),
    };
    let build = |so: &str, se: &str, cut: bool, refs: &Refs| -> ToolOutput {
        let mut text = head(reason);
        if let Some(r) = reason {
            text = format!("error {} ({}): {message}\n{text}", super::code_for(r), r);
        }
        if !so.is_empty() {
            text.push('\n');
            text.push_str(so);
        }
        if !se.is_empty() {
            text.push_str(if text.ends_with('\n') {
                "[stderr]\n"
            } else {
                "\n[stderr]\n"
            });
            text.push_str(se);
        }
        let truncated = cut || capture_cut;
        if capture_cut {
            text.push_str(&format!(
                "\n[output exceeded the {} capture cap per stream; the excess was discarded]",
                budget::human_bytes(cfg.capture_max_bytes as u64)
            ));
        }
        match reason {
            None => {
                let r = BashResult {
                    tool: BashResultTool::Bash,
                    summary: budget::summary(&format!(
                        "exit 0 in {duration_ms} ms, {} out / {} err{}",
                        budget::human_bytes(outcome.stdout_total),
                        budget::human_bytes(outcome.stderr_total),
                        if truncated { ", truncated" } else { "" }
                    )),
                    cmd: budget::clip_long_line(&input.cmd).unwrap_or_else(|| input.cmd.clone()),
                    cwd: cwd_shown.clone(),
                    stdout: Some(so.to_string()),
                    stderr: Some(se.to_string()),
                    exit_code: 0,
                    timed_out: false,
                    truncated,
                    stdout_bytes: Some(outcome.stdout_total),
                    stderr_bytes: Some(outcome.stderr_total),
                    artifact_ref: refs.stdout.clone(),
                    stderr_ref: refs.stderr.clone(),
                    duration_ms: Some(duration_ms),
                    pruning: Some(pruning.clone()),
                };
                ToolOutput::ok(text, &r)
            }
            Some(r) => {
                let mut f = Failure::new(ToolName::Bash, r, message.clone(), pruning.raw_bytes);
                f.body.error.exit_code = (exit_code >= 0).then_some(exit_code);
                if r == ErrorReason::Timeout {
                    f.body.error.timeout_ms = Some(timeout_ms);
                    f.body.error.hint =
                        Some("raise timeout_ms (max 300000) or narrow the command".into());
                }
                f.body.stdout = Some(so.to_string());
                f.body.stderr = Some(se.to_string());
                f.body.truncated = Some(truncated);
                f.body.artifact_ref = refs.stdout.clone();
                f.body.stderr_ref = refs.stderr.clone();
                f.body.duration_ms = Some(duration_ms);
                f.body.pruning = Some(pruning.clone());
                let mut out = f.output();
                out.text = text;
                out
            }
        }
    };

    let out = fit(ctx, budget, &out_view, &err_view, &build);
    if let Some(r) = reason {
        crate::events::exec_failed(
            &ctx.request_id,
            "bash",
            &r.to_string(),
            &message,
            (exit_code >= 0).then_some(exit_code),
        );
    } else {
        crate::events::respond_ok(
            &ctx.request_id,
            "bash",
            if pruning.applied { "pruned" } else { "raw" },
            out.text.len() as u64,
        );
    }
    Ok(out)
}

/// One stream as shown: its text, and the prune id holding its raw bytes (when stored).
struct View {
    text: String,
    stored: Option<String>,
    /// Whether `stored` has the same line numbering as `text` (false once pruned).
    exact: bool,
    raw: String,
}

/// Where the full streams are kept.
#[derive(Default)]
struct Refs {
    stdout: Option<String>,
    stderr: Option<String>,
}

async fn prune_streams(
    ctx: &ToolCtx,
    stdout: &str,
    stderr: &str,
    question: Option<&str>,
    label: &str,
    budget: usize,
) -> (View, View, PruningMetadata) {
    let out = ctx
        .app
        .pruner
        .apply(
            ctx,
            Job {
                tool: "bash",
                text: stdout,
                question,
                source: SourceType::Logs,
                label,
                budget: Some(if stderr.is_empty() {
                    budget
                } else {
                    budget / 2
                }),
            },
        )
        .await;
    let mut meta = out.metadata.clone();
    let err = if stderr.is_empty() {
        None
    } else {
        let e = ctx
            .app
            .pruner
            .apply(
                ctx,
                Job {
                    tool: "bash",
                    text: stderr,
                    question,
                    source: SourceType::Logs,
                    label,
                    budget: Some(budget / 2),
                },
            )
            .await;
        crate::prune::merge_metadata(&mut meta, &e.metadata);
        Some(e)
    };
    let view = |raw: &str, p: Option<crate::prune::Pruned>| match p
        .and_then(|p| p.text.map(|t| (t, p.metadata.prune_id)))
    {
        Some((text, id)) => View {
            text,
            stored: id,
            exact: false,
            raw: raw.to_string(),
        },
        None => View {
            text: raw.to_string(),
            stored: None,
            exact: true,
            raw: raw.to_string(),
        },
    };
    (view(stdout, Some(out)), view(stderr, err), meta)
}

/// Shows as many head/tail lines of both streams as the budget allows; stores what is cut.
fn fit(
    ctx: &ToolCtx,
    budget: usize,
    out: &View,
    err: &View,
    build: &dyn Fn(&str, &str, bool, &Refs) -> ToolOutput,
) -> ToolOutput {
    let schemas = ctx.app.config.output_schemas;
    let limit = budget;
    let mut refs = Refs {
        stdout: out.stored.clone(),
        stderr: err.stored.clone(),
    };
    let whole = build(&out.text, &err.text, false, &refs);
    if whole.model_bytes(schemas) <= limit
        && !out
            .text
            .lines()
            .chain(err.text.lines())
            .any(|l| l.len() > budget::MAX_LINE_BYTES)
    {
        return whole;
    }
    // Store the raw streams so every byte stays recoverable.
    if refs.stdout.is_none() && !out.raw.is_empty() {
        refs.stdout = Some(
            ctx.app
                .store
                .put(&ctx.session.id, "bash", "stdout", out.raw.clone()),
        );
    }
    if refs.stderr.is_none() && !err.raw.is_empty() {
        refs.stderr = Some(
            ctx.app
                .store
                .put(&ctx.session.id, "bash", "stderr", err.raw.clone()),
        );
    }
    let cut = |k: usize| {
        let so = refs
            .stdout
            .as_deref()
            .map(|id| budget::head_tail(&out.text, k, id, out.exact).0)
            .unwrap_or_default();
        let se = refs
            .stderr
            .as_deref()
            .map(|id| budget::head_tail(&err.text, k, id, err.exact).0)
            .unwrap_or_default();
        build(&so, &se, true, &refs)
    };
    let max_lines = out.text.lines().count().max(err.text.lines().count());
    let k = budget::largest_fitting(max_lines, |k| cut(k).model_bytes(schemas) <= limit);
    cut(k)
}

fn fail(ctx: &ToolCtx, mut f: Failure, start: Instant) -> ToolOutput {
    f.body.duration_ms = Some(ms_since(start));
    crate::events::exec_failed(
        &ctx.request_id,
        "bash",
        &f.body.error.reason.to_string(),
        &f.body.error.message,
        None,
    );
    f.output()
}
