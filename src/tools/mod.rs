//! The tools: one file each, taking the generated input type and producing the generated output
//! type. This file owns what they share: the call context, input decoding, the tool-error shape
//! (seed 003 code + seed 000 reason) and the MCP result envelope. Transports are never visible here.

pub mod bash;
pub mod beneath;
pub mod grep;
pub mod health;
pub mod paths;
pub mod prune_text;
pub mod read;
pub mod recover_text;
pub mod resources;
pub mod result;

use crate::app::App;
use crate::contract::types::{
    ErrorCode, ErrorReason, PruningMetadata, PruningMetadataReason, RpcError, ToolError,
    ToolFailure, ToolName,
};
use crate::protocol::message;
use crate::protocol::progress::Progress;
use crate::protocol::session::Session;
use crate::prune::not_attempted;
use crate::{budget, events};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// Everything a tool may use while it runs.
pub struct ToolCtx {
    /// Shared server state.
    pub app: Arc<App>,
    /// The calling session (log level for `notifications/message`).
    pub session: Arc<Session>,
    /// Server-side request id for logs and pruner calls.
    pub request_id: String,
    /// Cancelled by `notifications/cancelled` / `$/cancelRequest`.
    pub cancel: CancellationToken,
    /// Progress reporter (no-op without a progress token).
    pub progress: Arc<Progress>,
    /// Channel for log notifications to the client.
    pub notify: UnboundedSender<Value>,
}

impl ToolCtx {
    /// What the pruning pipeline needs from this call.
    pub fn pruning(&self) -> crate::prune::Call<'_> {
        crate::prune::Call {
            store: &self.app.store,
            output_schemas: self.app.config.output_schemas,
            session: &self.session.id,
            request_id: &self.request_id,
            cancel: &self.cancel,
            warn: self,
        }
    }

    /// Sends `notifications/message` at `level` if the session asked for that level.
    pub fn log(&self, level: &str, data: Value) {
        if let Some(i) = crate::protocol::session::LOG_LEVELS
            .iter()
            .position(|l| *l == level)
            && self.session.wants_log(i)
        {
            let _ = self.notify.send(message::notification(
                "notifications/message",
                json!({ "level": level, "logger": "mcp-pruner", "data": data }),
            ));
        }
    }
}

impl crate::prune::Warn for ToolCtx {
    fn warn(&self, data: Value) {
        self.log("warning", data);
    }
}

/// `_meta` key under which `read`, `bash`, `grep` and `recover_text`-by-question results (and every
/// tool failure) carry their metadata for programs: the structured result without its bulk fields.
pub const RESULT_META_KEY: &str = "mcp-pruner/result";

/// Fields that hold a result's bulk (the file, the output, the matches, the lines recovered for a
/// question). The model reads them in `content[0].text`; `_meta` leaves them out so the bytes
/// travel once more at most.
const BULK_FIELDS: &[&str] = &["content", "stdout", "stderr", "matches", "raw_text"];

/// Fields the model does not need (sizes, durations, encoding, pruning metadata with its token
/// figures). Clients that prefer `structuredContent` feed it to the model, so these travel in
/// `_meta` only.
const META_FIELDS: &[&str] = &[
    "pruning",
    "duration_ms",
    "bytes",
    "encoding",
    "stdout_bytes",
    "stderr_bytes",
    "files_searched",
];

/// A finished tool call: becomes `{content, structuredContent?, _meta?, isError?}`.
///
/// What the model reads is `content[0].text` in every client unless output schemas are
/// advertised (`--output-schemas`): then `structuredContent` is sent, as the MCP specification
/// requires, and Claude Code and Codex feed the model its JSON instead. See [`ToolOutput::model_bytes`].
#[derive(Clone, Debug)]
pub struct ToolOutput {
    /// Text the model reads: the bulk once, plain, with the notes it needs.
    pub text: String,
    /// The structured result, valid against the tool's output schema (or `ToolFailure`).
    pub structured: Value,
    /// Whether this is a tool error.
    pub is_error: bool,
    /// `text` is the JSON of `structured` (seed 001's `prune_text`, `recover_text` by ranges,
    /// `health`): it is already the structured result, so nothing is split off into `_meta`.
    pub text_is_json: bool,
}

