//! What can go wrong with a history, one enum for both stores.

use std::path::PathBuf;

/// What can go wrong with the history database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The directory for the database could not be made.
    #[error("creating the directory {path} for the history database: {source} (choose another place with --db FILE)")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("history database {path}: {action}: {source} (is it a latlab history? choose another with --db FILE)")]
    Sql {
        /// The database file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The cause.
        source: rusqlite::Error,
    },
    /// PostgreSQL refused an operation or could not be reached.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL history {location}: {action}: {source} (is the server running and the URL right? --db postgres://USER@HOST/DB)")]
    Postgres {
        /// The database URL, without its password.
        location: String,
        /// What was being done.
        action: &'static str,
        /// The cause.
        source: postgres::Error,
    },
    /// A PostgreSQL URL given to a latlab built without PostgreSQL.
    #[error("{location}: this latlab was built without PostgreSQL (a board build, `make dist`): push results to a `latlab serve` with --push URL, use a SQLite --db FILE, or use a full build (cargo build)")]
    NoPostgres {
        /// The URL, without its password.
        location: String,
    },
    /// The database was written by a newer latlab.
    #[error("history database {location} has layout {found}, newer than this latlab's {supported}: update latlab or use another --db")]
    Newer {
        /// The database file or URL.
        location: String,
        /// Its layout version.
        found: i64,
        /// The newest this latlab knows.
        supported: i64,
    },
    /// No history at this path (opening an existing one).
    #[error("no history at {}: `latlab run` stores each result there, `latlab history --add RESULT` stores older ones (or choose another with --db)", path.display())]
    Missing {
        /// The SQLite file that is not there.
        path: PathBuf,
    },
    /// No entry with this id.
    #[error("no result with id {id} in {location}: `latlab history` lists the ids")]
    NotFound {
        /// The database file or URL.
        location: String,
        /// The id asked for.
        id: i64,
    },
    /// Ids to delete that are not stored; nothing was deleted.
    #[error("no result with id {} in {location}, so nothing was deleted: `latlab history` lists the ids", ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))]
    NotStored {
        /// The database file or URL.
        location: String,
        /// The ids not found.
        ids: Vec<i64>,
    },
    /// A time bound that is not a UTC date or time.
    #[error("time {0:?}: give a UTC date YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS]")]
    Time(String),
    /// A stored or given document is not valid JSON of a result.
    #[error("result {what} is not valid result JSON: {source}")]
    Json {
        /// Which result (`id 4`, `to store`).
        what: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// A board name or token that cannot be stored.
    #[error("{0}")]
    Board(String),
    /// Neither XDG_DATA_HOME nor HOME is set.
    #[error("no data directory for the history: set XDG_DATA_HOME or HOME, or give --db FILE")]
    NoDataDir,
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, HistoryError>;
