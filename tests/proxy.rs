//! `mcp-pruner proxy` in front of servers nobody here wrote, driven over stdio as a client would:
//! `@modelcontextprotocol/server-everything`, `@modelcontextprotocol/server-filesystem` (npm) and
//! `interop/upstreams/issues_server.py` (the official Python SDK). `interop/upstreams/install.sh`
//! (run by `./test.sh`) installs them; without them each test prints why it skipped.

mod common;

use common::{StdioClient, content_texts, free_port, spawn_everything_http};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn upstreams() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/upstreams")
}

/// The command of an upstream, or `None` (with the reason printed) when it is not installed.
fn upstream(which: &str) -> Option<Vec<String>> {
    let dir = upstreams();
    let (exe, args): (PathBuf, Vec<String>) = match which {
        "everything" => (
            dir.join("node_modules/.bin/mcp-server-everything"),
            vec!["stdio".into()],
        ),
        "filesystem" => (
            dir.join("node_modules/.bin/mcp-server-filesystem"),
            vec![env!("CARGO_MANIFEST_DIR").to_string()],
        ),
        "issues" => (
            dir.join(".venv/bin/python"),
            vec![dir.join("issues_server.py").to_string_lossy().into_owned()],
        ),
        // Standard library only: any python3 runs it.
        "paged" => (
            PathBuf::from("python3"),
            vec![dir.join("paged_server.py").to_string_lossy().into_owned()],
        ),
        _ => unreachable!(),
    };
    let ready = if which == "paged" {
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    } else {
        exe.exists()
    } && (which != "issues"
        || dir
            .join(".venv/lib")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some()));
    if !ready {
        eprintln!(
            "skipped: {} is not installed (run `bash interop/upstreams/install.sh`, which ./test.sh runs)",
            exe.display()
        );
        return None;
    }
    let mut cmd = vec![exe.to_string_lossy().into_owned()];
    cmd.extend(args);
    Some(cmd)
}

/// The proxy in front of `cmd`, initialized.
fn proxy(cmd: &[String], extra: &[&str], env: &[(&str, &str)]) -> StdioClient {
    let mut args: Vec<String> = vec!["proxy".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    if !cmd.is_empty() {
        args.push("--".into());
        args.extend(cmd.iter().cloned());
    }
    let mut c = StdioClient::spawn_program(&common::bin(), &args, env);
    c.initialize();
    c
}

/// The upstream itself, initialized (to compare against).
fn direct(cmd: &[String]) -> StdioClient {
    let mut c = StdioClient::spawn_program(&cmd[0], &cmd[1..], &[]);
    c.initialize();
    c
}

fn call(c: &mut StdioClient, tool: &str, args: Value) -> Value {
    let r = c.call_within(tool, args, Duration::from_secs(60));
    assert!(r.get("error").is_none(), "{tool}: {r}");
    r["result"].clone()
}

/// Lines `a` to `b` (from 1) of the text stored under `id`, as `recover_text` by range returns
/// them, without their line numbers.
fn recover_range(p: &mut StdioClient, id: &str, a: usize, b: usize) -> String {
    let rec = p.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": a, "end_line": b}]}),
    );
    raw_lines(&rec["result"])
}

