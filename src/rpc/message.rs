//! JSON-RPC 2.0 framing: classifying an incoming message and building responses and errors.
//! Owns the wire shapes only; what a method does is [`super::dispatch`].

use crate::contract::types::{FieldError, RpcError, RpcErrorCode, RpcErrorData};
use serde_json::{Value, json};

/// Parse error (-32700).
pub const PARSE_ERROR: i64 = -32700;
/// Invalid request (-32600).
pub const INVALID_REQUEST: i64 = -32600;
/// Method not found (-32601).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid params (-32602), with `data.field_errors`.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error (-32603).
pub const INTERNAL_ERROR: i64 = -32603;
/// Seed 001: unknown or expired `prune_id` (-32004).
pub const PRUNE_ID_NOT_FOUND: i64 = -32004;
/// Seed 001: invalid recovery range (-32005).
pub const INVALID_RANGE: i64 = -32005;

/// Most JSON values (objects, arrays, scalars) one message may hold. A parsed value costs tens
/// of bytes however short its text (`0,` is two bytes), so without this a 16 MiB body of
/// `[0,0,...]` became gigabytes; at this cap the tree of any message stays a few MiB beside its
/// strings. Tool arguments are a handful of fields, so no real request comes near it.
pub const MAX_JSON_VALUES: usize = 100_000;

/// Most messages in one JSON-RPC batch (each gets its own reply object).
pub const MAX_BATCH_LEN: usize = 1_000;

/// Parses one message's bytes, refusing before the parse what would blow up in memory: more
/// than [`MAX_JSON_VALUES`] values, an empty batch, or one longer than [`MAX_BATCH_LEN`].
/// The error is the response to send back (-32700 or -32600, id null).
pub fn parse(bytes: &[u8]) -> Result<Value, Value> {
    let values = count_values(bytes);
    if values > MAX_JSON_VALUES {
        return Err(error_response(
            Value::Null,
            invalid(&format!(
                "the message holds about {values} JSON values; at most {MAX_JSON_VALUES} are accepted"
            )),
        ));
    }
    let msg: Value = serde_json::from_slice(bytes).map_err(|e| {
        crate::events::request_parse_failed(&e.to_string());
        error_response(
            Value::Null,
            rpc_error(PARSE_ERROR, format!("Parse error: {e}"), None),
        )
    })?;
    match &msg {
        Value::Array(batch) if batch.is_empty() => {
            Err(error_response(Value::Null, invalid("empty batch")))
        }
        Value::Array(batch) if batch.len() > MAX_BATCH_LEN => Err(error_response(
            Value::Null,
            invalid(&format!(
                "a batch of {} messages; at most {MAX_BATCH_LEN} per batch",
                batch.len()
            )),
        )),
        _ => Ok(msg),
    }
}

/// An upper bound on the number of JSON values in `bytes`, from one pass over its structure:
/// every `[`, `{` and `,` outside strings starts at most one more value.
pub fn count_values(bytes: &[u8]) -> usize {
    let (mut n, mut in_string, mut escaped) = (1usize, false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' | b',' => n += 1,
                _ => {}
            }
        }
    }
    n
}

/// One classified incoming message.
#[derive(Debug)]
pub enum Incoming {
    /// A request: needs exactly one response.
    Request {
        /// The id as sent (string or number).
        id: Value,
        /// Method name.
        method: String,
        /// Params (`{}` when omitted).
        params: Value,
    },
    /// A notification: never answered.
    Notification {
        /// Method name.
        method: String,
        /// Params (`{}` when omitted).
        params: Value,
    },
    /// A response from the client (we send no requests, so these are ignored).
    Response,
}

