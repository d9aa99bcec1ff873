//! What a store does, once per database: [`Backend`], implemented by the
//! SQLite file ([`crate::sqlite::SqliteStore`]) and the PostgreSQL
//! database ([`crate::pg::PostgresStore`], with the `postgres` feature).
//! [`crate::History`] holds one behind this trait and adds what both share
//! (the listing columns, ids, ordering, the all-or-none checks).

use crate::{Columns, Entry, Filter, Result, Stored};

/// One open store. Each method is one statement or one transaction on
/// the database; the messages of its errors name the database.
pub(crate) trait Backend: Send {
    /// Stores a document (its listing `columns`, its `json`) as pushed by
    /// `board`, unless its id is stored; one transaction.
    fn store(&mut self, columns: &Columns, board: Option<&str>, json: &str) -> Result<Stored>;
    /// The rows `filter` selects, newest first.
    fn query(&mut self, filter: &Filter) -> Result<Vec<Entry>>;
    /// The JSON of row `id`, if stored.
    fn get(&mut self, id: i64) -> Result<Option<String>>;
    /// Deletes these rows in one transaction unless one is missing: then
    /// nothing is deleted and the missing ids are returned.
    fn delete(&mut self, ids: &[i64]) -> Result<Vec<i64>>;
    /// Gives the space of deleted rows back (where the database does not
    /// do it itself).
    fn reclaim(&mut self) -> Result<()>;
    /// How many results are stored.
    fn count(&mut self) -> Result<i64>;
    /// Registers a board; false when the name is taken.
    fn add_board(&mut self, name: &str, token_hash: &str) -> Result<bool>;
    /// The board whose token has this hash.
    fn board_for_token(&mut self, token_hash: &str) -> Result<Option<String>>;
    /// Every board's name, sorted.
    fn boards(&mut self) -> Result<Vec<String>>;
    /// The problems the database's own consistency check finds.
    fn check(&mut self) -> Result<Vec<String>>;
}
