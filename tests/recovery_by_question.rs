//! A miss the model can see and undo in one call: over the real binary (stdio), a `read` with a
//! question names the definitions its markers hide, and `recover_text` with the same `prune_id`
//! and a question returns the lines that result did not show, numbered as in the file, never a
//! line it showed, and goes on where it stopped when asked again.

mod common;
use common::*;
use regex::Regex;
use serde_json::json;
use std::collections::HashSet;

/// A Rust file of 24 functions with distinct names and bodies, each about 12 lines.
fn source() -> String {
    let names = [
        "parse_escape",
        "decode_hex_escape",
        "checksum_total",
        "render_table",
        "open_session",
        "close_session",
        "retry_backoff",
        "flush_buffers",
        "compress_block",
        "expand_block",
        "load_config",
        "save_config",
        "resolve_alias",
        "split_words",
        "merge_ranges",
        "sort_entries",
        "hash_password",
        "verify_token",
        "encode_frame",
        "decode_frame",
        "schedule_job",
        "cancel_job",
        "watch_directory",
        "format_duration",
    ];
    let mut s = String::from("//! Utilities.\n\nuse std::collections::HashMap;\n\n");
    for (i, n) in names.iter().enumerate() {
        s.push_str(&format!(
            "/// Does the {n} step.\npub fn {n}(input: &str, limit: usize) -> Option<usize> {{\n"
        ));
        for k in 0..10 {
            s.push_str(&format!(
                "    let v{k} = input.len().wrapping_mul({}) % (limit + {k});\n",
                i * 31 + k
            ));
        }
        s.push_str("    Some(v0 + v9)\n}\n\n");
    }
    s
}

/// The `prune_id` a pruned result hands out.
fn prune_id(result: &serde_json::Value) -> String {
    structured(result)["pruning"]["prune_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no prune_id in {result:#}"))
        .to_string()
}

