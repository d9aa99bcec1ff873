//! What can go wrong in the fleet, one enum for the board's and the
//! server's side.

use std::path::PathBuf;

/// What can go wrong pushing, spooling or serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The token file could not be read.
    #[error("reading the token file {path}: {error}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// Neither a token file nor `LATLAB_TOKEN`.
    #[error(
        "no board token: give --token-file FILE or set LATLAB_TOKEN \
         (`latlab serve --add-board NAME` prints one)"
    )]
    NoToken,
    /// The spool could not be made, read or written.
    #[error("{action} {path}{hint}: {error}")]
    Spool {
        /// What was being done (`creating the spool`, `writing`).
        action: &'static str,
        /// The spool, or the file in it.
        path: PathBuf,
        /// What to check, or empty.
        hint: &'static str,
        /// The cause.
        error: std::io::Error,
    },
    /// A result that is not JSON-serializable.
    #[error("serializing the result: {0}")]
    Json(serde_json::Error),
    /// The server refused the board's token; the spool keeps every result.
    #[error("{0}")]
    Unauthorized(String),
    /// A result could neither be spooled nor sent.
    #[error("{0}; and the result could not be spooled either (see above)")]
    Unsent(String),
    /// The store refused or could not be reached.
    #[error(transparent)]
    History(#[from] latlab_history::HistoryError),
    /// A server setting out of range.
    #[error("{0}")]
    Setting(String),
    /// The server could not start or stopped serving.
    #[error("{action}: {error}")]
    Serve {
        /// What was being done (`listening on 127.0.0.1:8086 (...)`).
        action: String,
        /// The cause.
        error: std::io::Error,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, FleetError>;
