//! `mcp-pruner proxy`'s own flags (the upstream, its name and tool prefix, the downstream
//! transport, the restart policy, the upstream timeout), parsed and validated into
//! [`ProxyOptions`]. The server flags it shares with `serve` and `stdio` stay in
//! [`crate::config`]; this module only adds to them and never starts anything.

use crate::config::{ConfigError, ServerArgs};
use clap::Args;
use std::time::Duration;

/// `mcp-pruner proxy [options] -- CMD ARGS…` or `mcp-pruner proxy --upstream URL [options]`.
#[derive(Args, Clone, Debug, Default)]
pub struct ProxyArgs {
    /// The server flags of `serve` and `stdio` (budget, pruner, store, ledger, HTTP listen).
    #[command(flatten)]
    pub server: ServerArgs,
    /// Upstream MCP server over Streamable HTTP (instead of a command after `--`)
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// Prefix added to every upstream tool's name downstream (default: none)
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Name of the upstream in the ledger and logs (default: the command's file name, or the URL's host)
    #[arg(long, value_name = "NAME")]
    pub upstream_name: Option<String>,
    /// Downstream transport: stdio (default) or http (like `serve`)
    #[arg(long, value_name = "stdio|http")]
    pub listen: Option<String>,
    /// What to do when the upstream dies: on-failure (default: start it again on the next request) or never
    #[arg(long, value_name = "POLICY")]
    pub restart: Option<String>,
    /// Restarts allowed over the proxy's life (default 3)
    #[arg(long, value_name = "N")]
    pub max_restarts: Option<String>,
    /// Longest wait for one upstream answer before the call fails (default 60000; initialize: 20000 at most)
    #[arg(long, value_name = "MS")]
    pub upstream_timeout_ms: Option<String>,
    /// Protocol era spoken upstream: auto (default: 2026-07-28 when an HTTP upstream answers server/discover with it, else the handshake), 2025 or 2026-07-28
    #[arg(long, value_name = "ERA")]
    pub upstream_era: Option<String>,
    /// The upstream server's command and arguments (after `--`)
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Where the upstream server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A command speaking MCP over its stdin/stdout.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(url::Url),
}

/// Which protocol era the proxy speaks to its upstream (`--upstream-era`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamEra {
    /// An HTTP upstream is asked `server/discover` first; a stdio one gets the handshake.
    Auto,
    /// The handshake era: `initialize`, then the session.
    Handshake,
    /// The 2026-07-28 revision: every request self-contained, no handshake.
    Modern,
}

/// The downstream transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listen {
    /// stdin/stdout, like `mcp-pruner stdio`.
    Stdio,
    /// HTTP, like `mcp-pruner serve`.
    Http,
}

/// Validated proxy options.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// The upstream.
    pub target: Target,
    /// Its name in the ledger (`NAME/tool`) and logs.
    pub name: String,
    /// Prefix of upstream tool names downstream.
    pub prefix: String,
    /// Downstream transport.
    pub listen: Listen,
    /// Restart a dead upstream on the next request.
    pub restart: bool,
    /// Restarts allowed in all.
    pub max_restarts: u32,
    /// Longest wait for one upstream answer.
    pub timeout: Duration,
    /// The era spoken upstream.
    pub era: UpstreamEra,
}

fn invalid(field: &str, code: &'static str, message: String) -> ConfigError {
    ConfigError {
        code,
        field: field.into(),
        message,
    }
}

fn number(field: &str, raw: Option<&str>, default: u64, max: u64) -> Result<u64, ConfigError> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= max)
        .ok_or_else(|| {
            invalid(
                field,
                "invalid_proxy_option",
                format!("expected a whole number from 0 to {max}, got {raw:?}"),
            )
        })
}

impl ProxyOptions {
    /// Validates the proxy's own flags.
    pub fn from_args(args: &ProxyArgs) -> Result<ProxyOptions, ConfigError> {
        let target = target(args)?;
        let name = args
            .upstream_name
            .clone()
            .unwrap_or_else(|| default_name(&target));
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(invalid(
                "--upstream-name",
                "invalid_proxy_option",
                format!("expected a name without spaces, got {name:?}"),
            ));
        }
        let listen = match args.listen.as_deref().unwrap_or("stdio") {
            "stdio" => Listen::Stdio,
            "http" => Listen::Http,
            other => {
                return Err(invalid(
                    "--listen",
                    "invalid_proxy_option",
                    format!("expected stdio or http, got {other:?}"),
                ));
            }
        };
        let restart = match args.restart.as_deref().unwrap_or("on-failure") {
            "on-failure" => true,
            "never" => false,
            other => {
                return Err(invalid(
                    "--restart",
                    "invalid_proxy_option",
                    format!("expected on-failure or never, got {other:?}"),
                ));
            }
        };
        let era = match args.upstream_era.as_deref().unwrap_or("auto") {
            "auto" => UpstreamEra::Auto,
            "2025" | "2025-11-25" => UpstreamEra::Handshake,
            "2026-07-28" => UpstreamEra::Modern,
            other => {
                return Err(invalid(
                    "--upstream-era",
                    "invalid_proxy_option",
                    format!("expected auto, 2025 or 2026-07-28, got {other:?}"),
                ));
            }
        };
        Ok(ProxyOptions {
            era,
            target,
            name,
            prefix: args.prefix.clone().unwrap_or_default(),
            listen,
            restart,
            max_restarts: number("--max-restarts", args.max_restarts.as_deref(), 3, 1000)? as u32,
            timeout: Duration::from_millis(number(
                "--upstream-timeout-ms",
                args.upstream_timeout_ms.as_deref(),
                60_000,
                3_600_000,
            )?),
        })
    }
}