#[test]
fn markers_name_what_they_hide_and_a_question_brings_it_back() {
    let src = source();
    let raw: Vec<&str> = src.lines().collect();
    let (_root, mut c, first) =
        read_with_question("util.rs", &src, "how does parse_escape handle the limit?");
    let shown = text(&first["result"]).to_string();
    assert!(shown.contains("pub fn parse_escape("), "{shown}");
    // The markers name hidden definitions, as the language writes them.
    let named = marker_names(&shown);
    assert!(!named.is_empty(), "no marker names anything:\n{shown}");
    let hidden_fn = Regex::new(r"fn (\w+)").unwrap();
    let mut hidden: Vec<String> = Vec::new();
    for list in &named {
        for m in hidden_fn.captures_iter(list) {
            let name = m[1].to_string();
            assert!(
                !shown.contains(&format!("pub fn {name}(")),
                "a marker names {name}, whose signature the result shows:\n{shown}"
            );
            hidden.push(name);
        }
    }
    assert!(!hidden.is_empty(), "{named:?}");
    let id = prune_id(&first["result"]);

    // Ask for a hidden one by question: its lines come back with their file line numbers.
    let target = hidden
        .iter()
        .find(|n| n.as_str() != "parse_escape")
        .unwrap()
        .clone();
    let q = format!("what does {target} return?");
    let second = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": q}),
    );
    assert!(second["result"]["isError"] != true, "{second}");
    assert_valid_result("recover_text", &second["result"]);
    // The lines come plain, as the model reads code (not inside a JSON string), and the rest of
    // the result travels in `_meta`.
    let lines = answer_lines(&second["result"]);
    assert!(!lines.contains("\\n"), "{lines}");
    let r = structured(&second["result"]);
    // The question is not echoed (the caller has it): what was chosen for it is `returned_lines`.
    // Nor are the ranges listed: the markers give the numbers (schemaVersion 5).
    assert!(r["metadata"].get("context_focus_question").is_none(), "{r}");
    assert!(r["metadata"].get("ranges").is_none(), "{r}");
    assert_eq!(r["hasMore"], false);
    let rows = located(lines);
    assert_eq!(
        r["metadata"]["returned_lines"].as_u64().unwrap() as usize,
        rows.len()
    );
    assert!(
        rows.iter()
            .any(|(_, l)| l.starts_with(&format!("pub fn {target}("))),
        "{lines}"
    );
    for (n, line) in &rows {
        assert_eq!(raw[n - 1], line, "line {n} is the file's line {n}");
    }
    // Nothing the first result showed comes back.
    let first_lines: HashSet<&str> = shown.lines().collect();
    let body_of_best: Vec<&(usize, String)> = rows
        .iter()
        .filter(|(_, l)| l.contains("pub fn parse_escape("))
        .collect();
    assert!(body_of_best.is_empty(), "parse_escape was shown already");
    // Asked about another, it goes on: no line comes back twice. Asked with numbers, each row
    // carries its line number.
    let other = hidden
        .iter()
        .find(|n| n.as_str() != "parse_escape" && **n != target)
        .unwrap();
    let third = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": format!("what does {other} return?"), "include_line_numbers": true}),
    );
    let numbered = answer_lines(&third["result"]);
    let again: Vec<(usize, String)> = numbered
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.split_once("│ ")?;
            Some((n.trim().parse().ok()?, rest.to_string()))
        })
        .collect();
    assert!(!again.is_empty(), "{numbered}");
    let same = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": q}),
    );
    for (n, _) in located(answer_lines(&same["result"])) {
        assert!(
            !rows.iter().any(|(m, _)| *m == n),
            "line {n} returned twice"
        );
    }
    for (n, line) in &again {
        assert_eq!(raw[n - 1], line, "line {n} is the file's line {n}");
        assert!(!rows.iter().any(|(m, _)| m == n), "line {n} returned twice");
    }
    assert!(
        first_lines.contains("pub fn parse_escape(input: &str, limit: usize) -> Option<usize> {")
    );

    // With ranges, only lines inside them come back; a range past the end is -32005.
    let fresh = c.call(
        "read",
        json!({"path": "util.rs", "context_focus_question": "how does parse_escape handle the limit?", "max_output_bytes": 4096}),
    );
    let id2 = prune_id(&fresh["result"]);
    let within = c.call(
        "recover_text",
        json!({"prune_id": id2, "context_focus_question": q, "ranges": [{"start_line": 100, "end_line": 160}]}),
    );
    for (n, _) in located(answer_lines(&within["result"])) {
        assert!(
            (100..=160).contains(&n),
            "line {n} outside the ranges asked for"
        );
    }
    let past = c.request(
        "tools/call",
        json!({"name": "recover_text", "arguments": {"prune_id": id2, "context_focus_question": q, "ranges": [{"start_line": 9000, "end_line": 9001}]}}),
    );
    assert_eq!(past["error"]["code"], -32005, "{past}");

    // A cursor is for ranges: with a question it is refused, naming the field.
    let bad = c.request(
        "tools/call",
        json!({"name": "recover_text", "arguments": {"prune_id": id, "context_focus_question": q, "cursor": "r2.0.1.0.0.0"}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad.to_string().contains("/arguments/cursor"), "{bad}");
}

/// `resources/read` of `prune://<id>?question=…` answers like `recover_text` with the question:
/// the lines the earlier result did not show that serve it, numbered as in the file, and they
/// count as shown (asked again, none comes back). A query other than one question names `/uri`.
#[test]
fn a_resource_read_with_a_question_returns_what_was_not_shown() {
    let src = source();
    let raw: Vec<&str> = src.lines().collect();
    let (_root, mut c, first) =
        read_with_question("util.rs", &src, "how does parse_escape handle the limit?");
    let shown = text(&first["result"]).to_string();
    assert!(!shown.contains("pub fn verify_token("), "{shown}");
    let id = prune_id(&first["result"]);
    let uri = format!("prune://{id}?question=what%20does+verify_token+return%3F");
    let read = c.request("resources/read", json!({ "uri": uri }));
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], uri.as_str(), "{read}");
    let rows = located(resource_lines(contents["text"].as_str().unwrap()));
    assert!(
        rows.iter()
            .any(|(_, l)| l.starts_with("pub fn verify_token(")),
        "{read}"
    );
    for (n, line) in &rows {
        assert_eq!(raw[n - 1], line, "line {n} is the file's line {n}");
        assert!(
            !line.starts_with("pub fn parse_escape("),
            "parse_escape was shown before"
        );
    }
    let again = c.request("resources/read", json!({ "uri": uri }));
    let second: HashSet<usize> = located(resource_lines(
        again["result"]["contents"][0]["text"].as_str().unwrap(),
    ))
    .into_iter()
    .map(|(n, _)| n)
    .collect();
    for (n, _) in &rows {
        assert!(!second.contains(n), "line {n} returned twice");
    }
    let bad = c.request(
        "resources/read",
        json!({ "uri": format!("prune://{id}?q=x") }),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad.to_string().contains("/uri"), "{bad}");
    let templates = c.request("resources/templates/list", json!({}));
    assert!(templates.to_string().contains("{?question}"), "{templates}");
}

