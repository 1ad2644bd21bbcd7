//! The connection to the upstream MCP server: the era spoken (the 2026-07-28 revision when the
//! upstream answers `server/discover` with it, every request then carrying its envelope and every
//! result losing the revision's members; else the `initialize` handshake), requests matched to
//! their answers by id, cancellation and timeouts forwarded upstream, progress routed back to the
//! downstream request that asked for it, every other notification handed to whoever subscribed,
//! and the restart policy when the upstream dies or stops answering. Owns the upstream's life and
//! its ids; never looks inside results beyond that envelope (that is [`super::shape`]).

use super::link::{Link, Reply};
use super::options::{ProxyOptions, Target, UpstreamEra};
use crate::protocol::era;
use crate::sync::Unpoisoned;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The protocol version the proxy asks the upstream for (the upstream may answer an older one).
pub const UPSTREAM_VERSION: &str = "2025-11-25";

/// Longest wait for the upstream's `initialize` answer.
const INIT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a ping may take after a timed-out call before the upstream is declared hung.
const HUNG_PING: Duration = Duration::from_secs(3);

/// Why an upstream request did not produce a result.
#[derive(Debug)]
pub enum UpstreamError {
    /// The upstream's JSON-RPC error object, exactly as it sent it.
    Rpc(Value),
    /// The upstream is gone or unreachable, and why.
    Down(String),
    /// No answer within the timeout.
    Timeout(Duration),
    /// The downstream caller cancelled; the upstream was told.
    Cancelled,
}

impl UpstreamError {
    /// A one-line explanation for the downstream client.
    pub fn describe(&self, name: &str) -> String {
        match self {
            UpstreamError::Rpc(e) => format!("upstream {name} answered with an error: {e}"),
            UpstreamError::Down(why) => format!("upstream {name} is unavailable: {why}"),
            UpstreamError::Timeout(t) => format!(
                "upstream {name} did not answer within {} ms (--upstream-timeout-ms); the call was cancelled upstream",
                t.as_millis()
            ),
            UpstreamError::Cancelled => {
                "cancelled by the client; the upstream call was cancelled".into()
            }
        }
    }
}

/// One live connection (a started process or an HTTP session).
pub struct Conn {
    /// How messages reach the upstream.
    link: Link,
    /// Requests waiting for their answer, by upstream id.
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    /// Cancelled when the connection is dead.
    down: CancellationToken,
    /// Why it died.
    why: Mutex<String>,
    /// The upstream's `initialize` result (for a 2026-07-28 upstream, its `server/discover`
    /// answer in that shape).
    pub init: Mutex<Value>,
    /// Whether it speaks the 2026-07-28 revision (every request with its envelope).
    modern: AtomicBool,
}

impl Conn {
    /// Marks the connection dead and fails every waiting request.
    pub fn mark_down(&self, why: String) {
        {
            let mut w = self.why.locked();
            if w.is_empty() {
                *w = why;
            }
        }
        self.down.cancel();
        self.pending.locked().clear();
    }

    fn why(&self) -> String {
        self.why.locked().clone()
    }

    /// Whether the connection died.
    pub fn is_down(&self) -> bool {
        self.down.is_cancelled()
    }

    /// Whether it speaks the 2026-07-28 revision.
    pub fn is_modern(&self) -> bool {
        self.modern.load(Ordering::Relaxed)
    }

    fn set_modern(&self, modern: bool) {
        self.modern.store(modern, Ordering::Relaxed);
        self.link
            .set_version(modern.then_some(era::MODERN_VERSIONS[0]));
    }
}

/// The proxy's `Implementation`, in `initialize` and in every 2026-07-28 envelope.
fn client_info() -> Value {
    json!({ "name": "mcp-pruner-proxy", "version": env!("CARGO_PKG_VERSION") })
}

