//! One MCP session: a stdio connection, or an HTTP `Mcp-Session-Id`. Owns what the client
//! negotiated (protocol version, log level); never the transport.

use crate::sync::Unpoisoned;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Protocol versions this server speaks, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// MCP log levels (RFC 5424 names), lowest first.
pub const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// State of one client session.
pub struct Session {
    /// Session id: the `Mcp-Session-Id` over HTTP, a fixed name over stdio.
    pub id: String,
    /// Negotiated protocol version; `None` until `initialize`.
    pub protocol_version: Mutex<Option<String>>,
    /// Minimum level of `notifications/message` the client asked for; `None` sends none.
    pub log_level: Mutex<Option<usize>>,
    /// The client's `(name, version)` from `initialize` or the request envelope (for the ledger).
    pub client: Mutex<Option<(String, String)>>,
    /// The client's id in the savings ledger ([`crate::ledger::Ledger::client_id`]), found on
    /// the first recorded call; [`NO_LEDGER_CLIENT`] until then or after the client changes.
    pub ledger_client: AtomicU32,
}

/// [`Session::ledger_client`] before the ledger was asked.
pub const NO_LEDGER_CLIENT: u32 = u32::MAX;

impl Session {
    /// A fresh session called `id`.
    pub fn new(id: impl Into<String>) -> Session {
        Session {
            id: id.into(),
            protocol_version: Mutex::new(None),
            log_level: Mutex::new(None),
            client: Mutex::new(None),
            ledger_client: AtomicU32::new(NO_LEDGER_CLIENT),
        }
    }

    /// The session of one modern-era request: the connection's `id` (so cancellation and stored
    /// outputs stay keyed as before), with the version and log level its envelope declared.
    pub fn for_request(id: &str, envelope: &super::era::Envelope) -> Session {
        Session {
            id: id.to_string(),
            protocol_version: Mutex::new(Some(envelope.version.clone())),
            log_level: Mutex::new(envelope.log_level),
            client: Mutex::new(envelope.client_info.as_ref().map(client_of)),
            ledger_client: AtomicU32::new(NO_LEDGER_CLIENT),
        }
    }

    /// The client `(name, version)`, empty strings when unknown.
    pub fn client(&self) -> (String, String) {
        self.client.locked().clone().unwrap_or_default()
    }

    /// Sets the client `(name, version)` (from `initialize`).
    pub fn set_client(&self, client: (String, String)) {
        *self.client.locked() = Some(client);
        self.ledger_client
            .store(NO_LEDGER_CLIENT, Ordering::Relaxed);
    }

    /// The client's ledger id: asked of `ledger` once, then kept (no lock on later calls).
    pub fn ledger_client(&self, ledger: &crate::ledger::Ledger) -> u32 {
        let id = self.ledger_client.load(Ordering::Relaxed);
        if id != NO_LEDGER_CLIENT {
            return id;
        }
        let (name, version) = self.client();
        let id = ledger.client_id(&name, &version);
        self.ledger_client.store(id, Ordering::Relaxed);
        id
    }

    /// Whether a log notification at `level` (an index into [`LOG_LEVELS`]) should be sent.
    pub fn wants_log(&self, level: usize) -> bool {
        self.log_level.locked().is_some_and(|min| level >= min)
    }
}

/// `(name, version)` of a `clientInfo` object (missing fields are empty).
pub fn client_of(info: &serde_json::Value) -> (String, String) {
    let field = |k: &str| {
        info.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    (field("name"), field("version"))
}
