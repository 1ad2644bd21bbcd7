//! Cutting text into normalised terms: identifiers split in every convention (`parse_header`,
//! `parseHeader`, `parse-header`), lowercased, stop words and one-letter parts dropped, light
//! stemming; the same for a goal and for the lines it is matched against.
//!
//! Owns what a term is. It must never weigh a term nor know which terms a goal has.

use rustc_hash::FxHashSet as HashSet;
use std::sync::LazyLock;

/// English words that carry no topic.
const STOP_WORDS_EN: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "do", "does", "doing", "each", "for", "from",
    "get", "gets", "had", "has", "have", "having", "he", "her", "here", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "just", "me", "might", "more", "most", "must", "my", "need",
    "no", "not", "of", "on", "once", "only", "or", "other", "our", "please", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "too", "us", "very", "want", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your",
];

/// Words of bug reports and fix messages that name no part of the code: "fix the bug where …",
/// "should properly handle …", "is wrong when …". Rare in code, so without this list their IDF
/// would make whatever line says `fix` or `issue` look relevant.
const STOP_WORDS_REPORT: &[&str] = &[
    "actually",
    "add",
    "added",
    "adds",
    "again",
    "already",
    "always",
    "anymore",
    "bug",
    "bugs",
    "case",
    "cases",
    "caused",
    "causes",
    "causing",
    "change",
    "changed",
    "changes",
    "correct",
    "correctly",
    "currently",
    "doesn",
    "don",
    "expected",
    "fix",
    "fixed",
    "fixes",
    "fixing",
    "happen",
    "happens",
    "incorrect",
    "incorrectly",
    "instead",
    "isn",
    "issue",
    "issues",
    "like",
    "make",
    "makes",
    "new",
    "now",
    "previously",
    "problem",
    "properly",
    "regression",
    "resolve",
    "resolves",
    "see",
    "seems",
    "still",
    "sure",
    "thanks",
    "thing",
    "things",
    "time",
    "trying",
    "unexpected",
    "unexpectedly",
    "use",
    "used",
    "using",
    "way",
    "work",
    "works",
    "wrong",
];

/// French words that carry no topic.
const STOP_WORDS_FR: &[&str] = &[
    "au", "aux", "avec", "ce", "ces", "cet", "cette", "comme", "comment", "dans", "de", "des",
    "doit", "donc", "dont", "du", "elle", "elles", "en", "est", "et", "être", "faire", "fait",
    "il", "ils", "je", "la", "le", "les", "leur", "leurs", "lui", "mais", "même", "ne", "nous",
    "ou", "où", "par", "pas", "pour", "pourquoi", "quand", "que", "quel", "quelle", "quelles",
    "quels", "qui", "quoi", "sa", "se", "ses", "si", "son", "sont", "sur", "tous", "tout", "toute",
    "toutes", "tu", "un", "une", "vous", "y",
];

/// Calls `emit` with every normalised term of `text`: each identifier part (lowercase, stemmed,
/// stop words and one-letter parts dropped) and, for compound identifiers (`parse_header`,
/// `parseHeader`, `parse-header`), the whole identifier as lowercase parts joined by `_`.
pub(crate) fn for_each_term(text: &str, emit: &mut dyn FnMut(&str)) {
    for_each_term_keeping(text, false, emit);
}

/// [`for_each_term`], keeping stop words when `keep_stop_words` (code quoted in a goal: `Fixed`,
/// `is_empty`; and lines, when the goal has such terms).
pub(super) fn for_each_term_keeping(text: &str, keep_stop_words: bool, emit: &mut dyn FnMut(&str)) {
    let mut part = String::new();
    let mut compound = String::new();
    for_each_identifier(text, &mut |ident| {
        emit_identifier(ident, &mut part, &mut compound, keep_stop_words, emit)
    });
}

