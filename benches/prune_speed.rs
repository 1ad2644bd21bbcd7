//! Pruning speed benchmark (not a test): time to plan and render code (real registry sources
//! concatenated), logs (a deterministic generator of realistic service logs with warnings,
//! errors and stack traces) and docs (registry Markdown concatenated) at 64 KiB, 256 KiB, 1 MiB,
//! 4 MiB and 8 MiB, plus o200k token counting of 1 MiB for scale.
//!
//! Run: `cargo bench --bench prune_speed`.

use mcp_pruner::contract::types::SourceType;
use mcp_pruner::prune::engine::{self, Limits};
use mcp_pruner::prune::render;
use mcp_pruner::tokens;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const KIB: usize = 1024;
const SIZES: [usize; 5] = [64 * KIB, 256 * KIB, 1024 * KIB, 4096 * KIB, 8192 * KIB];

fn main() {
    let registry = registry_root();
    let code = concat_files(&registry, ".rs", SIZES[4]);
    let docs = concat_files(&registry, ".md", SIZES[4]);
    let logs = synthetic_logs(SIZES[4]);
    println!(
        "pruning speed (plan + render, best of 3), limits max_prune_ratio 0.8, min_keep_lines 20"
    );
    println!(
        "{:<5} {:>9} {:>9} {:>10} {:>9} {:>8}",
        "kind", "size", "lines", "ms", "MiB/s", "kept%"
    );
    let cases = [
        (
            "code",
            &code,
            SourceType::Code,
            "parse the request header value and return an error on invalid utf8",
        ),
        (
            "logs",
            &logs,
            SourceType::Logs,
            "why does the payment worker time out talking to the ledger database",
        ),
        (
            "docs",
            &docs,
            SourceType::Docs,
            "how to configure the features for no_std builds",
        ),
    ];
    for (name, corpus, source, goal) in cases {
        for size in SIZES {
            let text = prefix(corpus, size);
            let (elapsed, lines, kept) = time(text, goal, source);
            let mib = text.len() as f64 / (KIB * KIB) as f64;
            println!(
                "{:<5} {:>9} {:>9} {:>10.1} {:>9.1} {:>7.1}%",
                name,
                human(size),
                lines,
                elapsed.as_secs_f64() * 1e3,
                mib / elapsed.as_secs_f64(),
                100.0 * kept as f64 / lines.max(1) as f64
            );
        }
    }
    // Code of each language of the code sets (their files concatenated in order, repeated to the
    // size): the scanners differ (indentation for Python and Ruby, quotes and templates for
    // JS/TS, preprocessor lines for C). The baseline, measured in the same run on the same text,
    // is counting its o200k tokens once (what every pruned call does anyway).
    println!(
        "\ncode per language, files of bench-data/{{realistic,multilang,unseen,margin,config,langs2,langs3,langs4,langs6}}.jsonl (plan + render, best of 3; x = plan time / o200k count time)"
    );
    let texts = set_texts(&[
        "realistic.jsonl",
        "multilang.jsonl",
        "unseen.jsonl",
        "margin.jsonl",
        "config.jsonl",
        "langs2.jsonl",
        "langs3.jsonl",
        "langs4.jsonl",
        "langs6.jsonl",
    ]);
    let mut languages: Vec<&str> = texts.iter().map(|(l, _)| l.as_str()).collect();
    languages.sort_unstable();
    languages.dedup();
    for language in languages {
        for size in [100 * 1000, KIB * KIB] {
            let text = language_code(&texts, language, size);
            let (elapsed, lines, kept) = time(&text, cases[0].3, SourceType::Code);
            let mut count = Duration::MAX;
            for _ in 0..3 {
                let start = Instant::now();
                std::hint::black_box(tokens::count(&text));
                count = count.min(start.elapsed());
            }
            println!(
                "{:<10} {:>8} {:>7} lines {:>8.1} ms {:>5.1}x {:>6.1}% kept",
                language,
                if size == KIB * KIB { "1 MiB" } else { "100 KB" },
                lines,
                elapsed.as_secs_f64() * 1e3,
                elapsed.as_secs_f64() / count.as_secs_f64(),
                100.0 * kept as f64 / lines.max(1) as f64
            );
        }
    }
    // Token counting, ours (the `tiktoken` crate) against the reference port `tiktoken-rs` (what
    // this server used before), on the same 1 MiB of code and of logs, best of three, warm.
    println!("\no200k token counting, 1 MiB, best of 3 (warm): ours vs tiktoken-rs");
    let reference = tiktoken_rs::o200k_base().expect("o200k ranks");
    for (name, text) in [
        ("code", prefix(&code, KIB * KIB)),
        ("logs", prefix(&logs, KIB * KIB)),
    ] {
        let mib = text.len() as f64 / (KIB * KIB) as f64;
        let best = |f: &dyn Fn() -> usize| {
            let mut best = Duration::MAX;
            let mut n = 0;
            for _ in 0..3 {
                let start = Instant::now();
                n = f();
                best = best.min(start.elapsed());
            }
            (n, best)
        };
        let _ = tokens::count(text);
        let (n, ours) = best(&|| tokens::count(text));
        let (m, theirs) = best(&|| reference.encode_ordinary(text).len());
        assert_eq!(n, m, "token counts differ");
        println!(
            "{name:<5} {n} tokens: ours {:.1} ms ({:.0} MiB/s), tiktoken-rs {:.1} ms ({:.1} MiB/s): {:.1}x",
            ours.as_secs_f64() * 1e3,
            mib / ours.as_secs_f64(),
            theirs.as_secs_f64() * 1e3,
            mib / theirs.as_secs_f64(),
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }
}

/// Best of three runs of split + plan + render: (time, lines, kept lines).
fn time(text: &str, goal: &str, source: SourceType) -> (Duration, usize, usize) {
    let mut best = Duration::MAX;
    let mut out = (0, 0);
    for _ in 0..3 {
        let start = Instant::now();
        let lines = engine::split_lines(text);
        let plan = engine::plan(&lines, goal, source, &Limits::default());
        let r = render::render(
            &lines,
            &plan,
            "prn_01JBENCHSPEED000000000000",
            false,
            render::Markers::Compact,
            text.ends_with('\n'),
        );
        best = best.min(start.elapsed());
        out = (lines.len(), r.kept_lines);
        std::hint::black_box(r);
    }
    (best, out.0, out.1)
}

/// The code texts of the given files of `bench-data/`, as (language, text), in order.
fn set_texts(files: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in files {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("bench-data")
            .join(file);
        let data =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.extend(
            data.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON row"))
                .filter(|r| r["source_type"] == "code")
                .filter_map(|r| {
                    Some((
                        r["language"].as_str()?.to_owned(),
                        r["text"].as_str()?.to_owned(),
                    ))
                }),
        );
    }
    out
}

/// `size` bytes (cut at a line end) of the `texts` of `language`, concatenated in order and
/// repeated if they hold less.
fn language_code(texts: &[(String, String)], language: &str, size: usize) -> String {
    let of_language: Vec<&str> = texts
        .iter()
        .filter(|(l, _)| l == language)
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(!of_language.is_empty(), "no {language} code in the sets");
    let mut text = String::with_capacity(size + KIB * KIB);
    for t in of_language.iter().cycle() {
        if text.len() >= size {
            break;
        }
        text.push_str(t);
        text.push('\n');
    }
    prefix(&text, size).to_owned()
}

/// The nominal size of a run (the text is cut at the last line boundary below it).
fn human(bytes: usize) -> String {
    if bytes >= KIB * KIB {
        format!("{} MiB", bytes / (KIB * KIB))
    } else {
        format!("{} KiB", bytes / KIB)
    }
}

/// The longest prefix of `text` of at most `size` bytes ending at a line boundary.
fn prefix(text: &str, size: usize) -> &str {
    if text.len() <= size {
        return text;
    }
    let cut = text[..size].rfind('\n').map_or(size, |i| i + 1);
    &text[..cut]
}

fn registry_root() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME").map_or_else(
        || PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cargo"),
        PathBuf::from,
    );
    home.join("registry/src")
}

