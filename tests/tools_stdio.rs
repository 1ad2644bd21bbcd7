//! Happy paths over stdio: the handshake, every tool, progress, cancellation, and EOF exit,
//! asserted on the bytes that come back from the real binary.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn handshake_and_listing() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    let init = c.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["jeeves"]["schemaVersion"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-pruner");
    let old = c.request("initialize", json!({"protocolVersion":"2025-06-18"}));
    assert_eq!(old["result"]["protocolVersion"], "2025-06-18");
    let future = c.request("initialize", json!({"protocolVersion":"2099-01-01"}));
    assert_eq!(
        future["result"]["protocolVersion"], "2025-11-25",
        "unknown versions get our latest"
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    let tools = c.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "read",
            "bash",
            "grep",
            "prune_text",
            "recover_text",
            "health"
        ]
    );
    for t in tools["result"]["tools"].as_array().unwrap() {
        // Each tool's version as the manifest has it (health is 3 since the ledger; the rest 2).
        let name = t["name"].as_str().unwrap();
        let want = mcp_pruner::contract::contract()
            .tool(name)
            .unwrap()
            .schema_version;
        assert_eq!(t["schemaVersion"], want, "{name}");
        assert!(want >= 2);
        assert_eq!(t["toolingVersion"], env!("CARGO_PKG_VERSION"));
        assert_eq!(t["inputSchema"]["type"], "object");
        assert!(
            t.get("outputSchema").is_none(),
            "output schemas are opt-in (--output-schemas)"
        );
    }
    assert!(c.close().success(), "clean exit on stdin EOF");
}

