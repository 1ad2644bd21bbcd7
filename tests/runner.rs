//! `mcp-pruner run` end to end: the real binary runs `tests/fixtures/fake_agent.sh` through each
//! path of seed 000's runner lifecycle (running, disabled, invalid config, start failure, server
//! killed or unreachable mid-run, runner interrupted) and every test checks the events logged, the
//! exit status, and that no process of the run (server, agent, their children) is left.
//! Also `mcp-pruner config`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{bin, wait_for_file};

fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_agent.sh")
}

/// One run's workspace: `root/` for the server, `out/` for what the agent saw.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("root/hello.txt"), "hello from the root\n").unwrap();
        Workspace { dir }
    }
    fn root(&self) -> String {
        self.dir.path().join("root").to_string_lossy().into_owned()
    }
    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.out().join(name)).unwrap_or_else(|e| panic!("out/{name}: {e}"))
    }
    fn pid(&self, name: &str) -> i32 {
        self.read(name).trim().parse().unwrap()
    }
    /// The JSON the agent saved in `out/NAME`, with the run's log when it is not JSON.
    fn json(&self, name: &str, run: &Finished) -> Value {
        let text = self.read(name);
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "out/{name} is not JSON ({e}): {text:?}\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            )
        })
    }
    fn env_seen(&self) -> String {
        self.read("env.txt")
    }
}

/// A finished run.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    /// The JSON log lines of stderr (the runner's stdout is the agent's alone).
    fn events(&self) -> Vec<Value> {
        self.stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("event").is_some())
            .collect()
    }
    /// The stderr lines that are not log events: the runner's own messages.
    fn messages(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| {
                serde_json::from_str::<Value>(l)
                    .ok()
                    .is_none_or(|v| v.get("event").is_none())
            })
            .collect()
    }
    /// The names of the runner's `mcp_pruner.*` events, in order (the server's own relayed
    /// `mcp_pruner.ready`, which has no `pid`, is left out).
    fn lifecycle(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|v| {
                let name = v["event"].as_str()?;
                let relayed_ready = name == "mcp_pruner.ready" && v["data"]["pid"].is_null();
                (name.starts_with("mcp_pruner.") && !relayed_ready).then(|| name.to_string())
            })
            .collect()
    }
    /// [`Self::lifecycle`] without `agent_leftovers_killed`, for runs where a forwarded signal
    /// races the agent's background job (dead already, or killed at cleanup: both are fine).
    fn lifecycle_after_signal(&self) -> Vec<String> {
        let mut names = self.lifecycle();
        names.retain(|n| n != "mcp_pruner.agent_leftovers_killed");
        names
    }
    fn event(&self, name: &str) -> Value {
        self.events()
            .into_iter()
            .find(|v| {
                v["event"] == name && !(name == "mcp_pruner.ready" && v["data"]["pid"].is_null())
            })
            .unwrap_or_else(|| panic!("no {name} in\n{}", self.stderr))
    }
    fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// `mcp-pruner run ARGS -- AGENT...` in the workspace with a clean environment (no inherited
