//! Evidence pasted into a goal: what an agent or an issue reporter copies from a failure. Four
//! kinds are found, and each points at lines of the text more surely than the goal's words do:
//!
//! - **source lines** a traceback quotes (pytest's `>   raise ValueError(...)`, the indented line
//!   under a Python `File "...", line N, in f` frame) or a fenced block holds: a text line that is
//!   exactly one of them is where the failure ran;
//! - **inline code** in backticks (`` `cfg.method.upper()` ``): a text line that holds it;
//! - **frames** (`src/click/core.py:3113: in get_help_extra`, `File "x.py", line 3, in parse`,
//!   `12: krate::de::parse_value`, `at Parser.parse (lib/parse.js:12:5)`): the definitions they
//!   name were on the failing path (frames in installed libraries and the standard library, and
//!   `__dunder__` names, say nothing about the text);
//! - **messages**: a string literal of the text whose words (between format placeholders such as
//!   `{}`, `%s`, `${x}`) a goal that pastes a failure or quotes a message repeats, as in
//!   `E  ValueError: cannot compare to string` for `raise ValueError("cannot compare to string")`.
//!
//! Owns reading the goal for that evidence and finding the lines and names it points at. It must
//! never decide what to keep (the strategies weigh it, and drop evidence found on too many lines
//! to tell them apart), and never match by a goal's words one at a time (that is `terms`').

use super::docs::fence_end;
use super::draft::trimmed;
use super::terms::for_each_term;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A quoted source line, inline code or a message fragment shorter than this many bytes is too
/// common to be evidence (`return x`, `"a b c"`).
const MIN_EVIDENCE_BYTES: usize = 12;
/// A message fragment must hold at least this many words: one word is a term, not a message.
const MIN_MESSAGE_WORDS: usize = 3;
/// A quoted phrase longer than this many bytes is a pasted message, not a phrase.
const MAX_PHRASE_BYTES: usize = 120;
/// At most this many inline code snippets are looked for.
const MAX_SNIPPETS: usize = 8;
/// A `{` placeholder closes within this many bytes, or it is not one (bounds the work on a
/// literal full of braces).
const MAX_PLACEHOLDER_BYTES: usize = 64;
/// Frames in these places are library code, not the text's: site packages, the interpreter's
/// own library, Node's internals and modules, the JDK, Rust's standard library sources.
const LIBRARY_PATHS: &[&str] = &[
    "site-packages",
    "dist-packages",
    "/lib/python",
    "<frozen",
    "node_modules",
    "node:internal",
    "java.base/",
    "/rustc/",
];
/// Rust backtrace frames in these crates are the standard library's.
const LIBRARY_CRATES: &[&str] = &["std::", "core::", "alloc::"];

/// What a goal's pasted failure says, ready to be matched against lines.
pub(crate) struct Evidence {
    /// Source lines the goal quotes (traceback source lines, fenced lines), trimmed, each with
    /// its index: the caller counts the lines each is found on.
    quoted: HashMap<String, usize>,
    /// Byte lengths of the `quoted` lines: most text lines fail this test before any hashing.
    quoted_lens: HashSet<usize>,
    /// Names of the functions in the goal's traceback frames.
    frames: HashSet<String>,
    /// Code the goal quotes inline in backticks (`` `cfg.method = x` ``: at least
    /// [`MIN_EVIDENCE_BYTES`], with punctuation other than `-` and `_`, which a name such as
    /// `content-length` has).
    snippets: Vec<String>,
    /// The goal's words, lowercased, each with a space on both sides: a fragment is looked for
    /// as ` its words `, so `shrink below it` does not match `shrink below its gutter`.
    flat: String,
    /// Every run of three consecutive words of `flat` when the goal pastes a failure or quotes
    /// a message (empty otherwise: a plain question's words are not a message): a fragment whose
    /// first three words are not among them cannot occur in it.
    trigrams: HashSet<String>,
    /// What the goal puts between quotes or backticks outside fenced blocks (`"in to"`,
    /// `'with in'`, `` `time::Duration` ``), at most [`MAX_SNIPPETS`]: in prose, the words a
    /// typo or a wrong example is made of, stop words included, looked for verbatim.
    phrases: Vec<Phrase>,
}

