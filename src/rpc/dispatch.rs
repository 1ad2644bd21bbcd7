//! The dispatcher: one MCP message in, at most one response out, notifications on the side.
//! Owns method routing, the `initialize` handshake, `tools/list` (built from the contract) and the
//! `tools/call` envelope (validation, cancellation, progress, the one terminal response). The tools
//! themselves live in [`crate::tools`].

use super::Server;
use crate::app::App;
use crate::contract::{contract, types::FieldError};
use crate::protocol::era::{self, Mirrored};
use crate::protocol::message::{self, Incoming};
use crate::protocol::progress::Progress;
use crate::protocol::session::{LOG_LEVELS, PROTOCOL_VERSIONS, Session};
use crate::sync::Unpoisoned;
use crate::version::{SERVER_NAME, TOOLING_VERSION};
use crate::{events, tools};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Handles one incoming JSON value. Returns the response for a request, `None` for anything that
/// is not answered (notifications, client responses). `notify` carries notifications (progress,
/// log messages) that belong before the response.
///
/// A request in the 2026-07-28 era (see [`era::is_modern`]) is checked against its envelope and,
/// on HTTP, the mirrored `headers`; it runs with its own [`Session`] under the connection's id.
pub async fn handle(
    server: &Server,
    session: &Arc<Session>,
    msg: Value,
    notify: UnboundedSender<Value>,
    headers: Option<&Mirrored>,
) -> Option<Value> {
    let app = &server.app;
    let incoming = match message::classify(msg) {
        Ok(m) => m,
        Err(error_response) => {
            events::request_parse_failed(error_response["error"]["message"].as_str().unwrap_or(""));
            return Some(error_response);
        }
    };
    match incoming {
        Incoming::Response => None,
        Incoming::Notification { method, params } => {
            notification(app, session, &method, &params);
            None
        }
        Incoming::Request { id, method, params } => {
            let header_version = headers.and_then(|h| h.protocol_version.as_deref());
            let modern = era::is_modern(&method, &params, header_version);
            if let Some(proxy) = server.proxy.as_ref()
                && !modern
                && super::proxied::routes(app, proxy, &method, &params)
            {
                let out =
                    super::proxied::request(app, proxy, session, &id, &method, params, notify)
                        .await;
                return Some(match out {
                    Ok(v) => message::result_response(id, v),
                    Err(e) => json!({ "jsonrpc": "2.0", "id": id, "error": e.into_value() }),
                });
            }
            let result = if modern {
                modern_request(server, session, &id, &method, params, notify, headers).await
            } else {
                request(server, session, &id, &method, params, notify).await
            };
            Some(match result {
                Ok(v) => message::result_response(id, v),
                Err(e) => message::error_response(id, e),
            })
        }
    }
}

fn notification(app: &App, session: &Session, method: &str, params: &Value) {
    match method {
        // MCP: {requestId, reason?}; seed 003: $/cancelRequest {id}.
        "notifications/cancelled" | "$/cancelRequest" => {
            let id = params.get("requestId").or_else(|| params.get("id"));
            if let Some(id) = id {
                app.inflight.cancel(&session.id, &message::id_key(id));
            }
        }
        // Nothing to do: requests are served whether or not the client sent it.
        "notifications/initialized" => {}
        _ => {}
    }
}

type RpcResult = Result<Value, crate::contract::types::RpcError>;

async fn request(
    server: &Server,
    session: &Arc<Session>,
    id: &Value,
    method: &str,
    params: Value,
    notify: UnboundedSender<Value>,
) -> RpcResult {
    let app = &server.app;
    if !params.is_object() {
        return Err(message::invalid_field("/", "params must be an object"));
    }
    match method {
        "initialize" => initialize(server, session, &params),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(tools_list(app)),
        "tools/call" => tools_call(app, session, id, params, notify).await,
        "resources/list" => Ok(tools::resources::list(app, &session.id, &params)),
        "resources/read" => tools::resources::read(app, &params).await,
        "resources/templates/list" => {
            Ok(json!({ "resourceTemplates": tools::resources::templates() }))
        }
        // Declared (with no prompts), so that what is answered is what is announced.
        "prompts/list" => Ok(json!({ "prompts": [] })),
        "prompts/get" => Err(message::invalid_field(
            "/name",
            format!(
                "no prompt named {}: this server offers none (prompts/list is empty)",
                params.get("name").map(Value::to_string).unwrap_or_default()
            ),
        )),
        "logging/setLevel" => set_level(session, &params),
        // Seed 001's legacy JSON-RPC method.
        "health" => {
            Ok(serde_json::to_value(tools::health::status(app)).expect("health serializes"))
        }
        _ => Err(message::rpc_error(
            message::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            None,
        )),
    }
}

