//! The two MCP eras, chosen per request: the 2025-11-25 handshake era (`initialize`, sessions) and
//! the 2026-07-28 stateless revision (every request carries its protocol version, client info and
//! capabilities in `params._meta`; `server/discover` replaces the handshake).
//!
//! Owns recognising a modern request, the envelope ladder (SEP-2575: envelope keys, mirrored HTTP
//! headers, supported version), the modern result envelope (`resultType`, the `serverInfo` stamp,
//! cache hints) and the HTTP status of a modern error. It never routes methods (that is
//! [`crate::rpc::dispatch`]) and never touches a transport: HTTP hands it the mirrored header values.

use super::message::{self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};
use super::session::{LOG_LEVELS, PROTOCOL_VERSIONS};
use crate::contract::types::{RpcError, RpcErrorData};
use serde_json::{Value, json};

/// Revisions served with per-request envelopes (no handshake).
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// `_meta` key naming the request's protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's `Implementation` (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the client's capabilities for this request (required).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key opting this request in to log notifications at or above a level.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key identifying the server.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// HeaderMismatch: a mirrored HTTP header disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// UnsupportedProtocolVersion: the declared version is not served; `data.supported` says which are.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Methods the 2026-07-28 revision removed: answered -32601 in the modern era.
pub const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods whose `params` field is mirrored in the `Mcp-Name` header, and that field.
const NAME_BEARING: &[(&str, &str)] = &[
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
];

