//! `prune_text` (seed 001): prune any text to a goal with the builtin engine and return the pruned
//! text, one annotation per removed block, stats with o200k token counts, warnings and a
//! `prune_id` for `recover_text`. Fail-open: input too large, a timeout or unmet constraints give
//! a no-op (`pruned_text == text`, `used_fallback`, a warning) with a `prune_id` all the same.

use super::{ToolCtx, ToolOutput};
use crate::budget;
use crate::contract::types::{PruneStats, PruneTextInput, PruneTextResult, RpcError, SourceType};
use crate::prune::engine::{self, Limits, Plan};
use crate::prune::render;
use crate::tokens;
use std::time::{Duration, Instant};

/// Defaults for omitted options (documented in the schema's `options` description).
pub const DEFAULT_MAX_PRUNE_RATIO: f64 = 0.8;
/// Default `min_keep_lines`.
pub const DEFAULT_MIN_KEEP_LINES: u64 = 20;
/// Default soft `timeout_ms`.
pub const DEFAULT_TIMEOUT_MS: u64 = 1500;

/// What a stored `prune_text` text is listed as produced by: `prune_text`, or `prune_text as
/// KIND` when the caller named its `source_type`, so that a recovery by question ranks it as the
/// caller said rather than as detection reads it.
pub fn origin(given: Option<SourceType>) -> String {
    match given {
        Some(kind) => format!("prune_text as {kind}"),
        None => "prune_text".into(),
    }
}

/// The `source_type` the caller gave for the stored text `origin` names, if one was given
/// (the inverse of [`origin`]).
pub fn given_source(origin: &str) -> Option<SourceType> {
    origin.strip_prefix("prune_text as ")?.parse().ok()
}

/// The call's options, defaults applied.
struct Options {
    /// The hard constraints the plan must meet.
    limits: Limits,
    /// Whether kept lines carry `N│ ` prefixes (`annotate_lines`).
    annotate: bool,
    /// Canonical markers, or none (`include_markers`).
    markers: render::Markers,
    /// The soft deadline of the plan: past it, the call returns a no-op.
    timeout: Duration,
}

impl Options {
    /// The options of `input` with the defaults documented in the schema.
    fn of(input: &PruneTextInput) -> Options {
        let opts = input.options.clone().unwrap_or_default();
        Options {
            limits: Limits {
                max_prune_ratio: opts.max_prune_ratio.unwrap_or(DEFAULT_MAX_PRUNE_RATIO),
                min_keep_lines: opts.min_keep_lines.unwrap_or(DEFAULT_MIN_KEEP_LINES) as usize,
            },
            annotate: opts.annotate_lines.unwrap_or(false),
            markers: if opts.include_markers.unwrap_or(true) {
                render::Markers::Canonical
            } else {
                render::Markers::Off
            },
            timeout: Duration::from_millis(
                opts.timeout_ms
                    .map(|t| t.get())
                    .unwrap_or(DEFAULT_TIMEOUT_MS),
            ),
        }
    }
}

