//! `bash`: one command through `bash -lc` in a directory under the root, with a timeout, a tree
//! kill, progress from its latest output lines, optional pruning, and a budgeted result whose full
//! streams stay recoverable. Owns argument checks and result shaping; spawning is
//! [`crate::process`].

use super::result::Pipeline;
use super::{Failure, ToolCtx, ToolOutput, beneath, ms_since, paths};
use crate::budget;
use crate::contract::types::{
    BashInput, BashResult, BashResultTool, ErrorReason, PruningMetadata, RpcError, SourceType,
    ToolName,
};
use crate::process::{self, Ending, Spec};
use crate::protocol::message;
use std::sync::Arc;
use std::time::Duration;

/// Default `timeout_ms` (seed 000).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Bytes of each stream held in memory (and so shown, pruned and stored as one text); a longer
/// stream goes to a temp file as it arrives and from there to the store, and only its first and
/// last lines are kept in memory for the page. At least the largest `--max-prune-input-bytes`,
/// so that whatever may be pruned is held whole.
pub const STREAM_MEMORY_MAX: usize = 2 * 1024 * 1024;

/// Variables never passed to commands: our own secrets.
const SCRUBBED_ENV: &[&str] = &["MCP_PRUNER_AUTH_TOKEN"];

/// A call's arguments, checked.
struct Checked {
    /// The working directory asked for, resolved lexically under the root (not yet opened).
    cwd_lex: std::path::PathBuf,
    /// The variables set for the command, sorted by name.
    env: Vec<(String, String)>,
    /// How long the command may run.
    timeout_ms: u64,
}

/// Checks what the schema cannot: no NUL byte in the command or a variable's value, a `cwd`
/// under the root. Each refusal names its field.
fn check(input: &BashInput, root: &std::path::Path) -> Result<Checked, RpcError> {
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
        None => root.to_path_buf(),
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
    Ok(Checked {
        cwd_lex,
        env,
        timeout_ms,
    })
}

/// How a command ended, as [`log_outcome`] reports it (its streams gone to the store by then).
struct Ran {
    /// Its tree had to be killed with SIGKILL after the grace period.
    kill_escalated: bool,
    /// Processes it left behind were killed.
    leftovers_killed: bool,
    /// Exit, signal, timeout or cancel.
    ending: Ending,
    /// Bytes it wrote to stdout and stderr.
    bytes: u64,
}

/// Logs how the command ended: a kill that had to escalate, processes left behind and killed, a
/// timeout or a cancel, and, when it exited with status 0 (`ok`), its duration and output size (a
/// failed ending's `exec_failed` is logged by [`run`], with the result).
fn log_outcome(ctx: &ToolCtx, ran: &Ran, ok: bool, timeout_ms: u64, duration_ms: u64) {
    let id = &ctx.request_id;
    if ran.kill_escalated {
        let grace = ctx.app.config.kill_grace.as_millis() as u64;
        crate::events::tool_kill_escalated(id, "bash", grace);
    }
    if ran.leftovers_killed {
        crate::events::tool_leftovers_killed(id, "bash");
    }
    match ran.ending {
        Ending::TimedOut => crate::events::exec_timeout(id, "bash", timeout_ms),
        Ending::Cancelled => crate::events::cancelled(id, "bash"),
        Ending::Exited(_) | Ending::Signaled(_) => {}
    }
    if ok {
        crate::events::exec_ok(id, "bash", duration_ms, ran.bytes);
    }
}

