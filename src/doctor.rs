//! `mcp-pruner doctor`: checks what a client needs to use this server and prints each check with
//! a fix when it fails: the binary, the configuration and root, the Claude Code and Codex configs
//! that register a `mcp-pruner` (and whether they point at a binary that exists), the tokenizer,
//! the store limits, the pruner backend, and a round trip of every tool on a temporary root.
//!
//! Sits at the command-line level (beside `cli`): it may use every room below. It never changes a
//! file outside its own temporary directory.

use crate::app::App;
use crate::config::{Backend, Config, ServerArgs};
use clap::Args;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `doctor` flags: the same server flags a client config passes, so the check sees what it sees.
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Server flags, as in `stdio` (`--root`, `--pruner`, store limits, ...).
    #[command(flatten)]
    pub server: ServerArgs,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Works.
    Ok,
    /// Works, but worth knowing (does not fail the run).
    Warn,
    /// Something a client needs is wrong: `doctor` exits 1.
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    /// Outcome.
    pub verdict: Verdict,
    /// What was checked (one word or two).
    pub name: String,
    /// What was found.
    pub detail: String,
    /// What to do about a warning or failure.
    pub fix: Option<String>,
}

fn check(verdict: Verdict, name: &str, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check {
        verdict,
        name: name.into(),
        detail: detail.into(),
        fix,
    }
}

