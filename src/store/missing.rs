//! Why an id cannot be found ([`Missing`]) and what the client is told of it
//! ([`Missing::explain`], [`Missing::not_stored`]), and the store's bounded memory of the ids that
//! left it or never entered it ([`remember_gone`]). Owns the reasons and their messages; must never
//! decide why an id left (the store and the shared store do; this only names and remembers it),
//! and never remember more than the last [`GONE_MEMORY`] ids (the oldest is forgotten first).

use super::Inner;

/// Why an id cannot be found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Never issued by this process (or issued before a restart).
    Unknown,
    /// Its TTL ran out.
    Expired,
    /// Evicted to stay within the byte or entry cap.
    Evicted,
    /// Issued by this process and since evicted or expired; which one is no longer remembered
    /// (only the last ids that left are).
    Gone,
    /// Never stored: the output alone was larger than the byte cap.
    TooLarge,
    /// Not in the shared store: it expired, or was never issued.
    Absent,
    /// The shared store lost its data (restarted or flushed) within this id's lifetime.
    Lost,
    /// The shared store could not be reached (to store the output, or to find it).
    Unavailable,
}

impl Missing {
    /// A sentence for the client.
    pub fn explain(self) -> &'static str {
        match self {
            Missing::Unknown => {
                "unknown prune_id: never issued by this server process (ids do not survive a restart)"
            }
            Missing::Expired => {
                "prune_id expired (MCP_PRUNER_PRUNE_ID_TTL_S); re-run the tool call to get the output again"
            }
            Missing::Evicted => {
                "prune_id evicted to keep the recovery store within its byte/entry cap; re-run the tool call"
            }
            Missing::Gone => {
                "prune_id no longer stored (evicted or expired since this server issued it); re-run the tool call"
            }
            Missing::TooLarge => {
                "prune_id never stored: the output was larger than the recovery store's byte cap (--store-max-bytes); raise the cap or narrow the call"
            }
            Missing::Absent => {
                "prune_id not in the shared recovery store: it expired (MCP_PRUNER_PRUNE_ID_TTL_S) or was never issued; re-run the tool call"
            }
            Missing::Lost => {
                "prune_id not in the shared recovery store, which lost its data (restarted or flushed) since ids like it were issued; re-run the tool call"
            }
            Missing::Unavailable => {
                "the shared recovery store (--store) is unreachable, so this prune_id cannot be read now; retry later or re-run the tool call"
            }
        }
    }

    /// Why an output was not stored, for the result that carries its id.
    pub fn not_stored(self, max_bytes: usize) -> String {
        match self {
            Missing::Unavailable => {
                "the recovery store (--store) could not be reached to store it".to_string()
            }
            _ => format!(
                "it is larger than the recovery store's cap (--store-max-bytes {max_bytes})"
            ),
        }
    }
}

pub(super) const GONE_MEMORY: usize = 10_000;

/// Remembers why `id` left (or never entered), for the last [`GONE_MEMORY`] ids.
pub(super) fn remember_gone(inner: &mut Inner, id: &str, why: Missing) {
    inner.gone.insert(id.to_string(), why);
    inner.gone_order.push_back(id.to_string());
    if inner.gone_order.len() > GONE_MEMORY
        && let Some(old) = inner.gone_order.pop_front()
    {
        inner.gone.remove(&old);
    }
}
