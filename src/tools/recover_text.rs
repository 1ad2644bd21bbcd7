//! `recover_text` (alias `recover_range`): the raw lines behind a `prune_id` or `artifactRef`, in the
//! order of the requested ranges, paged by an opaque cursor when they exceed the budget, so that
//! every byte of a pruned or cut output can be had back exactly. Errors follow seed 001 section 8:
//! -32004 `prune_id_not_found`, -32005 `invalid_range`.

use super::{ToolCtx, ToolOutput};
use crate::budget;
use crate::contract::types::{
    FieldError, LineRange, RecoverTextInput, RecoverTextResult, RecoverTextResultMetadata,
    RecoverTextResultMetadataLineNumbering, RpcError, RpcErrorData,
};
use crate::rpc::message;
use crate::store::Entry;
use std::num::NonZeroU64;

/// Seed 001 section 8 names line numbers below 1 `invalid_range` (-32005), while its schema says
/// `minimum: 1`, so schema validation catches them first. When every field error is such a line
/// number, this is the -32005 a seed-001 client expects (with the field errors kept in `data`).
pub fn range_error(arguments: &serde_json::Value, errors: &[FieldError]) -> Option<RpcError> {
    // A line number field holding an integer below 1 (a wrong type stays -32602).
    let is_line = |f: &str| {
        let is_line_field = f
            .strip_prefix("/arguments/ranges/")
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(i, k)| {
                i.bytes().all(|b| b.is_ascii_digit()) && matches!(k, "start_line" | "end_line")
            });
        is_line_field
            && f.strip_prefix("/arguments")
                .and_then(|p| arguments.pointer(p))
                .and_then(serde_json::Value::as_i64)
                .is_some_and(|n| n < 1)
    };
    if errors.is_empty() || !errors.iter().all(|e| is_line(&e.field)) {
        return None;
    }
    Some(message::rpc_error(
        message::INVALID_RANGE,
        "invalid_range",
        Some(RpcErrorData {
            code: Some("invalid_range".into()),
            prune_id: arguments["prune_id"].as_str().map(String::from),
            hint: Some(format!(
                "{}: {}; line numbers are 1-based",
                errors[0].field, errors[0].message
            )),
            field_errors: errors.to_vec(),
        }),
    ))
}

/// Runs `recover_text`.
pub fn run(input: RecoverTextInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    let entry = ctx.app.store.get(&input.prune_id).map_err(|why| {
        message::rpc_error(
            message::PRUNE_ID_NOT_FOUND,
            "prune_id_not_found",
            Some(RpcErrorData {
                code: Some("prune_id_not_found".into()),
                prune_id: Some(input.prune_id.clone()),
                hint: Some(why.explain().into()),
                ..Default::default()
            }),
        )
    })?;
    let total = entry.line_count();
    let ranges: Vec<(usize, usize)> = if input.ranges.is_empty() {
        vec![(1, total.max(1))]
    } else {
        input
            .ranges
            .iter()
            .map(|r| (r.start_line.get() as usize, r.end_line.get() as usize))
            .collect()
    };
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let problem = if s > e {
            Some(format!("start_line {s} > end_line {e}"))
        } else if s > total.max(1) {
            Some(format!("start_line {s} is past the last line ({total})"))
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(message::rpc_error(
                message::INVALID_RANGE,
                "invalid_range",
                Some(RpcErrorData {
                    code: Some("invalid_range".into()),
                    prune_id: Some(input.prune_id.clone()),
                    hint: Some(format!("/arguments/ranges/{i}: {p}")),
                    ..Default::default()
                }),
            ));
        }
    }
    let numbered = input.include_line_numbers.unwrap_or(true);
    let full = assemble(&entry, &ranges, numbered);
    let fp = fingerprint(&input.prune_id, &ranges, numbered);
    let offset = match &input.cursor {
        None => 0,
        Some(c) => decode_cursor(c, fp).filter(|o| *o <= full.len() && full.is_char_boundary(*o)).ok_or_else(|| message::invalid_field("/arguments/cursor", "not a cursor from a previous recover_text with the same prune_id, ranges and include_line_numbers"))?,
    };
    let budget = budget::for_call(
        &ctx.app.config,
        input.max_output_bytes.as_ref().map(|m| m.0),
    );
    let rest = &full[offset..];
    let clamped: Vec<LineRange> = ranges
        .iter()
        .map(|&(s, e)| LineRange {
            start_line: NonZeroU64::new(s as u64).expect(">=1"),
            end_line: NonZeroU64::new(e.min(total).max(s) as u64).expect(">=1"),
        })
        .collect();
    let build = |n: usize| -> ToolOutput {
        let chunk = &rest[..n];
        let next = offset + n;
        let has_more = next < full.len();
        let r = RecoverTextResult {
            summary: budget::summary(&format!(
                "{} of {} bytes from {} ({} lines){}",
                chunk.len(),
                full.len(),
                input.prune_id,
                total,
                if has_more { ", more pages" } else { "" }
            )),
            raw_text: chunk.to_string(),
            metadata: RecoverTextResultMetadata {
                prune_id: input.prune_id.clone(),
                ranges: clamped.clone(),
                line_numbering: RecoverTextResultMetadataLineNumbering::Original,
                total_lines: total as u64,
                total_bytes: entry.text.len() as u64,
            },
            has_more,
            next_cursor: has_more.then(|| encode_cursor(next, fp)),
        };
        // Seed 001: content[0].text is the serialized JSON of the result.
        ToolOutput::json(&r)
    };
    let fits = |n: usize| build(n).text.len() <= budget;
    // raw_text appears escaped once in content[0].text: size the page from that cost, then
    // confirm with one real serialization (and shrink if needed).
    let overhead = build(0).text.len();
    let room = budget.saturating_sub(overhead + 64);
    let mut n = budget::prefix_within(rest, room, budget::escaped_len);
    while n > 0 && !fits(n) {
        n = budget::clip_utf8(rest, n * 95 / 100).len();
    }
    if n < rest.len()
        && let Some(nl) = rest[..n].rfind('\n')
    {
        n = nl + 1;
    }
    Ok(build(n))
}

/// The requested ranges, concatenated; exact bytes, or `N│ line` rows when `numbered`.
fn assemble(entry: &Entry, ranges: &[(usize, usize)], numbered: bool) -> String {
    let mut out = String::new();
    for &(s, e) in ranges {
        if !numbered {
            out.push_str(entry.lines(s, e));
            continue;
        }
        for n in s..=e.min(entry.line_count()) {
            let line = entry.lines(n, n);
            let line = line.strip_suffix('\n').unwrap_or(line);
            out.push_str(&format!("{n}│ {line}\n"));
        }
    }
    out
}

fn fingerprint(id: &str, ranges: &[(usize, usize)], numbered: bool) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (id, ranges, numbered).hash(&mut h);
    h.finish() & 0xffff_ffff
}

fn encode_cursor(offset: usize, fp: u64) -> String {
    format!("r1.{offset:x}.{fp:x}")
}

fn decode_cursor(cursor: &str, fp: u64) -> Option<usize> {
    let mut parts = cursor.split('.');
    if parts.next()? != "r1" {
        return None;
    }
    let offset = usize::from_str_radix(parts.next()?, 16).ok()?;
    let got = u64::from_str_radix(parts.next()?, 16).ok()?;
    (got == fp && parts.next().is_none()).then_some(offset)
}