/// Runs `prune_text`.
pub async fn run(input: PruneTextInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let start = Instant::now();
    let opts = Options::of(&input);
    let (annotate, markers) = (opts.annotate, opts.markers);
    let source = input
        .source_type
        .unwrap_or_else(|| engine::detect_source_type(&input.text, None));
    let prune_id = ctx.app.store.put(
        &ctx.session.id,
        &origin(input.source_type),
        &budget::summary(&input.goal_hint),
        input.text.clone(),
    );
    let budget_bytes = budget::for_call(
        &ctx.app.config,
        input.max_output_bytes.as_ref().map(|m| m.0),
    );
    let mut warnings = Vec::new();
    let plan = plan_for(
        &input,
        ctx,
        &opts,
        source,
        &prune_id,
        budget_bytes,
        &mut warnings,
    )
    .await;
    let mut used_fallback = plan.used_fallback || !warnings.is_empty();
    warnings.extend(plan.warnings.iter().cloned());
    let lines = engine::split_lines(&input.text);
    let before = tokens::count(&input.text) as u64;
    let ends_with_newline = input.text.ends_with('\n');
    // A no-op known before rendering is not rendered: on an input over the limits that would be
    // one more copy of the whole text.
    let rendered = (!used_fallback).then(|| {
        render::render(
            &lines,
            &plan,
            &prune_id,
            annotate,
            markers,
            ends_with_newline,
        )
    });
    if let Some(r) = &rendered
        && !plan.removed.is_empty()
    {
        // Compared without `N│ ` prefixes: those are asked for, not a cost of pruning.
        let unprefixed = if annotate {
            tokens::count(
                &render::render(&lines, &plan, &prune_id, false, markers, ends_with_newline)
                    .pruned_text,
            )
        } else {
            tokens::count(&r.pruned_text)
        };
        if unprefixed as u64 >= before {
            // Markers would cost more than the lines they replace: the raw text is the better answer.
            warnings.push("no_savings".into());
            used_fallback = true;
        }
    }
    let n = lines.len();
    // What the result shows, for a later recovery by question: the kept lines, or all of them.
    let shows = if used_fallback {
        vec![true; n]
    } else {
        plan.keep.clone()
    };
    let (pruned_text, annotations, kept) = match rendered {
        Some(r) if !used_fallback => (r.pruned_text, r.annotations, r.kept_lines),
        _ => {
            drop(lines);
            (input.text, Vec::new(), n)
        }
    };
    let after = tokens::count(&pruned_text) as u64;
    ctx.app.tokens_saved.fetch_add(
        before.saturating_sub(after),
        std::sync::atomic::Ordering::Relaxed,
    );
    let stats = PruneStats {
        original_lines: n as u64,
        kept_lines: kept as u64,
        pruned_lines: (n - kept) as u64,
        pruned_ratio: pruned_ratio(n, kept),
        tokens_est_before: before,
        tokens_est_after: after,
        elapsed_ms: start.elapsed().as_millis() as u64,
        used_fallback,
    };
    let summary = summary_of(&stats, &warnings);
    let mut result = PruneTextResult {
        summary,
        prune_id: prune_id.clone(),
        pruned_text,
        annotations,
        stats,
        warnings,
        source_type: source,
    };
    let (out, cut) = fit(&mut result, budget_bytes);
    // A text cut to the budget showed only its head and tail: record nothing as shown then.
    let shows = if cut { vec![false; n] } else { shows };
    ctx.app.store.record_shown(&prune_id, &shows).await;
    Ok(out)
}

/// The share of `n` lines not kept, rounded to four decimals (0 for an empty text).
fn pruned_ratio(n: usize, kept: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        ((n - kept) as f64 / n as f64 * 10_000.0).round() / 10_000.0
    }
}

/// The result's one-line summary: lines and tokens kept, and for a no-op the warnings that say
/// why.
fn summary_of(stats: &PruneStats, warnings: &[String]) -> String {
    budget::summary(&format!(
        "kept {}/{} lines, {}/{} tokens{}",
        stats.kept_lines,
        stats.original_lines,
        stats.tokens_est_after,
        stats.tokens_est_before,
        if stats.used_fallback {
            format!(" (no-op: {})", warnings.join(", "))
        } else {
            String::new()
        }
    ))
}

/// The plan for `input`, or a no-op with the warning that says why (`warnings`): a text that was
/// not stored (nothing removed could be recovered), one over `--max-input-chars`, a plan past the
/// deadline, a cancelled call, or a planner that panicked.
async fn plan_for(
    input: &PruneTextInput,
    ctx: &ToolCtx,
    opts: &Options,
    source: SourceType,
    prune_id: &str,
    budget_bytes: usize,
    warnings: &mut Vec<String>,
) -> Plan {
    let lines_total = engine::split_lines(&input.text).len();
    if let Some(why) = ctx.app.store.not_stored(prune_id) {
        warnings.push(format!(
            "not_stored: the text ({} bytes) was not kept: {}; returned unpruned",
            input.text.len(),
            why.not_stored(ctx.app.store.limits().0)
        ));
        return no_op(lines_total);
    }
    if input.text.chars().count() > ctx.app.config.max_input_chars {
        warnings.push("input_too_large".to_string());
        return no_op(lines_total);
    }
    let (text, goal, limits) = (input.text.clone(), input.goal_hint.clone(), opts.limits);
    let text_budget = engine::TextBudget {
        bytes: text_budget(budget_bytes, &input.text),
        marker_bytes: crate::prune::widest_marker(prune_id, lines_total),
    };
    let work = tokio::task::spawn_blocking(move || {
        let lines = engine::split_lines(&text);
        engine::plan_within(&lines, &goal, source, &limits, Some(text_budget))
    });
    let failed = tokio::select! {
        r = tokio::time::timeout(opts.timeout, work) => match r {
            Ok(Ok(plan)) => return plan,
            Ok(Err(_)) => "internal_error",
            Err(_) => "timeout",
        },
        _ = ctx.cancel.cancelled() => "cancelled",
    };
    warnings.push(failed.into());
    no_op(lines_total)
}