/// Runs every check, prints the report, and exits 1 when any check failed.
pub fn main(args: &DoctorArgs) -> ExitCode {
    let checks = run(args, &std::env::var_os("HOME").map(PathBuf::from));
    for c in &checks {
        let tag = match c.verdict {
            Verdict::Ok => "ok  ",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        println!("{tag}  {:<10} {}", c.name, c.detail);
        if let Some(fix) = &c.fix {
            println!("      {:<10} fix: {fix}", "");
        }
    }
    let failed = checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
    if failed == 0 {
        println!("doctor: everything a client needs is in place");
        ExitCode::SUCCESS
    } else {
        println!("doctor: {failed} check(s) failed");
        ExitCode::FAILURE
    }
}

/// Every check, in order. `home` is where the client configs are looked for.
pub fn run(args: &DoctorArgs, home: &Option<PathBuf>) -> Vec<Check> {
    let exe = std::env::current_exe().ok();
    let mut out = vec![binary(exe.as_deref())];
    let cfg = match Config::from_args(&args.server) {
        Ok(cfg) => {
            out.push(check(
                Verdict::Ok,
                "root",
                format!("{} (exists, readable)", cfg.root.display()),
                None,
            ));
            cfg
        }
        Err(e) => {
            let name = if e.field.contains("root") {
                "root"
            } else {
                "config"
            };
            out.push(check(
                Verdict::Fail,
                name,
                e.to_string(),
                Some(format!(
                    "fix {} (or its environment variable); `mcp-pruner stdio --help` lists them",
                    e.field
                )),
            ));
            out.extend(client_configs(home, exe.as_deref(), None));
            return out;
        }
    };
    out.extend(client_configs(home, exe.as_deref(), Some(&cfg.root)));
    out.push(ledger(&cfg));
    out.push(tokenizer());
    out.push(store(&cfg));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    out.push(rt.block_on(backend(&cfg)));
    out.extend(rt.block_on(round_trip(&cfg)));
    out
}

/// Where the savings ledger goes, and whether a client that launches the server with a reduced
/// environment would write it somewhere else.
fn ledger(cfg: &Config) -> Check {
    let Some(path) = &cfg.ledger else {
        return check(
            Verdict::Ok,
            "ledger",
            "off (--no-ledger or MCP_PRUNER_LEDGER=off): `mcp-pruner stats` will show nothing",
            None,
        );
    };
    match crate::config::pinned_ledger(&|k| std::env::var(k).ok()) {
        Some(pinned) if &pinned == path => check(
            Verdict::Warn,
            "ledger",
            format!(
                "{} (chosen by MCP_PRUNER_LEDGER or XDG_DATA_HOME, which a client may not pass to a server it launches)",
                path.display()
            ),
            Some(format!(
                "add \"--ledger\", \"{}\" to the server's args (`mcp-pruner config claude|codex` prints entries with it)",
                path.display()
            )),
        ),
        _ => check(
            Verdict::Ok,
            "ledger",
            format!("{} (`mcp-pruner stats` reads it)", path.display()),
            None,
        ),
    }
}

fn binary(exe: Option<&Path>) -> Check {
    let Some(exe) = exe else {
        return check(
            Verdict::Fail,
            "binary",
            "cannot tell where this binary is",
            None,
        );
    };
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join("mcp-pruner"))
        .find(|c| c.is_file());
    let version = crate::version::LONG_VERSION;
    match on_path {
        Some(p) if same_file(&p, exe) => check(
            Verdict::Ok,
            "binary",
            format!("{} {version} (on PATH)", exe.display()),
            None,
        ),
        Some(p) => check(
            Verdict::Warn,
            "binary",
            format!(
                "{} {version}; `mcp-pruner` on PATH is another file: {}",
                exe.display(),
                p.display()
            ),
            Some("reinstall with `cargo install --locked --path .` so PATH and this build agree".into()),
        ),
        None => check(
            Verdict::Warn,
            "binary",
            format!("{} {version}; not on PATH", exe.display()),
            Some(
                "`cargo install --locked --path .` puts it in ~/.cargo/bin; client configs may also use this absolute path"
                    .into(),
            ),
        ),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A server entry found in a client config.
struct Entry {
    /// Which file, and where in it.
    place: String,
    /// The client that reads it (`claude` or `codex`), for the `mcp-pruner config` hint.
    client: &'static str,
    /// `command`, for stdio entries.
    command: Option<String>,
    /// `args`.
    args: Vec<String>,
    /// `url`, for HTTP entries.
    url: Option<String>,
}

fn client_configs(home: &Option<PathBuf>, exe: Option<&Path>, root: Option<&Path>) -> Vec<Check> {
    let mut entries = Vec::new();
    let mut read = Vec::new();
    if let Some(home) = home {
        let claude = home.join(".claude.json");
        if let Some(v) = read_json(&claude, &mut read) {
            collect_json(
                &v["mcpServers"],
                &format!("{}", claude.display()),
                &mut entries,
            );
            if let Some(projects) = v["projects"].as_object() {
                for (dir, p) in projects {
                    collect_json(
                        &p["mcpServers"],
                        &format!("{} (project {dir})", claude.display()),
                        &mut entries,
                    );
                }
            }
        }
        let codex_home = std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        let codex = codex_home.join("config.toml");
        if let Ok(text) = std::fs::read_to_string(&codex) {
            read.push(codex.display().to_string());
            match text.parse::<toml::Table>() {
                Ok(t) => collect_toml(&t, &codex.display().to_string(), &mut entries),
                Err(e) => entries.push(Entry {
                    place: format!("{} (unreadable TOML: {e})", codex.display()),
                    client: "codex",
                    command: None,
                    args: Vec::new(),
                    url: None,
                }),
            }
        }
    }
    if let Some(root) = root {
        let project = root.join(".mcp.json");
        if let Some(v) = read_json(&project, &mut read) {
            collect_json(
                &v["mcpServers"],
                &project.display().to_string(),
                &mut entries,
            );
        }
    }
    let ours: Vec<&Entry> = entries.iter().filter(|e| is_ours(e)).collect();
    if ours.is_empty() {
        let exe = exe.map_or("mcp-pruner".into(), |e| e.display().to_string());
        let root = root.map_or(".".into(), |r| r.display().to_string());
        return vec![check(
            Verdict::Warn,
            "clients",
            if read.is_empty() {
                "no Claude Code or Codex config found (~/.claude.json, ~/.codex/config.toml, <root>/.mcp.json)".to_string()
            } else {
                format!("no mcp-pruner server registered in {}", read.join(", "))
            },
            Some(format!(
                "claude mcp add pruner -- {exe} stdio --root {root}   (Codex: `mcp-pruner config codex --stdio --root {root}`)"
            )),
        )];
    }
    ours.into_iter().map(|e| entry_check(e, exe)).collect()
}

fn read_json(path: &Path, read: &mut Vec<String>) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    read.push(path.display().to_string());
    serde_json::from_str(&text).ok()
}

fn collect_json(servers: &Value, place: &str, out: &mut Vec<Entry>) {
    let Some(servers) = servers.as_object() else {
        return;
    };
    for (name, s) in servers {
        out.push(Entry {
            place: format!("{place}: {name}"),
            client: "claude",
            command: s["command"].as_str().map(str::to_string),
            args: s["args"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            url: s["url"].as_str().map(str::to_string),
        });
    }
}

fn collect_toml(table: &toml::Table, place: &str, out: &mut Vec<Entry>) {
    let Some(servers) = table.get("mcp_servers").and_then(|v| v.as_table()) else {
        return;
    };
    for (name, s) in servers {
        out.push(Entry {
            place: format!("{place}: mcp_servers.{name}"),
            client: "codex",
            command: s
                .get("command")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            args: s
                .get("args")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            url: s.get("url").and_then(|v| v.as_str()).map(str::to_string),
        });
    }
}

/// An entry that launches this program (by file name) or is named like it.
fn is_ours(e: &Entry) -> bool {
    e.command
        .as_deref()
        .and_then(|c| Path::new(c).file_name())
        .is_some_and(|n| n == "mcp-pruner")
        || e.place.ends_with(": pruner")
        || e.place.ends_with(".pruner")
        || e.place.contains("mcp-pruner")
}

fn entry_check(e: &Entry, exe: Option<&Path>) -> Check {
    let args = e.args.join(" ");
    if let Some(url) = &e.url {
        // An HTTP entry works only while a server runs there: say whether one answers now. None
        // answering is a warning, not a failure (the server may simply not be started yet).
        return match answers(url) {
            Ok(said) => check(
                Verdict::Ok,
                "clients",
                format!("{} -> {url} ({said})", e.place),
                None,
            ),
            Err(why) => check(
                Verdict::Warn,
                "clients",
                format!("{} -> {url}: nothing answers there now ({why})", e.place),
                Some(
                    "start `mcp-pruner serve --port PORT --root DIR` before the client, or register the stdio server instead"
                        .into(),
                ),
            ),
        };
    }
    let Some(command) = &e.command else {
        return check(
            Verdict::Fail,
            "clients",
            format!("{} has neither command nor url", e.place),
            Some(format!(
                "re-register it: `mcp-pruner config {} --stdio --root DIR`",
                e.client
            )),
        );
    };
    let resolved = if command.contains('/') {
        Some(PathBuf::from(command)).filter(|p| p.is_file())
    } else {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(command))
                .find(|c| c.is_file())
        })
    };
    let current = exe.map_or("mcp-pruner".into(), |e| e.display().to_string());
    match resolved {
        None => check(
            Verdict::Fail,
            "clients",
            format!("{} runs {command}, which does not exist", e.place),
            Some(format!(
                "point it at {current}: `mcp-pruner config {} --stdio --root DIR` prints the entry",
                e.client
            )),
        ),
        Some(p) if exe.is_some_and(|x| !same_file(&p, x)) => check(
            Verdict::Warn,
            "clients",
            format!(
                "{} runs {} {args}: another build than this one",
                e.place,
                p.display()
            ),
            Some(format!("point it at {current} if that is the one you mean")),
        ),
        Some(_) => {
            let root = e
                .args
                .iter()
                .position(|a| a == "--root")
                .and_then(|i| e.args.get(i + 1));
            match root {
                Some(r) if !Path::new(r).is_dir() => check(
                    Verdict::Fail,
                    "clients",
                    format!("{} passes --root {r}, which is not a directory", e.place),
                    Some("fix the --root argument in that entry".into()),
                ),
                _ => match crate::config::pinned_ledger(&|k| std::env::var(k).ok()) {
                    // A client may start the server without XDG_DATA_HOME or MCP_PRUNER_LEDGER:
                    // its rows would then land in ~/.local/share, not where `stats` looks here.
                    Some(l)
                        if !e
                            .args
                            .iter()
                            .any(|a| a.starts_with("--ledger") || a.starts_with("--no-ledger")) =>
                    {
                        check(
                            Verdict::Warn,
                            "clients",
                            format!(
                                "{} runs {command} {args}, without --ledger: a client that drops XDG_DATA_HOME or MCP_PRUNER_LEDGER records elsewhere than {}",
                                e.place,
                                l.display()
                            ),
                            Some(format!(
                                "add \"--ledger\", \"{}\" to its args (`mcp-pruner config {}` prints the entry)",
                                l.display(),
                                e.client
                            )),
                        )
                    }
                    _ => check(
                        Verdict::Ok,
                        "clients",
                        format!("{} runs {command} {args}", e.place),
                        None,
                    ),
                },
            }
        }
    }
}

