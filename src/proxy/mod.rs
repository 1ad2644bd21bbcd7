//! `mcp-pruner proxy`: budgets, pruning and recovery in front of any MCP server's tools. The
//! upstream is a command (stdio) or a Streamable HTTP URL ([`upstream`], [`link`]); its tools are
//! listed with the two extra arguments ([`schema`]); their results go through the same pipeline
//! as `read`, `bash` and `grep` ([`shape`], [`crate::tools::result`]); resources and prompts pass
//! through, resource texts budgeted. The engine, store and ledger are the built-in tools', never
//! copied. Owns what is forwarded and how it comes back; never parses or routes downstream
//! messages itself (that is [`crate::rpc`]) and never decides what a line is worth.

pub mod link;
pub mod options;
pub mod records;
pub mod schema;
pub mod shape;
pub mod upstream;

use crate::sync::Unpoisoned;
use crate::tools::ToolCtx;
use crate::tools::result::Pipeline;
use options::ProxyOptions;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use upstream::{Upstream, UpstreamError};

/// Why a proxied request failed: an error of ours (bad arguments), or the upstream's, as it is.
#[derive(Debug)]
pub enum ProxyError {
    /// Ours, in the contract's shape.
    Ours(crate::contract::types::RpcError),
    /// The upstream's error object, untouched.
    Upstream(Value),
}

impl ProxyError {
    /// The JSON-RPC `error` member.
    pub fn into_value(self) -> Value {
        match self {
            ProxyError::Ours(e) => serde_json::to_value(e).expect("errors serialize"),
            ProxyError::Upstream(v) => v,
        }
    }
}

/// A proxy in front of one upstream.
pub struct Proxy {
    /// The upstream connection.
    pub upstream: Arc<Upstream>,
    /// Which of the two extra arguments each upstream tool owns, from the listings since the
    /// upstream's tools last changed (the generation they were listed in, then the tools).
    owned: Mutex<(u64, HashMap<String, schema::Owned>)>,
    /// Ledger names (`UPSTREAM/TOOL`), interned once each.
    names: Mutex<HashMap<String, &'static str>>,
}

/// Distinct ledger names kept; more tools share one name.
const MAX_NAMES: usize = 4096;

/// Pages of `tools/list` read at most to learn one tool's arguments (an upstream whose cursor
/// never ends is not listed forever).
const MAX_LIST_PAGES: usize = 100;

impl Proxy {
    /// Starts the upstream and completes its handshake.
    pub async fn start(
        opts: ProxyOptions,
        grace: std::time::Duration,
    ) -> Result<Arc<Proxy>, String> {
        Ok(Arc::new(Proxy {
            upstream: Upstream::start(opts, grace).await?,
            owned: Mutex::new((0, HashMap::new())),
            names: Mutex::new(HashMap::new()),
        }))
    }

    /// The options it runs with.
    pub fn opts(&self) -> &ProxyOptions {
        &self.upstream.opts
    }

    /// Capabilities offered downstream: tools and logging always, the upstream's resources,
    /// prompts and completions as it declares them.
    pub fn capabilities(&self) -> Value {
        let up = self.upstream.init();
        let caps = &up["capabilities"];
        let mut out = json!({
            "tools": { "listChanged": caps["tools"]["listChanged"].as_bool().unwrap_or(false) },
            "logging": {},
        });
        for key in ["resources", "prompts", "completions"] {
            if caps.get(key).is_some_and(Value::is_object) {
                out[key] = caps[key].clone();
            }
        }
        out
    }

    /// The upstream's instructions, if any.
    pub fn instructions(&self) -> Option<String> {
        self.upstream.init()["instructions"]
            .as_str()
            .map(str::to_string)
    }

    /// A notification for the upstream (list changes of roots, for instance).
    pub async fn notify(&self, method: &str, params: Value) {
        self.upstream.notify(method, params).await;
    }

    /// `tools/list`: the upstream's page, every tool extended; `extra` (the built-in
    /// `recover_text`) after the last page.
    pub async fn tools_list(&self, params: Value, extra: Vec<Value>) -> Result<Value, ProxyError> {
        let never = CancellationToken::new();
        let generation = self.upstream.tools_generation.load(Ordering::Relaxed);
        let mut page = self
            .upstream
            .request("tools/list", params, &never, None, None)
            .await
            .map_err(|e| self.error(e))?;
        let prefix = self.opts().prefix.clone();
        let mut listed: Vec<Value> = Vec::new();
        {
            let mut owned = self.owned.locked();
            // A newer generation starts afresh; a listing that began before the latest change
            // teaches nothing (the generation only grows).
            if generation > owned.0 {
                *owned = (generation, HashMap::new());
            }
            let current = generation == owned.0;
            for t in page["tools"].as_array().into_iter().flatten() {
                if let Some(name) = t["name"].as_str().filter(|_| current) {
                    owned
                        .1
                        .insert(name.to_string(), schema::owned(&t["inputSchema"]));
                }
                listed.push(schema::extend(t, &prefix));
            }
        }
        if page.get("nextCursor").is_none_or(Value::is_null) {
            listed.extend(extra);
        }
        page["tools"] = Value::Array(listed);
        Ok(page)
    }

