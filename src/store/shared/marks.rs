//! The line index of a stored text (`x:ID`): the byte offset of every [`STEP`]th line start, 8
//! bytes little-endian each, built as the text streams to the server (or from line starts already
//! found). Owns how a mark is computed and laid out; must never keep the bytes it is fed (only
//! their count and offsets), and never place a mark where [`crate::store::line_starts`] would not
//! start a line (a page reads from a mark on trust).

use super::STEP;
use crate::store::find_newline;

/// Byte offsets of every [`STEP`]th line start, built as the text streams by.
#[derive(Default)]
pub(super) struct Marks {
    /// Bytes fed so far.
    pub(super) bytes: u64,
    /// Lines begun so far.
    pub(super) lines: usize,
    /// The byte offset of every [`STEP`]th line start, 8 bytes little-endian each, as stored.
    pub(super) index: Vec<u8>,
    /// Whether the bytes fed so far end inside a line (the next byte starts none).
    mid_line: bool,
}

impl Marks {
    /// The marks of a text of `bytes` whose line starts are `starts` (as [`Marks::feed`] would
    /// make them from the whole text).
    pub(super) fn from_starts(bytes: usize, starts: &[usize]) -> Marks {
        Marks {
            bytes: bytes as u64,
            lines: starts.len(),
            index: starts
                .iter()
                .step_by(STEP)
                .flat_map(|&s| (s as u64).to_le_bytes())
                .collect(),
            mid_line: false,
        }
    }

    pub(super) fn feed(&mut self, chunk: &[u8]) {
        let mut from = 0;
        while from < chunk.len() {
            if !self.mid_line {
                if self.lines % STEP == 0 {
                    self.index
                        .extend_from_slice(&(self.bytes + from as u64).to_le_bytes());
                }
                self.lines += 1;
                self.mid_line = true;
            }
            match find_newline(&chunk[from..]) {
                Some(i) => {
                    from += i + 1;
                    self.mid_line = false;
                }
                None => from = chunk.len(),
            }
        }
        self.bytes += chunk.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_point_at_every_step_th_line() {
        let text: String = (0..200).map(|i| format!("{i}\n")).collect();
        for cut in [1, 3, 7, 1000] {
            let mut m = Marks::default();
            for c in text.as_bytes().chunks(cut) {
                m.feed(c);
            }
            assert_eq!(m.lines, 200);
            let marks: Vec<u64> = m
                .index
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let starts = crate::store::line_starts(&text);
            let want: Vec<u64> = starts.iter().step_by(STEP).map(|&s| s as u64).collect();
            assert_eq!(marks, want, "chunks of {cut}");
            let whole = Marks::from_starts(text.len(), &starts);
            assert_eq!((whole.bytes, whole.lines), (m.bytes, m.lines));
            assert_eq!(whole.index, m.index, "from the line starts");
        }
        let mut m = Marks::default();
        m.feed(b"a\n\nb");
        assert_eq!(m.lines, crate::store::line_starts("a\n\nb").len());
    }
}
