//! MCP resources over the recovery store: every stored output is `prune://<prune_id>`, listed by
//! `resources/list` and readable in full by `resources/read` (seed 002's artifact references), or
//! for a question, `prune://<prune_id>?question=…`: what `recover_text` with
//! `context_focus_question` returns, the lines not shown before that serve the question, with
//! named markers. Read-only. A text over [`READ_MAX`] (a spilled or referenced artifact) is not
//! returned whole: the error says to page it with `recover_text`.

use super::recover_text;
use crate::app::App;
use crate::contract::types::{RecoverTextInput, RpcError};
use crate::protocol::message;
use serde_json::{Value, json};

/// URI scheme of stored outputs.
pub const SCHEME: &str = "prune://";
const PAGE: usize = 100;
/// Largest stored text `resources/read` returns whole.
pub const READ_MAX: usize = 16 * 1024 * 1024;

/// `resources/list` for session `owner`, paged by an offset cursor: the outputs stored for that
/// session only (a stateless HTTP request is a session of its own, so it lists nothing; any id
/// stays readable by whoever holds it, as seed 001's stateless `recover_text` requires).
pub fn list(app: &App, owner: &str, params: &Value) -> Value {
    let skip = params
        .get("cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.strip_prefix("o"))
        .and_then(|c| c.parse::<usize>().ok())
        .unwrap_or(0);
    let entries = app.store.list(owner);
    let page: Vec<Value> = entries
        .iter()
        .skip(skip)
        .take(PAGE)
        .map(|e| {
            json!({
                "uri": format!("{SCHEME}{}", e.id),
                "name": e.id,
                "title": format!("{}: {}", e.origin, e.label),
                "mimeType": "text/plain",
                "size": e.len()
            })
        })
        .collect();
    let mut out = json!({ "resources": page });
    if skip + PAGE < entries.len() {
        out["nextCursor"] = json!(format!("o{}", skip + PAGE));
    }
    out
}

/// `resources/templates/list` entries.
pub fn templates() -> Value {
    json!([
        { "uriTemplate": format!("{SCHEME}{{prune_id}}"), "name": "stored output", "mimeType": "text/plain" },
        { "uriTemplate": format!("{SCHEME}{{prune_id}}{{?question}}"), "name": "stored output, the lines not shown yet for a question", "mimeType": "text/plain" }
    ])
}

/// `resources/read {uri}`: the whole stored text.
pub async fn read(app: &App, params: &Value) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| message::invalid_field("/uri", "required string, e.g. prune://prn_…"))?;
    let rest = uri.strip_prefix(SCHEME).ok_or_else(|| {
        message::invalid_field("/uri", format!("expected a {SCHEME}<prune_id> URI"))
    })?;
    let (id, question) = match rest.split_once('?') {
        None => (rest, None),
        Some((id, query)) => (id, Some(question_of(query)?)),
    };
    // Not found: the error's data names the URI requested (SEP-2164), besides the prune id.
    let not_found = |hint: String| {
        let mut e = message::prune_id_not_found(id, hint);
        if let Some(data) = e.data.as_mut() {
            data.uri = Some(uri.to_string());
        }
        e
    };
    let entry = app
        .store
        .get_at_async(id, None)
        .await
        .map_err(|why| not_found(why.explain().to_string()))?;
    if let Some(question) = question {
        let input = RecoverTextInput {
            prune_id: id.to_string(),
            context_focus_question: Some(question.clone().into()),
            cursor: None,
            include_line_numbers: None,
            max_output_bytes: None,
            ranges: Vec::new(),
        };
        // A resource's text is the lines, plain, whatever the tools' output schemas.
        let out = recover_text::by_question(&input, &question, &entry, None, app, false).await?;
        let text = out.structured["raw_text"].as_str().unwrap_or_default();
        return Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }));
    }
    let text = entry
        .text_up_to(READ_MAX)
        .map_err(|e| not_found(e.to_string()))?
        .ok_or_else(|| {
            message::invalid_field(
                "/uri",
                format!(
                    "{id} holds {} bytes, more than resources/read returns ({READ_MAX}); page it with recover_text prune_id={id}",
                    entry.len()
                ),
            )
        })?;
    Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }))
}

/// The question of a `prune://<prune_id>?question=…` URI's query (percent-decoded, `+` a space):
/// an error naming `/uri` when the query holds anything else or an empty question.
fn question_of(query: &str) -> Result<String, RpcError> {
    let mut question = None;
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        if key != "question" || question.is_some() {
            return Err(message::invalid_field(
                "/uri",
                format!("unknown query parameter {key:?}: expected one question=…"),
            ));
        }
        question = Some(value.into_owned());
    }
    question
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| message::invalid_field("/uri", "question=… must not be empty"))
}
