//! Generates the contract from `schemas/`: Rust types (typify) into `generated/types.rs`, the
//! inlined tool listing into `generated/contract.json`, and the self-contained bindings bundle
//! into `generated/contract.schema.json`. Both are committed; with `CI` set, a
//! difference between what is committed and what the schemas produce fails the build.

#[path = "build/bundle.rs"]
mod bundle;

use build_print::warn;
use std::{fs, path::Path};

fn main() {
    // Read at run time: a build-script binary can be reused from another checkout of this package.
    let root_buf = std::path::PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let root = root_buf.as_path();
    let schemas_dir = root.join("schemas");
    std::println!("cargo:rerun-if-changed=schemas");
    std::println!("cargo:rerun-if-changed=build/bundle.rs");
    std::println!("cargo:rerun-if-env-changed=CI");

    let mut files = bundle::Files::new();
    let mut manifest = None;
    load(&schemas_dir, &schemas_dir, &mut files, &mut manifest);
    let manifest = manifest.expect("schemas/manifest.json is missing");

    // Every schema file must itself be a valid JSON Schema document.
    let types = generate_types(&files);
    let contract =
        serde_json::to_string_pretty(&bundle::contract_document(&manifest, &files)).unwrap() + "\n";
    let bindings =
        serde_json::to_string_pretty(&bundle::bindings_document(&manifest, &files)).unwrap() + "\n";

    // What `mcp-pruner --version` prints beside the crate version.
    let versions: Vec<String> = manifest["tools"]
        .as_array()
        .expect("manifest.tools")
        .iter()
        .map(|t| {
            format!(
                "{}={}",
                t["name"].as_str().unwrap_or("?"),
                t["schemaVersion"]
            )
        })
        .collect();
    std::println!(
        "cargo:rustc-env=MCP_PRUNER_SCHEMA_VERSIONS={}",
        versions.join(" ")
    );
    std::println!(
        "cargo:rustc-env=MCP_PRUNER_GIT_REVISION={}",
        git_revision(root)
    );
    for head in [".git/HEAD", ".git/refs/heads"] {
        if root.join(head).exists() {
            std::println!("cargo:rerun-if-changed={head}");
        }
    }

    let generated = root.join("generated");
    fs::create_dir_all(&generated).unwrap();
    let ci = std::env::var_os("CI").is_some();
    for (name, content) in [
        ("types.rs", types),
        ("contract.json", contract),
        ("contract.schema.json", bindings),
    ] {
        let path = generated.join(name);
        let current = fs::read_to_string(&path).unwrap_or_default();
        // Up to date is the normal case and says nothing: cargo shows build-script lines as
        // warnings, and a warning must mean something to act on.
        if current == content {
            continue;
        }
        if ci {
            panic!("generated/{name} is stale: run `cargo build` locally and commit generated/");
        }
        fs::write(&path, &content).unwrap();
        warn!(
            "regenerated generated/{name} ({} bytes) from schemas/: commit it",
            content.len()
        );
    }
}

/// The checkout's commit (`git rev-parse --short=12 HEAD`), or `unknown` outside a git checkout.
fn git_revision(root: &Path) -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Reads every `*.json` under `dir` into `files` (keyed relative to `base`), except the manifest.
fn load(
    base: &Path,
    dir: &Path,
    files: &mut bundle::Files,
    manifest: &mut Option<serde_json::Value>,
) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    std::println!("cargo:rerun-if-changed={}", dir.display());
    for path in entries {
        if path.is_dir() {
            // schemas/external/ holds other projects' schemas (the MCP Registry's server.json),
            // used by tests only: never part of this contract.
            if path.file_name().is_some_and(|n| n == "external") {
                continue;
            }
            load(base, &path, files, manifest);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        std::println!("cargo:rerun-if-changed={}", path.display());
        let rel = path
            .strip_prefix(base)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(&path).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("schemas/{rel}: invalid JSON: {e}"));
        if rel == "manifest.json" {
            *manifest = Some(value);
        } else {
            files.insert(rel, value);
        }
    }
}

/// Runs typify over the bundled definitions and returns formatted Rust source.
fn generate_types(files: &bundle::Files) -> String {
    let doc = bundle::typify_document(files);
    let root: schemars::schema::RootSchema =
        serde_json::from_value(doc).expect("bundle is not a schema");
    let mut settings = typify::TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".to_string());
    let mut space = typify::TypeSpace::new(&settings);
    space
        .add_root_schema(root)
        .expect("typify rejected the schemas");
    let file: syn::File = syn::parse2(space.to_stream()).expect("typify produced invalid Rust");
    format!(
        "// @generated by build.rs from schemas/ with typify. Do not edit: change the schema instead.\n\n{}",
        prettyplease::unparse(&file)
    )
}
