//! A proxied result through the shared pipeline ([`crate::tools::result::Pipeline`]): every
//! text (a tool result's `text` content, a resource's `text` contents) is budgeted, pruned with
//! the question, stored and cut with notes naming its `prune_id`, exactly as `read` and `bash`
//! output is; JSON text is laid out one record per line first ([`super::records`]), so whole
//! records are kept or removed. Everything else (`structuredContent`, images, audio, resource
//! links, embedded resources, blobs) passes through untouched and counts against the budget,
//! which the texts share (small texts whole first, the larger ones in proportion to their size;
//! a text is never replaced by anything longer than itself). Clients that read
//! `structuredContent` would otherwise read the whole text whatever its pruning, so a
//! `structuredContent` string that repeats a text gets the text's pruned form and counts once,
//! and a `structuredContent` that is a text's own JSON is dropped when the result is shaped.
//! With no question and everything within the budget, the result is returned exactly as the
//! upstream sent it. Owns this walk over a result; never talks to the upstream.

use super::records;
use crate::contract::types::{PruningMetadata, PruningMetadataReason, SourceType};
use crate::prune::not_attempted;
use crate::tools::RESULT_META_KEY;
use crate::tools::result::Pipeline;
use crate::{budget, prune, tokens};
use serde_json::{Value, json};

/// The texts' floor: one `TEXT_FLOOR`th of the budget, whatever the rest of the result takes.
const TEXT_FLOOR: usize = 4;

/// A shaped result and its counts.
pub struct Shaped {
    /// Bytes of the texts sent.
    pub text_bytes: usize,
    /// The result to send downstream.
    pub result: Value,
    /// What pruning did across its texts.
    pub pruning: PruningMetadata,
    /// o200k tokens of the texts sent (counted only when asked).
    pub tokens_read: u64,
}

/// Shapes `items` (content or contents) in place; `fixed` bytes of the result are not texts.
async fn shape_items(
    p: &Pipeline<'_>,
    items: &mut [Value],
    fixed: usize,
    question: Option<&str>,
    label: &str,
) -> Option<PruningMetadata> {
    let is_text =
        |v: &Value| v.get("text").is_some_and(Value::is_string) && v.get("blob").is_none();
    let total: usize = items
        .iter()
        .filter(|v| is_text(v))
        .map(|v| v["text"].as_str().map_or(0, str::len))
        .sum();
    // The texts keep at least a quarter of the budget: a result whose untouched parts take more
    // (a `structuredContent` that repeats the text) still shows its text, pruned and cut.
    let room = p.budget.saturating_sub(fixed).max(p.budget / TEXT_FLOOR);
    let sizes: Vec<usize> = items
        .iter()
        .filter(|v| is_text(v))
        .map(|v| v["text"].as_str().map_or(0, str::len))
        .collect();
    let shares = shares(&sizes, room.min(total));
    let mut merged: Option<PruningMetadata> = None;
    for (item, share) in items.iter_mut().filter(|v| is_text(v)).zip(shares) {
        let raw = item["text"].as_str().unwrap_or_default().to_string();
        let laid = (question.is_some() || raw.len() > share)
            .then(|| records::record_lines(&raw))
            .flatten()
            .filter(|l| !one_line_dominates(l));
        let (text, source) = match &laid {
            Some(l) => (l.as_str(), SourceType::Logs),
            None => (raw.as_str(), prune::detect_source(&raw, None)),
        };
        let mut fitted = p.fit_text(text, question, source, label, share).await;
        if fitted.text.len() >= raw.len() && fitted.pruning.applied || fitted.text.len() > raw.len()
        {
            // Its share is smaller than a cut's note (many small texts): the text stays whole,
            // never replaced by something longer.
            fitted.text = raw.clone();
            fitted.pruning.applied = false;
            fitted.pruning.pruned_bytes = None;
            fitted.pruning.reason = Some(PruningMetadataReason::NoSavings);
        }
        item["text"] = Value::String(fitted.text);
        match merged.as_mut() {
            None => merged = Some(fitted.pruning),
            Some(m) => prune::merge_metadata(m, &fitted.pruning),
        }
    }
    merged
}

