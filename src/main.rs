//! The `mcp-pruner` binary: parses the command line and hands off to the library. The same
//! binary, re-executed as `mcp-pruner __shepherd ...`, is the shepherd that stands between the
//! server and each command it runs (`process::shepherd`).

use clap::Parser;
use mcp_pruner::process::{self, shepherd};

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == shepherd::ARG) {
        shepherd::main(args.collect());
    }
    // /proc/self/exe still runs this binary after the file was replaced or removed (a rebuild).
    let exe = if cfg!(target_os = "linux") {
        Some(std::path::PathBuf::from("/proc/self/exe"))
    } else {
        std::env::current_exe().ok()
    };
    if let Some(exe) = exe {
        process::use_shepherd(exe);
    }
    mcp_pruner::cli::main(mcp_pruner::cli::Cli::parse())
}