fn tokenizer() -> Check {
    let started = Instant::now();
    let n = crate::tokens::count("hello world");
    let took = started.elapsed();
    if n == 2 {
        check(
            Verdict::Ok,
            "tokenizer",
            format!("o200k_base loaded in {} ms", took.as_millis()),
            None,
        )
    } else {
        check(
            Verdict::Fail,
            "tokenizer",
            format!("o200k_base counts {n} tokens in \"hello world\" (expected 2)"),
            Some("rebuild the binary; the vocabulary is compiled in".into()),
        )
    }
}

async fn backend(cfg: &Config) -> Check {
    let Some(endpoint) = cfg
        .pruner_endpoint
        .as_ref()
        .filter(|_| matches!(cfg.backend, Backend::Http | Backend::SwePruner))
    else {
        return check(
            Verdict::Ok,
            "pruner",
            format!("{} (in process)", cfg.backend.as_str()),
            None,
        );
    };
    let client = crate::http_client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .expect("http client");
    let mut tried = Vec::new();
    for path in ["/healthz", "/health"] {
        let mut url = endpoint.clone();
        url.set_path(path);
        url.set_query(None);
        match client.get(url.clone()).send().await {
            Ok(r) if r.status().is_success() => {
                return check(
                    Verdict::Ok,
                    "pruner",
                    format!(
                        "{} at {endpoint}: {url} answers {}",
                        cfg.backend.as_str(),
                        r.status()
                    ),
                    None,
                );
            }
            Ok(r) => tried.push(format!("{url} -> {}", r.status())),
            Err(e) => tried.push(format!("{url} -> {}", error_chain(&e))),
        }
    }
    check(
        Verdict::Fail,
        "pruner",
        format!(
            "{} at {endpoint} is unreachable ({})",
            cfg.backend.as_str(),
            tried.join("; ")
        ),
        Some(
            "start the pruner service, fix --pruner-endpoint, or use --pruner builtin (calls fail open: unpruned output)"
                .into(),
        ),
    )
}