/// The values of the routing headers an HTTP request carried (`None` when absent). Stdio has none.
#[derive(Debug, Default, Clone)]
pub struct Mirrored {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method`.
    pub method: Option<String>,
    /// `Mcp-Name`.
    pub name: Option<String>,
}

/// What a modern request declared in its envelope.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// The declared (and served) protocol version.
    pub version: String,
    /// `clientInfo`, when sent (logged; never changes behaviour).
    pub client_info: Option<Value>,
    /// Index into [`LOG_LEVELS`] of the requested log level; `None` sends no log notifications.
    pub log_level: Option<usize>,
}

/// Whether a message is served under the stateless revision: it is `server/discover`, its
/// `params._meta` declares a protocol version, or (HTTP) its `MCP-Protocol-Version` header names a
/// modern revision. Everything else keeps the handshake era's behaviour byte for byte.
pub fn is_modern(method: &str, params: &Value, header_version: Option<&str>) -> bool {
    method == "server/discover"
        || params
            .pointer("/_meta")
            .is_some_and(|m| m.get(PROTOCOL_VERSION_KEY).is_some())
        || header_version.is_some_and(|v| MODERN_VERSIONS.contains(&v))
}

/// Runs the envelope ladder over a modern request; the first failing rung is the error:
/// 1. `params._meta` carries the protocol version and client capabilities (-32602);
/// 2. on HTTP, `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` equal the body (-32020);
/// 3. the version is a string (-32602) this server serves (-32022 with `data.supported`).
pub fn envelope(
    method: &str,
    params: &Value,
    headers: Option<&Mirrored>,
) -> Result<Envelope, RpcError> {
    let Some(meta) = params.get("_meta").filter(|m| m.is_object()) else {
        return Err(invalid_params(format!(
            "params._meta must be an object carrying the required {PROTOCOL_VERSION_KEY:?} and {CLIENT_CAPABILITIES_KEY:?} envelope keys"
        )));
    };
    let missing: Vec<&str> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
        .into_iter()
        .filter(|k| meta.get(k).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(invalid_params(format!(
            "params._meta is missing the required envelope key(s): {}",
            missing.join(", ")
        )));
    }
    let version = &meta[PROTOCOL_VERSION_KEY];
    if let Some(h) = headers {
        if h.protocol_version.as_deref() != version.as_str() || version.as_str().is_none() {
            return Err(mismatch(
                "MCP-Protocol-Version header does not match the request envelope's protocol version",
            ));
        }
        if h.method.as_deref() != Some(method) {
            return Err(mismatch(
                "Mcp-Method header does not match the request body's method",
            ));
        }
        if let Some((_, field)) = NAME_BEARING.iter().find(|(m, _)| *m == method)
            && let Some(body) = params.get(*field).filter(|v| !v.is_null())
            && h.name.as_deref().and_then(decode_header_value).as_ref()
                != body.as_str().map(str::to_string).as_ref()
        {
            return Err(mismatch(&format!(
                "Mcp-Name header does not match the request body's {field:?} parameter"
            )));
        }
    }
    let Some(version) = version.as_str() else {
        return Err(invalid_params(
            "the protocol-version envelope value must be a string".into(),
        ));
    };
    if !MODERN_VERSIONS.contains(&version) {
        return Err(unsupported_version(version));
    }
    let log_level = meta
        .get(LOG_LEVEL_KEY)
        .and_then(Value::as_str)
        .and_then(|l| LOG_LEVELS.iter().position(|x| *x == l));
    Ok(Envelope {
        version: version.to_string(),
        client_info: meta.get(CLIENT_INFO_KEY).cloned(),
        log_level,
    })
}

/// Every version served, the envelope revisions first: `server/discover`'s `supportedVersions` and
/// -32022's `data.supported`.
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS
        .iter()
        .chain(PROTOCOL_VERSIONS)
        .copied()
        .collect()
}

/// -32022 for `requested`, naming every version served (as the specification says: "protocol
/// versions the server supports"), so a client with no envelope revision in common falls back to
/// the handshake.
pub fn unsupported_version(requested: &str) -> RpcError {
    message::rpc_error(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        Some(RpcErrorData {
            supported: supported_versions().iter().map(|v| v.to_string()).collect(),
            requested: Some(requested.to_string()),
            ..Default::default()
        }),
    )
}

/// -32020 with a message.
pub fn mismatch(message: &str) -> RpcError {
    message::rpc_error(HEADER_MISMATCH, message, None)
}

fn invalid_params(message: String) -> RpcError {
    message::rpc_error(INVALID_PARAMS, message, None)
}

/// -32601 for a method the revision removed.
pub fn removed(method: &str) -> RpcError {
    message::rpc_error(
        METHOD_NOT_FOUND,
        format!("Method not found: {method} (removed in protocol revision 2026-07-28)"),
        None,
    )
}

/// The modern envelope of a result: `resultType` (required by the revision), the server's
/// identity under `_meta`, and the cache hints of the cacheable methods.
pub fn finish(method: &str, mut result: Value, server_info: Value) -> Value {
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    if let Some((ttl_ms, scope)) = cache_hint(method) {
        obj.entry("ttlMs").or_insert(json!(ttl_ms));
        obj.entry("cacheScope").or_insert(json!(scope));
    }
    obj.entry("resultType").or_insert(json!("complete"));
    if let Value::Object(meta) = obj.entry("_meta").or_insert_with(|| json!({})) {
        meta.entry(SERVER_INFO_KEY).or_insert(server_info);
    }
    result
}

/// `(ttlMs, cacheScope)` for the cacheable methods. The tool and template listings depend only on
/// the server's configuration (an hour, shareable); the stored outputs listed or read belong to
/// one caller and can be evicted at any time (private, not to be reused).
fn cache_hint(method: &str) -> Option<(u64, &'static str)> {
    match method {
        "server/discover" | "tools/list" | "resources/templates/list" | "prompts/list" => {
            Some((3_600_000, "public"))
        }
        "resources/list" | "resources/read" => Some((0, "private")),
        _ => None,
    }
}

/// The HTTP status of a modern-era JSON reply: 400 for envelope and request errors, 404 for an
/// unknown method, 200 otherwise (tool failures are results, not errors).
pub fn http_status(reply: &Value) -> u16 {
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH) => 400,
        Some(-32021 | UNSUPPORTED_PROTOCOL_VERSION) => 400,
        Some(METHOD_NOT_FOUND) => 404,
        _ => 200,
    }
}

/// The `Mcp-Name` header a client sends with `method`: the name-bearing parameter, verbatim when
/// it is visible ASCII, else in the `=?base64?…?=` form. `None` for other methods.
pub fn mirrored_name(method: &str, params: &Value) -> Option<String> {
    let (_, field) = NAME_BEARING.iter().find(|(m, _)| *m == method)?;
    let value = params.get(*field)?.as_str()?;
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_graphic()) {
        return Some(value.to_string());
    }
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(value);
    Some(format!("=?base64?{encoded}?="))
}

/// A header value as the client mirrored it: verbatim, or the `=?base64?…?=` form decoded.
/// A malformed encoded value decodes to `None` and so never matches the body.
fn decode_header_value(value: &str) -> Option<String> {
    let Some(payload) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(value.to_string());
    };
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(version: &str) -> Value {
        json!({"_meta": {PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {}}, "name": "read"})
    }

    #[test]
    fn modern_requests_are_recognised_by_method_meta_or_header() {
        assert!(is_modern("server/discover", &json!({}), None));
        assert!(is_modern("tools/list", &params("x"), None));
        assert!(is_modern("tools/list", &json!({}), Some("2026-07-28")));
        let progress_only = json!({"_meta": {"progressToken": 1}});
        assert!(!is_modern("tools/list", &progress_only, Some("2025-11-25")));
    }

    #[test]
    fn the_ladder_reports_the_first_failing_rung() {
        let e = envelope("tools/list", &json!({}), None).unwrap_err();
        assert_eq!(i64::from(e.code), INVALID_PARAMS);
        let e = envelope("tools/list", &params("2099-01-01"), None).unwrap_err();
        assert_eq!(i64::from(e.code), UNSUPPORTED_PROTOCOL_VERSION);
        let h = Mirrored {
            protocol_version: Some("2026-07-28".into()),
            method: Some("tools/call".into()),
            name: Some("=?base64?cmVhZA==?=".into()),
        };
        assert!(envelope("tools/call", &params("2026-07-28"), Some(&h)).is_ok());
        let wrong = Mirrored {
            name: Some("bash".into()),
            ..h.clone()
        };
        let e = envelope("tools/call", &params("2026-07-28"), Some(&wrong)).unwrap_err();
        assert_eq!(i64::from(e.code), HEADER_MISMATCH);
        // A header that disagrees is reported before an unsupported body version.
        let e = envelope("tools/call", &params("2099-01-01"), Some(&h)).unwrap_err();
        assert_eq!(i64::from(e.code), HEADER_MISMATCH);
    }

    #[test]
    fn a_mirrored_name_decodes_to_the_body() {
        let p = json!({"name": "héllo wörld"});
        let h = mirrored_name("tools/call", &p).unwrap();
        assert!(h.starts_with("=?base64?"));
        assert_eq!(decode_header_value(&h).as_deref(), Some("héllo wörld"));
        assert_eq!(
            mirrored_name("resources/read", &json!({"uri": "file:///a"})).as_deref(),
            Some("file:///a")
        );
        assert_eq!(mirrored_name("tools/list", &p), None);
    }
}
