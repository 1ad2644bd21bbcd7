//! MCP resources over the recovery store: every stored output is `prune://<prune_id>`, listed by
//! `resources/list` and readable in full by `resources/read` (seed 002's artifact references).
//! Read-only. A text over [`READ_MAX`] (a spilled or referenced artifact) is not returned whole:
//! the error says to page it with `recover_text`.

use crate::app::App;
use crate::contract::types::RpcError;
use crate::rpc::message;
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
    json!([{ "uriTemplate": format!("{SCHEME}{{prune_id}}"), "name": "stored output", "mimeType": "text/plain" }])
}

/// `resources/read {uri}`: the whole stored text.
pub fn read(app: &App, params: &Value) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| message::invalid_field("/uri", "required string, e.g. prune://prn_…"))?;
    let id = uri.strip_prefix(SCHEME).ok_or_else(|| {
        message::invalid_field("/uri", format!("expected a {SCHEME}<prune_id> URI"))
    })?;
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
        .get(id)
        .map_err(|why| not_found(why.explain().to_string()))?;
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