/// Files ending with `suffix` under `dir` (sorted, recursively) concatenated up to `size` bytes
/// (repeated if the registry holds less).
fn concat_files(dir: &Path, suffix: &str, size: usize) -> String {
    let mut files = Vec::new();
    collect(dir, suffix, &mut files);
    let mut out = String::with_capacity(size + 64 * KIB);
    if files.is_empty() {
        panic!("no {suffix} files under {}", dir.display());
    }
    while out.len() < size {
        for f in &files {
            if let Ok(t) = std::fs::read_to_string(f) {
                out.push_str(&t);
                if !t.ends_with('\n') {
                    out.push('\n');
                }
            }
            if out.len() >= size {
                break;
            }
        }
    }
    out
}

fn collect(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, suffix, out);
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
}

/// Service logs: mostly INFO request lines, DEBUG pool lines, periodic heartbeats (repeated),
/// occasional WARN retries, and rare ERRORs followed by a Java-style or Python stack trace.
fn synthetic_logs(size: usize) -> String {
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m
    };
    let services = ["api", "payment-worker", "ledger", "auth", "scheduler"];
    let paths = [
        "/v1/orders",
        "/v1/payments",
        "/v1/users/me",
        "/healthz",
        "/v1/invoices/search",
    ];
    let mut out = String::with_capacity(size + KIB);
    let mut t = 0u64;
    while out.len() < size {
        t += 1 + next(40);
        let ts = format!(
            "2026-03-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + t / 86_400_000 % 28,
            t / 3_600_000 % 24,
            t / 60_000 % 60,
            t / 1000 % 60,
            t % 1000
        );
        let svc = services[next(5) as usize];
        match next(1000) {
            0..=2 => {
                out.push_str(&format!("{ts} ERROR {svc} request failed: timeout after 30000ms talking to ledger-db:5432\n"));
                out.push_str("java.net.SocketTimeoutException: Read timed out\n");
                for f in 0..(4 + next(8)) {
                    out.push_str(&format!(
                        "\tat com.example.ledger.Client.call{f}(Client.java:{})\n",
                        100 + next(400)
                    ));
                }
            }
            3..=5 => {
                out.push_str(&format!(
                    "{ts} ERROR {svc} unhandled exception in job {}\n",
                    next(100_000)
                ));
                out.push_str("Traceback (most recent call last):\n");
                out.push_str(&format!(
                    "  File \"/srv/{svc}/jobs.py\", line {}, in run\n    self.step()\n",
                    next(500)
                ));
                out.push_str("KeyError: 'account_id'\n");
            }
            6..=40 => out.push_str(&format!(
                "{ts} WARN  {svc} retrying call to ledger-db (attempt {} of 5)\n",
                1 + next(4)
            )),
            41..=200 => out.push_str(&format!(
                "{ts} DEBUG {svc} pool stats active={} idle={} waiting={}\n",
                next(32),
                next(16),
                next(4)
            )),
            201..=260 => {
                for _ in 0..(1 + next(6)) {
                    out.push_str(&format!("{ts} INFO  {svc} heartbeat ok\n"));
                }
            }
            _ => out.push_str(&format!(
                "{ts} INFO  {svc} {} {} -> {} in {}ms req_id={:016x}\n",
                ["GET", "POST", "PUT"][next(3) as usize],
                paths[next(5) as usize],
                [200, 200, 200, 201, 204, 404][next(6) as usize],
                next(900),
                next(u64::MAX)
            )),
        }
    }
    out
}
