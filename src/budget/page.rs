//! Cutting a text to a page of its first and last lines with one marker between, whether the
//! text is held whole ([`TextLines`]) or was streamed past and only its first and last lines were
//! kept ([`Excerpt`]: a command's output of tens of megabytes is never held to show 10 KiB of
//! it). Owns the page's line arithmetic and the omission marker; never stores or reads anything.

use super::{MAX_LINE_BYTES, clip_utf8, human_bytes};
use std::collections::VecDeque;

/// Lines a page is cut from.
pub trait LineSource {
    /// Lines in the text (a last line without a newline counts; an empty text has none).
    fn count(&self) -> usize;
    /// How many lines a page can show at most: every line of a whole text, the kept head and
    /// tail of an excerpt.
    fn showable(&self) -> usize;
    /// Line `i` (0-based; a kept one): its text without the newline (an excerpt keeps only the
    /// first [`MAX_LINE_BYTES`] and a little more), the whole line's length in bytes without the
    /// newline, and whether a newline ends it.
    fn line(&self, i: usize) -> (&str, u64, bool);
    /// Byte offset of the start of line `i` (a kept line, or `count()` for the end of the text).
    fn offset(&self, i: usize) -> u64;
}

/// A whole text and its line starts, computed once however often it is cut.
pub struct TextLines<'a> {
    /// The text.
    text: &'a str,
    /// Byte offset of each line's start ([`crate::store::line_starts`]).
    starts: Vec<usize>,
}

impl<'a> TextLines<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> TextLines<'a> {
        TextLines {
            text,
            starts: crate::store::line_starts(text),
        }
    }
}

impl LineSource for TextLines<'_> {
    fn count(&self) -> usize {
        self.starts.len()
    }
    fn showable(&self) -> usize {
        self.starts.len()
    }
    fn line(&self, i: usize) -> (&str, u64, bool) {
        let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        let line = &self.text[self.starts[i]..end];
        let body = line.strip_suffix('\n').unwrap_or(line);
        (body, body.len() as u64, body.len() < line.len())
    }
    fn offset(&self, i: usize) -> u64 {
        self.starts.get(i).copied().unwrap_or(self.text.len()) as u64
    }
}

/// One line an [`Excerpt`] kept.
struct Kept {
    /// Its first bytes (enough to show it clipped).
    text: String,
    /// Its whole length without the newline.
    len: u64,
    /// Whether a newline ended it.
    newline: bool,
}

/// Bytes of a line an [`Excerpt`] keeps: enough for [`MAX_LINE_BYTES`] on a char boundary and
/// to tell that the line is longer.
const KEPT_LINE_BYTES: usize = MAX_LINE_BYTES + 8;

/// The first and last lines of a text fed to it in pieces, as many at each end as `cap` bytes of
/// kept text hold (at least one), with its line count and size: what a page of at most `cap`
/// bytes needs, in memory bounded by about `2 * cap` however large the text. A line keeps at most
/// `KEPT_LINE_BYTES` (508). Numbered like [`crate::store::line_starts`].
pub struct Excerpt {
    /// Bytes of kept text (each line's kept part and its newline) at each end.
    cap: usize,
    /// The first lines.
    head: Vec<Kept>,
    /// Kept bytes in `head`.
    head_kept: usize,
    /// Whether the head is full: every later line goes to the tail.
    head_closed: bool,
    /// The last lines after the head.
    tail: VecDeque<Kept>,
    /// Kept bytes in `tail`.
    tail_kept: usize,
    /// Bytes of the lines in `tail`, newlines included.
    tail_bytes: u64,
    /// Complete lines fed so far.
    lines: usize,
    /// Bytes fed so far.
    bytes: u64,
    /// The line being fed: its first bytes and its length so far.
    current: Kept,
}

