//! MCP resources over the recovery store: every stored output is `prune://<prune_id>`, listed by
//! `resources/list` and readable in full by `resources/read` (seed 002's artifact references), or
//! for a question, `prune://<prune_id>?question=…`: what `recover_text` with
//! `context_focus_question` returns, the lines not shown before that serve the question, with
//! named markers. Read-only. A text over [`READ_MAX`] (a spilled or referenced artifact) is not
//! returned whole: the error says to page it with `recover_text`. A read that returns lines marks
//! the id recovered in the ledger, as `recover_text` does.

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
    // A fragment names a part of what a client shows, not of the resource.
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let (id, question) = match rest.split_once('?') {
        None => (rest, None),
        Some((id, query)) => (id, Some(question_of(query)?)),
    };
    if id.is_empty() {
        return Err(message::invalid_field(
            "/uri",
            format!("expected a {SCHEME}<prune_id> URI: the prune id is missing"),
        ));
    }
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
        // A resource's text is what the tool's plain answer is: the lines, then the summary in
        // brackets (which says when nothing was left to return), whatever the output schemas.
        let out = recover_text::by_question(&input, &question, &entry, None, app, false)
            .await
            .map_err(on_uri)?;
        // A recovery like the tool's, counted as one when it gives lines back.
        if recover_text::gave_lines(&out) {
            app.ledger.recovered(id);
        }
        return Ok(
            json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": out.text }] }),
        );
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
    app.ledger.recovered(id);
    Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }))
}

/// The question of a `prune://<prune_id>?question=…` URI's query (percent-decoded, `+` a space,
/// UTF-8 required), held to the tool's own rules for `context_focus_question` (its schema): an
/// error naming `/uri` when the query holds anything else, twice the question, or a question the
/// tool would refuse.
fn question_of(query: &str) -> Result<String, RpcError> {
    let mut question = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key)?;
        if key != "question" {
            return Err(message::invalid_field(
                "/uri",
                format!("unknown query parameter {key:?}: expected one question=…"),
            ));
        }
        if question.is_some() {
            return Err(message::invalid_field(
                "/uri",
                "question=… is given twice: expected one",
            ));
        }
        question = Some(decode(value)?);
    }
    let question =
        question.ok_or_else(|| message::invalid_field("/uri", "expected one question=…"))?;
    let tool = crate::contract::contract()
        .tool("recover_text")
        .expect("recover_text is in the manifest");
    let arguments = json!({ "prune_id": "prn", "context_focus_question": question });
    if let Err(errors) = tool.validate_arguments(&arguments) {
        let why: Vec<String> = errors.into_iter().map(|e| e.message).collect();
        return Err(message::invalid_field(
            "/uri",
            format!("question=…: {}", why.join("; ")),
        ));
    }
    Ok(question)
}

/// One percent-encoded query component (`+` a space), which must decode to UTF-8.
fn decode(component: &str) -> Result<String, RpcError> {
    let spaced = component.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| {
            message::invalid_field(
                "/uri",
                format!(
                    "{:?} does not percent-decode to UTF-8",
                    crate::contract::validate::echo(component)
                ),
            )
        })
}

/// An error of the recovery behind a resource read, naming the URI where it named the tool's
/// argument (a resource read has no arguments).
fn on_uri(e: RpcError) -> RpcError {
    match e.data.as_ref().filter(|d| !d.field_errors.is_empty()) {
        Some(data) => {
            let mut errors = data.field_errors.clone();
            for f in errors
                .iter_mut()
                .filter(|f| f.field.starts_with("/arguments"))
            {
                f.field = "/uri".into();
            }
            message::invalid_params(errors)
        }
        None => e,
    }
}