/// Whether an mcp-pruner HTTP server answers at the origin of `url` (`GET /healthz`, 3 s): what
/// it said, or why not.
fn answers(url: &str) -> Result<String, String> {
    let mut health = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    health.set_path("/healthz");
    health.set_query(None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let client = crate::http_client::builder()
            .timeout(Duration::from_secs(3))
            .build()
            .map_err(|e| e.to_string())?;
        match client.get(health.clone()).send().await {
            Ok(r) if r.status().is_success() => Ok(format!("{health} answers {}", r.status())),
            Ok(r) => Err(format!("{health} -> {}", r.status())),
            Err(e) => Err(format!("{health} -> {}", error_chain(&e))),
        }
    })
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Every tool once, through the real dispatcher, on a temporary root with the same settings.
async fn round_trip(cfg: &Config) -> Vec<Check> {
    let dir = std::env::temp_dir().join(format!(
        "mcp-pruner-doctor-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
    ));
    let result = round_trip_in(cfg, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(done) => vec![check(
            Verdict::Ok,
            "tools",
            format!("round trip on a temp file: {}", done.join(", ")),
            None,
        )],
        Err(e) => vec![check(
            Verdict::Fail,
            "tools",
            e,
            Some("run the same call with `mcp-pruner stdio` and read its log on stderr".into()),
        )],
    }
}

