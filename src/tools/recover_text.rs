//! `recover_text` (alias `recover_range`): the raw lines behind a `prune_id` or `artifactRef`, in the
//! order of the requested ranges, paged by an opaque cursor when they exceed the budget, so that
//! every byte of a pruned or cut output can be had back exactly. Errors follow seed 001 section 8:
//! -32004 `prune_id_not_found`, -32005 `invalid_range`.
//!
//! A page reads only what it shows (plus a few bytes to know there is more) from the store entry,
//! whatever the size of the entry or of the ranges: the cursor names the range, line and byte
//! where the next page starts. Must never assemble all requested lines in memory, except for a
//! recovery by question (`context_focus_question`), which prunes the stored text again, up to the
//! pruner's input cap like any pruned output.
//!
//! Recovery by question: the stored raw text is pruned for the question, and what the earlier
//! result showed (recorded in the store entry by the pruning pipeline) is left out, so the call
//! returns the lines that result did not show that serve the question best, within the budget,
//! with named markers for the rest and original line numbers. Asked again, it goes on: each
//! answer counts as shown.

use super::{ToolCtx, ToolOutput};
use crate::app::App;
use crate::budget;
use crate::contract::types::{
    FieldError, LineRange, RecoverTextInput, RecoverTextResult, RecoverTextResultMetadata,
    RecoverTextResultMetadataLineNumbering, RpcError, RpcErrorData, SourceType,
};
use crate::protocol::message;
use crate::prune::{engine, pipeline, render};
use crate::store::{Entry, ReadError, find_newline};
use std::io::BufRead;
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
            ..Default::default()
        }),
    ))
}

/// The requested ranges as 1-based inclusive `(start, end)` pairs (the whole text when none is
/// given), each checked against the `total` lines of the entry: a range that starts after it
/// ends, or past the last line, is seed 001's -32005 `invalid_range`, naming the range. An end
/// past the last line is clamped when the lines are read.
fn checked_ranges(input: &RecoverTextInput, total: usize) -> Result<Vec<(usize, usize)>, RpcError> {
    if input.ranges.is_empty() {
        return Ok(vec![(1, total.max(1))]);
    }
    let ranges: Vec<(usize, usize)> = input
        .ranges
        .iter()
        .map(|r| (r.start_line.get() as usize, r.end_line.get() as usize))
        .collect();
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let problem = if s > e {
            format!("start_line {s} > end_line {e}")
        } else if s > total.max(1) {
            format!("start_line {s} is past the last line ({total})")
        } else {
            continue;
        };
        return Err(message::rpc_error(
            message::INVALID_RANGE,
            "invalid_range",
            Some(RpcErrorData {
                code: Some("invalid_range".into()),
                prune_id: Some(input.prune_id.clone()),
                hint: Some(format!("/arguments/ranges/{i}: {problem}")),
                ..Default::default()
            }),
        ));
    }
    Ok(ranges)
}

