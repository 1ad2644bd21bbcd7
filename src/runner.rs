//! `mcp-pruner run [flags] -- AGENT_COMMAND [ARGS...]`: seed 000's runner lifecycle around one
//! agent command. `run:init` (`settings`) decides whether to start the server;
//! `run:mcp_pruner_starting` (`server`) spawns this executable as `serve` and waits for
//! `/healthz`; `run:mcp_pruner_running` advertises the endpoint to the agent (`agent`) through
//! `MCP_PRUNER_URL`, `MCP_PRUNER_CLAUDE_CONFIG` and `MCP_PRUNER_CODEX_ARGS` and watches the server
//! (exit, or [`UNREACHABLE_AFTER`] failed health probes: `run:mcp_pruner_degraded`);
//! `run:shutdown` stops the server and removes every process the run started (`reap`).
//!
//! Owns the lifecycle, the order of its events and the run's exit status (the agent's; a signal
//! death is 128 + signal number). It must never let the server's fate stop the agent: a disabled,
//! failed or degraded server only means the agent runs without it.

mod agent;
mod reap;
mod server;
mod settings;

use crate::client_config::{self, AUTH_TOKEN_ENV, Target};
use crate::config::{Config, ServerArgs};
use crate::events;
use crate::logging::{self, Sink};
use agent::{Agent, AgentEnv};
use clap::Args;
use server::{Server, StartError};
use settings::{Decision, Plan};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, ExitStatus};
use std::time::{Duration, Instant};

/// `mcp-pruner run`: start the server, run the agent command with the endpoint in its
/// environment, stop the server when the agent exits.
#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// Server flags, validated up front and passed on to `serve`.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Time from spawn to a healthy /healthz before the agent runs without the server [env: JEEVES_MCP_PRUNER_STARTUP_TIMEOUT_MS, MCP_PRUNER_STARTUP_TIMEOUT_MS; default 10000]
    #[arg(long, value_name = "MS")]
    pub startup_timeout_ms: Option<String>,
    /// Grace between SIGTERM and SIGKILL for the server at shutdown, and for the agent after a forwarded SIGTERM or SIGHUP (a forwarded SIGINT is never escalated) [env: JEEVES_MCP_PRUNER_SHUTDOWN_TIMEOUT_MS, MCP_PRUNER_SHUTDOWN_TIMEOUT_MS; default 5000]
    #[arg(long, value_name = "MS")]
    pub shutdown_timeout_ms: Option<String>,
    /// Write the runner's and the server's log lines to this file (appended) instead of stderr (stdout is always the agent's alone) [env: MCP_PRUNER_LOG_FILE]
    #[arg(
        long,
        value_name = "PATH",
        env = "MCP_PRUNER_LOG_FILE",
        hide_env = true
    )]
    pub log_file: Option<PathBuf>,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_COMMAND")]
    pub command: Vec<String>,
}

/// Consecutive failed health probes after which a running server counts as unreachable.
pub const UNREACHABLE_AFTER: u32 = 3;
/// Interval between health probes while the agent runs.
pub const HEALTH_INTERVAL: Duration = Duration::from_secs(1);

/// Variables the runner sets for the agent when the server is running (and removes otherwise).
pub mod env {
    /// The server's MCP endpoint, `http://127.0.0.1:PORT/mcp`. Unset: no server for this run.
    pub const URL: &str = "MCP_PRUNER_URL";
    /// A Claude Code MCP config file registering the server (`claude --mcp-config "$VAR"`).
    pub const CLAUDE_CONFIG: &str = "MCP_PRUNER_CLAUDE_CONFIG";
    /// Codex `-c` overrides registering the server (`codex $VAR ...`, unquoted).
    pub const CODEX_ARGS: &str = "MCP_PRUNER_CODEX_ARGS";
    /// The server's pid (diagnostics; it leads its own process group).
    pub const PID: &str = "MCP_PRUNER_PID";
}

/// Where the server stands while the agent runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// `run:mcp_pruner_disabled`: never started (switched off, invalid config, start failure).
    Disabled,
    /// `run:mcp_pruner_running`.
    Running,
    /// `run:mcp_pruner_degraded`: it was running and is gone or unreachable.
    Degraded,
}

