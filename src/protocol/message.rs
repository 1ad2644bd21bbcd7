//! JSON-RPC 2.0 framing: classifying an incoming message and building responses and errors.
//! Owns the wire shapes only; what a method does is [`crate::rpc::dispatch`].

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
    if let Some((at, key)) = duplicate_envelope_member(bytes) {
        let whose = match at {
            Some(i) => format!("message {i} of the batch"),
            None => "the message".into(),
        };
        return Err(error_response(
            Value::Null,
            invalid(&format!(
                "{whose} has more than one {key:?} member: which one is meant is ambiguous"
            )),
        ));
    }
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

/// Members of a JSON-RPC envelope, which a message must not repeat (a parser keeps the last,
/// another peer may take the first).
const ENVELOPE_MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// The first envelope member that a message in `bytes` (valid JSON: one object, or a batch of
/// them) repeats, with the message's index in the batch (`None`: not a batch).
fn duplicate_envelope_member(bytes: &[u8]) -> Option<(Option<usize>, String)> {
    let mut i = skip_ws(bytes, 0);
    match bytes.get(i)? {
        b'{' => duplicate_in_object(bytes, i).map(|k| (None, k)),
        b'[' => {
            i += 1;
            let mut n = 0;
            loop {
                i = skip_ws(bytes, i);
                match bytes.get(i)? {
                    b']' => return None,
                    b',' => i += 1,
                    b'{' => {
                        if let Some(k) = duplicate_in_object(bytes, i) {
                            return Some((Some(n), k));
                        }
                        i = skip_value(bytes, i);
                        n += 1;
                    }
                    _ => {
                        i = skip_value(bytes, i);
                        n += 1;
                    }
                }
            }
        }
        _ => None,
    }
}

/// The first envelope member repeated in the object starting at `bytes[start]` (`{`).
fn duplicate_in_object(bytes: &[u8], start: usize) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut i = start + 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i)? {
            b'}' => return None,
            b',' => i += 1,
            b'"' => {
                let end = skip_value(bytes, i);
                let key: String = serde_json::from_slice(&bytes[i..end]).ok()?;
                if ENVELOPE_MEMBERS.contains(&key.as_str()) {
                    if seen.contains(&key) {
                        return Some(key);
                    }
                    seen.push(key);
                }
                i = skip_ws(bytes, end);
                if bytes.get(i) != Some(&b':') {
                    return None;
                }
                i = skip_value(bytes, skip_ws(bytes, i + 1));
            }
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The index just past the JSON value starting at `bytes[i]` (valid JSON assumed).
fn skip_value(bytes: &[u8], mut i: usize) -> usize {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            // A scalar ends before the bracket that closes its container.
            b'}' | b']' if depth == 0 => return i - 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            b',' | b':' if depth == 0 => return i - 1,
            _ if depth == 0 && b.is_ascii_whitespace() => return i - 1,
            _ => {}
        }
    }
    i
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
    // No id is longer than a few dozen characters: a longer one is echoed cut, where it is named.
    let hint: String = hint.into();
    let hint = if prune_id.chars().count() > crate::contract::validate::ECHO_MAX_CHARS {
        hint.replace(prune_id, &crate::contract::validate::echo(prune_id))
    } else {
        hint
    };
    rpc_error(
        PRUNE_ID_NOT_FOUND,
        "prune_id_not_found",
        Some(RpcErrorData {
            code: Some("prune_id_not_found".into()),
            prune_id: Some(crate::contract::validate::echo(prune_id)),
            hint: Some(hint),
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
    fn repeated_envelope_members_are_refused() {
        let e = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#).unwrap_err();
        assert_eq!(e["error"]["code"], -32600, "{e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains("\"id\""),
            "{e}"
        );
        let e = parse(br#" [ {"jsonrpc":"2.0","id":1,"method":"ping"} , {"id":"a","method":"x","params":{"id":1},"method":"y"} ]"#).unwrap_err();
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("message 1 of the batch"),
            "{e}"
        );
        let e = parse(br#"{"jsonrpc":"2.0","method":"ping","id":1,"id":true}"#).unwrap_err();
        assert!(
            e["error"]["message"].as_str().unwrap().contains("\"id\""),
            "{e}"
        );
        let e =
            parse(br#"[{"method":"ping","id":1},{"method":"ping","id":2,"id":3}]"#).unwrap_err();
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("message 1 of the batch"),
            "{e}"
        );
        // Members of nested objects, and strings that look like keys, are not the envelope's.
        for ok in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"id":1,"arguments":{"id":2,"x":"\"id\":3"}}}"#[..],
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","params":[1,{"id":1}]}]"#,
            br#"{"jsonrpc" : "2.0" , "id" : -1.5e3 , "method" : "ping"}"#,
            br#"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"ping","id":2}]"#,
        ] {
            assert!(parse(ok).is_ok(), "{}", String::from_utf8_lossy(ok));
        }
    }

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
