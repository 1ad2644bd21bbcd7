//! Schema bundling for `build.rs`.
//!
//! Owns the one transformation from the files under `schemas/` to the two shapes the crate needs:
//! a single `definitions` document that typify turns into Rust types, and self-contained (inlined)
//! schemas for `tools/list` and runtime validation, written to `generated/contract.json`.
//! It must never invent schema content: everything it emits is a rearrangement of `schemas/`.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Schema files keyed by their path relative to `schemas/` (for example `tools/read.input.json`).
pub type Files = BTreeMap<String, Value>;

/// The definition name a `$ref` points at: its last path segment. typify resolves references the
/// same way, which is why definition names must be unique across the whole bundle.
pub fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// Every named schema of the bundle: each file's `$defs` entries, and each file root that has a
/// `title`. Panics on a duplicate name, because typify would silently merge them.
pub fn collect_defs(files: &Files) -> BTreeMap<String, Value> {
    let mut defs = BTreeMap::new();
    let mut add = |name: String, schema: Value, file: &str| {
        if defs.insert(name.clone(), schema).is_some() {
            panic!("schemas/{file}: definition name `{name}` is used twice in the bundle");
        }
    };
    for (file, doc) in files {
        if let Some(Value::Object(local)) = doc.get("$defs") {
            for (name, schema) in local {
                add(name.clone(), strip_meta(schema), file);
            }
        }
        if let Some(Value::String(title)) = doc.get("title") {
            add(title.clone(), strip_meta(doc), file);
        }
    }
    defs
}

/// A copy of `schema` without the keys that only matter to the file as a file
/// (`$schema`, `$id`, `$comment`, `$defs`).
fn strip_meta(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                if matches!(k.as_str(), "$schema" | "$id" | "$comment" | "$defs") {
                    continue;
                }
                out.insert(k.clone(), v.clone());
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Rewrites every `$ref` in `schema` to `#/definitions/<name>` (typify's local form).
fn localize_refs(schema: &Value) -> Value {
    refs_under(schema, "#/definitions/")
}

/// Rewrites every `$ref` in `schema` to `<prefix><name>`.
fn refs_under(schema: &Value, prefix: &str) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    if k == "$ref" {
                        let name = ref_name(v.as_str().expect("$ref must be a string"));
                        (k.clone(), Value::String(format!("{prefix}{name}")))
                    } else {
                        (k.clone(), refs_under(v, prefix))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| refs_under(i, prefix)).collect()),
        other => other.clone(),
    }
}

/// `schema` with every `{"$ref": ..., "description": ...}` reduced to its `$ref`: binding
/// generators read a `$ref` with siblings as a new type (json-schema-to-typescript emitted
/// `PruningMetadata1`, `PruningMetadata2`, ... for each described use).
fn bare_refs(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.contains_key("$ref") => json!({ "$ref": map["$ref"] }),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), bare_refs(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(bare_refs).collect()),
        other => other.clone(),
    }
}

/// `generated/contract.schema.json`: the whole contract as one self-contained JSON Schema for
/// client bindings. Every named schema (each tool's input and result, `ToolFailure`, `RpcError`
/// and its code enum, `PruningMetadata`, the HTTP bodies) is under `$defs`, complete with its
/// constraints, its references local (`#/$defs/<name>`); the root lists each one as a property so
/// binding generators emit them all; `x-mcp-pruner-tools` maps each tool to its two definitions.
/// The per-file schemas stay the source of truth: this is derived from them on every build.
pub fn bindings_document(manifest: &Value, files: &Files) -> Value {
    let defs = collect_defs(files);
    let name_of = |path: &str| -> String {
        let doc = files
            .get(path)
            .unwrap_or_else(|| panic!("manifest names missing file {path}"));
        doc["title"]
            .as_str()
            .unwrap_or_else(|| panic!("schemas/{path} needs a title to be bound"))
            .to_string()
    };
    let mut tools = Map::new();
    for tool in manifest["tools"].as_array().expect("manifest.tools") {
        let name = tool["name"].as_str().expect("tool name");
        tools.insert(
            name.to_string(),
            json!({
                "input": name_of(tool["input"].as_str().expect("input")),
                "output": name_of(tool["output"].as_str().expect("output")),
                "schemaVersion": tool["schemaVersion"],
            }),
        );
    }
    let properties: Map<String, Value> = defs
        .keys()
        .map(|n| (n.clone(), json!({ "$ref": format!("#/$defs/{n}") })))
        .collect();
    let defs: Map<String, Value> = defs
        .iter()
        .map(|(n, s)| (n.clone(), bare_refs(&refs_under(s, "#/$defs/"))))
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "mcp-pruner/contract.schema.json",
        "title": "McpPrunerContract",
        "description": "Every input, result and error of mcp-pruner's tools, for generating client bindings. A tool's result is `_meta[\"mcp-pruner/result\"]` (or structuredContent) on success, ToolFailure when isError; JSON-RPC errors are RpcError.",
        "type": "object",
        "properties": properties,
        "x-mcp-pruner-tools": tools,
        "$defs": defs,
    })
}

/// The document typify reads: an untitled root whose `definitions` hold every named schema,
/// reduced to its shape. Constraints that typify would turn into validating newtypes
/// (`minLength`, `pattern`, `maxItems`, ...) are left out here: the runtime enforces them with
/// jsonschema against the very same files, so the handlers work with plain `String`s and `Vec`s.
pub fn typify_document(files: &Files) -> Value {
    let defs: Map<String, Value> = collect_defs(files)
        .into_iter()
        .map(|(name, schema)| (name, shape_only(&localize_refs(&schema))))
        .collect();
    json!({ "definitions": defs })
}

