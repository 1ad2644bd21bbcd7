//! The MCP endpoint: `POST` and `DELETE` on `/mcp` (and its seed-001 name `/rpc`). Owns the live
//! sessions ([`Sessions`]: `Mcp-Session-Id`, minted from the kernel's random source, ended by
//! `DELETE` or after `--session-idle-s` without a request), the two protocol eras (the handshake
//! era's sessions and batches in [`mcp_post`], the 2026-07-28 era's sessionless requests and
//! mirrored routing headers in [`modern_post`]) and SSE framing ([`sse`]). It never runs a tool
//! itself (every message goes to [`crate::rpc::handle`]) and never reads a body (it gets the
//! bytes [`super::body`] read).

use super::body::accepts;
use super::{Ctx, SESSION_HEADER, VERSION_HEADER, error, rpc_reply};
use crate::app::App;
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use crate::protocol::session::PROTOCOL_VERSIONS;
use crate::protocol::{Session, era, message};
use crate::rpc::{self, Server};
use crate::sync::Unpoisoned;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use warp::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use warp::reply::Reply;

/// Live sessions by `Mcp-Session-Id`, with when each was last used (for the idle expiry).
pub(super) type Sessions = Arc<Mutex<HashMap<String, (Arc<Session>, std::time::Instant)>>>;

/// Most live sessions at once: an `initialize` past it, once idle sessions are expired, is
/// refused with 503 and `Retry-After` rather than letting a client that loops on `initialize`
/// grow the map until `--session-idle-s` ends them. Initializes answered concurrently may
/// overshoot it by their number.
const MAX_SESSIONS: usize = 10_000;

/// Ends the sessions idle for longer than `--session-idle-s`, cancelling what they still run.
pub(super) fn expire_sessions(sessions: &Sessions, app: &App) {
    let idle = app.config.session_idle;
    let expired: Vec<String> = {
        let mut map = sessions.locked();
        let gone: Vec<String> = map
            .iter()
            .filter(|(_, (_, last))| last.elapsed() > idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            map.remove(id);
        }
        gone
    };
    for id in expired {
        app.inflight.cancel_session(&id);
    }
}

/// A 503 with a JSON-RPC error body (`id`, `text`) and `Retry-After: retry_after` seconds:
/// the server cannot take the request now, and says when to try again.
fn unavailable(id: Value, text: String, retry_after: &'static str) -> warp::reply::Response {
    let err = message::error_response(id, message::rpc_error(message::INTERNAL_ERROR, text, None));
    let mut r = rpc_reply(StatusCode::SERVICE_UNAVAILABLE, &err);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    r
}

/// A new session id from the kernel's random source, or the 503 that says it is unavailable
/// (never a constant id: that would hand one client another's session).
#[allow(clippy::result_large_err)]
fn new_session_id() -> Result<String, warp::reply::Response> {
    crate::secret::session_id().map_err(|e| {
        tracing::error!(error = %e, "random source unavailable: no session id");
        unavailable(
            Value::Null,
            format!("cannot make a session id (random source unavailable: {e}); try again"),
            "1",
        )
    })
}

pub(super) async fn mcp_post(
    ctx: &Arc<Ctx>,
    headers: &HeaderMap,
    body: Bytes,
) -> warp::reply::Response {
    if !accepts(headers, "application/json") && !accepts(headers, "text/event-stream") {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            Code::NotAcceptable,
            "Accept must allow application/json or text/event-stream",
        );
    }
    let header_version = headers.get(VERSION_HEADER).and_then(|h| h.to_str().ok());
    let msg = match message::parse(&body) {
        Ok(v) => v,
        Err(reply) => {
            return match unsupported_header(header_version) {
                Some(refusal) => refusal,
                None => rpc_reply(StatusCode::OK, &reply),
            };
        }
    };
    // Parsed once; the bytes are not needed while the call runs.
    drop(body);
    let modern = match &msg {
        Value::Object(m) => era::is_modern(
            m.get("method").and_then(Value::as_str).unwrap_or(""),
            m.get("params").unwrap_or(&Value::Null),
            header_version,
        ),
        _ => header_version.is_some_and(|v| era::MODERN_VERSIONS.contains(&v)),
    };
    if modern {
        return modern_post(ctx, headers, msg).await;
    }
    if let Some(refusal) = unsupported_header(header_version) {
        return refusal;
    }
    let (session, new_id) = match handshake_session(ctx, headers, &msg) {
        Ok(found) => found,
        Err(refusal) => return refusal,
    };
    match new_id {
        Some(id) => initialize_answer(ctx, session, id, msg).await,
        None => handshake_answer(ctx.server.clone(), &session, headers, msg).await,
    }
}