/// A request under the 2026-07-28 revision: the envelope ladder, then the method with the
/// request's own session, then the modern result envelope.
async fn modern_request(
    server: &Server,
    connection: &Session,
    id: &Value,
    method: &str,
    params: Value,
    notify: UnboundedSender<Value>,
    headers: Option<&Mirrored>,
) -> RpcResult {
    let envelope = era::envelope(method, &params, headers)?;
    if era::REMOVED_METHODS.contains(&method) {
        return Err(era::removed(method));
    }
    let session = Arc::new(Session::for_request(&connection.id, &envelope));
    let app = &server.app;
    let result = match (method, server.proxy.as_ref()) {
        ("server/discover", _) => discover(server),
        (_, Some(proxy)) if super::proxied::routes(app, proxy, method, &params) => {
            super::proxied::request(app, proxy, &session, id, method, params, notify)
                .await
                .map_err(proxied_error)?
        }
        _ => request(server, &session, id, method, params, notify).await?,
    };
    Ok(era::finish(method, result, server_info()))
}

/// `serverInfo`: who this server is, in both eras.
fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "version": TOOLING_VERSION })
}

/// An upstream's error in a 2026-07-28 response (whose error codes are the contract's): its
/// code when the contract knows it, else -32603, and its message.
fn proxied_error(e: crate::proxy::ProxyError) -> crate::contract::types::RpcError {
    match e {
        crate::proxy::ProxyError::Ours(e) => e,
        crate::proxy::ProxyError::Upstream(v) => message::rpc_error(
            v["code"].as_i64().unwrap_or(message::INTERNAL_ERROR),
            v["message"]
                .as_str()
                .unwrap_or("upstream error")
                .to_string(),
            None,
        ),
    }
}

/// What the server offers, in `initialize` and `server/discover` alike (a proxy: what its
/// upstream offers).
fn capabilities(server: &Server) -> Value {
    if let Some(proxy) = server.proxy.as_ref() {
        return proxy.capabilities();
    }
    json!({
        "tools": { "listChanged": false },
        "logging": {},
        "resources": { "listChanged": false },
        "prompts": { "listChanged": false }
    })
}

/// Guidance for the model, in `initialize` and `server/discover` alike.
const INSTRUCTIONS: &str = "Add context_focus_question to read/bash/grep to get only the lines it needs; removed blocks show as [… lines a-b: what they hide] (numbers of the original text). recover_text with the prune_id the result names returns them: by ranges, or pass context_focus_question to get what the result did not show for it.";

/// `server/discover` (2026-07-28): every version served (the modern ones first), capabilities and
/// instructions; the server's identity and the cache hints are added by [`era::finish`].
fn discover(server: &Server) -> Value {
    json!({
        "supportedVersions": era::supported_versions(),
        "capabilities": capabilities(server),
        "instructions": instructions(server),
    })
}

/// Guidance for a proxy's clients: what the tools gained.
const PROXY_INSTRUCTIONS: &str = "Every tool takes an optional context_focus_question (returns only what it needs; removed blocks show as [… lines a-b: what they hide]) and max_output_bytes. recover_text with the prune_id a result names returns the removed lines: by ranges, or pass context_focus_question to get what the result did not show for it.";

/// The instructions sent: ours, after the upstream's for a proxy.
fn instructions(server: &Server) -> String {
    match server.proxy.as_ref() {
        None => INSTRUCTIONS.to_string(),
        Some(proxy) => match proxy.instructions() {
            Some(up) => format!("{up}\n\n{PROXY_INSTRUCTIONS}"),
            None => PROXY_INSTRUCTIONS.to_string(),
        },
    }
}

fn initialize(server: &Server, session: &Session, params: &Value) -> RpcResult {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(message::invalid_field(
            "/protocolVersion",
            "required string, e.g. \"2025-11-25\"",
        ));
    };
    if let Some(info) = params.get("clientInfo")
        && (!info.is_object() || !info.get("name").is_some_and(Value::is_string))
    {
        return Err(message::invalid_field(
            "/clientInfo/name",
            "clientInfo must be an object with a string name",
        ));
    }
    // Spec: answer with the requested version if supported, else with our latest.
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(PROTOCOL_VERSIONS[0]);
    *session.protocol_version.locked() = Some(version.to_string());
    if let Some(info) = params.get("clientInfo") {
        session.set_client(crate::protocol::session::client_of(info));
    }
    Ok(json!({
        "protocolVersion": version,
        "serverInfo": server_info(),
        "capabilities": capabilities(server),
        "instructions": instructions(server),
        "jeeves": { "schemaVersion": 1 }
    }))
}

fn set_level(session: &Session, params: &Value) -> RpcResult {
    let level = params.get("level").and_then(Value::as_str).unwrap_or("");
    match LOG_LEVELS.iter().position(|l| *l == level) {
        Some(i) => {
            *session.log_level.locked() = Some(i);
            Ok(json!({}))
        }
        None => Err(message::invalid_field(
            "/level",
            format!("expected one of {}", LOG_LEVELS.join(", ")),
        )),
    }
}