/// A phrase the goal quotes, ready to be found as whole words.
struct Phrase {
    /// The phrase as quoted.
    text: String,
    /// The phrase with its first letter's case swapped, when it starts with an ASCII letter: a
    /// sentence may start with the words the goal quotes in lower case (`"its"`, `Its value`).
    flipped: Option<String>,
    /// The phrase starts with a word character, so the text must not continue a word before it.
    open: bool,
    /// The phrase ends with a word character, so the text must not continue a word after it.
    close: bool,
}

impl Phrase {
    fn new(text: &str) -> Phrase {
        let flipped = text
            .chars()
            .next()
            .filter(char::is_ascii_alphabetic)
            .map(|c| {
                let mut f = String::with_capacity(text.len());
                f.push(if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                });
                f.push_str(&text[1..]);
                f
            });
        Phrase {
            text: text.to_owned(),
            flipped,
            open: text.starts_with(is_word),
            close: text.ends_with(is_word),
        }
    }

    /// The spellings looked for, each with its bit offset: as quoted (0), and with the first
    /// letter's case swapped ([`FLIPPED_BIT`]).
    fn spellings(&self) -> impl Iterator<Item = (u32, &str)> {
        std::iter::once((0, self.text.as_str()))
            .chain(self.flipped.as_deref().map(|f| (FLIPPED_BIT, f)))
    }

    /// True when `line` holds `spelling` (one of [`Phrase::spellings`]) as whole words.
    fn whole_in(&self, line: &str, spelling: &str) -> bool {
        line.match_indices(spelling).any(|(at, _)| {
            !(self.open && ends_word(&line[..at])
                || self.close && starts_word(&line[at + spelling.len()..]))
        })
    }
}

/// Bit `k + FLIPPED_BIT` of a line's phrase bits: the line holds the `k`-th phrase with its first
/// letter's case swapped (bit `k`: as quoted). Above every phrase's own bit ([`MAX_SNIPPETS`]).
const FLIPPED_BIT: u32 = 16;
const _: () =
    assert!(MAX_SNIPPETS <= FLIPPED_BIT as usize && FLIPPED_BIT as usize + MAX_SNIPPETS <= 32);

/// A letter, digit or `_`: a character words and identifiers are made of.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// True when `before` ends inside a word: a word character, or `-` right after one (`log-` of
/// `log-in to`).
fn ends_word(before: &str) -> bool {
    before.ends_with(is_word)
        || before
            .strip_suffix('-')
            .is_some_and(|b| b.ends_with(is_word))
}

/// True when `after` continues a word: a word character, or `-` and one (`-with-lease` after
/// `--force`).
fn starts_word(after: &str) -> bool {
    after.starts_with(is_word)
        || after
            .strip_prefix('-')
            .is_some_and(|a| a.starts_with(is_word))
}

