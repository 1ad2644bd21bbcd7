//! Configuration: command-line flags over environment variables, merged into one validated
//! [`Config`]. Both seeds' variable families are honoured (`JEEVES_MCP_PRUNER_*`, `JEEVES_PRUNER_*`,
//! `MCP_PRUNER_*`); a flag always wins. Every invalid value is a [`ConfigError`] naming the flag or
//! variable, what was expected, and seed 000's error code. This module never starts anything.

mod args;
mod auth;
mod sections;
#[cfg(test)]
mod tests;
mod values;

pub use args::ServerArgs;
pub use auth::{AUTH_TOKEN_ENV, AUTH_TOKEN_FILE_ENV};
pub use values::{BOOL_SPELLINGS, ConfigError, parse_bool};
pub(crate) use values::{bool_setting, bool_value, int_in, pick};

use clap::ValueEnum;
use sections::{
    Http, Limits, Listen, Listing, Pruning, http, ledger, limits, listen, listing, logs, pruning,
    root, store,
};
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    time::Duration,
};

/// Exit status of a command whose configuration is invalid (a [`ConfigError`]).
pub const EXIT_CONFIG: u8 = 2;

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
