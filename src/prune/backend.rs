//! Remote pruning backends: seed 000's outbound contract (`http`) and the SWE-Pruner service's own
//! API (`swe-pruner`). Each returns the pruned text it got back, or a [`Failure`] classified as
//! seed 000's `timeout` / `http_error` / `invalid_response`. Responses are validated against
//! `schemas/http/*.json`. Never falls back by itself: the pipeline decides that.

use crate::contract::contract;
use crate::contract::types::{
    PrunerErrorCode, PrunerRequest, PrunerResponse, SwePrunerRequest, SwePrunerResponse,
};
use std::time::Duration;

/// Why a backend call failed (seed 000 `pruning.error`).
#[derive(Debug, Clone)]
pub struct Failure {
    /// `timeout`, `http_error` or `invalid_response`.
    pub code: PrunerErrorCode,
    /// What happened, for the client and the log.
    pub message: String,
}

impl Failure {
    fn new(code: PrunerErrorCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// One HTTP client for all backend calls (connection reuse).
pub fn client() -> reqwest::Client {
    crate::http_client::builder()
        .no_proxy()
        .build()
        .expect("reqwest client")
}

async fn post(
    client: &reqwest::Client,
    url: &url::Url,
    body: &serde_json::Value,
    timeout: Duration,
) -> Result<serde_json::Value, Failure> {
    // A transport error, named for the step it cut short: a timeout, or any other failure.
    let failed = |e: reqwest::Error, timed_out: &str, failed: &str| {
        if e.is_timeout() {
            Failure::new(
                PrunerErrorCode::Timeout,
                format!("{timed_out} within {} ms", timeout.as_millis()),
            )
        } else {
            Failure::new(PrunerErrorCode::HttpError, format!("{failed}: {e}"))
        }
    };
    let send = client.post(url.clone()).json(body).timeout(timeout).send();
    let resp = send
        .await
        .map_err(|e| failed(e, "no answer", "request failed"))?;
    let status = resp.status();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| failed(e, "body not received", "reading the body failed"))?;
    if !status.is_success() {
        let snippet = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
        return Err(Failure::new(
            PrunerErrorCode::HttpError,
            format!("HTTP {status}: {snippet}"),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        Failure::new(
            PrunerErrorCode::InvalidResponse,
            format!("body is not JSON: {e}"),
        )
    })
}

/// Seed 000: `POST endpoint {request_id, tool, focus_question, input, input_bytes}` -> `{output, output_bytes}`.
pub async fn call_http(
    client: &reqwest::Client,
    endpoint: &url::Url,
    timeout: Duration,
    req: PrunerRequest,
) -> Result<String, Failure> {
    let body = serde_json::to_value(&req).expect("serializes");
    let value = post(client, endpoint, &body, timeout).await?;
    if let Err(errors) = contract().validate("PrunerResponse", &value) {
        let first = errors
            .first()
            .map(|e| format!("{}: {}", e.field, e.message))
            .unwrap_or_default();
        return Err(Failure::new(
            PrunerErrorCode::InvalidResponse,
            format!("response does not match the pruner contract ({first})"),
        ));
    }
    let resp: PrunerResponse = serde_json::from_value(value)
        .map_err(|e| Failure::new(PrunerErrorCode::InvalidResponse, e.to_string()))?;
    Ok(resp.output)
}

/// SWE-Pruner: `POST endpoint {query, code, threshold}` -> `{pruned_code, kept_frags, ...}`.
pub async fn call_swe(
    client: &reqwest::Client,
    endpoint: &url::Url,
    timeout: Duration,
    query: &str,
    code: &str,
    threshold: f64,
) -> Result<SwePrunerResponse, Failure> {
    let req = SwePrunerRequest {
        query: query.into(),
        code: code.into(),
        threshold,
    };
    let value = post(
        client,
        endpoint,
        &serde_json::to_value(&req).expect("serializes"),
        timeout,
    )
    .await?;
    if let Err(errors) = contract().validate("SwePrunerResponse", &value) {
        let first = errors
            .first()
            .map(|e| format!("{}: {}", e.field, e.message))
            .unwrap_or_default();
        return Err(Failure::new(
            PrunerErrorCode::InvalidResponse,
            format!("response does not match the SWE-Pruner API ({first})"),
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| Failure::new(PrunerErrorCode::InvalidResponse, e.to_string()))
}

/// The keep mask of a SWE-Pruner answer. Its `pruned_code` must be input lines in order, with
/// `(filtered N lines)` rows standing for removed gaps. Its `kept_frags` (1-based numbers of the
/// kept lines) adds the blank kept lines `pruned_code` leaves out, but only when it agrees with the
/// text: the service numbers lines with Python's `splitlines`, which also breaks at `\r`, form
/// feeds and other separators, so on such input its numbers point at other lines and only the
/// text can be trusted.
pub fn swe_keep_mask(input: &[&str], resp: &SwePrunerResponse) -> Result<Vec<bool>, Failure> {
    let mut keep = keep_mask(input, &resp.pruned_code)?;
    let n = input.len() as i64;
    let frags = &resp.kept_frags;
    if frags.is_empty() || !frags.iter().all(|&f| (1..=n).contains(&f)) {
        return Ok(keep);
    }
    let mut by_frags = vec![false; input.len()];
    for &f in frags {
        by_frags[(f - 1) as usize] = true;
    }
    let agree = by_frags
        .iter()
        .zip(&keep)
        .zip(input)
        .all(|((&numbered, &shown), line)| !numbered || shown || line.trim().is_empty());
    if agree {
        for (k, f) in keep.iter_mut().zip(by_frags) {
            *k |= f;
        }
    }
    Ok(keep)
}

/// The keep mask a remote pruner's text implies: its lines must be the input's lines, in order
/// (markers, elision rows such as `...` or SWE-Pruner's `(filtered N lines)`, and line-number
/// prefixes aside). Anything else is an invalid response:
/// a backend may remove lines, never rewrite or reorder them (seed 001 invariants).
pub fn keep_mask(input: &[&str], output: &str) -> Result<Vec<bool>, Failure> {
    let mut keep = vec![false; input.len()];
    let mut at = 0usize;
    let mut foreign = 0usize;
    let mut total = 0usize;
    for raw in super::engine::split_lines(output) {
        let line = strip_number_prefix(raw);
        let t = line.trim();
        if t.starts_with('⟦') || is_elision(t) {
            continue;
        }
        total += 1;
        match input[at..]
            .iter()
            .position(|l| *l == line || (!t.is_empty() && l.trim_end() == line.trim_end()))
        {
            Some(off) => {
                keep[at + off] = true;
                at += off + 1;
            }
            None if t.is_empty() => {}
            None => foreign += 1,
        }
    }
    if foreign > 0 {
        return Err(Failure::new(
            PrunerErrorCode::InvalidResponse,
            format!(
                "{foreign} of {total} returned lines are not input lines in order (a pruner may only remove lines)"
            ),
        ));
    }
    Ok(keep)
}

/// A row a pruner writes in place of removed lines: `...`, `…`, a commented ellipsis, or
/// SWE-Pruner's `(filtered N lines)`.
fn is_elision(t: &str) -> bool {
    matches!(t, "..." | "…" | "// ..." | "# ..." | "/* ... */")
        || t.strip_prefix("(filtered ")
            .and_then(|r| r.strip_suffix(" lines)"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `"12│ text"` -> `"text"`; other lines unchanged.
fn strip_number_prefix(line: &str) -> &str {
    match line.split_once("│ ") {
        Some((n, rest)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_mask_accepts_subsequences_only() {
        let input = ["a", "b", "c", "d"];
        assert_eq!(
            keep_mask(&input, "a\n⟦PRUNÉ: x⟧\nc\n").unwrap(),
            [true, false, true, false]
        );
        assert_eq!(
            keep_mask(&input, "2│ b\n4│ d").unwrap(),
            [false, true, false, true]
        );
        assert!(keep_mask(&input, "c\na\n").is_err(), "reordered");
        assert!(keep_mask(&input, "a\nsummary of b\n").is_err(), "rewritten");
    }

    fn swe(pruned_code: &str, kept_frags: Vec<i64>) -> SwePrunerResponse {
        serde_json::from_value(serde_json::json!({
            "pruned_code": pruned_code, "kept_frags": kept_frags,
        }))
        .unwrap()
    }

    #[test]
    fn swe_answers_as_the_real_service_writes_them() {
        let input = ["fn a() {", "    x", "", "    y", "}"];
        // kept_frags decides, blank lines included, whatever pruned_code shows.
        assert_eq!(
            swe_keep_mask(
                &input,
                &swe("fn a() {\n(filtered 3 lines)\n}", vec![1, 3, 5])
            )
            .unwrap(),
            [true, false, true, false, true]
        );
        // kept_frags numbering other lines than the text shows (a lone \r upstream): the text
        // decides.
        assert_eq!(
            swe_keep_mask(
                &input,
                &swe("fn a() {\n(filtered 3 lines)\n}", vec![1, 2, 5])
            )
            .unwrap(),
            [true, false, false, false, true]
        );
        // Without usable kept_frags, the text decides and `(filtered N lines)` rows are gaps.
        assert_eq!(
            swe_keep_mask(&input, &swe("fn a() {\n(filtered 3 lines)\n}", vec![])).unwrap(),
            [true, false, false, false, true]
        );
        assert_eq!(
            swe_keep_mask(&input, &swe("(filtered 1 lines)\n    x\n}", vec![9])).unwrap(),
            [false, true, false, false, true]
        );
        assert!(swe_keep_mask(&input, &swe("(filtered lines)\n}", vec![])).is_err());
    }
}
