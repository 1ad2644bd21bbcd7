//! The MCP method dispatcher, independent of any transport: one message or a batch in, a reply
//! out ([`dispatch`], [`batch`]), and the routing of a proxied server's methods ([`proxied`]).
//! Knows nothing about sockets or stdin; transports hand it parsed JSON and a channel for
//! notifications. What the protocol itself says (framing, eras, sessions, progress,
//! cancellation) is [`crate::protocol`], below it, so tools and the proxy speak it without
//! reaching up here.

pub mod batch;
pub mod dispatch;
pub mod proxied;

pub use dispatch::handle;
