//! Progress notifications for one request (`notifications/progress`), coalesced to at most four
//! per second (seed 003 section 9.1), and closed before the terminal response so that none follows
//! it (section 9.2). A request that reports nothing for [`HEARTBEAT`] (a silent command, a long
//! search) gets a `running for N s` message, so a client that asked for progress always sees the
//! call is alive. Owns throttling, heartbeats and the closed flag; other messages are the caller's.

use crate::sync::Unpoisoned;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// Minimum spacing between two progress notifications of one request.
pub const MIN_INTERVAL: Duration = Duration::from_millis(250);

/// Quiet time after which the ticker sends a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

struct State {
    /// Next `progress` value: strictly increasing.
    counter: u64,
    /// When the last notification left.
    last_sent: Option<Instant>,
    /// Latest message not yet sent (coalescing keeps only the newest).
    pending: Option<String>,
    /// Set by [`Progress::close`]: nothing is sent afterwards.
    closed: bool,
    /// When the request started, for heartbeat messages.
    started: Instant,
}

/// Progress reporter of one request; a no-op when the request carried no `progressToken`.
pub struct Progress {
    /// The request's `progressToken`, echoed in each notification.
    token: Option<Value>,
    /// Where notifications go to the client.
    out: Option<UnboundedSender<Value>>,
    /// What was sent and what waits, shared by the request and the heartbeat ticker.
    state: Mutex<State>,
}

impl Progress {
    /// A reporter sending to `out` for `token`; `None` token makes it a no-op.
    pub fn new(token: Option<Value>, out: UnboundedSender<Value>) -> Progress {
        Progress {
            out: token.as_ref().map(|_| out),
            token,
            state: Mutex::new(State {
                counter: 0,
                last_sent: None,
                pending: None,
                closed: false,
                started: Instant::now(),
            }),
        }
    }

    /// A reporter that never sends.
    pub fn disabled() -> Progress {
        Progress {
            token: None,
            out: None,
            state: Mutex::new(State {
                counter: 0,
                last_sent: None,
                pending: None,
                closed: true,
                started: Instant::now(),
            }),
        }
    }

    /// Whether the client asked for progress.
    pub fn enabled(&self) -> bool {
        self.token.is_some()
    }

    /// Reports `message`; sent now if the last notification is older than [`MIN_INTERVAL`], else kept
    /// as pending (replacing an older pending one) until [`Progress::flush_due`] or the next report.
    pub fn report(&self, message: impl Into<String>) {
        if self.token.is_none() {
            return;
        }
        let mut st = self.state.locked();
        if st.closed {
            return;
        }
        st.pending = Some(message.into());
        self.send_if_due(&mut st);
    }

    /// Sends the pending message if the interval allows, or a heartbeat when nothing was sent
    /// for [`HEARTBEAT`]; call it from a ticker.
    pub fn flush_due(&self) {
        if self.token.is_none() {
            return;
        }
        let mut st = self.state.locked();
        let quiet = st.last_sent.unwrap_or(st.started).elapsed() >= HEARTBEAT;
        if st.pending.is_none() && quiet {
            st.pending = Some(format!("running for {} s", st.started.elapsed().as_secs()));
        }
        self.send_if_due(&mut st);
    }

    fn send_if_due(&self, st: &mut State) {
        if st.closed || st.pending.is_none() {
            return;
        }
        if st.last_sent.is_some_and(|t| t.elapsed() < MIN_INTERVAL) {
            return;
        }
        let (Some(token), Some(out)) = (&self.token, &self.out) else {
            return;
        };
        st.counter += 1;
        st.last_sent = Some(Instant::now());
        let message = st.pending.take().unwrap_or_default();
        let _ = out.send(super::message::notification(
            "notifications/progress",
            json!({ "progressToken": token, "progress": st.counter, "message": message }),
        ));
    }

    /// Stops all further notifications; called before the terminal response is queued.
    pub fn close(&self) {
        let mut st = self.state.locked();
        st.closed = true;
        st.pending = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_and_stops_after_close() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let p = Progress::new(Some(json!("t")), tx);
        for i in 0..100 {
            p.report(format!("line {i}"));
        }
        p.close();
        p.report("after close");
        p.flush_due();
        let mut got = Vec::new();
        while let Ok(v) = rx.try_recv() {
            got.push(v);
        }
        assert_eq!(got.len(), 1, "100 quick reports coalesce into one: {got:?}");
        assert_eq!(got[0]["params"]["progress"], 1);
        assert_eq!(got[0]["params"]["message"], "line 0");
    }

    #[test]
    fn a_quiet_request_gets_heartbeats() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let p = Progress::new(Some(json!(7)), tx);
        p.flush_due();
        assert!(rx.try_recv().is_err(), "nothing before the first second");
        std::thread::sleep(HEARTBEAT + Duration::from_millis(50));
        p.flush_due();
        let beat = rx.try_recv().expect("a heartbeat");
        assert!(
            beat["params"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("running for ")),
            "{beat}"
        );
        assert_eq!(beat["params"]["progress"], 1);
        p.flush_due();
        assert!(
            rx.try_recv().is_err(),
            "not again until quiet for another second"
        );
        p.close();
        std::thread::sleep(HEARTBEAT + Duration::from_millis(50));
        p.flush_due();
        assert!(rx.try_recv().is_err(), "none after close");
    }
}
