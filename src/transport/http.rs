//! HTTP transport (warp): `POST /mcp` (MCP Streamable HTTP) and its seed-001 name `POST /rpc`,
//! `GET /healthz` (seed 000), `GET /health` (seed 001), `POST /prune` (seed 000's pruner contract
//! served by the builtin engine). Owns sessions (`Mcp-Session-Id`), DNS-rebinding checks (Host,
//! Origin), the optional bearer token, body limits, content negotiation and SSE framing. Every
//! failure is a reply in the contract's shape (`{ok:false,error:{code,message}}` or JSON-RPC),
//! never a warp rejection. It never runs a tool itself.
//!
//! Who owns what: [`conn`] accepts connections and puts a deadline on each phase of one;
//! [`guard`] checks `Host`, `Origin` and the bearer token; [`body`] reads request bodies and
//! negotiates `Accept`; this file does the rest.

mod body;
mod conn;
mod guard;

use crate::app::App;
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use crate::protocol::session::PROTOCOL_VERSIONS;
use crate::protocol::{Session, era, message};
use crate::rpc::{self, Server};
use crate::sync::Unpoisoned;
use body::{accepts, read_json_body};
use bytes::{Buf, Bytes};
use conn::{Timeouts, accept_loop};
use futures_util::{Stream, StreamExt};
use guard::{check_auth, check_host_and_origin};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use warp::Filter;
use warp::http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use warp::reply::Reply;

/// Live sessions by `Mcp-Session-Id`, with when each was last used (for the idle expiry).
type Sessions = Arc<Mutex<HashMap<String, (Arc<Session>, std::time::Instant)>>>;

/// Header carrying the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// Header carrying the negotiated protocol version.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// What every request handler shares.
struct Ctx {
    /// The server's state, and the upstream of a proxy.
    server: Server,
    /// Live MCP sessions.
    sessions: Sessions,
    /// The address the server is bound to: a remote `Host` must name it (DNS-rebinding check).
    local: SocketAddr,
    /// Bytes of request bodies being read right now, on every connection: bounded by
    /// [`body_bytes_in_flight`], so that many slow bodies cannot hold many buffers at once.
    ///
    /// [`body_bytes_in_flight`]: body::body_bytes_in_flight
    body_bytes: AtomicUsize,
}

/// Serves HTTP on `listener` until `shutdown` resolves.
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = server.app.clone();
    let local = listener.local_addr()?;
    let sessions: Sessions = Arc::default();
    let ctx = Arc::new(Ctx {
        server,
        sessions: sessions.clone(),
        local,
        body_bytes: AtomicUsize::new(0),
    });
    let route = warp::any()
        .and(warp::method())
        .and(warp::path::full())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(
            move |method: Method, path: warp::path::FullPath, headers: HeaderMap, body| {
                let ctx = ctx.clone();
                async move { handle(ctx, method, path.as_str().to_string(), headers, body).await }
            },
        );
    // Sessions idle past --session-idle-s are ended (their calls cancelled) by a sweeper too,
    // not only when next used, so an abandoned session holds nothing.
    let sweeper = {
        let (sessions, app) = (sessions.clone(), app.clone());
        let idle = app.config.session_idle;
        tokio::spawn(async move {
            let mut every = tokio::time::interval((idle / 2).clamp(
                std::time::Duration::from_millis(200),
                std::time::Duration::from_secs(60),
            ));
            loop {
                every.tick().await;
                expire_sessions(&sessions, &app);
            }
        })
    };
    let timeouts = Timeouts {
        header: app.config.header_timeout,
        stall: app.config.body_timeout,
    };
    accept_loop(listener, warp::service(route), timeouts, shutdown).await;
    sweeper.abort();
    Ok(())
}

