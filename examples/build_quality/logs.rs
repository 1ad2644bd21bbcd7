//! Logs cases: real output of failing test suites and builds. The fixtures in
//! `bench-data/fixtures/` are copied to a scratch directory and run with `cargo` (offline, using
//! crates already in the registry cache) and `python3`; the captured output (stdout and stderr
//! interleaved, as a terminal shows it) is the text, and the gold lines are the failure block the
//! query asks about, located in that output by its framing lines.

use crate::Case;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Phrasings of a question about one failing test (picked by position, deterministic).
const ASK: &[&str] = &[
    "why does {} fail",
    "fix the failing test {}",
    "{} assertion failure",
    "what breaks in {}",
];

pub fn cases(fixtures: &Path) -> Vec<Case> {
    let scratch = std::env::temp_dir().join("mcp-pruner-quality");
    let _ = std::fs::remove_dir_all(&scratch);
    let mut out = Vec::new();
    out.extend(cargo_cases(fixtures, &scratch));
    out.extend(python_cases(fixtures, &scratch));
    out
}

fn copy_fixture(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("scratch dir");
    for entry in std::fs::read_dir(src).expect("fixture dir").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().replace(".in", "");
        if path.is_dir() {
            copy_fixture(&path, &dst.join(name));
        } else {
            std::fs::copy(&path, dst.join(name)).expect("copy fixture");
        }
    }
}

/// Runs `program args` in `dir` with `env`, returning stdout + stderr as one text via a shell
/// redirection so that the interleaving is the one a terminal would show.
fn run(dir: &Path, command: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{command} 2>&1"))
        .current_dir(dir);
    cmd.env_remove("CARGO_TARGET_DIR")
        .env_remove("RUST_BACKTRACE")
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {command}: {e}"));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A cargo command, its extra environment, and the failing tests to ask about (`*` = all).
type CargoRun<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);

fn cargo_cases(fixtures: &Path, scratch: &Path) -> Vec<Case> {
    let project = scratch.join("textkit");
    copy_fixture(&fixtures.join("cargo_failing"), &project);
    let runs: [CargoRun; 4] = [
        (
            "cargo test --offline",
            &[],
            &[
                "text_tests::slugify_punctuation_runs",
                "data_tests::parse_config_trailing_comma",
                "math_tests::factorial_large",
                "*",
            ],
        ),
        (
            "cargo test --offline data_tests",
            &[("RUST_BACKTRACE", "1")],
            &[
                "data_tests::flatten_dotted",
                "data_tests::parse_config_trailing_comma",
            ],
        ),
        (
            "cargo test --offline -- --test-threads=1 text_tests",
            &[],
            &[
                "text_tests::nth_word_past_end",
                "text_tests::emails_plus_tag",
            ],
        ),
        (
            "cargo test --offline --release math_tests",
            &[],
            &[
                "math_tests::median_even",
                "math_tests::window_sums_zero_window_panics",
            ],
        ),
    ];
    let mut out = Vec::new();
    for (command, env, targets) in runs {
        let log = run(&project, command, env);
        for target in targets {
            out.extend(cargo_case(&log, command, target, out.len()));
        }
    }
    let broken = scratch.join("inventory");
    copy_fixture(&fixtures.join("cargo_compile_error"), &broken);
    let log = run(&broken, "cargo build --offline", &[]);
    let blocks = rustc_errors(&log);
    let asks = [
        "why does the build fail",
        "fix the compile error in total_value",
        "mismatched types in from_json",
    ];
    for (k, query) in asks.iter().enumerate() {
        let gold: Vec<usize> = match k {
            0 => blocks.iter().flatten().copied().collect(),
            1 => blocks
                .iter()
                .find(|b| {
                    b.iter().any(|&l| {
                        log.lines()
                            .nth(l - 1)
                            .is_some_and(|t| t.contains("price_cents).sum()"))
                    })
                })
                .cloned()
                .unwrap_or_default(),
            _ => blocks
                .iter()
                .find(|b| {
                    b.iter().any(|&l| {
                        log.lines().nth(l - 1).is_some_and(|t| {
                            t.contains("as_u64().unwrap(),") && t.contains("quantity")
                        })
                    })
                })
                .cloned()
                .unwrap_or_default(),
        };
        if !gold.is_empty() {
            out.push(Case {
                query: query.to_string(),
                text: log.clone(),
                source_type: "logs",
                gold_lines: gold,
                origin: "cargo build --offline (fixtures/cargo_compile_error)".into(),
            });
        }
    }
    out
}

