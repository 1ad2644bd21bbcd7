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

use crate::app::App;
use crate::rpc::{self, Session, message};
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
    app: &Arc<App>,
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
    let call = rpc::handle(app, session, msg, notify, None);
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
pub async fn serve(app: Arc<App>) -> std::io::Result<()> {
    serve_on(app, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves MCP on any reader/writer pair (tests use pipes).
pub async fn serve_on(
    app: Arc<App>,
    input: impl tokio::io::AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> std::io::Result<()> {
    let session = Arc::new(Session::new("stdio"));
    let (out_tx, mut out_rx) = mpsc::channel::<Outgoing>(MAX_UNANSWERED + MAX_QUEUED_NOTIFICATIONS);
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some((line, slot)) = out_rx.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
            // Written: the reader may take another message.
            drop(slot);
        }
    });
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
        let (app, session, out) = (app.clone(), session.clone(), out_tx.clone());
        match parsed {
            Err(reply) => {
                if out.send((line_of(&reply), Some(slot))).await.is_err() {
                    break;
                }
            }
            Ok(Value::Array(batch)) => {
                tasks.spawn(async move {
                    let mut replies = Vec::new();
                    let mut budget = rpc::batch::BatchBudget::new(&app);
                    for msg in batch {
                        let reply = match budget.admit(msg) {
                            Ok(msg) => handle(&app, &session, msg, &out).await,
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
                });
            }
            Ok(msg) => {
                tasks.spawn(async move {
                    if let Some(r) = handle(&app, &session, msg, &out).await {
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
    drop(out_tx);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}
