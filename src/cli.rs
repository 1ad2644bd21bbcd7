//! The command line (clap): `serve`, `stdio`, `run`, `config`, `doctor`, `stats`, `schema`,
//! `completions`, `man`. Parses, builds a [`Config`], and
//! hands off to a transport or the runner. Owns exit codes; never implements a feature itself.

use crate::app::App;
use crate::client_config::ConfigArgs;
use crate::config::{Config, EXIT_CONFIG, ServerArgs};
use crate::logging::{self, Sink};
use crate::rpc::Server;
use crate::runner::RunArgs;
use crate::version::LONG_VERSION;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// MCP server for coding agents: read, bash and grep with task-aware pruning and lossless recovery.
#[derive(Parser, Debug)]
#[command(name = "mcp-pruner", version = LONG_VERSION, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve MCP over HTTP (POST /mcp, /rpc; GET /healthz, /health; POST /prune).
    Serve(ServerArgs),
    /// Serve MCP over stdin/stdout (what Claude Code and Codex launch).
    Stdio(ServerArgs),
    /// Start the HTTP server, run an agent command with its URL in the environment, stop it after.
    Run(RunArgs),
    /// Put budgets, pruning and recovery in front of another MCP server's tools:
    /// `proxy [options] -- CMD ARGS…` (stdio upstream) or `proxy --upstream URL` (Streamable HTTP).
    Proxy(crate::proxy::options::ProxyArgs),
    /// Print the Claude Code or Codex configuration that registers this server.
    Config(ConfigArgs),
    /// Check the setup a client needs (binary, root, client configs, tokenizer, store, pruner
    /// backend, a round trip of every tool); exits non-zero when something is wrong.
    Doctor(crate::doctor::DoctorArgs),
    /// What pruning saved, from the savings ledger: a table, --json, or --html FILE with charts.
    Stats(crate::stats::StatsArgs),
    /// Print the contract as one self-contained JSON Schema (every tool input and result, errors,
    /// PruningMetadata under `$defs`) for generating client bindings.
    Schema,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// Runs the parsed command line.
pub fn main(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Serve(args) => with_config(&args, Sink::Stdout, serve),
        Command::Stdio(args) => with_config(&args, Sink::Stderr, stdio),
        Command::Run(args) => crate::runner::main(args),
        Command::Proxy(args) => proxy(&args),
        Command::Config(args) => crate::client_config::main(&args),
        Command::Doctor(args) => crate::doctor::main(&args),
        Command::Stats(args) => crate::stats::main(&args),
        Command::Schema => {
            print!("{}", crate::contract::BINDINGS_SCHEMA);
            ExitCode::SUCCESS
        }
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "mcp-pruner", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcp-pruner: cannot write the man page: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn with_config(args: &ServerArgs, sink: Sink, f: fn(Config) -> ExitCode) -> ExitCode {
    match load_config(args, sink) {
        Ok(cfg) => f(cfg),
        Err(code) => code,
    }
}

/// The validated configuration with logging started, or the exit code of an invalid one.
fn load_config(args: &ServerArgs, sink: Sink) -> Result<Config, ExitCode> {
    match Config::from_args(args) {
        Ok(cfg) => {
            logging::init(cfg.log_format, cfg.log_level, sink);
            Ok(cfg)
        }
        Err(e) => {
            logging::init(
                crate::config::LogFormat::Json,
                tracing::Level::INFO,
                Sink::Stderr,
            );
            crate::events::config_invalid(e.code, &e.field, &e.message);
            eprintln!("mcp-pruner: {e}");
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn serve(cfg: Config) -> ExitCode {
    match runtime().block_on(serve_http(cfg, None)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-pruner: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Serves HTTP until SIGINT or SIGTERM (`serve`, and `proxy --listen http` with its proxy).
async fn serve_http(
    cfg: Config,
    proxy: Option<std::sync::Arc<crate::proxy::Proxy>>,
) -> Result<(), String> {
    let addr = std::net::SocketAddr::new(cfg.host, cfg.port);
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            crate::events::start_failed(&format!("cannot listen on {addr}: {e}"));
            return Err(format!("cannot listen on {addr}: {e}"));
        }
    };
    let bound = listener.local_addr().expect("bound socket has an address");
    let app = App::new(cfg);
    let server = match proxy {
        Some(p) => Server::with_proxy(app.clone(), p),
        None => Server::new(app.clone()),
    };
    crate::events::ready(
        &bound.ip().to_string(),
        bound.port(),
        &app.config.root.to_string_lossy(),
    );
    let served = crate::transport::http::serve(server, listener, shutdown_signal()).await;
    // Rows still queued are written before the process ends.
    app.ledger.close();
    served.map_err(|e| e.to_string())
}

fn stdio(cfg: Config) -> ExitCode {
    runtime().block_on(async move {
        let app = App::new(cfg);
        // On a worker, not on this thread (block_on's): the calls it spawns then start on the same
        // worker, with no wake-up of another thread.
        let served = tokio::spawn(crate::transport::stdio::serve(Server::new(app.clone())))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        app.ledger.close();
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp-pruner: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `mcp-pruner proxy`: the server flags and the proxy's own, the upstream started and
/// initialized, then served downstream over stdio or HTTP; the upstream is stopped on the way out.
fn proxy(args: &crate::proxy::options::ProxyArgs) -> ExitCode {
    use crate::proxy::options::{Listen, ProxyOptions};
    let opts = match ProxyOptions::from_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mcp-pruner: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let sink = match opts.listen {
        Listen::Stdio => Sink::Stderr,
        Listen::Http => Sink::Stdout,
    };
    let mut cfg = match load_config(&args.server, sink) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Only recover_text of the built-in tools: the upstream's tools are the point.
    cfg.tools = Some(vec!["recover_text".into()]);
    runtime().block_on(async move {
        let proxy = match crate::proxy::Proxy::start(opts, cfg.kill_grace).await {
            Ok(p) => p,
            Err(e) => {
                crate::events::start_failed(&format!("proxy: {e}"));
                eprintln!("mcp-pruner: proxy: {e}");
                return ExitCode::FAILURE;
            }
        };
        let listen = proxy.opts().listen;
        let served = match listen {
            Listen::Stdio => {
                let app = App::new(cfg);
                let server = Server::with_proxy(app.clone(), proxy.clone());
                let served = tokio::spawn(crate::transport::stdio::serve(server))
                    .await
                    .unwrap_or_else(|e| Err(std::io::Error::other(e)));
                app.ledger.close();
                served.map_err(|e| e.to_string())
            }
            Listen::Http => serve_http(cfg, Some(proxy.clone())).await,
        };
        proxy.shutdown().await;
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp-pruner: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
