//! The in-flight table: one cancellation token per running request, keyed by session and by the
//! request id canonicalised as a string (seed 003 section 7.2), so a numeric id can be cancelled
//! with a string and vice versa. Owns registration and lookup; it never answers a request.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Running requests that can be cancelled.
#[derive(Default)]
pub struct InFlight {
    /// (session id, canonical request id) -> token cancelled by `notifications/cancelled`.
    entries: Mutex<HashMap<(String, String), CancellationToken>>,
}

/// Removes its entry from the table when dropped, whatever way the request ends.
pub struct Registration<'a> {
    table: &'a InFlight,
    key: (String, String),
    /// The token the request's work watches.
    pub token: CancellationToken,
}

impl InFlight {
    /// Registers a request; the returned guard unregisters it on drop.
    pub fn register(&self, session: &str, id: &str) -> Registration<'_> {
        let token = CancellationToken::new();
        let key = (session.to_string(), id.to_string());
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), token.clone());
        Registration {
            table: self,
            key,
            token,
        }
    }

    /// Cancels the request `id` of `session`; returns whether it was running.
    pub fn cancel(&self, session: &str, id: &str) -> bool {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get(&(session.to_string(), id.to_string())) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every request of `session` (its connection or session ended).
    pub fn cancel_session(&self, session: &str) {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for ((s, _), token) in entries.iter() {
            if s == session {
                token.cancel();
            }
        }
    }

    /// Number of running requests.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing is running.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.table
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_and_string_ids_meet() {
        let t = InFlight::default();
        let r = t.register("s", &crate::rpc::message::id_key(&serde_json::json!(7)));
        assert!(t.cancel("s", &crate::rpc::message::id_key(&serde_json::json!("7"))));
        assert!(r.token.is_cancelled());
        drop(r);
        assert!(t.is_empty());
        assert!(!t.cancel("s", "7"));
    }
}