/// The answer to `initialize`: the session it made goes live, and its id goes back in the
/// session header, only when the answer is a result; an error answer (an unsupported version, a
/// malformed request) leaves no session behind.
async fn initialize_answer(
    ctx: &Arc<Ctx>,
    session: Arc<Session>,
    id: String,
    msg: Value,
) -> warp::reply::Response {
    let (tx, _rx) = mpsc::unbounded_channel();
    let Some(reply) = rpc::handle(&ctx.server, &session, msg, tx, None).await else {
        return accepted();
    };
    let mut resp = rpc_reply(StatusCode::OK, &reply);
    if reply.get("result").is_some()
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        ctx.sessions
            .locked()
            .insert(id, (session, std::time::Instant::now()));
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// The session a handshake-era message belongs to, and its id when `initialize` just made it
/// (live, and sent back in the session header, once it answers with a result): a new one for
/// `initialize` (or the 503 refusing it past [`MAX_SESSIONS`]), the one the session
/// header names (or the refusal of an unknown, ended or expired one), or a throwaway one when
/// there is no header (seed 000/001 clients call `tools/call` directly, statelessly).
fn handshake_session(
    ctx: &Arc<Ctx>,
    headers: &HeaderMap,
    msg: &Value,
) -> Result<(Arc<Session>, Option<String>), warp::reply::Response> {
    let is_initialize =
        msg.get("method").and_then(Value::as_str) == Some("initialize") && msg.get("id").is_some();
    if is_initialize {
        expire_sessions(&ctx.sessions, &ctx.server.app);
        let live = ctx.sessions.locked().len();
        if live >= MAX_SESSIONS {
            tracing::warn!(live, "initialize refused: too many live sessions");
            return Err(unavailable(
                msg.get("id").cloned().unwrap_or(Value::Null),
                format!(
                    "too many live sessions ({live}, at most {MAX_SESSIONS}); end unused ones with DELETE /mcp or retry later (idle sessions end after {} s)",
                    ctx.server.app.config.session_idle.as_secs()
                ),
                "5",
            ));
        }
        let id = new_session_id()?;
        // Live once `initialize` answers with a result ([`initialize_answer`]).
        return Ok((Arc::new(Session::new(id.clone())), Some(id)));
    }
    let Some(id) = headers.get(SESSION_HEADER).and_then(|h| h.to_str().ok()) else {
        let id = new_session_id()?;
        return Ok((Arc::new(Session::new(format!("anon-{id}"))), None));
    };
    expire_sessions(&ctx.sessions, &ctx.server.app);
    let found = ctx.sessions.locked().get_mut(id).map(|(s, last)| {
        *last = std::time::Instant::now();
        s.clone()
    });
    found.map(|s| (s, None)).ok_or_else(|| {
        let err = message::error_response(
            Value::Null,
            message::rpc_error(
                -32001,
                format!(
                    "unknown, ended or expired session {id:?} (sessions end after {} s without a request); send initialize again",
                    ctx.server.app.config.session_idle.as_secs()
                ),
                None,
            ),
        );
        rpc_reply(StatusCode::NOT_FOUND, &err)
    })
}

/// A handshake-era message's reply: a batch's replies in one array (within the batch's budget),
/// a `tools/call` as an event stream when the client takes one and asked for progress or logs,
/// anything else as one JSON reply (202 Accepted for a notification).
async fn handshake_answer(
    server: Server,
    session: &Arc<Session>,
    headers: &HeaderMap,
    msg: Value,
) -> warp::reply::Response {
    match msg {
        Value::Array(batch) => {
            let (tx, _rx) = mpsc::unbounded_channel();
            let mut replies = Vec::new();
            let mut budget = rpc::batch::BatchBudget::new(&server.app);
            for m in batch {
                let reply = match budget.admit(m) {
                    Ok(m) => rpc::handle(&server, session, m, tx.clone(), None).await,
                    Err(refusal) => refusal,
                };
                if let Some(r) = reply {
                    budget.spent(&r);
                    replies.push(r);
                }
            }
            if replies.is_empty() {
                accepted()
            } else {
                rpc_reply(StatusCode::OK, &Value::Array(replies))
            }
        }
        msg => {
            let is_request = msg.get("method").is_some() && msg.get("id").is_some();
            let wants_stream = is_request
                && msg.get("method").and_then(Value::as_str) == Some("tools/call")
                && accepts(headers, "text/event-stream")
                && (msg.pointer("/params/_meta/progressToken").is_some()
                    || session.log_level.locked().is_some());
            if wants_stream {
                sse(server, session.clone(), msg, None)
            } else {
                let (tx, _rx) = mpsc::unbounded_channel();
                match rpc::handle(&server, session, msg, tx, None).await {
                    Some(r) => rpc_reply(StatusCode::OK, &r),
                    None => accepted(),
                }
            }
        }
    }
}

/// The handshake era's refusal of an `MCP-Protocol-Version` header naming no version served.
fn unsupported_header(version: Option<&str>) -> Option<warp::reply::Response> {
    let v = version?;
    if PROTOCOL_VERSIONS.contains(&v) || era::MODERN_VERSIONS.contains(&v) {
        return None;
    }
    let err = message::error_response(
        Value::Null,
        message::invalid(&format!(
            "unsupported MCP-Protocol-Version {v:?}; supported: {}",
            PROTOCOL_VERSIONS.join(", ")
        )),
    );
    Some(rpc_reply(StatusCode::BAD_REQUEST, &err))
}

/// Routing headers a modern request mirrors; each may appear at most once.
const ROUTING_HEADERS: [&str; 3] = [VERSION_HEADER, "mcp-method", "mcp-name"];

/// A POST in the 2026-07-28 era: one request or notification, no session (none is looked up or
/// minted), errors with the revision's HTTP statuses (400 envelope and request errors, 404 an
/// unknown method), SSE when the call asks for progress or log messages.
async fn modern_post(ctx: &Arc<Ctx>, headers: &HeaderMap, msg: Value) -> warp::reply::Response {
    let id = msg
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let refuse = |error| {
        let reply = message::error_response(id.clone(), error);
        rpc_reply(
            StatusCode::from_u16(era::http_status(&reply)).unwrap_or(StatusCode::BAD_REQUEST),
            &reply,
        )
    };
    if !msg.is_object() {
        return refuse(message::invalid(
            "the body must be a single JSON-RPC request or notification object",
        ));
    }
    if let Some(name) = ROUTING_HEADERS
        .iter()
        .find(|h| headers.get_all(**h).iter().count() > 1)
    {
        return refuse(era::mismatch(&format!(
            "{name} header appears more than once"
        )));
    }
    // RFC 9110 section 5.5: optional whitespace around a field value is not part of it.
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|h| h.to_str().ok())
            .map(|v| v.trim_matches([' ', '\t']).to_string())
    };
    let mirrored = era::Mirrored {
        protocol_version: value(VERSION_HEADER),
        method: value("mcp-method"),
        name: value("mcp-name"),
    };
    let session = match new_session_id() {
        Ok(id) => Arc::new(Session::new(format!("anon-{id}"))),
        Err(refusal) => return refusal,
    };
    let server = ctx.server.clone();
    let is_request = msg.get("method").is_some() && msg.get("id").is_some();
    let wants_stream = is_request
        && msg.get("method").and_then(Value::as_str) == Some("tools/call")
        && accepts(headers, "text/event-stream")
        && msg.pointer("/params/_meta").is_some_and(|m| {
            m.get("progressToken").is_some() || m.get(era::LOG_LEVEL_KEY).is_some()
        });
    if wants_stream {
        return sse(server, session, msg, Some(mirrored));
    }
    let (tx, _rx) = mpsc::unbounded_channel();
    match rpc::handle(&server, &session, msg, tx, Some(&mirrored)).await {
        Some(r) => rpc_reply(
            StatusCode::from_u16(era::http_status(&r)).unwrap_or(StatusCode::OK),
            &r,
        ),
        None => accepted(),
    }
}

