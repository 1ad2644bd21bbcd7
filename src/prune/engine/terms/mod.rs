//! Goal terms and line relevance: identifier-aware tokenizing, stop words, light stemming, and
//! IDF weights computed over the lines of the text being pruned.
//!
//! Owns turning a goal and lines into per-line term masks and weights. It must never decide what to
//! keep, and never look at anything but the goal and the lines it is given. Its parts: `goal`
//! reads which words of a goal are its topic, `words` cuts any text into normalised terms, and
//! `prefilter` finds the lines that cannot hold a term without cutting them.

mod goal;
mod prefilter;
mod words;

use super::draft::is_blank;
use super::evidence::Evidence;
use goal::{goal_terms, without_environment};
use prefilter::{Prefilter, prefilter_heads};
use rustc_hash::FxHashMap as HashMap;
pub(crate) use words::for_each_term;
#[cfg(test)]
use words::for_each_term_keeping;
use words::{emit_identifier, for_each_identifier, is_stop_word};

/// At most this many distinct goal terms are used. A line mask has one bit per term for exact
/// matches and one more (at `ABBREV + t`) for abbreviations of term `t`.
const MAX_TERMS: usize = 32;
/// Bit offset of the abbreviation bits.
const ABBREV: usize = 32;
/// Bits in a mask.
const BITS: usize = 64;
/// An abbreviation (`len` for `length`, `buf` for `buffer`) weighs this fraction of the word.
const ABBREV_WEIGHT: f32 = 0.5;
/// Abbreviations have at least this many characters and stand for words of at least
/// `MIN_ABBREVIATED` characters.
const MIN_ABBREV: usize = 3;
const MIN_ABBREVIATED: usize = 5;

/// The goal as a set of weighted terms, ready to be matched against lines.
pub(crate) struct Query {
    /// Term text -> index (bit position in a mask).
    index: HashMap<String, usize>,
    /// Abbreviation (a proper prefix of a single-word term) -> index of the term.
    prefixes: HashMap<String, usize>,
    /// The search for the first three characters of every term (the whole term if shorter) in the
    /// spellings an identifier part can start with (`casings`, in `prefilter`): a line holding none
    /// of them holds no term, exact or abbreviated (stemming only shortens a word's end, an
    /// abbreviation is at least three characters). `None` when a term is not ASCII (lowercasing
    /// would then need the slow path).
    prefilter: Option<Prefilter>,
    /// A term is a stop word quoted as code (`` `Fixed` ``): lines then emit stop words too, so it
    /// can match (otherwise they are dropped, as noise and as work).
    quoted_stop_words: bool,
    /// The goal's plain words, lowercased, punctuation trimmed (`docs:` -> `docs`); identifiers
    /// stay whole (`to_doc`, `DocumentBuilder`), so a word test is not fooled by their parts.
    words: Vec<String>,
    /// What the goal pastes from a failure (quoted source lines, frames, messages).
    pub(crate) evidence: Evidence,
    /// The goal as written: a data file's strategy reads the keys it writes whole
    /// (`grpc.version`, `org.apache.tika:tika-core`).
    goal: String,
}