/// Lines `a` to `b` (from 1) of `text`, each ended by a newline.
fn lines_of(text: &str, a: usize, b: usize) -> String {
    text.lines()
        .skip(a - 1)
        .take(b - a + 1)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `recover_text`'s raw text without its `N│ ` line numbers.
fn raw_lines(result: &Value) -> String {
    let text = common::structured(result)["raw_text"]
        .as_str()
        .unwrap()
        .to_string();
    text.lines()
        .map(|l| l.split_once("│ ").map_or(l, |(_, rest)| rest))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn tokens(text: &str) -> usize {
    mcp_pruner::tokens::count(text)
}

/// The prune_id a result's text names.
fn prune_id(text: &str) -> String {
    let at = text.find("prune_id=").expect("a prune_id in the text") + 9;
    text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn proxy_lists_upstream_tools_with_the_two_arguments() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut up = direct(&cmd);
    let theirs = up.request("tools/list", json!({}))["result"]["tools"].clone();
    let mut p = proxy(&cmd, &["--prefix", "ev_"], &[]);
    let ours = p.request("tools/list", json!({}))["result"]["tools"].clone();
    let ours = ours.as_array().unwrap();
    let theirs = theirs.as_array().unwrap();
    assert_eq!(
        ours.len(),
        theirs.len() + 1,
        "the upstream's tools and recover_text"
    );
    assert!(ours.iter().any(|t| t["name"] == "recover_text"));
    for t in theirs {
        let name = format!("ev_{}", t["name"].as_str().unwrap());
        let o = ours
            .iter()
            .find(|o| o["name"] == name.as_str())
            .expect(&name);
        assert_eq!(o["description"], t["description"]);
        assert_eq!(o["annotations"], t["annotations"]);
        let props = o["inputSchema"]["properties"].as_object().unwrap();
        assert_eq!(props["context_focus_question"]["type"], "string");
        assert_eq!(props["max_output_bytes"]["type"], "integer");
        for (k, v) in t["inputSchema"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
        {
            assert_eq!(
                &props[k], v,
                "{name}: the upstream's own property {k} untouched"
            );
        }
        assert_eq!(o["inputSchema"]["required"], t["inputSchema"]["required"]);
    }
    // Called by its prefixed name, forwarded by its own.
    let r = call(&mut p, "ev_echo", json!({"message": "hello"}));
    assert_eq!(content_texts(&r), "Echo: hello");
}

#[test]
fn proxy_is_transparent_without_a_question() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut up = direct(&cmd);
    let mut p = proxy(&cmd, &[], &[]);
    for (tool, args) in [
        ("echo", json!({"message": "byte for byte ✓ \"quoted\""})),
        ("get-sum", json!({"a": 2, "b": 40})),
        ("get-structured-content", json!({"location": "New York"})),
        ("get-resource-links", json!({"count": 3})),
    ] {
        let a = call(&mut up, tool, args.clone());
        let b = call(&mut p, tool, args);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "{tool}: the proxied result is the upstream's, byte for byte"
        );
    }
}

#[test]
fn proxy_passes_images_through() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut up = direct(&cmd);
    let mut p = proxy(&cmd, &[], &[]);
    let a = call(&mut up, "get-tiny-image", json!({}));
    // With a question and a small budget the texts are pruned or cut, never the image.
    let b = call(
        &mut p,
        "get-tiny-image",
        json!({"context_focus_question": "what does the image show?"}),
    );
    let images = |r: &Value| -> Vec<Value> {
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "image")
            .cloned()
            .collect()
    };
    assert!(!images(&a).is_empty());
    assert_eq!(images(&a), images(&b), "image content untouched");
}

#[test]
fn proxy_prunes_json_with_a_question_keeping_whole_records_and_recovers() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut up = direct(&cmd);
    let raw = content_texts(&call(&mut up, "list_issues", json!({})));
    let mut p = proxy(&cmd, &[], &[]);
    let q = "which issue is about a memory leak in the websocket reconnect loop?";
    let r = call(&mut p, "list_issues", json!({"context_focus_question": q}));
    let shown = content_texts(&r);
    assert!(shown.contains("memory leak in reconnect loop"), "{shown}");
    eprintln!(
        "issues/list_issues: raw {} o200k tokens ({} bytes), proxied with the question {} tokens ({} bytes)",
        tokens(&raw),
        raw.len(),
        tokens(&shown),
        shown.len()
    );
    assert!(tokens(&shown) * 3 < tokens(&raw));
    // Whole records: every line that is not a marker or note is a complete JSON record.
    for line in shown.lines() {
        let l = line.trim_end_matches(',');
        if l.starts_with('{') {
            serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("half a record {l:?}: {e}"));
        }
    }
    let meta = &r["_meta"]["mcp-pruner/result"]["pruning"];
    assert_eq!(meta["applied"], true, "{meta}");
    // Recovery by range: line 2 is the first record, whole.
    let id = prune_id(&shown);
    let got = recover_range(&mut p, &id, 2, 3);
    let first: Value =
        serde_json::from_str(got.lines().next().unwrap().trim_end_matches(',')).unwrap();
    let raw_first = &serde_json::from_str::<Value>(&raw).unwrap()[0];
    assert_eq!(&first, raw_first, "line 2 is the first record, whole");
    // Recovery by question: what the first answer did not show.
    let rec = p.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "which issues are assigned to dev16?"}),
    );
    let got = common::answer_lines(&rec["result"]);
    assert!(got.contains("\"assignee\":\"dev16\""), "{got}");
}

