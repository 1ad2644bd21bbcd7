//! Store entries kept on disk instead of in memory: a spilled text (written through
//! [`SpillWriter`] into an unlinked temp file) or a referenced file (a huge `read` artifact: the
//! file itself, checked for change on every read). Both are read back by line through a sparse
//! line index ([`INDEX_STEP`] lines per mark), so memory stays bounded whatever their size.
//! Owns the temp files; must never leave one behind: a spill file is unlinked as soon as it is
//! created, so the kernel frees it when the entry is dropped (eviction, TTL) or the process exits,
//! however it exits.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Artifacts larger than this many bytes spill to a temp file; smaller ones stay in memory.
pub const SPILL_THRESHOLD: usize = 8 * 1024 * 1024;
/// One line-index mark every this many lines: the index of a 1M-line text is ~245 offsets.
pub const INDEX_STEP: usize = 4096;
/// Read buffer of disk readers.
const READ_BUF: usize = 256 * 1024;

/// Identity of a file at the time it was read: a referenced artifact is valid while it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileKey {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Length in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Status change time, nanoseconds since the epoch: a rewrite that puts the modification time
    /// back (`touch -r`, `cp -p`, `rsync -t`) still changes it, and no one can set it back.
    pub ctime_ns: i128,
}

impl FileKey {
    /// The identity in `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileKey {
        FileKey {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
        }
    }
}

/// Line count and sparse line index of a text, built as it is written or scanned.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    /// Bytes seen.
    pub bytes: u64,
    /// Lines seen (a final line without terminator counts; a trailing terminator opens none).
    pub lines: usize,
    /// Byte offset of line `k * INDEX_STEP + 1`, for each `k`.
    pub marks: Vec<u64>,
    /// Whether the next byte seen starts a line.
    at_line_start: bool,
}

impl LineIndex {
    /// An empty index.
    pub fn new() -> LineIndex {
        LineIndex {
            at_line_start: true,
            ..Default::default()
        }
    }

    /// Accounts for the next `chunk` of the text.
    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let base = self.bytes;
        if self.at_line_start {
            self.start_at(base);
        }
        let mut from = 0;
        while let Some(i) = find_newline(&chunk[from..]) {
            let next = from + i + 1;
            if next < chunk.len() {
                self.start_at(base + next as u64);
            }
            from = next;
        }
        self.at_line_start = chunk.ends_with(b"\n");
        self.bytes += chunk.len() as u64;
    }

    fn start_at(&mut self, offset: u64) {
        if self.lines % INDEX_STEP == 0 {
            self.marks.push(offset);
        }
        self.lines += 1;
    }

    /// Memory this index holds, in bytes (counted in the store's cap for referenced files).
    pub fn heap_bytes(&self) -> usize {
        self.marks.capacity() * 8
    }
}

/// Position of the first `\n` in `bytes`, eight bytes at a time (no dependency, and quick even
/// in the tests' lightly optimised builds).
pub fn find_newline(bytes: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ NL;
        if x.wrapping_sub(LO) & !x & HI != 0 {
            return w.iter().position(|&b| b == b'\n').map(|p| at + p);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| at + p)
}

/// Where a disk entry's bytes live.
#[derive(Debug)]
enum Source {
    /// An unlinked temp file this store owns.
    Spill(File),
    /// A file under the root, valid while its identity is unchanged.
    Referenced {
        /// Its path.
        path: PathBuf,
        /// Its identity when indexed: a read checks it is unchanged.
        key: FileKey,
    },
}

/// A text on disk with its line index.
#[derive(Debug)]
pub struct DiskText {
    /// Where its bytes are.
    source: Source,
    /// Its lines, for reading a range without scanning from the start.
    index: LineIndex,
}

