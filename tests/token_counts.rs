//! The production o200k counter (`mcp_pruner::tokens::count`, the `tiktoken` crate) gives exactly
//! the counts of `tiktoken-rs`, the reference port of OpenAI's tokenizer, on a mixed corpus: this
//! crate's own sources (Rust), the bench data (Rust, Python, Go, TypeScript, logs, Markdown), CJK,
//! emoji and ZWJ sequences, U+FFFD replacement characters from invalid UTF-8, special-token
//! lookalikes, odd whitespace, and 1 MiB inputs.

use std::path::Path;

fn oracle(text: &str) -> usize {
    static BPE: std::sync::LazyLock<tiktoken_rs::CoreBPE> =
        std::sync::LazyLock::new(|| tiktoken_rs::o200k_base().unwrap());
    BPE.encode_ordinary(text).len()
}

fn check(label: &str, text: &str) {
    assert_eq!(
        mcp_pruner::tokens::count(text),
        oracle(text),
        "count differs from tiktoken-rs on {label} ({} bytes)",
        text.len()
    );
}

/// Every file under `dir` with one of `exts`, sorted (deterministic); installed packages
/// (`node_modules`) and hidden directories (`.venv`) are not the project's text.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "node_modules" && !name.starts_with('.') {
                files(&p, exts, out);
            }
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
}

#[test]
fn own_sources_and_fixtures_count_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in [
        "src",
        "tests",
        "benches",
        "schemas",
        "bench-data/fixtures",
        "interop",
    ] {
        files(
            &root.join(dir),
            &[
                "rs", "json", "py", "mjs", "js", "ts", "md", "txt", "log", "sh", "toml",
            ],
            &mut paths,
        );
    }
    assert!(paths.len() > 50, "corpus too small: {}", paths.len());
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        check(&p.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn bench_cases_count_exactly() {
    // Code in several languages, logs and docs that nobody on this project wrote.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data");
    let mut n = 0;
    for name in ["quality.jsonl", "realistic.jsonl"] {
        let Ok(data) = std::fs::read_to_string(root.join(name)) else {
            continue;
        };
        for (i, line) in data.lines().enumerate().filter(|(i, _)| i % 3 == 0) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            check(&format!("{name} case {i}"), v["text"].as_str().unwrap());
            check(&format!("{name} query {i}"), v["query"].as_str().unwrap());
            n += 1;
        }
    }
    assert!(n > 50, "bench data missing: {n} cases");
}

#[test]
fn unicode_and_lookalikes_count_exactly() {
    let samples = [
        "日本語のテキストと漢字、ひらがな、カタカナ。中文文本：你好，世界！한국어 텍스트도 있습니다.",
        "emoji 😀😃🎉👍🏽 and ZWJ families 👨‍👩‍👧‍👦 🏳️‍🌈 flags 🇫🇷🇯🇵 keycaps 1️⃣",
        "invalid \u{FFFD}\u{FFFD} bytes \u{FFFD}x\u{FFFD}\u{FFFD}\u{FFFD} replaced",
        "<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|> <|endofprompt|> <|im_start|>user",
        "tabs\t\tand\r\nCRLF\r\n\r\n   trailing   \n\u{00a0}nbsp\u{2003}em\u{200b}zwsp\u{feff}bom",
        "numbers 1234567890 3.14159 0xDEADBEEF 1e-9 -42 ١٢٣ ४५६",
        "Ελληνικά, русский текст, العربية, עברית, हिन्दी, ไทย",
        "mixedCamelCaseIdentifiers snake_case_names SCREAMING_CASE kebab-case-names",
        "'s 't 're 've 'm 'll 'd 'S 'T 'RE DON'T won't",
        "  \n\n\n    \n\t\n   x\n\n/\n//\n/// doc\n}\n/",
    ];
    for s in samples {
        check(s, s);
        check("repeated sample", &s.repeat(37));
    }
}

#[test]
fn one_mib_inputs_count_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut code = String::new();
    let mut paths = Vec::new();
    files(&root.join("src"), &["rs"], &mut paths);
    while code.len() < 1 << 20 {
        for p in &paths {
            code.push_str(&std::fs::read_to_string(p).unwrap());
        }
    }
    check("1 MiB of Rust", &code[..code.floor_char_boundary(1 << 20)]);
    let log: String = (0..20_000)
        .map(|i| {
            format!(
                "2026-11-24T11:{:02}:{:02}.{i:03}Z WARN worker-{} request {i} took {}ms ⚠ retry\n",
                i % 60,
                i % 59,
                i % 7,
                i * 13 % 997
            )
        })
        .collect();
    check("1 MiB of logs", &log);
    let cjk = "漢字かなカナ한글😀\u{FFFD} ".repeat(1 << 20 >> 5);
    check("1 MiB of CJK and emoji", &cjk);
}
