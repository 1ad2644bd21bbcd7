//! A JSON-RPC batch counted against the bounds of one request: together, its replies may take
//! what one `tools/call` may ([`MAX_BATCH_REPLY_BYTES`], the contract's largest
//! `max_output_bytes`). Each tool call in the batch gets the budget its predecessors left
//! (its `max_output_bytes` lowered to it); once too little is left, the remaining requests are
//! answered with an error instead of being run. Transports run the batch's messages in order and
//! report each reply here; this module never runs anything itself.

use crate::app::App;
use crate::protocol::message;
use serde_json::{Value, json};

/// Bytes all of one batch's replies may take: the largest `max_output_bytes` of one call.
pub const MAX_BATCH_REPLY_BYTES: usize = 10 * 1024 * 1024;

/// The smallest `max_output_bytes` a call accepts (the contract's minimum).
const MIN_CALL_BUDGET: usize = 1024;

/// Tools whose arguments carry `max_output_bytes`.
const BUDGETED_TOOLS: [&str; 5] = ["read", "bash", "grep", "prune_text", "recover_text"];

/// What is left of one batch's reply budget.
pub struct BatchBudget {
    /// Bytes the batch's replies may still take.
    left: usize,
    /// A call's budget when it names none (`--max-output-bytes`).
    default_budget: usize,
    /// The configured prefix of tool names, stripped to recognise a budgeted tool.
    tool_prefix: String,
}

impl BatchBudget {
    /// A new batch's budget.
    pub fn new(app: &App) -> BatchBudget {
        BatchBudget {
            left: MAX_BATCH_REPLY_BYTES,
            default_budget: app.config.max_output_bytes,
            tool_prefix: app.config.tool_prefix.clone(),
        }
    }

    /// The message to run, its tool call's budget lowered to what is left; or, when too little
    /// is left, the error reply that stands for it (`None` for a notification, which runs).
    pub fn admit(&mut self, mut msg: Value) -> Result<Value, Option<Value>> {
        let is_request = msg.get("id").is_some() && msg.get("method").is_some();
        if !is_request {
            return Ok(msg);
        }
        // Room for the reply envelope of even a small reply.
        if self.left < MIN_CALL_BUDGET {
            let id = msg
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .cloned()
                .unwrap_or(Value::Null);
            return Err(Some(message::error_response(
                id,
                message::invalid(&format!(
                    "this batch's replies reached {MAX_BATCH_REPLY_BYTES} bytes, the bound of one request; send this request again, on its own or in another batch"
                )),
            )));
        }
        if msg.get("method").and_then(Value::as_str) == Some("tools/call") {
            let budgeted = msg
                .pointer("/params/name")
                .and_then(Value::as_str)
                .map(|n| n.strip_prefix(self.tool_prefix.as_str()).unwrap_or(n))
                .is_some_and(|n| BUDGETED_TOOLS.contains(&n));
            if let Some(args) = msg
                .pointer_mut("/params/arguments")
                .and_then(Value::as_object_mut)
                .filter(|_| budgeted)
            {
                let asked = args
                    .get("max_output_bytes")
                    .and_then(Value::as_u64)
                    .map(|b| b as usize)
                    .unwrap_or(self.default_budget);
                // A value that is not an integer is left for validation to refuse.
                if args.get("max_output_bytes").is_none_or(|v| v.is_u64()) {
                    let room = self
                        .left
                        .saturating_sub(MIN_CALL_BUDGET / 2)
                        .max(MIN_CALL_BUDGET);
                    if asked > room {
                        args.insert("max_output_bytes".into(), json!(room));
                    }
                }
            }
        }
        Ok(msg)
    }

    /// Counts a reply's serialized bytes against the budget.
    pub fn spent(&mut self, reply: &Value) {
        self.left = self.left.saturating_sub(crate::budget::json_len(reply));
    }
}
