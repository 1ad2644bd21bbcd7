//! Transports: stdio (newline-delimited JSON-RPC) and HTTP (warp: Streamable HTTP, health, the
//! pruner endpoint). Both feed the same dispatcher ([`crate::rpc`]); neither knows what a tool does.

pub mod http;
pub mod stdio;
