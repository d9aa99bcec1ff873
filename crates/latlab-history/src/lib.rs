//! latlab-history: every result kept in one SQLite database, so runs can be
//! listed and compared later (`latlab history`, `latlab compare`).
//!
//! The database is in WAL mode with `synchronous=FULL`, and each result is
//! inserted in one transaction: a writer killed at any moment leaves every
//! earlier entry intact (SQLite rolls the torn transaction back on the next
//! open). The whole result JSON is stored, plus a few columns for listing.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let mut history = latlab_history::History::open(&dir.path().join("h.sqlite")).unwrap();
//! let doc = serde_json::json!({"schema": "latlab.lockbench", "started_at": "2026-11-22T01:00:00Z"});
//! let id = history.insert_document(&doc).unwrap();
//! assert_eq!(history.get(id).unwrap(), doc);
//! assert_eq!(history.list(None).unwrap()[0].schema, "latlab.lockbench");
//! ```

#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use latlab_measure::result::RunResult;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

/// Version of the table layout, in `PRAGMA user_version`.
pub const LAYOUT_VERSION: i64 = 1;

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
    /// The database was written by a newer latlab.
    #[error("history database {path} has layout {found}, newer than this latlab's {LAYOUT_VERSION}: update latlab or use another --db FILE")]
    Newer {
        /// The database file.
        path: PathBuf,
        /// Its layout version.
        found: i64,
    },
    /// No entry with this id.
    #[error("no result with id {id} in {path}: `latlab history` lists the ids")]
    NotFound {
        /// The database file.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// A stored or given document is not valid JSON of a result.
    #[error("result {what} is not valid result JSON: {source}")]
    Json {
        /// Which result (`id 4`, `to store`).
        what: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// Neither XDG_DATA_HOME nor HOME is set.
    #[error("no data directory for the history: set XDG_DATA_HOME or HOME, or give --db FILE")]
    NoDataDir,
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, HistoryError>;

/// One line of the history listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Row id, for `latlab compare`.
    pub id: i64,
    /// `schema` of the result (`latlab.run`, ...).
    pub schema: String,
    /// When the result started, UTC.
    pub started_at: String,
    /// Host name.
    pub host: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Preemption model.
    pub preemption: Option<String>,
    /// Background load spec (`None`: no load).
    pub load: Option<String>,
    /// Largest latency, ns.
    pub max_ns: Option<u64>,
    /// `pass`, `fail` or `none`.
    pub verdict: Option<String>,
}

/// The history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
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
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<History> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let sql = |action| sql_error(path, action);
        let conn = Connection::open(path).map_err(sql("opening"))?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(sql("setting the busy timeout"))?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            .map_err(sql("switching to WAL mode"))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql("setting synchronous=FULL"))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(sql("reading the layout version"))?;
        if version > LAYOUT_VERSION {
            return Err(HistoryError::Newer {
                path: path.to_path_buf(),
                found: version,
            });
        }
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS results (
                 id          INTEGER PRIMARY KEY AUTOINCREMENT,
                 schema      TEXT NOT NULL,
                 started_at  TEXT NOT NULL,
                 host        TEXT,
                 kernel      TEXT,
                 preemption  TEXT,
                 load        TEXT,
                 max_ns      INTEGER,
                 verdict     TEXT,
                 json        TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS results_started ON results (started_at);
             PRAGMA user_version = 1;
             COMMIT;",
        )
        .map_err(sql("creating the tables"))?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, action: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
        sql_error(&self.path, action)
    }

    /// Stores a run result; returns its id.
    pub fn insert_run(&mut self, run: &RunResult) -> Result<i64> {
        let value = serde_json::to_value(run).map_err(|source| HistoryError::Json {
            what: "to store".into(),
            source,
        })?;
        self.insert_document(&value)
    }

    /// Stores any result document (run, respond, lockbench, ...) in one
    /// transaction; the listing columns are read where the document has them.
    pub fn insert_document(&mut self, doc: &Value) -> Result<i64> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let json = doc.to_string();
        let path = self.path.clone();
        let sql = |action| sql_error(&path, action);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql("starting a transaction"))?;
        tx.execute(
            "INSERT INTO results (schema, started_at, host, kernel, preemption, load, max_ns, verdict, json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                text(&doc["schema"]).unwrap_or_else(|| "unknown".into()),
                text(&doc["started_at"]).unwrap_or_default(),
                text(&doc["system"]["hostname"]),
                text(&doc["system"]["kernel_release"]),
                text(&doc["system"]["preemption_model"]),
                load_name(&doc["load"]),
                doc["overall"]["latency"]["max"].as_u64().map(|v| v as i64),
                text(&doc["verdict"]),
                json,
            ],
        )
        .map_err(sql("inserting a result"))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(sql("committing"))?;
        Ok(id)
    }

    /// The stored results, oldest first; with `limit`, only the newest ones.
    pub fn list(&self, limit: Option<usize>) -> Result<Vec<Entry>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, schema, started_at, host, kernel, preemption, load, max_ns, verdict
                 FROM results ORDER BY id DESC LIMIT ?1",
            )
            .map_err(self.sql("listing"))?;
        let limit = limit.map_or(-1, |l| l as i64);
        let rows = stmt
            .query_map([limit], |row| {
                Ok(Entry {
                    id: row.get(0)?,
                    schema: row.get(1)?,
                    started_at: row.get(2)?,
                    host: row.get(3)?,
                    kernel: row.get(4)?,
                    preemption: row.get(5)?,
                    load: row.get(6)?,
                    max_ns: row.get::<_, Option<i64>>(7)?.map(|v| v as u64),
                    verdict: row.get(8)?,
                })
            })
            .map_err(self.sql("listing"))?;
        let mut entries = rows
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.sql("listing"))?;
        entries.reverse();
        Ok(entries)
    }

    /// The whole stored document of result `id`.
    pub fn get(&self, id: i64) -> Result<Value> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT json FROM results WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
            .map_err(self.sql("reading a result"))?;
        let text = text.ok_or_else(|| HistoryError::NotFound {
            path: self.path.clone(),
            id,
        })?;
        serde_json::from_str(&text).map_err(|source| HistoryError::Json {
            what: format!("id {id}"),
            source,
        })
    }

    /// SQLite's own consistency check: `Ok(())` when the file is sound,
    /// otherwise the problems it lists.
    pub fn check(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(self.sql("checking integrity"))?;
        let rows = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(self.sql("checking integrity"))?;
        let lines = rows
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.sql("checking integrity"))?;
        Ok(lines.into_iter().filter(|l| l != "ok").collect())
    }
}