/// JEEVES_* / MCP_PRUNER_* variables) plus `env`.
fn runner_command(
    ws: &Workspace,
    args: &[&str],
    env: &[(&str, &str)],
    agent: &[std::ffi::OsString],
) -> Command {
    let mut cmd = Command::new(bin());
    cmd.env("MCP_PRUNER_NO_LEDGER", "1");
    cmd.arg("run")
        .args(args)
        .arg("--")
        .args(agent)
        .current_dir(ws.dir.path())
        .stdin(Stdio::null())
        // Files, not pipes: a leaked grandchild holding a pipe would hang the test, not fail it.
        .stdout(std::fs::File::create(ws.dir.path().join("stdout")).unwrap())
        .stderr(std::fs::File::create(ws.dir.path().join("stderr")).unwrap());
    for (k, _) in std::env::vars() {
        if k.starts_with("JEEVES_") || k.starts_with("MCP_PRUNER") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd
}

/// `mcp-pruner run ARGS -- fake_agent.sh OUT CODE MODE`.
fn command(ws: &Workspace, args: &[&str], env: &[(&str, &str)], code: i32, mode: &str) -> Command {
    let agent = [
        fake_agent().into_os_string(),
        ws.out().into_os_string(),
        code.to_string().into(),
        mode.into(),
    ];
    runner_command(ws, args, env, &agent)
}

fn start(
    ws: &Workspace,
    args: &[&str],
    env: &[(&str, &str)],
    code: i32,
    mode: &str,
) -> std::process::Child {
    command(ws, args, env, code, mode).spawn().unwrap()
}

fn finish(ws: &Workspace, mut child: std::process::Child) -> Finished {
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "runner still running after 30 s; stdout:\n{}",
                std::fs::read_to_string(ws.dir.path().join("stdout")).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let finished = Finished {
        status,
        stdout: std::fs::read_to_string(ws.dir.path().join("stdout")).unwrap(),
        stderr: std::fs::read_to_string(ws.dir.path().join("stderr")).unwrap(),
    };
    assert_nothing_left(ws, &finished);
    finished
}

fn run(ws: &Workspace, args: &[&str], env: &[(&str, &str)], code: i32, mode: &str) -> Finished {
    let child = start(ws, args, env, code, mode);
    finish(ws, child)
}

/// Whether `pid` is a live (not zombie) process whose command line contains `needle` (so that a
/// recycled pid does not count).
fn alive(pid: i32, needle: &str) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    mcp_pruner::process::pid_alive(pid)
        && String::from_utf8_lossy(&cmdline)
            .replace('\0', " ")
            .contains(needle)
}

/// No process of this run is left: none mentions the workspace (server `--root`, agent `OUT`),
/// the agent's grandchild is gone, and so are the server and its tool's background command.
fn assert_nothing_left(ws: &Workspace, run: &Finished) {
    let marker = ws.dir.path().to_string_lossy().into_owned();
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>()
            && alive(pid, &marker)
        {
            left.push(pid);
        }
    }
    assert!(
        left.is_empty(),
        "processes left behind: {left:?}\n{}",
        run.stderr
    );
    if ws.out().join("grandchild.pid").exists() {
        let pid = ws.pid("grandchild.pid");
        assert!(
            !alive(pid, "sleep"),
            "the agent's grandchild {pid} survived"
        );
    }
    if let Some(pid) = run.events().iter().find_map(|v| {
        v["data"]["url"]
            .is_string()
            .then(|| v["data"]["pid"].as_i64())?
    }) {
        assert!(!alive(pid as i32, "serve"), "the server {pid} survived");
    }
}

/// The parent pid in `/proc/<pid>/stat`.
fn ppid_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Waits (polling `/proc` every `every`, up to 10 s) for a child of `ppid` that `is_it` accepts.
fn child_of(ppid: i32, every: Duration, what: &str, is_it: impl Fn(i32) -> bool) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
            (ppid_of(pid) == Some(ppid) && is_it(pid)).then_some(pid)
        });
        if let Some(pid) = found {
            return pid;
        }
        assert!(Instant::now() < deadline, "{what} never started");
        std::thread::sleep(every);
    }
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

fn assert_disabled_env(ws: &Workspace) {
    let seen = ws.env_seen();
    for var in [
        "MCP_PRUNER_URL",
        "MCP_PRUNER_CLAUDE_CONFIG",
        "MCP_PRUNER_CODEX_ARGS",
        "MCP_PRUNER_PID",
    ] {
        assert!(
            seen.contains(&format!("{var}=<unset>")),
            "{var} set: {seen}"
        );
    }
}