impl Evidence {
    /// Reads the goal for quoted source lines, fenced blocks, inline code, frames and the words
    /// messages are matched in.
    pub(crate) fn new(goal: &str) -> Evidence {
        let lines: Vec<&str> = goal.lines().collect();
        let mut quoted: HashMap<String, usize> = HashMap::default();
        let mut quote = |s: &str| {
            if s.len() >= MIN_EVIDENCE_BYTES && !quoted.contains_key(s) {
                let next = quoted.len();
                quoted.insert(s.to_owned(), next);
            }
        };
        let mut frames = HashSet::default();
        let mut outside = String::new();
        let mut after_python_frame = false;
        let mut failure = false;
        let mut i = 0;
        while i < lines.len() {
            let t = trimmed(lines[i]);
            // A fenced block (``` or ~~~) quotes code line by line.
            if let Some(end) = fence_end(&lines, i) {
                for line in &lines[i + 1..end] {
                    let u = line.trim();
                    if !u.chars().all(|c| c == '`' || c == '~') {
                        quote(u);
                    }
                }
                failure = true;
                after_python_frame = false;
                i = end;
                continue;
            }
            i += 1;
            outside.push_str(lines[i - 1]);
            outside.push('\n');
            if let Some(frame) = frame(t) {
                failure = true;
                if let Some(name) = frame.filter(|n| !(n.starts_with("__") && n.ends_with("__"))) {
                    frames.insert(name.to_owned());
                }
                after_python_frame = t.starts_with("File \"");
                continue;
            }
            // pytest marks the failing source line with `>`; a Python traceback indents it under
            // its frame.
            // (pytest's marker is followed by three spaces at least; a Markdown quote's by one.)
            let source = match t.strip_prefix('>') {
                Some(rest) if rest.starts_with("   ") => Some(rest.trim()),
                _ if after_python_frame => Some(t),
                _ => None,
            };
            after_python_frame = false;
            if let Some(s) = source {
                failure = true;
                quote(s);
            }
            failure |= is_error_line(t);
        }
        let snippets: Vec<String> = outside
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::trim)
            .filter(|c| {
                c.len() >= MIN_EVIDENCE_BYTES
                    && !c.contains('\n')
                    && c.contains(|ch: char| !(ch.is_alphanumeric() || "_- ".contains(ch)))
            })
            .take(MAX_SNIPPETS)
            .map(str::to_owned)
            .collect();
        // A message quoted in the goal ("...", '...', `...`) counts like a pasted failure.
        failure |= literals(&outside).any(could_be_message);
        let mut phrases: Vec<Phrase> = Vec::new();
        for lit in literals(&outside).map(str::trim) {
            if !lit.is_empty()
                && lit.len() <= MAX_PHRASE_BYTES
                && !lit.contains('\n')
                && !phrases.iter().any(|p| p.text == lit)
                && phrases.len() < MAX_SNIPPETS
            {
                phrases.push(Phrase::new(lit));
            }
        }
        let mut flat = String::from(" ");
        push_words(goal, usize::MAX, &mut flat);
        flat.push(' ');
        let trigrams = if failure {
            let w: Vec<&str> = flat.split_whitespace().collect();
            w.windows(3).map(|t| t.join(" ")).collect()
        } else {
            HashSet::default()
        };
        Evidence {
            quoted_lens: quoted.keys().map(String::len).collect(),
            quoted,
            frames,
            snippets,
            flat,
            trigrams,
            phrases,
        }
    }

    /// How many phrases the goal quotes ([`Evidence::phrases_in`] sets bits below it, and the same
    /// bits shifted by `FLIPPED_BIT` for the case-swapped spellings).
    pub(crate) fn phrase_count(&self) -> usize {
        self.phrases.len()
    }

    /// Bit `k` set when `line` holds the goal's `k`-th quoted phrase verbatim as whole words
    /// (`in to` is in `put it in to the box`, not in `within together`; `--force` is not in
    /// `--force-with-lease`); bit `k + FLIPPED_BIT` when it holds it with its first letter's case
    /// swapped (`In to`), which [`Evidence::prefer_verbatim`] keeps only for a phrase not found as
    /// quoted.
    pub(crate) fn phrases_in(&self, line: &str) -> u32 {
        self.phrase_bits(|p, s| p.whole_in(line, s))
    }

    /// [`Evidence::phrases_in`] for a phrase of several words wrapped from the end of `line` to
    /// the start of `next` (`... put it in` / `to the box`).
    pub(crate) fn phrases_across(&self, line: &str, next: &str) -> u32 {
        let (line, next) = (line.trim_end(), next.trim_start());
        self.phrase_bits(|p, s| {
            s.match_indices(' ').any(|(at, _)| {
                let (head, tail) = (&s[..at], s[at + 1..].trim_start());
                !head.is_empty()
                    && !tail.is_empty()
                    && line
                        .strip_suffix(head)
                        .is_some_and(|b| !(p.open && ends_word(b)))
                    && next
                        .strip_prefix(tail)
                        .is_some_and(|a| !(p.close && starts_word(a)))
            })
        })
    }

    /// Bit `k` (or `k + FLIPPED_BIT` for the case-swapped spelling) set for each spelling of the
    /// `k`-th phrase that `found` finds.
    fn phrase_bits(&self, found: impl Fn(&Phrase, &str) -> bool) -> u32 {
        let mut bits = 0;
        for (k, p) in self.phrases.iter().enumerate() {
            for (offset, s) in p.spellings() {
                if found(p, s) {
                    bits |= 1 << (k as u32 + offset);
                }
            }
        }
        bits
    }

    /// Clears, in every line's phrase bits, the case-swapped bit of each phrase some line holds
    /// as quoted: `"it's"` found as quoted does not also point at every `It's`.
    pub(crate) fn prefer_verbatim(found: &mut [u32]) {
        let verbatim = found.iter().fold(0, |all, bits| all | bits) & ((1 << FLIPPED_BIT) - 1);
        for bits in found {
            *bits &= !(verbatim << FLIPPED_BIT);
        }
    }

    /// True when nothing in the goal is evidence: no quoted line, frame, inline code, and no
    /// pasted failure or quoted message for string literals to repeat.
    pub(crate) fn is_empty(&self) -> bool {
        self.quoted.is_empty()
            && self.frames.is_empty()
            && self.snippets.is_empty()
            && self.trigrams.is_empty()
    }

    /// True when a frame of the goal names `name`.
    pub(crate) fn names(&self, name: &str) -> bool {
        self.frames.contains(name)
    }

    /// How many source lines the goal quotes ([`Evidence::quoted_in`] returns indices below it).
    pub(crate) fn quoted_count(&self) -> usize {
        self.quoted.len()
    }

    /// The index of the quoted source line that `line` is (trimmed), if any.
    pub(crate) fn quoted_in(&self, line: &str) -> Option<usize> {
        let t = trimmed(line);
        if !self.quoted_lens.contains(&t.len()) {
            return None;
        }
        self.quoted.get(t).copied()
    }

    /// True when the goal quotes inline code ([`Evidence::snippets_in`] can find something).
    pub(crate) fn has_snippets(&self) -> bool {
        !self.snippets.is_empty()
    }

    /// Bit `k` set when `line` holds the goal's `k`-th inline code snippet verbatim (0 when the
    /// goal has none).
    pub(crate) fn snippets_in(&self, line: &str) -> u32 {
        self.snippets
            .iter()
            .enumerate()
            .filter(|(_, s)| memchr::memmem::find(line.as_bytes(), s.as_bytes()).is_some())
            .fold(0, |bits, (k, _)| bits | 1 << k)
    }

    /// True when `line` holds a string literal whose words the goal repeats (a goal that pastes
    /// a failure or quotes a message; never a plain question).
    pub(crate) fn says_message(&self, line: &str) -> bool {
        !self.trigrams.is_empty()
            && literals(line).any(|lit| could_be_message(lit) && self.repeats(lit))
    }

    /// True when a fragment of the literal `lit` between its format placeholders, of at least
    /// [`MIN_MESSAGE_WORDS`] words and with a word of four letters that is not a stop word,
    /// occurs in the goal.
    fn repeats(&self, lit: &str) -> bool {
        let mut buf = String::new();
        fragments(lit).any(|frag| {
            if !could_be_message(frag) {
                return false;
            }
            buf.clear();
            push_words(frag, MIN_MESSAGE_WORDS, &mut buf) == MIN_MESSAGE_WORDS
                && self.trigrams.contains(buf.as_str())
                && {
                    buf.clear();
                    buf.push(' ');
                    push_words(frag, usize::MAX, &mut buf);
                    buf.push(' ');
                    self.flat.contains(buf.as_str())
                }
                && {
                    let mut topical = false;
                    for_each_term(frag, &mut |t| topical |= t.chars().count() >= 4);
                    topical
                }
        })
    }
}

