//! Connections: [`accept_loop`] accepts them and serves each with hyper's HTTP/1.1 until shutdown,
//! with a deadline on every phase hyper does not bound itself ([`Timeouts`]: the first byte and
//! each request header; [`StallLimit`]: each response write), and makes an absolute-form target's
//! authority the request's `Host` ([`target_host_wins`]). Owns the sockets and how long each may
//! live. It never routes a request, reads its body or builds a reply: the service it is given
//! does.

use warp::http::{HeaderValue, header};

/// The deadlines of a connection's phases that hyper does not bound by itself.
#[derive(Clone, Copy)]
pub(super) struct Timeouts {
    /// To send the first byte, then a whole request header (idle keep-alive included).
    pub(super) header: std::time::Duration,
    /// The longest a response write may wait for the client to take bytes.
    pub(super) stall: std::time::Duration,
}

/// Accepts connections and serves each with hyper's HTTP/1.1 until `shutdown`, then lets open
/// connections finish. Every phase of a connection has a deadline: the first byte and each
/// request header (`header`, waiting for the next request on a kept-alive connection included),
/// each request body (`--body-timeout-ms`, in [`read_json_body`]), the call (its tool's own
/// timeout), and each response write (`stall`: a client that stops reading is dropped).
/// HTTP/2 is not served: MCP clients speak HTTP/1.1 on plain `http://`, and an HTTP/2
/// prior-knowledge preface is refused at once instead of holding a descriptor.
///
/// [`read_json_body`]: super::body::read_json_body
pub(super) async fn accept_loop<S>(
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