impl Excerpt {
    /// An empty excerpt keeping `cap` bytes of lines at each end.
    pub fn new(cap: usize) -> Excerpt {
        Excerpt {
            cap,
            head: Vec::new(),
            head_kept: 0,
            head_closed: false,
            tail: VecDeque::new(),
            tail_kept: 0,
            tail_bytes: 0,
            lines: 0,
            bytes: 0,
            current: Kept {
                text: String::new(),
                len: 0,
                newline: false,
            },
        }
    }

    /// Feeds the next piece of the text.
    pub fn feed(&mut self, mut piece: &str) {
        self.bytes += piece.len() as u64;
        while !piece.is_empty() {
            let (segment, newline, rest) = match piece.find('\n') {
                Some(i) => (&piece[..i], true, &piece[i + 1..]),
                None => (piece, false, ""),
            };
            let room = KEPT_LINE_BYTES.saturating_sub(self.current.text.len());
            if room > 0 {
                self.current.text.push_str(clip_utf8(segment, room));
            }
            self.current.len += segment.len() as u64;
            if newline {
                self.current.newline = true;
                self.end_line();
            }
            piece = rest;
        }
    }

    /// Ends the text (a last line without a newline counts as a line).
    pub fn finish(&mut self) {
        if self.current.len > 0 {
            self.end_line();
        }
    }

    /// Lines of the text.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Bytes of the text.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    fn end_line(&mut self) {
        let line = std::mem::replace(
            &mut self.current,
            Kept {
                text: String::new(),
                len: 0,
                newline: false,
            },
        );
        self.lines += 1;
        let kept = line.text.len() + 1;
        if !self.head_closed {
            if self.head.is_empty() || self.head_kept + kept <= self.cap {
                self.head_kept += kept;
                self.head.push(line);
                return;
            }
            self.head_closed = true;
        }
        self.tail_bytes += line.len + u64::from(line.newline);
        self.tail_kept += kept;
        self.tail.push_back(line);
        while self.tail_kept > self.cap
            && self.tail.len() > 1
            && let Some(old) = self.tail.pop_front()
        {
            self.tail_bytes -= old.len + u64::from(old.newline);
            self.tail_kept -= old.text.len() + 1;
        }
    }

    fn kept(&self, i: usize) -> &Kept {
        if i < self.head.len() {
            &self.head[i]
        } else {
            let first_tail = self.lines - self.tail.len();
            &self.tail[i - first_tail]
        }
    }
}

impl LineSource for Excerpt {
    fn count(&self) -> usize {
        self.lines
    }
    fn showable(&self) -> usize {
        if self.head.len() + self.tail.len() == self.lines {
            // Everything is kept: head and tail meet.
            self.lines
        } else {
            // A page shows as many lines from each end (one more from the head when odd).
            let (h, t) = (self.head.len(), self.tail.len());
            (2 * h.min(t) + usize::from(h > t)).min(h + t)
        }
    }
    fn line(&self, i: usize) -> (&str, u64, bool) {
        let k = self.kept(i);
        (&k.text, k.len, k.newline)
    }
    fn offset(&self, i: usize) -> u64 {
        if i <= self.head.len() {
            self.head[..i]
                .iter()
                .map(|k| k.len + u64::from(k.newline))
                .sum()
        } else {
            let first_tail = self.lines - self.tail.len();
            let mut at = self.bytes - self.tail_bytes;
            for k in self.tail.iter().take(i - first_tail) {
                at += k.len + u64::from(k.newline);
            }
            at
        }
    }
}

