//! Evidence pasted into a goal: what an agent or an issue reporter copies from a failure. Three
//! kinds are found, and each points at lines of the text more surely than any word of the goal:
//!
//! - **source lines** a traceback quotes (pytest's `>   raise ValueError(...)`, the indented line
//!   under a Python `File "...", line N, in f` frame): a text line that is exactly one of them is
//!   where the failure ran;
//! - **code** quoted inline (`` `self.method.upper()` ``) or in a fenced block: a text line holding
//!   the inline code, or equal to a line of the block, holds what the goal is about;
//! - **frames** (`src/click/core.py:3113: in get_help_extra`, `File "x.py", line 3, in parse`,
//!   `12: krate::de::parse_value`, `at Parser.parse (lib/parse.js:12:5)`): the definitions they
//!   name were on the failing path;
//! - **messages**: a string literal of the text whose words (between format placeholders such as
//!   `{}`, `%s`, `${x}`) the goal repeats, as in `E  ValueError: cannot compare to string` for
//!   `raise ValueError("cannot compare to string")`.
//!
//! Owns reading the goal for that evidence and finding the lines and names it points at. It must
//! never decide what to keep, and never match a single word (words are `terms`' business).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A quoted source line or a message fragment shorter than this many bytes is too common to be
/// evidence (`return x`, `"a b c"`).
const MIN_EVIDENCE_BYTES: usize = 12;
/// At most this many inline code snippets are looked for.
const MAX_SNIPPETS: usize = 8;
/// A message fragment must hold at least this many words: one word is a term, not a message.
const MIN_MESSAGE_WORDS: usize = 3;

/// What a goal's pasted failure says, ready to be matched against lines.
pub(crate) struct Evidence {
    /// Source lines the goal quotes, trimmed, keyed by length (most lines fail that test).
    quoted: HashMap<usize, HashSet<String>>,
    /// Names of the functions in the goal's traceback frames.
    frames: HashSet<String>,
    /// Code the goal quotes inline in backticks (`` `cfg.method = x` ``: at least
    /// [`MIN_EVIDENCE_BYTES`], with punctuation other than `-` and `_`, which a name such as
    /// `content-length` has): a line holding one verbatim holds that code.
    snippets: Vec<String>,
    /// The goal's words, lowercased, each with a space on both sides: a fragment is looked for
    /// as ` its words `, so `shrink below it` does not match `shrink below its gutter`.
    flat: String,
    /// Every run of three consecutive words of `flat`: a fragment whose first three words are not
    /// among them cannot occur in it (checked before the substring search).
    trigrams: HashSet<String>,
}

impl Evidence {
    /// Reads the goal for quoted source lines, frames and the words messages are matched in.
    pub(crate) fn new(goal: &str) -> Evidence {
        let mut quoted: HashMap<usize, HashSet<String>> = HashMap::default();
        let mut frames = HashSet::default();
        let mut after_python_frame = false;
        let mut in_fence = false;
        for line in goal.lines() {
            let t = line.trim();
            // A fenced block (```) quotes code line by line.
            if t.starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                if t.len() >= MIN_EVIDENCE_BYTES {
                    quoted.entry(t.len()).or_default().insert(t.to_owned());
                }
                continue;
            }
            if let Some(name) = frame_name(t) {
                frames.insert(name.to_owned());
                after_python_frame = t.starts_with("File \"");
                continue;
            }
            // pytest marks the failing source line with `>`; a Python traceback indents it under
            // its frame.
            let source = match t.strip_prefix('>') {
                Some(rest) => Some(rest.trim()),
                None if after_python_frame => Some(t),
                None => None,
            };
            after_python_frame = false;
            if let Some(s) = source.filter(|s| s.len() >= MIN_EVIDENCE_BYTES) {
                quoted.entry(s.len()).or_default().insert(s.to_owned());
            }
        }
        let snippets = goal
            .split("```")
            .step_by(2)
            .flat_map(|outside| outside.split('`').skip(1).step_by(2))
            .map(str::trim)
            .filter(|c| {
                c.len() >= MIN_EVIDENCE_BYTES
                    && !c.contains('\n')
                    && c.contains(|ch: char| !(ch.is_alphanumeric() || "_- ".contains(ch)))
            })
            .take(MAX_SNIPPETS)
            .map(str::to_owned)
            .collect();
        let mut flat = String::from(" ");
        push_words(goal, usize::MAX, &mut flat);
        flat.push(' ');
        let w: Vec<&str> = flat.split_whitespace().collect();
        let trigrams = w.windows(3).map(|t| t.join(" ")).collect();
        Evidence {
            quoted,
            frames,
            snippets,
            flat,
            trigrams,
        }
    }

    /// True when the goal holds no evidence that lines could match.
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

    /// True when the goal quotes inline code ([`Evidence::snippets_in`] can find something).
    pub(crate) fn has_snippets(&self) -> bool {
        !self.snippets.is_empty()
    }

    /// Bit `k` set when `line` holds the goal's `k`-th inline code snippet verbatim (0 when the
    /// goal has none). The caller drops the snippets found on too many lines to tell them apart.
    pub(crate) fn snippets_in(&self, line: &str) -> u32 {
        self.snippets
            .iter()
            .enumerate()
            .filter(|(_, s)| memchr::memmem::find(line.as_bytes(), s.as_bytes()).is_some())
            .fold(0, |bits, (k, _)| bits | 1 << k)
    }

    /// True when `line` is a source line the goal quotes, or holds a string literal whose words
    /// the goal repeats.
    pub(crate) fn points_at(&self, line: &str) -> bool {
        if !self.quoted.is_empty() {
            let t = line.trim();
            if self.quoted.get(&t.len()).is_some_and(|set| set.contains(t)) {
                return true;
            }
        }
        !self.trigrams.is_empty()
            && literals(line).any(|lit| could_be_message(lit) && self.repeats(lit))
    }

    /// True when a fragment of the literal `lit` between its format placeholders, of at least
    /// [`MIN_MESSAGE_WORDS`] words, occurs in the goal.
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
        })
    }
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