/// Runs `bash`.
pub async fn run(input: BashInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let p = Pipeline::new(ctx, "bash", input.max_output_bytes.as_ref().map(|m| m.0));
    let cfg = &ctx.app.config;
    let root = &cfg.root;
    let Checked {
        cwd_lex,
        mut env,
        timeout_ms,
    } = check(&input, root)?;
    let budget = p.budget;

    // Opened beneath the root, and entered by that handle (fchdir): a directory swapped for a
    // link out of the root after this check cannot move the command there.
    let (cwd_dir, cwd) = match beneath::open_dir(root, &cwd_lex) {
        Ok(opened) => opened,
        Err(e) => return Ok(p.fail(cwd_failure(root, &cwd_lex, input.cwd.as_deref(), e))),
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
        cwd_dir: Some(cwd_dir),
        env,
        timeout: Duration::from_millis(timeout_ms),
        kill_grace: cfg.kill_grace,
        capture_max: cfg.capture_max_bytes,
        memory_max: STREAM_MEMORY_MAX,
    };
    let outcome = match process::run(spec, &ctx.cancel, on_output).await {
        Ok(o) => o,
        Err(e) => {
            return Ok(p.fail(
                Failure::new(
                    ToolName::Bash,
                    ErrorReason::SpawnError,
                    format!("cannot start bash: {e}"),
                    0,
                )
                .hint("is bash installed and on PATH?"),
            ));
        }
    };
    let capture_cut = outcome.capture_truncated();
    let ran = Ran {
        kill_escalated: outcome.kill_escalated,
        leftovers_killed: outcome.leftovers_killed,
        ending: outcome.ending,
        bytes: outcome.stdout_total + outcome.stderr_total,
    };
    let (stdout, stderr) = (
        Stream::take(&p, "stdout", outcome.stdout, budget).await,
        Stream::take(&p, "stderr", outcome.stderr, budget).await,
    );
    // Logged once the raw output is stored (`exec_ok`: raw output ready).
    let (reason, message, exit_code) = ending(&ran.ending, timeout_ms);
    log_outcome(ctx, &ran, reason.is_none(), timeout_ms, ms_since(p.start));
    let cwd_shown = paths::display(root, &cwd);
    let label = budget::summary(&input.cmd);

    // Pruning: each non-empty stream, with the same question, unless the call was cut short.
    let question = input.context_focus_question.as_deref().map(String::as_str);
    let prunable = matches!(ran.ending, Ending::Exited(_) | Ending::Signaled(_));
    let (out_view, err_view, pruning) = prune_streams(
        &p,
        stdout,
        stderr,
        if prunable { question } else { None },
        &label,
    )
    .await;

    let finished = Finished {
        reason,
        message,
        exit_code,
        timeout_ms,
        duration_ms: ms_since(p.start),
        capture_cut,
        capture_max: cfg.capture_max_bytes,
        stdout_total: outcome.stdout_total,
        stderr_total: outcome.stderr_total,
        cmd: &input.cmd,
        cwd: cwd_shown,
        pruning,
    };
    let build = |so: &str, se: &str, cut: bool, refs: &Refs| -> ToolOutput {
        finished.output(so, se, cut, refs, &out_view, &err_view)
    };

    let mut out = fit(&p, &out_view, &err_view, &build).await;
    settle_tokens_before(&p, &finished, &mut out, &out_view, &err_view);
    if let Some(r) = reason {
        crate::events::exec_failed(
            &ctx.request_id,
            "bash",
            &r.to_string(),
            &finished.message,
            (exit_code >= 0).then_some(exit_code),
        );
        return Ok(out);
    }
    Ok(p.respond(out, finished.pruning.applied))
}

/// One captured stream as text: whole, or (past [`STREAM_MEMORY_MAX`]) already in the store with
/// only its first and last lines in memory.
enum Stream {
    /// Held whole (lossily decoded).
    Whole(String),
    /// Streamed from the capture file into the store.
    Stored {
        /// Its first and last lines, for the page.
        excerpt: budget::page::Excerpt,
        /// The prune id holding it whole.
        id: String,
    },
}

impl Stream {
    /// Decodes a captured stream; a spilled one is copied into the store (decoded and
    /// line-indexed in chunks, off the runtime) as it is read, keeping at each end the lines a
    /// page of `budget` bytes can show.
    async fn take(
        p: &Pipeline<'_>,
        label: &'static str,
        captured: process::Captured,
        budget: usize,
    ) -> Stream {
        let (file, len) = match captured {
            process::Captured::Memory(bytes) => {
                return Stream::Whole(match String::from_utf8(bytes) {
                    Ok(s) => s,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                });
            }
            process::Captured::Spilled { file, len } => (file, len),
        };
        let copied = tokio::task::spawn_blocking(move || copy_spilled(file, len, budget)).await;
        match copied {
            Ok(Ok((written, excerpt))) => {
                let id = p.store_written(label, written);
                Stream::Stored { excerpt, id }
            }
            // The temp file could not be read back: say so in place of the output.
            Ok(Err(e)) => Stream::Whole(format!("[{label} could not be read back: {e}]\n")),
            Err(e) => Stream::Whole(format!("[{label} could not be read back: {e}]\n")),
        }
    }

