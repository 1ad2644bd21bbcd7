//! Token counting with OpenAI's `o200k_base` encoding (the figures reported as `tokens_*`).
//!
//! Owns the one process-wide encoder and the counting function. It must never decide what to
//! prune, never build an encoder per call, and never treat special-token text (`<|endoftext|>`) as
//! anything but ordinary text: counting is infallible for every input.
//!
//! The `tiktoken` crate counts without building the token vector (a hand-written pre-tokenizer
//! for ASCII and CJK, a memo of whole pieces); `tests/token_counts.rs` proves its counts equal
//! `tiktoken-rs` (the reference port) on code, logs, CJK, emoji, replacement characters and
//! special-token lookalikes.

use std::sync::LazyLock;

/// The `o200k_base` encoder, built once on first use (it unpacks ~200k ranks, tens of ms).
static O200K: LazyLock<&'static tiktoken::CoreBpe> = LazyLock::new(|| {
    tiktoken::get_encoding("o200k_base").expect("the o200k_base vocabulary is compiled in")
});

/// Number of `o200k_base` tokens in `text`, encoding special-token lookalikes as plain text.
///
/// Linear in the input; allocation-free; suitable for MiB-sized outputs.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    O200K.count(text)
}

/// Builds the encoder now (server start-up), so the first tool call does not pay for it.
pub fn warm_up() {
    let _ = count("warm up");
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn empty_text_has_no_tokens() {
        assert_eq!(count(""), 0);
    }

    #[test]
    fn counts_known_strings() {
        // "hello" + " world" in every OpenAI encoding; the second value is a regression pin.
        assert_eq!(count("hello world"), 2);
        assert_eq!(count("fn main() {}\n"), 4);
    }

    #[test]
    fn special_token_text_is_ordinary() {
        assert!(count("<|endoftext|>") > 1);
    }

    #[test]
    fn concatenation_is_roughly_additive() {
        let a = "pub fn parse_header(input: &str) -> Result<Header, Error> {\n";
        let whole = count(&a.repeat(100));
        assert!((whole as i64 - 100 * count(a) as i64).abs() <= 100);
    }
}
