//! What a new user meets first (issue 36), through the real binary: yes/no settings read
//! strictly, `stats` before anything was recorded, the ready line's `url`, `read`'s summary of a
//! cut page, `grep` without `paths` and its later pages served from the first call's stored
//! matches, the client setup lines the README shows, `doctor` pinning the ledger, `server.json`
//! against the MCP Registry's schema, and `test.sh`'s switches.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// `mcp-pruner ARGS` with a clean environment: no inherited MCP_PRUNER_* / JEEVES_* / XDG_* values.
fn mcp_pruner(args: &[&str], env: &[(&str, &str)], home: &Path) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_clear().env("HOME", home);
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SPELLINGS: &str = "1, true, yes, on (yes) or 0, false, no, off (no)";

#[test]
fn an_unreadable_yes_no_setting_stops_the_server_with_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().to_str().unwrap();
    for (var, code) in [
        ("MCP_PRUNER_OUTPUT_SCHEMAS", "invalid_output_schemas"),
        ("MCP_PRUNER_ALLOW_REMOTE", "invalid_allow_remote"),
        ("MCP_PRUNER_NO_LEDGER", "invalid_no_ledger"),
    ] {
        for sub in ["stdio", "serve"] {
            let o = mcp_pruner(&[sub, "--root", root], &[(var, "maybe")], home.path());
            assert_eq!(o.status.code(), Some(2), "{sub} {var}=maybe: {}", err(&o));
            let e = err(&o);
            assert!(
                e.contains(&format!(
                    "mcp-pruner: {code}: {var}: expected one of {SPELLINGS}, got \"maybe\""
                )),
                "{e}"
            );
        }
    }
    // The flags take the same values, and say which flag was wrong.
    let o = mcp_pruner(
        &["stdio", "--root", root, "--output-schemas=sometimes"],
        &[],
        home.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("invalid_output_schemas: --output-schemas: expected one of"),
        "{}",
        err(&o)
    );
    // Every accepted spelling starts the server (stdio ends when its stdin closes).
    for v in ["1", "true", "YES", "on", "0", "false", "No", "off", ""] {
        let o = mcp_pruner(
            &["stdio", "--root", root],
            &[
                ("MCP_PRUNER_NO_LEDGER", v),
                ("MCP_PRUNER_OUTPUT_SCHEMAS", v),
            ],
            home.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{v:?}: {}", err(&o));
    }
}

#[test]
fn output_schemas_false_really_turns_them_off() {
    let root = fixture_root();
    let mut c = StdioClient::spawn_env(
        root.path(),
        &["--output-schemas=off"],
        &[("MCP_PRUNER_OUTPUT_SCHEMAS", "1")],
    );
    c.initialize();
    let list = c.request("tools/list", json!({}));
    assert!(
        list["result"]["tools"][0].get("outputSchema").is_none(),
        "the flag wins over the variable"
    );
    let mut c = StdioClient::spawn_env(root.path(), &[], &[("MCP_PRUNER_OUTPUT_SCHEMAS", "yes")]);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    assert!(list["result"]["tools"][0].get("outputSchema").is_some());
}

#[test]
fn stats_before_anything_was_recorded_says_so_and_succeeds() {
    let home = tempfile::tempdir().unwrap();
    let o = mcp_pruner(&["stats"], &[], home.path());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let ledger = home.path().join(".local/share/mcp-pruner/ledger.sqlite3");
    assert_eq!(
        out(&o),
        format!(
            "nothing recorded yet: no ledger at {} (it is written by `mcp-pruner stdio` and `serve` as tools are called)\n",
            ledger.display()
        )
    );
    let o = mcp_pruner(&["stats", "--json"], &[], home.path());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let report: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(report["total"]["calls"], 0);
    assert!(!ledger.exists(), "stats never creates the ledger");
}

#[test]
fn the_ready_line_names_the_mcp_url() {
    let root = fixture_root();
    let server = HttpServer::start(root.path(), &[]);
    let logs = server.logs.lock().unwrap().clone();
    let ready = logs
        .iter()
        .find(|v| v["event"] == "mcp_pruner.ready")
        .expect("ready line");
    assert_eq!(
        ready["data"]["url"],
        format!("http://127.0.0.1:{}/mcp", server.port)
    );
}