/// Runs `recover_text`.
pub async fn run(input: RecoverTextInput, ctx: &ToolCtx) -> Result<ToolOutput, RpcError> {
    // A first page by ranges starts at the first range, and reads no further than its end
    // unless there is room left: a shared store fetches those lines with the entry.
    let first = (input.cursor.is_none() && input.context_focus_question.is_none()).then(|| {
        input.ranges.first().map_or(1..=usize::MAX, |r| {
            r.start_line.get() as usize..=r.end_line.get() as usize
        })
    });
    let entry = ctx
        .app
        .store
        .get_at_async(&input.prune_id, first)
        .await
        .map_err(|why| message::prune_id_not_found(&input.prune_id, why.explain()))?;
    let total = entry.line_count();
    let ranges = checked_ranges(&input, total)?;
    if let Some(question) = input.context_focus_question.as_deref() {
        let within = (!input.ranges.is_empty()).then_some(ranges.as_slice());
        let as_json = ctx.app.config.output_schemas;
        return by_question(&input, question, &entry, within, &ctx.app, as_json).await;
    }
    let numbered = input.include_line_numbers.unwrap_or(true);
    let fp = fingerprint(&input.prune_id, &ranges, numbered);
    let pos = start_position(
        input.cursor.as_deref().map(String::as_str),
        &fp,
        &ranges,
        total,
    )?;
    let budget = budget::for_call(
        &ctx.app.config,
        input.max_output_bytes.as_ref().map(|m| m.0),
    );
    // The page is at most `budget` bytes of text: a few more tell whether there is more.
    let mut pulled = pull(&entry, &ranges, numbered, pos, budget + 4)
        .map_err(|e| read_error(&input.prune_id, e))?;
    let (rest, done) = page_text(std::mem::take(&mut pulled.bytes), pulled.done);
    let rest = rest.as_str();
    let clamped: Vec<LineRange> = ranges
        .iter()
        .map(|&(s, e)| LineRange {
            start_line: NonZeroU64::new(s as u64).expect(">=1"),
            end_line: NonZeroU64::new(e.min(total).max(s) as u64).expect(">=1"),
        })
        .collect();
    let build = |n: usize| -> ToolOutput {
        let chunk = &rest[..n];
        let has_more = n < rest.len() || !done;
        let r = RecoverTextResult {
            summary: budget::summary(&format!(
                "{} bytes from {} ({} lines){}",
                chunk.len(),
                input.prune_id,
                total,
                if has_more { ", more pages" } else { "" }
            )),
            raw_text: Some(chunk.to_string()),
            metadata: RecoverTextResultMetadata {
                prune_id: input.prune_id.clone(),
                ranges: clamped.clone(),
                line_numbering: RecoverTextResultMetadataLineNumbering::Original,
                total_lines: total as u64,
                total_bytes: entry.len(),
                returned_lines: None,
            },
            has_more,
            next_cursor: has_more.then(|| encode_cursor(pulled.position_after(n), fp)),
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

/// Where a page by ranges starts: the first line of the first range, or where the page that
/// handed out `cursor` stopped. A cursor that is not one from a page of the same `prune_id`,
/// ranges and numbering (`fp`), or that points outside the ranges, is an invalid argument.
fn start_position(
    cursor: Option<&str>,
    fp: &[u8; 32],
    ranges: &[(usize, usize)],
    total: usize,
) -> Result<Pos, RpcError> {
    let Some(c) = cursor else {
        return Ok(Pos {
            range: 0,
            line: ranges[0].0,
            skip: 0,
            offset: 0,
        });
    };
    decode_cursor(c, *fp)
        .filter(|p| {
            ranges.get(p.range).is_some_and(|&(s, e)| {
                p.line >= s && p.line <= e.min(total).max(s).saturating_add(1)
            })
        })
        .ok_or_else(|| {
            message::invalid_field(
                "/arguments/cursor",
                "not a cursor from a previous recover_text with the same prune_id, ranges and include_line_numbers",
            )
        })
}

/// The pulled `bytes` as text, and whether they end the ranges (`done`, as pulled). Valid text
/// cut inside its last character ends before it (the rest of it belongs to the next page, so
/// the page is not the last); bytes holding any other invalid sequence are decoded lossily
/// whole, a character cut at their end included.
fn page_text(bytes: Vec<u8>, done: bool) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, done),
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            (String::from_utf8(bytes).expect("valid prefix"), false)
        }
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), done),
    }
}