/// Classifies one JSON value as a JSON-RPC 2.0 message, or returns the -32600 error to send back.
pub fn classify(msg: Value) -> Result<Incoming, Value> {
    let id_for_error = msg
        .get("id")
        .cloned()
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(Value::Null);
    let Value::Object(mut obj) = msg else {
        return Err(error_response(
            Value::Null,
            invalid("expected a JSON-RPC 2.0 object"),
        ));
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error_response(
            id_for_error,
            invalid("`jsonrpc` must be \"2.0\""),
        ));
    }
    if !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error")) {
        return Ok(Incoming::Response);
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        _ => {
            return Err(error_response(
                id_for_error,
                invalid("`method` must be a string"),
            ));
        }
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => json!({}),
        Some(p @ (Value::Object(_) | Value::Array(_))) => p,
        Some(_) => {
            return Err(error_response(
                id_for_error,
                invalid("`params` must be an object or an array"),
            ));
        }
    };
    match obj.remove("id") {
        None => Ok(Incoming::Notification { method, params }),
        Some(Value::Number(n)) if !is_integer_literal(&n) => Err(error_response(
            Value::Null,
            invalid("`id` must be a string or an integer (no fraction or exponent)"),
        )),
        // Numbers keep their text (`arbitrary_precision`): the id goes back exactly as sent,
        // `123456789012345678901234567890` and `-0` included.
        Some(id @ (Value::String(_) | Value::Number(_))) => {
            Ok(Incoming::Request { id, method, params })
        }
        Some(_) => Err(error_response(
            Value::Null,
            invalid("`id` must be a string or an integer"),
        )),
    }
}

/// A number written as an integer: an optional `-` and digits, nothing else.
fn is_integer_literal(n: &serde_json::Number) -> bool {
    let text = n.to_string();
    let digits = text.strip_prefix('-').unwrap_or(&text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A JSON-RPC error object.
pub fn rpc_error(code: i64, message: impl Into<String>, data: Option<RpcErrorData>) -> RpcError {
    RpcError {
        code: RpcErrorCode::try_from(code)
            .unwrap_or_else(|_| RpcErrorCode::try_from(INTERNAL_ERROR).expect("known code")),
        message: message.into(),
        data,
    }
}

/// -32600 with a message.
pub fn invalid(message: &str) -> RpcError {
    rpc_error(INVALID_REQUEST, format!("Invalid Request: {message}"), None)
}

/// -32602 with `data.field_errors`.
pub fn invalid_params(field_errors: Vec<FieldError>) -> RpcError {
    let summary = field_errors
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join("; ");
    rpc_error(
        INVALID_PARAMS,
        format!("Invalid params: {summary}"),
        Some(RpcErrorData {
            field_errors,
            ..Default::default()
        }),
    )
}

/// -32004 `prune_id_not_found` for `prune_id`, with a hint saying why (unknown, expired, evicted,
/// or a referenced file that changed) — seed 001 section 8.
pub fn prune_id_not_found(prune_id: &str, hint: impl Into<String>) -> RpcError {
    rpc_error(
        PRUNE_ID_NOT_FOUND,
        "prune_id_not_found",
        Some(RpcErrorData {
            code: Some("prune_id_not_found".into()),
            prune_id: Some(prune_id.into()),
            hint: Some(hint.into()),
            ..Default::default()
        }),
    )
}

/// -32602 for a single field.
pub fn invalid_field(field: &str, message: impl Into<String>) -> RpcError {
    invalid_params(vec![FieldError {
        field: field.into(),
        message: message.into(),
    }])
}

/// `{jsonrpc, id, result}`.
pub fn result_response(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// `{jsonrpc, id, error}`.
pub fn error_response(id: Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// A notification message.
pub fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// The canonical in-flight key of a request id (seed 003 section 7.2: `String(id)`).
pub fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert_eq!(count_values(br#"{"a":[1,2,3]}"#), 5);
        assert_eq!(count_values(br#"{"a":"[,{,\",["}"#), 2);
        assert!(count_values(b"[0,0,0,0]") >= 4);
    }

    #[test]
    fn oversized_structures_are_refused_before_parsing() {
        let body = format!("[{}0]", "0,".repeat(MAX_JSON_VALUES));
        let e = parse(body.as_bytes()).unwrap_err();
        assert_eq!(e["error"]["code"], INVALID_REQUEST);
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("JSON values")
        );
        let batch = format!("[{}]", vec!["{}"; MAX_BATCH_LEN + 1].join(","));
        let e = parse(batch.as_bytes()).unwrap_err();
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("per batch"),
            "{e}"
        );
        assert!(parse(b"[]").is_err());
        // A long string is one value, whatever it holds.
        let text = format!(r#"{{"t":"{}"}}"#, "[0,".repeat(MAX_JSON_VALUES));
        assert!(parse(text.as_bytes()).is_ok());
    }
}
