//! A stored text as the shared store hands it out ([`SharedText`]): its size, its bytes read from
//! the server by range as a reader consumes them (or from this replica's near copy), and the
//! shown runs recorded on its entry. Owns a page's call ([`page_cmd`]) and the reading by growing
//! ranges; must never read a whole text for a page (one index mark, then ranges), never hand out
//! a range it did not get whole (a short reply means the text is gone: [`TextGone`]), and never
//! read past the text's recorded size.

#[cfg(doc)]
use super::Shared;
use super::known::why_missing;
use super::scripts::{ADD_SHOWN, PAGE, set_field_cmd};
use super::{Known, PREFIX, STEP, SharedMiss, check, key, now_ms};
use crate::store::resp::{Cmd, Pool, Value};
use crate::sync::Unpoisoned;
use std::io::{self, BufRead, Read};
use std::sync::Mutex;

/// A stored text's size and where to read it.
#[derive(Debug)]
pub struct SharedText {
    /// The connections its reads go through.
    pub(super) pool: std::sync::Arc<Pool>,
    /// The process's cache of entries' sizes, forgotten for this id when its text is gone.
    pub(super) known: std::sync::Arc<Known>,
    /// The entry's id.
    pub(super) id: String,
    /// The text's size in bytes.
    pub(super) bytes: u64,
    /// Its number of lines.
    pub(super) lines: usize,
    /// This replica's copy of the text, when it holds one fresh (`near`): read from
    /// memory, no round trip.
    pub(super) local: Option<std::sync::Arc<crate::store::near::Copy>>,
    /// The [`PAGE`] reply for a line, fetched with the entry in the same round trip
    /// ([`Shared::get_at`]); the first read from that line takes it.
    pub(super) prefetched: Mutex<Option<(usize, Value)>>,
}

/// A stored text's marker that its bytes went missing while being read (evicted, expired, the
/// server restarted): [`crate::store::ReadError::Gone`] once converted.
#[derive(Debug)]
pub struct TextGone(pub String);

impl std::fmt::Display for TextGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TextGone {}

fn gone(id: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        TextGone(format!(
            "the text of {id} left the shared recovery store while it was read (evicted, expired, or the store lost its data); re-run the tool call"
        )),
    )
}

/// A store failure while reading a text, reported as the text being unavailable.
fn unreachable(pool: &Pool, e: io::Error) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        TextGone(format!(
            "the shared recovery store ({}) could not be read: {e}; retry later or re-run the tool call",
            pool.describe()
        )),
    )
}

impl SharedText {
    /// The error for a text found gone, saying why as a lookup would; this process forgets the
    /// entry.
    fn lost(&self) -> io::Error {
        self.known.forget(&self.id);
        let why = match why_missing(&self.pool, &self.known, &self.id) {
            SharedMiss::Evicted => crate::store::Missing::Evicted,
            SharedMiss::TooLarge => crate::store::Missing::TooLarge,
            SharedMiss::Lost => crate::store::Missing::Lost,
            SharedMiss::Unavailable => crate::store::Missing::Unavailable,
            SharedMiss::Absent => return gone(&self.id),
        };
        io::Error::new(io::ErrorKind::NotFound, TextGone(why.explain().to_string()))
    }

    /// Bytes of text.
    pub fn len(&self) -> u64 {
        self.bytes
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Lines of text.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// A reader from the start of `line` (1-based; past the last: at the end): one index mark
    /// and the text from there, fetched in growing ranges as they are consumed.
    pub fn reader_at(&self, line: usize) -> io::Result<Box<dyn BufRead + Send + '_>> {
        let line = line.max(1);
        if let Some(c) = &self.local {
            let from = c.line_starts.get(line - 1).copied().unwrap_or(c.text.len());
            return Ok(Box::new(&c.text.as_bytes()[from..]));
        }
        let chunk = PAGE_CHUNK;
        let (pos, skip, first) = if self.lines == 0 || line > self.lines {
            (if self.lines == 0 { 0 } else { self.bytes }, 0, Vec::new())
        } else {
            // One round trip (or none, fetched with the entry): the index mark before `line` and
            // the text from there.
            let prefetched = self
                .prefetched
                .locked()
                .take_if(|(at, _)| *at == line)
                .map(|(_, v)| v);
            let r = match prefetched {
                Some(Value::Error(e)) => return Err(unreachable(&self.pool, io::Error::other(e))),
                Some(r) => r,
                None => self
                    .pool
                    .one(page_cmd(&self.id, line..=usize::MAX))
                    .map_err(|e| unreachable(&self.pool, e))?,
            };
            let Value::Array(mut r) = r else {
                return Err(self.lost());
            };
            let end = r.pop().and_then(|v| v.int()).ok_or_else(|| self.lost())?;
            let text = r.pop().and_then(Value::bytes).ok_or_else(|| self.lost())?;
            let mark = r.pop().and_then(|v| v.int()).ok_or_else(|| self.lost())? as u64;
            // Without an end mark the range runs to the end of the text.
            let end = u64::try_from(end).unwrap_or(self.bytes);
            if mark > end || end > self.bytes || text.len() as u64 != (chunk as u64).min(end - mark)
            {
                return Err(self.lost());
            }
            (mark + text.len() as u64, (line - 1) % STEP, text)
        };
        let mut r = Ranges {
            text: self,
            pos,
            buf: first,
            at: 0,
            chunk: chunk * 2,
        };
        for _ in 0..skip {
            let mut sink = Vec::new();
            if r.read_until(b'\n', &mut sink)? == 0 {
                break;
            }
        }
        Ok(Box::new(r))
    }