/// Wraps an SQLite error with the database path and what was being done.
fn sql_error(path: &Path, action: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
    let path = path.to_path_buf();
    move |source| HistoryError::Sql {
        path,
        action,
        source,
    }
}

/// The load of a run as listed: its spec, the command, or `None`.
fn load_name(load: &Value) -> Option<String> {
    if load.is_null() {
        return None;
    }
    let spec = load["spec"].as_str().unwrap_or("?");
    Some(match load["command"].as_str() {
        Some(cmd) if spec == "none" => format!("`{cmd}`"),
        Some(cmd) => format!("{spec} + `{cmd}`"),
        None => spec.to_string(),
    })
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
            "system": {"hostname": "board", "kernel_release": "6.18.0-rt", "preemption_model": "rt"},
            "overall": {"latency": {"max": 3_420_000u64}},
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
                schema: "latlab.run".into(),
                started_at: "2026-11-22T01:54:39Z".into(),
                host: Some("board".into()),
                kernel: Some("6.18.0-rt".into()),
                preemption: Some("rt".into()),
                load: Some("full + `make -j4`".into()),
                max_ns: Some(3_420_000),
                verdict: Some("fail".into()),
            }
        );
        assert_eq!(list[1].host, None);
        assert_eq!(h.list(Some(1)).unwrap()[0].id, b, "limit keeps the newest");
        assert!(matches!(
            h.get(99),
            Err(HistoryError::NotFound { id: 99, .. })
        ));
        let journal: String = h
            .conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(journal, "wal");
        assert!(h.check().unwrap().is_empty());
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
