//! The one result pipeline of every tool whose output can be bulky (`read`, `bash`, `grep`, and
//! the tools `mcp-pruner proxy` forwards): the call's budget, pruning with the question, storing
//! raw text under a `prune_id`, fitting what the model reads to the budget, and the closing log
//! events. A tool only produces its raw output, its source kind, its label and its own notes;
//! the sequence and the arithmetic live here, once. The `_meta` split, `tokens_after` and the
//! ledger row are added to every result by [`super::call`].
//!
//! Owns the order of the steps; never reads files, runs commands or decides what a line is worth
//! (that is [`crate::prune`]).

use super::{Failure, ToolCtx, ToolOutput, ms_since};
use crate::budget;
use crate::contract::types::{PruningMetadata, SourceType};
use crate::prune::{Job, Pruned};
use crate::store::line_starts;
use std::time::Instant;

/// One call's pass through the pipeline: which tool, its budget, when it started.
pub struct Pipeline<'a> {
    /// The call's context.
    pub ctx: &'a ToolCtx,
    /// Tool name, for the store, the pruner and the log events.
    pub tool: &'a str,
    /// Bytes the model may read for this call.
    pub budget: usize,
    /// When the call started.
    pub start: Instant,
}

impl<'a> Pipeline<'a> {
    /// Starts a call of `tool` with the per-call `max_output_bytes`, if the caller gave one.
    pub fn new(ctx: &'a ToolCtx, tool: &'a str, max_output_bytes: Option<i64>) -> Pipeline<'a> {
        Pipeline {
            ctx,
            tool,
            budget: budget::for_call(&ctx.app.config, max_output_bytes),
            start: Instant::now(),
        }
    }

    /// The same pipeline with its start moved to `start` (a call timed from before its checks).
    pub fn started(mut self, start: Instant) -> Pipeline<'a> {
        self.start = start;
        self
    }

    /// Whether results carry `structuredContent` (the budget counts its JSON).
    pub fn schemas(&self) -> bool {
        self.ctx.app.config.output_schemas
    }

    /// Bytes a pruned text may take within `budget` (the tool's notes get the rest).
    pub fn pruned_budget_of(&self, budget: usize) -> usize {
        budget::for_pruned_text(budget, self.schemas())
    }

    /// Bytes a pruned text may take within the call's budget.
    pub fn pruned_budget(&self) -> usize {
        self.pruned_budget_of(self.budget)
    }

    /// A pruning job of this call for `text`: within the call's pruned-text budget, followed by
    /// a `[pruned lines: …]` note, not a window. A caller that differs sets the fields it needs.
    pub fn job<'j>(
        &self,
        text: &'j str,
        question: Option<&'j str>,
        source: SourceType,
        label: &'j str,
    ) -> Job<'j>
    where
        'a: 'j,
    {
        Job {
            tool: self.tool,
            text,
            question,
            source,
            label,
            note: "",
            budget: Some(self.pruned_budget()),
            within: None,
        }
    }

    /// Runs `job` through the pruner; the raw text is stored under the `prune_id` the metadata
    /// names whenever pruning is attempted, unless the job is a window of a text stored already.
    pub async fn apply(&self, job: Job<'_>) -> Pruned {
        self.ctx.app.pruner.apply(&self.ctx.pruning(), job).await
    }

    /// Prunes `text` for `question` within `budget` bytes of pruned text, as a window of a text
    /// stored already when `within` says so (then its markers give that text's line numbers).
    pub async fn prune_within(
        &self,
        text: &str,
        question: Option<&str>,
        source: SourceType,
        label: &str,
        budget: usize,
        within: Option<crate::prune::Within>,
    ) -> Pruned {
        let job = Job {
            budget: Some(budget),
            within,
            ..self.job(text, question, source, label)
        };
        self.apply(job).await
    }

    /// Prunes `text` for `question` within the call's pruned-text budget.
    pub async fn prune(
        &self,
        text: &str,
        question: Option<&str>,
        source: SourceType,
        label: &str,
    ) -> Pruned {
        self.apply(self.job(text, question, source, label)).await
    }

    /// Whether `out` fits the call's budget (what the model reads, counted as it is sent).
    pub fn fits(&self, out: &ToolOutput) -> bool {
        out.model_bytes(self.schemas()) <= self.budget
    }

    /// The largest `k` in `0..=max` whose `build(k)` fits the budget (`build` grows with `k`).
    pub fn largest(&self, max: usize, build: impl Fn(usize) -> ToolOutput) -> usize {
        budget::largest_fitting(max, |k| self.fits(&build(k)))
    }

    /// Stores a raw text the result cuts; its `prune_id`.
    pub async fn store(&self, label: &str, text: String) -> String {
        self.ctx
            .app
            .store
            .put_async(&self.ctx.session.id, self.tool, label, text)
            .await
    }

    /// Stores a raw text already written out (spilled); its `prune_id`.
    pub fn store_written(&self, label: &str, written: crate::store::Written) -> String {
        self.ctx
            .app
            .store
            .put_written(&self.ctx.session.id, self.tool, label, written)
    }

    /// Closes a successful call: logs its response (pruned or raw, bytes read).
    pub fn respond(&self, out: ToolOutput, applied: bool) -> ToolOutput {
        crate::events::respond_ok(
            &self.ctx.request_id,
            self.tool,
            if applied { "pruned" } else { "raw" },
            out.text.len() as u64,
        );
        out
    }

    /// Closes a failed call: its duration, the failure event, and the failure's output.
    pub fn fail(&self, mut failure: Failure) -> ToolOutput {
        failure.body.duration_ms = Some(ms_since(self.start));
        crate::events::exec_failed(
            &self.ctx.request_id,
            self.tool,
            &failure.body.error.reason.to_string(),
            &failure.body.error.message,
            None,
        );
        failure.output()
    }
}