    /// Records the shown runs (0-based half-open) if the entry still exists.
    pub async fn set_shown(&self, runs: &[std::ops::Range<usize>]) -> io::Result<()> {
        let cmd = set_field_cmd(&self.id, "s", encode_runs(runs));
        check(self.pool.run_async(std::slice::from_ref(&cmd)).await?)
    }

    /// Adds `runs` to the shown runs recorded (in one script: concurrent additions all land).
    pub async fn add_shown(&self, runs: &[std::ops::Range<usize>]) -> io::Result<()> {
        let cmd = Cmd::script(ADD_SHOWN)
            .num(1)
            .arg(key("e", &self.id))
            .arg(encode_runs(runs));
        check(self.pool.run_async(std::slice::from_ref(&cmd)).await?)
    }

    /// The shown runs recorded (empty when none, or on any failure).
    pub fn shown(&self) -> Vec<std::ops::Range<usize>> {
        let Ok(v) = self
            .pool
            .one(Cmd::new("HGET").arg(key("e", &self.id)).arg("s"))
        else {
            return Vec::new();
        };
        let text = v.text().unwrap_or_default();
        text.split(',')
            .filter_map(|r| {
                let (a, b) = r.split_once('-')?;
                Some(a.parse().ok()?..b.parse().ok()?)
            })
            .collect()
    }
}

/// Shown runs as the `s` field holds them: `start-end` (0-based, end excluded), comma-separated.
fn encode_runs(runs: &[std::ops::Range<usize>]) -> String {
    let enc: Vec<String> = runs
        .iter()
        .map(|r| format!("{}-{}", r.start, r.end))
        .collect();
    enc.join(",")
}

/// Bytes of text the first round trip of a page brings at most (later ones double, up to 1 MiB).
const PAGE_CHUNK: usize = 32 * 1024;

/// The [`PAGE`] call for `lines` (1-based, the first within the text; the last may be past it)
/// of entry `id`: from the index mark before the first to the one after the last.
pub(super) fn page_cmd(id: &str, lines: std::ops::RangeInclusive<usize>) -> Cmd {
    let first = lines.start().max(&1) - 1;
    let last = (*lines.end()).max(first + 1) - 1;
    // The mark after the last line's STEP: the server finds none past the index; none is
    // asked for past any index (the script's arithmetic is in doubles, printed exactly only up
    // to 14 digits).
    let end = (last / STEP + 1)
        .checked_mul(8)
        .filter(|&m| m < 1 << 40)
        .map_or(String::new(), |m| m.to_string());
    Cmd::script(PAGE)
        .num(3)
        .arg(key("x", id))
        .arg(key("t", id))
        .arg(format!("{PREFIX}lru"))
        .num(first / STEP * 8)
        .num(PAGE_CHUNK)
        .num(now_ms())
        .arg(id)
        .arg(end)
}

/// `BufRead` over a stored text from a byte offset, by `GETRANGE`s of growing size.
struct Ranges<'a> {
    /// The stored text being read.
    text: &'a SharedText,
    /// Offset in the text of the next byte to fetch.
    pos: u64,
    /// The range fetched last.
    buf: Vec<u8>,
    /// How much of `buf` has been consumed.
    at: usize,
    /// Bytes the next `GETRANGE` asks for: doubled after each, up to 1 MiB.
    chunk: usize,
}

impl Read for Ranges<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Ranges<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.buf.len() && self.pos < self.text.bytes {
            let end = (self.pos + self.chunk as u64).min(self.text.bytes);
            let got = self
                .text
                .pool
                .one(
                    Cmd::new("GETRANGE")
                        .arg(key("t", &self.text.id))
                        .num(self.pos)
                        .num(end - 1),
                )
                .map_err(|e| unreachable(&self.text.pool, e))?
                .bytes()
                .unwrap_or_default();
            if got.len() as u64 != end - self.pos {
                return Err(self.text.lost());
            }
            self.pos = end;
            self.buf = got;
            self.at = 0;
            self.chunk = (self.chunk * 2).min(1 << 20);
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}
