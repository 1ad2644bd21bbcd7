//! Request bodies and content negotiation: [`read_json_body`] checks `Content-Type` and reads a
//! body within `--max-body-bytes` and `--body-timeout-ms`, holding a [`BodyShare`] of the
//! server-wide bound on body bytes being read ([`body_bytes_in_flight`]); [`accepts`] says what an
//! `Accept` header allows. Owns a body's bytes until they are handed over whole; a refusal is a
//! reply in the contract's shape (400, 408, 413, 415, 503). It never parses a body or decides
//! what a request means.

use super::{Ctx, error};
use crate::contract::types::HttpErrorBodyErrorCode as Code;
use bytes::{Buf, Bytes};
use futures_util::{Stream, StreamExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use warp::http::{HeaderMap, HeaderValue, StatusCode, header};

/// How many bytes of request bodies the server reads at once, all connections together: two
/// bodies of the largest allowed size, and at least 64 MiB. Past it a request gets 503 with
/// `Retry-After` instead of a buffer (60 clients each holding back the last byte of a 16 MiB
/// body made the server hold ~1 GB until their body timeouts).
pub(super) fn body_bytes_in_flight(max_body_bytes: usize) -> usize {
    (2 * max_body_bytes).max(64 << 20)
}

/// A share of [`Ctx::body_bytes`] held by one body being read, given back when dropped.
struct BodyShare<'a> {
    /// The counter the share is taken from.
    total: &'a AtomicUsize,
    /// Bytes this body holds.
    held: usize,
}

impl BodyShare<'_> {
    /// Grows the share to `bytes` if the server's bound allows it.
    fn grow_to(&mut self, bytes: usize, bound: usize) -> bool {
        if bytes <= self.held {
            return true;
        }
        let more = bytes - self.held;
        if self.total.fetch_add(more, Ordering::AcqRel) + more > bound {
            self.total.fetch_sub(more, Ordering::AcqRel);
            return false;
        }
        self.held = bytes;
        true
    }
}

impl Drop for BodyShare<'_> {
    fn drop(&mut self) {
        self.total.fetch_sub(self.held, Ordering::AcqRel);
    }
}

/// Checks Content-Type and reads the body under the configured limit (415, 413).
pub(super) async fn read_json_body(
    ctx: &Ctx,
    headers: &HeaderMap,
    mut body: impl Stream<Item = Result<impl Buf, warp::Error>> + Unpin,
) -> Result<Bytes, warp::reply::Response> {
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let essence = ctype
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence != "application/json" && !essence.ends_with("+json") {
        return Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::UnsupportedMediaType,
            format!("expected Content-Type: application/json, got {ctype:?}"),
        ));
    }
    let limit = ctx.server.app.config.max_body_bytes;
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::PayloadTooLarge,
            format!("request body exceeds {limit} bytes (--max-body-bytes)"),
        )
    };
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok())
        && len > limit as u64
    {
        return Err(too_large());
    }
    // Sized once from Content-Length (already checked against the limit): growing by doubling
    // would hold up to three times the body while copying.
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(0);
    let bound = body_bytes_in_flight(limit);
    let busy = || {
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            Code::Unavailable,
            format!(
                "the server is reading {} MiB of request bodies already; retry",
                bound >> 20
            ),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let mut share = BodyShare {
        total: &ctx.body_bytes,
        held: 0,
    };
    if !share.grow_to(declared.min(limit), bound) {
        return Err(busy());
    }
    let mut buf = Vec::with_capacity(declared.min(limit));
    let read = async {
        while let Some(chunk) = body.next().await {
            let mut chunk = chunk.map_err(|e| {
                error(
                    StatusCode::BAD_REQUEST,
                    Code::BadRequest,
                    format!("cannot read body: {e}"),
                )
            })?;
            if buf.len() + chunk.remaining() > limit {
                return Err(too_large());
            }
            if !share.grow_to(buf.len() + chunk.remaining(), bound) {
                return Err(busy());
            }
            while chunk.has_remaining() {
                let c = chunk.chunk();
                buf.extend_from_slice(c);
                let n = c.len();
                chunk.advance(n);
            }
        }
        Ok(())
    };
    // A body that stalls holds its buffer and its connection: it gets `--body-timeout-ms`.
    let deadline = ctx.server.app.config.body_timeout;
    match tokio::time::timeout(deadline, read).await {
        Ok(Ok(())) => Ok(Bytes::from(buf)),
        Ok(Err(resp)) => Err(resp),
        Err(_) => {
            let mut r = error(
                StatusCode::REQUEST_TIMEOUT,
                Code::BadRequest,
                format!(
                    "the request body did not arrive within {} ms (--body-timeout-ms)",
                    deadline.as_millis()
                ),
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(r)
        }
    }
}

/// Whether the request's `Accept` takes `mime` (lowercase): no `Accept` takes JSON only; every
/// `Accept` line counts (a client may send `application/json` and `text/event-stream` on two), media
/// ranges compare in any case, and the most specific range naming `mime` decides (`mime` itself,
/// then `type/*`, then `*/*`; RFC 9110, 12.5.1): a `q=0` there refuses it whatever a broader range
/// allows, and a broader `q=0` does not refuse what a narrower range takes.
pub(super) fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    let ranges: Vec<(String, f32)> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|a| a.split(','))
        .filter_map(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|param| param.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .map_or(1.0, |(_, v)| v.trim().parse::<f32>().unwrap_or(1.0));
            (!media.is_empty()).then_some((media, q))
        })
        .collect();
    if ranges.is_empty() {
        return mime == "application/json";
    }
    let any_subtype = format!("{}/*", mime.split('/').next().unwrap_or(""));
    let specificity = |m: &str| {
        if m == mime {
            3
        } else if m == any_subtype {
            2
        } else if m == "*/*" {
            1
        } else {
            0
        }
    };
    let Some(most) = ranges.iter().map(|(m, _)| specificity(m)).max() else {
        return false;
    };
    most > 0
        && ranges
            .iter()
            .filter(|(m, _)| specificity(m) == most)
            .any(|(_, q)| *q > 0.0)
}