/// Each text's share of `room` bytes, for texts of `sizes` bytes: smallest first, a text no
/// larger than an equal split of what is left keeps its whole size; the larger ones split the
/// rest in proportion to their size. (In proportion alone, one large text cut every small one
/// beside it, each to a note longer than itself.)
fn shares(sizes: &[usize], room: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let mut shares = vec![0; sizes.len()];
    let mut left = room;
    for (k, &i) in order.iter().enumerate() {
        if sizes[i] <= left / (sizes.len() - k) {
            shares[i] = sizes[i];
            left -= sizes[i];
            continue;
        }
        let rest: usize = order[k..].iter().map(|&j| sizes[j]).sum();
        for &j in &order[k..] {
            shares[j] = (left as u128 * sizes[j] as u128 / rest.max(1) as u128) as usize;
        }
        break;
    }
    shares
}

/// Whether one line holds more than half of `laid`'s bytes: a JSON text whose weight is one
/// string member (a command's output wrapped in an object). Laid out one member a line, that
/// member is a single line, kept or removed whole: the text is better cut as it came.
fn one_line_dominates(laid: &str) -> bool {
    laid.lines().any(|l| l.len() * 2 > laid.len())
}

/// Bytes of the items that are not texts.
fn fixed_bytes(items: &[Value]) -> usize {
    items
        .iter()
        .filter(|v| !v.get("text").is_some_and(Value::is_string))
        .map(budget::json_len)
        .sum()
}

fn text_bytes(items: &[Value]) -> usize {
    items
        .iter()
        .filter_map(|v| v.get("text").and_then(Value::as_str))
        .map(str::len)
        .sum()
}

fn count_texts(items: &[Value]) -> u64 {
    items
        .iter()
        .filter_map(|v| v.get("text").and_then(Value::as_str))
        .map(|t| tokens::count(t) as u64)
        .sum()
}

/// A `tools/call` result. `isError` results keep their text unpruned, only budgeted.
pub async fn tool_result(
    p: &Pipeline<'_>,
    mut result: Value,
    question: Option<&str>,
    label: &str,
    count: bool,
) -> Shaped {
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    let items = result
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    let originals: Vec<Option<String>> = items
        .iter()
        .map(|v| v.get("text").and_then(Value::as_str).map(str::to_owned))
        .collect();
    // A `structuredContent` that is a text's own JSON (the SDKs' structured output: the object,
    // and its JSON as the text) says nothing the text does not. When the result is shaped it
    // goes: clients that read it would read the whole object whatever the text's pruning (the
    // proxy lists no output schema that would require it).
    let whole = text_bytes(&items)
        + fixed_bytes(&items)
        + result.get("structuredContent").map_or(0, budget::json_len);
    if (question.is_some() && !is_error || whole > p.budget)
        && result
            .get("structuredContent")
            .is_some_and(|sc| repeats_a_text(sc, &originals))
        && let Some(r) = result.as_object_mut()
    {
        r.remove("structuredContent");
    }
    // A `structuredContent` string that repeats a text is that text, read once: it is not
    // counted twice, and it gets the text's pruned form below.
    let structured = result.get("structuredContent").map_or(0, |s| {
        let mut rest = s.clone();
        for text in originals.iter().flatten() {
            replace_strings(&mut rest, text, "");
        }
        budget::json_len(&rest)
    });
    let mut shaped = finish(
        p,
        result,
        items,
        "content",
        structured,
        if is_error { None } else { question },
        label,
        count,
    )
    .await;
    // Claude Code and Codex give the model `structuredContent` when a result has one: a copy of
    // the text there would undo the pruning for them.
    let after: Vec<Option<String>> = shaped
        .result
        .get("content")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(sc) = shaped.result.get_mut("structuredContent") {
        for (old, new) in originals.iter().zip(&after) {
            if let (Some(old), Some(new)) = (old, new)
                && old != new
            {
                replace_strings(sc, old, new);
            }
        }
        // What those clients read is `JSON.stringify(structuredContent)`: its tokens, not the
        // texts', are the result's.
        if count || shaped.pruning.tokens_after.is_some() {
            shaped.tokens_read = tokens::count(&sc.to_string()) as u64;
        }
        if shaped.pruning.tokens_after.is_some() {
            shaped.pruning.tokens_after = Some(shaped.tokens_read);
            if let Some(m) = shaped.result.pointer_mut(&format!(
                "/_meta/{}/pruning",
                json_pointer_escape(RESULT_META_KEY)
            )) {
                m["tokens_after"] = shaped.tokens_read.into();
            }
        }
    }
    shaped
}

