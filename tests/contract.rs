//! Contract freezing (seed 003 section 2.2): every tool schema is snapshotted under
//! `snapshots/` per `schemaVersion`. Changing a schema without bumping its version fails
//! `tool_schemas_are_frozen_per_version`; bumping the version needs a new accepted snapshot and
//! keeps the old one. `tools/list` and `initialize` are snapshotted too.

use mcp_pruner::contract::contract;
use serde_json::{Value, json};
use std::path::PathBuf;

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s.set_sort_maps(true);
    s
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
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{}.snap", snapshot_name(name, version)));
    let text = std::fs::read_to_string(path).ok()?;
    let body = text.splitn(3, "---\n").nth(2)?;
    serde_json::from_str(body).ok()
}

#[test]
fn tool_schemas_are_frozen_per_version() {
    for t in &contract().tools {
        settings().bind(|| {
            insta::assert_json_snapshot!(
                snapshot_name(&t.name, t.schema_version),
                frozen_surface(&t.name)
            )
        });
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

/// The guard the snapshots give, shown on a simulated change: a schema edited without a bump no
/// longer equals its frozen version; with a bump it has no accepted snapshot until one is reviewed.
#[test]
fn a_schema_change_without_a_bump_is_caught() {
    let t = contract().tool("read").unwrap();
    let frozen = accepted("read", t.schema_version).expect("read's current version is frozen");
    assert_eq!(
        frozen,
        frozen_surface("read"),
        "unchanged schema matches its snapshot"
    );
    let mut changed = frozen_surface("read");
    changed["inputSchema"]["properties"]["tail"] = json!({ "type": "integer" });
    assert_ne!(
        frozen, changed,
        "a changed schema under the same version differs from the snapshot: the test above fails"
    );
    assert!(
        accepted("read", t.schema_version + 1).is_none(),
        "a bumped version starts without a snapshot: it must be reviewed and accepted"
    );
}

fn app() -> std::sync::Arc<mcp_pruner::app::App> {
    mcp_pruner::app::App::new(mcp_pruner::config::Config::for_root(&std::env::temp_dir()))
}

#[test]
fn tools_list_snapshot() {
    let list = mcp_pruner::rpc::dispatch::tools_list(&app());
    settings().bind(|| insta::assert_json_snapshot!("tools-list", list, { ".tools[].toolingVersion" => "[toolingVersion]" }));
}

#[tokio::test]
async fn initialize_snapshot() {
    let app = app();
    let session = std::sync::Arc::new(mcp_pruner::rpc::Session::new("s"));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let msg = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"snap"}}});
    let resp = mcp_pruner::rpc::handle(&app, &session, msg, tx)
        .await
        .unwrap();
    settings().bind(|| insta::assert_json_snapshot!("initialize", resp, { ".result.serverInfo.version" => "[version]" }));
}
