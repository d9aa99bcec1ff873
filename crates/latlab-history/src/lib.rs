//! latlab-history: every result kept in one database, so runs can be listed
//! and compared later (`latlab history`, `latlab compare`) and a lab of
//! boards can share one store (`latlab serve`).
//!
//! Two backends behind one API, [`History`]:
//!
//! - **SQLite** (the default, one file per machine, no server): WAL mode with
//!   `synchronous=FULL`, each result inserted in one transaction, so a writer
//!   killed at any moment leaves every earlier entry intact (SQLite rolls the
//!   torn transaction back on the next open). The layout version is in
//!   `PRAGMA user_version`; older files are migrated when opened.
//! - **PostgreSQL** (`--db postgres://...`), for many writers: the layout is
//!   created by versioned migrations ([`POSTGRES_MIGRATIONS`]) on first use,
//!   recorded in `latlab_migrations` and applied under an advisory lock, so
//!   several processes opening a new database at once apply them once.
//!
//! Every result has a unique id ([`latlab_document::document_id`]: its `id`
//! field, or one derived from its content); storing a result whose id is
//! already stored is a no-op that returns the stored row. The whole result
//! JSON is kept, plus a few columns for listing.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let mut history = latlab_history::History::open(&dir.path().join("h.sqlite")).unwrap();
//! let doc = serde_json::json!({"schema": "latlab.lockbench", "started_at": "2026-11-22T01:00:00Z"});
//! let id = history.insert_document(&doc).unwrap();
//! assert_eq!(history.get(id).unwrap(), doc);
//! assert_eq!(history.insert_document(&doc).unwrap(), id, "stored once");
//! assert_eq!(history.list(None).unwrap()[0].schema, "latlab.lockbench");
//! ```

#![warn(missing_docs)]

mod backend;
mod columns;
mod deletion;
mod error;
mod filter;
#[doc(hidden)]
pub mod fixtures;
mod group;
mod location;
#[cfg(feature = "postgres")]
mod pg;
mod sqlite;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use latlab_measure::result::RunResult;
use serde_json::Value;

/// Version of the SQLite table layout, in `PRAGMA user_version`.
pub const LAYOUT_VERSION: i64 = 3;

pub use deletion::Deletion;
pub use error::{HistoryError, Result};
pub use filter::{check_time, Filter};
pub use group::{kind_of, variant_of, Group, Series};
pub use location::Location;
#[cfg(feature = "postgres")]
pub use pg::POSTGRES_MIGRATIONS;

use backend::Backend;
use columns::Columns;

/// One line of the history listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Row id, for `latlab compare`.
    pub id: i64,
    /// The result's unique id ([`latlab_document::document_id`]).
    pub uid: String,
    /// The board that pushed it to `latlab serve` (`None`: stored locally).
    pub board: Option<String>,
    /// `schema` of the result (`latlab.run`, ...).
    pub schema: String,
    /// When the result started, UTC.
    pub started_at: String,
    /// Host name.
    pub host: Option<String>,
    /// Machine architecture (`x86_64`, `aarch64`).
    pub arch: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Preemption model.
    pub preemption: Option<String>,
    /// Background load spec (`None`: no load).
    pub load: Option<String>,
    /// What the kind measured where it measures different things
    /// ([`variant_of`]: a run's timer and period, a watch's selection).
    pub variant: Option<String>,
    /// Largest latency, ns (a run's overall, a response's one-way).
    pub max_ns: Option<u64>,
    /// 99.9th percentile of the latency, ns.
    pub p999_ns: Option<u64>,
    /// `pass`, `fail`, `suspect` or `none`.
    pub verdict: Option<String>,
}

/// What storing a result did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Its row id.
    pub id: i64,
    /// Its unique id.
    pub uid: String,
    /// False when it was already stored (nothing was written).
    pub new: bool,
}

/// The history database: one store ([`Location`]) behind one API.
pub struct History {
    backend: RefCell<Box<dyn Backend>>,
    location: Location,
    display: String,
}

/// `$XDG_DATA_HOME/latlab/history.sqlite`, else
/// `$HOME/.local/share/latlab/history.sqlite`.
pub fn default_path() -> Result<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(data) = non_empty("XDG_DATA_HOME") {
        return Ok(PathBuf::from(data).join("latlab/history.sqlite"));
    }
    non_empty("HOME")
        .map(|home| PathBuf::from(home).join(".local/share/latlab/history.sqlite"))
        .ok_or(HistoryError::NoDataDir)
}

