//! Process-wide counters for `GET /metrics` (Prometheus text exposition format 0.0.4): calls,
//! errors and a latency histogram per tool, tokens raw/read/saved, pruner fallbacks; the store's
//! gauges are read from it when scraped. Recording is a few relaxed atomic adds on fixed arrays
//! (no lock, no allocation); must never hold anything per client, session or id.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// The tools counted (a closed set; anything else counts as `other`).
pub const TOOLS: [&str; 7] = [
    "read",
    "bash",
    "grep",
    "prune_text",
    "recover_text",
    "health",
    "other",
];
/// Upper bounds of the latency buckets, in seconds (`+Inf` follows).
pub const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Counters of one tool.
struct Tool {
    /// Calls answered.
    calls: AtomicU64,
    /// Calls that ended in an error.
    errors: AtomicU64,
    /// Calls per bucket (not cumulative; the last is `+Inf`).
    buckets: [AtomicU64; BUCKETS.len() + 1],
    /// Total latency in microseconds.
    micros: AtomicU64,
}

impl Tool {
    const fn new() -> Tool {
        Tool {
            calls: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            buckets: [const { AtomicU64::new(0) }; BUCKETS.len() + 1],
            micros: AtomicU64::new(0),
        }
    }
}

static TOOL: [Tool; TOOLS.len()] = [const { Tool::new() }; TOOLS.len()];
static TOKENS_RAW: AtomicU64 = AtomicU64::new(0);
static TOKENS_READ: AtomicU64 = AtomicU64::new(0);
static FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// What one call did, for [`record`].
pub struct Call<'a> {
    /// Tool name (one of [`TOOLS`], else counted as `other`).
    pub tool: &'a str,
    /// Whether it ended in an error (a protocol error or an `isError` result).
    pub error: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// o200k tokens of the raw output (as read when nothing was pruned).
    pub tokens_raw: u64,
    /// o200k tokens the model read.
    pub tokens_read: u64,
    /// Whether pruning failed and fell back to the raw output.
    pub fallback: bool,
}

/// Counts one call.
pub fn record(c: Call<'_>) {
    let i = TOOLS
        .iter()
        .position(|t| *t == c.tool)
        .unwrap_or(TOOLS.len() - 1);
    let t = &TOOL[i];
    t.calls.fetch_add(1, Relaxed);
    if c.error {
        t.errors.fetch_add(1, Relaxed);
    }
    let secs = c.elapsed.as_secs_f64();
    let b = BUCKETS
        .iter()
        .position(|&le| secs <= le)
        .unwrap_or(BUCKETS.len());
    t.buckets[b].fetch_add(1, Relaxed);
    t.micros.fetch_add(c.elapsed.as_micros() as u64, Relaxed);
    TOKENS_RAW.fetch_add(c.tokens_raw, Relaxed);
    TOKENS_READ.fetch_add(c.tokens_read, Relaxed);
    if c.fallback {
        FALLBACKS.fetch_add(1, Relaxed);
    }
}

/// The store's figures at scrape time.
pub struct StoreFigures {
    /// `memory` or `redis`.
    pub backend: &'static str,
    /// Live entries (for a shared store: the whole fleet's).
    pub entries: usize,
    /// Bytes counted against the cap.
    pub bytes: usize,
    /// Entries this process evicted.
    pub evictions: u64,
    /// Outputs this process could not store (too large, or the shared store unreachable).
    pub refused: u64,
    /// A shared store only: calls answered from this replica's near copies, and their bytes.
    pub near: Option<(u64, usize)>,
}

