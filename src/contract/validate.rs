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

/// Every error of `value` against `validator`, as field errors whose pointers start with `prefix`.
/// Unknown and missing properties point at the property itself, not at the enclosing object.
pub fn field_errors(
    validator: &jsonschema::Validator,
    value: &Value,
    prefix: &str,
) -> Result<(), Vec<FieldError>> {
    use jsonschema::error::ValidationErrorKind as K;
    let mut out: Vec<FieldError> = Vec::new();
    for err in validator.iter_errors(value) {
        let at = format!("{prefix}{}", err.instance_path().as_str());
        match err.kind() {
            K::AdditionalProperties { unexpected } => {
                for name in unexpected {
                    out.push(FieldError {
                        field: format!("{at}/{}", escape(name)),
                        message: "unknown field: not in the tool's inputSchema".into(),
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

/// Escapes a property name for use as a JSON pointer segment (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