impl Query {
    /// Extracts the goal's terms (at most [`MAX_TERMS`], first occurrences first). With
    /// `abbreviations`, lines also match the goal's words through their prefixes (`len` for
    /// `length`): useful for code identifiers, noise in prose (`com` is not `comparison`).
    pub(crate) fn new(goal: &str, abbreviations: bool) -> Query {
        // A typographic apostrophe is an apostrophe: `doesn’t` is the stop word `doesn`, not a
        // term of its own that no line holds.
        let plain;
        let words_of = if goal.contains(['\u{2019}', '\u{2018}']) {
            plain = goal.replace(['\u{2019}', '\u{2018}'], "'");
            plain.as_str()
        } else {
            goal
        };
        // An issue report's environment section is no part of its topic, unless nothing else
        // gives a term.
        let reported = without_environment(words_of);
        let (mut index, mut quoted_stop_words) = goal_terms(&reported, true);
        if index.is_empty() && matches!(reported, std::borrow::Cow::Owned(_)) {
            (index, quoted_stop_words) = goal_terms(words_of, true);
        }
        if index.is_empty() {
            // A goal made only of request words is its own topic (`show the file handling`).
            (index, quoted_stop_words) = goal_terms(words_of, false);
        }
        let mut terms: Vec<(&String, &usize)> = index.iter().collect();
        terms.sort_by_key(|(_, t)| **t);
        let mut prefixes = HashMap::default();
        for (term, &t) in terms {
            let chars: Vec<char> = term.chars().collect();
            if !abbreviations
                || chars.len() < MIN_ABBREVIATED
                || !chars.iter().all(|c| c.is_alphabetic())
            {
                continue;
            }
            for k in MIN_ABBREV..chars.len() {
                let prefix: String = chars[..k].iter().collect();
                if !index.contains_key(&prefix) {
                    prefixes.entry(prefix).or_insert(t);
                }
            }
        }
        let prefilter = index
            .keys()
            .all(|t| t.is_ascii())
            .then(|| {
                let mut heads: Vec<String> =
                    index.keys().flat_map(|t| prefilter_heads(t)).collect();
                heads.sort();
                heads.dedup();
                Prefilter::new(&heads)
            })
            .flatten();
        let words = words_of
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect();
        Query {
            index,
            prefixes,
            prefilter,
            quoted_stop_words,
            words,
            evidence: Evidence::new(goal),
            goal: goal.to_owned(),
        }
    }

    /// The goal as written.
    pub(crate) fn goal(&self) -> &str {
        &self.goal
    }

    /// True when `term` (already normalised: lowercase, stemmed) is one of the goal's terms.
    pub(crate) fn has(&self, term: &str) -> bool {
        self.index.contains_key(term)
    }

    /// True when the goal has `word` (lowercase) as a plain word, not as part of an identifier.
    pub(crate) fn has_word(&self, word: &str) -> bool {
        self.words.iter().any(|w| w == word)
    }

    /// Bits (exact and abbreviation) of the goal terms among `words` (normalised like the goal).
    pub(crate) fn bits_of(&self, words: &[&str]) -> u64 {
        let mut bits = 0u64;
        for word in words {
            for_each_term(word, &mut |term| {
                if let Some(&t) = self.index.get(term) {
                    bits |= (1 << t) | (1 << (ABBREV + t));
                }
            });
        }
        bits
    }

    /// True when the goal has no usable term (empty, or only stop words and punctuation).
    pub(crate) fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether a question was asked at all, terms or not (`fix it`, `why?` hold no term, yet ask
    /// what went wrong).
    pub(crate) fn asked(&self) -> bool {
        !self.goal.trim().is_empty()
    }

    /// Mask of the goal terms that occur in `line`, exactly or abbreviated (the memoised,
    /// prefiltered path every plan uses).
    #[cfg(test)]
    pub(crate) fn mask(&self, line: &str) -> u64 {
        self.mask_memo(line, &mut HashMap::default())
    }

    /// The same mask, term by term, without memo or prefilter: the reference for tests.
    #[cfg(test)]
    fn mask_reference(&self, line: &str) -> u64 {
        let mut mask = 0u64;
        for_each_term_keeping(line, self.quoted_stop_words, &mut |term| {
            mask |= self.term_bit(term)
        });
        mask
    }

    /// `Query::mask` (the test-only entry point) with a memo of identifiers already seen (code
    /// repeats its identifiers on line after line, and splitting, lowercasing and stemming them
    /// is most of the work).
    fn mask_memo<'t>(&self, line: &'t str, memo: &mut HashMap<&'t str, u64>) -> u64 {
        if self.index.is_empty() || self.prefilter.as_ref().is_some_and(|p| !p.is_match(line)) {
            return 0;
        }
        let (mut part, mut compound) = (String::new(), String::new());
        let mut mask = 0u64;
        for_each_identifier(line, &mut |ident| {
            mask |= *memo.entry(ident).or_insert_with(|| {
                let mut m = 0u64;
                emit_identifier(
                    ident,
                    &mut part,
                    &mut compound,
                    self.quoted_stop_words,
                    &mut |term| m |= self.term_bit(term),
                );
                m
            });
        });
        mask
    }

