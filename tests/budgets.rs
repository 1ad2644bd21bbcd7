//! Response budgets (seed 002) on inputs far over budget: a 5 MB file, a command printing
//! 1,000,000 lines, a grep with 100,000 matches. Each response stays within the byte budget, its
//! text says what was cut and how to get it, and paging or recovery returns every byte of the
//! original, compared exactly.

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const BUDGET: usize = 10_240;

/// Sends a request and returns (response, its exact size on the wire).
fn sized(c: &mut StdioClient, tool: &str, args: Value) -> (Value, usize) {
    let r = c.call(tool, args);
    let wire = serde_json::to_vec(&r).unwrap().len();
    let read = text(&r["result"]);
    // With output schemas, Claude Code and Codex read the structuredContent JSON instead.
    let sc = r["result"]
        .get("structuredContent")
        .map_or(0, |v| v.to_string().len());
    // The bytes on the wire: the model's text JSON-escaped, the structuredContent if sent, plus
    // the envelope and the metadata.
    let escaped = serde_json::to_string(read).unwrap().len();
    assert!(
        wire <= escaped + sc + 4096,
        "{tool}: {wire} bytes on the wire for {escaped} bytes of escaped text"
    );
    let n = read.len().max(sc);
    (r, n)
}

/// A `read` page's file text: the model's text without the closing `[truncated: …]` note.
fn page_body(result: &Value) -> String {
    let t = text(result);
    match t
        .rfind("\n[truncated: ")
        .or_else(|| t.starts_with("[truncated: ").then_some(0))
    {
        Some(i) if i > 0 => t[..i + 1].to_string(),
        Some(_) => String::new(),
        None => t.to_string(),
    }
}

/// Pages through recover_text with the given ranges until hasMore is false.
fn recover_all(c: &mut StdioClient, id: &str, ranges: Option<Value>) -> String {
    let mut out = String::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let mut args =
            json!({"prune_id": id, "include_line_numbers": false, "max_output_bytes": 4_000_000});
        if let Some(r) = &ranges {
            args["ranges"] = r.clone();
        }
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let r = c.call("recover_text", args);
        let s = &structured(&r["result"]);
        assert_valid_result("recover_text", &r["result"]);
        out.push_str(s["raw_text"].as_str().unwrap());
        if s["hasMore"] == false {
            return out;
        }
        cursor = Some(s["nextCursor"].as_str().unwrap().to_string());
    }
    panic!("recover_text never finished paging");
}

#[test]
fn five_megabyte_file() {
    let root = fixture_root();
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < 5_000_000 {
        i += 1;
        text.push_str(&format!(
            "{i:07} the quick brown fox jumps over the lazy dog — ünïcödé ✓ {}\n",
            "x".repeat((i % 40) as usize)
        ));
    }
    std::fs::write(root.path().join("big.txt"), &text).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();

    let (r, size) = sized(&mut c, "read", json!({"path":"big.txt"}));
    assert!(size <= BUDGET, "response is {size} bytes");
    assert_valid_result("read", &r["result"]);
    let s = &structured(&r["result"]);
    assert_eq!(
        (
            s["truncated"].clone(),
            s["hasMore"].clone(),
            s["bytes"].clone()
        ),
        (json!(true), json!(true), json!(text.len()))
    );
    let shown = r["result"]["content"][0]["text"].as_str().unwrap();
    let id = s["artifactRef"].as_str().unwrap();
    let end = s["end_line"].as_u64().unwrap();
    assert!(
        shown.contains(&format!("next page: read offset={}", end + 1)),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("recover_text prune_id={id}")),
        "{shown}"
    );

    // Paging with offset: the first pages are exactly the file's first lines.
    let mut paged = page_body(&r["result"]);
    let mut offset = end + 1;
    for _ in 0..3 {
        let (p, size) = sized(&mut c, "read", json!({"path":"big.txt","offset":offset}));
        assert!(size <= BUDGET);
        paged.push_str(&page_body(&p["result"]));
        offset = structured(&p["result"])["end_line"].as_u64().unwrap() + 1;
    }
    assert!(text.starts_with(&paged) && paged.len() > 3 * 4000);

    // Recovery returns every byte.
    assert_eq!(recover_all(&mut c, id, None), text);
    // A small page of recover_text also fits the default budget.
    let (r, size) = sized(&mut c, "recover_text", json!({"prune_id": id}));
    assert!(size <= BUDGET, "{size}");
    assert_eq!(structured(&r["result"])["hasMore"], true);
}

