//! stdio transport: one JSON-RPC message per line on stdin, responses and notifications one per
//! line on stdout, nothing else on stdout (logs go to stderr). Requests run concurrently so that a
//! cancellation can reach a running call. On stdin EOF, running calls are cancelled (their process
//! groups killed) and the server exits. A line over `--max-body-bytes` is skipped without being
//! held in memory and answered with -32600; the server keeps serving.
//!
//! Backpressure: at most [`MAX_UNANSWERED`] messages are in progress or waiting for stdout at
//! once; the next line is read from stdin only when one of them has been written, so a client that
//! stops reading stdout stops being read, and its replies cannot pile up in memory. Progress and
//! log notifications share stdout's queue ([`MAX_QUEUED_NOTIFICATIONS`] places beyond the
//! replies'), each before its request's reply, and are dropped while it is full.

use crate::protocol::{Session, message};
use crate::rpc::{self, Server};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Messages read and not yet answered on stdout (running, or their reply waiting to be written).
pub const MAX_UNANSWERED: usize = 64;

/// Notifications waiting for stdout; more are dropped while the client does not read.
pub const MAX_QUEUED_NOTIFICATIONS: usize = 256;

/// A line for stdout, with the slot of the message it answers (freed once written).
type Outgoing = (Vec<u8>, Option<OwnedSemaphorePermit>);

fn line_of(msg: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(msg).expect("JSON values serialize");
    line.push(b'\n');
    line
}

/// What [`read_line_capped`] read.
enum Line {
    /// A line (in the buffer).
    Read,
    /// A line over the cap, skipped; its length in bytes.
    TooLong(u64),
    /// End of input.
    Eof,
}

/// Line buffer capacity kept between messages; a larger one is released once its line is parsed.
const KEEP_LINE_BUFFER: usize = 1 << 20;