#[test]
fn read_bash_grep_recover_health() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();

    let r = c.call("read", json!({"path":"hello.txt"}))["result"].clone();
    assert_valid_result("read", &r);
    assert_eq!(r["content"][0]["text"], "hello\nworld\n");
    assert_eq!(
        (
            structured(&r)["bytes"].clone(),
            structured(&r)["total_lines"].clone()
        ),
        (json!(12), json!(2))
    );
    assert_eq!(
        structured(&r)["pruning"],
        json!({"attempted":false,"applied":false,"fallback":false,"reason":"no_focus_question","raw_bytes":12,
               "tokens_after": mcp_pruner::tokens::count("hello\nworld\n")}),
        "the o200k tokens of what the model reads, on every result"
    );

    let r = c.call("read", json!({"path":"src/lib.rs","offset":5,"limit":2}))["result"].clone();
    assert_valid_result("read", &r);
    assert_eq!(r["content"][0]["text"], "pub fn beta() -> u32 {\n    2\n");
    assert_eq!(
        (
            structured(&r)["start_line"].clone(),
            structured(&r)["end_line"].clone()
        ),
        (json!(5), json!(6))
    );

    let r = c.call("read", json!({"path":"inside-link"}))["result"].clone();
    assert_eq!(
        text(&r),
        "hello\nworld\n",
        "symlinks inside the root are fine"
    );

    let r = c.call("read", json!({"path":"bad-utf8.txt"}))["result"].clone();
    assert_valid_result("read", &r);
    assert_eq!(text(&r), "ok \u{FFFD}\u{FFFD} end\n");
    assert_eq!(structured(&r)["replaced_invalid_utf8"], true);
    assert!(
        structured(&r)["summary"]
            .as_str()
            .unwrap()
            .contains("invalid UTF-8 replaced")
    );

    // A short output asked about is returned whole; the header read with it counts on both
    // sides, so pruning that saved nothing never reports more tokens after than before.
    let r = c.call(
        "bash",
        json!({"cmd":"echo ok","context_focus_question":"did the build pass?"}),
    )["result"]
        .clone();
    let p = &structured(&r)["pruning"];
    assert_eq!(p["applied"], false, "{r}");
    assert_eq!(p["tokens_before"], p["tokens_after"], "{r}");
    assert_eq!(
        p["tokens_after"],
        mcp_pruner::tokens::count(text(&r)),
        "{r}"
    );

    let r = c.call(
        "bash",
        json!({"cmd":"echo out; echo err >&2; echo $FOO; pwd","cwd":"src","env":{"FOO":"bar"}}),
    )["result"]
        .clone();
    assert_valid_result("bash", &r);
    let s = &structured(&r);
    let real_root = root_path(&root);
    let t = text(&r);
    assert!(
        t.ends_with(&format!(
            "\nout\nbar\n{}\n[stderr]\nerr\n",
            real_root.join("src").display()
        )),
        "{t}"
    );
    assert_eq!(
        (s["exit_code"].clone(), s["cwd"].clone()),
        (json!(0), json!("src"))
    );
    assert!(r.get("isError").is_none());

    let r = c.call("bash", json!({"cmd":"echo partial; exit 4"}))["result"].clone();
    assert_valid_result("bash", &r);
    assert_eq!(r["isError"], true);
    let s = &structured(&r);
    assert_eq!(
        (
            s["error"]["code"].clone(),
            s["error"]["reason"].clone(),
            s["error"]["exit_code"].clone(),
        ),
        (json!("COMMAND_FAILED"), json!("nonzero_exit"), json!(4))
    );
    assert!(
        text(&r).ends_with("\npartial\n"),
        "the output of a failed command is still returned"
    );
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("partial"),
        "a failing command still returns its output"
    );

    let r = c.call(
        "grep",
        json!({"pattern":"ALPHA","paths":["src"],"case_sensitive":false}),
    )["result"]
        .clone();
    assert_valid_result("grep", &r);
    assert_eq!(
        text(&r),
        "src/lib.rs:1:8: pub fn alpha() -> u32 {\nsrc/nested/deep.md:3:1: alpha beta\n",
        "the matches, once, as rows the model reads"
    );
    assert_eq!(
        r["content"][0]["text"],
        "src/lib.rs:1:8: pub fn alpha() -> u32 {\nsrc/nested/deep.md:3:1: alpha beta\n"
    );
    let r = c.call(
        "grep",
        json!({"pattern":"fn (","paths":["src/lib.rs"],"fixed_string":true}),
    )["result"]
        .clone();
    assert_eq!(structured(&r)["match_count"], 0);
    let r = c.call(
        "grep",
        json!({"pattern":"u32","paths":["src"],"max_matches":1}),
    )["result"]
        .clone();
    assert_valid_result("grep", &r);
    assert_eq!(
        (
            structured(&r)["match_count"].clone(),
            structured(&r)["hasMore"].clone()
        ),
        (json!(2), json!(true))
    );
    let cursor = structured(&r)["nextCursor"].as_str().unwrap().to_string();
    let r2 = c.call(
        "grep",
        json!({"pattern":"u32","paths":["src"],"max_matches":1,"cursor":cursor}),
    )["result"]
        .clone();
    assert!(text(&r2).starts_with("src/lib.rs:5:"), "{r2}");
    assert_eq!(structured(&r2)["hasMore"], false);

    let h = c.call("health", json!({}))["result"].clone();
    assert_valid_result("health", &h);
    assert_eq!(structured(&h)["status"], "healthy");
    let text: Value = serde_json::from_str(h["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text,
        structured(&h),
        "seed 001: content[0].text is the JSON"
    );
    assert!(c.close().success());
}

#[test]
fn bash_timeout_kills_background_children() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "300"]);
    c.initialize();
    let t = Instant::now();
    let r = c.call(
        "bash",
        json!({"cmd":"(trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60","timeout_ms":2000}),
    )["result"]
        .clone();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_valid_result("bash", &r);
    let s = &structured(&r);
    assert_eq!(
        (
            s["error"]["code"].clone(),
            s["error"]["reason"].clone(),
            s["error"]["timeoutMs"].clone()
        ),
        (json!("TOOL_TIMEOUT"), json!("timeout"), json!(2000))
    );
    let pid: i32 = std::fs::read_to_string(root.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !mcp_pruner::process::pid_alive(pid),
        "background child {pid} survived the timeout"
    );
}

