//! The in-flight table: one cancellation token per running request, keyed by session and by the
//! request id canonicalised as a string (seed 003 section 7.2), so a numeric id can be cancelled
//! with a string and vice versa. A cancellation that arrives before its request is registered
//! (messages are handled concurrently, so it can overtake the call) is remembered for a short
//! while and applied at registration. Owns registration and lookup; it never answers a request.

use crate::sync::Unpoisoned;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a cancellation for a not-yet-registered request is remembered.
pub const EARLY_CANCEL_WINDOW: Duration = Duration::from_secs(10);

/// At most this many early cancellations are remembered (oldest dropped first).
const EARLY_CANCEL_MAX: usize = 1024;

/// Running requests that can be cancelled.
#[derive(Default)]
pub struct InFlight {
    /// (session id, canonical request id) -> token cancelled by `notifications/cancelled`.
    entries: Mutex<HashMap<(String, String), CancellationToken>>,
    /// Cancellations that overtook their request, with when they arrived.
    early: Mutex<HashMap<(String, String), Instant>>,
}

/// Removes its entry from the table when dropped, whatever way the request ends, and cancels
/// its token: a request whose future is dropped (its HTTP client went away, its session ended)
/// stops the work it started on other threads too (a `grep` walk, a command), not only the
/// work polled by that future.
pub struct Registration<'a> {
    /// The table its entry is in.
    table: &'a InFlight,
    /// Its entry's key: (session, request id).
    key: (String, String),
    /// The token the request's work watches.
    pub token: CancellationToken,
}

impl InFlight {
    /// Registers a request; the returned guard unregisters it on drop.
    pub fn register(&self, session: &str, id: &str) -> Registration<'_> {
        let token = CancellationToken::new();
        let key = (session.to_string(), id.to_string());
        let mut entries = self.entries.locked();
        let mut early = self.early.locked();
        if early
            .remove(&key)
            .is_some_and(|at| at.elapsed() < EARLY_CANCEL_WINDOW)
        {
            token.cancel();
        }
        entries.insert(key.clone(), token.clone());
        drop((entries, early));
        Registration {
            table: self,
            key,
            token,
        }
    }

    /// Cancels the request `id` of `session`; returns whether it was running. A request not
    /// running yet is cancelled as soon as it registers (within [`EARLY_CANCEL_WINDOW`]).
    pub fn cancel(&self, session: &str, id: &str) -> bool {
        let key = (session.to_string(), id.to_string());
        let entries = self.entries.locked();
        if let Some(token) = entries.get(&key) {
            token.cancel();
            return true;
        }
        let mut early = self.early.locked();
        early.retain(|_, at| at.elapsed() < EARLY_CANCEL_WINDOW);
        if early.len() >= EARLY_CANCEL_MAX
            && let Some(oldest) = early
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(k, _)| k.clone())
        {
            early.remove(&oldest);
        }
        early.insert(key, Instant::now());
        false
    }

    /// Cancels every request of `session` (its connection or session ended).
    pub fn cancel_session(&self, session: &str) {
        let entries = self.entries.locked();
        for ((s, _), token) in entries.iter() {
            if s == session {
                token.cancel();
            }
        }
    }

    /// Number of running requests.
    pub fn len(&self) -> usize {
        self.entries.locked().len()
    }

    /// Whether nothing is running.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.token.cancel();
        self.table.entries.locked().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_and_string_ids_meet() {
        let t = InFlight::default();
        let r = t.register(
            "s",
            &crate::protocol::message::id_key(&serde_json::json!(7)),
        );
        assert!(t.cancel(
            "s",
            &crate::protocol::message::id_key(&serde_json::json!("7"))
        ));
        assert!(r.token.is_cancelled());
        drop(r);
        assert!(t.is_empty());
        assert!(!t.cancel("s", "7"));
    }

    #[test]
    fn a_dropped_registration_cancels_its_work() {
        let t = InFlight::default();
        let r = t.register("s", "1");
        let work = r.token.clone();
        assert!(!work.is_cancelled());
        drop(r);
        assert!(
            work.is_cancelled(),
            "work left running after its request was dropped"
        );
    }

    #[test]
    fn a_cancel_that_overtakes_its_request_still_applies() {
        let t = InFlight::default();
        assert!(!t.cancel("s", "9"), "not running yet");
        let r = t.register("s", "9");
        assert!(r.token.is_cancelled());
        drop(r);
        let again = t.register("s", "9");
        assert!(!again.token.is_cancelled(), "an early cancel applies once");
        let other = t.register("other-session", "10");
        assert!(!other.token.is_cancelled());
    }
}