#[test]
fn running_server_serves_the_agent_and_its_status_is_the_runs() {
    let ws = Workspace::new();
    let r = run(&ws, &["--root", &ws.root()], &[], 7, "call");
    assert_eq!(r.code(), Some(7), "stderr: {}", r.stderr);
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.stopped",
        ]
    );
    let ready = r.event("mcp_pruner.ready");
    let port = ready["data"]["port"].as_u64().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    assert_eq!(ready["data"]["host"], "127.0.0.1");
    assert_eq!(ready["data"]["url"], url.as_str());
    let root = std::fs::canonicalize(ws.root()).unwrap();
    assert_eq!(ready["data"]["root"], root.to_str().unwrap());
    assert_eq!(r.event("mcp_pruner.stopped")["data"]["graceful"], true);
    assert_eq!(r.event("mcp_pruner.agent_exited")["data"]["exit_code"], 7);
    // The runner's stdout is the agent's alone: `claude -p ... > out.txt` gets no log line.
    assert!(
        r.stdout.lines().all(|l| !l.contains("\"event\"")),
        "log lines on stdout: {}",
        r.stdout
    );
    // The server's own ready line, relayed, names its MCP endpoint too.
    assert!(
        r.events().iter().any(|v| v["event"] == "mcp_pruner.ready"
            && v["data"]["pid"].is_null()
            && v["data"]["url"] == url.as_str()),
        "{}",
        r.stderr
    );

    // What the agent was told, and what it got from the tools.
    let seen = ws.env_seen();
    assert!(seen.contains(&format!("MCP_PRUNER_URL={url}\n")), "{seen}");
    assert!(
        seen.contains(&format!(
            "MCP_PRUNER_CODEX_ARGS=-c mcp_servers.pruner.url=\"{url}\"\n"
        )),
        "{seen}"
    );
    let claude: Value = serde_json::from_str(&ws.read("claude.json")).unwrap();
    assert_eq!(
        claude,
        serde_json::json!({"mcpServers": {"pruner": {"type": "http", "url": url}}})
    );
    let config_path = seen
        .lines()
        .find_map(|l| l.strip_prefix("MCP_PRUNER_CLAUDE_CONFIG="))
        .unwrap();
    assert!(
        !Path::new(config_path).exists(),
        "the temporary Claude config {config_path} was not removed"
    );
    let read: Value = ws.json("read.json", &r);
    assert_eq!(read["result"]["isError"], Value::Null, "{read}");
    assert_eq!(
        read["result"]["content"][0]["text"],
        "hello from the root\n"
    );
    let bash: Value = ws.json("bash.json", &r);
    let tool_child: i32 = bash["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !alive(tool_child, "sleep"),
        "the bash tool's background command {tool_child} survived"
    );
    // The bash tool ended its own leftover in the call, so nothing escaped to the runner's sweep.
    assert!(
        r.events()
            .iter()
            .any(|v| v["event"] == "tool.leftovers_killed"),
        "the server logged the leftover kill"
    );
    // The server's own log lines are relayed, not lost.
    let relayed: Vec<String> = r
        .events()
        .iter()
        .map(|v| v["event"].as_str().unwrap().to_string())
        .collect();
    assert!(
        relayed.contains(&"tool.respond_ok".to_string()),
        "{relayed:?}"
    );
}

#[test]
fn switched_off_runs_the_agent_alone() {
    let ws = Workspace::new();
    let r = run(
        &ws,
        &["--root", &ws.root()],
        &[
            ("JEEVES_MCP_PRUNER_ENABLED", "false"),
            // A stale value from an enclosing run must not reach the agent.
            ("MCP_PRUNER_URL", "http://127.0.0.1:9/mcp"),
        ],
        3,
        "call",
    );
    assert_eq!(r.code(), Some(3));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.disabled",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.not_running",
        ]
    );
    assert_eq!(
        r.event("mcp_pruner.disabled")["data"]["reason"],
        "config_disabled"
    );
    assert_disabled_env(&ws);
    assert!(r.messages().is_empty(), "{}", r.stderr);
}

#[test]
fn invalid_configuration_is_reported_once_and_the_agent_still_runs() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("missing").to_string_lossy().into_owned();
    let r = run(&ws, &["--root", &missing], &[], 4, "call");
    assert_eq!(r.code(), Some(4));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.config_invalid",
            "mcp_pruner.disabled",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.not_running",
        ]
    );
    let invalid = r.event("mcp_pruner.config_invalid");
    assert_eq!(
        (&invalid["data"]["code"], &invalid["data"]["field"]),
        (&Value::from("invalid_root_dir"), &Value::from("--root"))
    );
    assert_eq!(
        r.event("mcp_pruner.disabled")["data"]["reason"],
        "config_invalid"
    );
    let lines = r.messages();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0]
            .starts_with("mcp-pruner: invalid_root_dir: --root: expected an existing directory")
    );
    assert_disabled_env(&ws);

    // An unreadable switch counts as off; an invalid runner timeout is reported the same way.
    let ws = Workspace::new();
    let r = run(
        &ws,
        &["--root", &ws.root()],
        &[
            ("JEEVES_MCP_PRUNER_ENABLED", "maybe"),
            ("MCP_PRUNER_STARTUP_TIMEOUT_MS", "soon"),
        ],
        0,
        "call",
    );
    assert_eq!(r.code(), Some(0));
    let codes: Vec<Value> = r
        .events()
        .iter()
        .filter(|v| v["event"] == "mcp_pruner.config_invalid")
        .map(|v| v["data"]["code"].clone())
        .collect();
    assert_eq!(codes, ["invalid_timeout_ms", "invalid_enabled"]);
    assert_eq!(
        r.event("mcp_pruner.disabled")["data"]["reason"],
        "config_invalid"
    );
    assert_eq!(r.messages().len(), 2, "{}", r.stderr);
    assert_disabled_env(&ws);
}