/// `src` cut to at most `keep` lines (capped at what it can show): the head and the tail, with
/// one marker line in between naming what was left out and how to get it. Shown lines longer than
/// [`MAX_LINE_BYTES`] are clipped with the count of bytes left out. `prune_id` holds the full
/// text; when `exact` is true its line numbers are those of `src`, so the marker names the omitted
/// range. Returns the text and whether anything was cut or clipped.
pub fn head_tail(
    src: &impl LineSource,
    keep: usize,
    prune_id: &str,
    exact: bool,
) -> (String, bool) {
    let n = src.count();
    let keep = keep.min(src.showable());
    let mut clipped_any = false;
    let mut push = |out: &mut String, i: usize| {
        let (body, len, newline) = src.line(i);
        if len > MAX_LINE_BYTES as u64 {
            clipped_any = true;
            let c = clip_utf8(body, MAX_LINE_BYTES);
            out.push_str(&format!("{c}…[+{} bytes]\n", len - c.len() as u64));
        } else {
            out.push_str(body);
            if newline || keep < n {
                out.push('\n');
            }
        }
    };
    let mut out = String::new();
    if n <= keep {
        for i in 0..n {
            push(&mut out, i);
        }
        return (out, clipped_any);
    }
    let head = keep.div_ceil(2);
    let tail = keep - head;
    for i in 0..head {
        push(&mut out, i);
    }
    let omitted_from = head + 1;
    let omitted_to = n - tail;
    let omitted_bytes = src.offset(n - tail) - src.offset(head);
    let count = omitted_to + 1 - omitted_from;
    let size = human_bytes(omitted_bytes);
    if exact {
        out.push_str(&format!(
            "⟦… lines {omitted_from}-{omitted_to} ({count} lines, {size}) omitted; recover_text prune_id={prune_id} ranges=[{{start_line:{omitted_from},end_line:{omitted_to}}}] …⟧\n"
        ));
    } else {
        // The text is not numbered like the stored one (it was pruned): cite no line numbers.
        out.push_str(&format!(
            "⟦… {count} lines ({size}) omitted here; raw output: recover_text prune_id={prune_id} …⟧\n"
        ));
    }
    for i in n - tail..n {
        push(&mut out, i);
    }
    (out, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excerpt(text: &str, cap: usize, piece: usize) -> Excerpt {
        let mut e = Excerpt::new(cap);
        let mut rest = text;
        while !rest.is_empty() {
            let cut = clip_utf8(rest, piece.max(4)).len().max(1);
            let (a, b) = rest.split_at(cut);
            e.feed(a);
            rest = b;
        }
        e.finish();
        e
    }

    #[test]
    fn an_excerpt_cuts_exactly_like_the_whole_text() {
        let long = "é".repeat(400);
        let texts = [
            String::new(),
            "one".to_string(),
            "one\n".to_string(),
            "a\n\nb".to_string(),
            "a\n\n".to_string(),
            (1..=500).map(|i| format!("line {i}\n")).collect::<String>(),
            (1..=300)
                .map(|i| format!("{i} {long}\n"))
                .collect::<String>()
                + "tail without newline",
            long.repeat(50),
        ];
        for text in &texts {
            let whole = TextLines::new(text);
            for cap in [1, 16, 600, 5000, 1 << 20] {
                for piece in [1, 7, 4096] {
                    let e = excerpt(text, cap, piece);
                    assert_eq!(e.lines(), whole.count(), "{cap} {piece}");
                    assert_eq!(e.bytes(), text.len() as u64);
                    for keep in 0..=e.showable().min(300) {
                        for exact in [true, false] {
                            assert_eq!(
                                head_tail(&e, keep, "prn_1_x", exact),
                                head_tail(&whole, keep, "prn_1_x", exact),
                                "cap {cap} piece {piece} keep {keep} text {:?}",
                                &text[..text.len().min(40)]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_huge_line_is_shown_clipped_with_its_true_size() {
        let mut e = Excerpt::new(10_000);
        for _ in 0..1000 {
            e.feed(&"a".repeat(100_000));
        }
        e.finish();
        let (page, clipped) = head_tail(&e, 10, "prn_1_x", true);
        assert!(clipped);
        assert_eq!(
            page,
            format!("{}…[+{} bytes]\n", "a".repeat(500), 100_000_000 - 500)
        );
    }
}