/// `params` with the 2026-07-28 envelope added to its `_meta` (protocol version, client info, no
/// client capabilities), replacing any the downstream client sent; a `logLevel` the proxy put
/// there (the downstream session's) is kept.
fn with_envelope(mut params: Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let meta = &mut params["_meta"];
    if !meta.is_object() {
        *meta = json!({});
    }
    meta[era::PROTOCOL_VERSION_KEY] = json!(era::MODERN_VERSIONS[0]);
    meta[era::CLIENT_INFO_KEY] = client_info();
    meta[era::CLIENT_CAPABILITIES_KEY] = json!({});
    params
}

/// `params` without the 2026-07-28 `logLevel` key (a handshake-era upstream got
/// `logging/setLevel` instead).
fn without_log_level(mut params: Value) -> Value {
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut)
        && meta.remove(era::LOG_LEVEL_KEY).is_some()
        && meta.is_empty()
        && let Some(p) = params.as_object_mut()
    {
        p.remove("_meta");
    }
    params
}

/// A 2026-07-28 result as the handshake era has it: a `resultType` other than `complete` (a
/// request for input the proxy cannot give) is an error; the revision's own members (`resultType`,
/// cache hints, the server's identity) are taken out, the downstream era adding its own.
fn unwrap_modern(mut result: Value) -> Result<Value, UpstreamError> {
    let Some(obj) = result.as_object_mut() else {
        return Ok(result);
    };
    match obj.remove("resultType") {
        None => {}
        Some(t) if t == "complete" => {}
        Some(t) => {
            return Err(UpstreamError::Rpc(json!({
                "code": crate::protocol::message::INTERNAL_ERROR,
                "message": format!("the upstream answered with resultType {t}, which mcp-pruner proxy does not support (it offers no client capabilities)"),
            })));
        }
    }
    obj.remove("ttlMs");
    obj.remove("cacheScope");
    if let Some(meta) = obj.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(era::SERVER_INFO_KEY);
        if meta.is_empty() {
            obj.remove("_meta");
        }
    }
    Ok(result)
}

/// A `server/discover` answer in the shape of an `initialize` result, when it offers a 2026-07-28
/// revision.
fn discovered(result: &Value) -> Option<Value> {
    let offers = result["supportedVersions"].as_array()?.iter().any(|v| {
        v.as_str()
            .is_some_and(|v| era::MODERN_VERSIONS.contains(&v))
    });
    offers.then(|| {
        json!({
            "protocolVersion": era::MODERN_VERSIONS[0],
            "capabilities": result["capabilities"],
            "instructions": result["instructions"],
            "serverInfo": result["_meta"][era::SERVER_INFO_KEY],
        })
    })
}

/// A downstream request's progress token and where its notifications go.
type ProgressRoute = (Value, mpsc::UnboundedSender<Value>);

/// The upstream, across restarts.
pub struct Upstream {
    /// The proxy's options.
    pub opts: ProxyOptions,
    /// The current connection.
    current: tokio::sync::Mutex<Option<Arc<Conn>>>,
    /// Restarts so far.
    restarts: AtomicU32,
    /// Next upstream request id (never reused across restarts).
    next_id: AtomicU64,
    /// Notifications not tied to a request (logging, list changes, resource updates).
    events: broadcast::Sender<Value>,
    /// Upstream progress tokens -> the downstream request's token and channel.
    progress: Mutex<HashMap<String, ProgressRoute>>,
    /// Grace between SIGTERM and SIGKILL for a stdio upstream.
    grace: Duration,
    /// The latest `initialize` result.
    last_init: Mutex<Value>,
    /// Downstream channels of the calls in flight (by upstream id), newest last: an upstream
    /// notification outside any request goes to the newest, so that a client over HTTP gets the
    /// log lines a call causes on that call's stream.
    active: Mutex<Vec<(u64, mpsc::UnboundedSender<Value>)>>,
    /// Bumped on each `notifications/tools/list_changed` and each restart: what a listing of the
    /// tools taught before is stale.
    pub tools_generation: AtomicU64,
}

