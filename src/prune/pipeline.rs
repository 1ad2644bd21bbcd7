//! Seed 000's pruning path for one tool output: `req:prune_check` (question? backend? empty? too
//! large?), `req:calling_pruner` with a timeout, `req:pruner_error_fallback`, and the
//! `PruningMetadata` each outcome reports. Every backend's answer is reduced to a keep mask and
//! rendered by [`super::render`], so order, `max_prune_ratio`, `min_keep_lines` and markers hold
//! whatever the backend (the ratio and the minimum yield only to the response budget, which every
//! backend's answer is fitted to by relevance). The raw output is stored under the `prune_id`
//! before anything is cut.
//! The raw output is never lost: on any failure the tool returns it unchanged.

use super::backend::{self, Failure};
use super::engine::{self, Limits, Plan};
use super::render;
use crate::config::{Backend, Config};
use crate::contract::types::{
    PrunerError, PrunerErrorCode, PrunerRequest, PrunerRequestTool, PrunerResponse,
    PruningMetadata, PruningMetadataBackend, PruningMetadataReason, SourceType,
};
use crate::store::Store;
use crate::{events, tokens};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What one pruning pass needs from the call that asks for it. The tools build it from their own
/// context (`ToolCtx::pruning`), so this room never reaches up into theirs.
pub struct Call<'a> {
    /// The recovery store: the raw text goes under the `prune_id` before anything is cut.
    pub store: &'a Store,
    /// Whether results carry `structuredContent`: the model then reads the text as a JSON
    /// string, which is what `tokens_before` counts.
    pub output_schemas: bool,
    /// The calling session, whose outputs the stored text is listed with.
    pub session: &'a str,
    /// Server-side request id, for the events and the remote pruner's request.
    pub request_id: &'a str,
    /// Cancelled with the call: pruning stops and the raw output is returned.
    pub cancel: &'a CancellationToken,
    /// Where the client is warned of what it should know (a pruner failure).
    pub warn: &'a dyn Warn,
}

/// Sends the client of a call a warning.
pub trait Warn: Sync {
    /// Sends `data` as a `notifications/message` at level warning, if the client asked for it.
    fn warn(&self, data: serde_json::Value);
}

/// One pruning request from a tool.
pub struct Job<'a> {
    /// Tool name (`read`, `bash`, `grep`).
    pub tool: &'a str,
    /// Raw output.
    pub text: &'a str,
    /// The agent's focus question, if any.
    pub question: Option<&'a str>,
    /// Kind of text.
    pub source: SourceType,
    /// Short label for the store (path, command).
    pub label: &'a str,
    /// The label of the note the caller adds after a pruned text ([`render::compact_note`]):
    /// empty for `[pruned lines: …]`, `stdout` or `stderr` for a command's streams. That note is
    /// priced when deciding whether pruning saves anything (`grep`, whose note counts matches,
    /// and shows no markers, is priced as `[pruned lines: …]`: an estimate).
    pub note: &'a str,
    /// Bytes the pruned text may take in the response (the tool's budget less its own notes): the
    /// least relevant kept blocks are removed until it fits, whatever the backend.
    pub budget: Option<usize>,
    /// When `text` is a window of a larger text the caller already stored (a `read` with an
    /// offset or a limit): where it sits there. Its `prune_id` is then that text's, and markers
    /// give that text's line numbers, as its recovery does.
    pub within: Option<Within>,
}

/// Where a window sits in the larger stored text it was cut from.
#[derive(Debug, Clone)]
pub struct Within {
    /// The id the larger text is stored under.
    pub prune_id: String,
    /// Its line number (1-based) of the window's first line.
    pub first_line: usize,
    /// Its number of lines.
    pub total_lines: usize,
}

/// Records which lines of the text stored as `prune_id` the result of `job` showed (`shown`, one
/// flag per line of `job.text`), replacing what an earlier result recorded. Not for a window: its
/// caller knows whether the page showed what was kept, and adds it ([`Within::add_shown`]).
async fn record_shown(ctx: &Call<'_>, job: &Job<'_>, prune_id: &str, shown: &[bool]) {
    if job.within.is_none() {
        ctx.store.record_shown(prune_id, shown).await;
    }
}

