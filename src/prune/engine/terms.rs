//! Goal terms and line relevance: identifier-aware tokenizing, stop words, light stemming, and
//! IDF weights computed over the lines of the text being pruned.
//!
//! Owns turning a goal and lines into per-line term masks and weights. It must never decide what to
//! keep, and never look at anything but the goal and the lines it is given.

use super::docs::atx_level;
use super::draft::is_blank;
use super::evidence::Evidence;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::LazyLock;

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

/// The goal as a set of weighted terms, ready to be matched against lines.
pub(crate) struct Query {
    /// Term text -> index (bit position in a mask).
    index: HashMap<String, usize>,
    /// Abbreviation (a proper prefix of a single-word term) -> index of the term.
    prefixes: HashMap<String, usize>,
    /// The search for the first three characters of every term (the whole term if shorter) in
    /// the spellings an identifier part can start with ([`casings`]): a line holding none of
    /// them holds no term, exact or abbreviated (stemming only shortens a word's end, an
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

/// The goal's terms (first occurrences first, at most [`MAX_TERMS`]) and whether one is a stop
/// word quoted as code. With `skip_frames`, the clauses of prose that only frame a request
/// ([`is_request_frame`]) give none.
fn goal_terms(goal: &str, skip_frames: bool) -> (HashMap<String, usize>, bool) {
    let mut index = HashMap::default();
    let mut quoted_stop_words = false;
    // Inside backticks the goal quotes code: `Fixed`, `is_empty` are names, not stop words.
    // So is a word written as code outside them, a whole name: `xr.where`, `app.use`, `any()`.
    let mut add = |text: &str, keep: bool| {
        let mut added = false;
        for_each_term_keeping(text, keep, &mut |term| {
            if index.len() < MAX_TERMS && !index.contains_key(term) {
                added = true;
                let next = index.len();
                index.insert(term.to_owned(), next);
            }
        });
        // Lines must then keep their stop words too (tested before stemming: `where`).
        quoted_stop_words |= keep && added && has_stop_word(text);
    };
    let blocks: Vec<&str> = goal.split("```").collect();
    for (f, block) in blocks.iter().enumerate() {
        if f % 2 == 1 {
            let closed = f + 1 < blocks.len();
            if closed && !block.contains('\n') {
                // ```` ```where``` ```` is inline code, as `` `where` `` is.
                add(block.trim(), true);
            } else {
                // A fenced block is a snippet (the reporter's code, a log), not one quoted
                // name: its `if`, `for` and `it` are no terms. Its words are read like
                // prose, without the fence's language tag; a stop word is a name there
                // only as a member (`xr.where(c)`, not `it.name` or `if(x)`).
                for_each_prose_term(fence_body(block), true, &mut add);
            }
            continue;
        }
        for (piece, code) in pieces(block, skip_frames) {
            if code {
                add(piece, true);
            } else {
                for_each_prose_term(piece, false, &mut add);
            }
        }
    }
    (index, quoted_stop_words)
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

/// Words an agent wraps a question in that name no part of the code: where to look and what to
/// do (`Where in this file is the code that handles this:`, `Which function is responsible?`).
const REQUEST_WORDS: &[&str] = &[
    "behind",
    "class",
    "classes",
    "code",
    "codebase",
    "deal",
    "define",
    "defined",
    "definition",
    "describe",
    "described",
    "explain",
    "file",
    "files",
    "find",
    "following",
    "function",
    "functions",
    "handle",
    "handled",
    "handles",
    "handling",
    "help",
    "implement",
    "implementation",
    "implemented",
    "implementing",
    "implements",
    "involve",
    "involved",
    "know",
    "locate",
    "located",
    "logic",
    "look",
    "looking",
    "method",
    "methods",
    "module",
    "modules",
    "part",
    "parts",
    "place",
    "places",
    "point",
    "relevant",
    "responsible",
    "section",
    "show",
    "snippet",
    "tell",
    "understand",
];

/// [`REQUEST_WORDS`] as terms (stemmed as lines' words are).
static REQUEST_TERMS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let mut set = HashSet::default();
    for word in REQUEST_WORDS {
        for_each_term(word, &mut |t| {
            set.insert(t.to_owned());
        });
    }
    set
});

