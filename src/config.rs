//! Configuration: command-line flags over environment variables, merged into one validated
//! [`Config`]. Both seeds' variable families are honoured (`JEEVES_MCP_PRUNER_*`, `JEEVES_PRUNER_*`,
//! `MCP_PRUNER_*`); a flag always wins. Every invalid value is a [`ConfigError`] naming the flag or
//! variable, what was expected, and seed 000's error code. This module never starts anything.

use clap::{Args, ValueEnum};
use std::{
    fmt,
    net::IpAddr,
    path::{Path, PathBuf},
    time::Duration,
};

/// How log events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line: `{ts, level, event, request_id?, data?}` (seed 000).
    Json,
    /// Human-readable lines.
    Text,
}

/// Which pruning backend serves `context_focus_question` and `prune_text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The deterministic line-level engine in this crate (no network, no model).
    Builtin,
    /// Seed 000's outbound contract at the pruner endpoint.
    Http,
    /// The SWE-Pruner service's own `POST /prune {query, code, threshold}`.
    #[value(name = "swe-pruner")]
    SwePruner,
    /// No pruning: results report `reason=disabled_or_unconfigured`.
    Off,
}

impl Backend {
    /// The name used in `PruningMetadata.backend` and `health`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Builtin => "builtin",
            Backend::Http => "http",
            Backend::SwePruner => "swe-pruner",
            Backend::Off => "off",
        }
    }
}

/// Server flags shared by `serve`, `stdio` and `run`. Each is optional here so that the
/// environment can supply it; [`Config::from_args`] applies defaults and validation.
#[derive(Args, Clone, Debug, Default)]
pub struct ServerArgs {
    /// Listen address; loopback only unless --allow-remote [env: JEEVES_MCP_PRUNER_HOST, MCP_PRUNER_HOST; default 127.0.0.1]
    #[arg(long)]
    pub host: Option<String>,
    /// Listen port, 0 for an ephemeral one (the ready event reports it) [env: JEEVES_MCP_PRUNER_PORT, MCP_PRUNER_PORT; default 0]
    #[arg(long)]
    pub port: Option<String>,
    /// Directory every path is confined to [env: JEEVES_MCP_PRUNER_ROOT_DIR, MCP_PRUNER_ROOT; default: current directory]
    #[arg(long)]
    pub root: Option<String>,
    /// json or text [env: MCP_PRUNER_LOG_FORMAT; default json]
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<String>,
    /// Minimum log level: debug, info, warn, error [env: MCP_PRUNER_LOG_LEVEL; default info]
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Allow a non-loopback --host (use --auth-token-file with it); --allow-remote=BOOL also takes 1/true/yes/on or 0/false/no/off [env: MCP_PRUNER_ALLOW_REMOTE]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub allow_remote: Option<String>,
    /// Deprecated (the token shows in `ps` and /proc/PID/cmdline): use --auth-token-file or
    /// MCP_PRUNER_AUTH_TOKEN. Bearer token every HTTP request must carry
    #[arg(long, value_name = "TOKEN")]
    pub auth_token: Option<String>,
    /// File holding the bearer token every HTTP request must carry (trailing newline ignored)
    /// [env: MCP_PRUNER_AUTH_TOKEN_FILE; or the token itself in MCP_PRUNER_AUTH_TOKEN, removed
    /// from the server's environment once read]
    #[arg(long, value_name = "PATH")]
    pub auth_token_file: Option<String>,
    /// Extra allowed Origin for browser clients, repeatable [env: MCP_PRUNER_ALLOWED_ORIGINS, comma-separated]
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// builtin, http, swe-pruner or off [env: MCP_PRUNER_BACKEND; default: http if a pruner endpoint is set, else builtin]
    #[arg(long, value_name = "BACKEND")]
    pub pruner: Option<String>,
    /// Pruner URL for the http and swe-pruner backends [env: JEEVES_PRUNER_ENDPOINT, MCP_PRUNER_ENDPOINT]
    #[arg(long, value_name = "URL")]
    pub pruner_endpoint: Option<String>,
    /// Pruner call timeout, 100..30000 [env: JEEVES_PRUNER_TIMEOUT_MS, MCP_PRUNER_TIMEOUT_MS; default 2000]
    #[arg(long, value_name = "MS")]
    pub pruner_timeout_ms: Option<String>,
    /// Largest raw output eligible for pruning, 1024..2097152 [env: JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES, MCP_PRUNER_MAX_PRUNE_INPUT_BYTES; default 262144]
    #[arg(long, value_name = "BYTES")]
    pub max_prune_input_bytes: Option<String>,
    /// Largest prune_text input before it falls back to a no-op [env: MCP_PRUNER_MAX_INPUT_CHARS; default 2000000]
    #[arg(long, value_name = "CHARS")]
    pub max_input_chars: Option<String>,
    /// SWE-Pruner threshold, 0..1 [env: MCP_PRUNER_SWE_THRESHOLD; default 0.5]
    #[arg(long, value_name = "X")]
    pub swe_threshold: Option<String>,
    /// Default response budget per tool result, 1024..10485760 [env: MCP_PRUNER_MAX_OUTPUT_BYTES; default 10240]
    #[arg(long, value_name = "BYTES")]
    pub max_output_bytes: Option<String>,
    /// Recovery ids expire after this many seconds [env: MCP_PRUNER_PRUNE_ID_TTL_S; default 3600]
    #[arg(long, value_name = "S")]
    pub prune_id_ttl_s: Option<String>,
    /// Recovery store byte cap (LRU eviction) [env: MCP_PRUNER_STORE_MAX_BYTES; default 268435456]
    #[arg(long, value_name = "BYTES")]
    pub store_max_bytes: Option<String>,
    /// Recovery store entry cap (LRU eviction) [env: MCP_PRUNER_STORE_MAX_ENTRIES; default 1000]
    #[arg(long, value_name = "N")]
    pub store_max_entries: Option<String>,
    /// Where recovery entries live: memory, or redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (rediss:// for TLS) shared by every replica on it [env: MCP_PRUNER_STORE; default memory]
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Per-stream memory cap for command output [env: MCP_PRUNER_CAPTURE_MAX_BYTES; default 67108864]
    #[arg(long, value_name = "BYTES")]
    pub capture_max_bytes: Option<String>,
    /// Grace between SIGTERM and SIGKILL for timed-out or cancelled commands [env: MCP_PRUNER_KILL_GRACE_MS; default 2000]
    #[arg(long, value_name = "MS")]
    pub kill_grace_ms: Option<String>,
    /// HTTP: close a connection that has not sent a whole request header within this time, idle keep-alive included [env: MCP_PRUNER_HEADER_TIMEOUT_MS; default 10000]
    #[arg(long, value_name = "MS")]
    pub header_timeout_ms: Option<String>,
    /// HTTP: answer 408 and close when a request's body has not arrived this long after its header, and close a connection whose client takes no response bytes for this long [env: MCP_PRUNER_BODY_TIMEOUT_MS; default 30000]
    #[arg(long, value_name = "MS")]
    pub body_timeout_ms: Option<String>,
    /// HTTP: end an Mcp-Session-Id after this long without a request (then 404) [env: MCP_PRUNER_SESSION_IDLE_S; default 3600]
    #[arg(long, value_name = "S")]
    pub session_idle_s: Option<String>,
    /// Largest HTTP request body or stdio message line [env: MCP_PRUNER_MAX_BODY_BYTES; default 16777216]
    #[arg(long, value_name = "BYTES")]
    pub max_body_bytes: Option<String>,
    /// Expose only these tools, comma-separated [env: MCP_PRUNER_TOOLS; default: all]
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// Prefix every tool name, for clients that do not namespace tools [env: MCP_PRUNER_TOOL_PREFIX]
    #[arg(long, value_name = "PREFIX")]
    pub tool_prefix: Option<String>,
    /// Publish each tool's outputSchema in tools/list (costs tokens); --output-schemas=BOOL also takes 1/true/yes/on or 0/false/no/off [env: MCP_PRUNER_OUTPUT_SCHEMAS]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub output_schemas: Option<String>,
    /// The savings ledger, one row of counts per call (SQLite) [env: MCP_PRUNER_LEDGER; default: $XDG_DATA_HOME/mcp-pruner/ledger.sqlite3]
    #[arg(long, value_name = "PATH")]
    pub ledger: Option<String>,
    /// Record no ledger rows; --no-ledger=BOOL also takes 1/true/yes/on or 0/false/no/off [env: MCP_PRUNER_NO_LEDGER=1, or MCP_PRUNER_LEDGER=off]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", conflicts_with = "ledger")]
    pub no_ledger: Option<String>,
}

