//! Reading one setting: a flag over the first set variable of a list ([`pick`]), then parsed
//! strictly (integers in a range, yes/no values), every failure a [`ConfigError`] naming where the
//! value came from. Owns the accepted spellings; it must never know which settings exist.

use std::fmt;

/// An invalid configuration value. `code` is seed 000's error code (`invalid_port`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Seed 000 code, e.g. `invalid_timeout_ms`.
    pub code: &'static str,
    /// The flag or variable that held the value, e.g. `--port` or `JEEVES_MCP_PRUNER_PORT`.
    pub field: String,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.code, self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Where a value came from: a flag, or the first set variable of a list.
pub(crate) struct Source {
    /// The value as written, `None` when neither the flag nor any variable is set.
    pub(super) value: Option<String>,
    /// The flag or variable it came from (the flag's name when unset), for error messages.
    pub(super) origin: String,
}

/// Picks the flag value when given, else the first environment variable that is set and non-empty.
pub(crate) fn pick(
    flag: &str,
    value: &Option<String>,
    envs: &[&str],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Source {
    if let Some(v) = value {
        return Source {
            value: Some(v.clone()),
            origin: flag.to_string(),
        };
    }
    for name in envs {
        if let Some(v) = lookup(name).filter(|v| !v.trim().is_empty()) {
            return Source {
                value: Some(v),
                origin: (*name).to_string(),
            };
        }
    }
    Source {
        value: None,
        origin: flag.to_string(),
    }
}

/// Parses an integer in `min..=max` from `src`, `default` when unset; otherwise a [`ConfigError`]
/// with `code` naming where the value came from.
pub(crate) fn int_in<T>(
    src: &Source,
    code: &'static str,
    min: T,
    max: T,
    default: T,
) -> Result<T, ConfigError>
where
    T: std::str::FromStr + PartialOrd + fmt::Display + Copy,
{
    let Some(raw) = &src.value else {
        return Ok(default);
    };
    match raw.trim().parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(ConfigError {
            code,
            field: src.origin.clone(),
            message: format!("expected an integer {min}..{max}, got {raw:?}"),
        }),
    }
}

/// The spellings every yes/no setting accepts, flag or variable, as error messages and the docs
/// list them.
pub const BOOL_SPELLINGS: &str = "1, true, yes, on (yes) or 0, false, no, off (no)";

/// Parses a yes/no value: `1/true/yes/on` are true, `0/false/no/off` (and the empty string) are
/// false, case-insensitively and with surrounding blanks ignored. `None` for anything else.
pub fn parse_bool(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

/// The one strict reader of yes/no settings: `--flag` (or `--flag=BOOL`) when given, else the
/// first set variable of `envs`; `false` when neither is set. A value that is neither yes nor no
/// is a [`ConfigError`] with `code`, naming the flag or variable and the accepted spellings: an
/// unreadable value is never taken as unset.
pub(crate) fn bool_setting(
    flag: &str,
    value: &Option<String>,
    envs: &[&str],
    env: &dyn Fn(&str) -> Option<String>,
    code: &'static str,
) -> Result<bool, ConfigError> {
    let src = pick(flag, value, envs, env);
    match &src.value {
        None => Ok(false),
        Some(raw) => bool_value(&src.origin, raw, code),
    }
}

/// Parses one yes/no value from `origin` (a flag or variable name) strictly.
pub(crate) fn bool_value(origin: &str, raw: &str, code: &'static str) -> Result<bool, ConfigError> {
    parse_bool(raw).ok_or_else(|| ConfigError {
        code,
        field: origin.to_string(),
        message: format!("expected one of {BOOL_SPELLINGS}, got {raw:?}"),
    })
}