impl Within {
    /// Adds the lines of the window a page showed (`shown`, one flag per window line) to the
    /// record of the stored text, keeping what other windows of it recorded (they share its id;
    /// atomic in the shared store too).
    pub async fn add_shown(&self, store: &crate::store::Store, shown: &[bool]) {
        let Ok(entry) = store.get_at_async(&self.prune_id, None).await else {
            return;
        };
        entry.add_shown(self.first_line.max(1) - 1, shown).await;
    }
}

/// The widest compact marker a plan of `job` (`line_count` lines) may need: its numbers are
/// those of the stored text, the whole file's for a window.
fn marker_bytes(job: &Job<'_>, line_count: usize) -> usize {
    let last = job.within.as_ref().map_or(0, |w| w.total_lines);
    widest_compact_marker(line_count.max(last))
}

/// What pruning produced.
#[derive(Debug)]
pub struct Pruned {
    /// The text to return (kept lines + markers) when pruning was applied.
    pub text: Option<String>,
    /// Which original lines were kept, when applied.
    pub keep: Option<Vec<bool>>,
    /// Seed 000 metadata.
    pub metadata: PruningMetadata,
}

/// The configured pruner.
pub struct Pruner {
    /// Selected backend.
    pub backend: Backend,
    /// Endpoint of the http / swe-pruner backend.
    endpoint: Option<url::Url>,
    /// Per-call timeout.
    timeout: Duration,
    /// Largest raw output that is pruned.
    max_input: usize,
    /// Threshold sent to SWE-Pruner.
    swe_threshold: f64,
    /// Shared HTTP client (remote backends only).
    client: Option<reqwest::Client>,
}

impl Pruner {
    /// Builds the pruner for `config`.
    pub fn new(config: &Config) -> Pruner {
        let remote = matches!(config.backend, Backend::Http | Backend::SwePruner);
        Pruner {
            backend: config.backend,
            endpoint: config.pruner_endpoint.clone(),
            timeout: config.pruner_timeout,
            max_input: config.max_prune_input_bytes,
            swe_threshold: config.swe_threshold,
            client: remote.then(backend::client),
        }
    }

    fn backend_name(&self) -> PruningMetadataBackend {
        self.backend
            .as_str()
            .parse()
            .expect("backend names match the schema")
    }

    /// Why pruning is not even attempted for `text` and `question` (none asked, pruning off, an
    /// empty output), or `None` when it is: a caller that stores its own text first asks this.
    pub fn declines(&self, question: Option<&str>, text: &str) -> Option<PruningMetadataReason> {
        if question.is_none() {
            Some(PruningMetadataReason::NoFocusQuestion)
        } else if self.backend == Backend::Off {
            Some(PruningMetadataReason::DisabledOrUnconfigured)
        } else if text.trim().is_empty() {
            Some(PruningMetadataReason::OutputEmpty)
        } else if text.len() > self.max_input {
            Some(PruningMetadataReason::TooLarge)
        } else {
            None
        }
    }

