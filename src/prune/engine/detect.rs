//! Guessing whether a text is code, logs or docs: by file name when a path is given, else by
//! counting telltale lines in the first few thousand lines.
//!
//! Owns the guess only. It must never touch the file system: the path is looked at as a string.

use crate::contract::types::SourceType;

/// Lines looked at when guessing from content.
const SAMPLE_LINES: usize = 4000;

/// Extensions of code files. A language whose comments start with `#` must be here: read by its
/// content, a file of `# banner` comments looks like Markdown headings (CoffeeScript, Nim, Tcl,
/// Starlark, Crystal), and one of `--` banners like prose (Ada).
const CODE_EXTENSIONS: &[&str] = &[
    "adb", "ads", "bash", "bat", "bzl", "c", "cc", "cfg", "cjs", "clj", "cmake", "coffee", "cpp",
    "cr", "cs", "css", "cxx", "dart", "el", "erl", "ex", "exs", "fish", "fs", "go", "gradle",
    "graphql", "groovy", "h", "hcl", "hh", "hpp", "hs", "htm", "html", "hxx", "ini", "java", "jl",
    "js", "json", "json5", "jsonc", "jsx", "kt", "kts", "less", "lua", "m", "mjs", "mk", "ml",
    "mli", "mm", "nim", "nims", "nix", "php", "pl", "pm", "proto", "ps1", "py", "pyi", "r", "rb",
    "rs", "sass", "scala", "scss", "sh", "sol", "sql", "star", "svelte", "swift", "tcl", "tf",
    "toml", "ts", "tsx", "v", "vue", "xml", "yaml", "yml", "zig", "zsh",
];
const DOC_EXTENSIONS: &[&str] = &[
    "adoc", "asciidoc", "markdown", "md", "mdown", "mdx", "org", "rst", "rtf", "tex", "textile",
];
const LOG_EXTENSIONS: &[&str] = &["err", "log", "out", "trace"];
const CODE_NAMES: &[&str] = &[
    "build",
    "cmakelists.txt",
    "dockerfile",
    "gemfile",
    "justfile",
    "makefile",
    "rakefile",
    "vagrantfile",
    "workspace",
];
const DOC_NAMES: &[&str] = &[
    "authors",
    "changelog",
    "contributing",
    "copying",
    "license",
    "notice",
    "readme",
];

/// Guesses the source type: by extension or well-known file name when `path` is given and known
/// (`.rs .py .js .ts .go .java .c .h .cpp .rb .sh .toml .json ...` -> code, `.md .rst .adoc` ->
/// docs, `.log` -> logs), else from the content; plain text with no telltale line is docs. A
/// `.txt` file is judged by its content: it is as often a saved command output (`> out.txt`, a
/// CI run's downloaded log) as prose.
pub fn detect_source_type(text: &str, path: Option<&str>) -> SourceType {
    path.and_then(by_path).unwrap_or_else(|| by_content(text))
}

fn by_path(path: &str) -> Option<SourceType> {
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    if CODE_NAMES.contains(&name.as_str()) {
        return Some(SourceType::Code);
    }
    let stem = name.split('.').next().unwrap_or("");
    let parts: Vec<&str> = name.split('.').skip(1).collect();
    // Rotated logs keep `.log` before their suffix: `app.log.1`, `app.log.2024-05-01`.
    if parts.contains(&"log") {
        return Some(SourceType::Logs);
    }
    match parts.last() {
        Some(ext) if CODE_EXTENSIONS.contains(ext) => Some(SourceType::Code),
        Some(ext) if DOC_EXTENSIONS.contains(ext) => Some(SourceType::Docs),
        Some(ext) if LOG_EXTENSIONS.contains(ext) => Some(SourceType::Logs),
        None if DOC_NAMES.contains(&stem) => Some(SourceType::Docs),
        _ => None,
    }
}