#[test]
fn bash_timeout_kills_descendants_that_left_the_group() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "300"]);
    c.initialize();
    // One child moves to its own process group (`set -m` job control), one to its own session
    // (`setsid`), and one is a double-forked daemon: its parent subshell has exited before the
    // timeout, so no parent links it to the command any more (the shepherd adopts it). All three
    // ignore SIGTERM. The command waits until all three have written their pids (a loaded machine
    // can take longer than a short timeout to start them), then the call times out while they run.
    let cmd = "set -m; (trap '' TERM; sleep 60) & echo $! > pgid-child.pid; set +m; \
               setsid bash -c 'echo $$ > sid-child.pid; trap \"\" TERM; sleep 60' & \
               (setsid bash -c 'echo $$ > orphan.pid; trap \"\" TERM; exec sleep 60' &); \
               while [ ! -s sid-child.pid ] || [ ! -s orphan.pid ]; do sleep 0.01; done; \
               sleep 60";
    let r = c.call("bash", json!({"cmd": cmd, "timeout_ms": 4000}))["result"].clone();
    assert_eq!(structured(&r)["error"]["reason"], json!("timeout"), "{r}");
    common::assert_processes_gone(
        root.path(),
        &["pgid-child.pid", "sid-child.pid", "orphan.pid"],
        Duration::from_secs(3),
        "the timeout",
    );
}

#[test]
fn a_command_dies_with_a_server_that_is_killed() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    // A command in the middle of its run, with a child in a session of its own that ignores
    // SIGTERM; then the server is SIGKILLed (no chance to clean up).
    let cmd = "echo $$ > cmd.pid; \
               setsid bash -c 'echo $$ > sid.pid; trap \"\" TERM; exec sleep 60' & \
               exec sleep 60";
    c.request_async(
        "tools/call",
        json!({"name": "bash", "arguments": {"cmd": cmd}}),
    );
    wait_for_file(&root.path().join("cmd.pid"));
    wait_for_file(&root.path().join("sid.pid"));
    c.child.kill().unwrap();
    c.child.wait().unwrap();
    common::assert_processes_gone(
        root.path(),
        &["cmd.pid", "sid.pid"],
        Duration::from_secs(3),
        "the server's death",
    );
}