/// `recover_text` with `context_focus_question`: the lines of the stored text (within the
/// checked 1-based `within` ranges, if given) that the earlier result did not show, best for the
/// question first, fitted to the call's budget as the model reads them ([`question_output`]):
/// the result's JSON when `as_json` (a tool call with output schemas), else the plain lines (a
/// tool call without them, or a resource). Markers name what stays out. The lines returned count
/// as shown from then on.
pub(crate) async fn by_question(
    input: &RecoverTextInput,
    question: &str,
    entry: &Entry,
    within: Option<&[(usize, usize)]>,
    app: &App,
    as_json: bool,
) -> Result<ToolOutput, RpcError> {
    if input.cursor.is_some() {
        return Err(message::invalid_field(
            "/arguments/cursor",
            "not used with context_focus_question: a recovery by question returns one page (ask again for more, or recover by ranges)",
        ));
    }
    let mut recorded = entry.shown();
    let (text, first_line) = answered_part(input, entry, within, &recorded, app)?;
    let budget = budget::for_call(&app.config, input.max_output_bytes.as_ref().map(|m| m.0));
    let offset = first_line - 1;
    // A line longer than a quarter of the budget is answered clipped, saying how to read it whole
    // (whole, it could not fit, and the answer went over the budget).
    let clipped = render::clip_long_lines(
        &engine::split_lines(&text),
        first_line,
        budget,
        &input.prune_id,
    );
    // Ranked and fitted as they will be shown.
    let lines: Vec<&str> = clipped.iter().map(|l| l.as_ref()).collect();
    recorded.resize(offset + lines.len(), false);
    let mut shown = recorded[offset..].to_vec();
    if let Some(within) = within {
        // Outside the ranges asked for (checked by the caller), nothing is a candidate.
        let mut inside = vec![false; lines.len()];
        for &(s, e) in within {
            let (s, e) = (s.saturating_sub(first_line), e.saturating_sub(offset));
            inside[s.min(lines.len())..e.min(lines.len())].fill(true);
        }
        for (sh, i) in shown.iter_mut().zip(inside) {
            *sh |= !i;
        }
    }
    let source = source_of(entry, &text);
    // Unnumbered unless asked: the markers between the fragments give their original line
    // numbers, as in the pruned result the question follows (the `N│ ` prefixes cost 1.4 to 2.1
    // points of two calls' reduction on the benchmark's code cases, dev split).
    let numbered = input.include_line_numbers.unwrap_or(false);
    let total = lines.len();
    let stored_lines = entry.line_count().max(offset + total);
    let from = Part {
        prune_id: &input.prune_id,
        total_bytes: entry.len(),
        total_lines: stored_lines,
        first_line,
    };
    let build = |plan: &engine::Plan| -> ToolOutput {
        question_output(&question_result(
            &lines,
            plan,
            &from,
            numbered,
            text.ends_with('\n'),
        ))
    };
    // The model reads the lines plain, plus the closing note, or the result's JSON, where they
    // are escaped. Fit the lines to what is left after the rest, then shrink until what the
    // model reads fits.
    let mut room = budget::for_pruned_text(budget, as_json);
    let (plan, out) = loop {
        let text_budget = engine::TextBudget {
            bytes: room,
            // Markers give the stored text's numbers, a part's too.
            marker_bytes: pipeline::widest_compact_marker(stored_lines),
        };
        let plan = engine::plan_more(
            &lines,
            question,
            source,
            &shown,
            text_budget,
            within.is_some(),
        );
        let out = build(&plan);
        if out.model_bytes(as_json) <= budget || room == 0 {
            break (plan, out);
        }
        room = room * 85 / 100;
    };
    // Added to what is recorded, not written over it: a recovery of the same id running at the
    // same time keeps what it returned.
    entry.add_shown(offset, &plan.keep).await;
    Ok(out)
}

/// The stored text a recovery by question ranks, and the number of its first line: the whole
/// text, or, over the pruner's input cap (a large file a `read` window came from), one part of
/// it as far as the cap goes, from the first range asked for, else from the first line an
/// earlier result showed (`recorded`): a window far from the first one shown is reached by
/// giving its lines as ranges. With neither, the answer is an error: recover it by ranges.
fn answered_part(
    input: &RecoverTextInput,
    entry: &Entry,
    within: Option<&[(usize, usize)]>,
    recorded: &[bool],
    app: &App,
) -> Result<(String, usize), RpcError> {
    let cap = app.config.max_prune_input_bytes;
    if let Some(text) = entry
        .text_up_to(cap)
        .map_err(|e| read_error(&input.prune_id, e))?
    {
        return Ok((text, 1));
    }
    let first = match within.and_then(|w| w.iter().map(|&(s, _)| s).min()) {
        Some(start) => start.max(1),
        None => {
            let Some(k) = recorded.iter().position(|&s| s) else {
                return Err(message::invalid_field(
                    "/arguments/context_focus_question",
                    format!(
                        "the output behind {} is {} bytes, over the pruner's input cap ({cap}), and no result of it recorded what it showed: recover it by ranges",
                        input.prune_id,
                        entry.len()
                    ),
                ));
            };
            k + 1
        }
    };
    let part = entry
        .part_up_to(first, cap)
        .map_err(|e| read_error(&input.prune_id, e))?;
    Ok((part, first))
}

/// The kind of text `entry` holds, as the result it came from pruned it: a file's by its path
/// and text, a command's or a search's output as a log (whatever it looks like: a log of
/// uniform lines reads as prose to detection, and its lines would then be fitted as paragraphs),
/// `prune_text`'s as its caller named it or else by its text, a proxied text as the proxy judged it (JSON records as a log).
fn source_of(entry: &Entry, text: &str) -> SourceType {
    if let Some(given) = super::prune_text::given_source(&entry.origin) {
        return given;
    }
    match entry.origin.as_str() {
        "read" => pipeline::detect_source(text, Some(&entry.label)),
        "bash" | "grep" => SourceType::Logs,
        "prune_text" => pipeline::detect_source(text, None),
        // A proxied tool's text.
        _ => pipeline::detect_unnamed(text),
    }
}