/// Everything the server needs, validated. Built once at start-up and shared read-only.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to bind; loopback unless `allow_remote`.
    pub host: IpAddr,
    /// Port to bind; 0 asks the OS for one.
    pub port: u16,
    /// Whether a non-loopback host was explicitly allowed.
    pub allow_remote: bool,
    /// Bearer token required on HTTP requests when set.
    pub auth_token: Option<String>,
    /// Origins accepted besides loopback ones (DNS-rebinding protection).
    pub allowed_origins: Vec<String>,
    /// Canonical root directory; every tool path is confined to it.
    pub root: PathBuf,
    /// Log line format.
    pub log_format: LogFormat,
    /// Minimum log level.
    pub log_level: tracing::Level,
    /// Pruning backend.
    pub backend: Backend,
    /// Pruner endpoint for the http and swe-pruner backends.
    pub pruner_endpoint: Option<url::Url>,
    /// Timeout of one pruner call.
    pub pruner_timeout: Duration,
    /// Raw outputs above this size are not pruned (`reason=too_large`).
    pub max_prune_input_bytes: usize,
    /// prune_text inputs above this many characters fall back to a no-op (`input_too_large`).
    pub max_input_chars: usize,
    /// Threshold sent to a SWE-Pruner service.
    pub swe_threshold: f64,
    /// Default response budget in bytes (seed 002).
    pub max_output_bytes: usize,
    /// Time-to-live of recovery entries.
    pub prune_id_ttl: Duration,
    /// Byte cap of the recovery store.
    pub store_max_bytes: usize,
    /// Entry cap of the recovery store.
    pub store_max_entries: usize,
    /// The Valkey/Redis server of a shared recovery store; `None`: this process's memory.
    pub store: Option<crate::store::target::Target>,
    /// Per-stream cap on captured command output.
    pub capture_max_bytes: usize,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Largest accepted HTTP body or stdio message line.
    pub max_body_bytes: usize,
    /// HTTP: how long a connection may take to send a request header (idle keep-alive included).
    pub header_timeout: Duration,
    /// HTTP: how long a request body may take after its header, and the longest a response
    /// write may wait for the client to read.
    pub body_timeout: Duration,
    /// HTTP: how long a session lives without a request.
    pub session_idle: Duration,
    /// Tools exposed (None = all).
    pub tools: Option<Vec<String>>,
    /// Prefix added to every tool name in tools/list and accepted in tools/call.
    pub tool_prefix: String,
    /// Whether tools/list carries outputSchema.
    pub output_schemas: bool,
    /// The savings ledger file; `None` records nothing (`--no-ledger`, or no data directory).
    pub ledger: Option<PathBuf>,
}