/// Stores one run result in the database at `db_path` (created if needed);
/// returns its id. The call `latlab run` makes after each run.
pub fn record_run(db_path: &Path, run: &RunResult) -> Result<i64> {
    History::open(db_path)?.insert_run(run)
}

impl History {
    /// Opens (creating if needed) the SQLite database at `path`.
    pub fn open(path: &Path) -> Result<History> {
        History::open_location(&Location::Sqlite(path.to_path_buf()))
    }

    /// Opens a SQLite file or a PostgreSQL URL ([`Location::parse`]).
    pub fn open_spec(spec: &str) -> Result<History> {
        History::open_location(&Location::parse(spec))
    }

    /// Opens (creating and migrating if needed) the database at `location`.
    /// A PostgreSQL URL needs the `postgres` feature: without it (a board
    /// build) it is [`HistoryError::NoPostgres`].
    pub fn open_location(location: &Location) -> Result<History> {
        let backend: Box<dyn Backend> = match location {
            Location::Sqlite(path) => Box::new(sqlite::SqliteStore::open(path)?),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Box::new(pg::PostgresStore::open(url)?),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => {
                return Err(HistoryError::NoPostgres {
                    location: location.display(),
                })
            }
        };
        Ok(History {
            backend: RefCell::new(backend),
            location: location.clone(),
            display: location.display(),
        })
    }

    /// Opens an existing database at `location`; a missing SQLite file is
    /// [`HistoryError::Missing`], which says how results get there.
    pub fn open_existing(location: &Location) -> Result<History> {
        if let Location::Sqlite(path) = location {
            if !path.exists() {
                return Err(HistoryError::Missing { path: path.clone() });
            }
        }
        History::open_location(location)
    }

    /// Where the database is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The file, or the URL without password, for messages.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The bytes a SQLite history takes on disk (the file and its
    /// write-ahead log); `None` for PostgreSQL.
    pub fn size_on_disk(&self) -> Option<u64> {
        let Location::Sqlite(path) = &self.location else {
            return None;
        };
        let wal = path.with_extension(format!(
            "{}-wal",
            path.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        Some(
            [path, &wal]
                .iter()
                .filter_map(|p| std::fs::metadata(p).ok())
                .map(|m| m.len())
                .sum(),
        )
    }

    /// The open store.
    fn backend(&self) -> std::cell::RefMut<'_, Box<dyn Backend>> {
        self.backend.borrow_mut()
    }

    /// Stores a run result; returns its row id.
    pub fn insert_run(&mut self, run: &RunResult) -> Result<i64> {
        let value = serde_json::to_value(run).map_err(|source| HistoryError::Json {
            what: "to store".into(),
            source,
        })?;
        self.insert_document(&value)
    }

    /// Stores any result document (run, respond, lockbench, ...) unless
    /// one with its id is already stored; returns the row id either way.
    pub fn insert_document(&mut self, doc: &Value) -> Result<i64> {
        Ok(self.store(doc, None)?.id)
    }

    /// Stores a document in one transaction, as pushed by `board` (or
    /// locally: `None`); a document whose id is already stored is left as
    /// it is. The listing columns are read where the document has them.
    pub fn store(&mut self, doc: &Value, board: Option<&str>) -> Result<Stored> {
        self.backend()
            .store(&Columns::of(doc), board, &doc.to_string())
    }

    /// The stored results, oldest first; with `limit`, only the newest ones.
    pub fn list(&self, limit: Option<usize>) -> Result<Vec<Entry>> {
        self.query(&Filter {
            limit,
            ..Filter::default()
        })
    }

    /// The stored results matching `filter`, oldest first.
    pub fn query(&self, filter: &Filter) -> Result<Vec<Entry>> {
        let mut entries = self.backend().query(filter)?;
        entries.reverse();
        Ok(entries)
    }

    /// The listing line of result `id`, if there is one.
    pub fn entry(&self, id: i64) -> Result<Option<Entry>> {
        Ok(self
            .query(&Filter {
                id: Some(id),
                ..Filter::default()
            })?
            .pop())
    }

    /// The whole stored document of result `id`.
    pub fn get(&self, id: i64) -> Result<Value> {
        let text = self.backend().get(id)?;
        let text = text.ok_or_else(|| HistoryError::NotFound {
            location: self.display.clone(),
            id,
        })?;
        serde_json::from_str(&text).map_err(|source| HistoryError::Json {
            what: format!("id {id}"),
            source,
        })
    }

    /// Deletes the results with these ids, all or none: when one of them
    /// is not stored, nothing is deleted ([`HistoryError::NotStored`]).
    /// Returns how many were deleted.
    pub fn delete(&mut self, ids: &[i64]) -> Result<usize> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let missing = self.backend().delete(&ids)?;
        if !missing.is_empty() {
            return Err(HistoryError::NotStored {
                location: self.display.clone(),
                ids: missing,
            });
        }
        Ok(ids.len())
    }

