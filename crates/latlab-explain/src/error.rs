//! The crate's error type.

use std::path::PathBuf;

/// Errors of the explain analysis.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The trace could not be read or decoded.
    #[error("reading trace {path}: {source}")]
    Trace {
        /// The trace file or directory.
        path: PathBuf,
        /// The decoder's error (names the byte offset for corrupt files).
        #[source]
        source: latlab_ftrace::Error,
    },
    /// A file (trace, run result, window dump) could not be opened or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A `latlab run` result file did not parse.
    #[error("{path}: not a `latlab run --json` result ({reason})")]
    RunResult {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A threshold could not be parsed.
    #[error("threshold {spec:?}: {reason} (write e.g. `100us`, `1.5ms`, `80000ns` or a percentile like `p99`)")]
    BadThreshold {
        /// What the user wrote.
        spec: String,
        /// What is wrong.
        reason: String,
    },
}

/// Result with [`ExplainError`].
pub type Result<T, E = ExplainError> = std::result::Result<T, E>;