fn by_content(text: &str) -> SourceType {
    let (mut code, mut logs, mut docs, mut total) = (0usize, 0usize, 0usize, 0usize);
    // Inside a Markdown fence: an example, not what the text is.
    let mut fenced = false;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(SAMPLE_LINES)
    {
        total += 1;
        let fence = line.starts_with("```") || line.starts_with("~~~");
        if fence || fenced {
            fenced ^= fence;
            continue;
        }
        let plain;
        let line = if line.contains('\x1b') {
            plain = super::logs::strip_ansi(line);
            plain.as_str()
        } else {
            line
        };
        let t = line.trim();
        if banner(t) {
            // A test run's banner: what follows quotes source code and is still its output.
            logs += BANNER_VOTES;
        } else if looks_like_log(line, t) {
            logs += 1;
        } else if markdown(line) {
            docs += 1;
        } else if looks_like_code(t) {
            code += 1;
        } else if looks_like_doc(t) {
            docs += 1;
        }
    }
    if total == 0 || code.max(logs).max(docs) * 10 < total {
        return SourceType::Docs;
    }
    if logs >= code && logs >= docs {
        SourceType::Logs
    } else if code >= docs {
        SourceType::Code
    } else {
        SourceType::Docs
    }
}

/// Votes of a test run's banner line ([`banner`]): a failing run's report quotes as many lines of
/// source (pytest's failure sections) as it prints lines of its own.
const BANNER_VOTES: usize = 20;

/// A line only a test runner prints: pytest's `=== test session starts ===`, `=== FAILURES ===`,
/// `short test summary info`, `=== 3 failed, 97 passed in 1.2s ===`; cargo's `test result:`.
fn banner(t: &str) -> bool {
    (t.starts_with("===")
        && [
            "test session starts",
            "FAILURES",
            "ERRORS",
            "short test summary info",
            " passed",
            " failed",
        ]
        .iter()
        .any(|w| t.contains(w)))
        || t.starts_with("test result: ")
}

fn looks_like_log(line: &str, t: &str) -> bool {
    const LEVELS: &[&str] = &[
        " INFO ",
        " DEBUG ",
        " WARN ",
        " ERROR ",
        " TRACE ",
        "[INFO]",
        "[DEBUG]",
        "[WARN]",
        "[ERROR]",
        "[TRACE]",
        " PASSED ",
        " FAILED ",
        " SKIPPED ",
    ];
    const PREFIXES: &[&str] = &[
        "Compiling ",
        "Running ",
        "Finished ",
        "Checking ",
        "Downloaded ",
        "error[",
        "error:",
        "warning:",
        "Traceback (most recent call last)",
        "File \"",
        "thread '",
        "FAIL:",
        "ERROR:",
        "PASS ",
        "FAIL ",
        "npm ERR!",
        "npm error",
        "npm http ",
        "npm WARN",
        "npm notice",
        "npm timing",
        "> Task ",
        "=== RUN",
        "--- FAIL",
        "--- PASS",
        "FAILURE:",
        "BUILD FAILED",
        "make: ***",
        "make[",
        "gcc ",
        "g++ ",
        "clang ",
        "cc1: ",
        "panic:",
        "Exception in thread",
        "at ",
        "---- ",
    ];
    let head = &line.as_bytes()[..line.len().min(32)];
    let timestamp = head.windows(8).any(|w| {
        w[2] == b':'
            && w[5] == b':'
            && w.iter()
                .enumerate()
                .all(|(k, b)| k == 2 || k == 5 || b.is_ascii_digit())
    }) || head.windows(10).any(|w| {
        w[4] == b'-'
            && w[7] == b'-'
            && w.iter()
                .enumerate()
                .all(|(k, b)| k == 4 || k == 7 || b.is_ascii_digit())
    });
    // A compiler diagnostic's source gutter (`109 |     let x = …`) and its notes.
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let gutter = digits > 0 && t[digits..].trim_start().starts_with('|');
    timestamp
        || gutter
        || ["--> ", "= note: ", "= help: ", "note: ", "help: "]
            .iter()
            .any(|p| t.starts_with(p))
        || LEVELS.iter().any(|l| line.contains(l))
        || PREFIXES.iter().any(|p| t.starts_with(p))
        || (t.starts_with("test ")
            && (t.ends_with(" ok") || t.ends_with("FAILED") || t.ends_with("ignored")))
        || t.ends_with("... ok")
        || t.ends_with("PASSED")
        || t.ends_with("FAILED")
}