#[test]
fn a_daemon_detached_by_a_command_that_succeeds_lives_on() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "300"]);
    c.initialize();
    // Detaching on purpose: a new session, then the command exits 0. What it left in its own
    // group is ended; the daemon is not.
    let cmd = "(setsid bash -c 'echo $$ > daemon.pid; exec sleep 30' &); \
               sleep 30 & echo $! > group-child.pid; \
               while [ ! -s daemon.pid ]; do sleep 0.01; done; echo started";
    let r = c.call("bash", json!({"cmd": cmd, "timeout_ms": 10_000}))["result"].clone();
    assert_eq!(structured(&r)["exit_code"], json!(0), "{r}");
    common::assert_processes_gone(
        root.path(),
        &["group-child.pid"],
        Duration::from_secs(3),
        "the command's success",
    );
    let daemon: i32 = std::fs::read_to_string(root.path().join("daemon.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let alive = mcp_pruner::process::pid_alive(daemon);
    // SAFETY: kill(2) on a pid; no memory is involved.
    unsafe {
        libc::kill(daemon, libc::SIGKILL);
    }
    assert!(alive, "the detached daemon {daemon} was killed");
}

#[test]
fn cancellation_and_progress_over_stdio() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "300"]);
    c.initialize();
    // Progress: a token gets notifications/progress with increasing progress and output lines.
    let id = c.request_async("tools/call", json!({"name":"bash","arguments":{"cmd":"for i in $(seq 1 12); do echo line $i; sleep 0.1; done"},"_meta":{"progressToken":"tok"}}));
    let r = c.wait_for(&id, Duration::from_secs(20));
    assert_eq!(structured(&r["result"])["exit_code"], 0);
    let progress: Vec<&Value> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        progress.len() >= 2 && progress.len() <= 8,
        "1.2 s of output at <= 4/s: {}",
        progress.len()
    );
    let values: Vec<u64> = progress
        .iter()
        .map(|n| n["params"]["progress"].as_u64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(
        progress
            .iter()
            .all(|n| n["params"]["progressToken"] == "tok"
                && n["params"]["message"].as_str().unwrap().contains("line"))
    );

    // Cancellation by string id of a numeric request id (seed 003 7.2), and no progress after.
    c.notifications.clear();
    let id = c.request_async("tools/call", json!({"name":"bash","arguments":{"cmd":"sleep 0.2 & echo $! > bg.pid; while true; do echo tick; sleep 0.05; done"},"_meta":{"progressToken":7}}));
    wait_for_file(&root.path().join("bg.pid"));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    c.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": id.to_string(),"reason":"user"}}));
    let r = c.wait_for(&id, Duration::from_secs(10));
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "cancel must be prompt"
    );
    assert_valid_result("bash", &r["result"]);
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(structured(&r["result"])["error"]["code"], "CANCELLED");
    let before_response = c.notifications.len();
    assert!(
        c.notifications
            .iter()
            .any(|n| n["method"] == "notifications/progress"),
        "progress arrived before the cancel"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    assert_eq!(
        c.notifications.len(),
        before_response,
        "no notification after the terminal response: {:?}",
        &c.notifications[before_response..]
    );
    // Seed 003 $/cancelRequest works too.
    let id = c.request_async(
        "tools/call",
        json!({"name":"bash","arguments":{"cmd":"echo $$ > third.pid; sleep 30"}}),
    );
    wait_for_file(&root.path().join("third.pid"));
    c.send(&json!({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id": id}}));
    let r = c.wait_for(&id, Duration::from_secs(10));
    assert_eq!(structured(&r["result"])["error"]["code"], "CANCELLED");
    assert!(c.close().success());
}

#[test]
fn stdin_eof_cancels_running_commands_and_exits() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &["--kill-grace-ms", "200"]);
    c.initialize();
    c.request_async(
        "tools/call",
        json!({"name":"bash","arguments":{"cmd":"echo $$ > leader.pid; sleep 60"}}),
    );
    wait_for_file(&root.path().join("leader.pid"));
    let t = Instant::now();
    assert!(c.close().success());
    assert!(t.elapsed() < Duration::from_secs(6));
    let pid = std::fs::read_to_string(root.path().join("leader.pid")).unwrap();
    assert!(
        !mcp_pruner::process::pid_alive(pid.trim().parse().unwrap()),
        "command survived EOF"
    );
}

#[test]
fn tool_subset_and_prefix() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(
        root.path(),
        &["--tools", "read,grep", "--tool-prefix", "pr_"],
    );
    c.initialize();
    let tools = c.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pr_read", "pr_grep"]);
    let r = c.call("pr_read", json!({"path":"hello.txt"}));
    assert_eq!(text(&r["result"]), "hello\nworld\n");
    let r = c.call("pr_bash", json!({"cmd":"true"}));
    assert_eq!(
        r["error"]["code"], -32602,
        "tools outside --tools are unknown: {r}"
    );
    assert!(
        r["error"]["data"]["field_errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("pr_read, pr_grep")
    );
    let mut full = StdioClient::spawn(root.path(), &["--output-schemas"]);
    full.initialize();
    let tools = full.request("tools/list", json!({}));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["outputSchema"]["type"] == "object")
    );
}