    /// Runs seed 000's pruning decision for one tool output.
    pub async fn apply(&self, ctx: &Call<'_>, job: Job<'_>) -> Pruned {
        let raw_bytes = job.text.len() as u64;
        let skip = |reason| Pruned {
            text: None,
            keep: None,
            metadata: not_attempted(reason, raw_bytes),
        };
        let question = match self.declines(job.question, job.text) {
            Some(reason) => return skip(reason),
            None => job.question.expect("a question when not declined"),
        };
        // Removed lines must stay recoverable: an output the store cannot hold is not pruned (a
        // window's larger text is stored already: whether it was is checked below).
        if job.within.is_none() && job.text.len() > ctx.store.limits().0 {
            return skip(PruningMetadataReason::TooLarge);
        }

        // Counted once pruning is attempted, so a fallback reports it too (tools::call adds
        // `tokens_after`, the tokens of the text returned, to every result).
        let raw_tokens = tokens::count(job.text) as u64;
        // What the model would read for the raw output: the text, or its JSON string when
        // output schemas put it in structuredContent (Claude Code and Codex read that).
        let tokens_before = if ctx.output_schemas {
            tokens_as_read(job.text, true)
        } else {
            raw_tokens
        };
        let lines = engine::split_lines(job.text);
        let prune_id = match &job.within {
            Some(w) => w.prune_id.clone(),
            None => {
                ctx.store
                    .put_async(ctx.session, job.tool, job.label, job.text.to_string())
                    .await
            }
        };
        let first_line = job.within.as_ref().map_or(1, |w| w.first_line.max(1));
        if let Some(why) = ctx.store.not_stored(&prune_id) {
            let why = why.not_stored(ctx.store.limits().0);
            return Pruned {
                text: None,
                keep: None,
                metadata: not_stored(raw_bytes, why),
            };
        }
        let endpoint = self
            .endpoint
            .as_ref()
            .map(|u| u.to_string())
            .unwrap_or_else(|| "builtin".into());
        events::pruner_call_start(ctx.request_id, &endpoint, job.tool, raw_bytes);
        let started = Instant::now();
        let plan = tokio::select! {
            r = self.plan(ctx, &job, question, &lines) => r,
            _ = ctx.cancel.cancelled() => Err(Failure { code: PrunerErrorCode::Timeout, message: "request cancelled while pruning".into() }),
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        let metadata = PruningMetadata {
            attempted: true,
            applied: false,
            fallback: false,
            reason: None,
            raw_bytes,
            pruned_bytes: None,
            pruner_duration_ms: Some(duration_ms),
            error: None,
            backend: Some(self.backend_name()),
            prune_id: Some(prune_id.clone()),
            tokens_before: Some(tokens_before),
            tokens_after: None,
        };
        match plan {
            Ok(plan) => {
                let planned = Planned {
                    plan,
                    lines: &lines,
                    first_line,
                    prune_id: &prune_id,
                    raw_tokens,
                    duration_ms,
                };
                answer(ctx, &job, planned, metadata).await
            }
            Err(f) => fell_back(ctx, &job, f, metadata, duration_ms),
        }
    }

    /// Asks the backend which lines to keep. The builtin engine's plan is used as it is (with its
    /// own reasons); a remote answer becomes a keep mask checked against the limits, then fitted
    /// to the budget.
    async fn plan(
        &self,
        ctx: &Call<'_>,
        job: &Job<'_>,
        question: &str,
        lines: &[&str],
    ) -> Result<Plan, Failure> {
        let endpoint = || {
            self.endpoint
                .as_ref()
                .expect("config guarantees an endpoint for remote backends")
        };
        let client = || self.client.as_ref().expect("remote backends have a client");
        match self.backend {
            Backend::Builtin | Backend::Off => {
                let (text, goal, source) = (job.text.to_string(), question.to_string(), job.source);
                let budget = job.budget.map(|bytes| engine::TextBudget {
                    bytes,
                    marker_bytes: marker_bytes(job, lines.len()),
                });
                let work = tokio::task::spawn_blocking(move || {
                    let lines = engine::split_lines(&text);
                    engine::plan_within(&lines, &goal, source, &Limits::default(), budget)
                });
                match tokio::time::timeout(self.timeout, work).await {
                    Ok(Ok(plan)) if plan.used_fallback => Err(Failure {
                        code: PrunerErrorCode::InvalidResponse,
                        message: format!("builtin engine fell back: {}", plan.warnings.join(", ")),
                    }),
                    Ok(Ok(plan)) => Ok(plan),
                    Ok(Err(e)) => Err(Failure {
                        code: PrunerErrorCode::InvalidResponse,
                        message: format!("builtin engine failed: {e}"),
                    }),
                    Err(_) => Err(Failure {
                        code: PrunerErrorCode::Timeout,
                        message: format!(
                            "builtin engine took over {} ms",
                            self.timeout.as_millis()
                        ),
                    }),
                }
            }
            Backend::Http => {
                let tool = match job.tool {
                    "read" => PrunerRequestTool::Read,
                    "bash" => PrunerRequestTool::Bash,
                    _ => PrunerRequestTool::Grep,
                };
                let req = PrunerRequest {
                    request_id: ctx.request_id.to_owned(),
                    tool,
                    focus_question: question.into(),
                    input: job.text.into(),
                    input_bytes: job.text.len() as u64,
                    max_output_bytes: None,
                };
                let out = backend::call_http(client(), endpoint(), self.timeout, req).await?;
                let plan =
                    plan_from_mask(lines, backend::keep_mask(lines, &out)?, &Limits::default())?;
                Ok(self.fit_remote(ctx, job, question, plan).await)
            }
            Backend::SwePruner => {
                let out = backend::call_swe(
                    client(),
                    endpoint(),
                    self.timeout,
                    question,
                    job.text,
                    self.swe_threshold,
                )
                .await?;
                let plan = plan_from_mask(
                    lines,
                    backend::swe_keep_mask(lines, &out)?,
                    &Limits::default(),
                )?;
                Ok(self.fit_remote(ctx, job, question, plan).await)
            }
        }
    }

    /// A remote answer fitted to the job's budget by the builtin strategies' relevance (remote
    /// answers carry no scores): the least relevant kept blocks go first, as for the builtin
    /// backend, instead of the tool cutting the text's middle by position. The fitting gets the
    /// pruner timeout; past it (or if it fails) the answer is used as it is, with a warning.
    async fn fit_remote(&self, ctx: &Call<'_>, job: &Job<'_>, question: &str, plan: Plan) -> Plan {
        let Some(bytes) = job.budget else {
            return plan;
        };
        let (text, goal, source) = (job.text.to_string(), question.to_string(), job.source);
        let unfitted = plan.clone();
        let marker_bytes = marker_bytes(job, plan.keep.len());
        let work = tokio::task::spawn_blocking(move || {
            let lines = engine::split_lines(&text);
            let budget = engine::TextBudget {
                bytes,
                marker_bytes,
            };
            engine::fit_plan(&lines, &goal, source, plan, budget)
        });
        let failed = match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(fitted)) => return fitted,
            Ok(Err(e)) => format!("fitting the answer to the budget failed: {e}"),
            Err(_) => format!(
                "fitting the answer to the budget took over {} ms",
                self.timeout.as_millis()
            ),
        };
        events::pruner_fit_failed(ctx.request_id, job.tool, &failed);
        unfitted
    }
}