    /// The bit of one term (exact or abbreviated), 0 when it is not a goal term.
    fn term_bit(&self, term: &str) -> u64 {
        if let Some(&bit) = self.index.get(term) {
            1 << bit
        } else if let Some(&bit) = self.prefixes.get(term)
            // Stop words a line emits only because one was quoted: exact matches, never
            // abbreviations (`for` is not `format`).
            && !(self.quoted_stop_words && is_stop_word(term))
        {
            1 << (ABBREV + bit)
        } else {
            0
        }
    }
}

/// Per-line term masks and per-term IDF weights for one text.
#[derive(Clone)]
pub(crate) struct Matches {
    /// Bit `t` of `masks[i]` is set when goal term `t` occurs in line `i` (bit `ABBREV + t` when
    /// an abbreviation of it does).
    pub(crate) masks: Vec<u64>,
    /// IDF of each bit over the non-blank lines (halved for abbreviations); 0 when absent.
    pub(crate) idf: [f32; BITS],
    /// Sum of the IDF of every goal term present in the text (exact matches only).
    pub(crate) total: f32,
    /// Number of goal terms (bits `0..terms`).
    terms: usize,
    /// IDF a term present in a single line would have (the weight given to absent terms).
    rare: f32,
}

impl Matches {
    /// Matches every line against the goal and computes IDF over the non-blank lines.
    pub(crate) fn new(query: &Query, lines: &[&str]) -> Matches {
        let mut memo = HashMap::default();
        let masks: Vec<u64> = lines
            .iter()
            .map(|l| query.mask_memo(l, &mut memo))
            .collect();
        let docs = lines.iter().filter(|l| !is_blank(l)).count() as f32;
        let mut df = [0u32; BITS];
        for &m in &masks {
            let mut bits = m;
            while bits != 0 {
                df[bits.trailing_zeros() as usize] += 1;
                bits &= bits - 1;
            }
        }
        let mut idf = [0f32; BITS];
        let mut total = 0.0;
        for (bit, (w, &d)) in idf.iter_mut().zip(&df).enumerate() {
            if d > 0 {
                let d = d as f32;
                *w = (1.0 + (docs - d + 0.5) / (d + 0.5)).ln();
                if bit >= ABBREV {
                    *w *= ABBREV_WEIGHT;
                } else {
                    total += *w;
                }
            }
        }
        let rare = (1.0 + (docs - 0.5) / 1.5).ln();
        Matches {
            masks,
            idf,
            total,
            terms: query.index.len(),
            rare,
        }
    }

    /// A copy in which the term bits in `bits` match nothing (IDF unchanged).
    pub(crate) fn without_terms(&self, bits: u64) -> Matches {
        let masks = self.masks.iter().map(|&m| m & !bits).collect();
        Matches { masks, ..*self }
    }

    /// A copy in which the lines flagged in `skip` match nothing (IDF unchanged).
    pub(crate) fn without(&self, skip: &[bool]) -> Matches {
        let masks = self
            .masks
            .iter()
            .zip(skip)
            .map(|(&m, &s)| if s { 0 } else { m })
            .collect();
        Matches { masks, ..*self }
    }

    /// Weight of the whole goal except the terms in `excluded`: the IDF of each term present in
    /// the text, and the IDF of a one-line term for each absent term (the goal may name something
    /// the text does not contain, which is itself informative).
    pub(crate) fn goal_mass(&self, excluded: u64) -> f32 {
        (0..self.terms)
            .filter(|t| excluded >> t & 1 == 0)
            .map(|t| {
                if self.idf[t] > 0.0 {
                    self.idf[t]
                } else {
                    self.rare
                }
            })
            .sum()
    }

    /// Bits of the terms present in more than half of the lines (they tell lines apart poorly).
    pub(crate) fn common_bits(&self) -> u64 {
        let half = (1.0f32 + 1.0).ln();
        (0..BITS)
            .filter(|&b| {
                self.idf[b] > 0.0
                    && self.idf[b] < half * if b >= ABBREV { ABBREV_WEIGHT } else { 1.0 }
            })
            .fold(0, |a, b| a | 1 << b)
    }

