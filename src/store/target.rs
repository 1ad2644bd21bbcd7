//! Where the recovery store lives: `memory` (this process, the default) or a Valkey/Redis server
//! named by `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` or `rediss://…` (TLS). Parsing only;
//! must never print a password (its `Display` and `Debug` leave it out).

use std::fmt;

/// A Valkey/Redis server for the shared store.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    /// Host name or address.
    pub host: String,
    /// Port (6379 unless given).
    pub port: u16,
    /// Database number (`SELECT`), 0 unless given.
    pub db: u32,
    /// `rediss://`: TLS.
    pub tls: bool,
    /// ACL user, if any.
    pub user: Option<String>,
    /// Password, if any.
    pub password: Option<String>,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "{scheme}://{host}:{}/{}", self.port, self.db)
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({self})")
    }
}

/// Parses a `--store` value: `None` for `memory`, the server for a `redis://` or `rediss://`
/// URL; an error message for anything else.
pub fn parse(raw: &str) -> Result<Option<Target>, String> {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case("memory") {
        return Ok(None);
    }
    let url = url::Url::parse(raw).map_err(|e| {
        format!("expected memory, redis://HOST[:PORT][/DB] or rediss://…, got an invalid URL ({e})")
    })?;
    let tls = match url.scheme() {
        "redis" => false,
        "rediss" => true,
        s => {
            return Err(format!(
                "expected memory, redis://HOST[:PORT][/DB] or rediss://…, got scheme {s:?}"
            ));
        }
    };
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or("the URL names no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let path = url.path().trim_start_matches('/');
    let db = if path.is_empty() {
        0
    } else {
        path.parse::<u32>()
            .map_err(|_| format!("the database must be a number (/0../15…), got /{path}"))?
    };
    if url.query().is_some() || url.fragment().is_some() {
        return Err("the URL takes no query or fragment".into());
    }
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let user = Some(url.username()).filter(|u| !u.is_empty()).map(&decode);
    let password = url.password().map(decode);
    Ok(Some(Target {
        host,
        port: url.port().unwrap_or(6379),
        db,
        tls,
        user,
        password,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_never_show_the_password() {
        assert_eq!(parse("memory").unwrap(), None);
        let t = parse("redis://127.0.0.1:6380/2").unwrap().unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.db, t.tls),
            ("127.0.0.1", 6380, 2, false)
        );
        let t = parse("rediss://app:s%40cret@cache.example")
            .unwrap()
            .unwrap();
        assert_eq!((t.port, t.db, t.tls), (6379, 0, true));
        assert_eq!(t.user.as_deref(), Some("app"));
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!(t.to_string(), "rediss://cache.example:6379/0");
        assert!(!format!("{t:?}").contains("cret"));
        let t = parse("redis://:pw@[::1]:7000").unwrap().unwrap();
        assert_eq!(
            (t.host.as_str(), t.user.clone(), t.password.as_deref()),
            ("::1", None, Some("pw"))
        );
        for bad in [
            "http://x",
            "redis://",
            "redis://h/x",
            "redis://h/1?a=b",
            "nope",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