    /// The text when held whole.
    fn whole(&self) -> Option<&str> {
        match self {
            Stream::Whole(t) => Some(t),
            Stream::Stored { .. } => None,
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Stream::Whole(t) => t.is_empty(),
            Stream::Stored { excerpt, .. } => excerpt.bytes() == 0,
        }
    }
}

/// Reads a spilled capture in chunks into a store-ready [`crate::store::Written`] and an
/// excerpt of its first and last lines (a `budget` of bytes at each end).
fn copy_spilled(
    mut file: std::fs::File,
    len: u64,
    budget: usize,
) -> std::io::Result<(crate::store::Written, budget::page::Excerpt)> {
    use std::io::Read;
    let mut writer = crate::store::SpillWriter::new();
    // A shown line costs at least its kept bytes: a budget's worth at each end fills any page.
    let mut excerpt = budget::page::Excerpt::new(budget);
    let mut decoder = crate::store::LossyDecoder::default();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut read = 0u64;
    loop {
        let n = file.read(&mut chunk)?;
        read += n as u64;
        let last = n == 0 || read >= len;
        let text = decoder.decode(&chunk[..n], last);
        writer.push_str(&text)?;
        excerpt.feed(&text);
        if last {
            break;
        }
    }
    excerpt.finish();
    Ok((writer.finish()?, excerpt))
}

/// The failure a `cwd` that cannot be entered answers (`shown`: the `cwd` as the client gave it).
fn cwd_failure(
    root: &std::path::Path,
    lexical: &std::path::Path,
    shown: Option<&str>,
    e: beneath::OpenError,
) -> Failure {
    let shown = shown.unwrap_or_default();
    let invalid =
        |message: String| Failure::new(ToolName::Bash, ErrorReason::InvalidCwd, message, 0);
    match e {
        beneath::OpenError::NotRegular { .. } => invalid(format!(
            "cwd {} is not a directory",
            paths::display(root, lexical)
        )),
        beneath::OpenError::OutsideRoot => {
            invalid("cwd resolves outside the root through a symlink".to_string())
        }
        beneath::OpenError::NotFound => {
            invalid(format!("cwd {shown:?} does not exist under the root"))
                .hint("create it first or pass an existing directory")
        }
        e => invalid(format!("cwd {shown:?} cannot be opened: {e:?}")),
    }
}

/// What a finished command's result says besides its two shown streams: how it ended, how long
/// it took, how much it wrote, and how its streams were pruned. [`Finished::output`] renders it
/// for any shown streams, so that fitting to the budget can try shorter ones.
struct Finished<'a> {
    /// Why the call failed (a non-zero exit, a timeout, a cancellation), or `None`.
    reason: Option<ErrorReason>,
    /// The failure's message (empty on success).
    message: String,
    /// The exit status (-1 when the command was killed or never exited).
    exit_code: i64,
    /// The call's timeout, named in a timeout's head line and hint.
    timeout_ms: u64,
    /// Wall time from the call's start.
    duration_ms: u64,
    /// A stream passed the capture cap and its excess was discarded.
    capture_cut: bool,
    /// The capture cap per stream (`--capture-max-bytes`), named when it cut.
    capture_max: usize,
    /// Bytes the command wrote to stdout.
    stdout_total: u64,
    /// Bytes the command wrote to stderr.
    stderr_total: u64,
    /// The command as the caller wrote it.
    cmd: &'a str,
    /// The working directory as the caller sees it (relative to the root).
    cwd: String,
    /// How the streams were pruned.
    pruning: PruningMetadata,
}