    /// Gives the space of deleted results back: a SQLite file is rewritten
    /// without them (`VACUUM`), so it shrinks; PostgreSQL reclaims it
    /// itself (autovacuum), so nothing is done there.
    pub fn reclaim(&mut self) -> Result<()> {
        self.backend().reclaim()
    }

    /// How many results are stored.
    pub fn count(&self) -> Result<i64> {
        self.backend().count()
    }

    /// Registers a board for `latlab serve` with the hash of its token.
    /// A name that is empty, longer than 200 bytes or has control
    /// characters, or that is already registered, is refused.
    pub fn add_board(&mut self, name: &str, token_hash: &str) -> Result<()> {
        if name.is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
            return Err(HistoryError::Board(format!(
                "board name {name:?}: give 1 to 200 bytes without control characters"
            )));
        }
        if !self.backend().add_board(name, token_hash)? {
            return Err(HistoryError::Board(format!(
                "a board named {name:?} is already registered in {}: choose another name",
                self.display
            )));
        }
        Ok(())
    }

    /// The board whose token has this hash.
    pub fn board_for_token(&self, token_hash: &str) -> Result<Option<String>> {
        self.backend().board_for_token(token_hash)
    }

    /// Every registered board's name, sorted.
    pub fn boards(&self) -> Result<Vec<String>> {
        self.backend().boards()
    }

    /// The database's own consistency check: the problems it lists (none:
    /// the store is sound). PostgreSQL checks itself; its list is empty.
    pub fn check(&self) -> Result<Vec<String>> {
        self.backend().check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_columns_come_from_the_document() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("sub/dir/h.sqlite")).unwrap();
        let doc = serde_json::json!({
            "schema": "latlab.run", "started_at": "2026-11-22T01:54:39Z", "verdict": "fail",
            "system": {"hostname": "board", "kernel_release": "6.18.0-rt", "preemption_model": "rt", "machine": "aarch64"},
            "overall": {"latency": {"max": 3_420_000u64, "p99_9": 1_000_000u64}},
            "load": {"spec": "full", "command": "make -j4"}
        });
        let a = h.insert_document(&doc).unwrap();
        let b = h
            .insert_document(&serde_json::json!({"schema": "latlab.respond"}))
            .unwrap();
        assert!(b > a);
        let list = h.list(None).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0],
            Entry {
                id: a,
                uid: latlab_document::content_id(&doc),
                board: None,
                schema: "latlab.run".into(),
                started_at: "2026-11-22T01:54:39Z".into(),
                host: Some("board".into()),
                arch: Some("aarch64".into()),
                kernel: Some("6.18.0-rt".into()),
                preemption: Some("rt".into()),
                load: Some("full + `make -j4`".into()),
                variant: None,
                max_ns: Some(3_420_000),
                p999_ns: Some(1_000_000),
                verdict: Some("fail".into()),
            }
        );
        assert_eq!(list[1].host, None);
        assert_eq!(h.list(Some(1)).unwrap()[0].id, b, "limit keeps the newest");
        assert!(matches!(
            h.get(99),
            Err(HistoryError::NotFound { id: 99, .. })
        ));
        // WAL mode is kept in the file: a second connection sees it.
        let conn = rusqlite::Connection::open(dir.path().join("sub/dir/h.sqlite")).unwrap();
        let journal: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(journal, "wal");
        assert!(h.check().unwrap().is_empty());
    }

    #[test]
    fn a_result_stored_twice_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite")).unwrap();
        let doc = serde_json::json!({"schema": "latlab.run", "id": "r-1", "started_at": "x"});
        let first = h.store(&doc, Some("b")).unwrap();
        assert!(first.new);
        assert_eq!(first.uid, "r-1");
        let again = h.store(&doc, None).unwrap();
        assert_eq!(
            again,
            Stored {
                new: false,
                ..first.clone()
            }
        );
        // The same id with other content is still the stored one.
        let changed = serde_json::json!({"schema": "latlab.run", "id": "r-1", "started_at": "y"});
        assert_eq!(h.store(&changed, None).unwrap().id, first.id);
        assert_eq!(h.count().unwrap(), 1);
        assert_eq!(h.get(first.id).unwrap(), doc);
        assert_eq!(h.list(None).unwrap()[0].board.as_deref(), Some("b"));
    }

    #[test]
    fn boards_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite")).unwrap();
        h.add_board("rpi4", "hash-a").unwrap();
        let err = h.add_board("rpi4", "hash-b").unwrap_err().to_string();
        assert!(err.contains("already registered"), "{err}");
        assert!(h.add_board("", "x").is_err());
        assert!(h.add_board("a\nb", "x").is_err());
        assert_eq!(
            h.board_for_token("hash-a").unwrap().as_deref(),
            Some("rpi4")
        );
        assert_eq!(h.board_for_token("hash-b").unwrap(), None);
        for (i, kernel) in ["6.1", "6.6", "6.6"].iter().enumerate() {
            let doc = serde_json::json!({"schema": "latlab.run", "id": format!("r{i}"),
                "system": {"kernel_release": kernel}, "load": if i == 2 { serde_json::json!({"spec": "full"}) } else { Value::Null }});
            h.store(&doc, Some("rpi4")).unwrap();
        }
        let q = |kernel: Option<&str>, load: Option<&str>| {
            h.query(&Filter {
                board: Some("rpi4".into()),
                kernel: kernel.map(Into::into),
                load: load.map(Into::into),
                ..Filter::default()
            })
            .unwrap()
            .into_iter()
            .map(|e| e.uid)
            .collect::<Vec<_>>()
        };
        assert_eq!(q(None, None), ["r0", "r1", "r2"]);
        assert_eq!(q(Some("6.6"), None), ["r1", "r2"]);
        assert_eq!(q(Some("6.6"), Some("full")), ["r2"]);
        assert_eq!(q(None, Some("")), ["r0", "r1"]);
        let second = h.list(None).unwrap()[1].clone();
        assert_eq!(h.entry(second.id).unwrap(), Some(second));
        assert_eq!(h.entry(99).unwrap(), None);
        assert_eq!(h.boards().unwrap(), ["rpi4"]);
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(
            &path,
            "this is not a database, but it is long enough to look like one",
        )
        .unwrap();
        let err = History::open(&path).err().expect("refused");
        let text = err.to_string();
        assert!(
            text.contains("notes.txt") && text.contains("--db"),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "this is not a database, but it is long enough to look like one"
        );
    }

    #[test]
    fn a_missing_history_is_not_created_when_an_existing_one_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.sqlite");
        let err = History::open_existing(&Location::Sqlite(path.clone()))
            .err()
            .expect("refused");
        assert!(matches!(&err, HistoryError::Missing { path: p } if *p == path));
        assert!(err.to_string().contains("latlab history --add"), "{err}");
        assert!(!path.exists());
        History::open(&path).unwrap();
        History::open_existing(&Location::Sqlite(path)).unwrap();
    }

    #[test]
    fn locations() {
        assert_eq!(
            Location::parse("postgres://u:secret@h/db"),
            Location::Postgres("postgres://u:secret@h/db".into())
        );
        assert_eq!(
            Location::parse("postgres://u:secret@h/db").display(),
            "postgres://u:***@h/db"
        );
        assert_eq!(
            Location::parse("h.sqlite"),
            Location::Sqlite("h.sqlite".into())
        );
    }

    #[test]
    fn default_path_follows_xdg_then_home() {
        // Only read here, never set: the environment is shared by the tests.
        let path = default_path();
        match (std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME")) {
            (Some(x), _) if !x.is_empty() => {
                assert_eq!(
                    path.unwrap(),
                    PathBuf::from(x).join("latlab/history.sqlite")
                )
            }
            (_, Some(h)) if !h.is_empty() => assert_eq!(
                path.unwrap(),
                PathBuf::from(h).join(".local/share/latlab/history.sqlite")
            ),
            _ => assert!(matches!(path, Err(HistoryError::NoDataDir))),
        }
    }
}