#[test]
fn log_notifications_follow_set_level() {
    let root = fixture_root();
    // An unreachable pruner: its fallback is reported as a warning notification.
    let mut c = StdioClient::spawn_env(
        root.path(),
        &[],
        &[
            ("JEEVES_PRUNER_ENDPOINT", "http://127.0.0.1:9/prune"),
            ("JEEVES_PRUNER_TIMEOUT_MS", "200"),
        ],
    );
    c.initialize();
    c.call(
        "read",
        json!({"path":"hello.txt","context_focus_question":"what?"}),
    );
    assert!(
        c.notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "nothing before logging/setLevel"
    );
    assert_eq!(
        c.request("logging/setLevel", json!({"level":"warning"}))["result"],
        json!({})
    );
    let r = c.call(
        "read",
        json!({"path":"hello.txt","context_focus_question":"what?"}),
    );
    assert_eq!(structured(&r["result"])["pruning"]["fallback"], true);
    let msg = c
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .expect("a warning notification");
    assert_eq!(msg["params"]["level"], "warning");
    assert_eq!(msg["params"]["data"]["event"], "pruner.call_failed");
    assert_eq!(
        c.request("logging/setLevel", json!({"level":"error"}))["result"],
        json!({})
    );
    let before = c.notifications.len();
    c.call(
        "read",
        json!({"path":"hello.txt","context_focus_question":"what?"}),
    );
    assert_eq!(
        c.notifications.len(),
        before,
        "warnings are below the error level"
    );
}

#[test]
fn a_silent_command_still_reports_progress() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let id = c.request_async(
        "tools/call",
        json!({"name":"bash","arguments":{"cmd":"sleep 1.6"},"_meta":{"progressToken":"quiet"}}),
    );
    let r = c.wait_for(&id, Duration::from_secs(20));
    assert_eq!(structured(&r["result"])["exit_code"], 0);
    let beats: Vec<&Value> = c
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        beats.iter().any(|n| n["params"]["progressToken"] == "quiet"
            && n["params"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("running for "))),
        "a heartbeat while the command was silent: {beats:?}"
    );
}

/// What the model reads (issue: results shaped for Claude Code and Codex): without output
/// schemas there is no `structuredContent`, so every client feeds the model `content[0].text`,
/// which carries the file once, plain; metadata travels in `_meta`. With `--output-schemas`,
/// `structuredContent` holds the model's view (bulk, no metadata) and validates.
#[test]
fn the_model_reads_the_bulk_once_and_metadata_travels_in_meta() {
    let root = fixture_root();
    // 9,500 bytes of text: a 10 KiB budget that counts what the model reads holds it whole.
    let file: String = (0..400)
        .map(|i| format!("line {i:04} \"quoted\" text\n"))
        .collect();
    assert!(file.len() > 9_000 && file.len() < 10_000, "{}", file.len());
    std::fs::write(root.path().join("nine.txt"), &file).unwrap();

    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let r = c.call("read", json!({"path":"nine.txt"}))["result"].clone();
    assert_valid_result("read", &r);
    assert!(
        r.get("structuredContent").is_none(),
        "no JSON copy for the model"
    );
    assert_eq!(
        text(&r),
        file,
        "the whole file fits the 10 KiB budget, once"
    );
    let meta = &r["_meta"][RESULT_META];
    assert_eq!(meta["truncated"], false);
    assert_eq!(meta["bytes"], file.len());
    assert!(meta.get("content").is_none());
    assert_eq!(
        meta["pruning"]["tokens_after"],
        mcp_pruner::tokens::count(&file),
        "tokens_after counts what the model reads"
    );
    let wire = serde_json::to_string(&r).unwrap().len();
    assert!(
        wire < serde_json::to_string(&file).unwrap().len() + 1024,
        "{wire}"
    );

    // A failing command: the error and its output, once, in the text.
    let r = c.call("bash", json!({"cmd":"echo out; echo err >&2; exit 3"}))["result"].clone();
    assert_valid_result("bash", &r);
    assert_eq!(r["isError"], true);
    let t = text(&r);
    assert_eq!(t.matches("out\n").count(), 1, "{t}");
    assert!(t.starts_with("error COMMAND_FAILED (nonzero_exit)"), "{t}");
    assert_eq!(r["_meta"][RESULT_META]["error"]["exit_code"], 3);
    assert!(r["_meta"][RESULT_META].get("stdout").is_none());

    // With output schemas: structuredContent is the model's view and validates.
    let mut c = StdioClient::spawn(root.path(), &["--output-schemas"]);
    c.initialize();
    let r = c.call("read", json!({"path":"hello.txt"}))["result"].clone();
    assert_valid_result("read", &r);
    let sc = &r["structuredContent"];
    assert_eq!(sc["content"], "hello\nworld\n");
    assert!(sc.get("pruning").is_none() && sc.get("duration_ms").is_none());
    assert_eq!(r["_meta"][RESULT_META]["total_lines"], 2);
    assert_eq!(
        r["_meta"][RESULT_META]["pruning"]["tokens_after"],
        mcp_pruner::tokens::count(&sc.to_string()),
        "with output schemas, Claude Code and Codex read the structuredContent JSON"
    );
}