/// A line a failure prints: an exception or error line (`E   ...`, `ValueError: ...`,
/// `error[E0308]: ...`, `thread 'main' panicked at ...`, `Traceback (most recent call last):`).
fn is_error_line(t: &str) -> bool {
    let head = t.split(':').next().unwrap_or("");
    t.starts_with("E   ")
        || t.starts_with("Traceback (")
        || t.contains(" panicked at ")
        || (t.contains(':')
            && !head.contains(char::is_whitespace)
            && (head.ends_with("Error")
                || head.ends_with("Exception")
                || head.starts_with("error")))
}

/// Appends the first `n` words of `s` to `out`, lowercased and separated by single spaces (the
/// goal's `flat` form, without allocating per word); returns how many there were.
fn push_words(s: &str, n: usize, out: &mut String) -> usize {
    let mut count = 0;
    for w in s
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .take(n)
    {
        if count > 0 {
            out.push(' ');
        }
        out.extend(w.chars().flat_map(char::to_lowercase));
        count += 1;
    }
    count
}

/// A cheap test before any allocation: long enough, and with the spaces of three words.
fn could_be_message(s: &str) -> bool {
    s.len() >= MIN_EVIDENCE_BYTES
        && memchr::memchr_iter(b' ', s.as_bytes())
            .nth(MIN_MESSAGE_WORDS - 2)
            .is_some()
}