impl Finished<'_> {
    /// The head line: the exit status and time, or how the command was stopped.
    fn head(&self) -> String {
        match self.reason {
            None => format!("[exit 0 · {} ms]", self.duration_ms),
            Some(ErrorReason::Timeout) => format!("[timed out after {} ms]", self.timeout_ms),
            Some(ErrorReason::Cancelled) => "[cancelled]".to_string(),
            Some(_) => format!("[exit {} · {} ms]", self.exit_code, self.duration_ms),
        }
    }

    /// The text the model reads: the error line if any, the head, the shown streams `so` and
    /// `se`, the notes naming the prune ids of `out` and `err` when their markers show, and the
    /// capture cap when it cut.
    fn text(&self, so: &str, se: &str, out: &View, err: &View) -> String {
        let mut text = self.head();
        if let Some(r) = self.reason {
            text = format!(
                "error {} ({}): {}\n{text}",
                super::code_for(r),
                r,
                self.message
            );
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
        for note in [
            pruned_note(out, so, "stdout"),
            pruned_note(err, se, "stderr"),
        ]
        .into_iter()
        .flatten()
        {
            text.push_str(if text.ends_with('\n') { "" } else { "\n" });
            text.push_str(&note);
        }
        if self.capture_cut {
            text.push_str(&format!(
                "\n[output exceeded the {} capture cap per stream; the excess was discarded]",
                budget::human_bytes(self.capture_max as u64)
            ));
        }
        text
    }

    /// The result with streams `so` and `se` shown (`cut` when the budget shortened them) and
    /// the artifact ids in `refs`: a [`BashResult`], or the failure body of a failed call.
    fn output(
        &self,
        so: &str,
        se: &str,
        cut: bool,
        refs: &Refs,
        out: &View,
        err: &View,
    ) -> ToolOutput {
        let text = self.text(so, se, out, err);
        let truncated = cut || self.capture_cut;
        let Some(r) = self.reason else {
            let result = BashResult {
                tool: BashResultTool::Bash,
                summary: budget::summary(&format!(
                    "exit 0 in {} ms, {} out / {} err{}",
                    self.duration_ms,
                    budget::human_bytes(self.stdout_total),
                    budget::human_bytes(self.stderr_total),
                    if truncated { ", truncated" } else { "" }
                )),
                cmd: budget::clip_long_line(self.cmd).unwrap_or_else(|| self.cmd.to_string()),
                cwd: self.cwd.clone(),
                stdout: Some(so.to_string()),
                stderr: Some(se.to_string()),
                exit_code: 0,
                timed_out: false,
                truncated,
                stdout_bytes: Some(self.stdout_total),
                stderr_bytes: Some(self.stderr_total),
                artifact_ref: refs.stdout.clone(),
                stderr_ref: refs.stderr.clone(),
                duration_ms: Some(self.duration_ms),
                pruning: Some(self.pruning.clone()),
            };
            return ToolOutput::ok(text, &result);
        };
        let mut f = Failure::new(
            ToolName::Bash,
            r,
            self.message.clone(),
            self.pruning.raw_bytes,
        );
        f.body.error.exit_code = (self.exit_code >= 0).then_some(self.exit_code);
        if r == ErrorReason::Timeout {
            f.body.error.timeout_ms = Some(self.timeout_ms);
            f.body.error.hint = Some("raise timeout_ms (max 300000) or narrow the command".into());
        }
        f.body.stdout = Some(so.to_string());
        f.body.stderr = Some(se.to_string());
        f.body.truncated = Some(truncated);
        f.body.artifact_ref = refs.stdout.clone();
        f.body.stderr_ref = refs.stderr.clone();
        f.body.duration_ms = Some(self.duration_ms);
        f.body.pruning = Some(self.pruning.clone());
        let mut out = f.output();
        out.text = text;
        out
    }
}

/// How a run ended, as the result says it: the error reason (none for exit 0), its message, and
/// the exit code (128 + the signal when killed by one, -1 when the command was stopped).
fn ending(ending: &Ending, timeout_ms: u64) -> (Option<ErrorReason>, String, i64) {
    match *ending {
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
        Ending::TimedOut => (
            Some(ErrorReason::Timeout),
            format!("timed out after {timeout_ms} ms; its process group was killed"),
            -1,
        ),
        Ending::Cancelled => (
            Some(ErrorReason::Cancelled),
            "cancelled by the client; its process group was killed".to_string(),
            -1,
        ),
    }
}