#[test]
fn server_that_cannot_bind_disables_it_and_the_agent_still_runs() {
    let ws = Workspace::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let r = run(
        &ws,
        &["--root", &ws.root(), "--port", &port],
        &[],
        5,
        "call",
    );
    assert_eq!(r.code(), Some(5));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.start_failed", // the server's own, relayed
            "mcp_pruner.start_failed", // the runner's
            "mcp_pruner.disabled",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.not_running",
        ]
    );
    let messages: Vec<String> = r
        .events()
        .iter()
        .filter(|v| v["event"] == "mcp_pruner.start_failed")
        .map(|v| v["data"]["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        messages[0].starts_with("cannot listen on 127.0.0.1:"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("exited (exit status 1) before answering /healthz"),
        "{messages:?}"
    );
    assert_eq!(
        r.event("mcp_pruner.disabled")["data"]["reason"],
        "start_failed"
    );
    assert!(r.stderr.contains("cannot listen on"), "{}", r.stderr);
    assert_disabled_env(&ws);
}

#[test]
fn startup_timeout_kills_the_server_and_the_agent_still_runs() {
    let ws = Workspace::new();
    let r = run(
        &ws,
        &["--root", &ws.root(), "--startup-timeout-ms", "1"],
        &[],
        6,
        "call",
    );
    assert_eq!(r.code(), Some(6));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.start_timeout",
            "mcp_pruner.start_failed",
            "mcp_pruner.disabled",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.not_running",
        ]
    );
    assert_eq!(r.event("mcp_pruner.start_timeout")["data"]["timeout_ms"], 1);
    assert_eq!(
        r.event("mcp_pruner.disabled")["data"]["reason"],
        "start_failed"
    );
    assert_disabled_env(&ws);
}

#[test]
fn server_killed_mid_run_degrades_without_stopping_the_agent() {
    let ws = Workspace::new();
    let r = run(&ws, &["--root", &ws.root()], &[], 9, "kill-server");
    assert_eq!(r.code(), Some(9));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.exited",
            "mcp_pruner.degraded",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.shutdown_after_degraded",
        ]
    );
    assert_eq!(r.event("mcp_pruner.exited")["data"]["signal"], "SIGKILL");
    let degraded = r.event("mcp_pruner.degraded");
    assert_eq!(
        (&degraded["data"]["reason"], &degraded["data"]["signal"]),
        (&Value::from("exited"), &Value::from("SIGKILL"))
    );
    // The agent was told the server pid it then killed.
    let pid = r.event("mcp_pruner.ready")["data"]["pid"].as_i64().unwrap();
    assert!(ws.env_seen().contains(&format!("MCP_PRUNER_PID={pid}\n")));
    // The dead server is no longer advertised: a claude started now would get no server.
    let after: Value = serde_json::from_str(&ws.read("claude_after.json")).unwrap();
    assert_eq!(after, serde_json::json!({"mcpServers": {}}));
}

#[test]
fn unreachable_server_degrades_and_is_stopped_at_the_end() {
    let ws = Workspace::new();
    let r = run(&ws, &["--root", &ws.root()], &[], 0, "stop-server");
    assert_eq!(r.code(), Some(0));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.unreachable",
            "mcp_pruner.degraded",
            "mcp_pruner.agent_exited",
            "mcp_pruner.agent_leftovers_killed",
            "mcp_pruner.shutdown_after_degraded",
        ]
    );
    assert_eq!(r.event("mcp_pruner.unreachable")["data"]["failures"], 3);
    assert_eq!(
        r.event("mcp_pruner.degraded")["data"]["reason"],
        "unreachable"
    );
}