/// The ledger file under the XDG data directory: `$XDG_DATA_HOME/mcp-pruner/ledger.sqlite3`, or
/// `~/.local/share/mcp-pruner/ledger.sqlite3`; `None` without either.
pub fn default_ledger_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_DATA_HOME")
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local/share")))?;
    Some(base.join("mcp-pruner").join("ledger.sqlite3"))
}

/// The ledger file the current environment selects when that choice rests on variables a client
/// may not pass on to a server it launches (`MCP_PRUNER_LEDGER`, or an `XDG_DATA_HOME` that moves
/// it away from `~/.local/share`): the Python SDK, for one, starts stdio servers with only `HOME`,
/// `PATH` and a few others. `None` when `HOME` alone finds the same file, or when the ledger is off.
/// `config` pins such a path with `--ledger`, and `doctor` suggests it.
pub fn pinned_ledger(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if set("MCP_PRUNER_NO_LEDGER").is_some_and(|v| parse_bool(&v) == Some(true)) {
        return None;
    }
    if let Some(v) = set("MCP_PRUNER_LEDGER") {
        let off = v.trim() == "off";
        return (!off && Path::new(&v).is_absolute()).then(|| PathBuf::from(v));
    }
    let here = default_ledger_path(env)?;
    let home_only = |k: &str| if k == "HOME" { env(k) } else { None };
    (default_ledger_path(&home_only).as_ref() != Some(&here)).then_some(here)
}

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
    value: Option<String>,
    origin: String,
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

/// Variable holding the bearer token itself.
pub const AUTH_TOKEN_ENV: &str = "MCP_PRUNER_AUTH_TOKEN";
/// Variable naming a file that holds the bearer token.
pub const AUTH_TOKEN_FILE_ENV: &str = "MCP_PRUNER_AUTH_TOKEN_FILE";

