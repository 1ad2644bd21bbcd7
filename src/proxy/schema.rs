//! Upstream tools as listed downstream: the upstream's name (with the optional prefix), its
//! description and annotations untouched, no output schema (a pruned result may carry its pruned
//! text in place of a `structuredContent` that repeats it, [`super::shape`]; a listed output
//! schema would oblige the result to conform), and its input schema extended with the
//! two arguments of the built-in tools, `context_focus_question` and `max_output_bytes`, taken
//! from the contract (`FocusQuestion`, `MaxOutputBytes` in `schemas/defs/common.json`), never
//! written again here. A tool that already defines one of them keeps its own definition, and that
//! argument stays the upstream's: it is forwarded, and the proxy does not use it. Owns listing
//! and argument splitting; never calls the upstream.

use crate::contract::contract;
use crate::contract::types::FieldError;
use serde_json::{Map, Value};

/// The question argument.
pub const QUESTION: &str = "context_focus_question";
/// The per-call budget argument.
pub const MAX_BYTES: &str = "max_output_bytes";

/// Which of the two arguments the upstream tool defines itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owned {
    /// It has its own `context_focus_question`.
    pub question: bool,
    /// It has its own `max_output_bytes`.
    pub max_bytes: bool,
}

/// What the upstream tool's input schema defines.
pub fn owned(input_schema: &Value) -> Owned {
    let props = &input_schema["properties"];
    Owned {
        question: props.get(QUESTION).is_some(),
        max_bytes: props.get(MAX_BYTES).is_some(),
    }
}

/// `tool` (an upstream `tools/list` entry) as listed downstream.
pub fn extend(tool: &Value, prefix: &str) -> Value {
    let mut tool = tool.clone();
    if let Some(name) = tool.get("name").and_then(Value::as_str) {
        tool["name"] = Value::String(format!("{prefix}{name}"));
    }
    if let Some(t) = tool.as_object_mut() {
        t.remove("outputSchema");
    }
    let schema = tool
        .as_object_mut()
        .and_then(|t| t.get_mut("inputSchema"))
        .and_then(Value::as_object_mut);
    let Some(schema) = schema else {
        return tool;
    };
    let props = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(props) = props.as_object_mut() {
        for (arg, def) in [(QUESTION, "FocusQuestion"), (MAX_BYTES, "MaxOutputBytes")] {
            if !props.contains_key(arg) {
                props.insert(arg.into(), contract().schemas[def].clone());
            }
        }
    }
    tool
}

/// The proxy's own arguments taken out of `arguments` (those the tool does not own), checked
/// against the contract: the question and the budget.
pub fn split(
    arguments: &mut Map<String, Value>,
    owned: Owned,
) -> Result<(Option<String>, Option<i64>), Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut take = |arg: &str, def: &str, own: bool| -> Option<Value> {
        if own {
            return None;
        }
        let v = arguments.remove(arg)?;
        if let Err(e) = contract().validate(def, &v) {
            errors.extend(e.into_iter().map(|mut f| {
                f.field = format!("/arguments/{arg}{}", f.field.trim_start_matches('/').trim());
                if f.field.ends_with('/') {
                    f.field.pop();
                }
                f
            }));
        }
        Some(v)
    };
    let question = take(QUESTION, "FocusQuestion", owned.question);
    let max_bytes = take(MAX_BYTES, "MaxOutputBytes", owned.max_bytes);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok((
        question.and_then(|q| q.as_str().map(str::to_string)),
        max_bytes.and_then(|m| m.as_i64()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extends_without_overriding_the_upstreams_own() {
        let t = json!({"name": "echo", "inputSchema": {"type": "object",
            "properties": {"max_output_bytes": {"type": "string"}}}});
        let e = extend(&t, "up_");
        assert_eq!(e["name"], "up_echo");
        assert_eq!(
            e["inputSchema"]["properties"]["max_output_bytes"]["type"],
            "string"
        );
        assert_eq!(
            e["inputSchema"]["properties"]["context_focus_question"]["type"],
            "string"
        );
        let own = owned(&t["inputSchema"]);
        let mut args = json!({"max_output_bytes": "x", "context_focus_question": "why?"})
            .as_object()
            .cloned()
            .unwrap();
        let (q, m) = split(&mut args, own).unwrap();
        assert_eq!((q.as_deref(), m), (Some("why?"), None));
        assert_eq!(args.len(), 1, "the upstream's own argument is forwarded");
    }

    #[test]
    fn bad_values_are_field_errors() {
        let mut args = json!({"max_output_bytes": 5}).as_object().cloned().unwrap();
        let e = split(&mut args, Owned::default()).unwrap_err();
        assert_eq!(e[0].field, "/arguments/max_output_bytes");
    }
}
