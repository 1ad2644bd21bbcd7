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
                message: err.to_string(),
            }),
        }
    }
    out.dedup_by(|a, b| a.field == b.field && a.message == b.message);
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Escapes a property name for use as a JSON pointer segment (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
