//! Goal terms and line relevance: identifier-aware tokenizing, stop words, light stemming, and
//! IDF weights computed over the lines of the text being pruned.
//!
//! Owns turning a goal and lines into per-line term masks and weights. It must never decide what to
//! keep, and never look at anything but the goal and the lines it is given.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// At most this many distinct goal terms are used (one bit each in a line mask).
const MAX_TERMS: usize = 64;

/// English and French words that carry no topic.
const STOP_WORDS: &[&str] = &[
    // English
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "do", "does", "doing", "each", "for", "from",
    "get", "gets", "had", "has", "have", "having", "he", "her", "here", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "me", "might", "more", "most", "must", "my", "need",
    "no", "not", "of", "on", "once", "only", "or", "other", "our", "please", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "too", "us", "very", "want", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", // French
    "au", "aux", "avec", "ce", "ces", "cet", "cette", "comme", "comment", "dans", "de", "des",
    "doit", "donc", "dont", "du", "elle", "elles", "en", "est", "et", "être", "faire", "fait",
    "il", "ils", "je", "la", "le", "les", "leur", "leurs", "lui", "mais", "même", "ne", "nous",
    "ou", "où", "par", "pas", "pour", "pourquoi", "quand", "que", "quel", "quelle", "quelles",
    "quels", "qui", "quoi", "sa", "se", "ses", "si", "son", "sont", "sur", "tous", "tout", "toute",
    "toutes", "tu", "un", "une", "vous", "y",
];

/// The goal as a set of weighted terms, ready to be matched against lines.
pub(crate) struct Query {
    /// Term text -> index (bit position in a mask).
    index: HashMap<String, usize>,
}

impl Query {
    /// Extracts the goal's terms (at most [`MAX_TERMS`], first occurrences first).
    pub(crate) fn new(goal: &str) -> Query {
        let mut index = HashMap::new();
        for_each_term(goal, &mut |term| {
            if index.len() < MAX_TERMS && !index.contains_key(term) {
                let next = index.len();
                index.insert(term.to_owned(), next);
            }
        });
        Query { index }
    }

    /// True when the goal has no usable term (empty, or only stop words and punctuation).
    pub(crate) fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Mask of the goal terms that occur in `line`.
    pub(crate) fn mask(&self, line: &str) -> u64 {
        if self.index.is_empty() {
            return 0;
        }
        let mut mask = 0u64;
        for_each_term(line, &mut |term| {
            if let Some(&bit) = self.index.get(term) {
                mask |= 1 << bit;
            }
        });
        mask
    }
}

/// Per-line term masks and per-term IDF weights for one text.
pub(crate) struct Matches {
    /// Bit `t` of `masks[i]` is set when goal term `t` occurs in line `i`.
    pub(crate) masks: Vec<u64>,
    /// IDF of each goal term over the non-blank lines; 0 for terms absent from the text.
    pub(crate) idf: [f32; MAX_TERMS],
    /// Sum of the IDF of every goal term present in the text: the best score a span can reach.
    pub(crate) total: f32,
}

impl Matches {
    /// Matches every line against the goal and computes IDF over the non-blank lines.
    pub(crate) fn new(query: &Query, lines: &[&str]) -> Matches {
        let masks: Vec<u64> = lines.iter().map(|l| query.mask(l)).collect();
        let docs = lines.iter().filter(|l| !l.trim().is_empty()).count() as f32;
        let mut df = [0u32; MAX_TERMS];
        for &m in &masks {
            let mut bits = m;
            while bits != 0 {
                df[bits.trailing_zeros() as usize] += 1;
                bits &= bits - 1;
            }
        }
        let mut idf = [0f32; MAX_TERMS];
        let mut total = 0.0;
        for (w, &d) in idf.iter_mut().zip(&df) {
            if d > 0 {
                let d = d as f32;
                *w = (1.0 + (docs - d + 0.5) / (d + 0.5)).ln();
                total += *w;
            }
        }
        Matches { masks, idf, total }
    }