impl ToolOutput {
    /// A success result: `text` for the model, `structured` for programs.
    pub fn ok(text: String, structured: &impl Serialize) -> ToolOutput {
        ToolOutput {
            text,
            structured: serde_json::to_value(structured).expect("output serializes"),
            is_error: false,
            text_is_json: false,
        }
    }

    /// A success result whose text is its own JSON (seed 001: `content[0].text` is the result).
    pub fn json(structured: &impl Serialize) -> ToolOutput {
        let structured = serde_json::to_value(structured).expect("output serializes");
        ToolOutput {
            text: structured.to_string(),
            structured,
            is_error: false,
            text_is_json: true,
        }
    }

    /// Whether this is a tool error for `reason`.
    pub fn has_reason(&self, reason: ErrorReason) -> bool {
        self.is_error && self.structured["error"]["reason"] == json!(reason)
    }

    /// `structuredContent` as sent with `--output-schemas`: the result without its metadata.
    pub fn model_view(&self) -> Value {
        if self.text_is_json {
            return self.structured.clone();
        }
        without(&self.structured, META_FIELDS)
    }

    /// `_meta[RESULT_META_KEY]`: the result without its bulk.
    pub fn meta_view(&self) -> Value {
        without(&self.structured, BULK_FIELDS)
    }

    /// Bytes the model reads, which is what the response budget counts: `content[0].text`, or with
    /// output schemas the larger of it and the `structuredContent` JSON (Claude Code and Codex
    /// read the JSON, clients without structured support read the text).
    pub fn model_bytes(&self, output_schemas: bool) -> usize {
        if output_schemas && !self.text_is_json {
            self.text.len().max(budget::json_len(&self.model_view()))
        } else {
            self.text.len()
        }
    }

    /// What Claude Code and Codex feed the model for this result: `JSON.stringify(structuredContent)`
    /// when it is sent, `content[0].text` otherwise.
    pub fn model_text(&self, output_schemas: bool) -> std::borrow::Cow<'_, str> {
        if output_schemas && !self.text_is_json {
            self.model_view().to_string().into()
        } else {
            self.text.as_str().into()
        }
    }

    /// The MCP `CallToolResult`.
    pub fn into_result(self, output_schemas: bool) -> Value {
        let mut v = json!({ "content": [{ "type": "text", "text": self.text }] });
        if output_schemas {
            v["structuredContent"] = self.model_view();
        }
        if !self.text_is_json {
            v["_meta"] = json!({ RESULT_META_KEY: self.meta_view() });
        }
        if self.is_error {
            v["isError"] = Value::Bool(true);
        }
        v
    }
}