fn accepted() -> warp::reply::Response {
    let mut r = Response::new(Vec::<u8>::new()).into_response();
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

/// Runs one request and streams its notifications, then its response, as SSE events.
fn sse(
    server: Server,
    session: Arc<Session>,
    msg: Value,
    mirrored: Option<era::Mirrored>,
) -> warp::reply::Response {
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    let out = tx.clone();
    let task = tokio::spawn(async move {
        if let Some(r) = rpc::handle(&server, &session, msg, tx, mirrored.as_ref()).await {
            let _ = out.send(r);
        }
    });
    // The stream owns the call: a client that goes away drops it, which aborts the call (its
    // command's tree is killed by the process guard), as on the plain JSON path.
    let call = AbortOnDrop(task.abort_handle());
    let events = tokio_stream::wrappers::UnboundedReceiverStream::new(rx).map(move |v| {
        let _owned = &call;
        Ok::<_, std::convert::Infallible>(
            warp::sse::Event::default()
                .event("message")
                .data(serde_json::to_string(&v).expect("serializes")),
        )
    });
    warp::sse::reply(events).into_response()
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) fn mcp_delete(ctx: &Ctx, headers: &HeaderMap) -> warp::reply::Response {
    let Some(id) = headers.get(SESSION_HEADER).and_then(|h| h.to_str().ok()) else {
        return error(
            StatusCode::BAD_REQUEST,
            Code::BadRequest,
            "DELETE needs the Mcp-Session-Id header",
        );
    };
    match ctx.sessions.locked().remove(id) {
        Some(_) => {
            ctx.server.app.inflight.cancel_session(id);
            let mut r = Response::new(Vec::<u8>::new()).into_response();
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        None => error(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            format!("unknown session {id:?}"),
        ),
    }
}