#[cfg(test)]
mod tests {
    use super::accepts;
    use warp::http::{HeaderMap, HeaderValue, header};

    fn accept(lines: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for l in lines {
            h.append(header::ACCEPT, HeaderValue::from_str(l).unwrap());
        }
        h
    }

    const JSON: &str = "application/json";
    const SSE: &str = "text/event-stream";

    #[test]
    fn no_accept_takes_json_only() {
        let h = accept(&[]);
        assert!(accepts(&h, JSON));
        assert!(!accepts(&h, SSE));
    }

    #[test]
    fn every_accept_line_counts() {
        let h = accept(&[JSON, SSE]);
        assert!(accepts(&h, JSON));
        assert!(accepts(&h, SSE));
        let h = accept(&["application/json, text/event-stream"]);
        assert!(accepts(&h, JSON) && accepts(&h, SSE));
    }

    #[test]
    fn media_ranges_compare_in_any_case() {
        let h = accept(&["Application/JSON", "Text/Event-Stream; charset=utf-8"]);
        assert!(accepts(&h, JSON));
        assert!(accepts(&h, SSE));
        assert!(accepts(&accept(&["TEXT/*"]), SSE));
    }

    #[test]
    fn q_zero_refuses_even_beside_a_wildcard() {
        let h = accept(&["application/json;q=0, */*"]);
        assert!(!accepts(&h, JSON));
        assert!(accepts(&h, SSE));
        let h = accept(&["text/event-stream; Q=0.0", "application/json;q=0.5"]);
        assert!(!accepts(&h, SSE));
        assert!(accepts(&h, JSON));
        assert!(!accepts(&accept(&["*/*;q=0"]), JSON));
    }

    #[test]
    fn the_most_specific_range_decides() {
        // A refused type family is refused beside a wildcard...
        let h = accept(&["text/*;q=0, */*"]);
        assert!(!accepts(&h, SSE));
        assert!(accepts(&h, JSON));
        assert!(!accepts(&accept(&["application/*;q=0, */*"]), JSON));
        // ...and a broader refusal does not refuse what a narrower range takes.
        let h = accept(&["application/json", "application/*;q=0", "*/*;q=0"]);
        assert!(accepts(&h, JSON));
        assert!(!accepts(&h, SSE));
        assert!(accepts(&accept(&["text/*;q=0.5"]), SSE));
        assert!(!accepts(&accept(&["image/png"]), JSON));
    }
}