/// Structured output as the Python SDK writes it (`structuredContent` the object, the text its
/// JSON): Claude Code and Codex give the model `structuredContent` when a result has one, so a
/// shaped result drops that copy and the model reads the pruned text; the tool is listed with no
/// output schema, which would require it. With no question and room to spare, the result is the
/// upstream's, copy and all.
#[test]
fn proxy_drops_structured_output_that_repeats_the_pruned_text() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut up = direct(&cmd);
    let direct_result = call(&mut up, "issue_report", json!({}));
    let sc = &direct_result["structuredContent"];
    assert!(sc.is_object(), "{direct_result}");
    // What those clients read from the upstream directly.
    let read_direct = sc.to_string();
    let mut p = proxy(&cmd, &[], &[]);
    let listed = p.request("tools/list", json!({}));
    let tool = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "issue_report")
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    assert!(tool.get("outputSchema").is_none(), "{tool}");
    let q = "which issue is about a memory leak in the websocket reconnect loop?";
    let r = call(&mut p, "issue_report", json!({"context_focus_question": q}));
    assert!(r.get("structuredContent").is_none(), "{r}");
    let shown = content_texts(&r);
    assert!(shown.contains("memory leak in reconnect loop"), "{shown}");
    eprintln!(
        "issues/issue_report: read directly {} o200k tokens, proxied with the question {} tokens",
        tokens(&read_direct),
        tokens(&shown)
    );
    assert!(tokens(&shown) * 3 < tokens(&read_direct));
    // Within a budget that holds it all, and no question: untouched.
    let r = call(
        &mut p,
        "issue_report",
        json!({"max_output_bytes": 1_000_000}),
    );
    assert_eq!(&r["structuredContent"], sc);
    // A list, which the SDK wraps as `{"result": [...]}`, one text per item: dropped too.
    let r = call(&mut p, "issue_items", json!({"context_focus_question": q}));
    assert!(r.get("structuredContent").is_none(), "{r}");
    assert!(content_texts(&r).contains("memory leak in reconnect loop"));
}

/// One long text beside many short ones, over the budget: the short ones keep their whole text
/// (in proportion to size they got a few bytes each, and were replaced by a cut's note longer
/// than themselves); the long one is cut to what is left, and the result fits the budget.
#[test]
fn proxy_keeps_short_texts_whole_beside_a_long_one_it_cuts() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let r = call(&mut p, "notes", json!({}));
    let texts: Vec<&str> = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 41, "{r}");
    for (i, t) in texts[1..].iter().enumerate() {
        assert_eq!(*t, format!("note {}: ok", i + 1));
    }
    assert!(
        texts[0].contains("[truncated: showing lines 1-"),
        "{}",
        texts[0]
    );
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    assert!(bytes <= 10 * 1024, "{bytes} bytes of text");
}

/// A list of 1,000 items of 200 bytes, one text each (the SDKs' list result): too many to cut
/// one by one (each got a 10-byte share and became a 130-byte note, no content, 1,000 ids), so
/// they are pruned and cut as one text, carried by the first content, under one `prune_id`.
#[test]
fn many_texts_are_cut_as_one() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let r = call(&mut p, "changed_files", json!({}));
    let items = r["content"].as_array().unwrap();
    assert_eq!(items.len(), 1000, "{r}");
    let first = items[0]["text"].as_str().unwrap();
    assert!(first.starts_with("src/scheduler/deeply/"), "{first}");
    assert!(items[1..].iter().all(|c| c["text"] == ""), "{r}");
    assert!(first.len() <= 10 * 1024, "{} bytes", first.len());
    assert!(r.get("structuredContent").is_none(), "the copy goes: {r}");
    // Every item is recoverable: line 500 of the one text is item 500.
    let id = prune_id(first);
    let rec = p.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": 500, "end_line": 500}]}),
    );
    assert!(
        raw_lines(&rec["result"]).contains("module_0500.py"),
        "{rec}"
    );
}