/// Reads one line into `buf`, holding at most `cap` bytes: a longer line is consumed to its end
/// without being kept, so a hostile or mistaken client cannot make the server buffer it.
async fn read_line_capped(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Line> {
    let mut total = 0u64;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if total == 0 {
                Line::Eof
            } else if total as usize > cap {
                Line::TooLong(total)
            } else {
                Line::Read
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if total as usize + take <= cap + 1 {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            buf.clear();
        }
        total += take as u64;
        reader.consume(take);
        if done {
            // The newline itself does not count.
            return Ok(if total as usize - 1 > cap {
                Line::TooLong(total - 1)
            } else {
                Line::Read
            });
        }
    }
}

/// Handles one message; its notifications (progress, log messages) go to stdout's queue as
/// they come, all before its reply, and are dropped while the queue is full.
async fn handle(
    server: &Server,
    session: &Arc<Session>,
    msg: Value,
    out: &mpsc::Sender<Outgoing>,
) -> Option<Value> {
    let (notify, mut notes) = mpsc::unbounded_channel::<Value>();
    let forward = |n: Value| {
        if out.try_send((line_of(&n), None)).is_err() {
            tracing::debug!("stdout is not read: a notification was dropped");
        }
    };
    let call = rpc::handle(server, session, msg, notify, None);
    tokio::pin!(call);
    let reply = loop {
        tokio::select! {
            biased;
            Some(n) = notes.recv() => forward(n),
            r = &mut call => break r,
        }
    };
    while let Ok(n) = notes.try_recv() {
        forward(n);
    }
    reply
}

/// Serves MCP on this process's stdin/stdout until stdin closes.
///
/// stdin and stdout each get a thread of their own that blocks in `read`/`write`, instead of
/// tokio's `stdin()`/`stdout()`, which hand every read and every write to the blocking pool and
/// wait for it (two more thread wake-ups per message each way).
pub async fn serve(server: Server) -> std::io::Result<()> {
    let (output, written) = ThreadStdout::spawn()?;
    let served = serve_on(server, ThreadStdin::spawn()?, output).await;
    // What the writer still holds reaches stdout before the process ends (unless the client
    // stopped reading).
    let _ = tokio::task::spawn_blocking(move || written.recv_timeout(Duration::from_secs(2))).await;
    served
}

/// stdin read by a thread that blocks in `read` and hands over what it read.
struct ThreadStdin {
    /// What the reading thread read, chunk by chunk.
    rx: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    /// The chunk being consumed.
    chunk: Vec<u8>,
    /// How much of `chunk` has been consumed.
    at: usize,
}

impl ThreadStdin {
    fn spawn() -> std::io::Result<ThreadStdin> {
        use std::io::Read;
        // A few chunks ahead at most: a client writing faster than calls are read waits.
        let (tx, rx) = mpsc::channel(8);
        std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || {
                let mut stdin = std::io::stdin().lock();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let got = match stdin.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => Ok(buf[..n].to_vec()),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let failed = got.is_err();
                    if tx.blocking_send(got).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(ThreadStdin {
            rx,
            chunk: Vec::new(),
            at: 0,
        })
    }
}

impl tokio::io::AsyncRead for ThreadStdin {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let this = self.get_mut();
        if this.at == this.chunk.len() {
            match this.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.chunk = chunk;
                    this.at = 0;
                }
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.at);
        buf.put_slice(&this.chunk[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Messages a stdout writer queues for its thread before a write waits: with the thread blocked
/// on a client that stopped reading, the serve loop's own bound on unanswered messages holds
/// (the queue must not absorb the replies).
const STDOUT_QUEUE: usize = 16;

/// stdout written by a thread that blocks in `write`; a write here queues the bytes, and waits
/// while [`STDOUT_QUEUE`] messages are already queued.
struct ThreadStdout {
    /// The queue to the writing thread; `None` once shut down.
    tx: Option<tokio_util::sync::PollSender<Vec<u8>>>,
}

impl ThreadStdout {
    /// The writer and a channel that closes once the thread has written everything and ended.
    fn spawn() -> std::io::Result<(ThreadStdout, std::sync::mpsc::Receiver<()>)> {
        use std::io::Write;
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(STDOUT_QUEUE);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || {
                let _done = done_tx;
                let mut stdout = std::io::stdout().lock();
                while let Some(bytes) = rx.blocking_recv() {
                    if stdout
                        .write_all(&bytes)
                        .and_then(|()| stdout.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        let tx = tokio_util::sync::PollSender::new(tx);
        Ok((ThreadStdout { tx: Some(tx) }, done_rx))
    }
}

impl AsyncWrite for ThreadStdout {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        let broken = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let Some(tx) = self.get_mut().tx.as_mut() else {
            return Poll::Ready(Err(broken()));
        };
        match tx.poll_reserve(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(_)) => Poll::Ready(Err(broken())),
            Poll::Ready(Ok(())) => Poll::Ready(
                tx.send_item(buf.to_vec())
                    .map(|()| buf.len())
                    .map_err(|_| broken()),
            ),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.get_mut().tx = None;
        std::task::Poll::Ready(Ok(()))
    }
}

/// Writes each line for stdout as it comes, freeing the slot of the message it answers once it
/// is written (the reader may then take another message); stops when stdout fails.
async fn write_lines(
    mut output: impl AsyncWrite + Unpin + Send + 'static,
    mut lines: mpsc::Receiver<Outgoing>,
) {
    while let Some((line, slot)) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
        drop(slot);
    }
}

/// Relays a proxy's upstream notifications outside any request (logging, list changes,
/// resource updates) to stdout's queue, shared with the rest: dropped while it is full.
async fn relay_notifications(
    mut events: tokio::sync::broadcast::Receiver<Value>,
    out: mpsc::Sender<Outgoing>,
) {
    loop {
        match events.recv().await {
            Ok(n) => {
                if out.try_send((line_of(&n), None)).is_err() {
                    tracing::debug!("stdout is not read: a notification was dropped");
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(_) => break,
        }
    }
}

/// Answers a batch, its messages in order within the batch's budget, with one line holding
/// every reply (none when all were notifications).
async fn answer_batch(
    server: Server,
    session: Arc<Session>,
    batch: Vec<Value>,
    out: mpsc::Sender<Outgoing>,
    slot: OwnedSemaphorePermit,
) {
    let mut replies = Vec::new();
    let mut budget = rpc::batch::BatchBudget::new(&server.app);
    for msg in batch {
        let reply = match budget.admit(msg) {
            Ok(msg) => handle(&server, &session, msg, &out).await,
            Err(refusal) => refusal,
        };
        if let Some(r) = reply {
            budget.spent(&r);
            replies.push(r);
        }
    }
    if !replies.is_empty() {
        let _ = out
            .send((line_of(&Value::Array(replies)), Some(slot)))
            .await;
    }
}

/// Serves MCP on any reader/writer pair (tests use pipes).
pub async fn serve_on(
    server: Server,
    input: impl tokio::io::AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> std::io::Result<()> {
    let app = server.app.clone();
    let session = Arc::new(Session::new("stdio"));
    let (out_tx, out_rx) = mpsc::channel::<Outgoing>(MAX_UNANSWERED + MAX_QUEUED_NOTIFICATIONS);
    let writer = tokio::spawn(write_lines(output, out_rx));
    let relay = server
        .proxy
        .as_ref()
        .map(|p| tokio::spawn(relay_notifications(p.upstream.subscribe(), out_tx.clone())));
    let slots = Arc::new(Semaphore::new(MAX_UNANSWERED));
    let mut tasks = tokio::task::JoinSet::new();
    let mut reader = BufReader::new(input);
    let mut buf = Vec::new();
    let cap = app.config.max_body_bytes;
    loop {
        // Backpressure: no new message while MAX_UNANSWERED are unanswered on stdout.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            break;
        };
        while tasks.try_join_next().is_some() {}
        buf.clear();
        match read_line_capped(&mut reader, &mut buf, cap).await? {
            Line::Eof => break,
            Line::TooLong(bytes) => {
                // The line was skipped without being held: answer and keep serving.
                let reply = message::error_response(
                    Value::Null,
                    message::invalid(&format!(
                        "message of {bytes} bytes is over the {cap}-byte limit (--max-body-bytes)"
                    )),
                );
                if out_tx.send((line_of(&reply), Some(slot))).await.is_err() {
                    break;
                }
                continue;
            }
            Line::Read => {}
        }
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let parsed = message::parse(line);
        if buf.capacity() > KEEP_LINE_BUFFER {
            // Parsed once; a large message's bytes are not held while its call runs.
            buf = Vec::new();
        }
        let (server, session, out) = (server.clone(), session.clone(), out_tx.clone());
        match parsed {
            Err(reply) => {
                if out.send((line_of(&reply), Some(slot))).await.is_err() {
                    break;
                }
            }
            Ok(Value::Array(batch)) => {
                tasks.spawn(answer_batch(server, session, batch, out, slot));
            }
            Ok(msg) => {
                tasks.spawn(async move {
                    if let Some(r) = handle(&server, &session, msg, &out).await {
                        let _ = out.send((line_of(&r), Some(slot))).await;
                    }
                });
            }
        }
    }
    // EOF: stop what is running, give it the kill grace to clean up, then leave.
    app.inflight.cancel_session(&session.id);
    let grace = app.config.kill_grace + Duration::from_secs(2);
    let _ = tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if let Some(r) = relay {
        r.abort();
    }
    drop(out_tx);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}
