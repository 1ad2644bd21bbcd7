//! What a new user meets (issue 16): `--version`, `schema` (the bindings bundle), `completions`,
//! `man`, and `doctor` on a healthy setup and on three broken ones, all through the real binary.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], home: &Path) -> Output {
    Command::new(bin())
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn version_names_schema_versions_and_the_git_revision() {
    let home = tempfile::tempdir().unwrap();
    let o = run(&["--version"], home.path());
    assert!(o.status.success());
    let v = stdout(&o);
    assert!(
        v.starts_with(&format!(
            "mcp-pruner {} (schemaVersion read=",
            env!("CARGO_PKG_VERSION")
        )),
        "{v}"
    );
    for tool in ["bash=", "grep=", "prune_text=", "recover_text=", "health="] {
        assert!(v.contains(tool), "{v}");
    }
    assert!(v.contains("; git "), "{v}");
}

#[test]
fn schema_prints_the_committed_bundle_and_it_validates_live_results() {
    let home = tempfile::tempdir().unwrap();
    let o = run(&["schema"], home.path());
    assert!(o.status.success());
    let printed = stdout(&o);
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/contract.schema.json"),
    )
    .unwrap();
    assert_eq!(printed, committed);
    let bundle: Value = serde_json::from_str(&printed).unwrap();
    let defs = &bundle["$defs"];
    for name in [
        "ReadInput",
        "ReadResult",
        "ToolFailure",
        "RpcError",
        "RpcErrorCode",
        "PruningMetadata",
    ] {
        assert!(defs.get(name).is_some(), "{name} missing from $defs");
    }
    // Self-contained: every reference is local.
    assert!(
        !printed.contains("\"$ref\": \"../"),
        "a $ref leaves the bundle"
    );
    let tools = bundle["x-mcp-pruner-tools"].as_object().unwrap();
    assert_eq!(tools["read"]["output"], "ReadResult");

    // A live read result and a live failure validate against their definitions.
    let validator = |name: &str| {
        jsonschema::validator_for(&json!({"$defs": defs, "$ref": format!("#/$defs/{name}")}))
            .unwrap()
    };
    let root = fixture_root();
    let mut c = StdioClient::spawn(root.path(), &[]);
    c.initialize();
    let ok = c.call("read", json!({"path": "hello.txt"}));
    let result = structured(&ok["result"]);
    assert!(validator("ReadResult").is_valid(&result), "{result}");
    let failed = c.call("read", json!({"path": "no/such/file"}));
    let failure = structured(&failed["result"]);
    assert!(validator("ToolFailure").is_valid(&failure), "{failure}");
    assert!(!validator("ReadResult").is_valid(&json!({"tool": "read"})));
    assert!(c.close().success());
}

#[test]
fn completions_and_man_page_are_generated() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell], home.path());
        assert!(o.status.success(), "{shell}");
        assert!(
            stdout(&o).contains("doctor"),
            "{shell} completion lacks subcommands"
        );
    }
    let o = run(&["completions", "tcsh"], home.path());
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value 'tcsh'"));
    let o = run(&["man"], home.path());
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(page.starts_with(".ie \\n(.g .ds Aq"), "roff header");
    assert!(page.contains(".TH mcp-pruner 1"));
}

/// A home with a Claude Code config registering `command` and a Codex config registering
/// `codex_command`.
fn home_with(command: &str, codex_command: &str, root: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let root = root.display().to_string();
    std::fs::write(
        home.path().join(".claude.json"),
        json!({"mcpServers": {"pruner": {"command": command, "args": ["stdio", "--root", root]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        format!(
            "[mcp_servers.pruner]\ncommand = \"{codex_command}\"\nargs = [\"stdio\", \"--root\", \"{root}\"]\n"
        ),
    )
    .unwrap();
    home
}

/// A home whose Claude Code config points at an HTTP server at `url`.
fn home_with_url(url: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".claude.json"),
        json!({"mcpServers": {"pruner": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    home
}

#[test]
fn doctor_says_whether_an_http_entry_answers() {
    let root = fixture_root();
    let r = root.path().to_str().unwrap();
    let server = HttpServer::start(root.path(), &[]);
    let live = home_with_url(&format!("{}/mcp", server.base));
    let out = stdout(&run(&["doctor", "--root", r], live.path()));
    assert!(out.contains("ok    clients"), "{out}");
    assert!(out.contains("/healthz answers 200 OK"), "{out}");
    // Nothing listens on this port: a warning with the fix, not a failure.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = home_with_url(&format!("http://127.0.0.1:{port}/mcp"));
    let o = run(&["doctor", "--root", r], dead.path());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("warn  clients"), "{out}");
    assert!(out.contains("nothing answers there now"), "{out}");
    assert!(out.contains("fix: start `mcp-pruner serve"), "{out}");
}

#[test]
fn doctor_passes_a_healthy_setup_and_names_each_broken_one() {
    let root = fixture_root();
    let me = std::fs::canonicalize(bin()).unwrap();
    let me = me.to_str().unwrap();
    let r = root.path().to_str().unwrap();

    let healthy = home_with(me, me, root.path());
    let o = run(&["doctor", "--root", r], healthy.path());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("ok    root"), "{out}");
    assert!(out.contains(".claude.json: pruner runs"), "{out}");
    assert!(
        out.contains("config.toml: mcp_servers.pruner runs"),
        "{out}"
    );
    assert!(out.contains("ok    tokenizer"), "{out}");
    assert!(out.contains("ok    store"), "{out}");
    assert!(out.contains("ok    pruner     builtin"), "{out}");
    assert!(
        out.contains("ok    tools      round trip on a temp file: read, grep, bash, prune_text, recover_text, health"),
        "{out}"
    );
    assert!(
        out.ends_with("doctor: everything a client needs is in place\n"),
        "{out}"
    );

    // 1. A missing root.
    let o = run(&["doctor", "--root", "/no/such/dir"], healthy.path());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAIL  root       invalid_root_dir: --root"),
        "{out}"
    );
    assert!(out.contains("fix: fix --root"), "{out}");

    // 2. A client config pointing at an old path.
    let stale = home_with(me, "/opt/old/bin/mcp-pruner", root.path());
    let o = run(&["doctor", "--root", r], stale.path());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("mcp_servers.pruner runs /opt/old/bin/mcp-pruner, which does not exist"),
        "{out}"
    );
    assert!(out.contains(&format!("fix: point it at {me}")), "{out}");
    // The stale entry is Codex's, so the fix prints a Codex table.
    assert!(
        out.contains("`mcp-pruner config codex --stdio --root DIR`"),
        "{out}"
    );

    // 3. An unreachable pruner endpoint (a port nothing listens on).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}/prune");
    let o = run(
        &[
            "doctor",
            "--root",
            r,
            "--pruner",
            "http",
            "--pruner-endpoint",
            &endpoint,
        ],
        healthy.path(),
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "FAIL  pruner     http at {endpoint} is unreachable"
        )),
        "{out}"
    );
    assert!(out.contains("--pruner builtin"), "{out}");

    // Nothing registered is a warning with the command that registers it, not a failure.
    let empty = tempfile::tempdir().unwrap();
    let o = run(&["doctor", "--root", r], empty.path());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("warn  clients"), "{out}");
    assert!(out.contains("fix: claude mcp add pruner -- "), "{out}");
}