/// `PruningMetadata` for output that was not sent to a pruner.
pub fn not_attempted(reason: PruningMetadataReason, raw_bytes: u64) -> PruningMetadata {
    PruningMetadata {
        attempted: false,
        applied: false,
        fallback: false,
        reason: Some(reason),
        raw_bytes,
        pruned_bytes: None,
        pruner_duration_ms: None,
        error: None,
        backend: None,
        prune_id: None,
        tokens_before: None,
        tokens_after: None,
    }
}

/// Metadata of an output left unpruned because the store could not keep it (`why`): lines it
/// removed could not be recovered, so it returns the raw output, as on a pruner failure, and
/// names no `prune_id`.
pub fn not_stored(raw_bytes: u64, why: String) -> PruningMetadata {
    PruningMetadata {
        attempted: true,
        fallback: true,
        reason: Some(PruningMetadataReason::PrunerError),
        error: Some(PrunerError {
            code: PrunerErrorCode::HttpError,
            message: format!(
                "not pruned: the raw output was not stored ({why}), so removed lines could not be recovered"
            ),
        }),
        ..not_attempted(PruningMetadataReason::PrunerError, raw_bytes)
    }
}

/// A plan from a remote keep mask. Keeping more is always allowed, so NO_PRUNE blocks are kept
/// whatever the backend said, and a mask that removes too much (beyond `max_prune_ratio`, or
/// under `min_keep_lines`) is repaired by adding back the removed lines nearest to kept ones
/// (context first), never rejected.
fn plan_from_mask(lines: &[&str], mut keep: Vec<bool>, limits: &Limits) -> Result<Plan, Failure> {
    for (k, p) in keep.iter_mut().zip(engine::protected_lines(lines)) {
        *k |= p;
    }
    let n = keep.len();
    let kept = keep.iter().filter(|k| **k).count();
    let max_removed = (limits.max_prune_ratio.clamp(0.0, 1.0) * n as f64 + 1e-9).floor() as usize;
    let must_keep = limits.min_keep_lines.min(n).max(n - max_removed.min(n));
    if kept < must_keep {
        // Distance of every removed line to the nearest kept line (none kept: all equal).
        let dist = engine::distances(&keep);
        let mut candidates: Vec<usize> = (0..n).filter(|&i| !keep[i]).collect();
        candidates.sort_by_key(|&i| (dist[i].unwrap_or(usize::MAX), i));
        for &i in candidates.iter().take(must_keep - kept) {
            keep[i] = true;
        }
    }
    Ok(Plan::from_keep(keep))
}

/// Source type of a tool output: by file extension when there is a path, else by content.
pub fn detect_source(text: &str, path: Option<&str>) -> SourceType {
    engine::detect_source_type(text, path)
}

/// Source type of a text with no path and no tool of ours behind it (a proxied tool's text): a
/// JSON document (laid out one record a line) or JSON lines are records, ranked as log lines;
/// anything else by its content. The first result and a recovery by question both ask here, so
/// they rank the text alike.
pub fn detect_unnamed(text: &str) -> SourceType {
    let json = |t: &str| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok();
    let lines = || text.lines().filter(|l| !l.trim().is_empty());
    if json(text) || (lines().next().is_some() && lines().all(json)) {
        SourceType::Logs
    } else {
        engine::detect_source_type(text, None)
    }
}