#[test]
fn a_server_still_busy_at_shutdown_is_killed_and_nothing_escapes() {
    let ws = Workspace::new();
    // The server is still serving a call whose command ignores SIGTERM (its kill grace is 5 s),
    // for a client the agent moved to a session of its own: SIGTERM does not stop the server
    // within the runner's 300 ms, so it gets SIGKILL. The command's tree and the client are then
    // re-parented to the runner. Two things race to end them, and either may win: the runner's
    // sweep (`orphans_reaped`), and on the other side the command's shepherd, which learns the
    // server died and kills the tree itself, while the client exits once its connection drops.
    // So the test holds the outcome (nothing survives), not which of them got there first.
    let r = run(
        &ws,
        &[
            "--root",
            &ws.root(),
            "--shutdown-timeout-ms",
            "300",
            "--kill-grace-ms",
            "5000",
        ],
        &[],
        0,
        "busy-server",
    );
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let names = r.lifecycle();
    for name in [
        "mcp_pruner.agent_exited",
        "mcp_pruner.kill_escalated",
        "mcp_pruner.stopped",
    ] {
        assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
    }
    assert_eq!(
        r.event("mcp_pruner.kill_escalated")["data"]["waited_ms"],
        300
    );
    assert_eq!(r.event("mcp_pruner.stopped")["data"]["graceful"], false);
    let (busy, client) = (ws.pid("busy.pid"), ws.pid("client.pid"));
    assert!(!alive(busy, "sleep"), "the tool's command {busy} survived");
    assert!(
        !alive(client, "curl"),
        "the agent's client {client} survived"
    );
    assert_nothing_left(&ws, &r);
}

#[test]
fn a_process_that_left_the_agents_session_is_swept_as_an_orphan() {
    let ws = Workspace::new();
    // The agent leaves a process in a session of its own, then exits: the agent-group cleanup
    // cannot reach it, and it was re-parented to the runner, whose sweep must kill it.
    let r = run(&ws, &["--root", &ws.root()], &[], 0, "escape");
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let escaped = ws.pid("escaped.pid");
    let reaped = r.event("mcp_pruner.orphans_reaped");
    assert!(
        reaped["data"]["pids"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p.as_i64() == Some(escaped.into()))),
        "{escaped} not in {reaped}"
    );
    assert!(
        !alive(escaped, "sleep"),
        "the escaped process {escaped} survived"
    );
    assert_nothing_left(&ws, &r);
}

#[test]
fn an_interrupt_before_the_server_is_ready_ends_the_run_with_128_plus_2() {
    // The server is caught (and stopped) as soon as it runs, so it cannot get ready; then the
    // runner is interrupted. A server that got ready first makes a retry (counted below).
    for _ in 0..5 {
        let ws = Workspace::new();
        let child = start(&ws, &["--root", &ws.root()], &[], 0, "wait");
        // Only once it runs `serve`: a child stopped between fork and exec would hold the
        // runner inside spawn(), which waits for the exec. Polled without pause: it is a race.
        let server = child_of(child.id() as i32, Duration::ZERO, "the server", |pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).nth(1) == Some(b"serve".as_slice()))
        });
        // SAFETY: kill(2) on a pid; no memory is involved.
        unsafe {
            libc::kill(server, libc::SIGSTOP);
        }
        signal(&child, libc::SIGINT);
        let r = finish(&ws, child);
        if r.lifecycle().iter().any(|n| n == "mcp_pruner.ready") {
            eprintln!("the server got ready before it was stopped; again");
            continue;
        }
        assert_eq!(r.code(), Some(128 + libc::SIGINT), "{}", r.stderr);
        assert_eq!(
            r.lifecycle(),
            [
                "mcp_pruner.start_failed",
                "mcp_pruner.disabled",
                "mcp_pruner.not_running",
            ]
        );
        assert_eq!(
            r.event("mcp_pruner.start_failed")["data"]["message"],
            "interrupted by SIGINT before the server was ready"
        );
        assert!(!ws.out().join("env.txt").exists(), "the agent was started");
        assert!(
            !alive(server, "serve"),
            "the stopped server {server} survived"
        );
        return;
    }
    panic!("the server got ready before it could be stopped, five times");
}

