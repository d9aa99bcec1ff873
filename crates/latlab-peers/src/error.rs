//! What can go wrong reading a peer file: every error says where (line
//! and byte offset, both counted from 1 and 0 as editors and `dd` do) and
//! what to do.

use std::fmt;

/// A place in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Byte offset from the start of the file, from 0.
    pub byte: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, byte {}", self.line, self.byte)
    }
}

impl Position {
    /// The position of byte `column` (from 1) of `line` (from 1) in
    /// `bytes`; past the end, the end.
    pub fn of_line_column(bytes: &[u8], line: usize, column: usize) -> Position {
        let mut start = 0;
        for _ in 1..line {
            match bytes[start..].iter().position(|&b| b == b'\n') {
                Some(i) => start += i + 1,
                None => break,
            }
        }
        Position {
            line,
            byte: (start + column.saturating_sub(1)).min(bytes.len()),
        }
    }
}

/// Why a file could not be read as a peer result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The file breaks its format at a place.
    #[error("{format} file, {at}: {message}")]
    Malformed {
        /// The format it was read as.
        format: &'static str,
        /// Where.
        at: Position,
        /// What is wrong, and the fix.
        message: String,
    },
    /// The file ends before a part its format always has.
    #[error(
        "{format} file ends at {at} before {missing}: the file is incomplete \
         (the tool was stopped before it printed it, or the copy was cut); \
         use the complete file"
    )]
    Truncated {
        /// The format it was read as.
        format: &'static str,
        /// Its end.
        at: Position,
        /// The part that is missing.
        missing: String,
    },
    /// Figures no run can have (more samples than 2^53): a damaged file.
    #[error("{format} file: {message}: the file is damaged; use the file as the tool wrote it")]
    Implausible {
        /// The format it was read as.
        format: &'static str,
        /// What cannot be.
        message: String,
    },
    /// Nothing in the file says which peer format it is.
    #[error(
        "not a result latlab reads: {seen}; latlab reads its own result.json, \
         cyclictest's -h histogram text, rt-tests' --json files, and rtla \
         timerlat/osnoise hist output"
    )]
    Unknown {
        /// What the file starts with, shortened.
        seen: String,
    },
}

/// A line of a text file with its position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// Its text, without the line end, a carriage return or a terminal's
    /// cursor-movement escape at its start (cyclictest's live status).
    pub text: &'a str,
    /// Where it starts.
    pub at: Position,
}

/// The lines of `text`, with their positions.
pub(crate) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut byte = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let mut line = raw.trim_end_matches(['\n', '\r']);
        let mut start = byte;
        // "\x1b[3A": cyclictest moves the cursor up before each status block.
        while let Some(rest) = line.strip_prefix('\x1b') {
            let end = rest
                .find(|c: char| c.is_ascii_alphabetic())
                .map_or(rest.len(), |e| e + 1);
            start += 1 + end;
            line = &rest[end..];
        }
        out.push(Line {
            text: line,
            at: Position {
                line: i + 1,
                byte: start,
            },
        });
        byte += raw.len();
    }
    out
}

/// The end of `text` as a position (after its last line).
pub(crate) fn end_of(text: &str) -> Position {
    Position {
        line: text.lines().count().max(1),
        byte: text.len(),
    }
}

/// The start of `bytes` for an error message: its first non-empty line,
/// at most 60 characters, non-printable bytes as `?`.
pub(crate) fn glimpse(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(400)]);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match first {
        None if bytes.is_empty() => "the file is empty".into(),
        None => "the file holds only blank lines".into(),
        Some(line) => {
            let shown: String = line
                .chars()
                .take(60)
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            let more = if line.chars().count() > 60 { "..." } else { "" };
            format!("it starts with {shown:?}{more}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_byte_offsets_and_lose_cursor_escapes() {
        let text = "a\r\n\x1b[3Apolicy: fifo\n\nT: 0\n";
        let l = lines(text);
        assert_eq!(l.len(), 4);
        assert_eq!((l[0].text, l[0].at.byte), ("a", 0));
        assert_eq!(
            (l[1].text, l[1].at.line, l[1].at.byte),
            ("policy: fifo", 2, 7)
        );
        assert_eq!(&text[l[1].at.byte..l[1].at.byte + 6], "policy");
        assert_eq!((l[3].text, l[3].at.byte), ("T: 0", 21));
    }

    #[test]
    fn json_line_and_column_become_a_byte_offset() {
        let bytes = b"{\n  \"a\": 1,\n  \"b\" x\n}";
        let at = Position::of_line_column(bytes, 3, 7);
        assert_eq!(at.byte, 18);
        assert_eq!(bytes[at.byte], b'x');
    }

    #[test]
    fn a_glimpse_is_short_and_printable() {
        assert_eq!(glimpse(b""), "the file is empty");
        assert_eq!(glimpse(b"\n\n"), "the file holds only blank lines");
        assert_eq!(glimpse(b"\x01hello\n"), "it starts with \"?hello\"");
        assert!(glimpse(&[b'x'; 100]).ends_with("..."));
    }
}
