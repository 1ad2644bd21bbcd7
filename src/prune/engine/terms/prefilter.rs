//! The prefilter of a goal's terms: a fast search for the first characters of every term, in the
//! spellings an identifier part can start with, so a line that holds none of them is never cut
//! into terms.
//!
//! Owns which lines may hold a term. It must never say a line holds a term (only that it cannot),
//! and never miss a line that holds one.

/// The search for the heads of the goal's terms ([`prefilter_heads`]) in a line.
pub(super) enum Prefilter {
    /// SIMD packed search (Teddy) for the heads' [`casings`]: case-sensitive, so it needs three
    /// patterns a head, and Teddy takes a few dozen patterns at most.
    Packed(aho_corasick::packed::Searcher),
    /// An ASCII-case-insensitive automaton, for more heads than that: a byte at a time, about
    /// 2.5 times slower on code (1 MiB of Rust: 2.5 ms against 1.0 ms).
    Automaton(aho_corasick::AhoCorasick),
}

impl Prefilter {
    /// The search for `heads` (lowercase ASCII), `None` when it cannot be built.
    pub(super) fn new(heads: &[String]) -> Option<Prefilter> {
        let mut patterns = heads.to_vec();
        // The Kelvin sign lowercases to an ASCII `k` (`\u{212A}ey` is the term `key`): a line
        // holding one goes to the full matcher whenever a head has a `k`. It has one spelling.
        if heads.iter().any(|h| h.contains('k')) {
            patterns.push(KELVIN.to_owned());
        }
        let mut spellings: Vec<String> = patterns.iter().flat_map(|h| casings(h)).collect();
        spellings.sort();
        spellings.dedup();
        if let Some(packed) = aho_corasick::packed::Config::new()
            .builder()
            .extend(&spellings)
            .build()
        {
            return Some(Prefilter::Packed(packed));
        }
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(patterns)
            .ok()
            .map(Prefilter::Automaton)
    }

    /// Whether `line` holds one of the heads.
    pub(super) fn is_match(&self, line: &str) -> bool {
        match self {
            Prefilter::Packed(p) => p.find(line).is_some(),
            Prefilter::Automaton(a) => a.is_match(line),
        }
    }
}

/// The Kelvin sign, the one character outside ASCII whose lowercase is ASCII (`k`).
const KELVIN: &str = "\u{212A}";

/// The spellings a lowercase ASCII head can have where an identifier part starts: `par`, `Par`,
/// `PAR`. `split_camel` (in `words`) cuts a part wherever a lowercase letter or a digit meets an
/// uppercase one, so the ASCII letters a part starts with are lowercase, capitalised or all
/// capitals, and no mixed spelling (`pAr`) can start one: searching these three, case-sensitively,
/// finds every line the case-insensitive search would that can hold a term (but for the Kelvin
/// sign, which [`Prefilter::new`] adds; given it, all three spellings are the sign itself).
fn casings(head: &str) -> Vec<String> {
    let mut capital = head.to_owned();
    if let Some(first) = capital.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    vec![head.to_owned(), capital, head.to_ascii_uppercase()]
}

/// What a line must contain (in one of its [`casings`]) to hold term `t`: its first three characters, or
/// its first part's when it is a compound (`is_a` also occurs as `isA`); and when stemming turned
/// `-ies` into a `y` among those (`tries` -> `try`), the `i` spelling too.
pub(super) fn prefilter_heads(t: &str) -> Vec<String> {
    let first = t.split('_').find(|p| !p.is_empty()).unwrap_or(t);
    let head: String = first.chars().take(3).collect();
    let mut heads = vec![head.clone()];
    if head.ends_with('y') {
        heads.push(format!("{}i", &head[..head.len() - 1]));
    }
    heads
}