/// Runs the `run` subcommand to completion and returns the agent's exit status.
pub fn main(args: RunArgs) -> ExitCode {
    reap::become_subreaper();
    let plan = settings::plan(&args, &|name| std::env::var(name).ok());
    // Stdout is the agent's alone (`claude -p ... > out.txt` gets only the agent's output): the
    // runner's and the relayed server's log lines go to stderr, or to --log-file.
    let sink = match &args.log_file {
        Some(path) => Sink::file(path).unwrap_or_else(|e| {
            eprintln!(
                "mcp-pruner: cannot open --log-file {}: {e}; logging to stderr",
                path.display()
            );
            Sink::Stderr
        }),
        None => Sink::Stderr,
    };
    logging::init(plan.log_format, plan.log_level, sink);
    for e in &plan.errors {
        events::config_invalid(e.code, &e.field, &e.message);
        eprintln!("mcp-pruner: {e} (the agent runs without the MCP server)");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let status = runtime.block_on(run(&args, plan));
    ExitCode::from(status)
}

/// The signals the runner handles: SIGINT, SIGTERM and SIGHUP.
pub(crate) struct Signals {
    /// SIGINT stream.
    int: tokio::signal::unix::Signal,
    /// SIGTERM stream.
    term: tokio::signal::unix::Signal,
    /// SIGHUP stream (a closed terminal must not kill the runner before it cleans up).
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal received (cancel safe).
    pub(crate) async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

/// The lifecycle; returns the exit status.
async fn run(args: &RunArgs, plan: Plan) -> u8 {
    let mut signals = match Signals::new() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-pruner: cannot handle signals: {e}");
            return 1;
        }
    };
    let mut phase = Phase::Disabled;
    let mut server: Option<Server> = None;
    let mut advert: Option<Advert> = None;
    match &plan.decision {
        Decision::Disabled(reason) => events::disabled(reason),
        Decision::Start(cfg) => {
            match server::start(
                cfg,
                &args.server,
                plan.startup_timeout,
                plan.log_level,
                &mut signals,
            )
            .await
            {
                Ok(s) => {
                    let a = Advert::new(cfg, &s);
                    events::runner_ready(
                        &s.addr.ip().to_string(),
                        s.addr.port(),
                        &cfg.root.to_string_lossy(),
                        &a.url,
                        s.pid,
                    );
                    advert = Some(a);
                    server = Some(s);
                    phase = Phase::Running;
                }
                Err(StartError::Interrupted(sig)) => {
                    events::start_failed(&format!(
                        "interrupted by {} before the server was ready",
                        signal_name(sig)
                    ));
                    events::disabled("start_failed");
                    events::not_running();
                    report_orphans().await;
                    return 128 + sig as u8;
                }
                Err(StartError::Spawn(e)) => {
                    events::spawn_error(&e.to_string());
                    events::start_failed(&format!("cannot spawn the server: {e}"));
                    events::disabled("start_failed");
                }
                Err(StartError::Exited(message)) => {
                    events::start_failed(&message);
                    events::disabled("start_failed");
                }
                Err(StartError::Timeout) => {
                    let ms = plan.startup_timeout.as_millis() as u64;
                    events::start_timeout(ms);
                    events::start_failed(&format!(
                        "no healthy answer from /healthz within {ms} ms"
                    ));
                    events::disabled("start_failed");
                }
            }
        }
    }

    let agent_env = match &advert {
        Some(a) => a.env(),
        None => AgentEnv {
            set: Vec::new(),
            remove: vec![env::URL, env::CLAUDE_CONFIG, env::CODEX_ARGS, env::PID],
        },
    };
    let status = match Agent::spawn(&args.command, &agent_env) {
        Ok(mut agent) => {
            supervise(
                &mut agent,
                advert.as_ref(),
                &mut server,
                &mut phase,
                &mut signals,
                plan.shutdown_timeout,
            )
            .await
        }
        Err(e) => {
            events::agent_spawn_error(&format!("{}: {e}", args.command[0]));
            eprintln!("mcp-pruner: cannot run {:?}: {e}", args.command[0]);
            match e.kind() {
                io::ErrorKind::NotFound => 127,
                io::ErrorKind::PermissionDenied => 126,
                _ => 1,
            }
        }
    };

    shutdown(server, phase, plan.shutdown_timeout).await;
    if let Some(a) = advert {
        a.remove();
    }
    report_orphans().await;
    status
}