/// The upstream: a command after `--`, or `--upstream URL`, exactly one of them.
fn target(args: &ProxyArgs) -> Result<Target, ConfigError> {
    match (&args.upstream, args.command.is_empty()) {
        (Some(_), false) => Err(invalid(
            "--upstream",
            "invalid_proxy_option",
            "give either --upstream URL or a command after --, not both".into(),
        )),
        (None, true) => Err(invalid(
            "--",
            "invalid_proxy_option",
            "no upstream: give a command after -- (mcp-pruner proxy -- npx -y SERVER) or --upstream URL".into(),
        )),
        (None, false) => Ok(Target::Command(args.command.clone())),
        (Some(raw), true) => match url::Url::parse(raw) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(Target::Url(u)),
            _ => Err(invalid(
                "--upstream",
                "invalid_proxy_option",
                format!("expected an http(s) URL, got {raw:?}"),
            )),
        },
    }
}

/// Programs that run another program named by an argument.
const LAUNCHERS: &[&str] = &[
    "npx", "node", "python", "uv", "uvx", "bunx", "bun", "deno", "pnpm", "bash", "sh", "env",
];

/// The command's file name, or the URL's host.
fn default_name(target: &Target) -> String {
    let raw = match target {
        Target::Command(cmd) => {
            // A launcher (`npx -y @scope/server-x`, `node dist/index.js`, `python3 srv.py`) is
            // named by its first argument that is not a flag; any other program by itself.
            let program = cmd[0].rsplit('/').next().unwrap_or(&cmd[0]);
            let launcher = LAUNCHERS.iter().any(|l| program.starts_with(l));
            if launcher {
                cmd.iter()
                    .skip(1)
                    .find(|a| !a.starts_with('-'))
                    .unwrap_or(&cmd[0])
                    .clone()
            } else {
                cmd[0].clone()
            }
        }
        Target::Url(u) => u.host_str().unwrap_or("upstream").to_string(),
    };
    let base = raw.rsplit('/').next().unwrap_or(&raw);
    let base = base.strip_suffix(".js").unwrap_or(base);
    let base = base.strip_suffix(".py").unwrap_or(base);
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '@')
        .collect();
    if cleaned.is_empty() {
        "upstream".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &[&str]) -> ProxyArgs {
        ProxyArgs {
            command: cmd.iter().map(|s| s.to_string()).collect(),
            ..ProxyArgs::default()
        }
    }

    #[test]
    fn names_come_from_the_command_or_the_url() {
        let o = ProxyOptions::from_args(&args(&[
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything",
        ]))
        .unwrap();
        assert_eq!(o.name, "server-everything");
        let o = ProxyOptions::from_args(&args(&["python3", "srv/issues.py"])).unwrap();
        assert_eq!(o.name, "issues");
        let o =
            ProxyOptions::from_args(&args(&["/x/.bin/mcp-server-everything", "stdio"])).unwrap();
        assert_eq!(o.name, "mcp-server-everything");
        let mut a = args(&[]);
        a.upstream = Some("http://127.0.0.1:9/mcp".into());
        assert_eq!(ProxyOptions::from_args(&a).unwrap().name, "127.0.0.1");
    }

    #[test]
    fn one_upstream_exactly() {
        assert!(ProxyOptions::from_args(&args(&[])).is_err());
        let mut a = args(&["x"]);
        a.upstream = Some("http://h/mcp".into());
        assert!(ProxyOptions::from_args(&a).is_err());
        let mut a = args(&["x"]);
        a.restart = Some("always".into());
        assert_eq!(ProxyOptions::from_args(&a).unwrap_err().field, "--restart");
        let mut a = args(&["x"]);
        a.upstream_era = Some("2024".into());
        assert_eq!(
            ProxyOptions::from_args(&a).unwrap_err().field,
            "--upstream-era"
        );
        a.upstream_era = Some("2026-07-28".into());
        assert_eq!(
            ProxyOptions::from_args(&a).unwrap().era,
            UpstreamEra::Modern
        );
    }
}
