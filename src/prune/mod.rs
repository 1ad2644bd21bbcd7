//! Pruning for `context_focus_question` (seed 000's `req:prune_check` .. `req:respond_*`).
//! Until the engine lands every request reports `attempted=false, reason=disabled_or_unconfigured`.

use crate::config::{Backend, Config};
use crate::contract::types::{PruningMetadata, PruningMetadataReason, SourceType};
use crate::tools::{ToolCtx, not_attempted};

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
}

/// What pruning produced.
pub struct Pruned {
    /// The text to return when pruning was applied.
    pub text: Option<String>,
    /// Which original lines were kept (when applied).
    pub keep: Option<Vec<bool>>,
    /// Seed 000 metadata.
    pub metadata: PruningMetadata,
}

/// The configured pruner.
pub struct Pruner {
    /// Selected backend.
    pub backend: Backend,
}

impl Pruner {
    /// Builds the pruner for `config`.
    pub fn new(config: &Config) -> Pruner {
        Pruner {
            backend: config.backend,
        }
    }

    /// Runs seed 000's pruning decision for one tool output.
    pub async fn apply(&self, _ctx: &ToolCtx, job: Job<'_>) -> Pruned {
        let raw = job.text.len() as u64;
        let reason = if job.question.is_none() {
            PruningMetadataReason::NoFocusQuestion
        } else {
            PruningMetadataReason::DisabledOrUnconfigured
        };
        Pruned {
            text: None,
            keep: None,
            metadata: not_attempted(reason, raw),
        }
    }
}

/// Source type of a tool output: by file extension when there is a path, else by content.
pub fn detect_source(_text: &str, path: Option<&str>) -> SourceType {
    let ext = path
        .and_then(|p| p.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown" | "rst" | "txt" | "adoc") => SourceType::Docs,
        Some("log") => SourceType::Logs,
        _ => SourceType::Code,
    }
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
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.pruned_bytes = add(into.pruned_bytes, other.pruned_bytes);
    into.pruner_duration_ms = add(into.pruner_duration_ms, other.pruner_duration_ms);
    into.tokens_before = add(into.tokens_before, other.tokens_before);
    into.tokens_after = add(into.tokens_after, other.tokens_after);
    if into.applied || into.fallback {
        into.reason = if into.fallback && !into.applied {
            Some(PruningMetadataReason::PrunerError)
        } else {
            None
        };
    }
}

/// Serves one seed-000 pruner request (`POST /prune`) with the builtin engine.
pub async fn serve_pruner_request(
    _app: &crate::app::App,
    req: crate::contract::types::PrunerRequest,
) -> Result<crate::contract::types::PrunerResponse, String> {
    Ok(crate::contract::types::PrunerResponse {
        output_bytes: req.input.len() as u64,
        output: req.input,
    })
}