/// The lines of a resource read by question: its text without the closing summary in brackets
/// (checked to be there, on the last line).
fn resource_lines(text: &str) -> &str {
    let at = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let (lines, note) = text.split_at(at);
    assert!(
        note.starts_with('[') && note.trim_end().ends_with(']'),
        "no closing summary: {text}"
    );
    lines
}

/// With output schemas, Claude Code and Codex feed the model `structuredContent`: there the answer
/// by question is the whole result, its lines in `raw_text`, and what the model reads (that JSON,
/// escapes and all) still fits the call's budget; `content[0].text` keeps the plain lines and
/// `_meta` leaves them out.
#[test]
fn with_output_schemas_the_answer_by_question_is_the_structured_result_within_budget() {
    let (_root, mut c, first) = read_with_question_on(
        &["--output-schemas"],
        "util.rs",
        &source(),
        "how does parse_escape handle the limit?",
    );
    let id = prune_id(&first["result"]);
    let budget = 2500;
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "what does verify_token return?", "max_output_bytes": budget}),
    );
    assert_valid_result("recover_text", &r["result"]);
    let sc = &r["result"]["structuredContent"];
    let lines = sc["raw_text"].as_str().unwrap();
    assert!(lines.contains("pub fn verify_token("), "{sc:#}");
    assert!(
        sc.to_string().len() <= budget,
        "{} bytes over {budget}",
        sc.to_string().len()
    );
    assert_eq!(answer_lines(&r["result"]), lines);
}

/// A resource's text is the lines, plain, whatever the tools' output schemas: `resources/read`
/// by question returns the same lines with and without them (it is not fitted as escaped JSON).
#[test]
fn a_resource_by_question_is_fitted_as_plain_text_with_or_without_output_schemas() {
    // A budget small enough to bind, so that fitting the answer as escaped JSON would show.
    let small = ["--max-output-bytes", "2048"];
    let texts: Vec<String> = [&small[..], &[&small[..], &["--output-schemas"][..]].concat()[..]]
        .iter()
        .map(|flags| {
            // `prune_text` answers the same in both modes (its result is its JSON), so both
            // resources start from the same shown lines.
            let root = tempfile::tempdir().unwrap();
            let mut c = StdioClient::spawn(root.path(), flags);
            c.initialize();
            let first = c.call(
                "prune_text",
                json!({"text": source(), "goal_hint": "how does parse_escape handle the limit?", "source_type": "code"}),
            );
            let id = structured(&first["result"])["prune_id"]
                .as_str()
                .unwrap_or_else(|| panic!("{first}"))
                .to_string();
            let uri = format!("prune://{id}?question=what%20does+verify_token+return%3F");
            let read = c.request("resources/read", json!({ "uri": uri }));
            // The same but for the id, whose tag each server draws (it closes the summary).
            read["result"]["contents"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{read}"))
                .replace(&id, "prn_ID")
        })
        .collect();
    assert!(texts[0].contains("pub fn verify_token("), "{}", texts[0]);
    assert_eq!(texts[0], texts[1]);
}

/// A result that showed everything leaves nothing to recover by question: a short file whose
/// pruning saves nothing comes back whole, and asked again for the same question, the answer says
/// nothing new is left instead of returning the lines "not shown before" (it was so before).
#[test]
fn after_a_result_that_showed_everything_the_answer_is_nothing_new() {
    let src = "fn one() {}\nfn two() {}\nfn three() {}\n";
    let (_root, mut c, first) = read_with_question("small.rs", src, "where is two?");
    let pruning = &structured(&first["result"])["pruning"];
    assert_eq!(pruning["reason"], "no_savings", "{first}");
    // No pruned text went out, so none has a size (every path that gives way says so alike).
    assert_eq!(
        (&pruning["applied"], pruning.get("pruned_bytes")),
        (&json!(false), None),
        "{first}"
    );
    let id = pruning["prune_id"].as_str().unwrap().to_string();
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "where is two?"}),
    );
    assert_eq!(answer_lines(&r["result"]), "", "{r}");
    let meta = structured(&r["result"]);
    assert_eq!(meta["metadata"]["returned_lines"], 0, "{meta}");
    // The advice survives the summary's 100 characters whole.
    assert_eq!(
        meta["summary"],
        format!("nothing new for the question in {id}; recover the rest by ranges"),
    );
}

