//! JSON-RPC and MCP methods, independent of any transport: framing ([`message`]), the dispatcher
//! ([`dispatch`]), cancellation ([`inflight`]) and progress ([`progress`]). Knows nothing about
//! sockets or stdin; transports hand it parsed JSON and a channel for notifications.

pub mod batch;
pub mod dispatch;
pub mod era;
pub mod inflight;
pub mod message;
pub mod progress;
pub mod proxied;
pub mod session;

pub use dispatch::handle;
pub use session::Session;
