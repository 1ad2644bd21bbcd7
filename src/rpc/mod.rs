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

use crate::app::App;
use crate::proxy::Proxy;
use std::sync::Arc;

/// What the dispatcher serves: the process's state and, for `mcp-pruner proxy`, the upstream it
/// fronts. The proxy is held here, not in [`App`], because the proxy runs its results through
/// the tools' pipeline, which holds an [`App`]: `App` naming `Proxy` would make a cycle.
#[derive(Clone)]
pub struct Server {
    /// Configuration, store, pruner, in-flight table, ledger and counters.
    pub app: Arc<App>,
    /// The upstream this server fronts (`mcp-pruner proxy`); `None` for `serve` and `stdio`.
    pub proxy: Option<Arc<Proxy>>,
}

impl Server {
    /// A server of the built-in tools only.
    pub fn new(app: Arc<App>) -> Server {
        Server { app, proxy: None }
    }

    /// A server in front of a started upstream.
    pub fn with_proxy(app: Arc<App>, proxy: Arc<Proxy>) -> Server {
        Server {
            app,
            proxy: Some(proxy),
        }
    }
}