/// `value` (an object) without `fields`.
fn without(value: &Value, fields: &[&str]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !fields.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether a tool's results can be bulky (gets `_meta["anthropic/maxResultSizeChars"]`).
pub fn returns_bulk(tool: &str) -> bool {
    matches!(
        tool,
        "read" | "bash" | "grep" | "recover_text" | "prune_text"
    )
}

/// Runs tool `name` (already validated against its schema) and returns the MCP result.
///
/// Two rules hold here for every tool, whatever it did: a call the client cancelled ends with
/// `CANCELLED`, never a success (seed 003 section 7); and a failed call's `pruning` says why
/// nothing was pruned (no question asked, or the tool failed before there was output to prune).
///
/// Every call, answered or refused, leaves one row of counts in the savings ledger; a successful
/// `recover_text` that returns lines marks the pruned calls behind its `prune_id` recovered.
pub async fn call(name: &str, arguments: Value, ctx: &ToolCtx) -> Result<Value, RpcError> {
    let started = std::time::Instant::now();
    let recovering = (name == "recover_text")
        .then(|| arguments.get("prune_id").and_then(Value::as_str))
        .flatten()
        .map(str::to_string);
    match run(name, arguments, ctx).await {
        Ok((mut out, returned)) => {
            say_what_was_not_stored(&mut out, ctx);
            ledger_row(ctx, tool_name(name), Some(&out), returned, started);
            count_call(name, Some(&out), returned, started);
            // Only an answer that gave lines back recovers anything ("nothing new" does not).
            if let Some(id) = recovering
                && !out.is_error
                && recover_text::gave_lines(&out)
            {
                ctx.app.ledger.recovered(&id);
            }
            Ok(out.into_result(ctx.app.config.output_schemas))
        }
        Err(e) => {
            ledger_row(ctx, tool_name(name), None, 0, started);
            count_call(name, None, 0, started);
            Err(e)
        }
    }
}

/// Every id in a result that the store refused (an output larger than its byte cap, or a shared
/// store that could not be reached) is named in
/// the text the model reads, so no one is sent to `recover_text` for bytes that were never kept.
fn say_what_was_not_stored(out: &mut ToolOutput, ctx: &ToolCtx) {
    fn ids<'a>(v: &'a Value, found: &mut Vec<&'a str>) {
        match v {
            Value::String(s) if s.starts_with("prn_") => found.push(s),
            Value::Object(m) => m.values().for_each(|v| ids(v, found)),
            Value::Array(a) => a.iter().for_each(|v| ids(v, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    ids(&out.structured, &mut found);
    let mut refused: Vec<(String, crate::store::Missing)> = found
        .into_iter()
        .filter_map(|id| Some((id.to_string(), ctx.app.store.not_stored(id)?)))
        .collect();
    refused.dedup();
    let Some(&(_, why)) = refused.first() else {
        return;
    };
    let ids: Vec<&str> = refused.iter().map(|(id, _)| id.as_str()).collect();
    let note = format!(
        "not stored: the full output behind {} was not kept ({}), so recover_text cannot return it; what is shown is all there is",
        ids.join(", "),
        why.not_stored(ctx.app.store.limits().0)
    );
    if out.text_is_json {
        // The text is the result's JSON: the note goes into its warnings (prune_text already
        // said it there).
        return;
    }
    out.text.push_str(&format!("\n[{note}]\n"));
}

/// The `'static` name of a tool for its ledger row (tool names are a closed set).
fn tool_name(tool: &str) -> &'static str {
    match tool {
        "read" => "read",
        "bash" => "bash",
        "grep" => "grep",
        "prune_text" => "prune_text",
        "recover_text" => "recover_text",
        "health" => "health",
        _ => "other",
    }
}

/// The `'static` form of `PruningMetadata.reason` (a closed set; anything else is empty).
fn pruning_reason(reason: &str) -> &'static str {
    const REASONS: [&str; 6] = [
        "disabled_or_unconfigured",
        "no_focus_question",
        "too_large",
        "output_empty",
        "pruner_error",
        "no_savings",
    ];
    REASONS.into_iter().find(|r| *r == reason).unwrap_or("")
}

/// o200k tokens of a result's raw output, and whether pruning applied. Saved = raw - read on
/// every row, as `health`'s `tokens_saved` counts it: `tokens_before` is settled by then
/// ([`crate::prune::pipeline::settled_before`]), so a call that neither pruned nor cut saved
/// nothing, and a `bash` output cut to its budget without pruning saved what was cut.
/// prune_text reports its own counts in `stats` and pruned when it kept fewer lines.
fn raw_tokens(tool: &str, s: &Value, returned: u64) -> (u64, bool) {
    let u = |v: &Value| v.as_u64();
    let (raw, applied) = if tool == "prune_text" {
        let stats = &s["stats"];
        let applied = !stats["used_fallback"].as_bool().unwrap_or(true)
            && u(&stats["pruned_lines"]).unwrap_or(0) > 0;
        (u(&stats["tokens_est_before"]), applied)
    } else {
        let pruning = &s["pruning"];
        (
            u(&pruning["tokens_before"]),
            pruning["applied"].as_bool().unwrap_or(false),
        )
    };
    (raw.unwrap_or(returned).max(returned), applied)
}

/// Counts one call in the `/metrics` counters (a few atomic adds).
fn count_call(tool: &str, out: Option<&ToolOutput>, returned: u64, started: std::time::Instant) {
    let s = out.map(|o| &o.structured).unwrap_or(&Value::Null);
    let (tokens_raw, _) = raw_tokens(tool, s, returned);
    crate::metrics::record(crate::metrics::Call {
        tool: tool_name(tool),
        error: out.is_none_or(|o| o.is_error),
        elapsed: started.elapsed(),
        tokens_raw,
        tokens_read: returned,
        fallback: s["pruning"]["fallback"].as_bool().unwrap_or(false)
            || s["stats"]["used_fallback"].as_bool().unwrap_or(false),
    });
}

/// Queues the ledger row of one call: counts and names only, a fixed-size record (no allocation,
/// no lock once the session knows its client id).
fn ledger_row(
    ctx: &ToolCtx,
    tool: &'static str,
    out: Option<&ToolOutput>,
    returned: u64,
    started: std::time::Instant,
) {
    let ledger = &ctx.app.ledger;
    if !ledger.enabled() {
        return;
    }
    let s = out.map(|o| &o.structured).unwrap_or(&Value::Null);
    let pruning = &s["pruning"];
    let (tokens_raw, applied) = raw_tokens(tool, s, returned);
    let prune_id = if tool == "prune_text" {
        &s["prune_id"]
    } else {
        &pruning["prune_id"]
    };
    let ts_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ledger.record(crate::ledger::Record {
        ts_ms,
        client: ctx.session.ledger_client(ledger),
        tool,
        tokens_raw,
        tokens_read: returned,
        pruning_applied: applied,
        pruning_reason: if applied {
            ""
        } else {
            pruning_reason(pruning["reason"].as_str().unwrap_or(""))
        },
        backend: ctx.app.config.backend.as_str(),
        duration_ms: started.elapsed().as_millis() as u64,
        is_error: out.is_none_or(|o| o.is_error),
        prune_id: crate::ledger::PruneId::new(if applied {
            prune_id.as_str().unwrap_or("")
        } else {
            ""
        }),
    });
}

/// Queues the ledger row of a call `mcp-pruner proxy` forwarded, under `tool` (`UPSTREAM/TOOL`):
/// its pruning, the tokens the model reads, whether it failed.
pub fn ledger_proxied(
    ctx: &ToolCtx,
    tool: &'static str,
    pruning: &PruningMetadata,
    returned: u64,
    is_error: bool,
    started: std::time::Instant,
) {
    if let Some(before) = pruning.tokens_before {
        ctx.app
            .tokens_saved
            .fetch_add(before.saturating_sub(returned), Ordering::Relaxed);
    }
    let out = ToolOutput {
        text: String::new(),
        structured: json!({ "pruning": pruning }),
        is_error,
        text_is_json: false,
    };
    ledger_row(ctx, tool, Some(&out), returned, started);
}

/// Runs the tool; the output and the o200k tokens of what the model reads.
async fn run(name: &str, arguments: Value, ctx: &ToolCtx) -> Result<(ToolOutput, u64), RpcError> {
    events::exec_start(&ctx.request_id, name);
    let asked = arguments.get("context_focus_question").is_some();
    let mut out = match name {
        "read" => read::run(decode(arguments)?, ctx).await?,
        "bash" => bash::run(decode(arguments)?, ctx).await?,
        "grep" => grep::run(decode(arguments)?, ctx).await?,
        "prune_text" => prune_text::run(decode(arguments)?, ctx).await?,
        "recover_text" => recover_text::run(decode(arguments)?, ctx).await?,
        "health" => health::run(ctx),
        other => {
            return Err(message::invalid_field(
                "/name",
                format!("unknown tool {other:?}"),
            ));
        }
    };
    if ctx.cancel.is_cancelled() && !out.has_reason(ErrorReason::Cancelled) {
        let tool = name.parse().unwrap_or(ToolName::Health);
        events::cancelled(&ctx.request_id, name);
        out = Failure::new(tool, ErrorReason::Cancelled, "cancelled by the client", 0).output();
    }
    let schemas = ctx.app.config.output_schemas;
    // What the model reads, in o200k tokens, on every result that reports pruning.
    let returned = crate::tokens::count(&out.model_text(schemas)) as u64;
    if let Some(pruning) = out
        .structured
        .get_mut("pruning")
        .and_then(Value::as_object_mut)
    {
        pruning.insert("tokens_after".into(), json!(returned));
        let applied = pruning.get("applied") == Some(&json!(true));
        if let Some(before) = pruning.get("tokens_before").and_then(Value::as_u64) {
            let settled = crate::prune::pipeline::settled_before(before, applied, returned);
            pruning.insert("tokens_before".into(), json!(settled));
            ctx.app
                .tokens_saved
                .fetch_add(settled.saturating_sub(returned), Ordering::Relaxed);
        }
        // A failure built before there was output has no reason yet; one whose output skipped
        // pruning (timeout, cancel) was told "no question". Say what is true of this call.
        if out.is_error && pruning.get("attempted") == Some(&json!(false)) {
            let no_question = json!(PruningMetadataReason::NoFocusQuestion);
            match (asked, pruning.get("reason")) {
                (true, Some(r)) if *r == no_question => {
                    pruning.remove("reason");
                }
                (false, None) => {
                    pruning.insert("reason".into(), no_question);
                }
                _ => {}
            }
        }
    }
    Ok((out, returned))
}

/// Decodes validated arguments into the generated input type. Schema validation ran first, so a
/// failure here means the schema and the type disagree; it is still reported as -32602.
fn decode<T: DeserializeOwned>(arguments: Value) -> Result<T, RpcError> {
    serde_json::from_value(arguments)
        .map_err(|e| message::invalid_field("/arguments", e.to_string()))
}

/// The seed 003 code for a seed 000 reason (the reconciliation of DESIGN.md).
pub fn code_for(reason: ErrorReason) -> ErrorCode {
    use ErrorReason as R;
    match reason {
        R::NotFound | R::PruneIdNotFound => ErrorCode::NotFound,
        R::PermissionDenied => ErrorCode::Forbidden,
        R::InvalidPath | R::InvalidCwd | R::RgError | R::InvalidRange | R::InvalidCursor => {
            ErrorCode::InvalidRequest
        }
        R::Timeout => ErrorCode::ToolTimeout,
        R::Cancelled => ErrorCode::Cancelled,
        R::NonzeroExit => ErrorCode::CommandFailed,
        R::IoError | R::SpawnError | R::Internal => ErrorCode::Internal,
    }
}

/// Builder for a tool error result.
pub struct Failure {
    /// The structured failure.
    pub body: ToolFailure,
}

impl Failure {
    /// A failure of `tool` for `reason` with `message`; pruning metadata says nothing was attempted.
    pub fn new(
        tool: ToolName,
        reason: ErrorReason,
        message: impl Into<String>,
        raw_bytes: u64,
    ) -> Failure {
        let message = message.into();
        let code = code_for(reason);
        Failure {
            body: ToolFailure {
                tool,
                summary: budget::summary(&format!("{code}: {message}")),
                error: ToolError {
                    code,
                    reason,
                    message,
                    hint: None,
                    exit_code: None,
                    timeout_ms: None,
                },
                stdout: None,
                stderr: None,
                truncated: None,
                artifact_ref: None,
                stderr_ref: None,
                duration_ms: None,
                // Filled in by `call`, which knows whether a question was asked.
                pruning: Some(PruningMetadata {
                    reason: None,
                    ..not_attempted(PruningMetadataReason::NoFocusQuestion, raw_bytes)
                }),
            },
        }
    }

    /// Adds a remediation hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Failure {
        self.body.error.hint = Some(hint.into());
        self
    }

    /// The tool output (text for the model + structured failure).
    pub fn output(self) -> ToolOutput {
        let b = &self.body;
        let mut text = format!(
            "error {} ({}): {}",
            b.error.code, b.error.reason, b.error.message
        );
        if let Some(h) = &b.error.hint {
            text.push_str(&format!("\nhint: {h}"));
        }
        if let Some(out) = b.stdout.as_deref().filter(|s| !s.is_empty()) {
            text.push_str(&format!("\n--- stdout ---\n{out}"));
        }
        if let Some(err) = b.stderr.as_deref().filter(|s| !s.is_empty()) {
            text.push_str(&format!("\n--- stderr ---\n{err}"));
        }
        if let Some(r) = &b.artifact_ref {
            text.push_str(&format!(
                "\n[output truncated; full output: recover_text prune_id={r}]"
            ));
        }
        ToolOutput {
            text,
            structured: serde_json::to_value(b).expect("failure serializes"),
            is_error: true,
            text_is_json: false,
        }
    }
}

/// Elapsed milliseconds since `start`.
pub fn ms_since(start: std::time::Instant) -> u64 {
    start.elapsed().as_millis() as u64
}
