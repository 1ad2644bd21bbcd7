//! `run:init`: turns the runner's flags and environment into a [`Plan`]: whether to start the
//! server (and with which validated [`Config`]), the runner's own timeouts, and how to log. Every
//! invalid value becomes a [`ConfigError`] in [`Plan::errors`] for the caller to report once; an
//! invalid value never stops the run, it only disables the server (seed 000's error table). This
//! module reads configuration only: it never logs, spawns or touches the terminal.

use super::RunArgs;
use crate::config::{Config, ConfigError, LogFormat, bool_value, int_in, pick};
use std::time::Duration;

/// The seed-000 switch: unset (or empty) means enabled; `1/true/yes/on` enable; `0/false/no/off`
/// disable; anything else disables too, with `mcp_pruner.config_invalid`.
pub const ENABLED_ENV: &str = "JEEVES_MCP_PRUNER_ENABLED";

/// What `run:init` decided about the server.
#[derive(Debug)]
pub enum Decision {
    /// `run:mcp_pruner_starting` with this configuration.
    Start(Box<Config>),
    /// `run:mcp_pruner_disabled`; the value is the `reason` of `mcp_pruner.disabled`
    /// (`config_disabled` or `config_invalid`).
    Disabled(&'static str),
}

/// Everything the runner needs from its configuration.
#[derive(Debug)]
pub struct Plan {
    /// Start the server or run the agent alone.
    pub decision: Decision,
    /// How long the server may take from spawn to a healthy `/healthz` before the run goes on
    /// without it.
    pub startup_timeout: Duration,
    /// Grace between SIGTERM and SIGKILL, for the server at shutdown and for the agent after a
    /// forwarded SIGTERM or SIGHUP (a forwarded SIGINT is the agent's to handle, never escalated).
    pub shutdown_timeout: Duration,
    /// Format of the runner's log lines (and of the server's, which it relays): the server
    /// configuration's when valid, JSON otherwise.
    pub log_format: LogFormat,
    /// Minimum level of the runner's log lines (and of the relayed server lines).
    pub log_level: tracing::Level,
    /// Invalid values found, each to be reported once (`mcp_pruner.config_invalid` + stderr).
    pub errors: Vec<ConfigError>,
}

/// Default startup timeout.
pub const STARTUP_TIMEOUT_MS: u64 = 10_000;
/// Default shutdown timeout.
pub const SHUTDOWN_TIMEOUT_MS: u64 = 5_000;
/// Largest accepted value of either runner timeout (10 minutes).
const MAX_TIMEOUT_MS: u64 = 600_000;

/// Builds the plan from the arguments and an environment lookup (tests pass their own).
pub fn plan(args: &RunArgs, env: &dyn Fn(&str) -> Option<String>) -> Plan {
    let mut errors = Vec::new();

    let enabled = match env(ENABLED_ENV).filter(|v| !v.trim().is_empty()) {
        None => Ok(true),
        Some(raw) => bool_value(ENABLED_ENV, &raw, "invalid_enabled").map_err(|mut e| {
            e.message.push_str("; treating it as false");
            e
        }),
    };

    let mut timeout = |flag: &str, value: &Option<String>, envs: &[&str], min, default| {
        int_in(
            &pick(flag, value, envs, env),
            "invalid_timeout_ms",
            min,
            MAX_TIMEOUT_MS,
            default,
        )
        .unwrap_or_else(|e| {
            errors.push(e);
            default
        })
    };
    let startup_ms = timeout(
        "--startup-timeout-ms",
        &args.startup_timeout_ms,
        &[
            "JEEVES_MCP_PRUNER_STARTUP_TIMEOUT_MS",
            "MCP_PRUNER_STARTUP_TIMEOUT_MS",
        ],
        1,
        STARTUP_TIMEOUT_MS,
    );
    let shutdown_ms = timeout(
        "--shutdown-timeout-ms",
        &args.shutdown_timeout_ms,
        &[
            "JEEVES_MCP_PRUNER_SHUTDOWN_TIMEOUT_MS",
            "MCP_PRUNER_SHUTDOWN_TIMEOUT_MS",
        ],
        0,
        SHUTDOWN_TIMEOUT_MS,
    );

    let config = Config::from_args_with_env(&args.server, env);
    let (log_format, log_level) = match &config {
        Ok(c) => (c.log_format, c.log_level),
        Err(_) => (LogFormat::Json, tracing::Level::INFO),
    };

    let decision = match (enabled, config) {
        (Ok(false), _) => Decision::Disabled("config_disabled"),
        (Err(e), _) => {
            errors.push(e);
            Decision::Disabled("config_invalid")
        }
        (Ok(true), Err(e)) => {
            errors.push(e);
            Decision::Disabled("config_invalid")
        }
        (Ok(true), Ok(_)) if !errors.is_empty() => Decision::Disabled("config_invalid"),
        (Ok(true), Ok(c)) => Decision::Start(Box::new(c)),
    };
    // A disabled run does not care about the server's configuration, but the runner's own
    // timeouts still matter (the shutdown timeout bounds a forwarded signal), so their errors stay.
    Plan {
        decision,
        startup_timeout: Duration::from_millis(startup_ms),
        shutdown_timeout: Duration::from_millis(shutdown_ms),
        log_format,
        log_level,
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerArgs;

    fn args(root: Option<&str>) -> RunArgs {
        RunArgs {
            server: ServerArgs {
                root: root.map(str::to_string),
                ..Default::default()
            },
            startup_timeout_ms: None,
            shutdown_timeout_ms: None,
            log_file: None,
            command: vec!["true".into()],
        }
    }

    fn env_of<'a>(
        pairs: &'a [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn codes(p: &Plan) -> Vec<&'static str> {
        p.errors.iter().map(|e| e.code).collect()
    }

    #[test]
    fn unset_or_truthy_starts_the_server() {
        for pairs in [
            &[][..],
            &[(ENABLED_ENV, "")],
            &[(ENABLED_ENV, "yes")],
            &[(ENABLED_ENV, "1")],
        ] {
            let p = plan(&args(Some("/")), &env_of(pairs));
            assert!(matches!(p.decision, Decision::Start(_)), "{pairs:?}");
            assert!(p.errors.is_empty());
            assert_eq!(p.startup_timeout, Duration::from_millis(STARTUP_TIMEOUT_MS));
            assert_eq!(
                p.shutdown_timeout,
                Duration::from_millis(SHUTDOWN_TIMEOUT_MS)
            );
        }
    }

    #[test]
    fn falsy_disables_without_error_and_ignores_server_config() {
        let p = plan(
            &args(Some("/definitely/not/here")),
            &env_of(&[(ENABLED_ENV, "off")]),
        );
        assert!(matches!(p.decision, Decision::Disabled("config_disabled")));
        assert!(p.errors.is_empty());
    }

    #[test]
    fn invalid_switch_is_false_with_an_error() {
        let p = plan(&args(Some("/")), &env_of(&[(ENABLED_ENV, "maybe")]));
        assert!(matches!(p.decision, Decision::Disabled("config_invalid")));
        assert_eq!(codes(&p), ["invalid_enabled"]);
        assert!(p.errors[0].message.contains("treating it as false"));
    }

    #[test]
    fn invalid_server_config_or_timeout_disables() {
        let p = plan(&args(Some("/definitely/not/here")), &env_of(&[]));
        assert!(matches!(p.decision, Decision::Disabled("config_invalid")));
        assert_eq!(codes(&p), ["invalid_root_dir"]);

        let p = plan(
            &args(Some("/")),
            &env_of(&[
                ("MCP_PRUNER_STARTUP_TIMEOUT_MS", "soon"),
                ("JEEVES_MCP_PRUNER_SHUTDOWN_TIMEOUT_MS", "-1"),
            ]),
        );
        assert!(matches!(p.decision, Decision::Disabled("config_invalid")));
        assert_eq!(codes(&p), ["invalid_timeout_ms", "invalid_timeout_ms"]);
        assert_eq!(
            (p.errors[0].field.as_str(), p.errors[1].field.as_str()),
            (
                "MCP_PRUNER_STARTUP_TIMEOUT_MS",
                "JEEVES_MCP_PRUNER_SHUTDOWN_TIMEOUT_MS"
            )
        );
        assert_eq!(
            p.shutdown_timeout,
            Duration::from_millis(SHUTDOWN_TIMEOUT_MS),
            "an invalid timeout falls back to its default"
        );
    }

    #[test]
    fn flags_beat_environment() {
        let mut a = args(Some("/"));
        a.startup_timeout_ms = Some("250".into());
        a.shutdown_timeout_ms = Some("0".into());
        let p = plan(&a, &env_of(&[("MCP_PRUNER_STARTUP_TIMEOUT_MS", "x")]));
        assert!(matches!(p.decision, Decision::Start(_)));
        assert_eq!(
            (p.startup_timeout, p.shutdown_timeout),
            (Duration::from_millis(250), Duration::ZERO)
        );
    }
}