/// Why a disk entry could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The referenced file changed since it was read (or is gone).
    Changed(PathBuf),
    /// A shared store's text went missing while it was read (evicted, expired, lost).
    Gone(String),
    /// An I/O error.
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Changed(p) => write!(
                f,
                "{} changed since it was read (its artifact is the file itself); read it again",
                p.display()
            ),
            ReadError::Gone(why) => f.write_str(why),
            ReadError::Io(e) => write!(f, "reading the stored text: {e}"),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<super::shared::TextGone>())
        {
            Some(g) => ReadError::Gone(g.0.clone()),
            None => ReadError::Io(e),
        }
    }
}

impl DiskText {
    /// A referenced file, indexed by a scan that found it valid UTF-8.
    pub fn referenced(path: PathBuf, key: FileKey, index: LineIndex) -> DiskText {
        DiskText {
            source: Source::Referenced { path, key },
            index,
        }
    }

    /// Bytes of text.
    pub fn len(&self) -> u64 {
        self.index.bytes
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.index.bytes == 0
    }

    /// Lines of text.
    pub fn lines(&self) -> usize {
        self.index.lines
    }

    /// Bytes this entry costs the store: the spill file's size, or a referenced file's index.
    pub fn cost(&self) -> usize {
        match self.source {
            Source::Spill(_) => self.index.bytes as usize,
            Source::Referenced { .. } => self.index.heap_bytes(),
        }
    }

    /// A reader positioned at the start of `line` (1-based; past the last line: at the end).
    /// Reads at most one index step of lines to get there, through a fixed buffer.
    pub fn reader_at(&self, line: usize) -> Result<Box<dyn BufRead + Send + '_>, ReadError> {
        let line = line.max(1);
        let (mark, mut skip) = if self.index.lines == 0 {
            (0, 0)
        } else {
            let k = ((line - 1) / INDEX_STEP).min(self.index.marks.len() - 1);
            (self.index.marks[k], line - 1 - k * INDEX_STEP)
        };
        let mut reader: Box<dyn BufRead + Send + '_> = match &self.source {
            Source::Spill(file) => Box::new(BufReader::with_capacity(
                READ_BUF,
                At {
                    file,
                    pos: mark,
                    end: self.index.bytes,
                },
            )),
            Source::Referenced { path, key } => {
                let changed = || ReadError::Changed(path.clone());
                let mut file = File::open(path).map_err(|_| changed())?;
                let meta = file.metadata().map_err(|_| changed())?;
                if FileKey::of(&meta) != *key {
                    return Err(changed());
                }
                file.seek(SeekFrom::Start(mark))?;
                Box::new(BufReader::with_capacity(
                    READ_BUF,
                    file.take(self.index.bytes - mark),
                ))
            }
        };
        while skip > 0 {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match find_newline(buf) {
                Some(i) => {
                    reader.consume(i + 1);
                    skip -= 1;
                }
                None => {
                    let n = buf.len();
                    reader.consume(n);
                }
            }
        }
        Ok(reader)
    }
}

/// `Read` over a byte range of a shared file, by positioned reads (no shared cursor).
struct At<'a> {
    /// The file read.
    file: &'a File,
    /// Offset of the next byte to read.
    pos: u64,
    /// Offset the range ends at (exclusive).
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = (self.end - self.pos).min(buf.len() as u64) as usize;
        if room == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..room], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

static SPILL_SEQ: AtomicU64 = AtomicU64::new(0);