/// A case asking about failing test `target` (or all failures for `*`).
fn cargo_case(log: &str, command: &str, target: &str, k: usize) -> Option<Case> {
    let lines: Vec<&str> = log.lines().collect();
    let blocks = cargo_failure_blocks(&lines);
    let (query, gold): (String, Vec<usize>) = if target == "*" {
        (
            "why do the tests fail".into(),
            blocks.iter().flat_map(|(_, b)| b.clone()).collect(),
        )
    } else {
        let name = target.rsplit("::").next().unwrap_or(target);
        let block = blocks.iter().find(|(t, _)| t == target)?;
        (ASK[k % ASK.len()].replace("{}", name), block.1.clone())
    };
    (!gold.is_empty()).then(|| Case {
        query,
        text: log.to_string(),
        source_type: "logs",
        gold_lines: gold,
        origin: format!("{command} (fixtures/cargo_failing)"),
    })
}

/// `---- name stdout ----` blocks: (test name, 1-based lines up to the last non-blank line before
/// the next block or the `failures:` list).
fn cargo_failure_blocks(lines: &[&str]) -> Vec<(String, Vec<usize>)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        else {
            continue;
        };
        let mut end = i + 1;
        while end < lines.len()
            && !lines[end].starts_with("---- ")
            && lines[end].trim() != "failures:"
        {
            end += 1;
        }
        while end > i + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        out.push((name.to_string(), (i + 1..=end).collect()));
    }
    out
}

/// rustc `error[...]` / `error:` blocks up to the blank line that ends each (1-based lines),
/// without the final `error: could not compile` summary.
fn rustc_errors(log: &str) -> Vec<Vec<usize>> {
    let lines: Vec<&str> = log.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !(line.starts_with("error[") || line.starts_with("error:"))
            || line.contains("could not compile")
        {
            continue;
        }
        let mut end = i + 1;
        while end < lines.len() && !lines[end].trim().is_empty() {
            end += 1;
        }
        out.push((i + 1..=end).collect());
    }
    out
}

fn python_cases(fixtures: &Path, scratch: &Path) -> Vec<Case> {
    let dir: PathBuf = scratch.join("ledger");
    copy_fixture(&fixtures.join("py_failing"), &dir);
    let runs: [(&str, &[&str]); 4] = [
        (
            "python3 -m unittest -v test_ledger",
            &[
                "test_thousands_separator",
                "test_load_single_quotes",
                "test_split_sums_to_total",
            ],
        ),
        (
            "python3 -m unittest -v test_textutil test_ledger",
            &["test_float_sum", "test_mean_empty", "*"],
        ),
        ("python3 -m unittest test_textutil", &["test_shorten"]),
        ("python3 nightly_import.py", &["!"]),
    ];
    let mut out = Vec::new();
    for (command, targets) in runs {
        let log = run(&dir, command, &[("PYTHONDONTWRITEBYTECODE", "1")]);
        let lines: Vec<&str> = log.lines().collect();
        for target in targets {
            let (query, gold): (String, Vec<usize>) = match *target {
                "*" => (
                    "why do the tests fail".into(),
                    unittest_blocks(&lines)
                        .into_iter()
                        .flat_map(|(_, b)| b)
                        .collect(),
                ),
                "!" => (
                    "why does the nightly import crash".into(),
                    traceback_block(&lines),
                ),
                name => {
                    let Some((_, block)) =
                        unittest_blocks(&lines).into_iter().find(|(t, _)| t == name)
                    else {
                        continue;
                    };
                    (ASK[(out.len() + 1) % ASK.len()].replace("{}", name), block)
                }
            };
            if !gold.is_empty() {
                out.push(Case {
                    query,
                    text: log.clone(),
                    source_type: "logs",
                    gold_lines: gold,
                    origin: format!("{command} (fixtures/py_failing)"),
                });
            }
        }
    }
    out
}

/// unittest `FAIL: name (...)` / `ERROR: name (...)` blocks: the header line through the last
/// non-blank line before the next `=====` or `-----` separator that follows the traceback.
fn unittest_blocks(lines: &[&str]) -> Vec<(String, Vec<usize>)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .strip_prefix("FAIL: ")
            .or_else(|| line.strip_prefix("ERROR: "))
        else {
            continue;
        };
        let name = rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        let mut end = i + 2;
        while end < lines.len()
            && !lines[end].starts_with("=====")
            && !lines[end].starts_with("-----")
        {
            end += 1;
        }
        while end > i + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        out.push((name, (i + 1..=end).collect()));
    }
    out
}

/// The last `Traceback` through the end of the output (1-based lines).
fn traceback_block(lines: &[&str]) -> Vec<usize> {
    let Some(start) = lines
        .iter()
        .rposition(|l| l.starts_with("Traceback (most recent call last)"))
    else {
        return Vec::new();
    };
    let mut end = lines.len();
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    (start + 1..=end).collect()
}