    /// Whether `name` (as listed downstream) is one of the upstream's tools; its upstream name.
    pub fn upstream_tool<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.opts().prefix.as_str())
    }

    /// The ledger name of an upstream tool.
    fn ledger_name(&self, tool: &str) -> &'static str {
        let mut names = self.names.locked();
        if let Some(n) = names.get(tool) {
            return n;
        }
        if names.len() >= MAX_NAMES {
            return "proxied";
        }
        let leaked: &'static str =
            Box::leak(format!("{}/{tool}", self.opts().name).into_boxed_str());
        names.insert(tool.to_string(), leaked);
        leaked
    }

    /// Which extra arguments `tool` owns. Not known yet (or the upstream's tools changed since
    /// it was listed): the tools are listed, page after page, until it is found.
    async fn owned_by(&self, tool: &str) -> schema::Owned {
        let known = || {
            let generation = self.upstream.tools_generation.load(Ordering::Relaxed);
            let owned = self.owned.locked();
            (owned.0 == generation)
                .then(|| owned.1.get(tool).copied())
                .flatten()
        };
        if let Some(o) = known() {
            return o;
        }
        let mut params = json!({});
        for _ in 0..MAX_LIST_PAGES {
            let Ok(page) = self.tools_list(params, Vec::new()).await else {
                break;
            };
            if let Some(o) = known() {
                return o;
            }
            match page.get("nextCursor").filter(|c| !c.is_null()) {
                Some(c) => params = json!({ "cursor": c }),
                None => break,
            }
        }
        // Not listed: it owns neither, and is not looked for again until the tools change.
        let generation = self.upstream.tools_generation.load(Ordering::Relaxed);
        let mut owned = self.owned.locked();
        if owned.0 == generation {
            owned.1.entry(tool.to_string()).or_default();
        }
        schema::Owned::default()
    }

    /// `tools/call` of upstream tool `tool`: the extra arguments taken out, the call forwarded
    /// (with progress routed back and cancellation forwarded), its result through the pipeline,
    /// one ledger row.
    pub async fn call_tool(
        &self,
        ctx: &ToolCtx,
        tool: &str,
        mut params: Value,
        progress_to: Option<(Value, UnboundedSender<Value>)>,
    ) -> Result<Value, ProxyError> {
        let started = std::time::Instant::now();
        let ledger = self.ledger_name(tool);
        let owned = self.owned_by(tool).await;
        let mut arguments = match params.get_mut("arguments").map(Value::take) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(ProxyError::Ours(crate::protocol::message::invalid_field(
                    "/arguments",
                    "must be an object",
                )));
            }
        };
        let (question, max_bytes) = schema::split(&mut arguments, owned)
            .map_err(|e| ProxyError::Ours(crate::protocol::message::invalid_params(e)))?;
        params["name"] = Value::String(tool.to_string());
        params["arguments"] = Value::Object(arguments);
        let p = Pipeline::new(ctx, ledger, max_bytes);
        crate::events::exec_start(&ctx.request_id, ledger);
        let answer = self
            .upstream
            .request(
                "tools/call",
                params,
                &ctx.cancel,
                progress_to,
                Some(ctx.notify.clone()),
            )
            .await;
        // A call that got no result is one ledger row, an error with nothing pruned.
        let failed = || {
            crate::tools::ledger_proxied(
                ctx,
                ledger,
                &crate::prune::not_attempted(
                    crate::contract::types::PruningMetadataReason::NoFocusQuestion,
                    0,
                ),
                0,
                true,
                started,
            )
        };
        let result = match answer {
            Ok(r) => r,
            Err(UpstreamError::Rpc(e)) => {
                failed();
                return Err(ProxyError::Upstream(e));
            }
            Err(e) => {
                let text = e.describe(&self.opts().name);
                let code = match e {
                    UpstreamError::Cancelled => "CANCELLED",
                    UpstreamError::Timeout(_) => "TOOL_TIMEOUT",
                    _ => "INTERNAL",
                };
                failed();
                return Ok(json!({
                    "content": [{ "type": "text", "text": format!("error {code}: {text}") }],
                    "isError": true,
                }));
            }
        };
        let count = ctx.app.ledger.enabled();
        let shaped = shape::tool_result(&p, result, question.as_deref(), tool, count).await;
        let is_error = shaped.result.get("isError") == Some(&Value::Bool(true));
        crate::tools::ledger_proxied(
            ctx,
            ledger,
            &shaped.pruning,
            shaped.tokens_read,
            is_error,
            started,
        );
        Ok(p.respond_value(shaped.result, shaped.pruning.applied, shaped.text_bytes))
    }

    /// Any other request the upstream serves (resources, prompts, completions), forwarded as it
    /// is; a `resources/read` result has its texts budgeted.
    pub async fn forward(
        &self,
        ctx: &ToolCtx,
        method: &str,
        params: Value,
        progress_to: Option<(Value, UnboundedSender<Value>)>,
    ) -> Result<Value, ProxyError> {
        let label = params["uri"].as_str().unwrap_or(method).to_string();
        let result = self
            .upstream
            .request(
                method,
                params,
                &ctx.cancel,
                progress_to,
                Some(ctx.notify.clone()),
            )
            .await
            .map_err(|e| self.error(e))?;
        if method != "resources/read" {
            return Ok(result);
        }
        let p = Pipeline::new(ctx, "resources/read", None);
        Ok(shape::resource_result(&p, result, &label, false)
            .await
            .result)
    }

    /// An upstream failure as a JSON-RPC error: the upstream's own as it is, ours with a message
    /// saying what happened (-32603; -32800 for a cancelled request).
    fn error(&self, e: UpstreamError) -> ProxyError {
        match e {
            UpstreamError::Rpc(v) => ProxyError::Upstream(v),
            other => {
                let code = if matches!(other, UpstreamError::Cancelled) {
                    -32800
                } else {
                    -32603
                };
                ProxyError::Upstream(
                    json!({ "code": code, "message": other.describe(&self.opts().name) }),
                )
            }
        }
    }

    /// Stops the upstream.
    pub async fn shutdown(&self) {
        self.upstream.shutdown().await;
    }
}
