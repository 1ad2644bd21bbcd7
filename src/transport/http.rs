//! HTTP transport (warp): `POST /mcp` (MCP Streamable HTTP) and its seed-001 name `POST /rpc`,
//! `GET /healthz` (seed 000), `GET /health` (seed 001), `POST /prune` (seed 000's pruner contract
//! served by the builtin engine). Owns sessions (`Mcp-Session-Id`), DNS-rebinding checks (Host,
//! Origin), the optional bearer token, body limits, content negotiation and SSE framing. Every
//! failure is a reply in the contract's shape (`{ok:false,error:{code,message}}` or JSON-RPC),
//! never a warp rejection. It never runs a tool itself.
//!
//! Who owns what: [`guard`] checks `Host`, `Origin` and the bearer token; [`body`] reads request
//! bodies and negotiates `Accept`; this file does the rest.

mod body;
mod guard;

use crate::app::App;
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use crate::protocol::session::PROTOCOL_VERSIONS;
use crate::protocol::{Session, era, message};
use crate::rpc::{self, Server};
use crate::sync::Unpoisoned;
use body::{accepts, read_json_body};
use bytes::{Buf, Bytes};
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

/// The deadlines of a connection's phases that hyper does not bound by itself.
#[derive(Clone, Copy)]
struct Timeouts {
    /// To send the first byte, then a whole request header (idle keep-alive included).
    header: std::time::Duration,
    /// The longest a response write may wait for the client to take bytes.
    stall: std::time::Duration,
}

/// Accepts connections and serves each with hyper's HTTP/1.1 until `shutdown`, then lets open
/// connections finish. Every phase of a connection has a deadline: the first byte and each
/// request header (`header`, waiting for the next request on a kept-alive connection included),
/// each request body (`--body-timeout-ms`, in [`read_json_body`]), the call (its tool's own
/// timeout), and each response write (`stall`: a client that stops reading is dropped).
/// HTTP/2 is not served: MCP clients speak HTTP/1.1 on plain `http://`, and an HTTP/2
/// prior-knowledge preface is refused at once instead of holding a descriptor.
async fn accept_loop<S>(
    listener: tokio::net::TcpListener,
    service: S,
    timeouts: Timeouts,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) where
    S: tower_service::Service<
            warp::http::Request<hyper::body::Incoming>,
            Response = warp::reply::Response,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let header_timeout = timeouts.header;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors and the like: wait rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let svc = hyper_util::service::TowerToHyperService::new(service.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(header_timeout);
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // hyper's header timer starts with the first byte: a connection that sends nothing
            // at all gets the same time to start.
            let mut first = [0u8; 1];
            if !matches!(
                tokio::time::timeout(header_timeout, stream.peek(&mut first)).await,
                Ok(Ok(1..))
            ) {
                return;
            }
            let io = StallLimit::new(stream, timeouts.stall);
            let svc = hyper::service::service_fn(
                move |mut req: warp::http::Request<hyper::body::Incoming>| {
                    use hyper::service::Service;
                    target_host_wins(&mut req);
                    svc.call(req)
                },
            );
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(io), svc);
            if let Err(e) = watcher.watch(conn).await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// RFC 9112 section 3.2.2: a request in absolute form (`POST http://host/mcp`) is for the host
/// its target names, whatever its `Host` says: that authority replaces `Host`, so that the
/// DNS-rebinding check ([`check_host_and_origin`]) judges the host the request is really for.
///
/// [`check_host_and_origin`]: super::guard::check_host_and_origin
fn target_host_wins<B>(req: &mut warp::http::Request<B>) {
    let Some(authority) = req.uri().authority().map(|a| a.as_str().to_string()) else {
        return;
    };
    let value = HeaderValue::from_str(&authority).unwrap_or(HeaderValue::from_static("invalid"));
    req.headers_mut().remove(header::HOST);
    req.headers_mut().insert(header::HOST, value);
}

/// A connection whose writes fail (`TimedOut`) once one has waited `limit` for the client to
/// take bytes: a client that stops reading a response cannot hold it, and the connection,
/// forever. Reads pass through (their phases have their own deadlines).
struct StallLimit<T> {
    /// The connection.
    io: T,
    /// How long a write may wait for the client to read.
    limit: std::time::Duration,
    /// Armed while a write is pending.
    stalled: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl<T> StallLimit<T> {
    fn new(io: T, limit: std::time::Duration) -> Self {
        StallLimit {
            io,
            limit,
            stalled: None,
        }
    }

    /// After a write-side poll: clears the timer on progress, arms it on `Pending`, and turns
    /// a `Pending` past the limit into `TimedOut`.
    fn watch<R>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        polled: std::task::Poll<std::io::Result<R>>,
    ) -> std::task::Poll<std::io::Result<R>> {
        use std::task::Poll;
        match polled {
            Poll::Ready(r) => {
                self.stalled = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let limit = self.limit;
                let timer = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client took no response bytes within --body-timeout-ms",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for StallLimit<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for StallLimit<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let polled = std::pin::Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let polled = std::pin::Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, polled)
    }
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