/// `prune_text`'s kept lines count as shown like a pruned `read`'s: a recovery by question after
/// it never returns a line it showed.
#[test]
fn after_prune_text_a_recovery_by_question_returns_only_what_it_did_not_show() {
    let src = source();
    let root = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let question = "how does parse_escape handle the limit?";
    let first = c.call(
        "prune_text",
        json!({"text": src, "goal_hint": question, "source_type": "code"}),
    );
    let result = structured(&first["result"]);
    let shown: HashSet<&str> = result["pruned_text"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| l.contains("wrapping_mul"))
        .collect();
    assert!(!shown.is_empty(), "{result:#}");
    let id = result["prune_id"].as_str().unwrap();
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": question}),
    );
    let rows = located(answer_lines(&r["result"]));
    assert!(!rows.is_empty(), "{r}");
    // Each `wrapping_mul` line is unique in the file: none shown by prune_text comes back.
    for (n, line) in &rows {
        assert!(!shown.contains(line.as_str()), "line {n} was shown: {line}");
    }
}

/// A recovery by question ranks a `prune_text` text as the caller's `source_type` said, not as
/// detection reads it: Lisp given as prose is not outlined as code the second time either, so
/// its markers name no `defun` (detection reads it as code, and named them before).
#[test]
fn a_recovery_by_question_keeps_the_source_type_prune_text_was_given() {
    const NAMES: [&str; 12] = [
        "parse-escape",
        "decode-hex",
        "checksum-total",
        "render-table",
        "open-session",
        "close-session",
        "retry-backoff",
        "flush-buffers",
        "compress-block",
        "expand-block",
        "load-config",
        "save-config",
    ];
    let mut text = String::new();
    for (i, name) in NAMES.iter().enumerate() {
        text.push_str(&format!(
            "(defun {name} (input limit)\n  \"Does the {name} step.\"\n"
        ));
        for k in 0..8 {
            text.push_str(&format!(
                "  (let ((v{k} (mod (* (length input) {}) (+ limit {k}))))\n",
                i * 31 + k
            ));
        }
        text.push_str("    (+ v0 v7))\n\n");
    }
    let root = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let question = "how does checksum-total handle the limit?";
    let first = c.call(
        "prune_text",
        json!({"text": text, "goal_hint": question, "source_type": "docs",
               "options": {"max_prune_ratio": 0.95, "min_keep_lines": 1}}),
    );
    let id = structured(&first["result"])["prune_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": question}),
    );
    let answer = answer_lines(&r["result"]);
    let markers: Vec<&str> = answer.lines().filter(|l| l.starts_with("[… ")).collect();
    assert!(!markers.is_empty(), "{answer}");
    assert!(markers.iter().all(|m| !m.contains("defun")), "{answer}");
}

