//! The server's settings read one concern at a time (where to listen, the root, logs, pruning,
//! limits, HTTP, the tool listing, the ledger, the store), each from its flags and variables, in
//! the order [`Config::from_args_with_env`](super::Config::from_args_with_env) reports errors.
//! Owns defaults and bounds; it must never start anything.

use super::auth::auth_token;
use super::default_ledger_path;
use super::{Backend, ConfigError, LogFormat, ServerArgs, bool_setting, int_in, pick};
use clap::ValueEnum;
use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    time::Duration,
};

/// Where to listen: host, port, and whether a non-loopback host was allowed.
pub(super) struct Listen {
    /// What becomes [`Config::host`](super::Config::host).
    pub(super) host: IpAddr,
    /// What becomes [`Config::port`](super::Config::port).
    pub(super) port: u16,
    /// What becomes [`Config::allow_remote`](super::Config::allow_remote).
    pub(super) allow_remote: bool,
}

/// `--host`, `--port`, `--allow-remote` and their variables.
pub(super) fn listen(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Listen, ConfigError> {
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
pub(super) fn root(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, ConfigError> {
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
pub(super) fn logs(
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
pub(super) struct Pruning {
    /// What becomes [`Config::backend`](super::Config::backend).
    pub(super) backend: Backend,
    /// What becomes [`Config::pruner_endpoint`](super::Config::pruner_endpoint).
    pub(super) pruner_endpoint: Option<url::Url>,
    /// What becomes [`Config::pruner_timeout`](super::Config::pruner_timeout).
    pub(super) pruner_timeout: Duration,
    /// What becomes [`Config::max_prune_input_bytes`](super::Config::max_prune_input_bytes).
    pub(super) max_prune_input_bytes: usize,
    /// What becomes [`Config::max_input_chars`](super::Config::max_input_chars).
    pub(super) max_input_chars: usize,
    /// What becomes [`Config::swe_threshold`](super::Config::swe_threshold).
    pub(super) swe_threshold: f64,
}

/// `--pruner`, `--pruner-endpoint` (an http(s) URL, required by `http` and `swe-pruner`), the
/// pruner timeout and input limits, and the SWE-Pruner threshold.
pub(super) fn pruning(
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
pub(super) struct Limits {
    /// What becomes [`Config::max_output_bytes`](super::Config::max_output_bytes).
    pub(super) max_output_bytes: usize,
    /// What becomes [`Config::prune_id_ttl`](super::Config::prune_id_ttl).
    pub(super) prune_id_ttl: Duration,
    /// What becomes [`Config::store_max_bytes`](super::Config::store_max_bytes).
    pub(super) store_max_bytes: usize,
    /// What becomes [`Config::store_max_entries`](super::Config::store_max_entries).
    pub(super) store_max_entries: usize,
    /// What becomes [`Config::capture_max_bytes`](super::Config::capture_max_bytes).
    pub(super) capture_max_bytes: usize,
    /// What becomes [`Config::kill_grace`](super::Config::kill_grace).
    pub(super) kill_grace: Duration,
}

/// The budget, store and command limits.
pub(super) fn limits(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Limits, ConfigError> {
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
pub(super) struct Http {
    /// What becomes [`Config::max_body_bytes`](super::Config::max_body_bytes).
    pub(super) max_body_bytes: usize,
    /// What becomes [`Config::header_timeout`](super::Config::header_timeout).
    pub(super) header_timeout: Duration,
    /// What becomes [`Config::body_timeout`](super::Config::body_timeout).
    pub(super) body_timeout: Duration,
    /// What becomes [`Config::session_idle`](super::Config::session_idle).
    pub(super) session_idle: Duration,
    /// What becomes [`Config::auth_token`](super::Config::auth_token).
    pub(super) auth_token: Option<String>,
    /// What becomes [`Config::allowed_origins`](super::Config::allowed_origins).
    pub(super) allowed_origins: Vec<String>,
}

/// Header and body timeouts, session idle time, body cap, bearer token and extra allowed origins.
pub(super) fn http(
    args: &ServerArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Http, ConfigError> {
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
pub(super) struct Listing {
    /// What becomes [`Config::tools`](super::Config::tools).
    pub(super) tools: Option<Vec<String>>,
    /// What becomes [`Config::tool_prefix`](super::Config::tool_prefix).
    pub(super) tool_prefix: String,
    /// What becomes [`Config::output_schemas`](super::Config::output_schemas).
    pub(super) output_schemas: bool,
}

/// `--tools`, `--tool-prefix` and `--output-schemas`.
pub(super) fn listing(
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
pub(super) fn ledger(
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
pub(super) fn store(
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