/// Calls `emit` with each identifier of `text` (a run of word bytes, inner dashes included).
pub(super) fn for_each_identifier<'t>(text: &'t str, emit: &mut dyn FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    // A word byte, or the lead byte of a character that may be punctuation ([`WORD_BYTES`] says
    // no to those) and is not: decoded only there, so ASCII text never pays for it.
    let word_at = |i: usize| is_word_byte(bytes[i]) || wide_punctuation(text, i) == Some(0);
    let mut i = 0;
    while i < n {
        if !word_at(i) {
            // Not a word character: a mark outside ASCII is skipped whole, any other byte alone.
            i += wide_punctuation(text, i).unwrap_or(1);
            continue;
        }
        let start = i;
        loop {
            while i < n && word_at(i) {
                i += 1;
            }
            // A dash between word characters is inside the identifier (`utf-8`, `max-age`).
            if i + 1 < n && bytes[i] == b'-' && word_at(i + 1) {
                i += 2;
                continue;
            }
            break;
        }
        emit(&text[start..i]);
    }
}

/// For a lead byte at `i` of a character that may be punctuation outside ASCII: the
/// character's length when it is ([`is_wide_punctuation`]), a separator although its bytes are
/// not ASCII (CJK text puts no space beside it, so `code？retry` is two words), else `Some(0)`,
/// a word character. `None` for every other byte.
fn wide_punctuation(text: &str, i: usize) -> Option<usize> {
    // Every such mark is three bytes in UTF-8, led by 0xE2 (U+2000..), 0xE3 (U+3000..) or 0xEF
    // (U+FF00..).
    if !matches!(text.as_bytes()[i], 0xE2 | 0xE3 | 0xEF) {
        return None;
    }
    let c = text.get(i..)?.chars().next()?;
    Some(if is_wide_punctuation(c) {
        c.len_utf8()
    } else {
        0
    })
}

/// CJK and full-width punctuation (`，`, `。`, `（`, `」`, `？`; not the full-width `＿`, a word
/// character as `_` is), and the typographic quotes, dashes and ellipsis that CJK and English
/// prose put against words (`“JSONType”`, `—`, `…`).
fn is_wide_punctuation(c: char) -> bool {
    matches!(c,
        '\u{2014}' | '\u{2018}'..='\u{201D}' | '\u{2026}'
        | '\u{3000}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301F}'
        | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF3E}'
        | '\u{FF40}' | '\u{FF5B}'..='\u{FF65}')
}

/// Which bytes are word bytes, looked up instead of tested: the identifier scan asks for every
/// byte of every line that may hold a goal term. The lead bytes of the characters that may be
/// punctuation (0xE2, 0xE3, 0xEF) are not: the scan decodes those ([`wide_punctuation`]).
static WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric()
            || b == b'_' as usize
            || (b >= 0x80 && b != 0xE2 && b != 0xE3 && b != 0xEF);
        b += 1;
    }
    table
};

/// Identifier bytes: ASCII alphanumerics, `_`, and every byte of a non-ASCII character but the
/// three lead bytes [`wide_punctuation`] decides.
fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[b as usize]
}