#[test]
fn a_million_lines_of_output() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let (r, size) = sized(
        &mut c,
        "bash",
        json!({"cmd":"seq 1 1000000; echo done >&2","timeout_ms":120000}),
    );
    assert!(size <= BUDGET, "response is {size} bytes");
    assert_valid_result("bash", &r["result"]);
    let s = &structured(&r["result"]);
    assert_eq!(
        (s["truncated"].clone(), s["stdout_bytes"].clone()),
        (json!(true), json!(6_888_896))
    );
    assert!(text(&r["result"]).ends_with("\n[stderr]\ndone\n"));
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    let id = s["artifactRef"].as_str().unwrap();
    assert!(text.starts_with("[exit 0"), "{text}");
    assert!(
        text.contains("\n1\n2\n3\n") && text.contains("\n1000000\n"),
        "head and tail are shown"
    );
    let marker = text
        .lines()
        .find(|l| l.starts_with("⟦… lines "))
        .expect("an omission marker");
    assert!(
        marker.contains(&format!("recover_text prune_id={id} ranges=")),
        "{marker}"
    );
    let expected: String = (1..=1_000_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(recover_all(&mut c, id, None), expected);
    // The marker's range is exactly what is missing from the text.
    let nums: Vec<&str> = marker
        .split(|ch: char| !ch.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .collect();
    let (a, b): (usize, usize) = (nums[0].parse().unwrap(), nums[1].parse().unwrap());
    let missing = recover_all(&mut c, id, Some(json!([{"start_line": a, "end_line": b}])));
    assert!(missing.starts_with(&format!("{a}\n")) && missing.ends_with(&format!("{b}\n")));
}

#[test]
fn a_hundred_thousand_grep_matches() {
    let root = fixture_root();
    let body: String = (1..=100_000).map(|i| format!("needle {i}\n")).collect();
    std::fs::write(root.path().join("hay.txt"), &body).unwrap();
    let mut c = StdioClient::spawn(root.path(), &["--output-schemas"]); // matches in structuredContent
    c.initialize();
    let (r, size) = sized(
        &mut c,
        "grep",
        json!({"pattern":"needle","paths":["hay.txt"]}),
    );
    assert!(size <= BUDGET, "response is {size} bytes");
    assert_valid_result("grep", &r["result"]);
    let s = &structured(&r["result"]);
    assert_eq!(
        (s["match_count"].clone(), s["hasMore"].clone()),
        (json!(100_000), json!(true))
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("next page: grep with cursor=")
            && text.contains("all matches: recover_text prune_id="),
        "{text}"
    );

    // Every match, by cursor paging, in order, no gap and no repeat.
    let mut lines = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"pattern":"needle","paths":["hay.txt"],"max_matches":5000,"max_output_bytes":4_000_000});
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let p = structured(&c.call("grep", args)["result"]);
        lines.extend(
            p["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["line"].as_u64().unwrap()),
        );
        match p["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(lines, (1..=100_000).collect::<Vec<u64>>());
    // And as one artifact.
    let id = s["artifactRef"].as_str().unwrap();
    let expected: String = (1..=100_000)
        .map(|i| format!("hay.txt:{i}:1: needle {i}\n"))
        .collect();
    assert_eq!(recover_all(&mut c, id, None), expected);
}

#[test]
fn budget_can_be_raised_per_call_and_by_flag() {
    let root = fixture_root();
    std::fs::write(root.path().join("mid.txt"), "y".repeat(79) + "\n").unwrap();
    let mid: String = (0..500).map(|i| format!("{i:079}\n")).collect();
    std::fs::write(root.path().join("mid.txt"), &mid).unwrap();
    let mut c = StdioClient::spawn(root.path(), &["--max-output-bytes", "200000"]);
    c.initialize();
    let r = c.call("read", json!({"path":"mid.txt"}));
    assert_eq!(text(&r["result"]), mid, "a 40 KB file fits a 200 KB budget");
    let (r, size) = sized(
        &mut c,
        "read",
        json!({"path":"mid.txt","max_output_bytes":4096}),
    );
    assert!(size <= 4096 && structured(&r["result"])["truncated"] == true);
    let tools = c.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][0]["_meta"]["anthropic/maxResultSizeChars"], 200_000,
        "Claude Code is told to show our bigger results inline"
    );
    let _ = Duration::ZERO;
}

#[test]
fn long_arguments_and_long_lines_stay_within_budget_and_recover_exactly() {
    let root = fixture_root();
    let long_line = format!("needle {}", "é".repeat(3000));
    std::fs::write(
        root.path().join("wide.txt"),
        format!("{long_line}\nneedle short\n"),
    )
    .unwrap();
    let mut c = StdioClient::spawn(root.path(), &["--output-schemas"]); // matches in structuredContent
    c.initialize();
    // A 40,000-character command is echoed clipped, with a count, so the result fits.
    let cmd = format!(": {}; echo done", "A".repeat(40_000));
    let (r, size) = sized(&mut c, "bash", json!({ "cmd": cmd }));
    assert!(size <= BUDGET, "bash result is {size} bytes");
    let echoed = structured(&r["result"])["cmd"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        echoed.ends_with(&format!("…[+{} bytes]", cmd.len() - 500)),
        "{echoed}"
    );
    assert!(text(&r["result"]).ends_with("\ndone\n"), "{r}");
    // A match line over 500 bytes is shown clipped with a count; the artifact keeps it whole.
    let (r, size) = sized(
        &mut c,
        "grep",
        json!({"pattern":"needle","paths":["wide.txt"],"max_matches":1}),
    );
    assert!(size <= BUDGET, "grep result is {size} bytes");
    let s = &structured(&r["result"]);
    let shown = s["matches"][0]["text"].as_str().unwrap();
    assert!(shown.len() < 600 && shown.contains("…[+"), "{shown}");
    let id = s["artifactRef"].as_str().unwrap();
    assert_eq!(
        recover_all(&mut c, id, None),
        format!("wide.txt:1:1: {long_line}\nwide.txt:2:1: needle short\n")
    );
    // A single clipped match, nothing left for later pages: still an artifact with the whole line.
    std::fs::write(root.path().join("one.txt"), format!("{long_line}\n")).unwrap();
    let r = c.call("grep", json!({"pattern":"needle","paths":["one.txt"]}));
    let s = &structured(&r["result"]);
    assert_eq!(s["hasMore"], false);
    let id = s["artifactRef"]
        .as_str()
        .expect("an artifact for the clipped line");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("recover_text prune_id={id}"))
    );
    assert_eq!(
        recover_all(&mut c, id, None),
        format!("one.txt:1:1: {long_line}\n")
    );
}
