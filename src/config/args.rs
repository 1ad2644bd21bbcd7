//! The server's flags as clap reads them (`serve`, `stdio` and `run` share them): each optional,
//! so that the environment can supply it. Owns their names and help texts; it must never apply
//! defaults or validate (that is [`Config::from_args`](super::Config::from_args)'s job).

use clap::Args;

/// Server flags shared by `serve`, `stdio` and `run`. Each is optional here so that the
/// environment can supply it; [`Config::from_args`](super::Config::from_args) applies defaults
/// and validation.
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
    /// Where recovery entries live: memory, or `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` (`rediss://` for TLS) shared by every replica on it [env: MCP_PRUNER_STORE; default memory]
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
