//! `prune_text` (seed 001): prune any text to a goal with the builtin engine and return the pruned
//! text, one annotation per removed block, stats with o200k token counts, warnings and a
//! `prune_id` for `recover_text`. Fail-open: input too large, a timeout or unmet constraints give
//! a no-op (`pruned_text == text`, `used_fallback`, a warning) with a `prune_id` all the same.

use super::{ToolCtx, ToolOutput};
use crate::budget;
use crate::contract::types::{PruneStats, PruneTextInput, PruneTextResult, RpcError};
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

/// Runs `prune_text`.
pub async fn run(input: PruneTextInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let start = Instant::now();
    let opts = input.options.clone().unwrap_or_default();
    let limits = Limits {
        max_prune_ratio: opts.max_prune_ratio.unwrap_or(DEFAULT_MAX_PRUNE_RATIO),
        min_keep_lines: opts.min_keep_lines.unwrap_or(DEFAULT_MIN_KEEP_LINES) as usize,
    };
    let annotate = opts.annotate_lines.unwrap_or(false);
    let markers = opts.include_markers.unwrap_or(true);
    let timeout = Duration::from_millis(
        opts.timeout_ms
            .map(|t| t.get())
            .unwrap_or(DEFAULT_TIMEOUT_MS),
    );
    let source = input
        .source_type
        .unwrap_or_else(|| engine::detect_source_type(&input.text, None));
    let prune_id = ctx.app.store.put(
        "prune_text",
        &budget::summary(&input.goal_hint),
        input.text.clone(),
    );

    let mut warnings = Vec::new();
    let lines_total = engine::split_lines(&input.text).len();
    let plan: Plan = if input.text.chars().count() > ctx.app.config.max_input_chars {
        warnings.push("input_too_large".to_string());
        no_op(lines_total)
    } else {
        let (text, goal) = (input.text.clone(), input.goal_hint.clone());
        let work = tokio::task::spawn_blocking(move || {
            engine::plan(&engine::split_lines(&text), &goal, source, &limits)
        });
        tokio::select! {
            r = tokio::time::timeout(timeout, work) => match r {
                Ok(Ok(plan)) => plan,
                Ok(Err(_)) => { warnings.push("internal_error".into()); no_op(lines_total) }
                Err(_) => { warnings.push("timeout".into()); no_op(lines_total) }
            },
            _ = ctx.cancel.cancelled() => { warnings.push("cancelled".into()); no_op(lines_total) }
        }
    };
    let used_fallback = plan.used_fallback || !warnings.is_empty();
    warnings.extend(plan.warnings.iter().cloned());
    let lines = engine::split_lines(&input.text);
    let rendered = render::render(
        &lines,
        &plan,
        &prune_id,
        annotate,
        markers,
        input.text.ends_with('\n'),
    );
    let pruned_text = if used_fallback {
        input.text.clone()
    } else {
        rendered.pruned_text
    };
    let annotations = if used_fallback {
        Vec::new()
    } else {
        rendered.annotations
    };
    let kept = if used_fallback {
        lines.len()
    } else {
        rendered.kept_lines
    };
    let before = tokens::count(&input.text) as u64;
    let after = tokens::count(&pruned_text) as u64;
    ctx.app.tokens_saved.fetch_add(
        before.saturating_sub(after),
        std::sync::atomic::Ordering::Relaxed,
    );
    let n = lines.len();
    let stats = PruneStats {
        original_lines: n as u64,
        kept_lines: kept as u64,
        pruned_lines: (n - kept) as u64,
        pruned_ratio: if n == 0 {
            0.0
        } else {
            ((n - kept) as f64 / n as f64 * 10_000.0).round() / 10_000.0
        },
        tokens_est_before: before,
        tokens_est_after: after,
        elapsed_ms: start.elapsed().as_millis() as u64,
        used_fallback,
    };
    let summary = budget::summary(&format!(
        "kept {kept}/{n} lines, {after}/{before} tokens{}",
        if used_fallback {
            format!(" (no-op: {})", warnings.join(", "))
        } else {
            String::new()
        }
    ));
    let mut result = PruneTextResult {
        summary,
        prune_id: prune_id.clone(),
        pruned_text,
        annotations,
        stats,
        warnings,
        source_type: source,
    };
    let budget_bytes = budget::for_call(
        &ctx.app.config,
        input.max_output_bytes.as_ref().map(|m| m.0),
    );
    Ok(fit(&mut result, budget_bytes))
}

fn no_op(n: usize) -> Plan {
    Plan {
        keep: vec![true; n],
        removed: Vec::new(),
        warnings: Vec::new(),
        used_fallback: true,
    }
}

/// Seed 001 output (JSON text + structured), cut to the budget when needed: annotations first
/// (they are derivable from the markers), then the pruned text head and tail, with a warning that
/// names the `prune_id` to recover from.
fn fit(result: &mut PruneTextResult, budget_bytes: usize) -> ToolOutput {
    let out =
        |r: &PruneTextResult| ToolOutput::ok(serde_json::to_string(r).expect("serializes"), r);
    let limit = budget_bytes.saturating_sub(budget::ENVELOPE_RESERVE);
    let whole = out(result);
    if budget::json_len(&whole.clone_result()) <= limit {
        return whole;
    }
    let full_text = std::mem::take(&mut result.pruned_text);
    let n_ann = result.annotations.len();
    let all_ann = std::mem::take(&mut result.annotations);
    result.warnings.push(format!("output_truncated: exceeds the {budget_bytes}-byte budget; full text via recover_text prune_id={}", result.prune_id));
    let keep_ann = budget::largest_fitting(n_ann, |k| {
        let mut r = result.clone();
        r.annotations = all_ann[..k].to_vec();
        budget::json_len(&out(&r).clone_result()) <= limit / 2
    });
    result.annotations = all_ann[..keep_ann].to_vec();
    let lines = full_text.lines().count();
    let k = budget::largest_fitting(lines, |k| {
        let mut r = result.clone();
        r.pruned_text = budget::head_tail(&full_text, k, &result.prune_id, false).0;
        budget::json_len(&out(&r).clone_result()) <= limit
    });
    result.pruned_text = budget::head_tail(&full_text, k, &result.prune_id, false).0;
    out(result)
}
