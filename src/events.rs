//! The log events of seed 000's event table, in one place: one function per row (plus the few this
//! server adds, marked as such). Callers never spell an event name themselves. Owns names and
//! payload fields only; formatting is [`crate::logging`].

use tracing::{error, info, warn};

/// `pruner.fit_failed` (this server's): a remote backend's answer could not be fitted to the
/// response budget by relevance in time (or the fitting failed); the answer is used as it is.
pub fn pruner_fit_failed(request_id: &str, tool: &str, message: &str) {
    warn!(event = "pruner.fit_failed", request_id, tool, message);
}

/// `mcp_pruner.ready`: listening, health endpoint available; `url` is the MCP endpoint to give a
/// client (`http://HOST:PORT/mcp`, an IPv6 host in brackets).
pub fn ready(host: &str, port: u16, root: &str) {
    let url = mcp_url(host, port);
    info!(event = "mcp_pruner.ready", host, port, root, url);
}

/// The MCP endpoint of a server listening on `host:port`.
pub fn mcp_url(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("http://[{host}]:{port}/mcp")
    } else {
        format!("http://{host}:{port}/mcp")
    }
}

/// `mcp_pruner.disabled`: the runner runs the agent without the server.
pub fn disabled(reason: &str) {
    info!(event = "mcp_pruner.disabled", reason);
}

/// `mcp_pruner.config_invalid`: an invalid configuration value (the runner goes on without the server).
pub fn config_invalid(code: &str, field: &str, message: &str) {
    error!(event = "mcp_pruner.config_invalid", code, field, message);
}

/// `mcp_pruner.start_failed`: the server did not become healthy.
pub fn start_failed(message: &str) {
    error!(event = "mcp_pruner.start_failed", message);
}

/// `mcp_pruner.spawn_error`: the server process could not be spawned.
pub fn spawn_error(message: &str) {
    error!(event = "mcp_pruner.spawn_error", message);
}

/// `mcp_pruner.start_timeout`: no healthy answer within the startup timeout.
pub fn start_timeout(timeout_ms: u64) {
    error!(event = "mcp_pruner.start_timeout", timeout_ms);
}

/// `mcp_pruner.exited`: the server exited while the agent was running.
pub fn exited(exit_code: Option<i32>, signal: Option<&str>) {
    warn!(event = "mcp_pruner.exited", exit_code, signal);
}

/// `mcp_pruner.unreachable`: consecutive health checks failed.
pub fn unreachable(failures: u32) {
    warn!(event = "mcp_pruner.unreachable", failures);
}

/// `mcp_pruner.degraded`: the server is gone for the rest of the run.
pub fn degraded(reason: &str, exit_code: Option<i32>, signal: Option<&str>) {
    warn!(event = "mcp_pruner.degraded", reason, exit_code, signal);
}

/// `mcp_pruner.stopped`: the runner shut the server down.
pub fn stopped(graceful: bool, duration_ms: u64) {
    info!(event = "mcp_pruner.stopped", graceful, duration_ms);
}

/// `mcp_pruner.kill_escalated`: the server ignored SIGTERM and got SIGKILL.
pub fn kill_escalated(pid: u32, waited_ms: u64) {
    warn!(event = "mcp_pruner.kill_escalated", pid, waited_ms);
}

/// `mcp_pruner.not_running`: shutdown with no server (disabled run).
pub fn not_running() {
    info!(event = "mcp_pruner.not_running");
}

/// `mcp_pruner.shutdown_after_degraded`: shutdown after the server had gone away.
pub fn shutdown_after_degraded() {
    info!(event = "mcp_pruner.shutdown_after_degraded");
}

/// `mcp_pruner.agent_exited` (added): the agent command finished.
pub fn agent_exited(exit_code: Option<i32>, signal: Option<&str>, duration_ms: u64) {
    info!(
        event = "mcp_pruner.agent_exited",
        exit_code, signal, duration_ms
    );
}

/// `mcp_pruner.signal_forwarded` (added): the runner passed SIGINT/SIGTERM on to the agent.
pub fn signal_forwarded(signal: &str) {
    info!(event = "mcp_pruner.signal_forwarded", signal);
}

/// `mcp_pruner.ready` as the runner logs it once `/healthz` answered: the seed's `{host, port, root}`
/// plus the `url` advertised to the agent and the server's `pid` (extra fields; consumers ignore
/// unknown ones). The server's own `mcp_pruner.ready` line, relayed before it, has the `url` but no `pid`.
pub fn runner_ready(host: &str, port: u16, root: &str, url: &str, pid: u32) {
    info!(event = "mcp_pruner.ready", host, port, root, url, pid);
}

/// `mcp_pruner.agent_spawn_error` (added): the agent command could not be started.
pub fn agent_spawn_error(message: &str) {
    error!(event = "mcp_pruner.agent_spawn_error", message);
}

/// `mcp_pruner.agent_kill_escalated` (added): after a forwarded SIGTERM or SIGHUP the agent did not exit
/// within the shutdown timeout, so its process group got SIGKILL.
pub fn agent_kill_escalated(pid: u32, waited_ms: u64) {
    warn!(event = "mcp_pruner.agent_kill_escalated", pid, waited_ms);
}