/// For each line, whether it holds a piece of evidence (bit `k` of `found[line]`: the line holds
/// the `k`-th snippet or phrase, or a phrase's case-swapped spelling on its own bit) that is found
/// on at most `max_lines` lines: evidence found on more lines (`if err != nil {`, `"it's"`) tells
/// none of them apart.
pub(crate) fn telling_lines(found: &[u32], max_lines: usize) -> Vec<bool> {
    let mut count = [0usize; 32];
    for &bits in found {
        let mut b = bits;
        while b != 0 {
            count[b.trailing_zeros() as usize] += 1;
            b &= b - 1;
        }
    }
    let telling = (0..32)
        .filter(|&k| (1..=max_lines).contains(&count[k]))
        .fold(0u32, |bits, k| bits | 1 << k);
    found.iter().map(|bits| bits & telling != 0).collect()
}

/// A pytest traceback frame location, `src/pkg/mod.py:402: in define`: its path and function.
/// Neither holds whitespace, and the path has a `/` or a `.` (prose such as "At 10:30: in the
/// morning" is not a frame).
pub(crate) fn pytest_frame(line: &str) -> Option<(&str, &str)> {
    let (location, function) = line.trim().split_once(": in ")?;
    let (path, number) = location.rsplit_once(':')?;
    let function = function.trim_end();
    (!path.is_empty()
        && !path.contains(char::is_whitespace)
        && (path.contains('/') || path.contains('.'))
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && !function.is_empty()
        && !function.contains(char::is_whitespace))
    .then_some((path, function))
}

/// A traceback frame: `Some(Some(name))` for the function it names, `Some(None)` for a frame
/// that names nothing of the text (a library frame, `<module>`), `None` for any other line.
/// Forms: pytest's `path:12: in name`, Python's `File "path", line 12, in name`, Rust's backtrace
/// `3: krate::module::Type<T>::name`, JavaScript's `at obj.name (path:12:5)` and Java's
/// `at pkg.Class.name(File.java:12)`.
fn frame(t: &str) -> Option<Option<&str>> {
    let library = |path: &str| LIBRARY_PATHS.iter().any(|p| path.contains(p));
    if let Some((path, name)) = pytest_frame(t) {
        return Some((!library(path)).then(|| trailing_ident(name)).flatten());
    }
    if let Some(rest) = t.strip_prefix("File \"")
        && let Some((path, after)) = rest.split_once('"')
        && after.starts_with(", line ")
    {
        let name = after.rsplit_once(", in ").map(|(_, n)| n.trim());
        return Some(name.filter(|_| !library(path)).and_then(trailing_ident));
    }
    if let Some((n, path)) = t.split_once(": ")
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && path.contains("::")
        && !path.contains(char::is_whitespace)
    {
        // A Rust backtrace: `12: serde_json::de::Deserializer<R>::parse_value`.
        if LIBRARY_CRATES.iter().any(|c| path.starts_with(c)) {
            return Some(None);
        }
        return Some(
            path.rsplit("::")
                .find(|seg| !seg.starts_with('{') && !seg.starts_with('<'))
                .and_then(|seg| trailing_ident(seg.split('<').next().unwrap_or(seg))),
        );
    }
    let call = t.strip_prefix("at ")?;
    let call = call.strip_prefix("new ").unwrap_or(call);
    let (callee, location) = call.split_once('(')?;
    // One token, then a location: `(path:line:col)` or `(File.java:12)`.
    let callee = callee.trim_end();
    if callee.is_empty()
        || callee.contains(char::is_whitespace)
        || !location.trim_end().ends_with(')')
        || !location.contains(':')
    {
        return None;
    }
    Some(
        (!library(location))
            .then(|| trailing_ident(callee))
            .flatten(),
    )
}