#[test]
fn sigterm_is_forwarded_and_the_agents_status_is_returned() {
    let ws = Workspace::new();
    let child = start(&ws, &["--root", &ws.root()], &[], 42, "trap-term");
    wait_for_file(&ws.out().join("ready"));
    signal(&child, libc::SIGTERM);
    let r = finish(&ws, child);
    assert_eq!(r.code(), Some(42), "{}", r.stderr);
    assert_eq!(ws.read("trapped"), "TERM\n");
    assert_eq!(
        r.lifecycle_after_signal(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.signal_forwarded",
            "mcp_pruner.agent_exited",
            "mcp_pruner.stopped",
        ]
    );
    assert_eq!(
        r.event("mcp_pruner.signal_forwarded")["data"]["signal"],
        "SIGTERM"
    );
    assert_eq!(r.event("mcp_pruner.stopped")["data"]["graceful"], true);
}

#[test]
fn sigint_death_of_the_agent_is_128_plus_2() {
    let ws = Workspace::new();
    let child = start(&ws, &["--root", &ws.root()], &[], 0, "wait");
    wait_for_file(&ws.out().join("agent.pid"));
    // Signal only once `sleep` runs: a SIGINT that lands while bash forks it is absorbed by bash.
    let agent = ws.pid("agent.pid");
    child_of(agent, Duration::from_millis(20), "sleep 30", |pid| {
        alive(pid, "sleep 30")
    });
    signal(&child, libc::SIGINT);
    let r = finish(&ws, child);
    assert_eq!(r.code(), Some(130), "{}", r.stderr);
    assert_eq!(
        r.event("mcp_pruner.signal_forwarded")["data"]["signal"],
        "SIGINT"
    );
    assert_eq!(
        r.event("mcp_pruner.agent_exited")["data"]["signal"],
        "SIGINT"
    );
    assert!(r.lifecycle().contains(&"mcp_pruner.stopped".to_string()));
}

#[test]
fn a_forwarded_sigint_is_never_escalated_while_the_agent_handles_it() {
    let ws = Workspace::new();
    // The agent takes 1.5 s to wind down after SIGINT, five times the 300 ms grace.
    let child = start(
        &ws,
        &["--root", &ws.root(), "--shutdown-timeout-ms", "300"],
        &[],
        7,
        "trap-int",
    );
    wait_for_file(&ws.out().join("ready"));
    signal(&child, libc::SIGINT);
    let r = finish(&ws, child);
    assert_eq!(r.code(), Some(7), "{}", r.stderr);
    assert_eq!(ws.read("trapped"), "INT\n");
    assert_eq!(
        r.lifecycle_after_signal(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.signal_forwarded",
            "mcp_pruner.agent_exited",
            "mcp_pruner.stopped",
        ]
    );
    assert_eq!(
        r.event("mcp_pruner.signal_forwarded")["data"]["signal"],
        "SIGINT"
    );
}

#[test]
fn agent_ignoring_the_signal_is_killed_after_the_shutdown_timeout() {
    let ws = Workspace::new();
    let child = start(
        &ws,
        &["--root", &ws.root(), "--shutdown-timeout-ms", "300"],
        &[],
        0,
        "ignore",
    );
    wait_for_file(&ws.out().join("ready"));
    signal(&child, libc::SIGTERM);
    let r = finish(&ws, child);
    assert_eq!(r.code(), Some(128 + libc::SIGKILL), "{}", r.stderr);
    assert_eq!(
        r.lifecycle_after_signal(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.signal_forwarded",
            "mcp_pruner.agent_kill_escalated",
            "mcp_pruner.agent_exited",
            "mcp_pruner.stopped",
        ]
    );
    assert_eq!(
        r.event("mcp_pruner.agent_kill_escalated")["data"]["waited_ms"],
        300
    );
}