/// Writes one metric family: its HELP and TYPE lines, then one sample per `(labels, value)`
/// (`labels` is what goes between the braces, empty for a sample without any).
fn family(
    out: &mut String,
    name: &str,
    kind: &str,
    text: &str,
    samples: impl IntoIterator<Item = (String, u64)>,
) {
    let _ = writeln!(out, "# HELP {name} {text}\n# TYPE {name} {kind}");
    for (labels, value) in samples {
        if labels.is_empty() {
            let _ = writeln!(out, "{name} {value}");
        } else {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    }
}

/// One sample a tool, labelled with its name, of what `count` reads from its counters.
fn per_tool(count: fn(&Tool) -> u64) -> impl Iterator<Item = (String, u64)> {
    TOOLS
        .iter()
        .zip(&TOOL)
        .map(move |(name, t)| (format!("tool=\"{name}\""), count(t)))
}

/// The latency histogram: cumulative buckets, sum and count, by tool.
fn durations(out: &mut String) {
    let name = "mcp_pruner_tool_duration_seconds";
    family(out, name, "histogram", "Tool call latency, by tool.", []);
    for (tool, t) in TOOLS.iter().zip(&TOOL) {
        let mut cumulative = 0;
        for (i, b) in t.buckets.iter().enumerate() {
            cumulative += b.load(Relaxed);
            let le = BUCKETS.get(i).map_or("+Inf".to_string(), |v| v.to_string());
            let _ = writeln!(
                out,
                "{name}_bucket{{tool=\"{tool}\",le=\"{le}\"}} {cumulative}"
            );
        }
        let sum = t.micros.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum{{tool=\"{tool}\"}} {sum}");
        let _ = writeln!(out, "{name}_count{{tool=\"{tool}\"}} {cumulative}");
    }
}

/// The exposition text: every counter of this process, and the store's figures.
pub fn render(store: &StoreFigures) -> String {
    let mut out = String::with_capacity(8 * 1024);
    family(
        &mut out,
        "mcp_pruner_tool_calls_total",
        "counter",
        "Tool calls answered, by tool.",
        per_tool(|t| t.calls.load(Relaxed)),
    );
    family(
        &mut out,
        "mcp_pruner_tool_errors_total",
        "counter",
        "Tool calls that ended in an error (protocol error or isError result), by tool.",
        per_tool(|t| t.errors.load(Relaxed)),
    );
    durations(&mut out);
    let (raw, read) = (TOKENS_RAW.load(Relaxed), TOKENS_READ.load(Relaxed));
    family(
        &mut out,
        "mcp_pruner_tokens_total",
        "counter",
        "o200k tokens of tool outputs: raw (before pruning), read (what the model read), saved (raw - read).",
        [
            ("raw", raw),
            ("read", read),
            ("saved", raw.saturating_sub(read)),
        ]
        .map(|(kind, n)| (format!("kind=\"{kind}\""), n)),
    );
    family(
        &mut out,
        "mcp_pruner_pruner_fallbacks_total",
        "counter",
        "Outputs returned raw because pruning failed (pruner error, timeout, or the output could not be stored).",
        [(String::new(), FALLBACKS.load(Relaxed))],
    );
    let mut gauges = vec![
        (
            "mcp_pruner_store_entries",
            "gauge",
            "Live recovery store entries (a shared store: the whole fleet's).",
            store.entries as u64,
        ),
        (
            "mcp_pruner_store_bytes",
            "gauge",
            "Bytes counted against the recovery store's cap.",
            store.bytes as u64,
        ),
        (
            "mcp_pruner_store_evictions_total",
            "counter",
            "Entries this process evicted to keep the store within its caps.",
            store.evictions,
        ),
        (
            "mcp_pruner_store_refused_total",
            "counter",
            "Outputs this process could not store (larger than the cap, or the shared store unreachable).",
            store.refused,
        ),
    ];
    if let Some((hits, bytes)) = store.near {
        gauges.push((
            "mcp_pruner_store_near_hits_total",
            "counter",
            "Re-issues and pages this replica answered from its own copy of a shared text (no round trip).",
            hits,
        ));
        gauges.push((
            "mcp_pruner_store_near_bytes",
            "gauge",
            "Bytes of the shared texts this replica keeps copies of.",
            bytes as u64,
        ));
    }
    let backend = format!("backend=\"{}\"", store.backend);
    for (name, kind, text, value) in gauges {
        family(&mut out, name, kind, text, [(backend.clone(), value)]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative_and_counts_add_up() {
        for ms in [0, 3, 30, 30_000] {
            record(Call {
                tool: "recover_text",
                error: ms == 3,
                elapsed: Duration::from_millis(ms),
                tokens_raw: 10,
                tokens_read: 4,
                fallback: false,
            });
        }
        let text = render(&StoreFigures {
            backend: "memory",
            entries: 1,
            bytes: 2,
            evictions: 3,
            refused: 0,
            near: None,
        });
        let line = |prefix: &str| -> u64 {
            text.lines()
                .find(|l| l.starts_with(prefix))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{prefix} in\n{text}"))
        };
        // Other tests of this process may count calls too: at least ours.
        let count = line("mcp_pruner_tool_duration_seconds_count{tool=\"recover_text\"}");
        assert!(count >= 4);
        assert_eq!(
            line("mcp_pruner_tool_duration_seconds_bucket{tool=\"recover_text\",le=\"+Inf\"}"),
            count
        );
        assert!(
            line("mcp_pruner_tool_duration_seconds_bucket{tool=\"recover_text\",le=\"0.005\"}")
                >= 2
        );
        assert!(line("mcp_pruner_tool_errors_total{tool=\"recover_text\"}") >= 1);
        assert_eq!(
            line("mcp_pruner_store_evictions_total{backend=\"memory\"}"),
            3
        );
        assert!(text.contains("# TYPE mcp_pruner_tool_duration_seconds histogram"));
    }
}