/// The identifier that ends `s` (`name` of `obj.name`, of `pub fn name`), if any: letters,
/// digits, `_` and `$`, not starting with a digit.
pub(crate) fn trailing_ident(s: &str) -> Option<&str> {
    let s = s.trim_end();
    let start = s
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |(k, c)| k + c.len_utf8());
    let name = &s[start..];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// The string literals of a line (`"..."`, `'...'`, `` `...` ``), without their quotes. An
/// apostrophe inside a word (`don't`, `café's`) does not open a literal; escapes are skipped
/// over.
fn literals(line: &str) -> impl Iterator<Item = &str> {
    let b = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(k) = memchr::memchr3(b'"', b'\'', b'`', &b[i.min(b.len())..]) {
            i += k;
            let q = b[i];
            let in_word = q == b'\''
                && line[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
            i += 1;
            if in_word {
                continue;
            }
            let start = i;
            loop {
                match memchr::memchr2(q, b'\\', &b[i.min(b.len())..]) {
                    Some(k) if b[i + k] == q => {
                        i += k;
                        break;
                    }
                    Some(k) => i += k + 2,
                    None => {
                        i = b.len();
                        break;
                    }
                }
            }
            let end = i.min(b.len());
            i += 1;
            return Some(&line[start..end]);
        }
        None
    })
}

