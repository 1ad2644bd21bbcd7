//! The server child of a run: `run:mcp_pruner_starting` (spawn this executable as `serve` in its own
//! process group, learn the port from its ready line, then poll `GET /healthz` until it answers or
//! the startup timeout passes), the health probe used while it runs, and stopping it. The server's
//! log lines are relayed to the runner's log sink (stderr or --log-file) so none is lost. Owns the child process and its
//! group; it never logs lifecycle events itself (the runner decides what they mean) and never
//! trusts the ready line alone.

use super::Signals;
use crate::config::{Config, LogFormat, ServerArgs};
use crate::process;
use serde_json::Value;
use std::io;
use std::net::SocketAddr;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Longest a single health request may take.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);
/// Pause between failed readiness probes.
const PROBE_RETRY: Duration = Duration::from_millis(50);

/// A healthy server child.
pub struct Server {
    /// The child; kept to reap it and to learn how it ended.
    child: tokio::process::Child,
    /// Its pid, which is also its process group id (it leads its own group).
    pub pid: u32,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The HTTP client used for health probes (no proxy: the server is on loopback).
    pub client: reqwest::Client,
    /// The task relaying the child's stdout; it ends at EOF, once the child is gone.
    relay: JoinHandle<()>,
}

/// Why the server did not become ready. The child is already gone when this is returned.
#[derive(Debug)]
pub enum StartError {
    /// The executable could not be spawned.
    Spawn(io::Error),
    /// It exited before answering `/healthz`; the message says how.
    Exited(String),
    /// No healthy answer within the startup timeout; the group was SIGKILLed.
    Timeout,
    /// The runner got this signal while waiting; the group was SIGKILLed.
    Interrupted(i32),
}

/// Spawns `current_exe serve --host H --port P --root R ...` and waits until `/healthz` answers 200,
/// at most `timeout` from the spawn. `relay_level` is the most verbose level relayed to stdout.
pub async fn start(
    cfg: &Config,
    args: &ServerArgs,
    timeout: Duration,
    relay_level: tracing::Level,
    signals: &mut Signals,
) -> Result<Server, StartError> {
    let deadline = Instant::now() + timeout;
    let exe = std::env::current_exe().map_err(StartError::Spawn)?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(server_argv(args, cfg))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(token) = &cfg.auth_token {
        // Through the environment, not argv, so that `ps` does not show it.
        cmd.env(crate::client_config::AUTH_TOKEN_ENV, token);
    }
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(StartError::Spawn)?;
    let pid = child.id().expect("a just-spawned child has a pid");
    let (ready_tx, mut ready_rx) = oneshot::channel();
    let relay = tokio::spawn(relay(
        child.stdout.take().expect("stdout is piped"),
        cfg.log_format,
        relay_level,
        ready_tx,
    ));
    let client = crate::http_client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .build()
        .expect("an HTTP client without TLS roots builds");

    let mut addr: Option<SocketAddr> = None;
    let mut ready_closed = false;
    let failure = loop {
        tokio::select! {
            port = &mut ready_rx, if addr.is_none() && !ready_closed => match port {
                Ok(port) => addr = Some(SocketAddr::new(cfg.host, port)),
                // stdout closed without a ready line: the child is on its way out.
                Err(_) => ready_closed = true,
            },
            healthy = async {
                let ok = probe(&client, addr.expect("guarded")).await;
                if !ok {
                    tokio::time::sleep(PROBE_RETRY).await;
                }
                ok
            }, if addr.is_some() => if healthy {
                return Ok(Server { child, pid, addr: addr.expect("guarded"), client, relay });
            },
            status = child.wait() => break StartError::Exited(match status {
                Ok(s) => format!("the server exited ({}) before answering /healthz", describe(s)),
                Err(e) => format!("cannot wait for the server: {e}"),
            }),
            _ = tokio::time::sleep_until(deadline) => break StartError::Timeout,
            sig = signals.recv() => break StartError::Interrupted(sig),
        }
    };
    process::signal_group(pid as i32, libc::SIGKILL);
    let _ = child.wait().await;
    finish_relay(relay).await;
    Err(failure)
}