/// Splits one identifier into parts and emits the parts and the compound.
pub(super) fn emit_identifier(
    ident: &str,
    part: &mut String,
    compound: &mut String,
    keep_stop_words: bool,
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
        if part.chars().count() < 2
            || (!keep_stop_words && is_stop_word(part))
            || is_short_number(part)
        {
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
pub(super) fn split_parts(ident: &str) -> impl Iterator<Item = &str> {
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
static STOP_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    STOP_WORDS_EN
        .iter()
        .chain(STOP_WORDS_FR)
        .chain(STOP_WORDS_REPORT)
        .copied()
        .collect()
});

pub(super) fn is_stop_word(word: &str) -> bool {
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
    if word.len() < len && short_cvc(word) {
        // `hoped` and `hoping` are `hope`, which keeps its `e` below.
        word.push('e');
    }
    let len = word.len();
    // A final `e` goes (`parse` meets `pars`ed), except after a short stem that ends
    // consonant-vowel-consonant (Porter's rule): `pane` is not `pan`, `mode` not `mod`, `dire`
    // not `dir`, and `timed` and `closing` are `time` and `close` as `-ed` and `-ing` left
    // them `tim` and `clos`.
    if len > 3 && word.ends_with('e') && !short_cvc(&word[..len - 1]) {
        word.truncate(len - 1);
    }
}

/// Whether an ASCII stem is consonants, then one vowel, then one consonant other than `w`, `x`
/// or `y` (Porter's measure 1 ending consonant-vowel-consonant): `pan`, `stat`, `typ`, `clos`;
/// not `pars`, `creat`, `delet`, `fix`. `y` after a consonant is a vowel.
fn short_cvc(stem: &str) -> bool {
    let b = stem.as_bytes();
    let vowel = |i: usize| vowel_plain(b[i]) || (b[i] == b'y' && i > 0 && !vowel_plain(b[i - 1]));
    let n = b.len();
    if n < 3
        || vowel(n - 1)
        || matches!(b[n - 1], b'w' | b'x' | b'y')
        || !vowel(n - 2)
        || vowel(n - 3)
    {
        return false;
    }
    // One vowel run (Porter's measure 1): no vowel before the consonants that precede it.
    (0..n - 3).all(|i| !vowel(i))
}

/// A vowel letter other than `y`.
fn vowel_plain(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
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
        // A short stem ending consonant-vowel-consonant keeps its `e`, and gets it back after
        // `-ed` and `-ing`: `pane` is not `pan`, nor `mode` the `mod` keyword.
        assert_eq!(terms("pane panes pan")[..], ["pane", "pane", "pan"]);
        assert_eq!(terms("mode modes mod")[..], ["mode", "mode", "mod"]);
        assert_eq!(
            terms("hope hoped hoping closed closing close typed type")[..],
            [
                "hope", "hope", "hope", "close", "close", "close", "type", "type"
            ]
        );
        // A longer stem still loses it: `create` meets `created`, `handle` meets `handling`.
        assert_eq!(
            terms("create created handle handling value")[..],
            ["creat", "creat", "handl", "handl", "valu"]
        );
    }

    proptest::proptest! {
        /// A verb ending in `e` of four letters or more (`hope`, `store`, `create`, `style`) stems
        /// the same in all its regular forms, whether its stem keeps the `e` or not.
        #[test]
        fn every_regular_form_of_a_word_ending_in_e_stems_alike(
            head in "[bcdfghjklmnpqrstvz]{1,2}[aeiou]([bcdfghjklmnprstvz]{1,2}[aeiouy])?",
            last in "[bcdfghjklmnprstvz]",
        ) {
            let base = format!("{head}{last}e");
            proptest::prop_assume!(base.len() >= 4);
            let stem_of = |w: &str| {
                let mut w = w.to_owned();
                stem(&mut w);
                w
            };
            let root = &base[..base.len() - 1];
            let want = stem_of(&base);
            for form in [format!("{base}s"), format!("{base}d"), format!("{root}ing")] {
                proptest::prop_assert_eq!(stem_of(&form), want.clone(), "{} / {}", base, form);
            }
        }
    }

    #[test]
    fn stop_word_list_has_no_duplicates() {
        assert_eq!(
            STOP_SET.len(),
            STOP_WORDS_EN.len() + STOP_WORDS_FR.len() + STOP_WORDS_REPORT.len()
        );
    }

    /// The identifier scan written a character at a time: the reference for the scan.
    fn identifiers_reference(text: &str) -> Vec<&str> {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let word = |c: char| {
            c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && !is_wide_punctuation(c))
        };
        let (mut out, mut k) = (Vec::new(), 0);
        while k < chars.len() {
            if !word(chars[k].1) {
                k += 1;
                continue;
            }
            let start = k;
            while k < chars.len() {
                let inner_dash = chars[k].1 == '-'
                    && k > start
                    && chars.get(k + 1).is_some_and(|&(_, c)| word(c));
                if !word(chars[k].1) && !inner_dash {
                    break;
                }
                k += 1;
            }
            let end = chars.get(k).map_or(text.len(), |&(at, _)| at);
            out.push(&text[chars[start].0..end]);
        }
        out
    }

    proptest::proptest! {
        /// The table-driven identifier scan finds the reference's identifiers.
        #[test]
        fn identifier_scan_matches_the_reference(text in "[aZ09_ \\-.é⟦(，？（）。＿“”’—…中]{0,48}") {
            let mut found = Vec::new();
            for_each_identifier(&text, &mut |id| found.push(id));
            proptest::prop_assert_eq!(found, identifiers_reference(&text));
        }
    }
}