fn looks_like_code(t: &str) -> bool {
    const STARTS: &[&str] = &[
        "fn ",
        "pub ",
        "def ",
        "class ",
        "import ",
        "from ",
        "use ",
        "#include",
        "return",
        "let ",
        "const ",
        "var ",
        "function ",
        "if (",
        "for (",
        "while (",
        "} else",
        "package ",
        "func ",
        "struct ",
        "impl ",
        "enum ",
        "trait ",
        "mod ",
        "#[",
        "@",
        "//",
        "/*",
        "* ",
        "*/",
        "self.",
        "elif ",
        "else:",
        "try:",
        "except",
        "async ",
        "static ",
        "private ",
        "public ",
        "protected ",
        "type ",
        "interface ",
        "#!",
    ];
    const ENDS: &[char] = &['{', '}', ';', '(', '[', ')', ']'];
    // Block ends (Ruby, Julia, Lua, Elixir), equations and clause heads (Haskell, Elm, Erlang,
    // OCaml), type signatures, JSON members, markup elements.
    let shapes = t == "end"
        || t.starts_with("end ")
        || t.starts_with(", ")
        || t.ends_with(" =")
        || t.ends_with("->")
        || t.contains(" :: ")
        || (t.starts_with('"') && t.contains("\":"))
        || (t.starts_with('<') && t.ends_with('>'))
        || t.ends_with(" do")
        || t.ends_with(" where")
        || (t.starts_with("| ") && !t.ends_with('|'))
        || yaml_key(t);
    STARTS.iter().any(|s| t.starts_with(s))
        || t.ends_with(ENDS)
        || shapes
        || (t.ends_with(':') && (t.starts_with("if ") || t.starts_with("for ")))
}

/// A YAML mapping key (`name:`, `- run: cargo test`, `runs-on: ubuntu-latest`): a word of
/// letters, digits, `_`, `-` or `.` before a colon that ends the line or is followed by a space.
fn yaml_key(t: &str) -> bool {
    let t = t.strip_prefix("- ").unwrap_or(t);
    let Some((key, rest)) = t.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && (rest.is_empty() || rest.starts_with(' '))
}

/// A line only Markdown writes: a list item at the margin (a comment's ` * ` is indented), a
/// link to an address, a file or an anchor (`[text](https://…)`; not `handlers[k](x)`), an
/// image, a table row.
fn markdown(line: &str) -> bool {
    const LINKS: &[&str] = &["](http", "](#", "](./", "](../", "](/", ".md)", "]: http"];
    // At the margin and not behind a comment sign: code's doc comments write Markdown too.
    let prose = line
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '[' || c == '*');
    line.starts_with("* ")
        || line.starts_with("![")
        || (prose && LINKS.iter().any(|l| line.contains(l)))
        || (line.starts_with('|') && line.trim_end().ends_with('|'))
}