/// The `serve` command line: host, port, root, log format and level from the validated
/// configuration, every other flag the runner was given passed on as given. The environment is
/// inherited, so values that came from variables reach the server the same way.
fn server_argv(args: &ServerArgs, cfg: &Config) -> Vec<String> {
    // Destructured without `..`, so a new server flag cannot be forgotten here.
    let ServerArgs {
        host: _,
        port: _,
        root: _,
        log_format: _,
        log_level: _,
        auth_token: _,
        auth_token_file: _,
        allow_remote,
        allowed_origins,
        pruner,
        pruner_endpoint,
        pruner_timeout_ms,
        max_prune_input_bytes,
        max_input_chars,
        swe_threshold,
        max_output_bytes,
        prune_id_ttl_s,
        store_max_bytes,
        store_max_entries,
        store,
        capture_max_bytes,
        kill_grace_ms,
        max_body_bytes,
        header_timeout_ms,
        body_timeout_ms,
        session_idle_s,
        tools,
        tool_prefix,
        output_schemas,
        ledger,
        no_ledger,
    } = args;
    let format = match cfg.log_format {
        LogFormat::Json => "json",
        LogFormat::Text => "text",
    };
    let mut argv: Vec<String> = vec![
        "serve".into(),
        "--host".into(),
        cfg.host.to_string(),
        "--port".into(),
        cfg.port.to_string(),
        "--root".into(),
        cfg.root.to_string_lossy().into_owned(),
        "--log-format".into(),
        format.into(),
        "--log-level".into(),
        // The ready line is an info event: the server must log at least that much.
        crate::logging::level_name(&cfg.log_level.max(tracing::Level::INFO)).into(),
    ];
    let mut opt = |flag: &str, value: &Option<String>| {
        if let Some(v) = value {
            argv.push(flag.into());
            argv.push(v.clone());
        }
    };
    opt("--pruner", pruner);
    opt("--pruner-endpoint", pruner_endpoint);
    opt("--pruner-timeout-ms", pruner_timeout_ms);
    opt("--max-prune-input-bytes", max_prune_input_bytes);
    opt("--max-input-chars", max_input_chars);
    opt("--swe-threshold", swe_threshold);
    opt("--max-output-bytes", max_output_bytes);
    opt("--prune-id-ttl-s", prune_id_ttl_s);
    opt("--store-max-bytes", store_max_bytes);
    opt("--store-max-entries", store_max_entries);
    opt("--store", store);
    opt("--capture-max-bytes", capture_max_bytes);
    opt("--kill-grace-ms", kill_grace_ms);
    opt("--max-body-bytes", max_body_bytes);
    opt("--header-timeout-ms", header_timeout_ms);
    opt("--body-timeout-ms", body_timeout_ms);
    opt("--session-idle-s", session_idle_s);
    opt("--tools", tools);
    opt("--tool-prefix", tool_prefix);
    opt("--ledger", ledger);
    for origin in allowed_origins {
        argv.push("--allowed-origin".into());
        argv.push(origin.clone());
    }
    // Yes/no flags keep their value (`--flag=VALUE`): the server parses it again, strictly.
    let mut yes_no = |flag: &str, value: &Option<String>| {
        if let Some(v) = value {
            argv.push(format!("{flag}={v}"));
        }
    };
    yes_no("--no-ledger", no_ledger);
    yes_no("--allow-remote", allow_remote);
    yes_no("--output-schemas", output_schemas);
    argv
}

/// On Linux, the server gets SIGKILL if the runner dies without cleaning up (say, SIGKILL), so a
/// crashed runner does not leave a listening server behind.
fn die_with_parent(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        // SAFETY: prctl and getppid are async-signal-safe; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Relays the child's log lines to the runner's log sink (those at most as verbose as `max_level`) and sends
/// the port of the first `mcp_pruner.ready` line.
async fn relay(
    stdout: tokio::process::ChildStdout,
    format: LogFormat,
    max_level: tracing::Level,
    ready: oneshot::Sender<u16>,
) {
    let mut ready = Some(ready);
    let mut lines = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let parsed = parse_line(line, format);
        if let Some(port) = parsed.ready_port
            && let Some(tx) = ready.take()
        {
            let _ = tx.send(port);
        }
        if parsed.level.is_none_or(|l| l <= max_level) {
            // A closed log sink must not stop the relay: the pipe still has to be drained.
            crate::logging::write_line(line);
        }
    }
}

/// What the runner needs from one server log line.
#[derive(Debug, Default, PartialEq)]
struct LineInfo {
    /// Its level, when the line is one of ours.
    level: Option<tracing::Level>,
    /// The port, when it is the `mcp_pruner.ready` line.
    ready_port: Option<u16>,
}