/// Issue 13: the store never holds more than --store-max-bytes. An output larger than the cap is
/// not stored, the result says so, recovering its id explains why, and nothing is pruned away
/// that could not be taken back.
#[test]
fn an_output_larger_than_the_store_cap_is_not_stored_and_the_result_says_so() {
    let root = fixture_root();
    let big: String = (1..=5000)
        .map(|i| format!("row {i} of a large file\n"))
        .collect();
    std::fs::write(root.path().join("big.txt"), &big).unwrap();
    let mut c = StdioClient::spawn(root.path(), &["--store-max-bytes", "10000"]);
    c.initialize();
    // A small output is stored as before.
    let small = c.call(
        "bash",
        json!({"cmd": "seq 1 2000", "max_output_bytes": 1024}),
    );
    let small_id = structured(&small["result"])["artifactRef"]
        .as_str()
        .unwrap()
        .to_string();
    // A command's output over the cap: shown cut, and the text says it was not stored.
    let r = c.call(
        "bash",
        json!({"cmd": "seq 1 20000", "max_output_bytes": 2048}),
    );
    let t = text(&r["result"]).to_string();
    assert!(
        t.contains("is larger than the recovery store's cap (--store-max-bytes 10000)"),
        "{t}"
    );
    let id = structured(&r["result"])["artifactRef"]
        .as_str()
        .unwrap()
        .to_string();
    let back = c.request(
        "tools/call",
        json!({"name": "recover_text", "arguments": {"prune_id": id}}),
    );
    assert_eq!(back["error"]["code"], -32004, "{back}");
    assert!(
        back["error"]["data"]["hint"]
            .as_str()
            .unwrap()
            .contains("larger than the recovery store's byte cap"),
        "{back}"
    );
    // The earlier, smaller output was not evicted to make room for it.
    let again = c.call(
        "recover_text",
        json!({"prune_id": small_id, "ranges": [{"start_line": 1, "end_line": 1}], "include_line_numbers": false}),
    );
    assert!(
        again["result"]["isError"].as_bool() != Some(true),
        "{again}"
    );
    // A focused read of a file over the cap is not pruned: nothing it removed could come back.
    let r = c.call(
        "read",
        json!({"path": "big.txt", "context_focus_question": "which row mentions 4321?"}),
    );
    assert_eq!(structured(&r["result"])["pruning"]["reason"], "too_large");
    // prune_text over the cap: returned whole, with the warning.
    let r = c.call("prune_text", json!({"text": big, "goal_hint": "row 4321"}));
    let body: Value = serde_json::from_str(text(&r["result"])).unwrap();
    assert!(
        body["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("not_stored: "),
        "{body}"
    );
    let h = structured(&c.call("health", json!({}))["result"]);
    assert!(h["store"]["bytes"].as_u64().unwrap() <= 10_000, "{h}");
    assert!(c.close().success());
}