/// A literal cut at its format placeholders (`{...}`, `${...}`, `%s`, `%-5.2f`, `%v`) and escapes
/// (`\n`): the pieces a rendered message shows verbatim.
fn fragments(lit: &str) -> impl Iterator<Item = &str> {
    let b = lit.as_bytes();
    let (mut start, mut i, mut done) = (0, 0, false);
    let close = |from: usize| {
        let window = &b[from..(from + MAX_PLACEHOLDER_BYTES).min(b.len())];
        memchr::memchr(b'}', window).map(|k| k + 1)
    };
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        while i < b.len() {
            let cut = match b[i] {
                b'{' => close(i),
                b'$' if b.get(i + 1) == Some(&b'{') => close(i),
                b'%' => {
                    let spec = b[i + 1..]
                        .iter()
                        .position(|c| !matches!(c, b'-' | b'+' | b'#' | b' ' | b'.' | b'0'..=b'9'))
                        .map(|k| i + 1 + k);
                    spec.filter(|&k| b[k].is_ascii_alphabetic())
                        .map(|k| k + 1 - i)
                }
                // The escape and the character it escapes, whatever its width.
                b'\\' => Some(1 + lit[i + 1..].chars().next().map_or(0, char::len_utf8)),
                _ => None,
            };
            if let Some(len) = cut {
                let piece = &lit[start..i];
                i = (i + len).min(b.len());
                start = i;
                return Some(piece);
            }
            i += 1;
        }
        done = true;
        Some(&lit[start..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Evidence {
        /// Any of the line-level kinds (the caller's counting aside).
        fn points_at(&self, line: &str) -> bool {
            self.quoted_in(line).is_some() || self.snippets_in(line) != 0 || self.says_message(line)
        }
    }

    const PYTEST: &str = "Why does `test_show_default` fail with ValueError?
>       message = opt.get_help_record(ctx)[1]
src/click/core.py:3033: in get_help_record
src/click/core.py:3113: in get_help_extra
>           raise ValueError(\"cannot compare to string\")
E           ValueError: cannot compare to string";

    #[test]
    fn reads_pytest_frames_and_quoted_lines() {
        let e = Evidence::new(PYTEST);
        assert!(e.names("get_help_record") && e.names("get_help_extra"));
        assert!(!e.names("test_show_default"));
        assert!(e.points_at("            raise ValueError(\"cannot compare to string\")"));
        assert!(e.points_at("    message = opt.get_help_record(ctx)[1]"));
        assert!(!e.points_at("    message = opt.get_help_record(ctx)[0]"));
    }

    #[test]
    fn reads_python_rust_and_javascript_frames() {
        let e = Evidence::new(
            "Traceback (most recent call last):\n  File \"app.py\", line 3, in handle\n    \
             total = compute_total(items, rate)\n    at Parser.parseValue (lib/parse.js:12:5)\n    \
             at new Reader (/x/reader.js:3:1)\n  12: serde_json::de::Deserializer<R>::parse_value\n  \
             13: app::main::{{closure}}",
        );
        assert!(e.names("handle") && e.names("parseValue") && e.names("Reader"));
        assert!(e.names("parse_value") && e.names("main"));
        assert!(e.points_at("        total = compute_total(items, rate)"));
    }

    #[test]
    fn library_frames_dunders_and_prose_name_nothing() {
        let e = Evidence::new(
            "  File \"/usr/lib/python3.11/site-packages/attr/_make.py\", line 9, in attrs\n\
             /usr/lib/python3.11/typing.py:2: in get_type_hints\n\
             src/app/models.py:40: in __init__\n  \
             3: core::result::unwrap_failed\n    at processTicksAndRejections (node:internal/process:95:5)\n\
             At 10:30: in the morning it fails\n1: use std::fs::read and then parse\n\
             at least one of them (see: the docs)",
        );
        for name in [
            "attrs",
            "get_type_hints",
            "__init__",
            "unwrap_failed",
            "processTicksAndRejections",
            "fails",
            "parse",
            "them",
        ] {
            assert!(!e.names(name), "{name}");
        }
    }

    #[test]
    fn a_module_frame_still_quotes_its_source_line() {
        let e =
            Evidence::new("  File \"app.py\", line 3, in <module>\n    main(parse_args(sys.argv))");
        assert!(e.points_at("main(parse_args(sys.argv))"));
    }

    #[test]
    fn messages_match_between_placeholders_and_never_by_one_word() {
        let e = Evidence::new("Getting `Invalid value for rate: must be positive` when I call it");
        assert!(
            e.points_at(r#"    raise ValueError(f"Invalid value for {name}: must be positive")"#)
        );
        assert!(e.points_at(r#"  return fmt.Errorf("invalid value for %s: must be positive", n)"#));
        assert!(!e.points_at(r#"    log("value")"#));
        assert!(
            !e.points_at(r#"    x = "must be""#),
            "two words are not a message"
        );
        assert!(
            !e.points_at(r#"    raise KeyError("value for rat")"#),
            "words match whole"
        );
        assert!(
            !e.points_at("    // invalid value for rate: must be positive"),
            "not a literal"
        );
    }

    #[test]
    fn a_plain_question_and_a_blockquote_are_not_evidence() {
        let e = Evidence::new(
            "Why is the key not found in the map when an entry is out of date?\n\
             > The docs say an entry is refreshed when it is read again",
        );
        assert!(e.is_empty(), "no failure pasted, no message quoted");
        assert!(!e.points_at(r#"raise KeyError(f"{key} not found in {where}")"#));
        assert!(!e.points_at("The docs say an entry is refreshed when it is read again"));
    }

    #[test]
    fn quoted_code_inline_and_fenced() {
        let e = Evidence::new(
            "Since 2.1 `cfg.method.upper()` raises and `content-length` is ignored:\n```python\n\
             if cfg.method is None:\n    return\n```",
        );
        assert_eq!(e.snippets_in("    name = cfg.method.upper()  # HTTP"), 1);
        assert_eq!(
            e.snippets_in("    headers['content-length'] = n"),
            0,
            "a name, not code"
        );
        assert!(
            e.points_at("        if cfg.method is None:"),
            "a line of the fenced block"
        );
        assert!(!e.points_at("        return"), "shorter than evidence");
    }

    #[test]
    fn quoted_phrases_match_verbatim_as_whole_words() {
        let e = Evidence::new("docs: fix typo 'with in' to \"within\" and `time::Duration`");
        assert_eq!(e.phrase_count(), 3);
        assert_eq!(e.phrases_in("you can put it with in the group"), 0b001);
        assert_eq!(e.phrases_in("as within a group"), 0b010);
        assert_eq!(e.phrases_in("see [`time::Duration`](x)"), 0b100);
        // Inside longer words, no match: `with input`, `withinness`.
        assert_eq!(e.phrases_in("with input, withinness"), 0);
        // A sentence may start with the phrase: its first letter's case swapped, a bit of its own.
        let flipped = 1 << FLIPPED_BIT;
        assert_eq!(e.phrases_in("With in the group, ..."), flipped);
        assert_eq!(e.phrases_in("WITH IN the group"), 0);
        let mut found = [flipped, 0b010 | flipped << 1, flipped << 1];
        Evidence::prefer_verbatim(&mut found);
        assert_eq!(
            found,
            [flipped, 0b010, 0],
            "only phrases found as quoted lose the other case"
        );
        // Wrapped over two lines of a paragraph.
        assert_eq!(
            e.phrases_across("you can put it with", "  in the group"),
            0b001
        );
        assert_eq!(e.phrases_across("It is... With", "in the group"), flipped);
        assert_eq!(e.phrases_across("you can put it with", "inner"), 0);
        assert_eq!(e.phrases_across("bandwith", "in the group"), 0);
        assert_eq!(e.phrases_across("it is with", "out"), 0);
        // `-` joining words continues them: `--force` is not in `--force-with-lease`.
        let f = Evidence::new("why does \"--force\" fail but \"log in\" work?");
        assert_eq!(f.phrases_in("git push --force-with-lease"), 0);
        assert_eq!(f.phrases_in("git push --force origin"), 0b01);
        assert_eq!(f.phrases_in("the re-log in page"), 0);
        assert_eq!(f.phrases_in("to log in, run"), 0b10);
        assert_eq!(f.phrases_across("the re-log", "in page"), 0);
        // A first character that is not an ASCII letter has no case-swapped spelling.
        let g = Evidence::new("fix \"élan vital\" and \"Élan\"");
        assert_eq!(g.phrases_in("un élan vital"), 0b01);
        assert_eq!(g.phrases_in("Élan vital"), 0b10);
        // An apostrophe inside a word opens no quote.
        assert_eq!(Evidence::new("it's what don't do").phrase_count(), 0);
    }

    #[test]
    fn literals_and_fragments() {
        let lits: Vec<&str> = literals(r#"f("a \"b\" c", 'd', don't, café's)"#).collect();
        assert_eq!(lits, [r#"a \"b\" c"#, "d"]);
        let frags: Vec<&str> = fragments("x {y} z %5.2f w ${v}!\\n").collect();
        assert_eq!(frags, ["x ", " z ", " w ", "!", ""]);
        // Multi-byte characters next to an escape or ending a frame never split a character.
        let frags: Vec<&str> = fragments("prix \\é dépassé").collect();
        assert_eq!(frags, ["prix ", " dépassé"]);
        assert_eq!(trailing_ident("café→naïve"), Some("naïve"));
        let e = Evidence::new("«ValueError: le prix dépassé est trop élevé»\n>  x = ‘é’");
        assert!(e.points_at(r#"raise ValueError("le prix dépassé est trop élevé")"#));
        assert!(!e.points_at("s = 'é\\é' + \"\\"));
    }

    #[test]
    fn a_literal_full_of_braces_is_cut_in_linear_time() {
        let lit = "{".repeat(200_000);
        assert_eq!(fragments(&lit).count(), 1);
    }

    proptest::proptest! {
        #[test]
        fn any_goal_and_line_are_read_without_panicking(
            goal in "[a-zé→ \"'`{}%$\\\\:>().\n0-9]{0,120}",
            line in "[a-zé→ \"'`{}%$\\\\:>().0-9]{0,120}",
        ) {
            let e = Evidence::new(&goal);
            let _ = e.points_at(&line);
            // A goal that pastes the line as pytest's failing source line points at it.
            let pasted = format!(">       {line}");
            let quoted = Evidence::new(&pasted);
            proptest::prop_assert!(
                line.trim().len() < MIN_EVIDENCE_BYTES
                    || frame(pasted.trim()).is_some()
                    || quoted.points_at(&line)
            );
        }
    }
}