/// One stream as shown: its text, and the prune id holding its raw bytes (when stored).
struct View {
    /// What is shown before cutting (pruned or raw); empty for a stream held in the store.
    text: String,
    /// The prune id holding the raw stream, once stored.
    stored: Option<String>,
    /// Whether `stored` has the same line numbering as `text` (false once pruned).
    exact: bool,
    /// The raw stream when held whole (stored only if the page must be cut).
    raw: String,
    /// A stream held in the store: its first and last lines, the page's source.
    excerpt: Option<budget::page::Excerpt>,
}

/// The note naming the prune id behind the compact markers of a pruned stream, when `shown`
/// (the stream as it went out) still has one. A raw output line that reads exactly like a marker
/// counts as one: at worst a note names the prune id of a stream whose markers the page cut.
fn pruned_note(view: &View, shown: &str, what: &str) -> Option<String> {
    let id = view.stored.as_deref().filter(|_| !view.exact)?;
    let re = compact_marker_re();
    shown
        .lines()
        .any(|l| re.is_match(l))
        .then(|| crate::prune::render::compact_note(what, id))
}

/// [`crate::prune::render::COMPACT_MARKER_PATTERN`], compiled once.
fn compact_marker_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(crate::prune::render::COMPACT_MARKER_PATTERN).expect("a valid pattern")
    })
}

/// Where the full streams are kept.
#[derive(Default)]
struct Refs {
    /// The artifact id of the whole stdout, when it was stored.
    stdout: Option<String>,
    /// The same for stderr.
    stderr: Option<String>,
}

/// Prunes each stream held whole (stderr only when not empty, the budget halved between them)
/// and merges their metadata.
async fn prune_streams(
    p: &Pipeline<'_>,
    stdout: Stream,
    stderr: Stream,
    question: Option<&str>,
    label: &str,
) -> (View, View, PruningMetadata) {
    let budget = p.pruned_budget();
    let both = !stderr.is_empty();
    let too_large = |s: &Stream| match s {
        Stream::Stored { excerpt, .. } => Some(crate::prune::not_attempted(
            crate::contract::types::PruningMetadataReason::TooLarge,
            excerpt.bytes(),
        )),
        Stream::Whole(_) => None,
    };
    let half = if both { budget / 2 } else { budget };
    let out = prune_one(p, stdout.whole(), question, label, half, "stdout").await;
    let mut meta = out
        .as_ref()
        .map(|p| p.metadata.clone())
        .or_else(|| too_large(&stdout))
        .expect("a stream is whole or stored");
    let err = if both {
        let e = prune_one(p, stderr.whole(), question, label, budget / 2, "stderr").await;
        let e_meta = e
            .as_ref()
            .map(|p| p.metadata.clone())
            .or_else(|| too_large(&stderr))
            .expect("a stream is whole or stored");
        crate::prune::merge_metadata(&mut meta, &e_meta);
        e
    } else {
        None
    };
    let view = |stream: Stream, p: Option<crate::prune::Pruned>| match stream {
        Stream::Stored { excerpt, id } => View {
            text: String::new(),
            stored: Some(id),
            exact: true,
            raw: String::new(),
            excerpt: Some(excerpt),
        },
        Stream::Whole(raw) => match p.and_then(|p| p.text.map(|t| (t, p.metadata.prune_id))) {
            Some((text, id)) => View {
                text,
                stored: id,
                exact: false,
                raw,
                excerpt: None,
            },
            None => View {
                text: raw.clone(),
                stored: None,
                exact: true,
                raw,
                excerpt: None,
            },
        },
    };
    (view(stdout, out), view(stderr, err), meta)
}

/// One stream (`stream`: `stdout` or `stderr`, as its note names it) through the pruner (logs,
/// with the question), when it is held whole.
async fn prune_one(
    p: &Pipeline<'_>,
    text: Option<&str>,
    question: Option<&str>,
    label: &str,
    budget: usize,
    stream: &str,
) -> Option<crate::prune::Pruned> {
    let job = crate::prune::Job {
        note: stream,
        budget: Some(budget),
        ..p.job(text?, question, SourceType::Logs, label)
    };
    Some(p.apply(job).await)
}

