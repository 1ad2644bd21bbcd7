//! How messages travel to and from the upstream: a child's stdin/stdout (one JSON-RPC message a
//! line, the child started by [`crate::process::service`]) or Streamable HTTP (a POST per
//! message, answered with JSON or an SSE stream; in the handshake era the `Mcp-Session-Id` kept,
//! in the 2026-07-28 revision no session, the `Mcp-Method`/`Mcp-Name` headers mirrored, and a
//! request cancelled by closing its POST). Every message
//! received goes to one channel, in order. Owns framing and the transport's failures; never
//! matches answers to requests (that is [`super::upstream`]).

use super::upstream::Conn;
use crate::process::service::{self, Service};
use crate::sync::Unpoisoned;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Largest message accepted from an upstream.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Key of the marker message a link sends in place of an answer it could not get.
pub const FAILED_KEY: &str = "mcp-pruner/failed";

/// An upstream's answer to one request.
pub enum Reply {
    /// `result`.
    Result(Value),
    /// `error`, as sent.
    Error(Value),
    /// No answer could be had (the transport failed), and why.
    Failed(String),
}

/// A link to the upstream.
pub enum Link {
    /// A child process.
    Stdio(Arc<StdioLink>),
    /// An HTTP endpoint.
    Http(Arc<HttpLink>),
}

/// A child's pipes.
pub struct StdioLink {
    /// Lines for its stdin.
    to_child: mpsc::UnboundedSender<Vec<u8>>,
    /// The child, until stopped.
    service: tokio::sync::Mutex<Option<Service>>,
    /// Cancelled when its stdout closes.
    eof: CancellationToken,
}

/// A Streamable HTTP endpoint.
pub struct HttpLink {
    /// The HTTP client its requests go through.
    client: reqwest::Client,
    /// The upstream's MCP endpoint.
    url: url::Url,
    /// `Mcp-Session-Id` the upstream gave.
    session: Mutex<Option<String>>,
    /// The negotiated protocol version, sent as `MCP-Protocol-Version`; a 2026-07-28 one makes
    /// every POST self-contained (no session, routing headers mirrored).
    version: Mutex<Option<String>>,
    /// Where received messages go.
    received: mpsc::UnboundedSender<Value>,
    /// The connection, marked down when the upstream forgets its session (HTTP 404).
    conn: Mutex<Option<Weak<Conn>>>,
    /// The POSTs of requests in flight, by request id: aborting one closes its connection.
    posts: Mutex<HashMap<u64, tokio::task::AbortHandle>>,
}