/// Bytes the pruned text of `text` may take inside a `prune_text` result of `budget` bytes: the
/// JSON around it (stats, summary, warnings) takes 1 KiB, and its escaping (quotes, backslashes,
/// newlines) a sixth of the rest, or as much as the whole text's escaping takes when that is
/// more (a Svelte file's quotes, a coloured log's `\u001b`: the text then fitted the engine's
/// budget and its JSON did not, and was cut to head and tail with no line numbers); annotations
/// are dropped first when they do not fit (the markers carry the same ranges).
fn text_budget(budget: usize, text: &str) -> usize {
    let room = budget.saturating_sub(1024);
    let escaped = json_escaped_len(text);
    if escaped * 85 <= text.len() * 100 {
        room * 85 / 100
    } else {
        (room as u128 * text.len() as u128 / escaped as u128) as usize
    }
}

/// Bytes of `text` written as the inside of a JSON string by `serde_json`: `"` and `\` and the
/// short escapes take 2 bytes, other control characters 6 (`\u001b`), everything else itself.
fn json_escaped_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

fn no_op(n: usize) -> Plan {
    Plan {
        keep: vec![true; n],
        removed: Vec::new(),
        warnings: Vec::new(),
        used_fallback: true,
    }
}

/// Seed 001 output (`content[0].text` is the result's JSON), within the budget. The engine already
/// fitted the pruned text (least relevant blocks elided, never cut by position), so what may not
/// fit is the annotations list: annotations are dropped from the end first (every marker in the
/// text names the same ranges). Only a text that alone exceeds the budget (a no-op on a large
/// input, or markers off) is cut to head and tail, with a row that names no line numbers. The
/// flag says whether the text was cut.
fn fit(result: &mut PruneTextResult, budget_bytes: usize) -> (ToolOutput, bool) {
    let out = |r: &PruneTextResult| ToolOutput::json(r);
    // A text longer than the budget cannot fit whatever else is dropped: not serialized whole.
    if result.pruned_text.len() <= budget_bytes {
        let whole = out(result);
        if whole.text.len() <= budget_bytes {
            return (whole, false);
        }
    }
    let all_ann = std::mem::take(&mut result.annotations);
    let n_ann = all_ann.len();
    if n_ann > 0 {
        result.warnings.push(format!(
            "annotations_truncated: over the {budget_bytes}-byte budget; every removed range is in a marker"
        ));
    }
    let keep_ann = if result.pruned_text.len() > budget_bytes {
        0
    } else {
        budget::largest_fitting(n_ann, |k| {
            let mut r = result.clone();
            r.annotations = all_ann[..k].to_vec();
            out(&r).text.len() <= budget_bytes
        })
    };
    result.annotations = all_ann[..keep_ann].to_vec();
    if keep_ann > 0
        || (result.pruned_text.len() <= budget_bytes && out(result).text.len() <= budget_bytes)
    {
        return (out(result), false);
    }
    let full_text = std::mem::take(&mut result.pruned_text);
    result.warnings.push(format!(
        "output_truncated: exceeds the {budget_bytes}-byte budget; full text via recover_text prune_id={}",
        result.prune_id
    ));
    // Every kept line costs at least a byte, so no more lines than budget bytes can fit.
    let whole = budget::page::TextLines::new(&full_text);
    let lines = budget::page::LineSource::count(&whole).min(budget_bytes);
    let k = budget::largest_fitting(lines, |k| {
        let mut r = result.clone();
        r.pruned_text = budget::page::head_tail(&whole, k, &result.prune_id, false).0;
        out(&r).text.len() <= budget_bytes
    });
    result.pruned_text = budget::page::head_tail(&whole, k, &result.prune_id, false).0;
    (out(result), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The escaped length is what `serde_json` writes between the quotes.
        #[test]
        fn json_escaped_len_matches_serde_json(text in "[a\"\\\\\n\r\t\u{1b}\u{7f}é\u{0}\u{8}\u{c} ]{0,64}") {
            proptest::prop_assert_eq!(
                json_escaped_len(&text),
                serde_json::to_string(&text).unwrap().len() - 2
            );
        }
    }
}
