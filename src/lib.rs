//! mcp-pruner: an MCP server that reads files, runs commands and searches code for coding agents,
//! and prunes what comes back to what the agent's question needs, keeping the rest recoverable.
//!
//! Data flows one way: [`transport`] -> [`rpc`] -> [`tools`] -> ([`process`] | [`prune`] | [`store`])
//! -> [`rpc`] -> [`transport`]. The contract (types, schemas, validators) lives in [`contract`] and is
//! generated from `schemas/`.

pub mod contract;
pub mod prune;
pub mod tokens;
