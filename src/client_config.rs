//! Client configuration snippets: what Claude Code (`.mcp.json`, `claude --mcp-config FILE`,
//! `claude mcp add`) and Codex (`config.toml`, `codex -c ...`) need to reach this server, either a
//! running HTTP server (`url`) or one they launch themselves over stdio (`command` + `args`).
//! Owns the `config` subcommand and the snippet text the runner hands to agents. It only builds
//! text: it never writes a client's configuration file, starts a server or touches the network.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

/// Name under which the server is registered with every client (`mcpServers.pruner`,
/// `[mcp_servers.pruner]`); tools then show up as `mcp__pruner__read` and the like.
pub const SERVER_NAME: &str = "pruner";

/// Variable holding the server's bearer token: the server reads it (`--auth-token`'s variable),
/// and an agent's Codex is pointed at it through `bearer_token_env_var`.
pub const AUTH_TOKEN_ENV: &str = "MCP_PRUNER_AUTH_TOKEN";

/// Which client the snippet is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code: a `.mcp.json` object (also what `claude --mcp-config FILE` reads).
    Claude,
    /// Codex: a `config.toml` table.
    Codex,
}

/// `mcp-pruner config claude|codex [--url URL | --stdio] [--root DIR]`.
#[derive(Args, Clone, Debug)]
pub struct ConfigArgs {
    /// The client to print a snippet for.
    #[arg(value_enum)]
    pub client: Client,
    /// Point the client at an HTTP server already running at this URL (e.g. http://127.0.0.1:8765/mcp)
    #[arg(long, value_name = "URL", conflicts_with_all = ["stdio", "root"])]
    pub url: Option<String>,
    /// Let the client launch `mcp-pruner stdio` itself (the default)
    #[arg(long)]
    pub stdio: bool,
    /// Root directory passed to `mcp-pruner stdio --root` [default: current directory]
    #[arg(long, value_name = "DIR")]
    pub root: Option<String>,
    /// Savings ledger passed to `mcp-pruner stdio --ledger` [default: the file this environment
    /// selects, pinned only when it depends on MCP_PRUNER_LEDGER or XDG_DATA_HOME, which a client
    /// may not pass on]
    #[arg(long, value_name = "PATH", conflicts_with = "url")]
    pub ledger: Option<String>,
}

/// How the client reaches the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A running HTTP server: the client connects to `url` (MCP Streamable HTTP).
    Http {
        /// Endpoint URL, e.g. `http://127.0.0.1:8765/mcp`.
        url: String,
        /// Bearer token the server requires (`--auth-token`), when it requires one.
        bearer: Option<String>,
    },
    /// The client spawns `command stdio --root root [--ledger ledger]` and talks over its
    /// stdin/stdout.
    Stdio {
        /// Absolute path of the `mcp-pruner` executable.
        command: PathBuf,
        /// Absolute root directory every tool path is confined to.
        root: PathBuf,
        /// The savings ledger, pinned (see [`crate::config::pinned_ledger`]).
        ledger: Option<PathBuf>,
    },
}

impl Target {
    /// `args` of a stdio server (`["stdio", "--root", DIR]`, then `"--ledger", PATH` when one is
    /// pinned); empty for HTTP.
    fn stdio_args(&self) -> Vec<String> {
        match self {
            Target::Http { .. } => Vec::new(),
            Target::Stdio { root, ledger, .. } => {
                let mut args = vec![
                    "stdio".into(),
                    "--root".into(),
                    root.to_string_lossy().into_owned(),
                ];
                if let Some(l) = ledger {
                    args.extend(["--ledger".into(), l.to_string_lossy().into_owned()]);
                }
                args
            }
        }
    }
}

/// The Claude Code `.mcp.json` object registering this server as [`SERVER_NAME`].
pub fn claude_json(target: &Target) -> Value {
    let server = match target {
        Target::Http { url, bearer } => {
            let mut s = json!({ "type": "http", "url": url });
            if let Some(token) = bearer {
                s["headers"] = json!({ "Authorization": format!("Bearer {token}") });
            }
            s
        }
        Target::Stdio { command, .. } => json!({
            "command": command.to_string_lossy(),
            "args": target.stdio_args(),
        }),
    };
    json!({ "mcpServers": { SERVER_NAME: server } })
}