/// A text of one line over the budget: its first bytes are shown, and the note says that only
/// the first bytes of line 1 are (it said `showing lines 1-1 of 1 (48.8 KiB of 48.8 KiB)`).
#[test]
fn a_clipped_line_is_named_as_clipped() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let r = call(&mut p, "wide_line", json!({}));
    let shown = content_texts(&r);
    let note = shown.lines().last().unwrap();
    assert!(
        note.starts_with("[truncated: showing the first ") && note.contains(" of line 1 of 1 ("),
        "{note}"
    );
    assert!(!note.contains("48.8 KiB of 48.8 KiB"), "{note}");
    assert!(shown.len() <= 10 * 1024, "{} bytes", shown.len());
}

/// A tool listed on the second page that defines `context_focus_question` itself, called before
/// any listing: the proxy pages through the tools to learn it, and forwards the argument (it read
/// only the first page, took the question for itself, and the upstream got `{}`).
#[test]
fn a_tool_on_a_later_page_keeps_its_own_question() {
    let Some(cmd) = upstream("paged") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let r = call(&mut p, "later", json!({"context_focus_question": "mine"}));
    assert_eq!(
        content_texts(&r),
        r#"{"context_focus_question": "mine"}"#,
        "{r}"
    );
    // A tool on the first page that does not define it: the proxy's, not forwarded.
    let r = call(&mut p, "first", json!({"context_focus_question": "ours"}));
    assert_eq!(content_texts(&r), "{}", "{r}");
}

#[test]
fn proxy_prunes_a_long_log_and_recovers_the_raw_lines() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut up = direct(&cmd);
    let raw = content_texts(&call(&mut up, "build_log", json!({})));
    let mut p = proxy(&cmd, &[], &[]);
    let q = "why did the build fail to link?";
    let r = call(&mut p, "build_log", json!({"context_focus_question": q}));
    let shown = content_texts(&r);
    assert!(
        shown.contains("undefined reference to `ws_reconnect_backoff'"),
        "{shown}"
    );
    eprintln!(
        "issues/build_log: raw {} o200k tokens, proxied with the question {} tokens",
        tokens(&raw),
        tokens(&shown)
    );
    assert!(tokens(&shown) * 5 < tokens(&raw));
    let id = prune_id(&shown);
    for (a, b) in [(1, 3), (2411, 2413), (2998, 3000)] {
        assert_eq!(
            recover_range(&mut p, &id, a, b).trim_end(),
            lines_of(&raw, a, b).trim_end(),
            "lines {a}-{b} recovered byte for byte"
        );
    }
    // Without a question and past the budget: cut at a line, every byte behind the prune_id.
    let r = call(&mut p, "build_log", json!({"max_output_bytes": 4096}));
    let shown = content_texts(&r);
    assert!(shown.len() <= 4096, "{}", shown.len());
    assert!(shown.contains("[truncated: showing lines 1-"), "{shown}");
}