/// The function a traceback frame names: pytest's `path:12: in name`, Python's
/// `File "path", line 12, in name`, Rust's backtrace `3: krate::module::Type<T>::name`,
/// JavaScript's `at obj.name (path:12:5)` and Java's `at pkg.Class.name(File.java:12)`.
fn frame_name(t: &str) -> Option<&str> {
    if let Some((head, name)) = t.rsplit_once(": in ") {
        // pytest: `src/click/core.py:3113: in get_help_extra`
        return head
            .rsplit_once(':')
            .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|_| last_ident(name));
    }
    if t.starts_with("File \"") {
        return t.rsplit_once(", in ").and_then(|(_, n)| last_ident(n));
    }
    if let Some((n, path)) = t.split_once(": ")
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && path.contains("::")
    {
        // A Rust backtrace: `12: serde_json::de::Deserializer<R>::parse_value`.
        return path
            .rsplit("::")
            .find(|seg| !seg.starts_with('{') && !seg.starts_with('<'))
            .and_then(|seg| last_ident(seg.split('<').next().unwrap_or(seg)));
    }
    if let Some(rest) = t.strip_prefix("at ") {
        let call = rest.strip_prefix("new ").unwrap_or(rest);
        let (callee, location) = call.split_once('(')?;
        // A location follows: `(path:line:col)` or `(File.java:12)`.
        if !location.contains(':') {
            return None;
        }
        return last_ident(callee);
    }
    None
}

/// The identifier that ends `s` (`name` of `obj.name`), if any.
fn last_ident(s: &str) -> Option<&str> {
    let s = s.trim();
    let start = s
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |(k, c)| k + c.len_utf8());
    let name = &s[start..];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// The string literals of a line (`"..."`, `'...'`, `` `...` ``), without their quotes. An
/// apostrophe inside a word (`don't`) does not open a literal; escapes are skipped over.
fn literals(line: &str) -> impl Iterator<Item = &str> {
    let b = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(k) = memchr::memchr3(b'"', b'\'', b'`', &b[i.min(b.len())..]) {
            i += k;
            let q = b[i];
            let opens = !(q == b'\'' && i > 0 && b[i - 1].is_ascii_alphanumeric());
            i += 1;
            if !opens {
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
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        while i < b.len() {
            let cut = match b[i] {
                b'{' => lit[i..].find('}').map(|k| k + 1),
                b'$' if b.get(i + 1) == Some(&b'{') => lit[i..].find('}').map(|k| k + 1),
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
    fn reads_python_and_javascript_frames() {
        let e = Evidence::new(
            "Traceback (most recent call last):\n  File \"app.py\", line 3, in handle\n    \
             total = compute_total(items, rate)\n    at Parser.parseValue (lib/parse.js:12:5)\n    \
             at new Reader (/x/reader.js:3:1)\n  12: serde_json::de::Deserializer<R>::parse_value\n               13: app::main::{{closure}}",
        );
        assert!(e.names("handle") && e.names("parseValue") && e.names("Reader"));
        assert!(e.names("parse_value") && e.names("main"));
        assert!(e.points_at("        total = compute_total(items, rate)"));
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
    fn quoted_code_inline_and_fenced() {
        let e = Evidence::new(
            "Since 2.1 `cfg.method.upper()` raises and `content-length` is ignored:\n```\n\
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
    fn literals_and_fragments() {
        let lits: Vec<&str> = literals(r#"f("a \"b\" c", 'd', don't)"#).collect();
        assert_eq!(lits, [r#"a \"b\" c"#, "d"]);
        let frags: Vec<&str> = fragments("x {y} z %5.2f w ${v}!\\n").collect();
        assert_eq!(frags, ["x ", " z ", " w ", "!", ""]);
        // Multi-byte characters next to an escape or ending a frame never split a character.
        let frags: Vec<&str> = fragments("prix \\é dépassé").collect();
        assert_eq!(frags, ["prix ", " dépassé"]);
        assert_eq!(frame_name("src/a.py:3: in café→naïve"), Some("naïve"));
        let e = Evidence::new("«ValueError: le prix dépassé est trop élevé»\n>  x = ‘é’");
        assert!(e.points_at(r#"raise ValueError("le prix dépassé est trop élevé")"#));
        assert!(!e.points_at("s = 'é\\é' + \"\\"));
    }

    proptest::proptest! {
        #[test]
        fn any_goal_and_line_are_read_without_panicking(
            goal in "[a-zé→ \"'`{}%$\\\\:>().\n0-9]{0,120}",
            line in "[a-zé→ \"'`{}%$\\\\:>().0-9]{0,120}",
        ) {
            let e = Evidence::new(&goal);
            let _ = e.points_at(&line);
            let _ = e.snippets_in(&line);
            // A goal that pastes the line as a traceback's source line points at it.
            let quoted = Evidence::new(&format!("> {line}"));
            let pasted = format!("> {line}");
            proptest::prop_assert!(
                line.trim().len() < MIN_EVIDENCE_BYTES
                    || frame_name(pasted.trim()).is_some()
                    || quoted.points_at(&line)
            );
        }
    }
}
