//! stdio transport: one JSON-RPC message per line on stdin, responses and notifications one per
//! line on stdout, nothing else on stdout (logs go to stderr). Requests run concurrently so that a
//! cancellation can reach a running call. On stdin EOF, running calls are cancelled (their process
//! groups killed) and the server exits. A line over `--max-body-bytes` is skipped without being
//! held in memory and answered with -32600; the server keeps serving.

use crate::app::App;
use crate::rpc::{self, Session, message};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

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
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(msg) = out_rx.recv().await {
            let mut line = serde_json::to_vec(&msg).expect("JSON values serialize");
            line.push(b'\n');
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let mut tasks = tokio::task::JoinSet::new();
    let mut reader = BufReader::new(input);
    let mut buf = Vec::new();
    let cap = app.config.max_body_bytes;
    loop {
        buf.clear();
        match read_line_capped(&mut reader, &mut buf, cap).await? {
            Line::Eof => break,
            Line::TooLong(bytes) => {
                // The line was skipped without being held: answer and keep serving.
                let _ = out_tx.send(message::error_response(
                    Value::Null,
                    message::invalid(&format!(
                        "message of {bytes} bytes is over the {cap}-byte limit (--max-body-bytes)"
                    )),
                ));
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
                let _ = out.send(reply);
            }
            Ok(Value::Array(batch)) => {
                tasks.spawn(async move {
                    let mut replies = Vec::new();
                    for msg in batch {
                        if let Some(r) = rpc::handle(&app, &session, msg, out.clone(), None).await {
                            replies.push(r);
                        }
                    }
                    if !replies.is_empty() {
                        let _ = out.send(Value::Array(replies));
                    }
                });
            }
            Ok(msg) => {
                tasks.spawn(async move {
                    if let Some(r) = rpc::handle(&app, &session, msg, out.clone(), None).await {
                        let _ = out.send(r);
                    }
                });
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    // EOF: stop what is running, give it the kill grace to clean up, then leave.
    app.inflight.cancel_session(&session.id);
    let grace = app.config.kill_grace + Duration::from_secs(2);
    let _ = tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    drop(out_tx);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}