/// A log wrapped in a JSON object (`{"command":…,"exit_code":2,"output":"…"}`) is pruned by the
/// log's own lines: the object without it, its key, then the lines that answer the question.
#[test]
fn proxy_prunes_the_lines_of_a_string_that_holds_a_json_objects_weight() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut up = direct(&cmd);
    let raw = content_texts(&call(&mut up, "run_build", json!({})));
    let sent: Value = serde_json::from_str(&raw).expect("the upstream sends JSON");
    let log = sent["output"].as_str().unwrap();
    let mut p = proxy(&cmd, &[], &[]);
    let q = "why did the build fail to link?";
    let r = call(&mut p, "run_build", json!({"context_focus_question": q}));
    let shown = content_texts(&r);
    let mut lines = shown.lines();
    assert_eq!(
        lines.next(),
        Some(r#"{"command":"make all","exit_code":2}"#),
        "{shown}"
    );
    assert_eq!(lines.next(), Some(r#""output":"#), "{shown}");
    assert!(
        shown.contains("ERROR linker: undefined reference to `ws_reconnect_backoff'"),
        "{shown}"
    );
    eprintln!(
        "issues/run_build: raw {} o200k tokens, proxied with the question {} tokens",
        tokens(&raw),
        tokens(&shown)
    );
    assert!(tokens(&shown) * 5 < tokens(&raw));
    // What was saved is counted against the text the upstream sent, not the string alone.
    let pruning = &r["_meta"]["mcp-pruner/result"]["pruning"];
    assert_eq!(pruning["raw_bytes"], raw.len(), "{pruning}");
    assert_eq!(pruning["tokens_before"], tokens(&raw), "{pruning}");
    // The string alone is stored: line numbers are its own, and its lines come back unescaped.
    let id = prune_id(&shown);
    assert_eq!(
        recover_range(&mut p, &id, 1, 3).trim_end(),
        lines_of(log, 1, 3).trim_end()
    );
    // Without a question and within the budget the upstream's bytes pass untouched.
    let r = call(&mut p, "run_build", json!({"max_output_bytes": 1_000_000}));
    assert_eq!(content_texts(&r), raw);
    // A short output that pruning leaves whole goes out as the upstream sent it, JSON and all.
    let short = content_texts(&call(&mut up, "run_check", json!({})));
    let r = call(&mut p, "run_check", json!({"context_focus_question": q}));
    assert_eq!(content_texts(&r), short, "{r}");
    assert_eq!(
        r["_meta"]["mcp-pruner/result"]["pruning"]["applied"], false,
        "{r}"
    );
}

#[test]
fn proxy_prunes_a_filesystem_read_with_a_question() {
    let Some(cmd) = upstream("filesystem") else {
        return;
    };
    let file = format!("{}/src/tools/recover_text.rs", env!("CARGO_MANIFEST_DIR"));
    let mut up = direct(&cmd);
    let raw = content_texts(&call(&mut up, "read_text_file", json!({"path": file})));
    let mut p = proxy(&cmd, &[], &[]);
    let q = "how is the cursor of the next page encoded?";
    let r = call(
        &mut p,
        "read_text_file",
        json!({"path": file, "context_focus_question": q}),
    );
    let shown = content_texts(&r);
    assert!(shown.contains("fn encode_cursor"), "{shown}");
    eprintln!(
        "server-filesystem/read_text_file src/tools/recover_text.rs: raw {} o200k tokens, proxied with the question {} tokens",
        tokens(&raw),
        tokens(&shown)
    );
    assert!(tokens(&shown) < tokens(&raw));
    // server-filesystem repeats the text in `structuredContent`, which is what Claude Code and
    // Codex give the model: the copy there is the pruned text too.
    let sc = r["structuredContent"].to_string();
    assert!(sc.contains("fn encode_cursor"), "{sc}");
    // The tokens the result reports are those of what those clients read.
    assert_eq!(
        r["_meta"]["mcp-pruner/result"]["pruning"]["tokens_after"],
        tokens(&sc),
        "{r}"
    );
    assert!(
        tokens(&sc) < tokens(&raw) / 2,
        "structuredContent read as {} tokens, raw {}",
        tokens(&sc),
        tokens(&raw)
    );
}

#[test]
fn proxy_forwards_progress() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let id = p.request_async(
        "tools/call",
        json!({"name": "slow", "arguments": {"seconds": 0.5}, "_meta": {"progressToken": "tok-7"}}),
    );
    let r = p.wait_for(&id, Duration::from_secs(30));
    assert_eq!(content_texts(&r["result"]), "slept 0.5 s");
    let progress: Vec<&Value> = p
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 3, "{:?}", p.notifications);
    assert!(
        progress
            .iter()
            .all(|n| n["params"]["progressToken"] == "tok-7")
    );
    assert_eq!(progress.last().unwrap()["params"]["progress"], 5);
}

