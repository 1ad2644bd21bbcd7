//! Contract freezing (seed 003 section 2.2): every tool schema is snapshotted under
//! `snapshots/` per `schemaVersion`. Changing a schema without bumping its version fails
//! `tool_schemas_are_frozen_per_version`; bumping the version needs a new accepted snapshot and
//! keeps the old one. `tools/list` and `initialize` are snapshotted too.

use mcp_pruner::contract::contract;
use serde_json::{Value, json};
use std::path::PathBuf;

/// A JSON value as insta can serialize it. The crate keeps numbers as written
/// (`arbitrary_precision`, so that JSON-RPC ids are echoed exactly), which serde sees as a private
/// struct; here numbers go out as the integers or floats they are, so snapshots read as before.
struct Plain<'a>(&'a Value);

impl serde::Serialize for Plain<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    s.serialize_u64(u)
                } else if let Some(i) = n.as_i64() {
                    s.serialize_i64(i)
                } else if let Some(f) = n.as_f64() {
                    s.serialize_f64(f)
                } else {
                    s.serialize_str(&n.to_string())
                }
            }
            Value::String(t) => s.serialize_str(t),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Plain(v))?;
                }
                seq.end()
            }
            Value::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    map.serialize_entry(k, &Plain(v))?;
                }
                map.end()
            }
        }
    }
}

fn snapshots_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(snapshots_dir());
    s.set_prepend_module_to_snapshot(false);
    s.set_sort_maps(true);
    s
}

/// The freezing check itself: `surface` must equal the accepted snapshot of `name` at `version`
/// in `dir` (insta fails on a difference and on a missing snapshot).
fn assert_frozen(dir: &std::path::Path, name: &str, version: u64, surface: &Value) {
    let mut s = settings();
    s.set_snapshot_path(dir);
    s.bind(|| insta::assert_json_snapshot!(snapshot_name(name, version), Plain(surface)));
}

/// What a schemaVersion freezes for one tool: arguments, result shape, error shape (with the
/// error-code taxonomy) and annotations.
fn frozen_surface(name: &str) -> Value {
    let t = contract().tool(name).unwrap();
    let failure = contract().schemas.get("ToolFailure").cloned();
    json!({ "name": t.name, "inputSchema": t.input_schema, "outputSchema": t.output_schema, "errorSchema": failure, "annotations": t.annotations })
}

fn snapshot_name(name: &str, version: u64) -> String {
    format!("tool-{name}-v{version}")
}

/// The body of an accepted insta snapshot file, if there is one.
fn accepted(name: &str, version: u64) -> Option<Value> {
    let path = snapshots_dir().join(format!("{}.snap", snapshot_name(name, version)));
    let text = std::fs::read_to_string(path).ok()?;
    let body = text.splitn(3, "---\n").nth(2)?;
    serde_json::from_str(body).ok()
}

#[test]
fn tool_schemas_are_frozen_per_version() {
    for t in &contract().tools {
        assert_frozen(
            &snapshots_dir(),
            &t.name,
            t.schema_version,
            &frozen_surface(&t.name),
        );
    }
}

/// The savings ledger's rows and `stats --json` report are frozen per ledger schema version
/// (`PRAGMA user_version`): changing either schema without bumping it fails here, and a bump adds
/// new snapshots beside the old ones.
#[test]
fn ledger_schemas_are_frozen_per_version() {
    let version = mcp_pruner::ledger::SCHEMA_VERSION as u64;
    for (title, name) in [("LedgerRow", "ledger-row"), ("StatsReport", "stats-report")] {
        let schema = contract().schemas.get(title).cloned().unwrap();
        let mut s = settings();
        s.set_snapshot_path(snapshots_dir());
        s.bind(|| insta::assert_json_snapshot!(format!("{name}-v{version}"), Plain(&schema)));
        for v in 1..version {
            assert!(
                snapshots_dir().join(format!("{name}-v{v}.snap")).exists(),
                "snapshots/{name}-v{v}.snap is missing: old versions must be kept"
            );
        }
    }
}