impl Link {
    /// Starts `cmd` and pumps its stdout into `received`.
    pub fn stdio(
        cmd: &[String],
        grace: Duration,
        received: mpsc::UnboundedSender<Value>,
    ) -> Result<Link, String> {
        let mut svc = service::spawn(&cmd[0], &cmd[1..], &[], grace)
            .map_err(|e| format!("cannot start {:?}: {e}", cmd[0]))?;
        let mut stdin = svc.child.stdin.take().expect("piped");
        let stdout = svc.child.stdout.take().expect("piped");
        let (to_child, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(line) = lines.recv().await {
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let eof = CancellationToken::new();
        let at_eof = eof.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) if buf.len() > MAX_MESSAGE => {
                        tracing::warn!(
                            event = "proxy.upstream_message_too_large",
                            bytes = buf.len()
                        );
                    }
                    Ok(_) => match parse_message(buf.trim_ascii()) {
                        Ok(v) => {
                            if received.send(v).is_err() {
                                break;
                            }
                        }
                        Err(_) if buf.trim_ascii().is_empty() => {}
                        Err(e) => tracing::warn!(event = "proxy.upstream_not_json", error = %e),
                    },
                }
            }
            at_eof.cancel();
        });
        Ok(Link::Stdio(Arc::new(StdioLink {
            to_child,
            service: tokio::sync::Mutex::new(Some(svc)),
            eof,
        })))
    }

    /// A Streamable HTTP link to `url`.
    pub fn http(url: url::Url, received: mpsc::UnboundedSender<Value>) -> Result<Link, String> {
        let client = crate::http_client::builder()
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(Link::Http(Arc::new(HttpLink {
            client,
            url,
            session: Mutex::new(None),
            version: Mutex::new(None),
            received,
            conn: Mutex::new(None),
            posts: Mutex::new(HashMap::new()),
        })))
    }

    /// Sends one message; failures surface as the connection going down (stdio) or as a
    /// [`FAILED_KEY`] marker for the request (HTTP).
    pub fn send(&self, msg: Value) {
        match self {
            Link::Stdio(s) => {
                let mut line = serde_json::to_vec(&msg).expect("JSON values serialize");
                line.push(b'\n');
                let _ = s.to_child.send(line);
            }
            Link::Http(h) => {
                let id = msg.get("method").and(msg.get("id")).and_then(Value::as_u64);
                // Held while the task is registered, so that its own removal comes after.
                let mut posts = h.posts.locked();
                let me = h.clone();
                let task = tokio::spawn(async move {
                    me.post(msg).await;
                    if let Some(id) = id {
                        me.posts.locked().remove(&id);
                    }
                });
                if let Some(id) = id {
                    posts.insert(id, task.abort_handle());
                }
            }
        }
    }

    /// Cancels request `id` upstream: a 2026-07-28 HTTP upstream by closing the request's POST
    /// (the revision's cancellation), any other by `notifications/cancelled`.
    pub fn cancel(&self, id: u64, reason: &str) {
        if let Link::Http(h) = self
            && h.modern()
        {
            let post = h.posts.locked().remove(&id);
            if let Some(post) = post {
                post.abort();
            }
            return;
        }
        self.send(
            json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": reason } }),
        );
    }

    /// Marks `conn` down when the child's stdout closes (with its exit status), or when an HTTP
    /// upstream no longer knows the session (so that the restart policy starts a new one).
    pub fn watch(&self, conn: Weak<Conn>) {
        let s = match self {
            Link::Stdio(s) => s,
            Link::Http(h) => {
                *h.conn.locked() = Some(conn);
                return;
            }
        };
        let s = s.clone();
        tokio::spawn(async move {
            s.eof.cancelled().await;
            let mut status = None;
            for _ in 0..50 {
                if let Some(svc) = s.service.lock().await.as_mut() {
                    status = svc.child.try_wait().ok().flatten();
                }
                if status.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let why = match status {
                Some(st) => format!("the upstream process exited ({st})"),
                None => "the upstream process closed its stdout".to_string(),
            };
            if let Some(c) = conn.upgrade() {
                c.mark_down(why);
            }
        });
    }

    /// Records the protocol version (sent on every later HTTP request; `None`: none yet).
    pub fn set_version(&self, version: Option<&str>) {
        if let Link::Http(h) = self {
            *h.version.locked() = version.map(str::to_string);
        }
    }

    /// Whether this is a stdio link.
    pub fn is_stdio(&self) -> bool {
        matches!(self, Link::Stdio(_))
    }

    /// Stops the child (its whole tree) or ends the HTTP session.
    pub async fn stop(&self) {
        match self {
            Link::Stdio(s) => {
                if let Some(svc) = s.service.lock().await.take() {
                    svc.stop().await;
                }
            }
            Link::Http(h) => h.delete().await,
        }
    }
}

impl HttpLink {
    /// Whether the link speaks the 2026-07-28 revision.
    fn modern(&self) -> bool {
        self.version
            .locked()
            .as_deref()
            .is_some_and(|v| crate::protocol::era::MODERN_VERSIONS.contains(&v))
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut rb = self.client.request(method, self.url.clone());
        if let Some(s) = self.session.locked().as_ref() {
            rb = rb.header("mcp-session-id", s);
        }
        if let Some(v) = self.version.locked().as_ref() {
            rb = rb.header("mcp-protocol-version", v);
        }
        rb
    }