    /// Sum of the IDF of the distinct terms occurring in `range`.
    pub(crate) fn coverage(&self, range: std::ops::Range<usize>) -> f32 {
        self.weight(self.masks[range].iter().fold(0, |a, m| a | m))
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

    /// The highest [`Matches::line`] relevance among the lines of `range` (0 when none matches).
    pub(crate) fn best_line(&self, range: std::ops::Range<usize>) -> f32 {
        self.masks[range]
            .iter()
            .map(|&mask| self.weight(mask))
            .fold(0.0, f32::max)
    }

    /// Relevance of a span of lines, with saturating term frequency (BM25's k1 = 1.2) and no
    /// length normalisation.
    pub(crate) fn span(&self, range: std::ops::Range<usize>) -> f32 {
        self.bm25(range, 1.0, 0.0)
    }

    /// Okapi BM25 of a span of lines taken as one document (term frequency = lines containing the
    /// term; k1 = 1.2), its length in lines normalised by `avg_lines` with strength `b`.
    pub(crate) fn bm25(&self, range: std::ops::Range<usize>, avg_lines: f32, b: f32) -> f32 {
        const K1: f32 = 1.2;
        let len = range.len() as f32;
        let mut tf = [0u16; BITS];
        for &m in &self.masks[range] {
            let mut bits = m;
            while bits != 0 {
                let t = bits.trailing_zeros() as usize;
                tf[t] = tf[t].saturating_add(1);
                bits &= bits - 1;
            }
        }
        let norm = K1 * (1.0 - b + b * len / avg_lines.max(1.0));
        tf.iter()
            .zip(&self.idf)
            .filter(|(f, _)| **f > 0)
            .map(|(&f, &w)| {
                let f = f32::from(f);
                w * f * (K1 + 1.0) / (f + norm)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_and_memo_agree_with_the_reference() {
        let goals = [
            "why does parseHeader fail on HTTP/2 frames with len > 16384?",
            "Fix DST issue in getOverlappingDaysInIntervals",
            "serde_json escape \\u sequences in strings",
            "io error on read_to_end",
            "too many tries when flies spy",
            "`is_a` check",
            "`is_empty` wrong in formatter",
            "keyboard layout kilo",
            // More heads than the packed search takes: the case-insensitive automaton.
            "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike \
             november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee \
             zulu parse header frames interval keyboard",
        ];
        let lines = [
            "fn parse_header(buf: &[u8]) -> Result<Header> {",
            "    let LEN = buf.len(); // HTTP2 frames",
            "PARSEHEADER HTTPServer getOverlappingDaysInIntervals(dst)",
            "    read_to_end(&mut v)?; Io::Error",
            "function escapeUnicodeSequences(str) { return str }",
            "16384 frames, lengths, Intervals, days",
            "nothing to see here",
            "if tries > limit { fly(); isA(x) }",
            "for x in v { format!(\"{x}\") }",
            "pArSeHeader HTTPServer_parse X509Certificate Utf8Error IOError",
            "let \u{212A}eyboard = \u{212A}ILO; // the Kelvin sign lowercases to k",
        ];
        // The packed search needs SSSE3 (x86_64) or NEON (aarch64).
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert!(matches!(
            Query::new(goals[0], true).prefilter,
            Some(Prefilter::Packed(_))
        ));
        assert!(matches!(
            Query::new(goals[goals.len() - 1], true).prefilter,
            Some(Prefilter::Automaton(_))
        ));
        for g in goals {
            let q = Query::new(g, true);
            let mut memo = HashMap::default();
            for l in lines {
                assert_eq!(q.mask_memo(l, &mut memo), q.mask_reference(l), "{g} / {l}");
            }
        }
    }

    proptest::proptest! {
        /// Lines of identifiers in any spelling (`pArSe` included) and goals of words, camelCase
        /// and snake_case: the prefiltered, memoised mask is the term-by-term reference.
        #[test]
        fn the_prefilter_never_hides_a_term(
            goal in proptest::collection::vec("(parse|Header|http|HTTP|tries|fly|io|x509|utf8|len|Id|server|de|key|kilo|[a-zA-Z]{2,6})([_A-Z][a-z]{1,5})?", 1..5),
            line in proptest::collection::vec("[a-zA-Z0-9_]{1,12}|[ .,(){}:-]|[\u{212A}\u{130}é中Ωß]", 0..12),
        ) {
            let goal = goal.join(" ");
            let line = line.concat();
            let q = Query::new(&goal, true);
            proptest::prop_assert_eq!(q.mask(&line), q.mask_reference(&line), "{} / {}", goal, line);
        }
    }
    #[test]
    fn quoted_stop_words_match_exactly_never_as_abbreviations() {
        let q = Query::new("`is_empty` wrong in formatter", true);
        assert_eq!(
            q.mask("for x in v {"),
            0,
            "`for` is not an abbreviation of `formatter`"
        );
        assert_ne!(q.mask("if v.is_empty() {"), 0);
    }

    #[test]
    fn code_quoted_in_a_goal_is_never_a_stop_word() {
        let q = Query::new("Mark `format::Fixed` as non_exhaustive, fixed", true);
        assert_ne!(q.mask("pub enum Fixed {"), 0, "the quoted name matches");
        let q = Query::new("fixed the crash", true);
        assert_eq!(
            q.mask("pub enum Fixed {"),
            0,
            "an unquoted report word does not"
        );
    }

    #[test]
    fn a_stop_word_written_as_code_is_a_name() {
        let q = Query::new("xr.where not preserving attributes", true);
        assert_ne!(
            q.mask("def where(cond, x, y):"),
            0,
            "xr.where names `where`"
        );
        let q = Query::new("app.use() should accept an array", true);
        assert_ne!(q.mask("app.use = function use(fn) {"), 0);
        for prose in [
            "where is the retry loop",
            "fix(where): nothing",
            "see https://example.com/where.html",
        ] {
            let q = Query::new(prose, true);
            assert_eq!(q.mask("def where(cond, x, y):"), 0, "{prose}");
        }
        // Only a whole name: `get` of `getStopTime` would match every getter.
        let q = Query::new("NPE in StopWatch.getStopTime", true);
        assert_eq!(q.mask("public long getTime() {"), 0);
        assert_ne!(q.mask("public long getStopTime() {"), 0);
    }

    #[test]
    fn a_quoted_stop_word_stemmed_still_matches() {
        let q = Query::new("`where` drops attributes", true);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
    }

    #[test]
    fn rarer_terms_weigh_more() {
        let lines = [
            "let header = 1;",
            "let body = 2;",
            "let body = 3;",
            "let body = 4;",
        ];
        let q = Query::new("header body", true);
        let m = Matches::new(&q, &lines);
        assert!(m.line(0) > m.line(1));
        assert!(m.line(1) > 0.0);
        assert_eq!(m.total, m.line(0) + m.line(1));
    }

    #[test]
    fn compound_goal_identifier_matches_other_conventions() {
        let q = Query::new("parse_header", true);
        assert_ne!(q.mask("fn parseHeader(x: u8) {}"), 0);
        assert_eq!(q.mask("fn body() {}"), 0);
    }

    #[test]
    fn abbreviations_match_at_lower_weight() {
        let q = Query::new("length of the buffer", true);
        assert_ne!(q.mask("fn len(&self) -> usize"), 0);
        assert_ne!(q.mask("let buf = Vec::new();"), 0);
        assert_eq!(q.mask("let le = 1;"), 0);
        let lines = ["fn len(&self) {}", "fn length(&self) {}", "x", "y"];
        let m = Matches::new(&q, &lines);
        assert!(m.line(0) > 0.0 && m.line(0) < m.line(1));
        assert_eq!(m.total, m.line(1));
    }

    #[test]
    fn bits_of_selects_goal_terms() {
        let q = Query::new("why does parse_header fail", true);
        let bits = q.bits_of(&["failure", "failed"]);
        assert_ne!(bits, 0);
        assert_eq!(q.mask("test failed") & !bits, 0);
        assert_ne!(q.mask("parse_header") & !bits, 0);
    }

    #[test]
    fn empty_goal_has_no_terms() {
        assert!(Query::new("  the of a ? ", true).is_empty());
        assert!(!Query::new("parse", true).is_empty());
    }
}