#[test]
fn a_cut_page_summary_says_the_lines_it_shows() {
    let root = tempfile::tempdir().unwrap();
    let body: String = (1..=2000)
        .map(|i| format!("line {i} of a long file\n"))
        .collect();
    std::fs::write(root.path().join("long.txt"), &body).unwrap();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let r = c.call("read", json!({"path": "long.txt"}));
    let s = structured(&r["result"]);
    assert_eq!(s["truncated"], true);
    let end = s["end_line"].as_u64().unwrap();
    assert!(end < 2000, "{s:#}");
    assert_eq!(
        s["summary"],
        format!("long.txt: lines 1-{end} of 2000, truncated")
    );
    assert!(text(&r["result"]).contains(&format!("next page: read offset={}", end + 1)));
}

#[test]
fn grep_without_paths_searches_the_root() {
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let r = c.call("grep", json!({"pattern": "alpha"}));
    assert!(
        r["result"].get("isError").is_none_or(|e| e == false),
        "{r:#}"
    );
    assert_valid_result("grep", &r["result"]);
    let t = text(&r["result"]);
    assert!(t.contains("src/lib.rs:1:8: pub fn alpha() -> u32 {"), "{t}");
    assert!(t.contains("src/nested/deep.md:3:1: alpha beta"), "{t}");
    // Within cwd when one is given.
    let r = c.call("grep", json!({"pattern": "alpha", "cwd": "src/nested"}));
    let t = text(&r["result"]);
    assert!(t.contains("deep.md") && !t.contains("lib.rs"), "{t}");
}