/// A new temp file under the system temp dir (`TMPDIR`), unlinked at once: only this process's
/// handle keeps it, so it disappears with the handle whatever happens to the process.
pub fn anonymous_file() -> io::Result<File> {
    let dir = std::env::temp_dir();
    for _ in 0..100 {
        let path = dir.join(format!(
            "mcp-pruner-{}-{}.spill",
            std::process::id(),
            SPILL_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temp file name"))
}

/// Writes a text that may be too large to keep in memory: up to [`SPILL_THRESHOLD`] bytes are
/// buffered, beyond that everything goes to an unlinked temp file. Indexes lines and hashes the
/// content as it goes, so the store can re-issue the id of an identical artifact.
pub struct SpillWriter {
    /// The text while it is under `threshold` bytes.
    mem: String,
    /// The unlinked temp file once it is not.
    file: Option<io::BufWriter<File>>,
    /// Lines of what was written.
    index: LineIndex,
    /// Two differently seeded hashes of the content: 128 bits to tell identical artifacts.
    hash: [std::collections::hash_map::DefaultHasher; 2],
    /// Bytes kept in memory before spilling ([`SPILL_THRESHOLD`] but in tests).
    threshold: usize,
}

impl Default for SpillWriter {
    fn default() -> Self {
        SpillWriter::new()
    }
}

/// A finished [`SpillWriter`]: the text in memory, or on disk.
pub enum Written {
    /// Small enough to keep in memory.
    Memory(String),
    /// On disk, with its content hash.
    Disk(DiskText, u128),
}

impl SpillWriter {
    /// A writer spilling past [`SPILL_THRESHOLD`].
    pub fn new() -> SpillWriter {
        SpillWriter::with_threshold(SPILL_THRESHOLD)
    }

    /// A writer spilling past `threshold` bytes (tests).
    pub fn with_threshold(threshold: usize) -> SpillWriter {
        use std::hash::Hasher;
        let mut hash: [std::collections::hash_map::DefaultHasher; 2] = Default::default();
        hash[1].write_u8(0x5a);
        SpillWriter {
            mem: String::new(),
            file: None,
            index: LineIndex::new(),
            hash,
            threshold,
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.index.bytes
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.index.bytes == 0
    }

    /// Appends `text`.
    pub fn push_str(&mut self, text: &str) -> io::Result<()> {
        use std::hash::Hasher;
        self.index.feed(text.as_bytes());
        for h in &mut self.hash {
            h.write(text.as_bytes());
        }
        if let Some(f) = &mut self.file {
            return f.write_all(text.as_bytes());
        }
        self.mem.push_str(text);
        if self.mem.len() > self.threshold {
            let mut f = io::BufWriter::with_capacity(READ_BUF, anonymous_file()?);
            f.write_all(self.mem.as_bytes())?;
            self.mem = String::new();
            self.file = Some(f);
        }
        Ok(())
    }

    /// The text, in memory or on disk.
    pub fn finish(self) -> io::Result<Written> {
        use std::hash::Hasher;
        let Some(f) = self.file else {
            return Ok(Written::Memory(self.mem));
        };
        let file = f.into_inner().map_err(|e| e.into_error())?;
        let hash = (self.hash[0].finish() as u128) << 64 | self.hash[1].finish() as u128;
        Ok(Written::Disk(
            DiskText {
                source: Source::Spill(file),
                index: self.index,
            },
            hash,
        ))
    }
}

/// Decodes a byte stream as UTF-8 in chunks, replacing invalid bytes as
/// `String::from_utf8_lossy` does on the whole stream (an incomplete sequence at a chunk's end
/// waits for the next chunk).
#[derive(Default)]
pub struct LossyDecoder {
    /// The incomplete UTF-8 sequence that ended the previous chunk.
    carry: Vec<u8>,
}

impl LossyDecoder {
    /// Decodes `chunk` (with any bytes carried from the previous one); `last` flushes the carry.
    pub fn decode(&mut self, chunk: &[u8], last: bool) -> String {
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(chunk);
        if !last {
            // Keep an incomplete sequence at the end (at most 3 bytes) for the next chunk: check
            // from the last byte that starts a character (not a continuation byte 10xxxxxx).
            let from = (bytes.len().saturating_sub(4)..bytes.len())
                .rev()
                .find(|&k| bytes[k] & 0xC0 != 0x80)
                .unwrap_or(bytes.len());
            if let Err(e) = std::str::from_utf8(&bytes[from..])
                && e.error_len().is_none()
            {
                self.carry = bytes.split_off(from + e.valid_up_to());
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(d: &DiskText, line: usize) -> String {
        let mut s = String::new();
        d.reader_at(line).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn characters_split_across_chunks_decode_whole() {
        let text = "€漢字€ abc €".repeat(50);
        for cut in 1..12 {
            let mut d = LossyDecoder::default();
            let mut out = String::new();
            let chunks: Vec<&[u8]> = text.as_bytes().chunks(cut).collect();
            for (i, c) in chunks.iter().enumerate() {
                out.push_str(&d.decode(c, i + 1 == chunks.len()));
            }
            assert_eq!(out, text, "chunks of {cut} bytes");
        }
    }

    #[test]
    fn spilled_text_reads_back_by_line() {
        let text: String = (1..=10_000).map(|i| format!("line {i}\n")).collect();
        let mut w = SpillWriter::with_threshold(1000);
        for piece in text.as_bytes().chunks(777) {
            w.push_str(std::str::from_utf8(piece).unwrap()).unwrap();
        }
        let Written::Disk(d, _) = w.finish().unwrap() else {
            panic!("spilled")
        };
        assert_eq!(d.lines(), 10_000);
        assert_eq!(d.index.marks.len(), 3);
        assert_eq!(read_all(&d, 1), text);
        for line in [2, 4096, 4097, 4098, 8193, 10_000] {
            let from = text.match_indices('\n').nth(line - 2).unwrap().0 + 1;
            assert_eq!(read_all(&d, line), text[from..], "line {line}");
        }
        assert_eq!(read_all(&d, 10_001), "");
    }

    #[test]
    fn index_counts_lines_like_line_starts() {
        for text in ["", "a", "a\n", "a\nb", "a\r\nb\r\n\n", "\n\n"] {
            for step in 1..=3 {
                let mut ix = LineIndex::new();
                for piece in text.as_bytes().chunks(step) {
                    ix.feed(piece);
                }
                assert_eq!(ix.lines, crate::store::line_starts(text).len(), "{text:?}");
            }
        }
    }

    #[test]
    fn lossy_decoding_in_chunks_matches_whole() {
        let bytes = b"ok \xe2\x9c\x93 bad \xff\xfe mid \xe2\x9c end \xf0\x9f\x98\x80".to_vec();
        let whole = String::from_utf8_lossy(&bytes).into_owned();
        for step in 1..=7 {
            let mut d = LossyDecoder::default();
            let mut out = String::new();
            let chunks: Vec<_> = bytes.chunks(step).collect();
            for (i, c) in chunks.iter().enumerate() {
                out.push_str(&d.decode(c, i + 1 == chunks.len()));
            }
            assert_eq!(out, whole, "step {step}");
        }
    }

    #[test]
    fn referenced_file_is_checked_for_change() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        std::fs::write(&p, "a\nb\n").unwrap();
        let mut ix = LineIndex::new();
        ix.feed(b"a\nb\n");
        let d = DiskText::referenced(p.clone(), FileKey::of(&p.metadata().unwrap()), ix);
        assert_eq!(read_all(&d, 2), "b\n");
        std::fs::write(&p, "a\nc\nd\n").unwrap();
        assert!(matches!(d.reader_at(1), Err(ReadError::Changed(_))));
    }

    #[test]
    fn newlines_are_found_anywhere() {
        for len in 0..40 {
            for nl in 0..len {
                let mut b = vec![0xffu8; len];
                b[nl] = b'\n';
                if nl + 3 < len {
                    b[nl + 3] = b'\n';
                }
                assert_eq!(find_newline(&b), Some(nl));
            }
            assert_eq!(find_newline(&vec![b'a'; len]), None);
        }
    }

    #[test]
    fn spill_files_are_unlinked() {
        let f = anonymous_file().unwrap();
        assert_eq!(f.metadata().unwrap().nlink(), 0);
    }
}
