//! Runtime validation with `jsonschema` against the inlined schemas of `generated/contract.json`.
//! Owns the translation of validator errors into `field_errors` (JSON pointer + message); it never
//! decides what to do about an invalid value.

use serde_json::Value;

pub use super::types::FieldError;

/// Compiles one inlined schema (draft 2020-12). Our own schemas must compile: a failure is a bug.
pub fn compile(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .unwrap_or_else(|e| panic!("schema does not compile: {e}"))
}

/// Every error of `value` against `validator`, as field errors whose pointers start with
/// `prefix`. Unknown and missing properties point at the property itself, not at the enclosing
/// object; an unknown one's message says which properties `shown` (the validated schema, or for
/// a tool the schema `tools/list` publishes, laid out alike) has there, and the one it most
/// likely meant (`path` for `paths`).
pub fn field_errors(
    validator: &jsonschema::Validator,
    shown: &Value,
    value: &Value,
    prefix: &str,
) -> Result<(), Vec<FieldError>> {
    use jsonschema::error::ValidationErrorKind as K;
    let mut out: Vec<FieldError> = Vec::new();
    for err in validator.iter_errors(value) {
        let at = format!("{prefix}{}", err.instance_path().as_str());
        match err.kind() {
            K::AdditionalProperties { unexpected } => {
                let known = known_properties(shown, err.schema_path().as_str());
                // A field sent already is no suggestion for another one.
                let unsent: Vec<String> = known
                    .iter()
                    .filter(|k| err.instance().get(k.as_str()).is_none())
                    .cloned()
                    .collect();
                let place = match (prefix == "/arguments", at == prefix) {
                    (true, true) => Place::Arguments,
                    (true, false) => Place::Argument,
                    (false, _) => Place::Schema,
                };
                for (k, name) in unexpected.iter().enumerate() {
                    out.push(FieldError {
                        field: format!("{at}/{}", escape(name)),
                        // The fields taken are listed once an object.
                        message: unknown_field(name, &known, &unsent, place, k == 0),
                    });
                }
            }
            K::Required { property } => {
                let name = property
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| property.to_string());
                out.push(FieldError {
                    field: format!("{at}/{}", escape(&name)),
                    message: "required field is missing".into(),
                });
            }
            _ => out.push(FieldError {
                field: if at.is_empty() { "/".into() } else { at },
                message: without_long_instance(err.to_string(), err.instance()),
            }),
        }
    }
    out.dedup_by(|a, b| a.field == b.field && a.message == b.message);
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Characters of a client's value an error message repeats at most: enough to recognise it,
/// never the whole of a huge one (a 100 KB question would come back twice in the error).
pub const ECHO_MAX_CHARS: usize = 80;

/// `value` as an error repeats it: whole when short, else its first [`ECHO_MAX_CHARS`]
/// characters and how long it is.
pub fn echo(value: &str) -> String {
    let n = value.chars().count();
    if n <= ECHO_MAX_CHARS {
        return value.to_string();
    }
    let head: String = value.chars().take(ECHO_MAX_CHARS).collect();
    format!("{head}… ({n} characters)")
}

/// A validator's `message` with the offending value (`instance`, which it quotes as JSON) cut to
/// [`echo`]'s length when it is longer.
fn without_long_instance(message: String, instance: &Value) -> String {
    let quoted = instance.to_string();
    if quoted.chars().count() <= ECHO_MAX_CHARS || !message.contains(&quoted) {
        return message;
    }
    let mut cut = echo(&quoted);
    if let Value::String(s) = instance {
        // The count is the value's characters, not those of its JSON form (quotes, escapes).
        let head: String = quoted.chars().take(ECHO_MAX_CHARS).collect();
        cut = format!("{head}… ({} characters)", s.chars().count());
    }
    message.replacen(&quoted, &cut, 1)
}

/// The properties, in order, of the object schema in `schema` that holds the keyword at
/// `keyword_path` (a JSON pointer ending `/additionalProperties`, into the validated schema or
/// one laid out alike).
fn known_properties(schema: &Value, keyword_path: &str) -> Vec<String> {
    keyword_path
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent)?.get("properties")?.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Where an unknown property was found, for its message.
#[derive(Clone, Copy)]
enum Place {
    /// Among a tool call's arguments.
    Arguments,
    /// In an object inside them (`options`).
    Argument,
    /// In any other value (an HTTP body).
    Schema,
}

/// The message for an unknown property `name` where `known` are accepted and `unsent` of them
/// were not sent; `list`: the fields taken are listed (the first unknown property of an object).
fn unknown_field(
    name: &str,
    known: &[String],
    unsent: &[String],
    place: Place,
    list: bool,
) -> String {
    let mut message = String::from(match place {
        Place::Arguments | Place::Argument => "unknown field: not in the tool's inputSchema",
        Place::Schema => "unknown field: not in the schema",
    });
    if list && !known.is_empty() {
        let takes = match place {
            Place::Arguments => ", which takes",
            Place::Argument | Place::Schema => ", whose object here takes",
        };
        message.push_str(&format!("{takes} {}", known.join(", ")));
    }
    if let Some(meant) = likely_meant(name, unsent) {
        message.push_str(&format!(" (did you mean `{meant}`?)"));
    }
    message
}

