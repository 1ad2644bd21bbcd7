//! Token counting with OpenAI's `o200k_base` encoding (the figures reported as `tokens_*`).
//!
//! Owns the one process-wide BPE instance and the counting function. It must never decide what to
//! prune, never allocate a BPE per call, and never treat special-token text (`<|endoftext|>`) as
//! anything but ordinary text: counting is infallible for every input.

use std::sync::LazyLock;
use tiktoken_rs::CoreBPE;

/// The `o200k_base` BPE, built once on first use (building it parses ~200k ranks, tens of ms).
static O200K: LazyLock<CoreBPE> = LazyLock::new(|| {
    tiktoken_rs::o200k_base().expect("o200k_base ranks are embedded in tiktoken-rs")
});

/// Number of `o200k_base` tokens in `text`, encoding special-token lookalikes as plain text.
///
/// Linear in the input; suitable for MiB-sized outputs.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    O200K.encode_ordinary(text).len()
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
