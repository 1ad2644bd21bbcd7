//! Requests of a `mcp-pruner proxy` that go to the upstream: `tools/list` (the upstream's tools,
//! extended, then `recover_text`), `tools/call` of an upstream tool, `resources/*`, `prompts/*`,
//! `completion/complete`, and `logging/setLevel` (applied here and forwarded). Each runs with the
//! request's in-flight registration, so a downstream cancellation cancels the upstream call.
//! Owns the routing decision only; the forwarding is [`crate::proxy`].

use crate::app::App;
use crate::protocol::message;
use crate::protocol::session::{LOG_LEVELS, Session};
use crate::proxy::{Proxy, ProxyError};
use crate::sync::Unpoisoned;
use crate::tools::ToolCtx;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Whether `method` (with `params`) goes to the upstream. Calls of the built-in `recover_text`
/// (under its listed name) stay here.
pub fn routes(app: &App, proxy: &Proxy, method: &str, params: &Value) -> bool {
    match method {
        "tools/list" | "logging/setLevel" | "completion/complete" => true,
        "tools/call" => {
            let name = params["name"].as_str().unwrap_or_default();
            let bare = name
                .strip_prefix(app.config.tool_prefix.as_str())
                .unwrap_or(name);
            let builtin = crate::contract::contract()
                .tool(bare)
                .is_some_and(|t| t.name == "recover_text");
            !builtin && proxy.upstream_tool(name).is_some()
        }
        m => m.starts_with("resources/") || m.starts_with("prompts/"),
    }
}

/// The request's `_meta` without the 2026-07-28 envelope (`io.modelcontextprotocol/*`): the era
/// spoken upstream is the proxy's choice ([`crate::proxy::upstream`]), whatever era the client
/// speaks.
fn without_envelope(mut params: Value) -> Value {
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
        if meta.is_empty()
            && let Some(p) = params.as_object_mut()
        {
            p.remove("_meta");
        }
    }
    params
}

/// The session's log level as the 2026-07-28 `logLevel` envelope key, for a 2026-07-28 upstream
/// (the upstream connection drops it for a handshake-era one, which got `logging/setLevel`).
fn with_log_level(mut params: Value, session: &Session) -> Value {
    let level = *session.log_level.locked();
    if let Some(i) = level
        && params.is_object()
    {
        params["_meta"][crate::protocol::era::LOG_LEVEL_KEY] = json!(LOG_LEVELS[i]);
    }
    params
}

/// Runs one routed request.
pub async fn request(
    app: &Arc<App>,
    proxy: &Proxy,
    session: &Arc<Session>,
    id: &Value,
    method: &str,
    params: Value,
    notify: UnboundedSender<Value>,
) -> Result<Value, ProxyError> {
    let params = with_log_level(without_envelope(params), session);
    if method == "tools/list" {
        let ours = super::dispatch::tools_list(app)["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        return proxy.tools_list(params, ours).await;
    }
    if method == "logging/setLevel" {
        let level = params["level"].as_str().unwrap_or_default();
        let Some(i) = LOG_LEVELS.iter().position(|l| *l == level) else {
            return Err(ProxyError::Ours(message::invalid_field(
                "/level",
                format!("expected one of {}", LOG_LEVELS.join(", ")),
            )));
        };
        *session.log_level.locked() = Some(i);
    }
    let registration = app.inflight.register(&session.id, &message::id_key(id));
    let progress_to = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number())
        .map(|t| (t.clone(), notify.clone()));
    let ctx = ToolCtx {
        app: app.clone(),
        session: session.clone(),
        request_id: app.new_request_id(),
        cancel: registration.token.clone(),
        progress: Arc::new(crate::protocol::progress::Progress::disabled()),
        notify,
    };
    let out = if method == "tools/call" {
        let name = params["name"].as_str().unwrap_or_default().to_string();
        let tool = proxy.upstream_tool(&name).unwrap_or(&name).to_string();
        proxy.call_tool(&ctx, &tool, params, progress_to).await
    } else {
        proxy.forward(&ctx, method, params, progress_to).await
    };
    drop(registration);
    if method == "logging/setLevel" {
        // Applied here whatever the upstream says (an upstream without logging refuses it).
        return Ok(json!({}));
    }
    out
}