#[test]
fn text_logs_and_log_file_keep_stdout_for_the_agent() {
    let ws = Workspace::new();
    let log = ws.dir.path().join("run.log");
    let r = run(
        &ws,
        &[
            "--root",
            &ws.root(),
            "--log-format",
            "text",
            "--log-file",
            log.to_str().unwrap(),
        ],
        &[],
        0,
        "call",
    );
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert!(
        r.stdout.is_empty(),
        "stdout belongs to the agent: {}",
        r.stdout
    );
    let log = std::fs::read_to_string(log).unwrap();
    // The port came from the server's text ready line, and the agent reached it.
    assert!(log.contains(" mcp_pruner.ready "), "{log}");
    assert!(log.contains(" mcp_pruner.stopped graceful=true"), "{log}");
    assert!(
        log.contains(" tool.respond_ok "),
        "relayed server lines: {log}"
    );
    let read: Value = ws.json("read.json", &r);
    assert_eq!(
        read["result"]["content"][0]["text"],
        "hello from the root\n"
    );
}

#[test]
fn agent_that_cannot_start_exits_127_and_the_server_is_stopped() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("no-such-agent").into_os_string();
    let cmd = runner_command(&ws, &["--root", &ws.root()], &[], &[missing]).spawn();
    let r = finish(&ws, cmd.unwrap());
    assert_eq!(r.code(), Some(127));
    assert_eq!(
        r.lifecycle(),
        [
            "mcp_pruner.ready",
            "mcp_pruner.agent_spawn_error",
            "mcp_pruner.stopped",
        ]
    );
    assert!(r.stderr.contains("no-such-agent"), "{}", r.stderr);
}

/// Opens a new pseudo-terminal: the master, and the path of its slave.
fn open_pty() -> (std::fs::File, String) {
    use std::os::fd::FromRawFd;
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor we own; the name buffer
    // outlives the call and ptsname_r NUL-terminates it.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (std::fs::File::from_raw_fd(master), slave)
    }
}

#[test]
fn interactive_agent_gets_the_terminal_foreground() {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let ws = Workspace::new();
    let (mut master, slave_path) = open_pty();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .unwrap();
    let mut cmd = command(&ws, &["--root", &ws.root()], &[], 0, "tty");
    cmd.stdin(slave);
    // The runner leads a new session whose controlling terminal is the pty, as under a shell.
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    wait_for_file(&ws.out().join("ready"));
    master.write_all(b"typed-line\n").unwrap();
    let r = finish(&ws, child);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    // Without the hand-over the read would stop the agent (SIGTTIN) and time out.
    assert_eq!(ws.read("tty_read"), "read=0 line=typed-line\n");
    // stat after the command name: state ppid pgrp session tty_nr tpgid
    let stat = ws.read("stat");
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let (pgrp, tpgid) = (fields[2], fields[5]);
    assert_eq!(
        pgrp, tpgid,
        "the agent's group is the terminal's foreground: {stat}"
    );
    assert!(r.lifecycle().contains(&"mcp_pruner.stopped".to_string()));
}

fn config(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin())
        .env("MCP_PRUNER_NO_LEDGER", "1")
        .arg("config")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn config_prints_client_snippets() {
    let (code, stdout, stderr) = config(&["claude", "--url", "http://127.0.0.1:8765/mcp"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"mcpServers": {"pruner": {"type": "http", "url": "http://127.0.0.1:8765/mcp"}}})
    );
    assert!(
        stderr.starts_with('#')
            && stderr.contains("claude mcp add --transport http pruner http://127.0.0.1:8765/mcp"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let exe = std::fs::canonicalize(bin()).unwrap();
    let (code, stdout, _) = config(&["claude", "--root", root.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"mcpServers": {"pruner": {"command": exe, "args": ["stdio", "--root", root]}}})
    );

    let (code, stdout, stderr) = config(&["codex", "--stdio", "--root", root.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        format!(
            "[mcp_servers.pruner]\ncommand = {:?}\nargs = [\"stdio\", \"--root\", {:?}]\n",
            exe.to_str().unwrap(),
            root.to_str().unwrap()
        )
    );
    assert!(stderr.contains("codex mcp add pruner -- "), "{stderr}");

    let (code, _, stderr) = config(&["codex", "--url", "not a url"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("mcp-pruner: invalid_url: --url: expected"),
        "{stderr}"
    );
}