fn looks_like_doc(t: &str) -> bool {
    if t.starts_with('#') || t.starts_with("```") || t.starts_with("~~~") || t.starts_with("> ") {
        return true;
    }
    if t.len() >= 3
        && t.bytes().all(|b| b == t.as_bytes()[0])
        && b"=-~^*+#".contains(&t.as_bytes()[0])
    {
        return true;
    }
    let words = t.split_whitespace().count();
    let list = t.starts_with("- ")
        || t.starts_with("* ")
        || t.split_once(". ")
            .is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()));
    list || (words >= 5
        && t.chars().filter(|c| c.is_alphabetic() || *c == ' ').count() * 10
            >= t.chars().count() * 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.txt` file is judged by what it holds: a saved build log is a log, prose is docs.
    /// Colour codes do not hide a log line.
    #[test]
    fn a_txt_file_is_judged_by_its_content() {
        let npm: String = (0..50)
            .map(|i| format!("npm http fetch GET 200 https://registry.npmjs.org/pkg{i} 1ms\n"))
            .chain(["npm ERR! code ELIFECYCLE\n".to_string()])
            .collect();
        assert_eq!(detect_source_type(&npm, Some("out.txt")), SourceType::Logs);
        let pytest: String = (0..50)
            .map(|i| format!("tests/test_a.py::test_{i} PASSED      [ {i}%]\n"))
            .collect();
        assert_eq!(
            detect_source_type(&pytest, Some("ci.txt")),
            SourceType::Logs
        );
        let cargo: String = (0..50)
            .map(|i| format!("\x1b[1m\x1b[32m   Compiling\x1b[0m crate{i} v0.1.0\n"))
            .collect();
        assert_eq!(detect_source_type(&cargo, None), SourceType::Logs);
        let prose = "These are my notes about the release.\nWe ship on Friday.\n";
        assert_eq!(
            detect_source_type(prose, Some("notes.txt")),
            SourceType::Docs
        );
    }

    /// Content alone, on the shapes it misread (bench cases: 203 of 1,537 code files read as
    /// prose on dev, 42 of 67 Markdown files as code, 12 of 34 logs as code): Markdown whose
    /// fenced examples and links read as code, YAML and Haskell with no brace or semicolon, a
    /// pytest report quoting the failing test's source, a compiler diagnostic's gutter.
    #[test]
    fn content_alone_tells_markdown_config_equations_and_test_reports_apart() {
        let markdown = "# Quickstart\n\nInstall it with pip, then make a request.\n\n```python\n>>> import httpx\n>>> r = httpx.get('https://example.org')\n>>> r.status_code\n200\n```\n\n* See [the guide](https://example.org/guide) for more.\n* Or the [API reference](./api.md).\n\n```python\nclient = httpx.Client()\nclient.close()\n```\n";
        assert_eq!(detect_source_type(markdown, None), SourceType::Docs);
        let yaml = "name: CI\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n";
        assert_eq!(detect_source_type(yaml, None), SourceType::Code);
        let haskell = "module Data.Stack where\n\npush :: a -> Stack a -> Stack a\npush x (Stack xs) = Stack (x : xs)\n\npop :: Stack a -> Maybe (a, Stack a)\npop (Stack xs) = case xs of\n  [] -> Nothing\n  y : ys -> Just (y, Stack ys)\n";
        assert_eq!(detect_source_type(haskell, None), SourceType::Code);
        let pytest = "============================= test session starts ==============================\nplatform linux -- Python 3.11.7, pytest-9.2.0\nrootdir: /home/dev/src/app\nconfigfile: pyproject.toml\ncollected 2 items\n\ntests/test_a.py F.                                                        [100%]\n\n=================================== FAILURES ===================================\n_________________________________ test_config __________________________________\n\ndef test_config(tmpdir):\n    path = os.path.join(tmpdir, \".env\")\n    with open(path, \"w\") as file:\n        file.write(\"DEBUG=1\\n\")\n    config = Config(path)\n>   assert config(\"DEBUG\", cast=bool) is True\nE   AssertionError\n\ntests/test_a.py:9: AssertionError\n";
        assert_eq!(detect_source_type(pytest, None), SourceType::Logs);
        let rustc = "error[E0277]: the trait bound `&str: Bool` is not satisfied\n  --> tests/ui/ensure.rs:25:5\n   |\n25 |     ensure!(\"...\");\n   |     ^^^^^^^^^^^^^^^^ the trait `Bool` is not implemented for `&str`\n   |\nnote: required by a bound in `check`\n  --> src/lib.rs:10:1\n   |\n10 | pub fn check<T: Bool>(t: T) {}\n   |        ----- required by this bound\n";
        assert_eq!(detect_source_type(rustc, None), SourceType::Logs);
    }

    #[test]
    fn extension_wins() {
        assert_eq!(
            detect_source_type("# Title", Some("src/lib.rs")),
            SourceType::Code
        );
        assert_eq!(
            detect_source_type("fn main() {}", Some("README.md")),
            SourceType::Docs
        );
        assert_eq!(
            detect_source_type("", Some("/var/log/app.log")),
            SourceType::Logs
        );
        assert_eq!(detect_source_type("", Some("app.log.1")), SourceType::Logs);
        assert_eq!(
            detect_source_type("", Some("CMakeLists.txt")),
            SourceType::Code
        );
        assert_eq!(detect_source_type("", Some("notes.txt")), SourceType::Docs);
        assert_eq!(
            detect_source_type("", Some("C:\\x\\Main.JAVA")),
            SourceType::Code
        );
        assert_eq!(detect_source_type("", Some("LICENSE")), SourceType::Docs);
    }

    #[test]
    fn unknown_extension_falls_back_to_content() {
        let code = "use std::io;\n\nfn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        assert_eq!(
            detect_source_type(code, Some("script.unknown")),
            SourceType::Code
        );
        assert_eq!(detect_source_type(code, None), SourceType::Code);
    }

    #[test]
    fn content_logs() {
        let log = "2024-05-01 12:00:01 INFO starting\n2024-05-01 12:00:02 ERROR boom\n";
        assert_eq!(detect_source_type(log, None), SourceType::Logs);
        let cargo = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nfailures:\n";
        assert_eq!(detect_source_type(cargo, None), SourceType::Logs);
        let py = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad\n";
        assert_eq!(detect_source_type(py, None), SourceType::Logs);
    }

    #[test]
    fn content_docs() {
        let md = "# Title\n\nThis project prunes text for coding agents and keeps it recoverable.\n\n- one item here\n";
        assert_eq!(detect_source_type(md, None), SourceType::Docs);
        assert_eq!(detect_source_type("", None), SourceType::Docs);
        assert_eq!(detect_source_type("L1\nL2\nL3", None), SourceType::Docs);
    }

    #[test]
    fn hash_and_dash_commented_languages_are_code_by_their_extension() {
        // Read by content, these banners made Markdown headings of a code file.
        let coffee = "# `nodes.coffee` contains all of the node classes.\n\n# Import the helpers.\n{compact, flatten} = require './helpers'\n\n# The base class.\nexports.Base = class Base\n";
        let ada = "--  Alire\n--  Copyright\n\npackage body Alr.Bootstrap is\nend Alr.Bootstrap;\n";
        for (text, path) in [
            (coffee, "src/nodes.coffee"),
            (
                "## This module handles develop files.\n\nimport std/json\n",
                "developfile.nim",
            ),
            (
                "# ncgi.tcl\n#\n# Basic support.\n\npackage require Tcl 8.5\n",
                "ncgi.tcl",
            ),
            (
                "# Rules for Go.\n\nload(\"//x:y.bzl\", \"z\")\n",
                "defs.star",
            ),
            (
                "# Rules for Go.\n\nload(\"//x:y.bzl\", \"z\")\n",
                "defs.bzl",
            ),
            ("# A shard.\n\nmodule Kemal\nend\n", "kemal.cr"),
            (ada, "alr-bootstrap.adb"),
            (ada, "alr-bootstrap.ads"),
        ] {
            assert_eq!(
                detect_source_type(text, Some(path)),
                SourceType::Code,
                "{path}"
            );
        }
    }
}
#[cfg(test)]
mod accuracy {
    use super::*;
    use std::collections::BTreeMap;

    /// How often content alone (`prune_text` without `source_type`, a proxied text) names the
    /// kind a benchmark case is labelled with, per split and per language: every case of every
    /// set in `bench-data/`. `cargo test --release --lib detect_accuracy -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn detect_accuracy() {
        let mut confusion: BTreeMap<(String, String, String), usize> = BTreeMap::new();
        let mut missed: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
        for file in std::fs::read_dir("bench-data").unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            for row in std::fs::read_to_string(&path).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(row).unwrap();
                let (Some(text), Some(label)) = (v["text"].as_str(), v["source_type"].as_str())
                else {
                    continue;
                };
                let split = v["split"].as_str().unwrap_or("-").to_string();
                let got = detect_source_type(text, None).to_string();
                *confusion
                    .entry((split.clone(), label.into(), got.clone()))
                    .or_default() += 1;
                let language = format!("{label}:{}", v["language"].as_str().unwrap_or("-"));
                let row = missed.entry((split, language)).or_default();
                row.0 += 1;
                row.1 += usize::from(got != label);
            }
        }
        for ((split, label, got), n) in &confusion {
            println!("{split:8} {label:5} -> {got:5} {n}");
        }
        for ((split, language), (n, wrong)) in &missed {
            if *wrong > 0 {
                println!("{split:8} {language:24} {wrong}/{n} wrong");
            }
        }
    }
}
