//! The `mcp-pruner` binary: parses the command line and hands off to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    mcp_pruner::cli::main(mcp_pruner::cli::Cli::parse())
}