/// A text fitted to its share of a budget by [`Pipeline::fit_text`].
pub struct Fitted {
    /// What the model reads: the text, pruned and/or cut, with the notes naming its `prune_id`.
    pub text: String,
    /// What pruning did (its `prune_id` holds the raw text when pruning applied).
    pub pruning: PruningMetadata,
    /// The `prune_id` holding the raw text when the text was cut or pruned.
    pub artifact: Option<String>,
}

impl Pipeline<'_> {
    /// One text of a result (a proxied tool's text content, a resource's text) through the
    /// pipeline: pruned for `question` when there is one, then, if it still exceeds `budget`
    /// bytes, cut to its first lines with a note naming the `prune_id` that holds every byte.
    /// A text that fits and has no question comes back unchanged, and so does a text that fits
    /// when its pruned form would not (markers and note outweighing what they remove).
    pub async fn fit_text(
        &self,
        raw: &str,
        question: Option<&str>,
        source: SourceType,
        label: &str,
        budget: usize,
    ) -> Fitted {
        let pruned = self
            .prune_within(
                raw,
                question,
                source,
                label,
                self.pruned_budget_of(budget),
                None,
            )
            .await;
        let mut pruning = pruned.metadata;
        let (body, applied) = chosen_body(raw, pruned.text, &mut pruning, budget);
        if body.len() <= budget {
            if let Some(id) = pruning.prune_id.as_deref().filter(|_| !applied) {
                // The raw text, stored, goes out whole: a recovery by question has nothing of it
                // left to return (the pruner records that only when it fits the pruned-text
                // budget, which is smaller).
                let all = vec![true; line_starts(raw).len()];
                self.ctx.app.store.record_shown(id, &all).await;
            }
            let artifact = applied.then(|| pruning.prune_id.clone()).flatten();
            return Fitted {
                text: body,
                pruning,
                artifact,
            };
        }
        let id = match pruning.prune_id.clone().filter(|_| applied) {
            Some(id) => {
                // The pruned text is cut: nothing is recorded as shown (a recovery by question
                // may then return a line twice, never skip one).
                self.ctx.app.store.record_shown(&id, &[]).await;
                id
            }
            None => self.store(label, raw.to_string()).await,
        };
        let not_stored = self.ctx.app.store.not_stored(&id);
        let cut = Cut {
            body: &body,
            starts: line_starts(&body),
            pruned: applied,
            raw_lines: line_starts(raw).len(),
            raw_bytes: raw.len(),
            recover: match not_stored {
                None => format!("recover_text prune_id={id}"),
                Some(why) => format!(
                    "not stored: {}",
                    why.not_stored(self.ctx.app.store.limits().0)
                ),
            },
            budget,
        };
        let text = cut.text();
        if applied {
            pruning.pruned_bytes = Some(text.len() as u64);
        }
        Fitted {
            text,
            pruning,
            artifact: not_stored.is_none().then_some(id),
        }
    }
}

