//! The bearer token for HTTP: from a file, a variable or the deprecated flag. Owns the order of
//! those sources and the file's checks; it must never log the token.

use super::{ConfigError, ServerArgs};

/// Variable holding the bearer token itself.
pub const AUTH_TOKEN_ENV: &str = "MCP_PRUNER_AUTH_TOKEN";
/// Variable naming a file that holds the bearer token.
pub const AUTH_TOKEN_FILE_ENV: &str = "MCP_PRUNER_AUTH_TOKEN_FILE";

/// The bearer token: from `--auth-token-file`, the deprecated `--auth-token`, the file that
/// `MCP_PRUNER_AUTH_TOKEN_FILE` names, or `MCP_PRUNER_AUTH_TOKEN`, in that order. A file's
/// trailing line break is not part of the token; an empty or unreadable file is an error.
pub(super) fn auth_token(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    if args.auth_token.is_some() && args.auth_token_file.is_some() {
        return Err(ConfigError {
            code: "invalid_auth_token",
            field: "--auth-token-file".into(),
            message: "give --auth-token-file or --auth-token, not both".into(),
        });
    }
    let file = match (&args.auth_token_file, &args.auth_token) {
        (Some(f), _) => Some(("--auth-token-file", f.clone())),
        (None, Some(t)) => return Ok(Some(t.clone())),
        (None, None) => env(AUTH_TOKEN_FILE_ENV)
            .filter(|v| !v.trim().is_empty())
            .map(|f| (AUTH_TOKEN_FILE_ENV, f)),
    };
    let Some((origin, path)) = file else {
        return Ok(env(AUTH_TOKEN_ENV).filter(|v| !v.trim().is_empty()));
    };
    let bad = |message: String| ConfigError {
        code: "invalid_auth_token",
        field: origin.into(),
        message,
    };
    let text =
        std::fs::read_to_string(&path).map_err(|e| bad(format!("cannot read {path:?}: {e}")))?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    let token = token.strip_suffix('\r').unwrap_or(token);
    if token.trim().is_empty() {
        return Err(bad(format!("{path:?} holds no token")));
    }
    if token.contains(['\r', '\n']) {
        return Err(bad(format!("{path:?} holds more than one line")));
    }
    Ok(Some(token.to_string()))
}