/// The bearer token: from `--auth-token-file`, the deprecated `--auth-token`, the file that
/// `MCP_PRUNER_AUTH_TOKEN_FILE` names, or `MCP_PRUNER_AUTH_TOKEN`, in that order. A file's
/// trailing line break is not part of the token; an empty or unreadable file is an error.
fn auth_token(
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

/// Where to listen: host, port, and whether a non-loopback host was allowed.
struct Listen {
    host: IpAddr,
    port: u16,
    allow_remote: bool,
}

/// `--host`, `--port`, `--allow-remote` and their variables.
fn listen(args: &ServerArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Listen, ConfigError> {
    let allow_remote = bool_setting(
        "--allow-remote",
        &args.allow_remote,
        &["MCP_PRUNER_ALLOW_REMOTE"],
        env,
        "invalid_allow_remote",
    )?;
    let host_src = pick(
        "--host",
        &args.host,
        &["JEEVES_MCP_PRUNER_HOST", "MCP_PRUNER_HOST"],
        env,
    );
    let host_raw = host_src.value.clone().unwrap_or_else(|| "127.0.0.1".into());
    let host_trim = host_raw
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let host: IpAddr = match host_trim {
        "localhost" => IpAddr::from([127, 0, 0, 1]),
        other => other.parse().map_err(|_| ConfigError {
            code: "invalid_host",
            field: host_src.origin.clone(),
            message: format!("expected an IP address such as 127.0.0.1 or ::1, got {host_raw:?}"),
        })?,
    };
    if !host.is_loopback() && !allow_remote {
        return Err(ConfigError {
            code: "invalid_host",
            field: host_src.origin,
            message: format!(
                "expected a loopback address (127.0.0.1 or ::1), got {host}; pass --allow-remote to bind it"
            ),
        });
    }
    let port = int_in::<u16>(
        &pick(
            "--port",
            &args.port,
            &["JEEVES_MCP_PRUNER_PORT", "MCP_PRUNER_PORT"],
            env,
        ),
        "invalid_port",
        0,
        65535,
        0,
    )?;
    Ok(Listen {
        host,
        port,
        allow_remote,
    })
}

/// `--root`: an existing directory, canonicalized; the current directory by default.
fn root(args: &ServerArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, ConfigError> {
    let root_src = pick(
        "--root",
        &args.root,
        &["JEEVES_MCP_PRUNER_ROOT_DIR", "MCP_PRUNER_ROOT"],
        env,
    );
    let root = match &root_src.value {
        Some(raw) => PathBuf::from(raw),
        None => std::env::current_dir().map_err(|e| ConfigError {
            code: "invalid_root_dir",
            field: root_src.origin.clone(),
            message: format!("cannot read the current directory: {e}"),
        })?,
    };
    match std::fs::canonicalize(&root) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(p) => Err(ConfigError {
            code: "invalid_root_dir",
            field: root_src.origin,
            message: format!("expected a directory, {} is not one", p.display()),
        }),
        Err(e) => Err(ConfigError {
            code: "invalid_root_dir",
            field: root_src.origin,
            message: format!("expected an existing directory, {}: {e}", root.display()),
        }),
    }
}

/// `--log-format` and `--log-level`.
fn logs(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(LogFormat, tracing::Level), ConfigError> {
    let fmt_src = pick(
        "--log-format",
        &args.log_format,
        &["MCP_PRUNER_LOG_FORMAT"],
        env,
    );
    let log_format = match fmt_src.value.as_deref().map(str::trim) {
        None | Some("json") => LogFormat::Json,
        Some("text") => LogFormat::Text,
        Some(other) => {
            return Err(ConfigError {
                code: "invalid_log_format",
                field: fmt_src.origin,
                message: format!("expected json or text, got {other:?}"),
            });
        }
    };
    let level_src = pick(
        "--log-level",
        &args.log_level,
        &["MCP_PRUNER_LOG_LEVEL"],
        env,
    );
    let log_level = match level_src
        .value
        .as_deref()
        .map(|s| s.trim().to_ascii_lowercase())
    {
        None => tracing::Level::INFO,
        Some(l) => match l.as_str() {
            "debug" => tracing::Level::DEBUG,
            "info" => tracing::Level::INFO,
            "warn" | "warning" => tracing::Level::WARN,
            "error" => tracing::Level::ERROR,
            _ => {
                return Err(ConfigError {
                    code: "invalid_log_level",
                    field: level_src.origin,
                    message: format!("expected debug, info, warn or error, got {l:?}"),
                });
            }
        },
    };
    Ok((log_format, log_level))
}

/// The pruning backend and its settings.
struct Pruning {
    backend: Backend,
    pruner_endpoint: Option<url::Url>,
    pruner_timeout: Duration,
    max_prune_input_bytes: usize,
    max_input_chars: usize,
    swe_threshold: f64,
}

/// `--pruner`, `--pruner-endpoint` (an http(s) URL, required by `http` and `swe-pruner`), the
/// pruner timeout and input limits, and the SWE-Pruner threshold.
fn pruning(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Pruning, ConfigError> {
    let ep_src = pick(
        "--pruner-endpoint",
        &args.pruner_endpoint,
        &["JEEVES_PRUNER_ENDPOINT", "MCP_PRUNER_ENDPOINT"],
        env,
    );
    let pruner_endpoint = match &ep_src.value {
        None => None,
        Some(raw) => match url::Url::parse(raw.trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Some(u),
            _ => {
                return Err(ConfigError {
                    code: "invalid_pruner_endpoint",
                    field: ep_src.origin,
                    message: format!("expected an absolute http: or https: URL, got {raw:?}"),
                });
            }
        },
    };
    let be_src = pick("--pruner", &args.pruner, &["MCP_PRUNER_BACKEND"], env);
    let backend = match be_src.value.as_deref().map(str::trim) {
        None if pruner_endpoint.is_some() => Backend::Http,
        None => Backend::Builtin,
        Some(raw) => Backend::from_str(raw, true).map_err(|_| ConfigError {
            code: "invalid_pruner_backend",
            field: be_src.origin.clone(),
            message: format!("expected builtin, http, swe-pruner or off, got {raw:?}"),
        })?,
    };
    if matches!(backend, Backend::Http | Backend::SwePruner) && pruner_endpoint.is_none() {
        return Err(ConfigError {
            code: "invalid_pruner_endpoint",
            field: "JEEVES_PRUNER_ENDPOINT".into(),
            message: format!(
                "expected a pruner endpoint (--pruner-endpoint or JEEVES_PRUNER_ENDPOINT) for the {} backend",
                backend.as_str()
            ),
        });
    }
    let pruner_timeout_ms = int_in::<u64>(
        &pick(
            "--pruner-timeout-ms",
            &args.pruner_timeout_ms,
            &["JEEVES_PRUNER_TIMEOUT_MS", "MCP_PRUNER_TIMEOUT_MS"],
            env,
        ),
        "invalid_timeout_ms",
        100,
        30_000,
        2_000,
    )?;
    let max_prune_input_bytes = int_in::<usize>(
        &pick(
            "--max-prune-input-bytes",
            &args.max_prune_input_bytes,
            &[
                "JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES",
                "MCP_PRUNER_MAX_PRUNE_INPUT_BYTES",
            ],
            env,
        ),
        "invalid_max_prune_input_bytes",
        1024,
        2_097_152,
        262_144,
    )?;
    let max_input_chars = int_in::<usize>(
        &pick(
            "--max-input-chars",
            &args.max_input_chars,
            &["MCP_PRUNER_MAX_INPUT_CHARS"],
            env,
        ),
        "invalid_max_input_chars",
        1,
        100_000_000,
        2_000_000,
    )?;
    let thr_src = pick(
        "--swe-threshold",
        &args.swe_threshold,
        &["MCP_PRUNER_SWE_THRESHOLD"],
        env,
    );
    let swe_threshold = match &thr_src.value {
        None => 0.5,
        Some(raw) => match raw.trim().parse::<f64>() {
            Ok(v) if (0.0..=1.0).contains(&v) => v,
            _ => {
                return Err(ConfigError {
                    code: "invalid_swe_threshold",
                    field: thr_src.origin,
                    message: format!("expected a number 0..1, got {raw:?}"),
                });
            }
        },
    };
    Ok(Pruning {
        backend,
        pruner_endpoint,
        pruner_timeout: Duration::from_millis(pruner_timeout_ms),
        max_prune_input_bytes,
        max_input_chars,
        swe_threshold,
    })
}

/// Response budget, recovery store, command capture and kill grace.
struct Limits {
    max_output_bytes: usize,
    prune_id_ttl: Duration,
    store_max_bytes: usize,
    store_max_entries: usize,
    capture_max_bytes: usize,
    kill_grace: Duration,
}

/// The budget, store and command limits.
fn limits(args: &ServerArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Limits, ConfigError> {
    // (flag, value, variable, code, min, max, default) of one integer setting.
    let int = |flag: &str, value: &Option<String>, var: &str, code, min, max, default| {
        int_in::<usize>(&pick(flag, value, &[var], env), code, min, max, default)
    };
    Ok(Limits {
        max_output_bytes: int(
            "--max-output-bytes",
            &args.max_output_bytes,
            "MCP_PRUNER_MAX_OUTPUT_BYTES",
            "invalid_max_output_bytes",
            1024,
            10_485_760,
            10_240,
        )?,
        prune_id_ttl: Duration::from_secs(int_in::<u64>(
            &pick(
                "--prune-id-ttl-s",
                &args.prune_id_ttl_s,
                &["MCP_PRUNER_PRUNE_ID_TTL_S"],
                env,
            ),
            "invalid_prune_id_ttl_s",
            1,
            30 * 86_400,
            3_600,
        )?),
        store_max_bytes: int(
            "--store-max-bytes",
            &args.store_max_bytes,
            "MCP_PRUNER_STORE_MAX_BYTES",
            "invalid_store_max_bytes",
            1024,
            usize::MAX,
            256 << 20,
        )?,
        store_max_entries: int(
            "--store-max-entries",
            &args.store_max_entries,
            "MCP_PRUNER_STORE_MAX_ENTRIES",
            "invalid_store_max_entries",
            1,
            10_000_000,
            1_000,
        )?,
        capture_max_bytes: int(
            "--capture-max-bytes",
            &args.capture_max_bytes,
            "MCP_PRUNER_CAPTURE_MAX_BYTES",
            "invalid_capture_max_bytes",
            1024,
            usize::MAX,
            64 << 20,
        )?,
        kill_grace: Duration::from_millis(int_in::<u64>(
            &pick(
                "--kill-grace-ms",
                &args.kill_grace_ms,
                &["MCP_PRUNER_KILL_GRACE_MS"],
                env,
            ),
            "invalid_kill_grace_ms",
            0,
            60_000,
            2_000,
        )?),
    })
}

/// HTTP transport limits and access control.
struct Http {
    max_body_bytes: usize,
    header_timeout: Duration,
    body_timeout: Duration,
    session_idle: Duration,
    auth_token: Option<String>,
    allowed_origins: Vec<String>,
}

/// Header and body timeouts, session idle time, body cap, bearer token and extra allowed origins.
fn http(args: &ServerArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Http, ConfigError> {
    let header_timeout_ms = int_in::<u64>(
        &pick(
            "--header-timeout-ms",
            &args.header_timeout_ms,
            &["MCP_PRUNER_HEADER_TIMEOUT_MS"],
            env,
        ),
        "invalid_header_timeout_ms",
        100,
        600_000,
        10_000,
    )?;
    let body_timeout_ms = int_in::<u64>(
        &pick(
            "--body-timeout-ms",
            &args.body_timeout_ms,
            &["MCP_PRUNER_BODY_TIMEOUT_MS"],
            env,
        ),
        "invalid_body_timeout_ms",
        100,
        600_000,
        30_000,
    )?;
    let session_idle_s = int_in::<u64>(
        &pick(
            "--session-idle-s",
            &args.session_idle_s,
            &["MCP_PRUNER_SESSION_IDLE_S"],
            env,
        ),
        "invalid_session_idle_s",
        1,
        30 * 86_400,
        3_600,
    )?;
    let max_body_bytes = int_in::<usize>(
        &pick(
            "--max-body-bytes",
            &args.max_body_bytes,
            &["MCP_PRUNER_MAX_BODY_BYTES"],
            env,
        ),
        "invalid_max_body_bytes",
        1024,
        1 << 30,
        16 << 20,
    )?;
    let mut allowed_origins = args.allowed_origins.clone();
    if let Some(v) = env("MCP_PRUNER_ALLOWED_ORIGINS") {
        allowed_origins.extend(
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
        );
    }
    let auth_token = auth_token(args, env)?;
    Ok(Http {
        max_body_bytes,
        header_timeout: Duration::from_millis(header_timeout_ms),
        body_timeout: Duration::from_millis(body_timeout_ms),
        session_idle: Duration::from_secs(session_idle_s),
        auth_token,
        allowed_origins,
    })
}

/// What `tools/list` shows: which tools, under which prefix, with or without output schemas.
struct Listing {
    tools: Option<Vec<String>>,
    tool_prefix: String,
    output_schemas: bool,
}

/// `--tools`, `--tool-prefix` and `--output-schemas`.
fn listing(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Listing, ConfigError> {
    let tools_src = pick("--tools", &args.tools, &["MCP_PRUNER_TOOLS"], env);
    let tools = match &tools_src.value {
        None => None,
        Some(raw) => {
            let names: Vec<String> = raw
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let known = crate::contract::manifest_names();
            if let Some(bad) = names.iter().find(|n| !known.contains(&n.as_str())) {
                return Err(ConfigError {
                    code: "invalid_tools",
                    field: tools_src.origin,
                    message: format!(
                        "unknown tool {bad:?}; expected a comma-separated subset of {}",
                        known.join(",")
                    ),
                });
            }
            if names.is_empty() {
                return Err(ConfigError {
                    code: "invalid_tools",
                    field: tools_src.origin,
                    message: "expected at least one tool name".into(),
                });
            }
            Some(names)
        }
    };
    let prefix_src = pick(
        "--tool-prefix",
        &args.tool_prefix,
        &["MCP_PRUNER_TOOL_PREFIX"],
        env,
    );
    let tool_prefix = prefix_src.value.clone().unwrap_or_default();
    if !tool_prefix
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || tool_prefix.len() > 32
    {
        return Err(ConfigError {
            code: "invalid_tool_prefix",
            field: prefix_src.origin,
            message: format!("expected up to 32 of [A-Za-z0-9_-], got {tool_prefix:?}"),
        });
    }
    let output_schemas = bool_setting(
        "--output-schemas",
        &args.output_schemas,
        &["MCP_PRUNER_OUTPUT_SCHEMAS"],
        env,
        "invalid_output_schemas",
    )?;
    Ok(Listing {
        tools,
        tool_prefix,
        output_schemas,
    })
}

/// `--ledger PATH` (absolute, or `off`), `--no-ledger`; the XDG data directory by default.
fn ledger(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<PathBuf>, ConfigError> {
    let ledger_src = pick("--ledger", &args.ledger, &["MCP_PRUNER_LEDGER"], env);
    let no_ledger = bool_setting(
        "--no-ledger",
        &args.no_ledger,
        &["MCP_PRUNER_NO_LEDGER"],
        env,
        "invalid_no_ledger",
    )?;
    if no_ledger || ledger_src.value.as_deref().map(str::trim) == Some("off") {
        return Ok(None);
    }
    match ledger_src.value {
        Some(p) if Path::new(&p).is_absolute() => Ok(Some(PathBuf::from(p))),
        Some(p) => Err(ConfigError {
            code: "invalid_ledger",
            field: ledger_src.origin,
            message: format!("expected an absolute file path or \"off\", got {p:?}"),
        }),
        None => Ok(default_ledger_path(env)),
    }
}

/// `--store URL` or `MCP_PRUNER_STORE`: memory (default) or a Valkey/Redis server.
fn store(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<crate::store::target::Target>, ConfigError> {
    let src = pick("--store", &args.store, &["MCP_PRUNER_STORE"], env);
    let Some(raw) = &src.value else {
        return Ok(None);
    };
    crate::store::target::parse(raw).map_err(|message| ConfigError {
        code: "invalid_store",
        field: src.origin.clone(),
        message,
    })
}

impl Config {
    /// Builds the configuration from flags and the process environment. The bearer token, once
    /// read, is wiped from what `/proc/PID/environ` and `/proc/PID/cmdline` show and removed from
    /// the environment (so neither local users nor the commands the server runs can read it);
    /// `--auth-token` is deprecated with a warning. Call before any other thread starts.
    pub fn from_args(args: &ServerArgs) -> Result<Config, ConfigError> {
        if args.auth_token.is_some() {
            eprintln!(
                "mcp-pruner: warning: --auth-token is deprecated: the token shows in ps and /proc/PID/cmdline; use --auth-token-file PATH or {AUTH_TOKEN_ENV}"
            );
        }
        let cfg = Self::from_args_with_env(args, &|name| std::env::var(name).ok());
        if let Some(token) = args.auth_token.as_deref() {
            crate::secret::wipe_from_command_line(token);
        }
        crate::secret::take_env(AUTH_TOKEN_ENV);
        cfg
    }

    /// Builds the configuration from flags and an environment lookup (tests pass their own).
    /// Each concern is read by its own function, in the order errors are reported.
    pub fn from_args_with_env(
        args: &ServerArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let Listen {
            host,
            port,
            allow_remote,
        } = listen(args, env)?;
        let root = root(args, env)?;
        let (log_format, log_level) = logs(args, env)?;
        let Pruning {
            backend,
            pruner_endpoint,
            pruner_timeout,
            max_prune_input_bytes,
            max_input_chars,
            swe_threshold,
        } = pruning(args, env)?;
        let Limits {
            max_output_bytes,
            prune_id_ttl,
            store_max_bytes,
            store_max_entries,
            capture_max_bytes,
            kill_grace,
        } = limits(args, env)?;
        let Http {
            max_body_bytes,
            header_timeout,
            body_timeout,
            session_idle,
            auth_token,
            allowed_origins,
        } = http(args, env)?;
        let Listing {
            tools,
            tool_prefix,
            output_schemas,
        } = listing(args, env)?;
        let ledger = ledger(args, env)?;
        let store = store(args, env)?;
        Ok(Config {
            host,
            port,
            allow_remote,
            auth_token,
            allowed_origins,
            root,
            log_format,
            log_level,
            backend,
            pruner_endpoint,
            pruner_timeout,
            max_prune_input_bytes,
            max_input_chars,
            swe_threshold,
            max_output_bytes,
            prune_id_ttl,
            store_max_bytes,
            store_max_entries,
            store,
            capture_max_bytes,
            kill_grace,
            max_body_bytes,
            header_timeout,
            body_timeout,
            session_idle,
            tools,
            tool_prefix,
            output_schemas,
            ledger,
        })
    }

    /// A configuration for tests and benchmarks: defaults, rooted at `root`, no environment.
    pub fn for_root(root: &std::path::Path) -> Config {
        let args = ServerArgs {
            root: Some(root.to_string_lossy().into_owned()),
            ..Default::default()
        };
        Config::from_args_with_env(&args, &|_| None).expect("default config is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_auth_token_comes_from_a_file_a_variable_or_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        let file = dir.path().join("tok");
        std::fs::write(&file, "s3cret\n").unwrap();
        let file = file.to_string_lossy().into_owned();
        let with = |args: ServerArgs, env: &dyn Fn(&str) -> Option<String>| {
            Config::from_args_with_env(
                &ServerArgs {
                    root: Some(root.clone()),
                    ..args
                },
                env,
            )
        };
        let by_flag = ServerArgs {
            auth_token_file: Some(file.clone()),
            ..Default::default()
        };
        assert_eq!(
            with(by_flag, &|_| None).unwrap().auth_token.as_deref(),
            Some("s3cret")
        );
        let f = file.clone();
        let by_env = move |n: &str| (n == AUTH_TOKEN_FILE_ENV).then(|| f.clone());
        assert_eq!(
            with(ServerArgs::default(), &by_env)
                .unwrap()
                .auth_token
                .as_deref(),
            Some("s3cret")
        );
        let direct = |n: &str| (n == AUTH_TOKEN_ENV).then(|| "t2".to_string());
        assert_eq!(
            with(ServerArgs::default(), &direct)
                .unwrap()
                .auth_token
                .as_deref(),
            Some("t2")
        );
        let both = ServerArgs {
            auth_token_file: Some(file.clone()),
            auth_token: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(
            with(both, &|_| None).unwrap_err().code,
            "invalid_auth_token"
        );
        std::fs::write(dir.path().join("empty"), "\n").unwrap();
        let empty = ServerArgs {
            auth_token_file: Some(dir.path().join("empty").to_string_lossy().into_owned()),
            ..Default::default()
        };
        assert_eq!(
            with(empty, &|_| None).unwrap_err().code,
            "invalid_auth_token"
        );
        let missing = ServerArgs {
            auth_token_file: Some(dir.path().join("nope").to_string_lossy().into_owned()),
            ..Default::default()
        };
        assert_eq!(
            with(missing, &|_| None).unwrap_err().code,
            "invalid_auth_token"
        );
    }

    #[test]
    fn defaults_are_valid_and_loopback() {
        let c = Config::from_args_with_env(&ServerArgs::default(), &|_| None).unwrap();
        assert!(c.host.is_loopback());
        assert_eq!(
            (c.port, c.backend, c.max_output_bytes),
            (0, Backend::Builtin, 10_240)
        );
        assert_eq!(c.pruner_timeout, Duration::from_millis(2000));
    }

    #[test]
    fn flag_beats_env_and_jeeves_beats_mcp() {
        let env = env_of(&[
            ("JEEVES_MCP_PRUNER_PORT", "7001"),
            ("MCP_PRUNER_PORT", "7002"),
        ]);
        assert_eq!(
            Config::from_args_with_env(&ServerArgs::default(), &env)
                .unwrap()
                .port,
            7001
        );
        let args = ServerArgs {
            port: Some("7003".into()),
            ..Default::default()
        };
        assert_eq!(Config::from_args_with_env(&args, &env).unwrap().port, 7003);
    }

    #[test]
    fn invalid_values_name_field_and_code() {
        // (environment, expected code, expected field)
        type Case = (
            &'static [(&'static str, &'static str)],
            &'static str,
            &'static str,
        );
        let cases: &[Case] = &[
            (
                &[("JEEVES_PRUNER_TIMEOUT_MS", "abc")],
                "invalid_timeout_ms",
                "JEEVES_PRUNER_TIMEOUT_MS",
            ),
            (
                &[("JEEVES_PRUNER_TIMEOUT_MS", "50")],
                "invalid_timeout_ms",
                "JEEVES_PRUNER_TIMEOUT_MS",
            ),
            (
                &[("JEEVES_MCP_PRUNER_PORT", "70000")],
                "invalid_port",
                "JEEVES_MCP_PRUNER_PORT",
            ),
            (
                &[("JEEVES_MCP_PRUNER_HOST", "10.0.0.1")],
                "invalid_host",
                "JEEVES_MCP_PRUNER_HOST",
            ),
            (
                &[("JEEVES_MCP_PRUNER_ROOT_DIR", "/definitely/not/here")],
                "invalid_root_dir",
                "JEEVES_MCP_PRUNER_ROOT_DIR",
            ),
            (
                &[("JEEVES_PRUNER_ENDPOINT", "ftp://x")],
                "invalid_pruner_endpoint",
                "JEEVES_PRUNER_ENDPOINT",
            ),
            (
                &[("JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES", "12")],
                "invalid_max_prune_input_bytes",
                "JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES",
            ),
            (
                &[("MCP_PRUNER_BACKEND", "http")],
                "invalid_pruner_endpoint",
                "JEEVES_PRUNER_ENDPOINT",
            ),
            (
                &[("MCP_PRUNER_TOOLS", "read,nope")],
                "invalid_tools",
                "MCP_PRUNER_TOOLS",
            ),
        ];
        for (pairs, code, field) in cases {
            let env = env_of(pairs);
            let err = Config::from_args_with_env(&ServerArgs::default(), &env).unwrap_err();
            assert_eq!(
                (err.code, err.field.as_str()),
                (*code, *field),
                "{pairs:?}: {err}"
            );
            assert!(err.message.contains("expected"), "{err}");
        }
    }

    #[test]
    fn endpoint_selects_http_backend() {
        let env = env_of(&[("JEEVES_PRUNER_ENDPOINT", "http://127.0.0.1:9/prune")]);
        assert_eq!(
            Config::from_args_with_env(&ServerArgs::default(), &env)
                .unwrap()
                .backend,
            Backend::Http
        );
    }

    #[test]
    fn seed_000_booleans() {
        for t in ["1", "true", "YES", "on"] {
            assert_eq!(parse_bool(t), Some(true));
        }
        for f in ["0", "false", "no", "off"] {
            assert_eq!(parse_bool(f), Some(false));
        }
        assert_eq!(parse_bool("maybe"), None);
    }

    #[test]
    fn an_unreadable_yes_no_value_is_an_error_naming_its_source() {
        for (var, code) in [
            ("MCP_PRUNER_OUTPUT_SCHEMAS", "invalid_output_schemas"),
            ("MCP_PRUNER_ALLOW_REMOTE", "invalid_allow_remote"),
            ("MCP_PRUNER_NO_LEDGER", "invalid_no_ledger"),
        ] {
            let env = |k: &str| (k == var).then(|| "maybe".to_string());
            let e = Config::from_args_with_env(&ServerArgs::default(), &env).unwrap_err();
            assert_eq!((e.code, e.field.as_str()), (code, var), "{e}");
            assert!(e.message.contains(BOOL_SPELLINGS), "{e}");
        }
        let args = ServerArgs {
            output_schemas: Some("sometimes".into()),
            ..Default::default()
        };
        let e = Config::from_args_with_env(&args, &|_| None).unwrap_err();
        assert_eq!(e.field, "--output-schemas");
        // A flag's value wins over the variable, both ways.
        let on = |k: &str| (k == "MCP_PRUNER_OUTPUT_SCHEMAS").then(|| "YES".to_string());
        let off = ServerArgs {
            output_schemas: Some("0".into()),
            ..Default::default()
        };
        assert!(
            !Config::from_args_with_env(&off, &on)
                .unwrap()
                .output_schemas
        );
        assert!(
            Config::from_args_with_env(&ServerArgs::default(), &on)
                .unwrap()
                .output_schemas
        );
    }

    #[test]
    fn the_ledger_follows_xdg_and_can_be_turned_off() {
        let env = |k: &str| match k {
            "XDG_DATA_HOME" => Some("/data".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        };
        assert_eq!(
            default_ledger_path(&env).unwrap(),
            Path::new("/data/mcp-pruner/ledger.sqlite3")
        );
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
        assert_eq!(
            default_ledger_path(&env).unwrap(),
            Path::new("/home/u/.local/share/mcp-pruner/ledger.sqlite3")
        );
        let args = ServerArgs {
            root: Some("/".into()),
            ledger: Some("relative.db".into()),
            ..Default::default()
        };
        let e = Config::from_args_with_env(&args, &|_| None).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("invalid_ledger", "--ledger"));
        assert_eq!(pinned_ledger(&env), None, "HOME alone finds the same file");
        let xdg = |k: &str| match k {
            "XDG_DATA_HOME" => Some("/data".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        };
        assert_eq!(
            pinned_ledger(&xdg).unwrap(),
            Path::new("/data/mcp-pruner/ledger.sqlite3")
        );
        let off = |k: &str| (k == "MCP_PRUNER_LEDGER").then(|| "off".to_string());
        assert_eq!(pinned_ledger(&off), None);
        let no = |k: &str| match k {
            "MCP_PRUNER_LEDGER" => Some("/x/ledger.sqlite3".to_string()),
            "MCP_PRUNER_NO_LEDGER" => Some("1".to_string()),
            _ => None,
        };
        assert_eq!(pinned_ledger(&no), None, "no ledger, nothing to pin");
        let args = ServerArgs {
            root: Some("/".into()),
            ..Default::default()
        };
        assert!(
            Config::from_args_with_env(&args, &off)
                .unwrap()
                .ledger
                .is_none()
        );
    }
}
