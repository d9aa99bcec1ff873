//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while decoding ftrace data.
///
/// Offsets are byte offsets from the start of the file (or of the buffer
/// given to a pure decoder), so a corrupt trace can be inspected with `xxd -s`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// The data ended before a structure was complete.
    #[error("truncated input at byte offset {offset}: {what} needs {need} more bytes (is the file complete? re-copy or re-record it)")]
    Truncated {
        /// Where the incomplete structure starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// How many bytes were needed.
        need: u64,
    },
    /// The data is present but does not make sense.
    #[error("corrupt data at byte offset {offset}: {what}")]
    Corrupt {
        /// Where the bad value was found.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// The file is not a trace-cmd .dat file.
    #[error("not a trace-cmd .dat file (bad magic at byte offset 0); latlab reads trace-cmd .dat v6/v7, ftrace text and CTF directories")]
    BadMagic,
    /// A .dat file version this crate does not read.
    #[error("unsupported trace-cmd file version {version:?} (supported: 6 and 7); convert it with `trace-cmd convert --file-version 7`")]
    UnsupportedVersion {
        /// The version string found in the file.
        version: String,
    },
    /// A compression algorithm this crate does not read.
    #[error("unsupported compression {name:?} (supported: none, zstd, zlib); convert with `trace-cmd convert --compression none`")]
    UnsupportedCompression {
        /// The algorithm name found in the file.
        name: String,
    },
    /// Decompressing a section or chunk failed.
    #[error("cannot decompress {algo} data at byte offset {offset}: {msg}")]
    Decompress {
        /// Where the compressed block starts.
        offset: u64,
        /// The algorithm.
        algo: &'static str,
        /// The decoder's message.
        msg: String,
    },
    /// An event `format` file could not be parsed.
    #[error("bad event format for {event}: line {line}: {msg}")]
    Format {
        /// The event (system/name) or "?" when unknown.
        event: String,
        /// The 1-based line in the format file.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// A line of ftrace text output could not be parsed.
    #[error("{path}:{line}: cannot parse ftrace text line: {msg}")]
    Text {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// A decoding error in one CPU's ring-buffer data.
    #[error("in the data of CPU {cpu}{}", if buffer.is_empty() { String::new() } else { format!(" of instance {buffer:?}") })]
    Cpu {
        /// The CPU whose data is bad.
        cpu: u32,
        /// The instance (empty for the top-level buffer).
        buffer: String,
        /// What went wrong, with the byte offset.
        #[source]
        source: Box<Error>,
    },
    /// An external program needed to read a format is missing or failed.
    #[error("{program}: {msg}")]
    Tool {
        /// The program, e.g. `babeltrace2`.
        program: &'static str,
        /// What happened and how to fix it.
        msg: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shifts the offset of an offset-carrying error by `base` (used when a
    /// pure decoder worked on a slice that starts at `base` in the file).
    pub fn at_base(self, base: u64) -> Self {
        match self {
            Error::Truncated { offset, what, need } => Error::Truncated {
                offset: offset + base,
                what,
                need,
            },
            Error::Corrupt { offset, what } => Error::Corrupt {
                offset: offset + base,
                what,
            },
            Error::Decompress { offset, algo, msg } => Error::Decompress {
                offset: offset + base,
                algo,
                msg,
            },
            Error::Cpu {
                cpu,
                buffer,
                source,
            } => Error::Cpu {
                cpu,
                buffer,
                source: Box::new(source.at_base(base)),
            },
            other => other,
        }
    }

    /// The innermost error (through [`Error::Cpu`]).
    pub fn root(&self) -> &Error {
        match self {
            Error::Cpu { source, .. } => source.root(),
            e => e,
        }
    }
}
