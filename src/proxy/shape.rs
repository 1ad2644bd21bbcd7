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

use super::records::{self, Layout};
use crate::contract::types::{PruningMetadata, PruningMetadataReason};
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
    // The texts keep at least a quarter of the budget: a result whose untouched parts take more
    // (a `structuredContent` that repeats the text) still shows its text, pruned and cut.
    let room = p.budget.saturating_sub(fixed).max(p.budget / TEXT_FLOOR);
    let sizes: Vec<usize> = items
        .iter()
        .filter(|v| is_text(v))
        .map(|v| v["text"].as_str().map_or(0, str::len))
        .collect();
    let total: usize = sizes.iter().sum();
    let shares = shares(&sizes, room.min(total));
    let cut = sizes
        .iter()
        .zip(&shares)
        .filter(|(size, share)| share < size)
        .count();
    if cut > 1 && cut * MIN_CUT_SHARE > room {
        return Some(shape_as_one(p, items, room, question, label).await);
    }
    let mut merged: Option<PruningMetadata> = None;
    for (item, share) in items.iter_mut().filter(|v| is_text(v)).zip(shares) {
        let raw = item["text"].as_str().unwrap_or_default().to_string();
        let laid = (question.is_some() || raw.len() > share)
            .then(|| records::layout(&raw))
            .flatten();
        // A string that holds an object's weight is pruned alone, under the rest of the object
        // (which must leave it most of the share: else the text is cut as it came).
        let (head, text) = match &laid {
            Some(Layout::Records(records)) => ("", records.as_str()),
            Some(Layout::Member { head, body }) if head.len() * 2 < share => {
                (head.as_str(), body.as_str())
            }
            _ => ("", raw.as_str()),
        };
        let source = prune::detect_unnamed(text);
        let mut fitted = p
            .fit_text(text, question, source, label, share - head.len())
            .await;
        if !head.is_empty() {
            if !fitted.pruning.applied && fitted.text == text {
                // Neither pruned nor cut: the upstream's text goes out as it came, JSON and all.
                fitted.text = raw.clone();
            } else {
                fitted.text.insert_str(0, head);
            }
            // What the call saved is counted against the text the upstream sent.
            fitted.pruning.raw_bytes = raw.len() as u64;
            if fitted.pruning.tokens_before.is_some() {
                fitted.pruning.tokens_before =
                    Some(prune::pipeline::tokens_as_read(&raw, p.schemas()));
            }
        }
        if fitted.text.len() >= raw.len() && fitted.pruning.applied || fitted.text.len() > raw.len()
        {
            // Its share is smaller than a cut's note (many small texts): the text stays whole,
            // never replaced by something longer.
            fitted.text = raw.clone();
            prune::pipeline::gave_way_to_raw(&mut fitted.pruning);
            fitted.pruning.prune_id = None;
        }
        item["text"] = Value::String(fitted.text);
        match merged.as_mut() {
            None => merged = Some(fitted.pruning),
            Some(m) => prune::merge_metadata(m, &fitted.pruning),
        }
    }
    merged
}

/// Whether `v` is a text content (or a resource's text contents).
fn is_text(v: &Value) -> bool {
    v.get("text").is_some_and(Value::is_string) && v.get("blob").is_none()
}

/// Too many texts to cut one by one (a list result the SDKs send as one text per item): their
/// shares would be smaller than the notes that say where the rest is. They are joined, one after
/// another on their own lines, pruned and cut as one text under one `prune_id`, which the first
/// text content carries; the others are left empty.
async fn shape_as_one(
    p: &Pipeline<'_>,
    items: &mut [Value],
    room: usize,
    question: Option<&str>,
    label: &str,
) -> PruningMetadata {
    let texts: Vec<&str> = items
        .iter()
        .filter(|v| is_text(v))
        .map(|v| v["text"].as_str().unwrap_or_default())
        .collect();
    let joined = texts.join("\n");
    let source = prune::detect_unnamed(&joined);
    let fitted = p.fit_text(&joined, question, source, label, room).await;
    let mut first = Some(fitted.text);
    for item in items.iter_mut().filter(|v| is_text(v)) {
        item["text"] = Value::String(first.take().unwrap_or_default());
    }
    fitted.pruning
}

