//! What this build is and how it says so: the version string every command and `doctor` print.
//! Lives below the command line so that any room can name the build without reaching up into
//! [`crate::cli`]. Holds constants only: the version string, the crate version and the server's name.

/// `--version`: the crate version, each tool's `schemaVersion` and the git revision it was built from.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (schemaVersion ",
    env!("MCP_PRUNER_SCHEMA_VERSIONS"),
    "; git ",
    env!("MCP_PRUNER_GIT_REVISION"),
    ")"
);

/// Version of this build (`toolingVersion` of seed 003).
pub const TOOLING_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Server name in `serverInfo`, `/healthz` and `health`.
pub const SERVER_NAME: &str = "mcp-pruner";
