//! stdio transport: one JSON-RPC message per line on stdin, responses and notifications one per
//! line on stdout, nothing else on stdout (logs go to stderr). Requests run concurrently so that a
//! cancellation can reach a running call. On stdin EOF, running calls are cancelled (their process
//! groups killed) and the server exits.

use crate::app::App;
use crate::rpc::{self, Session, message};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

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
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).await? == 0 {
            break;
        }
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let parsed: Result<Value, _> = serde_json::from_slice(line);
        let (app, session, out) = (app.clone(), session.clone(), out_tx.clone());
        match parsed {
            Err(e) => {
                crate::events::request_parse_failed(&e.to_string());
                let _ = out.send(message::error_response(
                    Value::Null,
                    message::rpc_error(message::PARSE_ERROR, format!("Parse error: {e}"), None),
                ));
            }
            Ok(Value::Array(batch)) => {
                tasks.spawn(async move {
                    if batch.is_empty() {
                        let _ = out.send(message::error_response(
                            Value::Null,
                            message::invalid("empty batch"),
                        ));
                        return;
                    }
                    let mut replies = Vec::new();
                    for msg in batch {
                        if let Some(r) = rpc::handle(&app, &session, msg, out.clone()).await {
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
                    if let Some(r) = rpc::handle(&app, &session, msg, out.clone()).await {
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