/// Keywords that constrain values without changing their Rust shape.
const VALUE_CONSTRAINTS: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "maxProperties",
    "propertyNames",
    "format",
];

/// A copy of `schema` without [`VALUE_CONSTRAINTS`] (only where they are keywords, not property names).
fn shape_only(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !VALUE_CONSTRAINTS.contains(&k.as_str()))
                .map(|(k, v)| {
                    if k == "properties" {
                        let props = v
                            .as_object()
                            .map(|p| p.iter().map(|(n, s)| (n.clone(), shape_only(s))).collect());
                        (
                            k.clone(),
                            props.map(Value::Object).unwrap_or_else(|| v.clone()),
                        )
                    } else {
                        (k.clone(), shape_only(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape_only).collect()),
        other => other.clone(),
    }
}

/// `schema` with every `$ref` replaced by the referenced definition, recursively, and without
/// `title` (noise for clients). Our schemas are not recursive, so this terminates; a cycle panics.
pub fn inline(schema: &Value, defs: &BTreeMap<String, Value>) -> Value {
    inline_at(schema, defs, &mut Vec::new())
}

fn inline_at(schema: &Value, defs: &BTreeMap<String, Value>, stack: &mut Vec<String>) -> Value {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                let name = ref_name(reference).to_string();
                assert!(!stack.contains(&name), "recursive schema through `{name}`");
                let target = defs
                    .get(&name)
                    .unwrap_or_else(|| panic!("$ref to unknown definition `{name}`"));
                stack.push(name);
                let mut resolved = inline_at(target, defs, stack);
                stack.pop();
                // Sibling keywords of $ref (2020-12 allows them) override the target's.
                if let Value::Object(out) = &mut resolved {
                    for (k, v) in map {
                        if k != "$ref" {
                            out.insert(k.clone(), inline_at(v, defs, stack));
                        }
                    }
                }
                return resolved;
            }
            let mut out = Map::new();
            for (k, v) in map {
                if matches!(
                    k.as_str(),
                    "$schema" | "$id" | "$comment" | "$defs" | "title"
                ) {
                    continue;
                }
                out.insert(k.clone(), inline_at(v, defs, stack));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| inline_at(v, defs, stack)).collect())
        }
        other => other.clone(),
    }
}

/// Keywords a model does not need to choose arguments well; the server still enforces them, since
/// validation uses the full schema (seed 004: schemas without noise).
const VALIDATION_ONLY: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "maxProperties",
    "propertyNames",
];

/// Whether a listing keyword is noise for a model choosing arguments: validation-only keywords,
/// `additionalProperties: false`, small integer lower bounds (0 or 1 for counts and 1-based lines;
/// 100 ms for timeouts, 1024 bytes for budgets: no sensible call goes below them, and one that does
/// gets -32602 naming the field and the bound), and upper bounds above a million (no call gets
/// near them).
fn is_noise(key: &str, value: &Value) -> bool {
    VALIDATION_ONLY.contains(&key)
        || (key == "additionalProperties" && *value == Value::Bool(false))
        || (key == "minimum"
            && value.as_f64().is_some_and(|m| (0.0..=1024.0).contains(&m))
            && value.is_i64())
        || (key == "maximum" && value.as_f64().is_some_and(|m| m > 1_000_000.0))
        || (key == "properties" && value.as_object().is_some_and(|p| p.is_empty()))
}

/// Whether a property is a single-valued enum: it has one possible value, the default, so a model
/// never needs to send it (the server still accepts it).
fn is_fixed(schema: &Value) -> bool {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.len() == 1)
}

/// The schema as `tools/list` publishes it: noise keywords ([`is_noise`]) and fixed properties
/// ([`is_fixed`]) left out; everything the server enforces is still enforced on the full schema.
pub fn listing_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !is_noise(k, v))
                .map(|(k, v)| {
                    if k == "properties" {
                        let props = v.as_object().map(|p| {
                            p.iter()
                                .filter(|(_, s)| !is_fixed(s))
                                .map(|(n, s)| (n.clone(), listing_schema(s)))
                                .collect()
                        });
                        (
                            k.clone(),
                            props.map(Value::Object).unwrap_or_else(|| v.clone()),
                        )
                    } else {
                        (k.clone(), listing_schema(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(listing_schema).collect()),
        other => other.clone(),
    }
}

/// `generated/contract.json`: the manifest with each tool's input and output schema inlined, and
/// every other named schema (HTTP bodies, shared definitions) inlined under `schemas`.
pub fn contract_document(manifest: &Value, files: &Files) -> Value {
    let defs = collect_defs(files);
    let tools: Vec<Value> = manifest["tools"]
        .as_array()
        .expect("manifest.tools must be an array")
        .iter()
        .map(|tool| {
            let file = |key: &str| {
                let path = tool[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("manifest tool needs `{key}`"));
                files
                    .get(path)
                    .unwrap_or_else(|| panic!("manifest names missing file {path}"))
            };
            let mut out = Map::new();
            for key in [
                "name",
                "description",
                "schemaVersion",
                "annotations",
                "aliases",
            ] {
                if let Some(v) = tool.get(key) {
                    out.insert(key.to_string(), v.clone());
                }
            }
            let input = inline(file("input"), &defs);
            out.insert("listedInputSchema".into(), listing_schema(&input));
            out.insert("inputSchema".into(), input);
            out.insert("outputSchema".into(), inline(file("output"), &defs));
            Value::Object(out)
        })
        .collect();
    let schemas: Map<String, Value> = defs
        .iter()
        .map(|(name, s)| (name.clone(), inline(s, &defs)))
        .collect();
    json!({ "tools": tools, "schemas": schemas })
}