impl Upstream {
    /// Starts the upstream and completes its handshake; an upstream that cannot start is an error.
    pub async fn start(opts: ProxyOptions, grace: Duration) -> Result<Arc<Upstream>, String> {
        let up = Arc::new(Upstream {
            opts,
            current: tokio::sync::Mutex::new(None),
            restarts: AtomicU32::new(0),
            next_id: AtomicU64::new(1),
            events: broadcast::channel(256).0,
            progress: Mutex::new(HashMap::new()),
            grace,
            last_init: Mutex::new(Value::Null),
            active: Mutex::new(Vec::new()),
            tools_generation: AtomicU64::new(0),
        });
        up.conn().await.map_err(|e| e.describe(&up.opts.name))?;
        Ok(up)
    }

    /// Notifications the upstream sent outside any request, for a downstream transport.
    pub fn subscribe(&self) -> broadcast::Receiver<Value> {
        self.events.subscribe()
    }

    /// The upstream's latest `initialize` result (capabilities, serverInfo, instructions).
    pub fn init(&self) -> Value {
        self.last_init.locked().clone()
    }

    /// The live connection: the current one, or a new one when the policy allows a restart.
    async fn conn(self: &Arc<Self>) -> Result<Arc<Conn>, UpstreamError> {
        let mut current = self.current.lock().await;
        if let Some(c) = current.as_ref() {
            if !c.is_down() {
                return Ok(c.clone());
            }
            let why = c.why();
            let done = self.restarts.load(Ordering::Relaxed);
            if !self.opts.restart {
                return Err(UpstreamError::Down(format!(
                    "{why}; not restarted (--restart never)"
                )));
            }
            if done >= self.opts.max_restarts {
                return Err(UpstreamError::Down(format!(
                    "{why}; restarted {done} times already (--max-restarts {})",
                    self.opts.max_restarts
                )));
            }
            self.restarts.fetch_add(1, Ordering::Relaxed);
            self.tools_generation.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(event = "proxy.upstream_restart", upstream = %self.opts.name, reason = %why, restart = done + 1);
        }
        let conn = self.connect().await?;
        *current = Some(conn.clone());
        Ok(conn)
    }