/// `mcp_pruner.agent_leftovers_killed` (added): processes the agent left in its process group
/// after it exited were terminated (`kill_escalated`: SIGTERM was not enough).
pub fn agent_leftovers_killed(pgid: u32, kill_escalated: bool) {
    warn!(
        event = "mcp_pruner.agent_leftovers_killed",
        pgid, kill_escalated
    );
}

/// `mcp_pruner.orphans_reaped` (added): descendants that had left every process group the runner
/// tracks (re-parented to it as a subreaper) were killed at shutdown.
pub fn orphans_reaped(pids: &[i32]) {
    let count = pids.len();
    let pids = format!("{pids:?}");
    warn!(event = "mcp_pruner.orphans_reaped", count, pids = %pids);
}

/// `tool.request_received`.
pub fn request_received(request_id: &str, tool: &str) {
    info!(event = "tool.request_received", request_id, tool);
}

/// `tool.request_parse_failed`: the body was not JSON / not JSON-RPC.
pub fn request_parse_failed(message: &str) {
    warn!(event = "tool.request_parse_failed", message);
}

/// `tool.request_invalid`: schema/type/range validation failed.
pub fn request_invalid(request_id: &str, tool: Option<&str>, field_errors: &serde_json::Value) {
    warn!(event = "tool.request_invalid", request_id, tool, field_errors = %field_errors);
}

/// `tool.exec_start`.
pub fn exec_start(request_id: &str, tool: &str) {
    info!(event = "tool.exec_start", request_id, tool);
}

/// `tool.exec_ok`: raw output ready.
pub fn exec_ok(request_id: &str, tool: &str, duration_ms: u64, bytes: u64) {
    info!(event = "tool.exec_ok", request_id, tool, duration_ms, bytes);
}

/// `tool.exec_failed`: IO, spawn or non-zero exit.
pub fn exec_failed(
    request_id: &str,
    tool: &str,
    code: &str,
    message: &str,
    exit_code: Option<i64>,
) {
    warn!(
        event = "tool.exec_failed",
        request_id, tool, code, message, exit_code
    );
}

/// `tool.exec_timeout`.
pub fn exec_timeout(request_id: &str, tool: &str, timeout_ms: u64) {
    warn!(event = "tool.exec_timeout", request_id, tool, timeout_ms);
}

/// `tool.kill_escalated` (added): a command's process group ignored SIGTERM and got SIGKILL.
pub fn tool_kill_escalated(request_id: &str, tool: &str, grace_ms: u64) {
    warn!(event = "tool.kill_escalated", request_id, tool, grace_ms);
}

/// `tool.leftovers_killed` (added): background processes a command left behind were terminated.
pub fn tool_leftovers_killed(request_id: &str, tool: &str) {
    info!(event = "tool.leftovers_killed", request_id, tool);
}

/// `tool.cancelled` (added): the client cancelled the request.
pub fn cancelled(request_id: &str, tool: &str) {
    info!(event = "tool.cancelled", request_id, tool);
}

/// `tool.respond_ok` with `mode` `raw` or `pruned`.
pub fn respond_ok(request_id: &str, tool: &str, mode: &str, bytes: u64) {
    info!(event = "tool.respond_ok", request_id, tool, mode, bytes);
}

/// `tool.respond_failed`: the response could not be written.
pub fn respond_failed(request_id: &str, message: &str) {
    error!(event = "tool.respond_failed", request_id, message);
}

/// `tool.internal_error`: an unexpected failure; `detail` is for the log only.
pub fn internal_error(request_id: &str, tool: &str, detail: &str) {
    error!(event = "tool.internal_error", request_id, tool, detail);
}

/// `pruner.call_start`.
pub fn pruner_call_start(request_id: &str, endpoint: &str, tool: &str, input_bytes: u64) {
    info!(
        event = "pruner.call_start",
        request_id, endpoint, tool, input_bytes
    );
}

/// `pruner.call_ok`.
pub fn pruner_call_ok(request_id: &str, tool: &str, pruner_duration_ms: u64, pruned_bytes: u64) {
    info!(
        event = "pruner.call_ok",
        request_id, tool, pruner_duration_ms, pruned_bytes
    );
}

/// `pruner.call_failed`, followed by the specific row (`pruner.timeout`, `pruner.http_error`,
/// `pruner.invalid_response`) of seed 000's error table.
pub fn pruner_call_failed(
    request_id: &str,
    tool: &str,
    reason: &str,
    pruner_duration_ms: u64,
    message: &str,
) {
    warn!(
        event = "pruner.call_failed",
        request_id, tool, reason, pruner_duration_ms, message
    );
    let specific = match reason {
        "timeout" => "pruner.timeout",
        "http_error" => "pruner.http_error",
        _ => "pruner.invalid_response",
    };
    warn!(event = specific, request_id, tool, message);
}

/// `ledger.unavailable` (this server): the savings ledger could not be opened; calls go on
/// unrecorded.
pub fn ledger_unavailable(path: &str, message: &str) {
    warn!(event = "ledger.unavailable", path, message);
}

/// `ledger.set_aside` (this server): a corrupted ledger file was renamed and a new one started.
pub fn ledger_set_aside(path: &str, moved_to: &str, message: &str) {
    warn!(event = "ledger.set_aside", path, moved_to, message);
}

/// `ledger.write_failed` (this server): rows the database refused (locked past the busy timeout,
/// disk full); the calls themselves were answered.
pub fn ledger_write_failed(path: &str, rows: u64, message: &str) {
    warn!(event = "ledger.write_failed", path, rows, message);
}
