//! HTTP transport (warp): `POST /mcp` (MCP Streamable HTTP) and its seed-001 name `POST /rpc`,
//! `GET /healthz` (seed 000), `GET /health` (seed 001), `POST /prune` (seed 000's pruner contract
//! served by the builtin engine). Owns sessions (`Mcp-Session-Id`), DNS-rebinding checks (Host,
//! Origin), the optional bearer token, body limits, content negotiation and SSE framing. Every
//! failure is a reply in the contract's shape (`{ok:false,error:{code,message}}` or JSON-RPC),
//! never a warp rejection. It never runs a tool itself.
//!
//! Who owns what: this file serves ([`serve`]) and routes (`handle`) requests, makes the replies
//! every part shares (`error`, `json_reply`, `rpc_reply`, `method_not_allowed`) and answers
//! `/healthz`, `/health`, `/metrics` and `/prune`; `conn` accepts connections and puts a deadline
//! on each phase of one; `guard` checks `Host`, `Origin` and the bearer token; `body` reads
//! request bodies and negotiates `Accept`; `mcp` is the MCP endpoint (sessions, both protocol
//! eras, SSE).

mod body;
mod conn;
mod guard;
mod mcp;

use crate::app::App;
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use crate::protocol::message;
use crate::rpc::Server;
use body::read_json_body;
use bytes::Buf;
use conn::{Timeouts, accept_loop};
use futures_util::Stream;
use guard::{check_auth, check_host_and_origin};
use mcp::{Sessions, expire_sessions, mcp_delete, mcp_post};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use warp::Filter;
use warp::http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use warp::reply::Reply;

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