async fn round_trip_in(cfg: &Config, dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let body: String = (1..=60)
        .map(|i| format!("fn step_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(dir.join("doctor.rs"), body).map_err(|e| format!("cannot write: {e}"))?;
    let mut cfg = cfg.clone();
    cfg.root = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    // The round trip is a check, not usage: it leaves no rows in the savings ledger.
    cfg.ledger = None;
    let app = App::new(cfg);
    let session = Arc::new(crate::protocol::Session::new("doctor"));
    let call = |name: &'static str, args: Value| {
        let (app, session) = (app.clone(), session.clone());
        async move {
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            let msg = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":args}});
            let r = crate::rpc::handle(&crate::rpc::Server::new(app), &session, msg, tx, None)
                .await
                .unwrap_or(Value::Null);
            if let Some(e) = r.get("error") {
                return Err(format!("{name}: JSON-RPC error {e}"));
            }
            if r["result"]["isError"] == json!(true) {
                return Err(format!("{name}: {}", r["result"]["content"][0]["text"]));
            }
            Ok(r["result"].clone())
        }
    };
    let exposed = |n: &str| {
        app.config
            .tools
            .as_ref()
            .is_none_or(|t| t.iter().any(|x| x == n))
    };
    let mut done = Vec::new();
    if exposed("read") {
        call(
            "read",
            json!({"path": "doctor.rs", "context_focus_question": "where is step_42 defined?"}),
        )
        .await?;
        done.push("read");
    }
    if exposed("grep") {
        call("grep", json!({"pattern": "step_42", "paths": ["."]})).await?;
        done.push("grep");
    }
    if exposed("bash") {
        call("bash", json!({"cmd": "echo doctor"})).await?;
        done.push("bash");
    }
    if exposed("prune_text") {
        let text: String = (1..=80)
            .map(|i| format!("INFO step {i} ok\n"))
            .collect::<String>()
            + "ERROR disk full\n";
        let r = call(
            "prune_text",
            json!({"text": text, "goal_hint": "why did it fail?"}),
        )
        .await?;
        let pruned: Value = r["content"][0]["text"]
            .as_str()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        done.push("prune_text");
        if exposed("recover_text")
            && let Some(id) = pruned["prune_id"].as_str()
        {
            let r = call(
                "recover_text",
                json!({"prune_id": id, "ranges": [{"start_line": 81, "end_line": 81}], "include_line_numbers": false}),
            )
            .await?;
            let back: Value = r["content"][0]["text"]
                .as_str()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null);
            if back["raw_text"] != "ERROR disk full\n" {
                return Err(format!("recover_text returned {}", back["raw_text"]));
            }
            done.push("recover_text");
        }
    }
    if exposed("health") {
        call("health", json!({})).await?;
        done.push("health");
    }
    Ok(done.into_iter().map(str::to_string).collect())
}

/// The recovery store: its caps, and for a shared store whether the server answers.
fn store(cfg: &Config) -> Check {
    let caps = format!(
        "{} bytes, {} entries, ids live {} s (--store-max-bytes, --store-max-entries, --prune-id-ttl-s)",
        cfg.store_max_bytes,
        cfg.store_max_entries,
        cfg.prune_id_ttl.as_secs()
    );
    let Some(target) = &cfg.store else {
        return check(Verdict::Ok, "store", format!("in memory, {caps}"), None);
    };
    match crate::store::shared::probe(target) {
        Ok(server) => check(
            Verdict::Ok,
            "store",
            format!("shared: {target} ({server}), {caps}"),
            None,
        ),
        Err(e) => check(
            Verdict::Fail,
            "store",
            format!("shared: {target} cannot be used: {e}"),
            Some(
                "start the server, or fix --store / MCP_PRUNER_STORE (redis://HOST:PORT/DB or rediss://; for TLS, SSL_CERT_FILE names a CA bundle)"
                    .to_string(),
            ),
        ),
    }
}