/// The equivalent `claude mcp add` command line (without the bearer token, which would end up in
/// shell history; use the `.mcp.json` form for a token-protected server).
pub fn claude_add_command(target: &Target) -> String {
    match target {
        Target::Http { url, .. } => {
            format!(
                "claude mcp add --transport http {SERVER_NAME} {}",
                sh_quote(url)
            )
        }
        Target::Stdio { command, .. } => format!(
            "claude mcp add {SERVER_NAME} -- {}",
            sh_join(&command.to_string_lossy(), &target.stdio_args())
        ),
    }
}

/// The Codex `config.toml` table `[mcp_servers.pruner]`. A bearer token is referenced through
/// `bearer_token_env_var` (Codex refuses an inline token), naming [`AUTH_TOKEN_ENV`].
pub fn codex_toml(target: &Target) -> String {
    let mut s = format!("[mcp_servers.{SERVER_NAME}]\n");
    match target {
        Target::Http { url, bearer } => {
            s.push_str(&format!("url = {}\n", toml_str(url)));
            if bearer.is_some() {
                s.push_str(&format!(
                    "bearer_token_env_var = {}\n",
                    toml_str(AUTH_TOKEN_ENV)
                ));
            }
        }
        Target::Stdio { command, .. } => {
            let args: Vec<String> = target.stdio_args().iter().map(|a| toml_str(a)).collect();
            s.push_str(&format!(
                "command = {}\nargs = [{}]\n",
                toml_str(&command.to_string_lossy()),
                args.join(", ")
            ));
        }
    }
    s
}

/// The equivalent `codex mcp add` command line.
pub fn codex_add_command(target: &Target) -> String {
    match target {
        Target::Http { url, .. } => format!("codex mcp add {SERVER_NAME} --url {}", sh_quote(url)),
        Target::Stdio { command, .. } => format!(
            "codex mcp add {SERVER_NAME} -- {}",
            sh_join(&command.to_string_lossy(), &target.stdio_args())
        ),
    }
}

/// `codex` command-line overrides (`-c key=value`, values in TOML) registering an HTTP server for
/// one run without touching `~/.codex/config.toml`. Written for `codex $MCP_PRUNER_CODEX_ARGS`:
/// the words contain no spaces, and the quotes are part of the TOML value, not shell syntax.
pub fn codex_http_args(url: &str, bearer: bool) -> String {
    let mut s = format!("-c mcp_servers.{SERVER_NAME}.url={}", toml_str(url));
    if bearer {
        s.push_str(&format!(
            " -c mcp_servers.{SERVER_NAME}.bearer_token_env_var={}",
            toml_str(AUTH_TOKEN_ENV)
        ));
    }
    s
}

/// A TOML basic string. JSON string escapes (`\"`, `\\`, `\n`, `\uXXXX`, ...) are all valid TOML
/// escapes, so serde_json's encoding is reused.
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Quotes `s` for a POSIX shell when it holds anything but plainly safe characters.
fn sh_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn sh_join(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Resolves the arguments into a [`Target`], or a message for an invalid `--url` or `--root`.
pub fn target(args: &ConfigArgs) -> Result<Target, crate::config::ConfigError> {
    use crate::config::ConfigError;
    if let Some(raw) = &args.url {
        return match url::Url::parse(raw.trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(Target::Http {
                url: u.to_string(),
                bearer: None,
            }),
            _ => Err(ConfigError {
                code: "invalid_url",
                field: "--url".into(),
                message: format!("expected an absolute http: or https: URL, got {raw:?}"),
            }),
        };
    }
    let command = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| ConfigError {
            code: "invalid_executable",
            field: "current executable".into(),
            message: format!("expected to find this program's own path: {e}"),
        })?;
    // The server's own --root validation, without the environment: the snippet names a root
    // explicitly (the flag, else the current directory).
    let server = crate::config::ServerArgs {
        root: args.root.clone(),
        ..Default::default()
    };
    let root = crate::config::Config::from_args_with_env(&server, &|_| None)?.root;
    let ledger = match &args.ledger {
        Some(p) if p.trim() == "off" || !std::path::Path::new(p).is_absolute() => {
            return Err(ConfigError {
                code: "invalid_ledger",
                field: "--ledger".into(),
                message: format!("expected an absolute file path, got {p:?}"),
            });
        }
        Some(p) => Some(PathBuf::from(p)),
        None => crate::config::pinned_ledger(&|k| std::env::var(k).ok()),
    };
    Ok(Target::Stdio {
        command,
        root,
        ledger,
    })
}