#[test]
fn proxy_forwards_cancellation_upstream() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("cancelled");
    let mut p = proxy(&cmd, &[], &[]);
    let started = Instant::now();
    let id = p.request_async(
        "tools/call",
        json!({"name": "slow", "arguments": {"seconds": 30, "marker": marker}}),
    );
    std::thread::sleep(Duration::from_millis(800));
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "test"}}));
    let r = p.wait_for(&id, Duration::from_secs(20));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(content_texts(&r["result"]).contains("CANCELLED"), "{r}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the upstream call was not cancelled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The upstream is still serving.
    assert_eq!(
        content_texts(&call(&mut p, "slow", json!({"seconds": 0.1}))),
        "slept 0.1 s"
    );
}

#[test]
fn proxy_passes_resources_through_and_budgets_their_text() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut up = direct(&cmd);
    let mut p = proxy(&cmd, &["--max-output-bytes", "4096"], &[]);
    let a = up.request("resources/list", json!({}))["result"].clone();
    let b = p.request("resources/list", json!({}))["result"].clone();
    assert_eq!(a, b);
    let t = p.request("resources/templates/list", json!({}))["result"].clone();
    assert!(t["resourceTemplates"].is_array(), "{t}");
    let uri = "demo://resource/static/document/structure.md";
    let raw = up.request("resources/read", json!({"uri": uri}))["result"].clone();
    let got = p.request("resources/read", json!({"uri": uri}))["result"].clone();
    let text = got["contents"][0]["text"].as_str().unwrap();
    assert!(raw["contents"][0]["text"].as_str().unwrap().len() > 4096);
    assert!(
        text.len() <= 4096 && text.contains("recover_text prune_id="),
        "{text}"
    );
    assert_eq!(got["contents"][0]["uri"], raw["contents"][0]["uri"]);
    // A small one is untouched.
    let small = "demo://resource/static/document/extension.md";
    assert_eq!(
        up.request("resources/read", json!({"uri": small}))["result"],
        p.request("resources/read", json!({"uri": small}))["result"]
    );
}

#[test]
fn proxy_passes_prompts_through() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut up = direct(&cmd);
    let mut p = proxy(&cmd, &[], &[]);
    assert_eq!(
        up.request("prompts/list", json!({}))["result"],
        p.request("prompts/list", json!({}))["result"]
    );
    let args = json!({"name": "args-prompt", "arguments": {"city": "Paris", "state": "IDF"}});
    assert_eq!(
        up.request("prompts/get", args.clone())["result"],
        p.request("prompts/get", args)["result"]
    );
    // An upstream error comes back as it is.
    let bad = json!({"name": "no-such-prompt"});
    assert_eq!(
        up.request("prompts/get", bad.clone())["error"],
        p.request("prompts/get", bad)["error"]
    );
}

#[test]
fn proxy_forwards_an_argument_the_upstream_owns() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let tools = p.request("tools/list", json!({}))["result"]["tools"].clone();
    let own = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "own_question")
        .unwrap()
        .clone();
    assert_eq!(
        own["inputSchema"]["required"],
        json!(["context_focus_question"])
    );
    let r = call(
        &mut p,
        "own_question",
        json!({"context_focus_question": "kept"}),
    );
    assert_eq!(content_texts(&r), "the upstream got: kept");
    // isError results pass through.
    let r = call(&mut p, "fail", json!({}));
    assert_eq!(r["isError"], true);
}

#[test]
fn proxy_reports_a_crashed_upstream_and_restarts_it() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &["--max-restarts", "1"], &[]);
    let r = call(&mut p, "crash", json!({}));
    assert_eq!(r["isError"], true);
    let t = content_texts(&r);
    assert!(t.contains("upstream") && t.contains("exited"), "{t}");
    // Restarted on the next call.
    assert_eq!(
        content_texts(&call(&mut p, "slow", json!({"seconds": 0.1}))),
        "slept 0.1 s"
    );
    // Out of restarts: a clear error, at once.
    let _ = call(&mut p, "crash", json!({}));
    let started = Instant::now();
    let r = call(&mut p, "slow", json!({"seconds": 0.1}));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(content_texts(&r).contains("--max-restarts 1"), "{r}");
}