/// The `tools/list` result: the manifest as the contract publishes it, filtered by `--tools`,
/// renamed by `--tool-prefix`.
pub fn tools_list(app: &App) -> Value {
    let cfg = &app.config;
    let tools: Vec<Value> = contract()
        .tools
        .iter()
        .filter(|t| {
            cfg.tools
                .as_ref()
                .is_none_or(|only| only.iter().any(|n| n == &t.name))
        })
        .map(|t| {
            let mut def = Map::new();
            def.insert(
                "name".into(),
                Value::String(format!("{}{}", cfg.tool_prefix, t.name)),
            );
            def.insert("description".into(), Value::String(t.description.clone()));
            def.insert("inputSchema".into(), t.listed_input_schema.clone());
            if cfg.output_schemas {
                // Error results carry ToolFailure; clients validate both shapes.
                let failure = contract()
                    .schemas
                    .get("ToolFailure")
                    .cloned()
                    .unwrap_or(Value::Null);
                def.insert(
                    "outputSchema".into(),
                    json!({ "type": "object", "oneOf": [t.output_schema, failure] }),
                );
            }
            if !t.annotations.is_null() {
                def.insert("annotations".into(), t.annotations.clone());
            }
            def.insert("schemaVersion".into(), json!(t.schema_version));
            def.insert("toolingVersion".into(), json!(TOOLING_VERSION));
            if tools::returns_bulk(&t.name)
                && let Some(chars) = crate::budget::inline_limit_chars(cfg)
            {
                def.insert(
                    "_meta".into(),
                    json!({ "anthropic/maxResultSizeChars": chars }),
                );
            }
            Value::Object(def)
        })
        .collect();
    json!({ "tools": tools })
}

async fn tools_call(
    app: &Arc<App>,
    session: &Arc<Session>,
    id: &Value,
    mut params: Value,
    notify: UnboundedSender<Value>,
) -> RpcResult {
    let request_id = app.new_request_id();
    let name = match params.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => {
            let errors = vec![FieldError {
                field: "/name".into(),
                message: "required string: the tool name".into(),
            }];
            events::request_invalid(&request_id, None, &json!(errors));
            return Err(message::invalid_params(errors));
        }
    };
    let bare = name
        .strip_prefix(app.config.tool_prefix.as_str())
        .unwrap_or(&name);
    let exposed = |n: &str| {
        app.config
            .tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|o| o == n))
    };
    let Some(tool) = contract().tool(bare).filter(|t| exposed(&t.name)) else {
        let known: Vec<String> = contract()
            .tools
            .iter()
            .filter(|t| exposed(&t.name))
            .map(|t| format!("{}{}", app.config.tool_prefix, t.name))
            .collect();
        let errors = vec![FieldError {
            field: "/name".into(),
            message: format!(
                "unknown tool {name:?}; expected one of {}",
                known.join(", ")
            ),
        }];
        events::request_invalid(&request_id, Some(&name), &json!(errors));
        return Err(message::invalid_params(errors));
    };
    events::request_received(&request_id, &tool.name);
    // Moved out, not cloned: `arguments` can be most of a large request.
    let arguments = match params.as_object_mut().and_then(|p| p.remove("arguments")) {
        None | Some(Value::Null) => json!({}),
        Some(a @ Value::Object(_)) => a,
        Some(_) => {
            let errors = vec![FieldError {
                field: "/arguments".into(),
                message: "must be an object".into(),
            }];
            events::request_invalid(&request_id, Some(&tool.name), &json!(errors));
            return Err(message::invalid_params(errors));
        }
    };
    if let Err(errors) = tool.validate_arguments(&arguments) {
        events::request_invalid(&request_id, Some(&tool.name), &json!(errors));
        if tool.name == "recover_text"
            && let Some(e) = tools::recover_text::range_error(&arguments, &errors)
        {
            return Err(e);
        }
        return Err(message::invalid_params(errors));
    }

    let registration = app.inflight.register(&session.id, &message::id_key(id));
    let progress_token = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number())
        .cloned();
    let progress = Arc::new(Progress::new(progress_token, notify.clone()));
    let ctx = tools::ToolCtx {
        app: app.clone(),
        session: session.clone(),
        request_id: request_id.clone(),
        cancel: registration.token.clone(),
        progress: progress.clone(),
        notify,
    };
    // A ticker flushes coalesced progress (and heartbeats) while the tool runs. The guard closes
    // progress and stops the ticker before the response, or when this future is dropped.
    let ticker = progress.enabled().then(|| {
        let p = progress.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(crate::protocol::progress::MIN_INTERVAL);
            loop {
                every.tick().await;
                p.flush_due();
            }
        })
    });
    let guard = ProgressGuard {
        progress: progress.clone(),
        ticker,
    };
    let outcome = tools::call(&tool.name, arguments, &ctx).await;
    drop(guard);
    drop(registration);
    outcome
}

/// Closes a request's progress and stops its ticker when dropped: after the tool returns, and
/// also when the request future itself is dropped (an HTTP client went away).
struct ProgressGuard {
    /// The request's reporter.
    progress: Arc<Progress>,
    /// The flushing task, when the client asked for progress.
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.progress.close();
        if let Some(t) = &self.ticker {
            t.abort();
        }
    }
}