/// A recovery by question returns a definition with its signature: when its doc comment or its
/// body speaks of the question and the signature does not, they never come back without the
/// `fn` line that says whose they are (they did, 74 times in 171 first recoveries of real files).
#[test]
fn a_body_returned_by_question_comes_with_its_signature() {
    let mut src = String::from("//! Workers.\n\nuse std::sync::mpsc::Sender;\n\n");
    for k in 0..40 {
        // Three definitions are about the question by name; the rest only mention a worker.
        let (doc, name) = if k % 13 == 0 {
            (
                "Drains the panic queue of a worker that panics.",
                format!("drain_panic_queue_{k}"),
            )
        } else {
            ("Counts the jobs a worker took.", format!("step_{k}"))
        };
        src.push_str(&format!(
            "/// {doc}\n\
             pub fn {name}(&self, item: Job) -> usize {{\n\
             \x20   let slot = self.slots[{k}].lock();\n\
             \x20   self.jobs_{k}.push(Message::Work(item.clone()));\n\
             \x20   slot.count += {k};\n\
             \x20   slot.count\n}}\n\n"
        ));
    }
    let raw: Vec<&str> = src.lines().collect();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("workers.rs"), &src).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let question = "what happens to the panic queue when a worker panics?";
    let r = c.call(
        "read",
        json!({"path": "workers.rs", "context_focus_question": question, "max_output_bytes": 2048}),
    );
    let id = prune_id(&r["result"]);
    let first = text(&r["result"]);
    let first_rows = located(&first[..first.rfind("\n[").map_or(first.len(), |i| i + 1)]);
    let rows = recovered_rows(&mut c, &id, question);
    let seen: HashSet<usize> = first_rows.iter().chain(&rows).map(|(n, _)| *n).collect();
    let mut parts = 0;
    for (n, line) in &rows {
        // A doc line's definition starts below it, a body line's above.
        let sig = if line.starts_with("///") {
            (*n..=raw.len()).find(|&k| raw[k - 1].starts_with("pub fn "))
        } else if line.starts_with("    ") {
            (1..*n).rev().find(|&k| raw[k - 1].starts_with("pub fn "))
        } else {
            continue;
        };
        parts += 1;
        let sig = sig.unwrap();
        assert!(
            seen.contains(&sig),
            "line {n} came back without line {sig}: {rows:?}"
        );
    }
    assert!(parts > 0, "{rows:?}");
}

/// A resource read by question holds its query to the tool's rules and names `/uri` in every
/// refusal: a question that is not UTF-8 once decoded, given twice, longer than
/// `context_focus_question` may be, or a URI with no prune id; a fragment is not part of the
/// question. Asked again, the text says nothing new is left. A huge value is echoed cut.
#[test]
fn a_resource_by_question_refuses_what_the_tool_would_and_says_when_nothing_is_left() {
    let src = source();
    let (_root, mut c, first) =
        read_with_question("util.rs", &src, "how does parse_escape handle the limit?");
    let id = prune_id(&first["result"]);
    let refused = |c: &mut StdioClient, uri: String, says: &str| {
        let r = c.request("resources/read", json!({ "uri": uri }));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
        assert_eq!(
            r["error"]["data"]["field_errors"][0]["field"], "/uri",
            "{r}"
        );
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{uri}: {message}");
        assert!(message.len() < 600, "{} bytes: {message}", message.len());
    };
    refused(
        &mut c,
        format!("prune://{id}?question=%FF%FEcursor"),
        "UTF-8",
    );
    refused(
        &mut c,
        format!("prune://{id}?question=a&question=b"),
        "twice",
    );
    refused(
        &mut c,
        format!("prune://{id}?question={}", "word+".repeat(400)),
        "longer than 1000 characters",
    );
    refused(&mut c, "prune://?question=x".into(), "prune id is missing");
    let uri = format!("prune://{id}?question=verify_token#part");
    let read = |c: &mut StdioClient| {
        let r = c.request("resources/read", json!({ "uri": uri }));
        r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string()
    };
    let once = read(&mut c);
    assert!(once.contains("pub fn verify_token("), "{once}");
    let mut text = read(&mut c);
    for _ in 0..20 {
        if text.contains("nothing new") {
            break;
        }
        text = read(&mut c);
    }
    assert!(
        text.trim_end().ends_with(&format!(
            "[nothing new for the question in {id}; recover the rest by ranges]"
        )),
        "{text}"
    );
    // A tool argument over its limit is refused without being sent back whole.
    let huge = "cursor ".repeat(15_000);
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": huge}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r.to_string().len() < 2_000, "{} bytes", r.to_string().len());
}