    /// POSTs one message and forwards what comes back (JSON or SSE events).
    async fn post(&self, msg: Value) {
        let id = msg.get("method").and(msg.get("id")).cloned();
        if let Err(why) = self.exchange(&msg).await
            && let Some(id) = id
        {
            let _ = self.received.send(json!({ "id": id, FAILED_KEY: why }));
        }
    }

    /// A POST of `msg`, with the routing headers the 2026-07-28 revision mirrors from the body.
    fn post_request(&self, msg: &Value) -> reqwest::RequestBuilder {
        let mut rb = self.request(reqwest::Method::POST);
        if self.modern()
            && let Some(method) = msg.get("method").and_then(Value::as_str)
        {
            rb = rb.header("mcp-method", method);
            if let Some(name) = crate::protocol::era::mirrored_name(method, &msg["params"]) {
                rb = rb.header("mcp-name", name);
            }
        }
        rb
    }

    async fn exchange(&self, msg: &Value) -> Result<(), String> {
        let resp = self
            .post_request(msg)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(serde_json::to_vec(msg).expect("JSON values serialize"))
            .send()
            .await
            .map_err(|e| format!("POST {} failed: {e}", self.url))?;
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .filter(|_| !self.modern())
        {
            *self.session.locked() = Some(s.to_string());
        }
        let status = resp.status();
        let had_session = self.session.locked().is_some();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            // The spec's answer to a forgotten session is 404; some servers (server-everything)
            // answer 400 naming the session.
            let forgotten = status == reqwest::StatusCode::NOT_FOUND
                || (status == reqwest::StatusCode::BAD_REQUEST
                    && body.to_ascii_lowercase().contains("session"));
            if had_session && forgotten {
                let conn = self.conn.locked().clone();
                if let Some(c) = conn.and_then(|c| c.upgrade()) {
                    c.mark_down(format!(
                        "the upstream no longer knows the session (HTTP {status})"
                    ));
                }
            }
            // A JSON-RPC error answering this request (the 2026-07-28 revision sends its errors
            // with 4xx statuses) is the answer, as it is.
            if let Some(answer) = answer_to(msg, &body) {
                let _ = self.received.send(answer);
                return Ok(());
            }
            return Err(format!(
                "POST {} answered HTTP {status}: {}",
                self.url,
                crate::budget::summary(&body)
            ));
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !sse {
            let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
            if bytes.trim_ascii().is_empty() {
                return Ok(());
            }
            let v: Value = parse_message(&bytes)
                .map_err(|e| format!("the upstream's answer is not JSON: {e}"))?;
            match v {
                Value::Array(items) => items.into_iter().for_each(|m| {
                    let _ = self.received.send(m);
                }),
                m => {
                    let _ = self.received.send(m);
                }
            }
            return Ok(());
        }
        let mut resp = resp;
        let mut events = Events::default();
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            for event in events.push(&chunk) {
                self.event(&event);
            }
        }
        if !events.buf.is_empty() {
            self.event(&events.buf);
        }
        Ok(())
    }

    /// One SSE event: its `data:` lines, joined, are a JSON-RPC message.
    fn event(&self, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw);
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            return;
        }
        match parse_message(data.join("\n").as_bytes()) {
            Ok(v) => {
                let _ = self.received.send(v);
            }
            Err(e) => tracing::warn!(event = "proxy.upstream_not_json", error = %e),
        }
    }

    async fn delete(&self) {
        if self.session.locked().is_some() {
            let _ = self.request(reqwest::Method::DELETE).send().await;
        }
    }
}

/// `body` when it is a JSON-RPC error response to the request `msg` (same, non-null id).
fn answer_to(msg: &Value, body: &str) -> Option<Value> {
    let id = msg
        .get("method")
        .and(msg.get("id"))
        .filter(|i| !i.is_null())?;
    let v: Value = parse_message(body.as_bytes()).ok()?;
    (v.get("id") == Some(id) && v.get("error").is_some_and(Value::is_object)).then_some(v)
}