/// Bytes of the widest marker line a text of `n` lines can get (with its newline).
pub fn widest_marker(prune_id: &str, n: usize) -> usize {
    render::marker(prune_id, n, n, n, engine::widest_reason()).len() + 1
}

/// Bytes the widest compact marker of a text of `n` lines takes, newline included (what the
/// tools' pruned text spends on each removed run).
pub fn widest_compact_marker(n: usize) -> usize {
    // Both numbers as wide as the last line's (one digit more at worst: safe).
    render::compact_marker(n.max(1), n.max(1) + 1, None).len() + 1
}

/// Marks `meta` as a result that returned its raw text because the pruned one did not pay
/// (`no_savings`): not applied, no pruned size. The caller records the raw text as shown.
pub fn gave_way_to_raw(meta: &mut PruningMetadata) {
    meta.applied = false;
    meta.pruned_bytes = None;
    meta.reason = Some(PruningMetadataReason::NoSavings);
}

/// The o200k tokens the model reads for `text` as a tool returns it raw: the text, or its JSON
/// string when output schemas put it in `structuredContent` (Claude Code and Codex read that).
pub fn tokens_as_read(text: &str, output_schemas: bool) -> u64 {
    if output_schemas {
        tokens::count(&serde_json::to_string(text).expect("a str serializes")) as u64
    } else {
        tokens::count(text) as u64
    }
}

/// The `tokens_before` to report beside `read`, the tokens the model reads for the result.
/// Unpruned, the result is what the model would read for the raw output, header and notes
/// included, so the output's own count (`before`) is raised to it: a result that pruned nothing
/// never reports more tokens after than before.
pub fn settled_before(before: u64, applied: bool, read: u64) -> u64 {
    if applied { before } else { before.max(read) }
}

/// Folds the metadata of a second pruned stream (bash stderr) into the first.
pub fn merge_metadata(into: &mut PruningMetadata, other: &PruningMetadata) {
    into.raw_bytes += other.raw_bytes;
    into.attempted |= other.attempted;
    into.applied |= other.applied;
    into.fallback |= other.fallback;
    if into.error.is_none() {
        into.error = other.error.clone();
    }
    if into.prune_id.is_none() {
        into.prune_id = other.prune_id.clone();
    }
    if into.backend.is_none() {
        into.backend = other.backend;
    }
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.pruned_bytes = add(into.pruned_bytes, other.pruned_bytes);
    into.pruner_duration_ms = add(into.pruner_duration_ms, other.pruner_duration_ms);
    into.tokens_before = add(into.tokens_before, other.tokens_before);
    into.tokens_after = add(into.tokens_after, other.tokens_after);
    if into.attempted {
        into.reason = if into.fallback && !into.applied {
            Some(PruningMetadataReason::PrunerError)
        } else {
            None
        };
    }
}

/// Owner of the outputs stored for `POST /prune` (no MCP session lists them).
const PRUNE_ENDPOINT_OWNER: &str = "pruner-endpoint";

/// Serves one seed-000 pruner request (`POST /prune`) with the builtin engine: the kept lines,
/// with markers pointing at this server's store.
pub async fn serve_pruner_request(
    store: &Store,
    req: PrunerRequest,
) -> Result<PrunerResponse, String> {
    let source = match req.tool {
        PrunerRequestTool::Read => engine::detect_source_type(&req.input, None),
        PrunerRequestTool::Bash | PrunerRequestTool::Grep => SourceType::Logs,
    };
    let prune_id = store
        .put_async(
            PRUNE_ENDPOINT_OWNER,
            "prune",
            &req.request_id,
            req.input.clone(),
        )
        .await;
    if store.refused(&prune_id) {
        // Markers would point at lines nobody can get back: answer the input unpruned.
        return Ok(PrunerResponse {
            output_bytes: req.input.len() as u64,
            output: req.input,
        });
    }
    let text = req.input;
    let goal = req.focus_question;
    let out = tokio::task::spawn_blocking(move || {
        let lines = engine::split_lines(&text);
        let plan = engine::plan(&lines, &goal, source, &Limits::default());
        render::render(
            &lines,
            &plan,
            &prune_id,
            false,
            render::Markers::Canonical,
            text.ends_with('\n'),
        )
        .pruned_text
    })
    .await
    .map_err(|e| format!("engine failed: {e}"))?;
    Ok(PrunerResponse {
        output_bytes: out.len() as u64,
        output: out,
    })
}