#[test]
fn proxy_times_out_a_hung_upstream() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let mut p = proxy(&cmd, &["--upstream-timeout-ms", "1500"], &[]);
    let started = Instant::now();
    let r = call(&mut p, "slow", json!({"seconds": 20}));
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(r["isError"], true);
    assert!(
        content_texts(&r).contains("did not answer within 1500 ms"),
        "{r}"
    );
}

#[test]
fn proxy_records_calls_in_the_ledger_under_the_upstream() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let ledger_s = ledger.to_string_lossy().into_owned();
    let mut p = proxy(
        &cmd,
        &["--ledger", &ledger_s, "--upstream-name", "issues"],
        &[("MCP_PRUNER_NO_LEDGER", "0")],
    );
    call(
        &mut p,
        "build_log",
        json!({"context_focus_question": "why did linking fail?"}),
    );
    call(&mut p, "slow", json!({"seconds": 0.1}));
    p.close();
    let table = common::stats(&ledger, &["--by", "tool"]);
    assert!(
        table.contains("issues/build_log") && table.contains("issues/slow"),
        "{table}"
    );
}

#[test]
fn proxy_relays_upstream_log_notifications() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let mut p = proxy(&cmd, &[], &[]);
    let r = p.request("logging/setLevel", json!({"level": "debug"}));
    assert_eq!(r["result"], json!({}), "{r}");
    call(&mut p, "toggle-simulated-logging", json!({}));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if p.notifications
            .iter()
            .any(|n| n["method"] == "notifications/message")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no log notification relayed: {:?}",
            p.notifications
        );
        let m = p.next_message(Duration::from_secs(15));
        if m.get("id").is_none() {
            p.notifications.push(m);
        }
    }
}

#[test]
fn proxy_speaks_the_2026_era_downstream() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let args: Vec<String> = ["proxy", "--"]
        .iter()
        .map(|s| s.to_string())
        .chain(cmd.iter().cloned())
        .collect();
    let mut p = StdioClient::spawn_program(&common::bin(), &args, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "proxy-test", "version": "1"}
    });
    p.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
    );
    let d = p.wait_for(&json!(1), Duration::from_secs(30));
    assert_eq!(
        d["result"]["capabilities"]["prompts"]["listChanged"], true,
        "{d}"
    );
    p.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "modern"}, "_meta": meta}}));
    let r = p.wait_for(&json!(2), Duration::from_secs(30));
    assert_eq!(content_texts(&r["result"]), "Echo: modern", "{r}");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}

#[test]
fn proxy_over_http_on_both_sides() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let port = free_port();
    let mut upstream = spawn_everything_http(&cmd[0], port);
    let mut proxy = Command::new(common::bin())
        .args(["proxy", "--listen", "http", "--port", "0", "--no-ledger"])
        .arg("--upstream")
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(proxy.stdout.take().unwrap()).lines();
    let ours = loop {
        let line = lines.next().expect("a ready event").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["event"] == "mcp_pruner.ready" {
            break v["data"]["port"].as_u64().unwrap();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let client = common::blocking_client(Duration::from_secs(30));
    let post = |sid: Option<&str>, body: Value| {
        let mut rb = client
            .post(format!("http://127.0.0.1:{ours}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = sid {
            rb = rb
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let r = rb.body(body.to_string()).send().unwrap();
        let sid = r
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        let text = r.text().unwrap();
        let json_text = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .unwrap_or(text.trim())
            .to_string();
        (
            sid,
            serde_json::from_str::<Value>(&json_text).unwrap_or(Value::Null),
        )
    };
    let (sid, init) = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    assert!(
        init["result"]["capabilities"]["resources"].is_object(),
        "{init}"
    );
    let sid = sid.expect("a session id");
    let (_, r) = post(
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "over http"}}}),
    );
    assert_eq!(content_texts(&r["result"]), "Echo: over http", "{r}");
    let (_, r) = post(
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "get-tiny-image", "arguments": {}}}),
    );
    assert!(
        r["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image"),
        "{r}"
    );
    let _ = proxy.kill();
    let _ = proxy.wait();
    let _ = upstream.kill();
    let _ = upstream.wait();
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