/// `key` escaped as one JSON Pointer reference token (`~` and `/`).
fn json_pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `sc` is the JSON one of `texts` holds (a text that parses to the same value).
fn repeats_a_text(sc: &Value, texts: &[Option<String>]) -> bool {
    texts.iter().flatten().any(|t| {
        let t = t.trim_start();
        (t.starts_with('{') || t.starts_with('['))
            && serde_json::from_str::<Value>(t).is_ok_and(|v| &v == sc)
    })
}

/// Replaces every string of `value` (at any depth, object keys aside) equal to `old` by `new`.
fn replace_strings(value: &mut Value, old: &str, new: &str) {
    match value {
        Value::String(s) if s == old => *s = new.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, old, new)),
        Value::Object(members) => members
            .values_mut()
            .for_each(|v| replace_strings(v, old, new)),
        _ => {}
    }
}

/// A `resources/read` result: its text contents budgeted (no question).
pub async fn resource_result(
    p: &Pipeline<'_>,
    mut result: Value,
    label: &str,
    count: bool,
) -> Shaped {
    let items = result
        .get_mut("contents")
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    finish(p, result, items, "contents", 0, None, label, count).await
}

#[allow(clippy::too_many_arguments)]
async fn finish(
    p: &Pipeline<'_>,
    mut result: Value,
    mut items: Vec<Value>,
    key: &str,
    structured: usize,
    question: Option<&str>,
    label: &str,
    count: bool,
) -> Shaped {
    let fixed = fixed_bytes(&items) + structured;
    let texts = text_bytes(&items);
    // Not attempted: no question, or (with one) no text to prune.
    let reason = if question.is_some() {
        PruningMetadataReason::OutputEmpty
    } else {
        PruningMetadataReason::NoFocusQuestion
    };
    if question.is_none() && texts + fixed <= p.budget {
        // Transparent: nothing to do, nothing added.
        let tokens_read = if count { count_texts(&items) } else { 0 };
        if result.get(key).is_some() {
            result[key] = Value::Array(items);
        }
        return Shaped {
            result,
            pruning: not_attempted(reason, texts as u64),
            tokens_read,
            text_bytes: texts,
        };
    }
    let merged = shape_items(p, &mut items, fixed, question, label).await;
    let tokens_read = count_texts(&items);
    let text_bytes = text_bytes(&items);
    let mut pruning = merged.unwrap_or_else(|| not_attempted(reason, texts as u64));
    pruning.tokens_after = Some(tokens_read);
    if result.is_object() {
        result[key] = Value::Array(items);
        if !result.get("_meta").is_some_and(Value::is_object) {
            result["_meta"] = json!({});
        }
        result["_meta"][RESULT_META_KEY] = json!({ "pruning": pruning });
    }
    Shaped {
        result,
        pruning,
        tokens_read,
        text_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::{one_line_dominates, shares};

    #[test]
    fn small_texts_keep_their_size_and_large_ones_share_the_rest() {
        // 1,000 bytes of room: the three small texts whole, the two large ones 440 and 440.
        assert_eq!(
            shares(&[10, 5000, 50, 5000, 60], 1000),
            [10, 440, 50, 440, 60]
        );
        // All fit: each its own size.
        assert_eq!(shares(&[10, 20], 1000), [10, 20]);
        // Many equal texts over the room: an equal split.
        assert_eq!(shares(&[40; 4], 100), [25; 4]);
        assert_eq!(shares(&[], 100), Vec::<usize>::new());
    }

    #[test]
    fn one_member_holding_most_of_a_json_text_dominates() {
        let big = format!(
            "{{\n\"path\":\"a\",\n\"output\":\"{}\"\n}}",
            "x".repeat(500)
        );
        assert!(one_line_dominates(&big));
        let records: String = (0..20).map(|i| format!("{{\"id\":{i}}},\n")).collect();
        assert!(!one_line_dominates(&records));
    }
}