/// A plan and what it was made from, for [`answer`].
struct Planned<'a> {
    /// The backend's decision.
    plan: Plan,
    /// The text's lines.
    lines: &'a [&'a str],
    /// The number of the first of them in the stored text: 1, or a window's first line.
    first_line: usize,
    /// Where the raw text is stored.
    prune_id: &'a str,
    /// The raw text's o200k tokens: a pruned text costing as many gives way to it.
    raw_tokens: u64,
    /// How long the backend took.
    duration_ms: u64,
}

/// The result of a plan: the pruned text and what it showed, or, when it costs as many tokens
/// as the raw text or more, nothing (the raw text is the better answer).
async fn answer(
    ctx: &Call<'_>,
    job: &Job<'_>,
    planned: Planned<'_>,
    mut metadata: PruningMetadata,
) -> Pruned {
    let Planned {
        plan,
        lines,
        first_line,
        prune_id,
        raw_tokens,
        duration_ms,
    } = planned;
    // Under a budget, a kept line longer than a quarter of it is shown clipped.
    let shown = render::clip_long_lines(
        lines,
        first_line,
        job.budget.unwrap_or(usize::MAX),
        prune_id,
    );
    let shown: Vec<&str> = shown.iter().map(|l| l.as_ref()).collect();
    let rendered = render::render_from(
        &shown,
        &plan,
        prune_id,
        false,
        render::Markers::Compact,
        job.text.ends_with('\n'),
        first_line,
    );
    // The note naming the prune id goes out with the markers, on a line of its own:
    // it is part of the cost.
    let note = tokens::count(&render::compact_note(job.note, prune_id)) as u64 + 1;
    let after = tokens::count(&rendered.pruned_text) as u64 + note;
    events::pruner_call_ok(
        ctx.request_id,
        job.tool,
        duration_ms,
        rendered.pruned_text.len() as u64,
    );
    if after >= raw_tokens {
        // Markers cost more than the removed lines: the raw text is the better answer.
        // It is shown whole when it fits the budget (else the caller cuts it, and
        // nothing is recorded as shown).
        let whole = job.budget.is_none_or(|b| job.text.len() <= b);
        record_shown(ctx, job, prune_id, &vec![whole; lines.len()]).await;
        gave_way_to_raw(&mut metadata);
        return Pruned {
            text: None,
            keep: None,
            metadata,
        };
    }
    metadata.applied = true;
    metadata.pruned_bytes = Some(rendered.pruned_text.len() as u64);
    // A recovery by question returns what this result did not show.
    record_shown(ctx, job, prune_id, &plan.keep).await;
    Pruned {
        text: Some(rendered.pruned_text),
        keep: Some(plan.keep),
        metadata,
    }
}

/// The result when the backend failed: the raw text, the failure in the metadata and the logs.
fn fell_back(
    ctx: &Call<'_>,
    job: &Job<'_>,
    f: Failure,
    mut metadata: PruningMetadata,
    duration_ms: u64,
) -> Pruned {
    events::pruner_call_failed(
        ctx.request_id,
        job.tool,
        &f.code.to_string(),
        duration_ms,
        &f.message,
    );
    ctx.warn.warn(
        serde_json::json!({ "event": "pruner.call_failed", "reason": f.code.to_string(), "message": f.message }),
    );
    metadata.fallback = true;
    metadata.reason = Some(PruningMetadataReason::PrunerError);
    metadata.error = Some(PrunerError {
        code: f.code,
        message: f.message,
    });
    Pruned {
        text: None,
        keep: None,
        metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::detect_unnamed;
    use crate::contract::types::SourceType;

    #[test]
    fn json_documents_and_json_lines_are_records() {
        assert_eq!(
            detect_unnamed("[\n{\"id\":1},\n{\"id\":2}\n]"),
            SourceType::Logs
        );
        assert_eq!(detect_unnamed("{\"id\":1}\n{\"id\":2}\n"), SourceType::Logs);
        let prose = "This is a paragraph about the tool.\nIt has two lines.\n";
        assert_eq!(detect_unnamed(prose), super::detect_source(prose, None));
        assert_eq!(detect_unnamed(""), super::detect_source("", None));
    }
}