/// The text a fitted result starts from, and whether it is the pruned one: the pruned text with
/// the note naming its `prune_id` when pruning applied, else `raw`. Whether the pruned text is
/// worth its markers and note was decided by the pruner, which priced this note (the job's); a
/// pruned text that would be cut while the raw one fits (markers and note outweighing a few
/// removed lines) gives way to the raw text, which says more in the same room.
fn chosen_body(
    raw: &str,
    pruned: Option<String>,
    pruning: &mut PruningMetadata,
    budget: usize,
) -> (String, bool) {
    let body = match (pruned, pruning.prune_id.as_deref()) {
        (Some(t), Some(id)) if pruning.applied => {
            let sep = if t.ends_with('\n') { "" } else { "\n" };
            let note = crate::prune::render::compact_note("", id);
            format!("{t}{sep}{note}")
        }
        _ => return (raw.to_string(), false),
    };
    if body.len() > budget && raw.len() <= budget {
        crate::prune::pipeline::gave_way_to_raw(pruning);
        return (raw.to_string(), false);
    }
    (body, true)
}

/// A text over its budget, to be cut to its first lines with a note saying what was cut and where
/// every byte is.
struct Cut<'a> {
    /// The text to cut: the pruned text with its note, or the raw text.
    body: &'a str,
    /// Where each line of `body` starts.
    starts: Vec<usize>,
    /// Whether `body` is the pruned text (the note then says the pruned output was cut).
    pruned: bool,
    /// Lines of the raw text, for the note on a raw text.
    raw_lines: usize,
    /// Bytes of the raw text, for the note on a raw text.
    raw_bytes: usize,
    /// Where every byte is: `recover_text prune_id=…`, or why it was not stored.
    recover: String,
    /// The budget in bytes, note included.
    budget: usize,
}

impl Cut<'_> {
    /// Where the first `k` lines of the body end.
    fn end(&self, k: usize) -> usize {
        self.starts.get(k).copied().unwrap_or(self.body.len())
    }

    /// The note after the first `k` lines, `shown` bytes of them (less than the lines' bytes
    /// when the first line is clipped).
    fn note(&self, k: usize, shown: usize) -> String {
        let (room, recover) = (budget::human_bytes(self.budget as u64), &self.recover);
        let clipped = shown < self.end(k);
        let first = format!("the first {} of line 1", budget::human_bytes(shown as u64));
        if self.pruned {
            let cut = if clipped {
                format!("to {first}")
            } else {
                format!("after {k} lines")
            };
            format!("[truncated: pruned output cut {cut} to fit {room}; raw lines: {recover}]")
        } else {
            let lines = if clipped {
                first
            } else {
                format!("lines 1-{k}")
            };
            format!(
                "[truncated: showing {lines} of {} ({} of {}); every byte: {recover}]",
                self.raw_lines,
                budget::human_bytes(shown as u64),
                budget::human_bytes(self.raw_bytes as u64)
            )
        }
    }

    /// `shown` (the first `k` lines, or the first line clipped) followed by its note.
    fn with_note(&self, shown: &str, k: usize) -> String {
        let sep = if shown.is_empty() || shown.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        format!("{shown}{sep}{}", self.note(k, shown.len()))
    }

    /// The most lines that fit with their note; when not even one does, the first line's first
    /// bytes, as many as fit beside the note that says so (whose size depends on how many are
    /// shown).
    fn text(&self) -> String {
        let k = budget::largest_fitting(self.starts.len(), |k| {
            self.with_note(&self.body[..self.end(k)], k).len() <= self.budget
        });
        if k > 0 {
            return self.with_note(&self.body[..self.end(k)], k);
        }
        let clipped = |n: usize| self.with_note(budget::clip_utf8(self.body, n), 1);
        clipped(budget::largest_fitting(self.end(1), |n| {
            clipped(n).len() <= self.budget
        }))
    }
}

impl Pipeline<'_> {
    /// Closes a successful call whose result is already an MCP result (a proxied one) with
    /// `bytes` of text.
    pub fn respond_value(
        &self,
        result: serde_json::Value,
        applied: bool,
        bytes: usize,
    ) -> serde_json::Value {
        crate::events::respond_ok(
            &self.ctx.request_id,
            self.tool,
            if applied { "pruned" } else { "raw" },
            bytes as u64,
        );
        result
    }
}