/// A server over a root holding [`source`] as `util.rs`: the root (kept alive while the client
/// runs), the client and the text.
fn util_server() -> (tempfile::TempDir, StdioClient, String) {
    let src = source();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("util.rs"), &src).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    (root, c, src)
}

/// `read` of `util.rs` from line `offset`, `limit` lines, with `question`.
fn read_window(
    c: &mut StdioClient,
    offset: usize,
    limit: usize,
    question: &str,
) -> serde_json::Value {
    c.call(
        "read",
        json!({"path": "util.rs", "offset": offset, "limit": limit, "context_focus_question": question}),
    )
}

/// The rows a recovery of `id` by `question` returns, located by its markers.
fn recovered_rows(c: &mut StdioClient, id: &str, question: &str) -> Vec<(usize, String)> {
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": question}),
    );
    located(answer_lines(&r["result"]))
}

/// A `read` of a window (an offset and a limit) with a question numbers its markers as the file
/// does, and its `prune_id` recovers those numbers: the rows located by the markers are the
/// file's lines, a marker's range comes back as the file's lines, and a recovery by question
/// never returns a line the window showed (it numbered them from 1 before, and stored only the
/// window).
#[test]
fn a_window_read_with_a_question_numbers_and_recovers_as_the_file_does() {
    let (_root, mut c, src) = util_server();
    let raw: Vec<&str> = src.lines().collect();
    let question = "what does verify_token return?";
    let r = read_window(&mut c, 150, 150, question);
    let meta = structured(&r["result"]);
    assert_eq!(meta["pruning"]["applied"], true, "{meta}");
    let shown = text(&r["result"]);
    let body = &shown[..shown.rfind("\n[").unwrap_or(shown.len())];
    // Located from the window's first line: every row is the file's line of that number.
    let marker = Regex::new(r"^\[… lines? (\d+)(?:-(\d+))?").unwrap();
    let mut next = 150;
    let mut ranges = Vec::new();
    for l in body.lines() {
        if let Some(m) = marker.captures(l) {
            let a: usize = m[1].parse().unwrap();
            let b: usize = m.get(2).map_or(a, |b| b.as_str().parse().unwrap());
            assert!((150..=299).contains(&a) && (a..=299).contains(&b), "{l}");
            ranges.push((a, b));
            next = b + 1;
        } else {
            assert_eq!(raw[next - 1], l, "row {next} is the file's line {next}");
            next += 1;
        }
    }
    assert!(body.contains("pub fn verify_token("), "{body}");
    let (a, b) = ranges[0];
    let id = prune_id(&r["result"]);
    let back = c.call(
        "recover_text",
        json!({"prune_id": id, "ranges": [{"start_line": a, "end_line": b}], "include_line_numbers": false}),
    );
    let got = structured(&back["result"]);
    let want: String = raw[a - 1..b].iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(got["raw_text"], want.as_str(), "{got}");
    let rows = recovered_rows(&mut c, &id, question);
    assert!(!rows.is_empty());
    for (n, line) in rows {
        assert_eq!(raw[n - 1], line, "line {n}");
        let hidden = ranges.iter().any(|&(a, b)| (a..=b).contains(&n));
        assert!(hidden || !(150..=299).contains(&n), "line {n} was shown");
    }
    // A second window of the same file shares its id and records only its own lines: asked
    // again, the first window's shown lines still do not come back.
    let other = read_window(&mut c, 1, 60, "what does open_session do?");
    assert_eq!(prune_id(&other["result"]), id);
    for (n, _) in recovered_rows(&mut c, &id, question) {
        let hidden = ranges.iter().any(|&(a, b)| (a..=b).contains(&n));
        assert!(hidden || !(150..=299).contains(&n), "line {n} was shown");
    }
}