/// Runs the agent to its end while watching the server; returns the agent's exit status.
async fn supervise(
    agent: &mut Agent,
    advert: Option<&Advert>,
    server: &mut Option<Server>,
    phase: &mut Phase,
    signals: &mut Signals,
    grace: Duration,
) -> u8 {
    let started = Instant::now();
    let probe_target = server.as_ref().map(|s| (s.client.clone(), s.addr));
    let mut ticks = tokio::time::interval_at(
        tokio::time::Instant::now() + HEALTH_INTERVAL,
        HEALTH_INTERVAL,
    );
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0;
    let mut escalate_at: Option<tokio::time::Instant> = None;
    let mut escalated = false;
    let status = loop {
        tokio::select! {
            status = agent.wait() => break status,
            status = async { server.as_mut().expect("running").wait().await },
                if *phase == Phase::Running =>
            {
                server_exited(status.ok());
                *phase = Phase::Degraded;
                if let Some(a) = advert {
                    a.withdraw();
                }
            }
            healthy = async {
                ticks.tick().await;
                let (client, addr) = probe_target.as_ref().expect("running");
                server::probe(client, *addr).await
            }, if *phase == Phase::Running => {
                failures = if healthy { 0 } else { failures + 1 };
                if failures >= UNREACHABLE_AFTER {
                    events::unreachable(failures);
                    events::degraded("unreachable", None, None);
                    *phase = Phase::Degraded;
                    if let Some(a) = advert {
                        a.withdraw();
                    }
                }
            }
            sig = signals.recv() => {
                agent.signal(sig);
                events::signal_forwarded(&signal_name(sig));
                // SIGINT asks an agent to interrupt what it is doing, which it may take its time
                // over and survive (an interactive agent stops its turn and carries on): it is
                // never escalated. SIGTERM and SIGHUP ask it to end, within the grace.
                if sig != libc::SIGINT {
                    escalate_at.get_or_insert(tokio::time::Instant::now() + grace);
                }
            }
            _ = async { tokio::time::sleep_until(escalate_at.expect("armed")).await },
                if escalate_at.is_some() && !escalated =>
            {
                agent.signal(libc::SIGKILL);
                events::agent_kill_escalated(agent.pid, grace.as_millis() as u64);
                escalated = true;
            }
        }
    };
    let (code, sig, exit) = match status {
        Ok(s) => {
            let (code, sig) = ending(s);
            (code, sig, exit_status(s))
        }
        Err(e) => {
            eprintln!("mcp-pruner: cannot wait for the agent: {e}");
            (None, None, 1)
        }
    };
    events::agent_exited(code, sig.as_deref(), started.elapsed().as_millis() as u64);
    if let Some(kill_escalated) = agent.clean_up(grace).await {
        events::agent_leftovers_killed(agent.pid, kill_escalated);
    }
    exit
}

/// `mcp_pruner.exited` then `mcp_pruner.degraded` (reason `exited`).
fn server_exited(status: Option<ExitStatus>) {
    let (code, sig) = status.map(ending).unwrap_or((None, None));
    events::exited(code, sig.as_deref());
    events::degraded("exited", code, sig.as_deref());
}

/// `run:shutdown`: stop the server according to where it stands, then log the matching event.
async fn shutdown(server: Option<Server>, mut phase: Phase, grace: Duration) {
    let Some(mut server) = server else {
        events::not_running();
        return;
    };
    if phase == Phase::Running
        && let Some(status) = server.try_exited()
    {
        // It died after the last look: still a degraded server, not a graceful stop.
        server_exited(Some(status));
        phase = Phase::Degraded;
    }
    let started = Instant::now();
    let escalated = server.stop(grace).await;
    if escalated {
        events::kill_escalated(server.pid, grace.as_millis() as u64);
    }
    if phase == Phase::Running {
        events::stopped(!escalated, started.elapsed().as_millis() as u64);
    } else {
        events::shutdown_after_degraded();
    }
    server.finish().await;
}