/// `mcp-pruner config`: the snippet on stdout, the equivalent CLI command as a comment on stderr.
pub fn main(args: &ConfigArgs) -> ExitCode {
    let target = match target(args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp-pruner: {e}");
            return ExitCode::from(crate::config::EXIT_CONFIG);
        }
    };
    match args.client {
        Client::Claude => {
            println!(
                "{}",
                serde_json::to_string_pretty(&claude_json(&target)).expect("serializes")
            );
            eprintln!(
                "# .mcp.json (project root) or `claude --mcp-config FILE`; or register it with: {}",
                claude_add_command(&target)
            );
        }
        Client::Codex => {
            print!("{}", codex_toml(&target));
            eprintln!(
                "# ~/.codex/config.toml (or .codex/config.toml in a trusted project); or register it with: {}",
                codex_add_command(&target)
            );
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Target {
        Target::Stdio {
            command: "/opt/my tools/mcp-pruner".into(),
            root: "/src/it's".into(),
            ledger: None,
        }
    }

    #[test]
    fn claude_snippets() {
        let http = Target::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            bearer: Some("tok".into()),
        };
        assert_eq!(
            claude_json(&http),
            json!({"mcpServers": {"pruner": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer tok"}}}})
        );
        assert_eq!(
            claude_json(&stdio()),
            json!({"mcpServers": {"pruner": {"command": "/opt/my tools/mcp-pruner",
                "args": ["stdio", "--root", "/src/it's"]}}})
        );
        assert_eq!(
            claude_add_command(&stdio()),
            r"claude mcp add pruner -- '/opt/my tools/mcp-pruner' stdio --root '/src/it'\''s'"
        );
        assert_eq!(
            claude_add_command(&http),
            "claude mcp add --transport http pruner http://127.0.0.1:9/mcp"
        );
    }

    #[test]
    fn codex_snippets() {
        let http = Target::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            bearer: None,
        };
        assert_eq!(
            codex_toml(&http),
            "[mcp_servers.pruner]\nurl = \"http://127.0.0.1:9/mcp\"\n"
        );
        assert_eq!(
            codex_toml(&stdio()),
            "[mcp_servers.pruner]\ncommand = \"/opt/my tools/mcp-pruner\"\nargs = [\"stdio\", \"--root\", \"/src/it's\"]\n"
        );
        assert_eq!(
            codex_http_args("http://127.0.0.1:9/mcp", true),
            "-c mcp_servers.pruner.url=\"http://127.0.0.1:9/mcp\" -c mcp_servers.pruner.bearer_token_env_var=\"MCP_PRUNER_AUTH_TOKEN\""
        );
        assert_eq!(toml_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        let pinned = Target::Stdio {
            command: "/bin/mcp-pruner".into(),
            root: "/src".into(),
            ledger: Some("/data/mcp-pruner/ledger.sqlite3".into()),
        };
        assert_eq!(
            codex_toml(&pinned),
            "[mcp_servers.pruner]\ncommand = \"/bin/mcp-pruner\"\nargs = [\"stdio\", \"--root\", \"/src\", \"--ledger\", \"/data/mcp-pruner/ledger.sqlite3\"]\n"
        );
    }

    #[test]
    fn invalid_url_and_root_are_named() {
        let args = |url: Option<&str>, root: Option<&str>| ConfigArgs {
            client: Client::Codex,
            url: url.map(str::to_string),
            stdio: false,
            root: root.map(str::to_string),
            ledger: None,
        };
        let e = target(&args(Some("ftp://x"), None)).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("invalid_url", "--url"));
        let e = target(&args(None, Some("/definitely/not/here"))).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("invalid_root_dir", "--root"));
        match target(&args(None, Some("/"))).unwrap() {
            Target::Stdio { command, root, .. } => {
                assert!(command.is_absolute());
                assert_eq!(root, PathBuf::from("/"));
            }
            other => panic!("expected stdio, got {other:?}"),
        }
    }
}
