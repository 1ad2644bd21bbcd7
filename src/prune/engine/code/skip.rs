//! Skipping bytes a word at a time: the one step both line scanners (`scan` for brace languages,
//! `indent` for indentation languages) take to pass over plain code.
//!
//! Owns the 8-byte test for "none of these bytes". It must never decide what a byte means: each
//! scanner names the bytes it has to look at.

/// The first index from `i` that is not inside a run of 8-byte words holding none of `specials`
/// (the bytes a scanner must look at). Exact: a word is skipped only when it holds none of them.
pub(super) fn skip_plain<const N: usize>(b: &[u8], mut i: usize, specials: &[u8; N]) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Non-zero iff some byte of `v` is zero (the classic test; exact as a yes/no answer).
    let has_zero = |v: u64| v.wrapping_sub(LOW) & !v & HIGH;
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let special = specials
            .iter()
            .fold(0, |acc, &c| acc | has_zero(w ^ (LOW * u64::from(c))));
        if special != 0 {
            break;
        }
        i += 8;
    }
    i
}