/// Kills the descendants that escaped every process group, and says so when there were any.
async fn report_orphans() {
    let pids = reap::sweep().await;
    if !pids.is_empty() {
        events::orphans_reaped(&pids);
    }
}

/// The endpoint as advertised to the agent, and the Claude config file written for it.
struct Advert {
    /// `http://HOST:PORT/mcp`.
    url: String,
    /// Bearer token the server requires, if any (`--auth-token`).
    bearer: Option<String>,
    /// The Claude Code MCP config file, `None` if it could not be written.
    claude_config: Option<PathBuf>,
    /// The server's pid, for `MCP_PRUNER_PID`.
    server_pid: u32,
}

impl Advert {
    fn new(cfg: &Config, server: &Server) -> Advert {
        let url = format!("http://{}/mcp", server.addr);
        let bearer = cfg.auth_token.clone();
        let target = Target::Http {
            url: url.clone(),
            bearer: bearer.clone(),
        };
        let path = std::env::temp_dir().join(format!(
            "mcp-pruner-{}-{}.json",
            std::process::id(),
            server.addr.port()
        ));
        let claude_config = match write_private(&path, &client_config::claude_json(&target)) {
            Ok(()) => Some(path),
            Err(e) => {
                eprintln!(
                    "mcp-pruner: cannot write the Claude MCP config {}: {e}; {} stays unset",
                    path.display(),
                    env::CLAUDE_CONFIG
                );
                None
            }
        };
        Advert {
            url,
            bearer,
            claude_config,
            server_pid: server.pid,
        }
    }

    fn env(&self) -> AgentEnv {
        let mut set = vec![
            (env::URL.to_string(), self.url.clone()),
            (
                env::CODEX_ARGS.to_string(),
                client_config::codex_http_args(&self.url, self.bearer.is_some()),
            ),
            (env::PID.to_string(), self.server_pid.to_string()),
        ];
        if let Some(token) = &self.bearer {
            set.push((AUTH_TOKEN_ENV.to_string(), token.clone()));
        }
        let mut remove = Vec::new();
        match &self.claude_config {
            Some(p) => set.push((
                env::CLAUDE_CONFIG.to_string(),
                p.to_string_lossy().into_owned(),
            )),
            None => remove.push(env::CLAUDE_CONFIG),
        }
        AgentEnv { set, remove }
    }

    /// Stops advertising a degraded server: the Claude config file now lists no server, so a
    /// `claude --mcp-config` started later in the run works without the tools instead of failing
    /// on a dead endpoint (the environment of a running agent cannot be changed).
    fn withdraw(&self) {
        if let Some(p) = &self.claude_config {
            // Written aside and renamed, so a claude starting now never reads half a file.
            let aside = p.with_extension("json.new");
            if std::fs::write(&aside, "{\n  \"mcpServers\": {}\n}\n").is_ok() {
                let _ = std::fs::rename(&aside, p);
            }
        }
    }

    fn remove(self) {
        if let Some(p) = self.claude_config {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Writes `value` as JSON to a new file only the user can read (it may hold a bearer token).
fn write_private(path: &Path, value: &serde_json::Value) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(serde_json::to_string_pretty(value)?.as_bytes())?;
    f.write_all(b"\n")
}

/// `(exit_code, signal_name)` of a finished process.
fn ending(status: ExitStatus) -> (Option<i32>, Option<String>) {
    (status.code(), status.signal().map(signal_name))
}

/// The runner's exit status for the agent's: its code, or 128 + signal number.
fn exit_status(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(sig)) => 128u8.saturating_add(sig as u8),
        _ => 1,
    }
}

/// `SIGTERM` and the like; `SIG<n>` for the uncommon ones.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("SIG{sig}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_follows_the_shell_convention() {
        assert_eq!(exit_status(ExitStatus::from_raw(7 << 8)), 7);
        assert_eq!(exit_status(ExitStatus::from_raw(libc::SIGTERM)), 143);
        assert_eq!(
            ending(ExitStatus::from_raw(libc::SIGKILL)),
            (None, Some("SIGKILL".into()))
        );
        assert_eq!(signal_name(64), "SIG64");
    }
}
