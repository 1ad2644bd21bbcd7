//! Queries over the ledger: totals of a set of calls, grouped by tool, day or client
//! ([`StatsReport`]). Read-only; rendering (table, HTML) belongs to the `stats` command.

use crate::contract::types::{StatsReport, StatsRow};
use rusqlite::{Connection, params};

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// By tool name.
    Tool,
    /// By UTC day (`YYYY-MM-DD`).
    Day,
    /// By `client_name@client_version`.
    Client,
}

impl By {
    /// The SQL expression of the group key.
    fn key(self) -> &'static str {
        match self {
            By::Tool => "tool",
            By::Day => "strftime('%Y-%m-%d', ts_ms / 1000, 'unixepoch')",
            By::Client => {
                "CASE WHEN client_name = '' THEN 'unknown' ELSE client_name || '@' || client_version END"
            }
        }
    }
}

const SUMS: &str = "COUNT(*), COALESCE(SUM(tokens_raw), 0), COALESCE(SUM(tokens_read), 0),
    COALESCE(SUM(MAX(tokens_raw - tokens_read, 0)), 0), COALESCE(SUM(pruning_applied), 0),
    COALESCE(SUM(pruning_applied AND recovered), 0)";

fn row_from(key: String, r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<StatsRow> {
    let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(at + i)?.max(0) as u64) };
    let (calls, raw, read, saved, pruned, recovered) = (n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, n(5)?);
    Ok(StatsRow {
        key,
        calls,
        tokens_raw: raw,
        tokens_read: read,
        tokens_saved: saved,
        saved_pct: if raw == 0 {
            0.0
        } else {
            (saved as f64 / raw as f64 * 1000.0).round() / 10.0
        },
        pruned_calls: pruned,
        recovered_calls: recovered,
        recovery_rate: if pruned == 0 {
            0.0
        } else {
            (recovered as f64 / pruned as f64 * 10_000.0).round() / 10_000.0
        },
    })
}

/// Totals over rows since `since_ms` (of `root`, when given), labelled `key`.
pub fn totals(
    conn: &Connection,
    since_ms: u64,
    root: Option<&str>,
    key: &str,
) -> rusqlite::Result<StatsRow> {
    conn.query_row(
        &format!("SELECT {SUMS} FROM calls WHERE ts_ms >= ?1 AND (?2 IS NULL OR root = ?2)"),
        params![since_ms as i64, root],
        |r| row_from(key.to_string(), r, 0),
    )
}

/// Totals per group, ordered by tokens saved (tool, client) or by day.
pub fn grouped(
    conn: &Connection,
    since_ms: u64,
    root: Option<&str>,
    by: By,
) -> rusqlite::Result<Vec<StatsRow>> {
    let order = if by == By::Day { "1" } else { "5 DESC, 1" };
    let mut st = conn.prepare(&format!(
        "SELECT {key}, {SUMS} FROM calls WHERE ts_ms >= ?1 AND (?2 IS NULL OR root = ?2)
         GROUP BY 1 ORDER BY {order}",
        key = by.key()
    ))?;
    let rows = st.query_map(params![since_ms as i64, root], |r| {
        row_from(r.get::<_, String>(0)?, r, 1)
    })?;
    rows.collect()
}

/// The whole report.
pub fn report(
    conn: &Connection,
    ledger: &str,
    since_ms: u64,
    root: Option<&str>,
) -> rusqlite::Result<StatsReport> {
    Ok(StatsReport {
        ledger: ledger.to_string(),
        since_ms,
        root: root.unwrap_or("").to_string(),
        total: totals(conn, since_ms, root, "total")?,
        by_tool: grouped(conn, since_ms, root, By::Tool)?,
        by_day: grouped(conn, since_ms, root, By::Day)?,
        by_client: grouped(conn, since_ms, root, By::Client)?,
    })
}