/// A text's share under which cutting it on its own is pointless: a cut's note takes about 130
/// bytes, and the lines beside it need room too.
const MIN_CUT_SHARE: usize = 256;

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
            settle(&mut shaped.pruning, shaped.tokens_read);
            if let Some(m) = shaped.result.pointer_mut(&format!(
                "/_meta/{}/pruning",
                json_pointer_escape(RESULT_META_KEY)
            )) {
                m["tokens_after"] = shaped.tokens_read.into();
                if let Some(before) = shaped.pruning.tokens_before {
                    m["tokens_before"] = before.into();
                }
            }
        }
    }
    shaped
}

/// Sets `pruning`'s `tokens_after` to `read`, the tokens the model reads, and its
/// `tokens_before` as [`prune::pipeline::settled_before`] says.
fn settle(pruning: &mut PruningMetadata, read: u64) {
    pruning.tokens_after = Some(read);
    if let Some(before) = pruning.tokens_before.as_mut() {
        *before = prune::pipeline::settled_before(*before, pruning.applied, read);
    }
}

/// `key` escaped as one JSON Pointer reference token (`~` and `/`).
fn json_pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `sc` says nothing the texts do not: it is the JSON one of them holds, or the Python
/// SDK's wrapping of a result that is not an object, `{"result": X}`, where X is the one text's
/// value or the list of the texts' values (a text's value: its JSON, else the text as a string).
fn repeats_a_text(sc: &Value, texts: &[Option<String>]) -> bool {
    let texts: Vec<&str> = texts.iter().flatten().map(String::as_str).collect();
    let value = |t: &str| -> Value {
        serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.to_owned()))
    };
    let is_json = |t: &str| {
        let t = t.trim_start();
        t.starts_with('{') || t.starts_with('[')
    };
    if texts.iter().any(|t| is_json(t) && &value(t) == sc) {
        return true;
    }
    let Value::Object(m) = sc else {
        return false;
    };
    let Some(x) = m.get("result").filter(|_| m.len() == 1) else {
        return false;
    };
    let one_per_item = x.as_array().is_some_and(|items| {
        items.len() == texts.len() && items.iter().zip(&texts).all(|(v, t)| *v == value(t))
    });
    one_per_item || texts.len() == 1 && *x == value(texts[0])
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
    settle(&mut pruning, tokens_read);
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
    use super::{repeats_a_text, shares};
    use serde_json::json;

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
    fn structured_output_that_repeats_the_texts() {
        let texts =
            |t: &[&str]| -> Vec<Option<String>> { t.iter().map(|s| Some(s.to_string())).collect() };
        // The object as its text's JSON.
        let obj = json!({"total": 1, "items": [{"id": 1}]});
        assert!(repeats_a_text(&obj, &texts(&[&obj.to_string()])));
        // The Python SDK's wrapping: a list (one text per item), a number, a string.
        let items = texts(&[r#"{"id": 1}"#, r#"{"id": 2}"#]);
        assert!(repeats_a_text(
            &json!({"result": [{"id": 1}, {"id": 2}]}),
            &items
        ));
        assert!(repeats_a_text(&json!({"result": 5}), &texts(&["5"])));
        assert!(repeats_a_text(&json!({"result": "ok"}), &texts(&["ok"])));
        assert!(repeats_a_text(
            &json!({"result": [{"id": 1}]}),
            &texts(&[r#"{"id":1}"#])
        ));
        assert!(repeats_a_text(
            &json!({"result": [1, 2]}),
            &texts(&["[1, 2]"])
        ));
        // Something else: kept.
        assert!(!repeats_a_text(&json!({"result": [{"id": 1}]}), &items));
        assert!(!repeats_a_text(&json!({"other": 5}), &texts(&["5"])));
        assert!(!repeats_a_text(
            &json!({"content": "text"}),
            &texts(&["text"])
        ));
    }
}
