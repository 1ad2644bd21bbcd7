//! Response budgets (seed 002): every tool result, serialized, fits a byte budget; what does not
//! fit is cut at line (or UTF-8) boundaries, marked in the text the model reads, and kept in the
//! store so nothing is lost. Owns the fitting arithmetic and the one-line summaries; never stores
//! or formats tool-specific content itself.

use crate::config::Config;
use serde_json::Value;

pub mod page;

/// Bytes of a tool's budget kept for its own notes around a pruned text (truncation and recovery
/// hints, the bash status line): the pruned text is fitted to the rest.
pub const NOTES_RESERVE: usize = 512;

/// The bytes a pruned text may take within a tool budget of `budget` bytes. With output schemas
/// the budget counts the `structuredContent` JSON, where newlines, quotes and backslashes take two
/// bytes: 85% of the budget leaves room for that escaping on source code.
pub fn for_pruned_text(budget: usize, output_schemas: bool) -> usize {
    let budget = if output_schemas {
        budget / 100 * 85
    } else {
        budget
    };
    budget.saturating_sub(NOTES_RESERVE)
}

/// Longest `summary` (seed 002: one line, at most 100 characters).
pub const SUMMARY_MAX_CHARS: usize = 100;

/// The budget for one call: the per-call `max_output_bytes` if given, else the configured default.
pub fn for_call(config: &Config, per_call: Option<i64>) -> usize {
    per_call
        .map(|b| b.max(0) as usize)
        .unwrap_or(config.max_output_bytes)
}

/// Result size up to which Claude Code shows an MCP result inline without being told (it warns
/// above 10,000 tokens, about 40,000 characters).
pub const CLAUDE_INLINE_CHARS: usize = 40_000;

/// `_meta["anthropic/maxResultSizeChars"]` for our bulky tools: the configured budget, but only
/// when it exceeds what Claude Code shows inline anyway (otherwise the field is noise in the listing).
pub fn inline_limit_chars(config: &Config) -> Option<usize> {
    (config.max_output_bytes > CLAUDE_INLINE_CHARS).then_some(config.max_output_bytes)
}

/// Serialized size of a value in bytes.
pub fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value)
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

/// The largest `n` in `0..=max` for which `fits(n)` holds, assuming `fits` is monotone
/// (true up to some point, false after). Returns 0 when even `fits(0)` is false.
pub fn largest_fitting(max: usize, mut fits: impl FnMut(usize) -> bool) -> usize {
    if fits(max) {
        return max;
    }
    let (mut lo, mut hi) = (0usize, max); // fits(lo) assumed (or lo == 0), !fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    lo
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn clip_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A one-line summary of at most [`SUMMARY_MAX_CHARS`] characters.
pub fn summary(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SUMMARY_MAX_CHARS {
        return line;
    }
    let mut out: String = line.chars().take(SUMMARY_MAX_CHARS - 1).collect();
    out.push('…');
    out
}

/// Human-readable byte count (`812 B`, `10.0 KiB`, `5.2 MiB`).
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0)),
    }
}

/// Longest line shown in a cut output (seed 002: strings at most 500 characters).
pub const MAX_LINE_BYTES: usize = 500;

/// A line (or an echoed argument) longer than [`MAX_LINE_BYTES`], clipped on a UTF-8 boundary with
/// the count of bytes left out (`…[+N bytes]`); `None` when it fits.
pub fn clip_long_line(line: &str) -> Option<String> {
    clip_with_count(line, MAX_LINE_BYTES)
}

/// Longest match line a grep artifact keeps whole: a minified file's multi-megabyte lines must not
/// fill the store (longer ones are kept clipped, with their count).
pub const MAX_STORED_LINE_BYTES: usize = 16 * 1024;

/// `line` clipped to `max` bytes on a UTF-8 boundary plus `…[+N bytes]`; `None` when it fits.
pub fn clip_with_count(line: &str, max: usize) -> Option<String> {
    (line.len() > max).then(|| {
        let c = clip_utf8(line, max);
        format!("{c}…[+{} bytes]", line.len() - c.len())
    })
}

/// Bytes `c` takes inside a JSON string (serde_json's escaping).
pub fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest prefix of `s` (in bytes, on a char boundary) whose serialized cost, with
/// `cost(char)` bytes per character, stays within `room`. Linear; no serialization.
pub fn prefix_within(s: &str, room: usize, cost: impl Fn(char) -> usize) -> usize {
    let mut used = 0usize;
    for (i, c) in s.char_indices() {
        used += cost(c);
        if used > room {
            return i;
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_and_clipping() {
        assert_eq!(largest_fitting(100, |n| n <= 37), 37);
        assert_eq!(largest_fitting(100, |_| true), 100);
        assert_eq!(largest_fitting(100, |_| false), 0);
        assert_eq!(clip_utf8("héllo", 2), "h");
        assert_eq!(clip_utf8("héllo", 3), "hé");
        let s = summary(&"word ".repeat(100));
        assert!(s.chars().count() <= 100 && !s.contains('\n'));
    }
}