/// Reads a line in either of [`crate::logging`]'s formats.
fn parse_line(line: &str, format: LogFormat) -> LineInfo {
    let level_of = |s: &str| match s.to_ascii_lowercase().as_str() {
        "error" => Some(tracing::Level::ERROR),
        "warn" => Some(tracing::Level::WARN),
        "info" => Some(tracing::Level::INFO),
        "debug" => Some(tracing::Level::DEBUG),
        _ => None,
    };
    match format {
        LogFormat::Json => {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                return LineInfo::default();
            };
            let ready = v.get("event").and_then(Value::as_str) == Some("mcp_pruner.ready");
            LineInfo {
                level: v.get("level").and_then(Value::as_str).and_then(level_of),
                ready_port: ready
                    .then(|| v.pointer("/data/port").and_then(Value::as_u64))
                    .flatten()
                    .and_then(|p| u16::try_from(p).ok()),
            }
        }
        LogFormat::Text => {
            // `{ts} {LEVEL} {event} key=value ...`
            let mut words = line.split_whitespace();
            let (_ts, level, event) = (words.next(), words.next(), words.next());
            let ready = event == Some("mcp_pruner.ready");
            LineInfo {
                level: level.and_then(level_of),
                ready_port: if ready {
                    words
                        .find_map(|w| w.strip_prefix("port="))
                        .and_then(|p| p.parse().ok())
                } else {
                    None
                },
            }
        }
    }
}

/// One `GET /healthz`: true on 200 with `ok: true`.
pub async fn probe(client: &reqwest::Client, addr: SocketAddr) -> bool {
    let Ok(resp) = client.get(format!("http://{addr}/healthz")).send().await else {
        return false;
    };
    if resp.status() != reqwest::StatusCode::OK {
        return false;
    }
    resp.json::<Value>()
        .await
        .is_ok_and(|v| v.get("ok") == Some(&Value::Bool(true)))
}

/// Waits (bounded) for the relay to copy the last lines the child wrote.
async fn finish_relay(relay: JoinHandle<()>) {
    let abort = relay.abort_handle();
    if tokio::time::timeout(Duration::from_secs(1), relay)
        .await
        .is_err()
    {
        abort.abort();
    }
}

impl Server {
    /// Waits for the child to exit (cancel safe: usable in `select!`).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// How the child ended, if it has (without blocking).
    pub fn try_exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops what is left of the server: SIGTERM (and SIGCONT) to its group, up to `grace` for the
    /// group to empty, then SIGKILL. Returns whether SIGKILL was needed. Harmless when the child
    /// already exited.
    pub async fn stop(&mut self, grace: Duration) -> bool {
        let pgid = self.pid as i32;
        let child = &mut self.child;
        process::terminate_group(pgid, grace, || {
            let reaped = matches!(child.try_wait(), Ok(Some(_)));
            if reaped {
                // Members that outlived the server were re-parented to the runner.
                super::reap::reap_group(pgid);
            }
            reaped
        })
        .await
    }

    /// Waits (bounded) for the relay to copy the server's last log lines; call after [`Self::stop`].
    pub async fn finish(self) {
        finish_relay(self.relay).await;
    }
}

/// `exit N` or `signal SIGX`, for messages.
pub fn describe(status: ExitStatus) -> String {
    match super::ending(status) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "unknown status".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ready_lines_in_both_formats() {
        let json = r#"{"ts":"t","level":"info","event":"mcp_pruner.ready","data":{"host":"127.0.0.1","port":38001,"root":"/x"}}"#;
        assert_eq!(
            parse_line(json, LogFormat::Json),
            LineInfo {
                level: Some(tracing::Level::INFO),
                ready_port: Some(38001)
            }
        );
        let text = r#"2026-11-22T22:23:05.722Z INFO  mcp_pruner.ready host="127.0.0.1" port=43713 root="/tmp/a b""#;
        assert_eq!(
            parse_line(text, LogFormat::Text),
            LineInfo {
                level: Some(tracing::Level::INFO),
                ready_port: Some(43713)
            }
        );
        let other = r#"{"ts":"t","level":"warn","event":"tool.exec_failed","data":{"port":1}}"#;
        assert_eq!(
            parse_line(other, LogFormat::Json),
            LineInfo {
                level: Some(tracing::Level::WARN),
                ready_port: None
            }
        );
        assert_eq!(
            parse_line("thread 'main' panicked", LogFormat::Json),
            LineInfo::default()
        );
    }

    #[test]
    fn argv_pins_host_port_root_and_passes_the_rest() {
        let root = std::env::temp_dir();
        let mut cfg = Config::for_root(&root);
        cfg.log_level = tracing::Level::ERROR;
        let args = ServerArgs {
            port: Some("9".into()),
            pruner: Some("off".into()),
            allowed_origins: vec!["http://a".into(), "http://b".into()],
            auth_token: Some("secret".into()),
            output_schemas: Some("true".into()),
            ..Default::default()
        };
        let argv = server_argv(&args, &cfg).join(" ");
        let root = cfg.root.to_string_lossy();
        assert_eq!(
            argv,
            format!(
                "serve --host 127.0.0.1 --port 0 --root {root} --log-format json --log-level info \
                 --pruner off --allowed-origin http://a --allowed-origin http://b --output-schemas=true"
            )
        );
        assert!(
            !argv.contains("secret"),
            "the token goes through the environment"
        );
    }
}