/// A server whose pruner takes at most 64 KiB, over a root holding `big.rs`: 40 copies of
/// [`source`], over 200 KB.
fn big_file_server() -> (tempfile::TempDir, StdioClient, String) {
    let src: String = (0..40).map(|_| source()).collect();
    assert!(src.len() > 200_000);
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big.rs"), &src).unwrap();
    let mut c = StdioClient::spawn(root.path(), &["--max-prune-input-bytes", "65536"]);
    c.initialize();
    (root, c, src)
}

/// A window of a file over the pruner's input cap: its recovery by question is answered from the
/// part the window came from (the file is too large to prune whole), numbered as the file.
#[test]
fn a_window_of_a_file_over_the_pruner_cap_is_recovered_by_question_from_where_it_was() {
    let (_root, mut c, src) = big_file_server();
    let raw: Vec<&str> = src.lines().collect();
    let question = "what does verify_token return?";
    let r = c.call(
        "read",
        json!({"path": "big.rs", "offset": 5001, "limit": 300, "context_focus_question": question}),
    );
    assert_eq!(structured(&r["result"])["pruning"]["applied"], true, "{r}");
    let id = prune_id(&r["result"]);
    let more = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "what does merge_ranges do?"}),
    );
    assert!(more.get("result").is_some(), "{more}");
    let rows = located(answer_lines(&more["result"]));
    assert!(!rows.is_empty(), "{more}");
    for (n, line) in rows {
        assert!(n >= 5001, "line {n} is before the window's part");
        assert_eq!(raw[n - 1], line, "line {n} is the file's");
    }
}

/// Over the pruner's cap, a question with ranges is answered from the first range asked for:
/// a window far past the part the first window's record points at is reached that way (it was
/// answered from the first shown line on, and the far ranges lay past the cap).
#[test]
fn over_the_cap_a_question_with_ranges_is_answered_where_the_ranges_are() {
    let (_root, mut c, src) = big_file_server();
    let raw: Vec<&str> = src.lines().collect();
    let question = "what does verify_token return?";
    let r = c.call(
        "read",
        json!({"path": "big.rs", "offset": 101, "limit": 300, "context_focus_question": question}),
    );
    let id = prune_id(&r["result"]);
    let far = raw.len() - 400;
    let r = c.call(
        "read",
        json!({"path": "big.rs", "offset": far, "limit": 300, "context_focus_question": question}),
    );
    assert_eq!(
        prune_id(&r["result"]),
        id,
        "windows of one file share its id"
    );
    let more = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "what does merge_ranges do?",
               "ranges": [{"start_line": far, "end_line": far + 299}]}),
    );
    let rows = located(answer_lines(&more["result"]));
    assert!(!rows.is_empty(), "{more}");
    for (n, line) in rows {
        assert!(
            (far..far + 300).contains(&n),
            "line {n} is outside the range asked for"
        );
        assert_eq!(raw[n - 1], line, "line {n} is the file's");
    }
}

/// `ranges` with a question narrow the candidates to lines the model chose: the answer is the
/// relevant part of those lines whole, not a fifth of them (in a file of top-level statements, 21
/// lines asked for came back as their first three, the two the question names hidden).
#[test]
fn ranges_with_a_question_return_the_relevant_lines_asked_for_whole() {
    let src: String = (1..=300)
        .map(|i| match i % 10 {
            0 => format!("fn parse_header_{i}(x: &str) -> Result<Header> {{ decode(x) }}\n"),
            _ => format!("let value_{i} = compute({i}); // filler text for line {i}\n"),
        })
        .collect();
    let root = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let first = c.call(
        "prune_text",
        json!({"text": src, "goal_hint": "parse_header_290", "source_type": "code"}),
    );
    let id = structured(&first["result"])["prune_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": "value_149 value_151", "ranges": [{"start_line": 140, "end_line": 160}]}),
    );
    let rows: Vec<usize> = located(answer_lines(&r["result"]))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(rows.contains(&149) && rows.contains(&151), "{r}");
}

