//! Request guards: DNS-rebinding protection ([`check_host_and_origin`], first on every request:
//! exactly one `Host` naming this server, at most one `Origin`, loopback or explicitly allowed)
//! and the optional bearer token ([`check_auth`], compared in constant time, before any route but
//! `/healthz` answers). Owns what makes a request's `Host`, `Origin` and `Authorization`
//! acceptable; a refusal is a reply in the contract's shape (400, 401, 403). It never reads a
//! body, looks up a session or runs a call.

use super::{Ctx, error};
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use warp::http::{HeaderMap, HeaderValue, StatusCode, header};

/// DNS-rebinding protection, failing closed: exactly one `Host` (HTTP/1.1 requires it), valid
/// UTF-8 and a plain authority (no userinfo), naming this server (`localhost`, a loopback IP
/// literal, or with `--allow-remote` the bound address); at most one `Origin`, parsed as an
/// `http(s)://host[:port]` origin, loopback or explicitly allowed. Names are compared whole,
/// never by prefix: `127.evil.example` is not loopback. A malformed, missing or repeated header
/// is 400; a well-formed foreign one is 403.
#[allow(clippy::result_large_err)]
pub(super) fn check_host_and_origin(
    ctx: &Ctx,
    headers: &HeaderMap,
) -> Result<(), warp::reply::Response> {
    let bad = |m: String| error(StatusCode::BAD_REQUEST, Code::BadRequest, m);
    let forbidden = |m: String| error(StatusCode::FORBIDDEN, Code::Forbidden, m);
    let mut hosts = headers.get_all(header::HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return Err(bad("exactly one Host header is required".into()));
    };
    let Ok(host) = host.to_str() else {
        return Err(bad("the Host header is not valid text".into()));
    };
    let Some(name) = authority_host(host) else {
        return Err(bad(format!("Host {host:?} is not a host[:port] authority")));
    };
    let bound = ctx.local.ip();
    let ok = is_loopback_name(name)
        || (ctx.server.app.config.allow_remote
            && (bound.is_unspecified()
                || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip == bound)));
    if !ok {
        return Err(forbidden(format!(
            "Host {host:?} is not this server (DNS rebinding protection)"
        )));
    }
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let origin = match (origins.next(), origins.next()) {
        (None, _) => return Ok(()),
        (Some(o), None) => o,
        (Some(_), Some(_)) => return Err(bad("at most one Origin header is allowed".into())),
    };
    let Ok(origin) = origin.to_str() else {
        return Err(bad("the Origin header is not valid text".into()));
    };
    if ctx
        .server
        .app
        .config
        .allowed_origins
        .iter()
        .any(|o| o == origin)
    {
        return Ok(());
    }
    let local = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .and_then(authority_host)
        .is_some_and(is_loopback_name);
    if !local {
        return Err(forbidden(format!(
            "Origin {origin:?} is not allowed; add it with --allowed-origin"
        )));
    }
    Ok(())
}

/// The host of a plain authority (`name`, `name:port`, `[v6]`, `[v6]:port`), or `None` when it is
/// not one: userinfo (`a@b`), a path, an empty name, a bad port, text after an IPv6 literal.
fn authority_host(authority: &str) -> Option<&str> {
    let a: warp::http::uri::Authority = authority.parse().ok()?;
    if a.as_str().contains('@') || a.as_str() != authority {
        return None;
    }
    let host_len = a.host().len();
    if host_len == 0 || !authority.is_char_boundary(host_len) {
        return None;
    }
    let (host, rest) = authority.split_at(host_len);
    // After the host: nothing, or `:` and a port (`[::1].evil.com` has text after the literal).
    let port_ok = rest
        .strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !(rest.is_empty() || port_ok) {
        return None;
    }
    match host.strip_prefix('[') {
        Some(v6) => {
            let inner = v6.strip_suffix(']')?;
            inner.parse::<std::net::Ipv6Addr>().ok()?;
            Some(inner)
        }
        None => Some(host),
    }
}

/// `localhost` or a loopback IP literal (127.0.0.0/8, ::1), compared whole.
fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[allow(clippy::result_large_err)]
pub(super) fn check_auth(ctx: &Ctx, headers: &HeaderMap) -> Result<(), warp::reply::Response> {
    let Some(token) = &ctx.server.app.config.auth_token else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(bearer_token);
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
        return Ok(());
    }
    let mut r = error(
        StatusCode::UNAUTHORIZED,
        Code::Unauthorized,
        "missing or wrong bearer token (Authorization: Bearer <token>)",
    );
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    Err(r)
}

/// The token of an `Authorization` value in the Bearer scheme: the scheme's name in any case
/// (RFC 9110, 11.1: `bearer` is `Bearer`), then one or more spaces, then the token.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// Whether `a` equals `b`, in a time that tells neither where they differ nor how long `b` is:
/// both are hashed first (BLAKE3), and the digests compared without an early exit.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    crate::secret::same_bytes(blake3::hash(a).as_bytes(), blake3::hash(b).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::{bearer_token, constant_time_eq};

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("BEARER   s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("Basic czNjcmV0"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearers3cret"), None);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!constant_time_eq(b"s3cret", b"s3cre"));
        assert!(!constant_time_eq(b"s3cret", b"s3cres"));
        assert!(!constant_time_eq(b"", b"s3cret"));
    }
}