/// Names agents bring from other tools (Claude Code's `Read`, `Bash` and `Grep`, other servers'),
/// and the property they stand for here when the schema has it.
const OTHER_TOOLS_NAMES: &[(&str, &str)] = &[
    ("file_path", "path"),
    ("filepath", "path"),
    ("file", "path"),
    ("filename", "path"),
    ("command", "cmd"),
    ("workdir", "cwd"),
    ("working_directory", "cwd"),
    ("path", "paths"),
    ("dir", "paths"),
    ("directory", "paths"),
    ("regex", "pattern"),
    ("query", "pattern"),
    ("question", "context_focus_question"),
    ("focus", "context_focus_question"),
    ("goal", "context_focus_question"),
    ("query", "context_focus_question"),
    ("question", "goal_hint"),
    ("goal", "goal_hint"),
    ("timeout", "timeout_ms"),
    ("fixed_strings", "fixed_string"),
    ("literal", "fixed_string"),
    ("id", "prune_id"),
    ("artifact_ref", "prune_id"),
];

/// Names longer than this get no suggestion (no field is that long, and comparing costs time).
const MAX_SUGGESTED_NAME: usize = 64;

/// The known property `name` most likely stands for: the same but for case, `-` for `_` or a
/// plural's `s`; else another tool's name for it; else one within a third of its length in
/// edits. `None` when none is that close.
fn likely_meant<'k>(name: &str, known: &'k [String]) -> Option<&'k str> {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let n = norm(name);
    let len = n.chars().count();
    if len > MAX_SUGGESTED_NAME {
        return None;
    }
    let same = |k: &String| {
        let kn = norm(k);
        kn == n || kn.strip_suffix('s') == Some(n.as_str()) || n.strip_suffix('s') == Some(&kn)
    };
    if let Some(k) = known.iter().find(|k| same(k)) {
        return Some(k);
    }
    if let Some(k) = OTHER_TOOLS_NAMES
        .iter()
        .filter(|(other, _)| *other == n)
        .find_map(|(_, ours)| known.iter().find(|k| k.as_str() == *ours))
    {
        return Some(k);
    }
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let kn = norm(k);
        let klen = kn.chars().count();
        let limit = (len.max(klen) / 3).max(1);
        // The distance is at least the difference in length.
        if len.abs_diff(klen) > limit {
            continue;
        }
        let d = edits(&n, &kn);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k.as_str()));
        }
    }
    best.map(|(_, k)| k)
}

/// Levenshtein distance between two strings, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Escapes a property name for use as a JSON pointer segment (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_misnamed_field_is_matched_to_the_one_it_meant() {
        let read = known(&["path", "offset", "limit", "context_focus_question"]);
        let grep = known(&["pattern", "paths", "cwd", "fixed_string"]);
        assert_eq!(likely_meant("file_path", &read), Some("path"));
        assert_eq!(likely_meant("Path", &read), Some("path"));
        assert_eq!(likely_meant("ofset", &read), Some("offset"));
        assert_eq!(
            likely_meant("question", &read),
            Some("context_focus_question")
        );
        assert_eq!(likely_meant("path", &grep), Some("paths"));
        assert_eq!(likely_meant("fixed-string", &grep), Some("fixed_string"));
        assert_eq!(likely_meant("fixed_strings", &grep), Some("fixed_string"));
        // Another tool's name for a field this schema does not have suggests nothing.
        assert_eq!(likely_meant("command", &read), None);
        assert_eq!(likely_meant("bogus", &read), None);
        assert_eq!(likely_meant("x", &grep), None);
        // Lengths are counted in characters: three CJK characters are no `cmd`.
        assert_eq!(likely_meant("路径名", &known(&["cmd", "cwd"])), None);
        assert_eq!(likely_meant(&"p".repeat(10_000), &grep), None);
        // A field differing only in case is what was meant, before any other tool's name.
        assert_eq!(likely_meant("PATHS", &grep), Some("paths"));
    }

    #[test]
    fn an_unknown_field_is_named_with_what_its_object_takes() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "encoding": {"enum": ["utf-8"]},
                "inner": {
                    "type": "object",
                    "properties": {"depth": {"type": "integer"}},
                    "additionalProperties": false
                }
            },
            "additionalProperties": false
        });
        let v = compile(&schema);
        // The fields are named from the schema shown (here as tools/list publishes it: without
        // the fixed `encoding`), at the place the validated one reports.
        let mut shown = schema.clone();
        shown["properties"]
            .as_object_mut()
            .unwrap()
            .shift_remove("encoding");
        let messages = |value: serde_json::Value, prefix: &str| -> Vec<(String, String)> {
            field_errors(&v, &shown, &value, prefix)
                .unwrap_err()
                .into_iter()
                .map(|e| (e.field, e.message))
                .collect()
        };
        let e = messages(
            serde_json::json!({"pth": 1, "inner": {"dept": 2}}),
            "/arguments",
        );
        let of = |f: &str| e.iter().find(|e| e.0 == f).map(|e| e.1.as_str());
        // A fixed field (a one-value enum, which tools/list leaves out) is not listed.
        assert_eq!(
            of("/arguments/pth"),
            Some(
                "unknown field: not in the tool's inputSchema, which takes path, inner (did you mean `path`?)"
            )
        );
        assert_eq!(
            of("/arguments/inner/dept"),
            Some(
                "unknown field: not in the tool's inputSchema, whose object here takes depth (did you mean `depth`?)"
            )
        );
        // Outside a tool's arguments, the schema is named; the fields are listed once.
        let e = messages(serde_json::json!({"zzz": 1, "zz": 2}), "");
        assert_eq!(
            e.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(),
            [
                "unknown field: not in the schema, whose object here takes path, inner",
                "unknown field: not in the schema",
            ]
        );
        // A field already sent is not suggested for another one.
        let e = messages(serde_json::json!({"path": "a", "pth": 1}), "/arguments");
        assert_eq!(
            e[0].1,
            "unknown field: not in the tool's inputSchema, which takes path, inner"
        );
    }
}