#[test]
fn later_grep_pages_come_from_the_first_calls_matches() {
    let root = tempfile::tempdir().unwrap();
    for f in 0..40 {
        let body: String = (0..50).map(|i| format!("needle {f} {i}\n")).collect();
        std::fs::write(root.path().join(format!("f{f:02}.txt")), body).unwrap();
    }
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let first = c.call("grep", json!({"pattern": "needle", "max_matches": 300}));
    let s = structured(&first["result"]);
    assert_eq!(s["match_count"], 2000);
    let mut cursor = s["nextCursor"].as_str().unwrap().to_string();
    let artifact = s["artifactRef"].as_str().unwrap().to_string();
    // The tree changes after the first call: the pages that follow still show the first
    // call's matches (a new search would count the new file's).
    std::fs::write(root.path().join("a-new.txt"), "needle new\n".repeat(100)).unwrap();
    let mut seen = 300;
    let mut last = String::new();
    while !cursor.is_empty() {
        let r = c.call(
            "grep",
            json!({"pattern": "needle", "max_matches": 300, "cursor": cursor}),
        );
        let s = structured(&r["result"]);
        let t = text(&r["result"]);
        assert!(!t.contains("a-new.txt"), "{t}");
        assert_eq!(s["match_count"], 2000, "{s:#}");
        assert_eq!(s["artifactRef"], artifact.as_str());
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with('f')).collect();
        seen += rows.len();
        last = rows.last().map(|l| l.to_string()).unwrap_or(last);
        cursor = s["nextCursor"].as_str().unwrap_or("").to_string();
    }
    assert_eq!(seen, 2000);
    assert_eq!(last, "f39.txt:50:1: needle 39 49");
    // A fresh search (no cursor) sees the tree as it is now.
    let r = c.call("grep", json!({"pattern": "needle", "max_matches": 300}));
    assert_eq!(structured(&r["result"])["match_count"], 2100);
    // A cursor from another search is still refused.
    let r = c.call(
        "grep",
        json!({"pattern": "other", "cursor": s_cursor(&first)}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r:#}");
}

fn s_cursor(r: &Value) -> String {
    structured(&r["result"])["nextCursor"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The lines `mcp-pruner config` prints, with this machine's paths replaced by the README's
/// placeholders (`/abs/path/mcp-pruner`, `/abs/project`).
fn config_lines(args: &[&str], root: &Path) -> (String, String) {
    let home = tempfile::tempdir().unwrap();
    let o = mcp_pruner(args, &[], home.path());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let exe = std::fs::canonicalize(bin()).unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    let norm = |s: String| {
        s.replace(exe.to_str().unwrap(), "/abs/path/mcp-pruner")
            .replace(root.to_str().unwrap(), "/abs/project")
    };
    (norm(out(&o)), norm(err(&o)))
}

#[test]
fn the_readme_shows_what_config_prints() {
    let readme = readme();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().to_str().unwrap();
    let (json_snippet, comment) =
        config_lines(&["config", "claude", "--root", root], project.path());
    let add = comment.trim().rsplit_once("register it with: ").unwrap().1;
    assert_eq!(
        add,
        "claude mcp add pruner -- /abs/path/mcp-pruner stdio --root /abs/project"
    );
    assert!(readme.contains(add), "README lacks {add:?}");
    let shown: Value = readme
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .map(|b| serde_json::from_str(b).unwrap())
        .expect("a json block in the README");
    assert_eq!(shown, serde_json::from_str::<Value>(&json_snippet).unwrap());
    let (toml, comment) = config_lines(&["config", "codex", "--root", root], project.path());
    let add = comment.trim().rsplit_once("register it with: ").unwrap().1;
    assert!(readme.contains(add), "README lacks {add:?}");
    assert!(readme.contains(toml.trim_end()), "README lacks\n{toml}");
    let url = "http://127.0.0.1:8765/mcp";
    for client in ["claude", "codex"] {
        let (_, comment) = config_lines(&["config", client, "--url", url], project.path());
        let add = comment.trim().rsplit_once("register it with: ").unwrap().1;
        assert!(readme.contains(add), "README lacks {add:?}");
    }
    assert!(readme.contains("cargo install --locked --path ."));
}

#[test]
fn config_and_doctor_pin_a_ledger_a_client_could_lose() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let root = home.path().to_str().unwrap();
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let o = mcp_pruner(&["config", "codex", "--root", root], &env, home.path());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let ledger = data.join("mcp-pruner/ledger.sqlite3");
    assert!(
        out(&o).contains(&format!("\"--ledger\", \"{}\"", ledger.display())),
        "{}",
        out(&o)
    );
    // Without XDG_DATA_HOME, HOME alone finds the ledger: nothing to pin.
    let o = mcp_pruner(&["config", "codex", "--root", root], &[], home.path());
    assert!(!out(&o).contains("--ledger"), "{}", out(&o));
    // doctor says where rows go and what to add to a client's args.
    let o = mcp_pruner(&["doctor", "--root", root], &env, home.path());
    let report = out(&o);
    let line = report
        .lines()
        .skip_while(|l| !l.contains(" ledger "))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(line.starts_with("warn  ledger"), "{report}");
    assert!(
        line.contains(&format!(
            "add \"--ledger\", \"{}\" to the server's args",
            ledger.display()
        )),
        "{report}"
    );
}

#[test]
fn server_json_is_valid_for_the_mcp_registry() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/external/mcp-registry-server.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let server: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("server.json")).unwrap())
            .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&server)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The registry's later format (name pattern, description length, version) holds too, and
    // both versions are the crate's.
    let name = server["name"].as_str().unwrap();
    assert_eq!(name.matches('/').count(), 1, "{name}");
    assert!(server["description"].as_str().unwrap().chars().count() <= 100);
    assert_eq!(server["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        server["version_detail"]["version"],
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn test_sh_refuses_an_unreadable_switch_before_building_anything() {
    for var in ["MCP_PRUNER_SKIP_INTEROP", "MCP_PRUNER_NO_SYSTEM_INSTALL"] {
        let o = Command::new("bash")
            .arg(repo().join("test.sh"))
            .env(var, "maybe")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{var}");
        assert!(
            err(&o).contains(&format!("test.sh: {var}: expected one of {SPELLINGS}")),
            "{}",
            err(&o)
        );
        assert!(out(&o).is_empty());
    }
}