/// Sets `tokens_before` of a result that does not show the raw output whole (a stream pruned or
/// cut) to the o200k tokens of the result that would: each stream held whole shown raw, with the
/// same head line and stream label (a stream held in the store as its page shows it). The
/// streams' own count leaves out the header that `tokens_after` counts.
fn settle_tokens_before(
    p: &Pipeline<'_>,
    finished: &Finished<'_>,
    out: &mut ToolOutput,
    out_view: &View,
    err_view: &View,
) {
    let pruning = &out.structured["pruning"];
    let shown_raw = pruning["applied"] != true && out.structured["truncated"] != true;
    if pruning["tokens_before"].is_null() || shown_raw {
        return;
    }
    // A stream held whole is shown raw; a stored one as the result shows it.
    let shown = |key: &str| out.structured[key].as_str().unwrap_or_default();
    let (so, se) = (
        out_view
            .excerpt
            .as_ref()
            .map_or(&*out_view.raw, |_| shown("stdout")),
        err_view
            .excerpt
            .as_ref()
            .map_or(&*err_view.raw, |_| shown("stderr")),
    );
    let stored = |v: &View| v.excerpt.as_ref().and(v.stored.clone());
    let refs = Refs {
        stdout: stored(out_view),
        stderr: stored(err_view),
    };
    // Views of raw streams: no marker, so no note naming a prune id.
    let unpruned = || View {
        text: String::new(),
        stored: None,
        exact: true,
        raw: String::new(),
        excerpt: None,
    };
    let cut = refs.stdout.is_some() || refs.stderr.is_some();
    let whole = finished.output(so, se, cut, &refs, &unpruned(), &unpruned());
    let before = crate::tokens::count(&whole.model_text(p.schemas())) as u64;
    out.structured["pruning"]["tokens_before"] = before.into();
}

/// Shows as many head/tail lines of both streams as the budget allows; stores what is cut.
async fn fit(
    p: &Pipeline<'_>,
    out: &View,
    err: &View,
    build: &(dyn Fn(&str, &str, bool, &Refs) -> ToolOutput + Sync),
) -> ToolOutput {
    let mut refs = Refs {
        stdout: out.stored.clone(),
        stderr: err.stored.clone(),
    };
    let held = out.excerpt.is_none() && err.excerpt.is_none();
    if held {
        let whole = build(&out.text, &err.text, false, &refs);
        if p.fits(&whole)
            && !out
                .text
                .lines()
                .chain(err.text.lines())
                .any(|l| l.len() > budget::MAX_LINE_BYTES)
        {
            return whole;
        }
    }
    // A pruned stream about to be cut: the page shows part of what pruning kept. Nothing is
    // recorded as shown, so a recovery by question may return a line twice, never skip one.
    for v in [out, err] {
        if let Some(id) = v.stored.as_deref().filter(|_| !v.exact) {
            p.ctx.app.store.record_shown(id, &[]).await;
        }
    }
    // Store the raw streams so every byte stays recoverable.
    if refs.stdout.is_none() && !out.raw.is_empty() {
        refs.stdout = Some(p.store("stdout", out.raw.clone()).await);
    }
    if refs.stderr.is_none() && !err.raw.is_empty() {
        refs.stderr = Some(p.store("stderr", err.raw.clone()).await);
    }
    // Each stream's lines, indexed once for every size tried.
    let (out_lines, err_lines) = (
        budget::page::TextLines::new(&out.text),
        budget::page::TextLines::new(&err.text),
    );
    let page = |v: &View, whole: &budget::page::TextLines, id: Option<&str>, k: usize| {
        let Some(id) = id else {
            return String::new();
        };
        match &v.excerpt {
            Some(e) => budget::page::head_tail(e, k, id, true).0,
            None => budget::page::head_tail(whole, k, id, v.exact).0,
        }
    };
    let cut = |k: usize| {
        let so = page(out, &out_lines, refs.stdout.as_deref(), k);
        let se = page(err, &err_lines, refs.stderr.as_deref(), k);
        build(&so, &se, true, &refs)
    };
    use budget::page::LineSource;
    let showable = |v: &View, whole: &budget::page::TextLines| match &v.excerpt {
        Some(e) => e.showable(),
        None => whole.showable(),
    };
    let max_lines = showable(out, &out_lines).max(showable(err, &err_lines));
    cut(p.largest(max_lines, cut))
}