    /// Sum of the IDF of the terms in `mask`.
    pub(crate) fn weight(&self, mask: u64) -> f32 {
        let mut bits = mask;
        let mut sum = 0.0;
        while bits != 0 {
            sum += self.idf[bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        sum
    }

    /// Relevance of one line: the IDF mass of the goal terms it contains.
    pub(crate) fn line(&self, i: usize) -> f32 {
        self.weight(self.masks[i])
    }

    /// Relevance of a span of lines, with saturating term frequency (BM25's k1 = 1.2, no length
    /// normalisation: a longer definition that mentions a term more often is more about it).
    pub(crate) fn span(&self, range: std::ops::Range<usize>) -> f32 {
        let mut tf = [0u16; MAX_TERMS];
        for &m in &self.masks[range] {
            let mut bits = m;
            while bits != 0 {
                let t = bits.trailing_zeros() as usize;
                tf[t] = tf[t].saturating_add(1);
                bits &= bits - 1;
            }
        }
        const K1: f32 = 1.2;
        tf.iter()
            .zip(&self.idf)
            .filter(|(f, _)| **f > 0)
            .map(|(&f, &w)| {
                let f = f32::from(f);
                w * f * (K1 + 1.0) / (f + K1)
            })
            .sum()
    }
}

/// Calls `emit` with every normalised term of `text`: each identifier part (lowercase, stemmed,
/// stop words and one-letter parts dropped) and, for compound identifiers (`parse_header`,
/// `parseHeader`, `parse-header`), the whole identifier as lowercase parts joined by `_`.
pub(crate) fn for_each_term(text: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut part = String::new();
    let mut compound = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_word_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() {
            let inner_dash =
                bytes[i] == b'-' && i > start && bytes.get(i + 1).is_some_and(|b| is_word_byte(*b));
            if !is_word_byte(bytes[i]) && !inner_dash {
                break;
            }
            i += 1;
        }
        emit_identifier(&text[start..i], &mut part, &mut compound, emit);
    }
}

/// Identifier characters: ASCII alphanumerics, `_`, and every byte of a non-ASCII character.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Splits one identifier into parts and emits the parts and the compound.
fn emit_identifier(
    ident: &str,
    part: &mut String,
    compound: &mut String,
    emit: &mut dyn FnMut(&str),
) {
    compound.clear();
    let mut parts = 0;
    for piece in split_parts(ident) {
        part.clear();
        part.extend(piece.chars().flat_map(char::to_lowercase));
        if !compound.is_empty() {
            compound.push('_');
        }
        compound.push_str(part);
        parts += 1;
        if part.chars().count() < 2 || is_stop_word(part) || is_short_number(part) {
            continue;
        }
        stem(part);
        emit(part);
    }
    if parts > 1 {
        emit(compound);
    }
}

/// Splits on `_` and `-`, lower->upper case changes, and the end of an acronym (`HTTPServer` ->
/// `HTTP`, `Server`). Letters and digits stay together (`utf8`, `base64`).
fn split_parts(ident: &str) -> impl Iterator<Item = &str> {
    ident
        .split(['_', '-'])
        .filter(|s| !s.is_empty())
        .flat_map(split_camel)
}

/// Splits one `_`-free piece at case boundaries.
fn split_camel(piece: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for k in 1..chars.len() {
        let (pos, c) = chars[k];
        let prev = chars[k - 1].1;
        let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_lower));
        if boundary {
            out.push(&piece[start..pos]);
            start = pos;
        }
    }
    out.push(&piece[start..]);
    out
}

/// Stop words as a set (built once).
static STOP_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

fn is_stop_word(word: &str) -> bool {
    STOP_SET.contains(word)
}

/// Numbers shorter than three digits (`0`, `1`, `42`) are noise; longer ones (ports, codes) are not.
fn is_short_number(word: &str) -> bool {
    word.len() < 3 && word.bytes().all(|b| b.is_ascii_digit())
}

/// Light English suffix stripping so that `parse`, `parses`, `parsed` and `parsing` meet.
fn stem(word: &mut String) {
    if !word.is_ascii() || word.bytes().any(|b| b.is_ascii_digit()) {
        return;
    }
    let len = word.len();
    if len > 4 && word.ends_with("ies") {
        word.truncate(len - 3);
        word.push('y');
    } else if word.ends_with("sses") {
        word.truncate(len - 2);
    } else if len > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word.truncate(len - 1);
    }
    let len = word.len();
    if len >= 6 && word.ends_with("ing") {
        word.truncate(len - 3);
    } else if len >= 5 && word.ends_with("ed") {
        word.truncate(len - 2);
    }
    let len = word.len();
    if len > 3 && word.ends_with('e') {
        word.truncate(len - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_term(text, &mut |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn splits_identifiers_in_every_convention() {
        assert_eq!(terms("parse_header"), ["pars", "header", "parse_header"]);
        assert_eq!(terms("parseHeader"), ["pars", "header", "parse_header"]);
        assert_eq!(terms("ParseHeader"), ["pars", "header", "parse_header"]);
        assert_eq!(terms("parse-header"), ["pars", "header", "parse_header"]);
        assert_eq!(terms("HTTPServer"), ["http", "server", "http_server"]);
    }

    #[test]
    fn drops_stop_words_and_short_parts() {
        assert_eq!(
            terms("How does the parser handle a x?"),
            ["parser", "handl"]
        );
        assert_eq!(
            terms("Pourquoi le test échoue dans la boucle"),
            ["test", "échoue", "boucl"]
        );
        assert_eq!(terms("port 8080 or 42"), ["port", "8080"]);
    }

    #[test]
    fn stems_inflections_together() {
        let forms = ["parse", "parses", "parsed", "parsing"].map(|w| terms(w).remove(0));
        assert!(forms.iter().all(|f| f == "pars"), "{forms:?}");
        assert_eq!(
            terms("returns returned returning")[..],
            ["return", "return", "return"]
        );
    }

    #[test]
    fn stop_word_list_has_no_duplicates() {
        assert_eq!(STOP_SET.len(), STOP_WORDS.len());
    }

    #[test]
    fn rarer_terms_weigh_more() {
        let lines = [
            "let header = 1;",
            "let body = 2;",
            "let body = 3;",
            "let body = 4;",
        ];
        let q = Query::new("header body");
        let m = Matches::new(&q, &lines);
        assert!(m.line(0) > m.line(1));
        assert!(m.line(1) > 0.0);
        assert_eq!(m.total, m.line(0) + m.line(1));
    }

    #[test]
    fn compound_goal_identifier_matches_other_conventions() {
        let q = Query::new("parse_header");
        assert_ne!(q.mask("fn parseHeader(x: u8) {}"), 0);
        assert_eq!(q.mask("fn body() {}"), 0);
    }

    #[test]
    fn empty_goal_has_no_terms() {
        assert!(Query::new("  the of a ? ").is_empty());
        assert!(!Query::new("parse").is_empty());
    }
}