#[test]
fn every_earlier_version_keeps_its_snapshot() {
    for t in &contract().tools {
        for v in 1..=t.schema_version {
            assert!(
                accepted(&t.name, v).is_some(),
                "snapshots/{}.snap is missing: old versions must be kept",
                snapshot_name(&t.name, v)
            );
        }
    }
}

/// The guard shown on a real change, with the same check `tool_schemas_are_frozen_per_version`
/// runs, against a copy of `snapshots/`: `read` gains an argument; under the same schemaVersion the
/// check fails; bumped, it fails until the new snapshot is accepted, then passes, and the old
/// version's snapshot is still there.
#[test]
fn a_schema_change_fails_until_its_version_is_bumped_and_accepted() {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(snapshots_dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
    }
    let v = contract().tool("read").unwrap().schema_version;
    let fails = |version: u64, surface: &Value| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_frozen(dir.path(), "read", version, surface)
        }))
        .is_err()
    };
    assert!(!fails(v, &frozen_surface("read")), "unchanged: passes");

    let mut changed = frozen_surface("read");
    changed["inputSchema"]["properties"]["tail"] =
        json!({ "type": "integer", "description": "Last N lines." });
    assert!(fails(v, &changed), "changed without a bump: fails");
    assert!(fails(v + 1, &changed), "bumped but not yet accepted: fails");

    // Accepting writes the reviewed snapshot (what `cargo insta accept` does).
    let accepted_body = serde_json::to_string_pretty(&sorted(changed.clone())).unwrap();
    std::fs::write(
        dir.path()
            .join(format!("{}.snap", snapshot_name("read", v + 1))),
        format!("---\nsource: tests/contract.rs\nexpression: surface\n---\n{accepted_body}\n"),
    )
    .unwrap();
    assert!(!fails(v + 1, &changed), "bumped and accepted: passes");
    assert!(
        dir.path()
            .join(format!("{}.snap", snapshot_name("read", v)))
            .exists(),
        "the old version keeps its snapshot"
    );
}

/// `v` with every object's keys sorted, as insta writes snapshots with `set_sort_maps(true)`.
fn sorted(mut v: Value) -> Value {
    match &mut v {
        Value::Object(m) => {
            m.sort_keys();
            for x in m.values_mut() {
                *x = sorted(x.take());
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = sorted(x.take());
            }
        }
        _ => {}
    }
    v
}

/// Replaces `obj[field]`, which changes with every release, by `"[field]"` so the snapshot does not;
/// the field must be there.
fn redact(obj: &mut Value, field: &str) {
    assert!(obj.get(field).is_some(), "no {field} in {obj}");
    obj[field] = Value::String(format!("[{field}]"));
}

fn app() -> std::sync::Arc<mcp_pruner::app::App> {
    mcp_pruner::app::App::new(mcp_pruner::config::Config::for_root(&std::env::temp_dir()))
}

#[test]
fn tools_list_snapshot() {
    let mut list = mcp_pruner::rpc::dispatch::tools_list(&app());
    for tool in list["tools"].as_array_mut().unwrap() {
        redact(tool, "toolingVersion");
    }
    settings().bind(|| insta::assert_json_snapshot!("tools-list", Plain(&list)));
}

#[tokio::test]
async fn initialize_snapshot() {
    let app = app();
    let session = std::sync::Arc::new(mcp_pruner::protocol::Session::new("s"));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let msg = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"snap"}}});
    let mut resp =
        mcp_pruner::rpc::handle(&mcp_pruner::rpc::Server::new(app), &session, msg, tx, None)
            .await
            .unwrap();
    redact(&mut resp["result"]["serverInfo"], "version");
    settings().bind(|| insta::assert_json_snapshot!("initialize", Plain(&resp)));
}