/// Headings that introduce an issue report's environment: the versions, platform and settings
/// the reporter ran (`### Environment information`, `**Your Environment**`, `## 环境信息`). A
/// heading matches whole (case aside, and its closing `:` or `?`): `## RUST_LOG environment
/// variable ignored` is the bug, not its environment. Not a `Version` section either: a reporter
/// may paste there the setup the bug is about (a renamed crate in `Cargo.toml`).
const ENVIRONMENT_HEADINGS: &[&str] = &[
    "environment",
    "environment information",
    "environment info",
    "environment details",
    "your environment",
    "system info",
    "system information",
    "环境",
    "环境信息",
    "运行环境",
];

/// The text of a Markdown heading line ([`atx_level`]) or of a line made only of bold text
/// (`**Environment**:`), lowercased, without a closing `:` or `?`.
fn heading_text(line: &str) -> Option<String> {
    let t = line.trim();
    let text = if let Some(level) = atx_level(line) {
        &t[level as usize..]
    } else {
        t.strip_prefix("**")?
            .trim_end_matches(':')
            .strip_suffix("**")
            .filter(|inner| !inner.contains("**"))?
    };
    Some(
        text.trim()
            .trim_end_matches([':', '?'])
            .trim()
            .to_lowercase(),
    )
}

/// `goal` without the sections of an issue report that describe the reporter's environment: from
/// a heading that names it ([`ENVIRONMENT_HEADINGS`]) to the next heading outside a fence, or to
/// any heading inside a fence that never closes (a report cut short leaves its dump's fence
/// open). What a tool prints there (`Version: 2.4.2`, `OS: linux`, `BIOME_LOG_PATH: unset`)
/// names no code, and in a report cut to its first few hundred characters it fills the term
/// slots the report's own words need. Fences are counted by their ```` ``` ````, as the goal's
/// terms read them; a heading inside a fence that closes is the dump's (`## System:` of
/// `envinfo --markdown`).
fn without_environment(goal: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = goal.split_inclusive('\n').collect();
    // Whether a fence mark follows each line: a fence open there closes later.
    let mut closes_later = vec![false; lines.len()];
    for i in (0..lines.len().saturating_sub(1)).rev() {
        closes_later[i] = closes_later[i + 1] || lines[i + 1].contains("```");
    }
    let mut out = String::new();
    let (mut fence, mut skipping, mut skipped) = (false, false, false);
    for (i, line) in lines.iter().enumerate() {
        let unclosed = fence && !closes_later[i];
        if (!fence || skipping && unclosed)
            && let Some(h) = heading_text(line)
        {
            // The section's fence never closes: it ends here, its opener dropped with it.
            fence = false;
            // `**Environment (please complete the following information):**`
            let named = h.split(" (").next().unwrap_or(&h).trim_end();
            skipping = ENVIRONMENT_HEADINGS.contains(&named);
        }
        fence ^= line.matches("```").count() % 2 == 1;
        if skipping {
            skipped = true;
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    if skipped {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(goal)
    }
}

/// The pieces of a block of the goal outside fences, in order: prose (`false`) and inline code in
/// backticks (`true`); with `skip_frames`, without the clauses of prose that only frame a request.
fn pieces(block: &str, skip_frames: bool) -> Vec<(&str, bool)> {
    let frames = if skip_frames {
        frame_ranges(block)
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    let mut offset = 0;
    for (k, segment) in block.split('`').enumerate() {
        let (start, end) = (offset, offset + segment.len());
        offset = end + 1;
        if k % 2 == 1 {
            out.push((segment, true));
            continue;
        }
        let mut at = start;
        for f in frames.iter().filter(|f| f.start >= start && f.end <= end) {
            out.push((&block[at..f.start], false));
            at = f.end;
        }
        out.push((&block[at..end], false));
    }
    out
}

/// Byte ranges of the clauses of `block` that frame a request ([`is_request_frame`]). A clause
/// ends after `.`, `:`, `?`, `!` or `;` followed by a space or the end, after a full-width `？`,
/// `！`, `。`, `：` or `；`, and at a line break
/// (`xr.where` and `a::b` stay whole); one that quotes code in backticks is about that code.
fn frame_ranges(block: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = block.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut inside, mut quotes) = (0, false, false);
    for (i, c) in block.char_indices() {
        if c == '`' {
            (inside, quotes) = (!inside, true);
            continue;
        }
        let after = i + c.len_utf8();
        // Full-width marks end a clause as they are (no space follows them in CJK text).
        let end = !inside
            && (c == '\n'
                || matches!(c, '？' | '！' | '。' | '：' | '；')
                || (matches!(c, '.' | ':' | '?' | '!' | ';')
                    && bytes.get(after).is_none_or(|n| n.is_ascii_whitespace())));
        if end {
            if !quotes && is_request_frame(&block[start..after]) {
                out.push(start..after);
            }
            (start, quotes) = (after, false);
        }
    }
    if !quotes && start < bytes.len() && is_request_frame(&block[start..]) {
        out.push(start..bytes.len());
    }
    out
}

/// Words that ask: a clause frames a request only when it asks (`Where is the code?`, `Explain
/// the logic.`), not when it introduces what follows (`The following code works:`).
const ASKING_WORDS: &[&str] = &[
    "describe",
    "explain",
    "find",
    "how",
    "locate",
    "look",
    "looking",
    "point",
    "show",
    "tell",
    "understand",
    "what",
    "where",
    "which",
    "why",
];

/// True when `clause` asks ([`ASKING_WORDS`]) and every term of it is a request word: the clause
/// frames the question and says nothing of its topic. A clause with no term is no frame (it has
/// nothing to drop).
fn is_request_frame(clause: &str) -> bool {
    // Code written as code is what the clause asks about (`Where is show()?`, `Point::new`).
    if clause.split_whitespace().any(written_as_code) {
        return false;
    }
    // So is a name: a capitalised word past the clause's first (`Where is the Point class?`,
    // `Which Handle leaks?`); `I` is no name.
    // A list item's bullet or number (`-`, `1)`) is no word: the first word is the first with a
    // letter.
    let named = clause
        .split_whitespace()
        .skip_while(|w| !w.chars().any(char::is_alphabetic))
        .skip(1)
        .any(|w| {
            let w = w.trim_start_matches(|c: char| !c.is_alphanumeric());
            // (The goal's typographic apostrophes are plain ones by now: `I’m` is `I'm`.)
            w.chars().next().is_some_and(char::is_uppercase) && w != "I" && !w.starts_with("I'")
        });
    if named {
        return false;
    }
    let asks = clause
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ASKING_WORDS.iter().any(|a| a.eq_ignore_ascii_case(w)));
    if !asks {
        return false;
    }
    let mut any = false;
    let mut all = true;
    for_each_term(clause, &mut |t| {
        any = true;
        all &= REQUEST_TERMS.contains(t);
    });
    any && all
}

/// Calls `add(text, keep_stop_words)` for each whitespace-separated chunk of prose, and for
/// each stop word a chunk written as code names whole: `where` of `xr.where`, not `get` of
/// `getStopTime`, which matches every getter. With `members_only` (a fenced snippet, where
/// `it.name`, `this.x` and `if(x)` are everywhere), only a stop word after `.`, `::` or `->`.
fn for_each_prose_term(segment: &str, members_only: bool, add: &mut impl FnMut(&str, bool)) {
    for chunk in segment.split_whitespace() {
        add(chunk, false);
        if written_as_code(chunk) {
            for_each_identifier(chunk, &mut |ident| {
                let before = &chunk[..ident.as_ptr() as usize - chunk.as_ptr() as usize];
                let member =
                    before.ends_with('.') || before.ends_with("::") || before.ends_with("->");
                if (member || !members_only) && is_stop_word(&ident.to_lowercase()) {
                    add(ident, true);
                }
            });
        }
    }
}

/// The content of a fenced block (the text between two ```` ``` ````), without its info string:
/// a first line that is empty, or a language tag (`kotlin`, `c++`) followed by nothing but
/// attributes (`title="app.py"`, `{1,3}`). A first line of content (`panic!`, `foo()`) stays.
fn fence_body(block: &str) -> &str {
    let Some((first, rest)) = block.split_once('\n') else {
        return block;
    };
    let mut words = first.split_whitespace();
    let tag = words.next().is_none_or(|w| {
        w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '+' | '#' | '.' | '-' | '_'))
    });
    let attributes = words.all(|w| w.contains('=') || w.starts_with('{'));
    if tag && attributes { rest } else { block }
}