/// Where the lines an answer by question is made of come from: the stored text behind
/// `prune_id`, or the part of it a text over the pruner's input cap is answered from.
pub struct Part<'a> {
    /// The id the text is stored under.
    pub prune_id: &'a str,
    /// The stored text's size in bytes.
    pub total_bytes: u64,
    /// Its number of lines.
    pub total_lines: usize,
    /// Its line number (1-based) of the part's first line: 1 for the whole text.
    pub first_line: usize,
}

/// The result of a recovery by question that returns the lines `plan` keeps of `lines` (the
/// part `from` of a stored text, ending with a newline when `trailing_newline`): its text with
/// compact markers giving the stored text's numbers (`N│ ` prefixes when `numbered`) and the
/// count of lines returned. No `ranges`: the markers already give the original numbers, and the
/// model would read them twice (1 to 2 points of two calls' reduction, stop 52). Public so that
/// the quality benchmark counts exactly what the tool returns.
pub fn question_result(
    lines: &[&str],
    plan: &engine::Plan,
    from: &Part<'_>,
    numbered: bool,
    trailing_newline: bool,
) -> RecoverTextResult {
    let Part {
        prune_id,
        total_bytes,
        total_lines,
        first_line,
    } = *from;
    let rendered = render::render_from(
        lines,
        plan,
        prune_id,
        numbered,
        render::Markers::Compact,
        trailing_newline,
        first_line,
    );
    let returned = rendered.kept_lines;
    let total = total_lines;
    RecoverTextResult {
        summary: budget::summary(&if returned == 0 {
            // Within the summary's 100 characters whatever the id, so the advice is never cut.
            format!("nothing new for the question in {prune_id}; recover the rest by ranges")
        } else {
            let noun = if returned == 1 { "line" } else { "lines" };
            format!(
                "{returned} {noun} of {total} from {prune_id} for the question, not shown before"
            )
        }),
        // Nothing returned: no markers either (the summary says where the rest is).
        raw_text: Some(if returned == 0 {
            String::new()
        } else {
            // A part of the text: markers for what comes before it (which says where its rows
            // are) and after it.
            let mut text = String::new();
            if first_line > 1 {
                text.push_str(&render::compact_marker(1, first_line - 1, None));
                text.push('\n');
            }
            text.push_str(&rendered.pruned_text);
            let after = first_line + lines.len();
            if after <= total_lines {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&render::compact_marker(after, total_lines, None));
                text.push('\n');
            }
            text
        }),
        metadata: RecoverTextResultMetadata {
            prune_id: prune_id.to_string(),
            ranges: Vec::new(),
            line_numbering: RecoverTextResultMetadataLineNumbering::Original,
            total_lines: total as u64,
            total_bytes,
            returned_lines: Some(returned as u64),
        },
        has_more: false,
        next_cursor: None,
    }
}

/// Whether a successful `recover_text` result (or the answer behind a resource read) gave lines
/// back: a recovery by ranges always does; one by question unless it found nothing new.
pub fn gave_lines(out: &ToolOutput) -> bool {
    out.structured
        .pointer("/metadata/returned_lines")
        .and_then(serde_json::Value::as_u64)
        != Some(0)
}

/// The tool result of a recovery by question: the model reads the lines as plain text, as it
/// reads `read`'s, closed by the result's summary in brackets, and programs find the rest of the
/// result in `_meta` (with output schemas, all of it in `structuredContent`). Inside a JSON
/// string every newline, quote and backslash of the code is escaped: on the benchmark's code
/// cases that was 19% of the answer's tokens (stop 53). Public so that the quality benchmark
/// counts exactly what the model reads.
pub fn question_output(result: &RecoverTextResult) -> ToolOutput {
    let mut text = result.raw_text.clone().unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[{}]", result.summary));
    ToolOutput::ok(text, result)
}