/// Ends the sessions idle for longer than `--session-idle-s`, cancelling what they still run.
fn expire_sessions(sessions: &Sessions, app: &App) {
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

fn error(status: StatusCode, code: Code, message: impl Into<String>) -> warp::reply::Response {
    let body =
        json!({ "ok": false, "error": { "code": code.to_string(), "message": message.into() } });
    json_reply(status, &body)
}

fn json_reply(status: StatusCode, body: &Value) -> warp::reply::Response {
    let mut r = Response::new(serde_json::to_vec(body).expect("serializes"));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.into_response()
}

fn rpc_reply(status: StatusCode, body: &Value) -> warp::reply::Response {
    json_reply(status, body)
}

fn method_not_allowed(allow: &'static str, method: &Method, path: &str) -> warp::reply::Response {
    let mut r = error(
        StatusCode::METHOD_NOT_ALLOWED,
        Code::MethodNotAllowed,
        format!("{method} is not allowed on {path}; allowed: {allow}"),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

async fn handle(
    ctx: Arc<Ctx>,
    method: Method,
    path: String,
    headers: HeaderMap,
    body: impl Stream<Item = Result<impl Buf, warp::Error>> + Send + Unpin,
) -> warp::reply::Response {
    if let Err(resp) = check_host_and_origin(&ctx, &headers) {
        return resp;
    }
    let route = path.trim_end_matches('/');
    if route == "/healthz" {
        return match method {
            Method::GET | Method::HEAD => json_reply(StatusCode::OK, &healthz(&ctx.server.app)),
            _ => method_not_allowed("GET", &method, &path),
        };
    }
    if !matches!(route, "/mcp" | "/rpc" | "/health" | "/prune" | "/metrics") {
        return error(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            format!("no route {path}; try POST /mcp, GET /healthz"),
        );
    }
    if let Err(resp) = check_auth(&ctx, &headers) {
        return resp;
    }
    match (route, &method) {
        ("/health", &Method::GET | &Method::HEAD) => json_reply(
            StatusCode::OK,
            &serde_json::to_value(crate::tools::health::status(&ctx.server.app))
                .expect("serializes"),
        ),
        ("/health", _) => method_not_allowed("GET", &method, &path),
        ("/metrics", &Method::GET | &Method::HEAD) => metrics_reply(&ctx.server.app).await,
        ("/metrics", _) => method_not_allowed("GET", &method, &path),
        ("/prune", &Method::POST) => match read_json_body(&ctx, &headers, body).await {
            Ok(bytes) => prune_endpoint(&ctx, &bytes).await,
            Err(resp) => resp,
        },
        ("/prune", _) => method_not_allowed("POST", &method, &path),
        (_, &Method::POST) => match read_json_body(&ctx, &headers, body).await {
            Ok(bytes) => mcp_post(&ctx, &headers, bytes).await,
            Err(resp) => resp,
        },
        (_, &Method::DELETE) => mcp_delete(&ctx, &headers),
        _ => method_not_allowed("POST, DELETE", &method, &path),
    }
}

/// `GET /metrics`: the Prometheus text exposition (the store's figures read off the request's
/// thread: a shared store's take a round trip).
async fn metrics_reply(app: &Arc<App>) -> warp::reply::Response {
    let app = app.clone();
    let text = tokio::task::spawn_blocking(move || app.metrics())
        .await
        .unwrap_or_default();
    let mut r = Response::new(text.into_bytes());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r.into_response()
}

fn healthz(app: &App) -> Value {
    json!({
        "ok": true,
        "status": "ok",
        "server": { "name": crate::version::SERVER_NAME, "version": crate::version::TOOLING_VERSION },
        "time": { "started_at": app.started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true), "uptime_ms": app.uptime_ms() }
    })
}

/// A new session id from the kernel's random source, or the 503 that says it is unavailable
/// (never a constant id: that would hand one client another's session).
#[allow(clippy::result_large_err)]
fn new_session_id() -> Result<String, warp::reply::Response> {
    crate::secret::session_id().map_err(|e| {
        tracing::error!(error = %e, "random source unavailable: no session id");
        let err = message::error_response(
            Value::Null,
            message::rpc_error(
                message::INTERNAL_ERROR,
                format!("cannot make a session id (random source unavailable: {e}); try again"),
                None,
            ),
        );
        let mut r = rpc_reply(StatusCode::SERVICE_UNAVAILABLE, &err);
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    })
}

async fn mcp_post(ctx: &Arc<Ctx>, headers: &HeaderMap, body: Bytes) -> warp::reply::Response {
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
    let mut resp = handshake_answer(ctx.server.clone(), &session, headers, msg).await;
    if let Some(id) = new_id
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// The session a handshake-era message belongs to, and its id when `initialize` just made it
/// (to be sent back in the session header): a new one for `initialize`, the one the session
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
        let id = new_session_id()?;
        let s = Arc::new(Session::new(id.clone()));
        ctx.sessions
            .locked()
            .insert(id.clone(), (s.clone(), std::time::Instant::now()));
        return Ok((s, Some(id)));
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

fn mcp_delete(ctx: &Ctx, headers: &HeaderMap) -> warp::reply::Response {
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

/// `POST /prune`: seed 000's outbound pruner contract served by the builtin engine.
async fn prune_endpoint(ctx: &Ctx, body: &[u8]) -> warp::reply::Response {
    let values = message::count_values(body);
    if values > message::MAX_JSON_VALUES {
        return error(
            StatusCode::BAD_REQUEST,
            Code::BadRequest,
            format!(
                "body holds about {values} JSON values; at most {} are accepted",
                message::MAX_JSON_VALUES
            ),
        );
    }
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                Code::BadRequest,
                format!("body is not JSON: {e}"),
            );
        }
    };
    if let Err(errors) = crate::contract::contract().validate("PrunerRequest", &value) {
        let body = json!({ "ok": false, "error": { "code": "bad_request", "message": "body does not match PrunerRequest", "details": { "field_errors": errors } } });
        return json_reply(StatusCode::BAD_REQUEST, &body);
    }
    let req: crate::contract::types::PrunerRequest = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, Code::BadRequest, e.to_string()),
    };
    match crate::prune::serve_pruner_request(&ctx.server.app.store, req).await {
        Ok(resp) => json_reply(
            StatusCode::OK,
            &serde_json::to_value(resp).expect("serializes"),
        ),
        Err(msg) => error(StatusCode::INTERNAL_SERVER_ERROR, Code::InternalError, msg),
    }
}