fn wait_gone(pid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the upstream (pid {pid}) outlived {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn proxy_takes_its_upstream_down_with_it() {
    let Some(cmd) = upstream("issues") else {
        return;
    };
    // stdin closed: the proxy stops its upstream and exits.
    let mut p = proxy(&cmd, &[], &[]);
    let pid: i32 = content_texts(&call(&mut p, "pid", json!({})))
        .parse()
        .unwrap();
    assert!(alive(pid));
    assert!(p.close().success());
    wait_gone(pid, "a proxy whose stdin closed");
    // Killed outright: the shepherd between them kills the upstream's tree.
    let mut p = proxy(&cmd, &[], &[]);
    let pid: i32 = content_texts(&call(&mut p, "pid", json!({})))
        .parse()
        .unwrap();
    p.child.kill().unwrap();
    wait_gone(pid, "a proxy killed with SIGKILL");
}

/// Raw against proxied-with-a-question o200k tokens for real upstream tools (printed: the
/// figures of docs/proxy.md).
#[test]
fn proxy_token_figures_on_real_upstreams() {
    let Some(fs) = upstream("filesystem") else {
        return;
    };
    let Some(ev) = upstream("everything") else {
        return;
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let cases = [
        (
            &fs,
            "list_directory_with_sizes",
            json!({"path": format!("{root}/tests/fixtures")}),
            "which fixtures are logs?",
        ),
        (
            &fs,
            "directory_tree",
            json!({"path": format!("{root}/src")}),
            "where is the proxy's upstream connection?",
        ),
        (
            &fs,
            "read_text_file",
            json!({"path": format!("{root}/src/tools/bash.rs")}),
            "how are stdout and stderr pruned?",
        ),
        (
            &ev,
            "get-env",
            json!({}),
            "which variable names the home directory?",
        ),
    ];
    for (cmd, tool, args, q) in cases {
        let mut up = direct(cmd);
        let raw = content_texts(&call(&mut up, tool, args.clone()));
        let mut p = proxy(cmd, &[], &[]);
        let mut with_q = args.clone();
        with_q["context_focus_question"] = json!(q);
        let result = call(&mut p, tool, with_q);
        let shown = content_texts(&result);
        // What Claude Code and Codex read: `structuredContent` when the result has one.
        let read = match result.get("structuredContent") {
            Some(sc) => sc.to_string(),
            None => shown.clone(),
        };
        eprintln!(
            "figure: {tool} {args}: raw {} tokens ({} bytes); with {q:?}: {} tokens ({} bytes), as the model reads the result {} tokens",
            tokens(&raw),
            raw.len(),
            tokens(&shown),
            shown.len(),
            tokens(&read)
        );
        assert!(
            tokens(&read) <= tokens(&raw) + 64,
            "{tool}: the result as read is no larger than the raw text: {read}"
        );
        assert!(
            tokens(&shown) <= tokens(&raw),
            "{tool}: never more than the raw text: {shown}"
        );
    }
}

#[test]
fn proxy_starts_a_new_session_with_a_restarted_http_upstream() {
    let Some(cmd) = upstream("everything") else {
        return;
    };
    let port = free_port();
    let start = || spawn_everything_http(&cmd[0], port);
    let mut up = start();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut p = proxy(&[], &["--upstream", &url], &[]);
    assert_eq!(
        content_texts(&call(&mut p, "echo", json!({"message": "a"}))),
        "Echo: a"
    );
    let _ = up.kill();
    let _ = up.wait();
    let mut up = start();
    // The first call meets the forgotten session: a clear error; the next one a new session.
    let r = call(&mut p, "echo", json!({"message": "b"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        content_texts(&r).contains("upstream 127.0.0.1 is unavailable"),
        "{r}"
    );
    assert_eq!(
        content_texts(&call(&mut p, "echo", json!({"message": "c"}))),
        "Echo: c"
    );
    let _ = up.kill();
    let _ = up.wait();
}