/// A store read failure as the client sees it: a referenced file that changed, or a shared
/// store's text that left while it was read, is gone (-32004 with the reason); anything else is
/// internal.
fn read_error(id: &str, e: ReadError) -> RpcError {
    match e {
        ReadError::Changed(_) | ReadError::Gone(_) => {
            message::prune_id_not_found(id, e.to_string())
        }
        ReadError::Io(_) => message::rpc_error(
            message::INTERNAL_ERROR,
            "internal error",
            Some(RpcErrorData {
                prune_id: Some(id.into()),
                hint: Some(e.to_string()),
                ..Default::default()
            }),
        ),
    }
}

/// Where a page starts in the concatenation of the requested ranges: a range, a line of it, and
/// how many bytes of that line's row (`N│ ` prefix included when numbered) were already returned;
/// `offset` counts the bytes returned before it (for the cursor only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    /// Index of the range.
    range: usize,
    /// Line of the text (1-based, as rows number it) within that range.
    line: usize,
    /// Bytes of that line's row already returned.
    skip: usize,
    /// Bytes returned before this position.
    offset: u64,
}

/// Up to `want` bytes of the concatenation from some position.
struct Pulled {
    /// The rows pulled, concatenated.
    bytes: Vec<u8>,
    /// Where each row starts in `bytes` and its position (the last one: where `bytes` ends, if
    /// the concatenation ends there).
    rows: Vec<(usize, Pos)>,
    /// Whether the concatenation ends within `bytes`.
    done: bool,
}

impl Pulled {
    /// The position right after the first `n` bytes.
    fn position_after(&self, n: usize) -> Pos {
        let (at, row) = self
            .rows
            .iter()
            .rev()
            .find(|(at, _)| *at <= n)
            .copied()
            .unwrap_or((0, self.rows[0].1));
        Pos {
            skip: row.skip + (n - at),
            offset: row.offset + (n - at) as u64,
            ..row
        }
    }
}

/// Reads rows of the requested ranges from `pos` until `want` bytes are in hand: exact bytes, or
/// `N│ line` rows when `numbered`. Reads the entry only as far as it goes.
fn pull(
    entry: &Entry,
    ranges: &[(usize, usize)],
    numbered: bool,
    pos: Pos,
    want: usize,
) -> Result<Pulled, ReadError> {
    let total = entry.line_count();
    let mut out: Vec<u8> = Vec::new();
    let mut rows = Vec::new();
    let mut p = pos;
    while p.range < ranges.len() {
        let end = ranges[p.range].1.min(total);
        if p.line <= end {
            let mut reader = entry.reader_at(p.line)?;
            while p.line <= end {
                let row = Pos {
                    offset: pos.offset + out.len() as u64,
                    ..p
                };
                // Recorded first, so that a page ending right before this row resumes at it.
                rows.push((out.len(), row));
                if out.len() >= want {
                    return Ok(Pulled {
                        bytes: out,
                        rows,
                        done: false,
                    });
                }
                let prefix = if numbered {
                    format!("{}│ ", p.line)
                } else {
                    String::new()
                };
                let mut skip = p.skip;
                if skip < prefix.len() {
                    out.extend_from_slice(&prefix.as_bytes()[skip..]);
                    skip = 0;
                } else {
                    skip -= prefix.len();
                }
                discard(&mut reader, skip)?;
                loop {
                    let room = want.saturating_sub(out.len());
                    if room == 0 {
                        return Ok(Pulled {
                            bytes: out,
                            rows,
                            done: false,
                        });
                    }
                    let buf = reader.fill_buf()?;
                    if buf.is_empty() {
                        if numbered {
                            out.push(b'\n');
                        }
                        break;
                    }
                    let take = &buf[..buf.len().min(room)];
                    match find_newline(take) {
                        Some(i) => {
                            out.extend_from_slice(&take[..if numbered { i } else { i + 1 }]);
                            if numbered {
                                out.push(b'\n');
                            }
                            reader.consume(i + 1);
                            break;
                        }
                        None => {
                            let n = take.len();
                            out.extend_from_slice(take);
                            reader.consume(n);
                        }
                    }
                }
                p.line += 1;
                p.skip = 0;
            }
        }
        p.range += 1;
        p.line = ranges.get(p.range).map_or(0, |r| r.0);
        p.skip = 0;
    }
    let offset = pos.offset + out.len() as u64;
    rows.push((out.len(), Pos { offset, ..p }));
    Ok(Pulled {
        bytes: out,
        rows,
        done: true,
    })
}