    /// Opens a link and runs the handshake.
    async fn connect(self: &Arc<Self>) -> Result<Arc<Conn>, UpstreamError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let link = match &self.opts.target {
            Target::Command(cmd) => Link::stdio(cmd, self.grace, tx.clone()),
            Target::Url(url) => Link::http(url.clone(), tx.clone()),
        }
        .map_err(UpstreamError::Down)?;
        let conn = Arc::new(Conn {
            link,
            pending: Mutex::new(HashMap::new()),
            down: CancellationToken::new(),
            why: Mutex::new(String::new()),
            init: Mutex::new(Value::Null),
            modern: AtomicBool::new(false),
        });
        // Every message from the upstream, in order.
        let (me, c) = (Arc::downgrade(self), Arc::downgrade(&conn));
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                let (Some(me), Some(c)) = (me.upgrade(), c.upgrade()) else {
                    break;
                };
                me.incoming(&c, msg);
            }
        });
        conn.link.watch(Arc::downgrade(&conn));
        let init = match self.discover(&conn).await? {
            Some(init) => init,
            None => self.handshake(&conn).await?,
        };
        tracing::info!(event = "proxy.upstream_era", upstream = %self.opts.name, modern = conn.is_modern());
        *self.last_init.locked() = init.clone();
        *conn.init.locked() = init;
        Ok(conn)
    }

    /// `server/discover`, when `--upstream-era` asks for it (2026-07-28) or allows it (auto, HTTP
    /// upstream): the upstream's offer as an `initialize` result, the connection then modern.
    /// `None` (the connection back in the handshake era) when auto and the upstream does not offer
    /// the revision.
    async fn discover(self: &Arc<Self>, conn: &Arc<Conn>) -> Result<Option<Value>, UpstreamError> {
        let required = match self.opts.era {
            UpstreamEra::Handshake => return Ok(None),
            UpstreamEra::Auto if conn.link.is_stdio() => return Ok(None),
            UpstreamEra::Auto => false,
            UpstreamEra::Modern => true,
        };
        conn.set_modern(true);
        let never = CancellationToken::new();
        let timeout = self.opts.timeout.min(INIT_TIMEOUT);
        let answer = self
            .send(conn, "server/discover", json!({}), &never, timeout)
            .await;
        let offer = match &answer {
            Ok(r) => discovered(r),
            Err(_) => None,
        };
        if offer.is_none() {
            conn.set_modern(false);
            if required {
                let why = match answer {
                    Err(UpstreamError::Rpc(e)) => format!("server/discover was refused: {e}"),
                    Err(UpstreamError::Down(why)) => format!("server/discover failed: {why}"),
                    Err(e) => format!("server/discover failed: {}", e.describe(&self.opts.name)),
                    Ok(_) => "server/discover does not offer 2026-07-28".into(),
                };
                let why = format!("{why} (--upstream-era 2026-07-28)");
                return Err(UpstreamError::Down(why));
            }
            tracing::info!(event = "proxy.upstream_no_discover", upstream = %self.opts.name);
        }
        Ok(offer)
    }

    /// The handshake era's `initialize` and `notifications/initialized`; the upstream's answer.
    async fn handshake(self: &Arc<Self>, conn: &Arc<Conn>) -> Result<Value, UpstreamError> {
        let params = json!({
            "protocolVersion": UPSTREAM_VERSION,
            "capabilities": {},
            "clientInfo": client_info(),
        });
        let never = CancellationToken::new();
        let timeout = self.opts.timeout.min(INIT_TIMEOUT);
        let init = self
            .send(conn, "initialize", params, &never, timeout)
            .await
            .map_err(|e| match e {
                UpstreamError::Rpc(e) => {
                    UpstreamError::Down(format!("initialize was refused: {e}"))
                }
                other => other,
            })?;
        if let Some(v) = init.get("protocolVersion").and_then(Value::as_str) {
            conn.link.set_version(Some(v));
        }
        conn.link
            .send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        Ok(init)
    }

    /// Routes one message from the upstream.
    fn incoming(&self, conn: &Conn, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id");
        match (method, id) {
            (None, Some(id)) => {
                let Some(n) = id.as_u64() else { return };
                let waiting = conn.pending.locked().remove(&n);
                if let Some(tx) = waiting {
                    let reply = match (msg.get("result"), msg.get("error")) {
                        (_, Some(e)) => Reply::Error(e.clone()),
                        (Some(r), _) => Reply::Result(r.clone()),
                        _ => Reply::Failed(
                            msg.get(super::link::FAILED_KEY)
                                .and_then(Value::as_str)
                                .unwrap_or("an answer with neither result nor error")
                                .to_string(),
                        ),
                    };
                    let _ = tx.send(reply);
                }
            }
            (Some(m), Some(id)) => {
                // A request from the upstream: ping is answered; sampling, elicitation and roots
                // are not offered (the proxy announces no client capabilities).
                let answer = if m == "ping" {
                    json!({ "jsonrpc": "2.0", "id": id, "result": {} })
                } else {
                    json!({ "jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601,
                        "message": format!("mcp-pruner proxy does not forward {m} to its client")
                    }})
                };
                conn.link.send(answer);
            }
            (Some("notifications/progress"), None) => self.progress_back(msg),
            (Some(m), None) => {
                if m == "notifications/tools/list_changed" {
                    self.tools_generation.fetch_add(1, Ordering::Relaxed);
                }
                let newest = self.active.locked().last().map(|(_, tx)| tx.clone());
                match newest {
                    Some(tx) if !tx.is_closed() => {
                        let _ = tx.send(msg);
                    }
                    _ => {
                        let _ = self.events.send(msg);
                    }
                }
            }
            (None, None) => {}
        }
    }

    /// An upstream progress notification, sent to the downstream request with its own token.
    fn progress_back(&self, mut msg: Value) {
        let key = msg["params"]["progressToken"].to_string();
        let route = self.progress.locked().get(&key).cloned();
        if let Some((token, out)) = route {
            msg["params"]["progressToken"] = token;
            let _ = out.send(msg);
        }
    }

    /// Sends `method` with `params` and waits for the answer, the timeout or `cancel`.
    async fn send(
        &self,
        conn: &Arc<Conn>,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<Value, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        conn.pending.locked().insert(id, tx);
        if conn.is_down() {
            return Err(UpstreamError::Down(conn.why()));
        }
        let modern = conn.is_modern();
        let params = if modern {
            with_envelope(params)
        } else {
            without_log_level(params)
        };
        conn.link
            .send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let forget = || {
            conn.pending.locked().remove(&id);
        };
        let cancel_upstream = |reason: &str| conn.link.cancel(id, reason);
        tokio::select! {
            r = rx => match r {
                Ok(Reply::Result(v)) if modern => unwrap_modern(v),
                Ok(Reply::Result(v)) => Ok(v),
                Ok(Reply::Error(e)) => Err(UpstreamError::Rpc(e)),
                Ok(Reply::Failed(why)) => Err(UpstreamError::Down(why)),
                Err(_) => Err(UpstreamError::Down(conn.why())),
            },
            _ = conn.down.cancelled() => Err(UpstreamError::Down(conn.why())),
            _ = cancel.cancelled() => {
                forget();
                cancel_upstream("cancelled by the downstream client");
                Err(UpstreamError::Cancelled)
            }
            _ = tokio::time::sleep(timeout) => {
                forget();
                cancel_upstream("timed out in mcp-pruner proxy");
                Err(UpstreamError::Timeout(timeout))
            }
        }
    }

    /// A request to the upstream on the live connection (restarting it when allowed).
    /// `progress` routes the upstream's progress for this request back to the caller.
    /// `notify`, when given, receives the upstream's other notifications while this is the newest
    /// call in flight.
    pub async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
        progress: Option<ProgressRoute>,
        notify: Option<mpsc::UnboundedSender<Value>>,
    ) -> Result<Value, UpstreamError> {
        let conn = self.conn().await?;
        if conn.is_modern() && era::REMOVED_METHODS.contains(&method) {
            // Answered as the 2026-07-28 upstream would, without asking it.
            let e = serde_json::to_value(era::removed(method)).expect("errors serialize");
            return Err(UpstreamError::Rpc(e));
        }
        let call = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Some(tx) = notify {
            self.active.locked().push((call, tx));
        }
        let mut params = params;
        let key = progress.map(|route| {
            let token = format!("mcpp-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
            params["_meta"]["progressToken"] = Value::String(token.clone());
            let key = Value::String(token).to_string();
            self.progress.locked().insert(key.clone(), route);
            key
        });
        let out = self
            .send(&conn, method, params, cancel, self.opts.timeout)
            .await;
        if let Some(key) = key {
            self.progress.locked().remove(&key);
        }
        self.active.locked().retain(|(id, _)| *id != call);
        if matches!(out, Err(UpstreamError::Timeout(_))) {
            self.check_hung(conn);
        }
        out
    }

    /// After a timeout: an upstream that does not answer a ping either is hung, and is stopped
    /// so that the restart policy applies to the next request.
    fn check_hung(self: &Arc<Self>, conn: Arc<Conn>) {
        let me = self.clone();
        tokio::spawn(async move {
            let never = CancellationToken::new();
            // The 2026-07-28 revision has no ping; server/discover is as cheap.
            let probe = if conn.is_modern() {
                "server/discover"
            } else {
                "ping"
            };
            if let Err(UpstreamError::Timeout(_)) =
                me.send(&conn, probe, json!({}), &never, HUNG_PING).await
            {
                conn.mark_down(format!(
                    "it stopped answering (no answer to {probe} after a timed-out call)"
                ));
                conn.link.stop().await;
            }
        });
    }

    /// A notification to the upstream (cancellations travel with [`Upstream::request`]); a
    /// 2026-07-28 upstream has no session for it to concern, and gets none.
    pub async fn notify(self: &Arc<Self>, method: &str, params: Value) {
        let current = self.current.lock().await;
        if let Some(c) = current.as_ref().filter(|c| !c.is_down() && !c.is_modern()) {
            c.link
                .send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
        }
    }

    /// Stops the upstream (the proxy is exiting).
    pub async fn shutdown(&self) {
        if let Some(c) = self.current.lock().await.take() {
            c.mark_down("the proxy is shutting down".into());
            c.link.stop().await;
        }
    }
}
