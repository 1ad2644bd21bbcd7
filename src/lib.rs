//! mcp-pruner: an MCP server that reads files, runs commands and searches code for coding agents,
//! and prunes what comes back to what the agent's question needs, keeping the rest recoverable.
//!
//! Data flows one way: [`transport`] -> [`rpc`] -> [`tools`] -> ([`process`] | [`prune`] | [`store`])
//! -> [`rpc`] -> [`transport`]. The contract (types, schemas, validators) lives in [`contract`] and is
//! generated from `schemas/`; what the protocol says (framing, eras, sessions, progress,
//! cancellation) lives in [`protocol`], below the dispatcher, the tools and the proxy alike.

// `RpcError` is the generated contract type of a JSON-RPC error (code, message, field errors):
// it is returned on cold paths only, so boxing it everywhere would buy nothing.
#![allow(clippy::result_large_err)]

pub mod app;
pub mod budget;
pub mod cli;
pub mod client_config;
pub mod config;
pub mod contract;
pub mod doctor;
pub mod events;
pub mod http_client;
pub mod ledger;
pub mod logging;
pub mod metrics;
pub mod process;
pub mod protocol;
pub mod proxy;
pub mod prune;
pub mod rpc;
pub mod runner;
pub mod secret;
pub mod stats;
pub mod store;
pub mod sync;
pub mod tokens;
pub mod tools;
pub mod transport;
pub mod version;
