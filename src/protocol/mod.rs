//! What JSON-RPC and MCP say, below every room that speaks them: framing and error replies
//! ([`message`]), the two eras of the protocol ([`era`]), a client's session ([`session`]),
//! progress notifications ([`progress`]) and the table of running requests that cancellation
//! reaches ([`inflight`]).
//!
//! Owns the protocol's vocabulary and state; it must never dispatch a method, run a tool or know
//! a transport (those are [`crate::rpc`], [`crate::tools`] and [`crate::transport`], above it).

pub mod era;
pub mod inflight;
pub mod message;
pub mod progress;
pub mod session;

pub use session::Session;