/// True when a part of an identifier of `text` is a stop word (`Fixed`, `is_empty`, `where`).
fn has_stop_word(text: &str) -> bool {
    let mut found = false;
    for_each_identifier(text, &mut |ident| {
        found |= split_parts(ident).any(|p| is_stop_word(&p.to_lowercase()));
    });
    found
}

/// True when a word of a goal is written as code: a call (`where(`), a member or path
/// (`xr.where`, `Series::get`, `obj->any`), not a URL, a path, a version (`3.10`) or a
/// conventional commit's prefix.
fn written_as_code(chunk: &str) -> bool {
    // A conventional commit's type and scope (`fix(parser):`) is no call.
    if chunk.contains("://")
        || chunk.contains('/')
        || chunk.ends_with("):")
        || chunk.ends_with(")!:")
    {
        return false;
    }
    let b = chunk.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (1..b.len()).any(|i| {
        let (prev, c) = (b[i - 1], b[i]);
        let next = b.get(i + 1).copied().unwrap_or(b' ');
        (c == b'(' && word(prev))
            || (c == b'.' && word(prev) && next.is_ascii_alphabetic())
            || (c == b':' && next == b':' && word(prev))
            || (c == b'-' && next == b'>' && word(prev))
    })
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

/// The search for the heads of the goal's terms ([`prefilter_heads`]) in a line.
enum Prefilter {
    /// SIMD packed search (Teddy) for the heads' [`casings`]: case-sensitive, so it needs three
    /// patterns a head, and Teddy takes a few dozen patterns at most.
    Packed(aho_corasick::packed::Searcher),
    /// An ASCII-case-insensitive automaton, for more heads than that: a byte at a time, about
    /// 2.5 times slower on code (1 MiB of Rust: 2.5 ms against 1.0 ms).
    Automaton(aho_corasick::AhoCorasick),
}

impl Prefilter {
    /// The search for `heads` (lowercase ASCII), `None` when it cannot be built.
    fn new(heads: &[String]) -> Option<Prefilter> {
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
    fn is_match(&self, line: &str) -> bool {
        match self {
            Prefilter::Packed(p) => p.find(line).is_some(),
            Prefilter::Automaton(a) => a.is_match(line),
        }
    }
}

/// The Kelvin sign, the one character outside ASCII whose lowercase is ASCII (`k`).
const KELVIN: &str = "\u{212A}";

/// The spellings a lowercase ASCII head can have where an identifier part starts: `par`, `Par`,
/// `PAR`. [`split_camel`] cuts a part wherever a lowercase letter or a digit meets an uppercase
/// one, so the ASCII letters a part starts with are lowercase, capitalised or all capitals, and
/// no mixed spelling (`pAr`) can start one: searching these three, case-sensitively, finds every
/// line the case-insensitive search would that can hold a term (but for the Kelvin sign, which
/// [`Prefilter::new`] adds; given it, all three spellings are the sign itself).
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
fn prefilter_heads(t: &str) -> Vec<String> {
    let first = t.split('_').find(|p| !p.is_empty()).unwrap_or(t);
    let head: String = first.chars().take(3).collect();
    let mut heads = vec![head.clone()];
    if head.ends_with('y') {
        heads.push(format!("{}i", &head[..head.len() - 1]));
    }
    heads
}

/// Calls `emit` with every normalised term of `text`: each identifier part (lowercase, stemmed,
/// stop words and one-letter parts dropped) and, for compound identifiers (`parse_header`,
/// `parseHeader`, `parse-header`), the whole identifier as lowercase parts joined by `_`.
pub(crate) fn for_each_term(text: &str, emit: &mut dyn FnMut(&str)) {
    for_each_term_keeping(text, false, emit);
}

/// [`for_each_term`], keeping stop words when `keep_stop_words` (code quoted in a goal: `Fixed`,
/// `is_empty`; and lines, when the goal has such terms).
fn for_each_term_keeping(text: &str, keep_stop_words: bool, emit: &mut dyn FnMut(&str)) {
    let mut part = String::new();
    let mut compound = String::new();
    for_each_identifier(text, &mut |ident| {
        emit_identifier(ident, &mut part, &mut compound, keep_stop_words, emit)
    });
}

/// Calls `emit` with each identifier of `text` (a run of word bytes, inner dashes included).
fn for_each_identifier<'t>(text: &'t str, emit: &mut dyn FnMut(&'t str)) {
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
fn emit_identifier(
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
static STOP_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    STOP_WORDS_EN
        .iter()
        .chain(STOP_WORDS_FR)
        .chain(STOP_WORDS_REPORT)
        .copied()
        .collect()
});

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

    /// The goal's terms, in order.
    fn goal_terms_of(goal: &str) -> Vec<String> {
        let q = Query::new(goal, true);
        let mut terms: Vec<(&String, &usize)> = q.index.iter().collect();
        terms.sort_by_key(|(_, t)| **t);
        terms.into_iter().map(|(t, _)| t.clone()).collect()
    }

    #[test]
    fn an_issue_reports_environment_section_gives_no_terms() {
        let report = "Formatter drops comments in blocks\n\n### Environment information\n\n\
                      <details>\n\n```bash\nCLI:\n  Version: 2.4.2\nPlatform:\n  OS: linux\n\
                      ## not a heading inside the fence\n```\n</details>\n\n\
                      ### What happened?\n\nThe `lone_block` rule removes it.";
        let terms = goal_terms_of(report);
        for kept in [
            "formatter",
            "comment",
            "block",
            "lone_block",
            "rule",
            "remov",
        ] {
            assert!(terms.iter().any(|t| t == kept), "{kept}: {terms:?}");
        }
        for dropped in ["cli", "platform", "linux", "heading", "fenc"] {
            assert!(!terms.iter().any(|t| t == dropped), "{dropped}: {terms:?}");
        }
        // Bold headings too, to the next one; a `Version` section may be the topic and stays.
        let terms = goal_terms_of(
            "Base image for Java 21\n**Environment**:\n- Build tool: Maven\n\
             **Description**:\nselects Java 17\n## Version\ntokio02 = { package = \"tokio\" }",
        );
        assert!(!terms.iter().any(|t| t == "maven"), "{terms:?}");
        for kept in ["base", "imag", "java", "select", "tokio02", "packag"] {
            assert!(terms.iter().any(|t| t == kept), "{kept}: {terms:?}");
        }
        // A goal made only of an environment section still has its terms, and a request's
        // framing still gives none.
        assert!(!goal_terms_of("## Environment\nOS: linux").is_empty());
        let terms = goal_terms_of("Please fix this.\n## Environment\nOS: linux");
        assert!(terms.contains(&"linux".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"pleas".to_owned()), "{terms:?}");
    }

    #[test]
    fn a_heading_that_is_the_bug_is_no_environment_section() {
        for report in [
            "Title\n## `RUST_LOG` environment variable ignored\nparse_config drops it",
            "Title\n### Filesystem information\nparse_config drops it",
            "Title\n**Only fails in the CI environment, locally fine**\nparse_config drops it",
            "# Environment variables not expanded\nparse_config drops it",
        ] {
            let terms = goal_terms_of(report);
            assert!(
                terms.contains(&"parse_config".to_owned()),
                "{report}: {terms:?}"
            );
        }
        let terms = goal_terms_of(
            "Title\n**Environment (please complete the following information):**\n\
             - OS: Fedora\n**Describe the bug**\nparse_config drops it",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"fedora".to_owned()), "{terms:?}");
    }

    #[test]
    fn an_environment_dump_left_open_ends_at_the_next_section() {
        let terms = goal_terms_of(
            "Title\n### Environment\n```\nOS: linux\n### What happened\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"linux".to_owned()), "{terms:?}");
        // So does a bold heading, in a fence that never closes.
        let terms = goal_terms_of(
            "Title\n**Environment**\n```\nOS: fedora\n**Describe the bug**\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"fedora".to_owned()), "{terms:?}");
        // In a fence that closes, a heading is the dump's (`envinfo --markdown`), and both
        // environment sections go.
        let terms = goal_terms_of(
            "Title\n### Environment\n```\n## System:\n - OS: macOS 14\n## Binaries:\n\
             - Node: 18.1\n```\n### What happened\nparse_config panics\n### Environment\n\
             OS: fedora",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        for dropped in ["system", "mac", "binari", "node", "fedora"] {
            assert!(!terms.contains(&dropped.to_owned()), "{dropped}: {terms:?}");
        }
        // A fence opened mid-line is a fence too, as the goal's terms count them.
        let terms = goal_terms_of(
            "Title\n### Environment\nLogs: ```\n# not a heading\n```\nOS: linux\n\
             ### What happened\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"linux".to_owned()), "{terms:?}");
    }

    #[test]
    fn a_clause_that_only_frames_a_request_gives_no_terms() {
        assert_eq!(
            goal_terms_of("Where in this file is the code that handles this: retry the upload"),
            ["retry", "upload"]
        );
        assert_eq!(
            goal_terms_of(
                "I need to understand the logic behind this change: cache tokens. Which part of this file implements it?"
            ),
            ["cach", "token"]
        );
        assert_eq!(
            goal_terms_of("Find the function responsible for the following. Parse headers"),
            ["pars", "header"]
        );
        // A clause with a word of its own is the topic, request words and all.
        assert_eq!(
            goal_terms_of("Fix file handle leak"),
            ["file", "handl", "leak"]
        );
        // Code quoted in a clause is what it asks about.
        assert_eq!(
            goal_terms_of("Where is `handle_file` defined?"),
            ["handl", "file", "handle_file", "defin"]
        );
        // So is a name written as code without backticks.
        assert_eq!(
            goal_terms_of("Where is show() defined? retry the upload"),
            ["show", "defin", "retry", "upload"]
        );
        // Non-ASCII text, `\r\n` and an unclosed backtick end or hold clauses safely.
        assert_eq!(
            goal_terms_of("Où est le code qui gère ça?\r\nWhere is the code? réessayer `l'envoi"),
            ["code", "gère", "ça", "réessayer", "envoi"]
        );
        // A typographic apostrophe splits a word as an ASCII one does.
        assert_eq!(
            goal_terms_of("Where’s the retry? It doesn’t stop"),
            goal_terms_of("Where's the retry? It doesn't stop")
        );
        assert_eq!(goal_terms_of("It doesn’t retry"), ["retry"]);
        // A goal made only of request words keeps them: they are all it says.
        assert_eq!(
            goal_terms_of("Show the file handling."),
            ["show", "file", "handl"]
        );
        // Typographic quotes separate words too; a full-width low line joins them as `_` does.
        assert_eq!(
            goal_terms_of("序列化“JSONType”无效…a＿b"),
            ["序列化", "json", "type", "json_type", "无效", "a＿b"]
        );
        // Full-width punctuation separates words wherever it stands, after a dash too.
        assert_eq!(
            goal_terms_of("序列化（JSONType）无效，max-，retry。"),
            [
                "序列化",
                "json",
                "type",
                "json_type",
                "无效",
                "max",
                "retry"
            ]
        );
        // Full-width marks end a clause too.
        assert_eq!(
            goal_terms_of("Where is the code？retry the upload"),
            ["retry", "upload"]
        );
        // A list item's bullet or number is no word, and `I’m` no name.
        assert_eq!(
            goal_terms_of("- Where is the code? retry the upload"),
            ["retry", "upload"]
        );
        assert_eq!(
            goal_terms_of("1) Where’s the code I’m after? retry the upload"),
            ["retry", "upload"]
        );
        // A name capitalised in prose is what the clause asks about, request word or not.
        assert_eq!(
            goal_terms_of("Where is the Point class? It moves on resize"),
            ["point", "class", "move", "resiz"]
        );
        assert_eq!(
            goal_terms_of("Where do I find the code that handles this: retry the upload"),
            ["retry", "upload"]
        );
        // A dot inside a name (`retry.Show`) does not end a clause.
        assert_eq!(
            goal_terms_of("Where is the code? Explain retry.Show"),
            ["explain", "retry", "show"]
        );
    }

    #[test]
    fn a_fenced_block_is_a_snippet_not_a_quoted_name() {
        let goal = "Space after suspend\n\n```kotlin\nval f: suspend(Long) -> Unit\nfor (x in xs) { if (x == null) return it }\nval y = xr.where(c)\n```\n\nSee `where` too.";
        let q = Query::new(goal, true);
        // The reporter's `for`, `if`, `in` and `it` are no terms, nor is the language tag.
        for line in [
            "    for (i in 0 until n) {",
            "        if (it.isEmpty()) {",
            "import org.jetbrains.kotlin.psi.KtFile",
        ] {
            assert_eq!(q.mask(line), 0, "{line}");
        }
        // Its names are, and so is a stop word it calls as code.
        assert_ne!(q.mask("fun suspendModifier(node: ASTNode) {"), 0);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
        // An unclosed fence (a report cut at 600 characters) is a snippet too.
        let q = Query::new(
            "Crash\n```\nfor (x in xs) { if (x == null) return it }",
            true,
        );
        assert_eq!(q.mask("        if (it.isEmpty()) {"), 0);
        // A one-line fence has no tag to drop, and quotes like backticks do.
        let q = Query::new("Crash in ```parse_header(x)```", true);
        assert_ne!(q.mask("fn parse_header(line: &str) {"), 0);
        let q = Query::new("```where``` drops attributes", true);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
        // In a snippet, `it.`, `this.`, `if(` and `for(` name nothing; a member call does.
        let q = Query::new(
            "Wrong\n```kotlin\nlist.forEach { it.name }\nif(this.ok) for(x in y) app.use(z)\n```",
            true,
        );
        for line in ["        if (it.isEmpty()) {", "    for (i in 0 until n) {"] {
            assert_eq!(q.mask(line), 0, "{line}");
        }
        assert_ne!(q.mask("app.use = function use(fn) {"), 0);
        // An info string with attributes is no content; a first line of code is.
        let q = Query::new("Crash\n```python title=\"app.py\"\nparse(x)\n```", true);
        assert_eq!(q.mask("import python_title"), 0);
        let q = Query::new("Crash\n```render_table()\nparse(x)\n```", true);
        assert_ne!(q.mask("fn render_table() {"), 0);
    }

    #[test]
    fn a_quoted_stop_word_stemmed_still_matches() {
        let q = Query::new("`where` drops attributes", true);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
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