/// Windows of one file share its id and add to one record: a small window shown whole, then a
/// larger one over it pruned for another question, and a recovery by the first question returns
/// none of the small window's lines (the larger one overwrote them before).
#[test]
fn overlapping_windows_add_to_one_record() {
    let (_root, mut c, src) = util_server();
    let raw: Vec<&str> = src.lines().collect();
    let start = raw
        .iter()
        .position(|l| l.starts_with("pub fn verify_token("))
        .unwrap()
        + 1;
    let question = "what does verify_token return?";
    let small = read_window(&mut c, start, 12, question);
    let pruning = &structured(&small["result"])["pruning"];
    assert_eq!(pruning["reason"], "no_savings", "{small}");
    let id = pruning["prune_id"].as_str().unwrap().to_string();
    let large = read_window(&mut c, 150, 200, "how is a block compressed?");
    assert_eq!(prune_id(&large["result"]), id);
    for (n, _) in recovered_rows(&mut c, &id, question) {
        assert!(
            !(start..start + 12).contains(&n),
            "line {n} was shown by the first window"
        );
    }
}

/// A pruned `bash` output whose page is cut (here: a kept line longer than a page shows whole)
/// records nothing as shown, and a recovery by the same question ranks the output as a log, as
/// the first result did: it returns the clipped line whole. Before, the line counted as shown;
/// without a record, the output (uniform lines, no blank one) was read as prose, one paragraph
/// whose head came back.
#[test]
fn a_cut_bash_page_leaves_its_kept_lines_to_a_recovery_by_question() {
    let root = tempfile::tempdir().unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let detail = "x".repeat(900);
    let cmd = format!(
        "for i in $(seq 1 400); do echo \"step $i: ok, 12 files copied\"; done; \
         echo \"ERROR quota exceeded on /data: {detail}\"; echo done"
    );
    let question = "why was the quota exceeded?";
    let first = c.call(
        "bash",
        json!({"cmd": cmd, "context_focus_question": question}),
    );
    let result = structured(&first["result"]);
    assert_eq!(result["pruning"]["applied"], true, "{result:#}");
    let text = first["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains(&detail), "the long line is clipped: {text}");
    let id = result["pruning"]["prune_id"].as_str().unwrap().to_string();
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": question}),
    );
    let rows = located(answer_lines(&r["result"]));
    assert!(
        rows.iter()
            .any(|(_, l)| l.contains("quota exceeded") && l.contains(&detail)),
        "{text}\n---\n{r}"
    );
}

/// A kept line longer than the budget: the pruned page shows it clipped, saying how to read it
/// whole (the page was cut before it, showing only a marker), and a recovery by question stays
/// within its budget (it returned the whole line, over the budget).
#[test]
fn a_line_longer_than_the_budget_is_shown_clipped_with_how_to_read_it() {
    let root = tempfile::tempdir().unwrap();
    let mut log: Vec<String> = (0..300).map(|i| format!("INFO step {i} fine")).collect();
    log[200] = format!(
        "ERROR step 200 assertion failed: expected {}",
        "a".repeat(25_000)
    );
    std::fs::write(root.path().join("run.log"), log.join("\n") + "\n").unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let question = "why did step 200 fail?";
    let r = c.call(
        "read",
        json!({"path": "run.log", "context_focus_question": question, "max_output_bytes": 4000}),
    );
    let page = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(page.contains("ERROR step 200 assertion failed"), "{page}");
    assert!(
        page.contains("…[line 201 is 24.5 KiB: recover_text prune_id="),
        "{page}"
    );
    assert!(page.len() <= 4000, "{} bytes", page.len());
    // A window before the long line, of a copy (the same text under the same name would be the
    // same id, whose record has the line shown): the file is stored whole, the line never shown.
    std::fs::write(root.path().join("copy.log"), log.join("\n") + "\n").unwrap();
    let r = c.call(
        "read",
        json!({"path": "copy.log", "offset": 1, "limit": 100, "context_focus_question": question}),
    );
    let id = prune_id(&r["result"]);
    let r = c.call(
        "recover_text",
        json!({"prune_id": id, "context_focus_question": question, "max_output_bytes": 2000}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("ERROR step 200 assertion failed"), "{text}");
    assert!(text.contains("…[line 201 is 24.5 KiB"), "{text}");
    assert!(text.len() <= 2000, "{} bytes: {text}", text.len());
}