/// Consumes `n` bytes of `reader`.
fn discard(reader: &mut impl BufRead, mut n: usize) -> std::io::Result<()> {
    while n > 0 {
        let got = reader.fill_buf()?.len().min(n);
        if got == 0 {
            break;
        }
        reader.consume(got);
        n -= got;
    }
    Ok(())
}

/// What a cursor is bound to: the prune id, the ranges and the numbering (a digest of their
/// canonical bytes).
fn fingerprint(id: &str, ranges: &[(usize, usize)], numbered: bool) -> [u8; 32] {
    let mut b = Vec::with_capacity(id.len() + 16 * ranges.len() + 16);
    b.extend_from_slice(&(id.len() as u64).to_le_bytes());
    b.extend_from_slice(id.as_bytes());
    b.push(numbered as u8);
    for &(s, e) in ranges {
        b.extend_from_slice(&(s as u64).to_le_bytes());
        b.extend_from_slice(&(e as u64).to_le_bytes());
    }
    crate::secret::digest(&b)
}

/// Kind under which `recover_text` cursors are sealed.
const CURSOR_KIND: &str = "recover_text";

/// `r3.RANGE.LINE.SKIP.OFFSET.MAC`: the position, sealed with the process's key over the whole
/// position and what the cursor is bound to ([`crate::secret::seal`]).
fn encode_cursor(p: Pos, fp: [u8; 32]) -> String {
    crate::secret::seal(
        CURSOR_KIND,
        &fp,
        &format!("r3.{:x}.{:x}.{:x}.{:x}", p.range, p.line, p.skip, p.offset),
    )
}

fn decode_cursor(cursor: &str, fp: [u8; 32]) -> Option<Pos> {
    let body = crate::secret::open(CURSOR_KIND, &fp, cursor)?;
    let mut parts = body.split('.');
    if parts.next()? != "r3" {
        return None;
    }
    let mut num = || usize::from_str_radix(parts.next()?, 16).ok();
    let (range, line, skip, offset) = (num()?, num()?, num()?, num()?);
    parts.next().is_none().then_some(Pos {
        range,
        line,
        skip,
        offset: offset as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SpillWriter, Store};
    use std::time::Duration;

    /// Pages of `want` bytes, each resumed from the previous one's end position.
    fn paged(entry: &Entry, ranges: &[(usize, usize)], numbered: bool, want: usize) -> String {
        let mut pos = Pos {
            range: 0,
            line: ranges[0].0,
            skip: 0,
            offset: 0,
        };
        let mut out = Vec::new();
        for _ in 0..100_000 {
            let p = pull(entry, ranges, numbered, pos, want).unwrap();
            // Cut a little short of what was pulled, as the budget fitting does.
            let n = if p.done {
                p.bytes.len()
            } else {
                p.bytes.len() - p.bytes.len() / 3
            };
            out.extend_from_slice(&p.bytes[..n]);
            if p.done {
                return String::from_utf8(out).unwrap();
            }
            pos = p.position_after(n);
            assert_eq!(pos.offset as usize, out.len());
        }
        panic!("paging never ended");
    }

    #[test]
    fn pages_resume_exactly_in_memory_and_spilled() {
        let text = "a\nbb\n\nlong line ccccccccccccccc\r\nd\nlast without newline";
        let s = Store::new(1 << 20, 10, Duration::from_secs(60));
        let mem = s.put("o", "t", "m", text.to_string());
        let mut w = SpillWriter::with_threshold(4);
        w.push_str(text).unwrap();
        let disk = s.put_written("o", "t", "d", w.finish().unwrap());
        for id in [mem, disk] {
            let e = s.get(&id).unwrap();
            let ranges = [(2, 4), (1, 1), (5, 99)];
            for numbered in [false, true] {
                let mut expected = String::new();
                for &(a, b) in &ranges {
                    for n in a..=b.min(e.line_count()) {
                        let line = e.lines(n, n).unwrap();
                        if numbered {
                            let line = line.strip_suffix('\n').unwrap_or(&line);
                            expected.push_str(&format!("{n}│ {line}\n"));
                        } else {
                            expected.push_str(&line);
                        }
                    }
                }
                for want in [1, 2, 3, 5, 8, 13, 1000] {
                    assert_eq!(
                        paged(&e, &ranges, numbered, want),
                        expected,
                        "{id} numbered={numbered} want={want}"
                    );
                }
            }
        }
    }
}