/// A JSON-RPC message from the upstream. A string escape of a lone UTF-16 surrogate (`"\udcff"`,
/// which JavaScript's `JSON.stringify` writes for a string cut inside an emoji, and which
/// JavaScript and Python parse) is read as U+FFFD, as a lossy decoding would: serde_json refuses
/// it, and the message, dropped, left its request waiting for the whole timeout.
fn parse_message(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes).or_else(|e| match lone_surrogates_replaced(bytes) {
        Some(fixed) => serde_json::from_slice(&fixed),
        None => Err(e),
    })
}

/// `json` with every `\uXXXX` escape of a lone surrogate replaced by `\ufffd`; `None` when it has
/// none. Backslashes stand only inside strings in JSON, so no string tracking is needed.
fn lone_surrogates_replaced(json: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u16> {
        let hex = json.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut out = Vec::with_capacity(json.len());
    let mut changed = false;
    let mut i = 0;
    while i < json.len() {
        if json[i] != b'\\' {
            out.push(json[i]);
            i += 1;
            continue;
        }
        match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => {
                out.extend_from_slice(&json[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.extend_from_slice(b"\\ufffd");
                changed = true;
                i += 6;
            }
            // Any other escape: both bytes as they are (`\\` must not escape what follows).
            _ => {
                out.extend_from_slice(&json[i..(i + 2).min(json.len())]);
                i += 2;
            }
        }
    }
    changed.then_some(out)
}

/// SSE events cut from a response body as its chunks arrive.
#[derive(Default)]
struct Events {
    /// Bytes received and not yet part of a whole event; at the end, a last event with no blank
    /// line after it.
    buf: Vec<u8>,
    /// Bytes of `buf` already searched for an event's end: each chunk is searched once (from 3
    /// bytes back, for a `\r\n\r\n` split across chunks), not the whole event again, which made
    /// a large event quadratic (16 MB in 8 KB chunks took 31 s).
    scanned: usize,
}

impl Events {
    /// Adds `chunk`: the text of each event it completes.
    fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(chunk);
        let mut done = Vec::new();
        loop {
            let from = self.scanned.saturating_sub(3);
            let Some((text, whole)) = event_end(&self.buf[from..]) else {
                self.scanned = self.buf.len();
                return done;
            };
            let mut event: Vec<u8> = self.buf.drain(..from + whole).collect();
            event.truncate(from + text);
            done.push(event);
            self.scanned = 0;
        }
    }
}

/// Where the first SSE event in `buf` ends: (end of its text, end with its blank line).
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::{Events, parse_message};
    use serde_json::json;

    #[test]
    fn a_lone_surrogate_is_read_as_a_replacement_character() {
        let v =
            parse_message(br#"{"text":"file_\udcff.txt","pair":"\ud83c\udf89","lit":"\\udcff"}"#)
                .unwrap();
        assert_eq!(
            v,
            json!({"text": "file_\u{fffd}.txt", "pair": "🎉", "lit": "\\udcff"})
        );
        assert!(parse_message(b"{not json").is_err());
    }

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let stream = b"data: {\"a\":1}\r\n\r\n: comment\n\ndata: {\"b\":\n\ndata: 2}";
        for size in [1, 2, 3, 5, 64] {
            let mut events = Events::default();
            let mut got = Vec::new();
            for chunk in stream.chunks(size) {
                got.extend(events.push(chunk));
            }
            let got: Vec<String> = got
                .iter()
                .map(|e| String::from_utf8_lossy(e).into_owned())
                .collect();
            assert_eq!(
                got,
                ["data: {\"a\":1}", ": comment", "data: {\"b\":"],
                "chunks of {size}"
            );
            assert_eq!(events.buf, b"data: 2}");
        }
    }
}
