//! The SQLite backend: one file, WAL mode, layout version in
//! `PRAGMA user_version`, migrated in place when an older latlab wrote it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use crate::backend::Backend;
use crate::filter::Arg;
use crate::{Columns, Entry, Filter, HistoryError, Result, Stored, LAYOUT_VERSION};

fn sql_error(path: &Path, action: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
    let path = path.to_path_buf();
    move |source| HistoryError::Sql {
        path,
        action,
        source,
    }
}

fn err(display: &str, action: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
    sql_error(Path::new(display), action)
}

/// Layout 1 (latlab before result ids): the results table.
const LAYOUT_1: &str = "CREATE TABLE IF NOT EXISTS results (
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
 CREATE INDEX IF NOT EXISTS results_started ON results (started_at);";

/// Layout 2: every result's unique id, the board that pushed it, more
/// listing columns, and the boards of `latlab serve`.
const LAYOUT_2: &str = "ALTER TABLE results ADD COLUMN uid TEXT;
 ALTER TABLE results ADD COLUMN board TEXT;
 ALTER TABLE results ADD COLUMN arch TEXT;
 ALTER TABLE results ADD COLUMN p999_ns INTEGER;
 CREATE TABLE boards (
     name        TEXT PRIMARY KEY,
     token_hash  TEXT NOT NULL UNIQUE,
     created_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
 );
 CREATE INDEX results_board ON results (board, id);";

/// Layout 3: the variant of each result (what its kind measured: a run's
/// timer and period, a watch's selection), part of its comparable group.
const LAYOUT_3: &str = "ALTER TABLE results ADD COLUMN variant TEXT;";

fn open(path: &Path) -> Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| HistoryError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let sql = |action| sql_error(path, action);
    let mut conn = Connection::open(path).map_err(sql("opening"))?;
    conn.busy_timeout(Duration::from_secs(30))
        .map_err(sql("setting the busy timeout"))?;
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        .map_err(sql("switching to WAL mode"))?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(sql("setting synchronous=FULL"))?;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql("starting the migration"))?;
    let version: i64 = tx
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(sql("reading the layout version"))?;
    if version > LAYOUT_VERSION {
        return Err(HistoryError::Newer {
            location: path.display().to_string(),
            found: version,
            supported: LAYOUT_VERSION,
        });
    }
    if version < 1 {
        tx.execute_batch(LAYOUT_1)
            .map_err(sql("creating the tables"))?;
    }
    if version < 2 {
        tx.execute_batch(LAYOUT_2)
            .map_err(sql("migrating to layout 2"))?;
        // Ids and the new columns of the results stored before.
        let rows = all_json(&tx).map_err(sql("migrating to layout 2"))?;
        let mut seen = std::collections::HashSet::new();
        for (id, json) in rows {
            let value: serde_json::Value =
                serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
            let columns = Columns::of(&value);
            // Two identical old entries: the later one keeps its row under
            // an id of its own, so that nothing is dropped by a migration.
            let uid = if seen.insert(columns.uid.clone()) {
                columns.uid
            } else {
                format!("{}-row{id}", columns.uid)
            };
            tx.execute(
                "UPDATE results SET uid = ?1, arch = ?2, p999_ns = ?3 WHERE id = ?4",
                params![uid, columns.arch, columns.p999_ns, id],
            )
            .map_err(sql("migrating to layout 2"))?;
        }
        tx.execute_batch(
            "CREATE UNIQUE INDEX results_uid ON results (uid);
             PRAGMA user_version = 2;",
        )
        .map_err(sql("migrating to layout 2"))?;
    }
    if version < 3 {
        tx.execute_batch(LAYOUT_3)
            .map_err(sql("migrating to layout 3"))?;
        let rows = all_json(&tx).map_err(sql("migrating to layout 3"))?;
        for (id, json) in rows {
            let value: serde_json::Value =
                serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
            tx.execute(
                "UPDATE results SET variant = ?1 WHERE id = ?2",
                params![crate::variant_of(&value), id],
            )
            .map_err(sql("migrating to layout 3"))?;
        }
        tx.execute_batch("PRAGMA user_version = 3;")
            .map_err(sql("migrating to layout 3"))?;
    }
    tx.commit().map_err(sql("committing the migration"))?;
    Ok(conn)
}

/// Every stored result's id and JSON (for a migration that fills a column).
fn all_json(conn: &Connection) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare("SELECT id, json FROM results")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

pub(crate) const COLUMNS: &str = "id, uid, board, schema, started_at, host, arch, kernel, \
     preemption, load, variant, max_ns, p999_ns, verdict";

/// An open SQLite history file.
pub(crate) struct SqliteStore {
    conn: Connection,
    /// The file, for messages.
    display: String,
}

impl SqliteStore {
    /// Opens (creating and migrating if needed) the file at `path`.
    pub(crate) fn open(path: &Path) -> Result<SqliteStore> {
        Ok(SqliteStore {
            conn: open(path)?,
            display: path.display().to_string(),
        })
    }
}

impl Backend for SqliteStore {
    fn store(&mut self, c: &Columns, board: Option<&str>, json: &str) -> Result<Stored> {
        let display = self.display.as_str();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err(display, "starting a transaction"))?;
        let inserted = tx
        .execute(
            "INSERT INTO results (uid, board, schema, started_at, host, arch, kernel, preemption,
                                  load, max_ns, p999_ns, verdict, json, variant)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (uid) DO NOTHING",
            params![
                c.uid,
                board,
                c.schema,
                c.started_at,
                c.host,
                c.arch,
                c.kernel,
                c.preemption,
                c.load,
                c.max_ns,
                c.p999_ns,
                c.verdict,
                json,
                c.variant,
            ],
        )
        .map_err(err(display, "inserting a result"))?;
        let id: i64 = tx
            .query_row("SELECT id FROM results WHERE uid = ?1", [&c.uid], |r| {
                r.get(0)
            })
            .map_err(err(display, "reading the stored result's id"))?;
        tx.commit().map_err(err(display, "committing"))?;
        Ok(Stored {
            id,
            uid: c.uid.clone(),
            new: inserted == 1,
        })
    }

    fn query(&mut self, filter: &Filter) -> Result<Vec<Entry>> {
        let (conn, display) = (&self.conn, self.display.as_str());
        let (condition, mut args) = filter.condition(|n, _| format!("?{n}"));
        args.push(Arg::Int(filter.limit.map_or(-1, |l| l as i64)));
        let sql = format!(
            "SELECT {COLUMNS} FROM results WHERE {condition} ORDER BY id DESC LIMIT ?{}",
            args.len()
        );
        let values: Vec<rusqlite::types::Value> = args
            .into_iter()
            .map(|a| match a {
                Arg::Int(v) => rusqlite::types::Value::Integer(v),
                Arg::Text(v) => rusqlite::types::Value::Text(v),
            })
            .collect();
        let mut stmt = conn.prepare(&sql).map_err(err(display, "listing"))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(values.iter()), |row| {
                Ok(Entry {
                    id: row.get(0)?,
                    uid: row.get(1)?,
                    board: row.get(2)?,
                    schema: row.get(3)?,
                    started_at: row.get(4)?,
                    host: row.get(5)?,
                    arch: row.get(6)?,
                    kernel: row.get(7)?,
                    preemption: row.get(8)?,
                    load: row.get(9)?,
                    variant: row.get(10)?,
                    max_ns: row.get::<_, Option<i64>>(11)?.map(|v| v as u64),
                    p999_ns: row.get::<_, Option<i64>>(12)?.map(|v| v as u64),
                    verdict: row.get(13)?,
                })
            })
            .map_err(err(display, "listing"))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err(display, "listing"))
    }

    fn delete(&mut self, ids: &[i64]) -> Result<Vec<i64>> {
        let display = self.display.as_str();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err(display, "starting a transaction"))?;
        let mut missing = Vec::new();
        for &id in ids {
            let n = tx
                .execute("DELETE FROM results WHERE id = ?1", [id])
                .map_err(err(display, "deleting a result"))?;
            if n == 0 {
                missing.push(id);
            }
        }
        if missing.is_empty() {
            tx.commit().map_err(err(display, "committing"))?;
        } else {
            tx.rollback().map_err(err(display, "rolling back"))?;
        }
        Ok(missing)
    }

    fn reclaim(&mut self) -> Result<()> {
        let display = self.display.as_str();
        self.conn
            .execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(err(
                display,
                "reclaiming the space of deleted results (VACUUM)",
            ))
    }

    fn get(&mut self, id: i64) -> Result<Option<String>> {
        let display = self.display.as_str();
        self.conn
            .query_row("SELECT json FROM results WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
            .map_err(err(display, "reading a result"))
    }

    fn count(&mut self) -> Result<i64> {
        let display = self.display.as_str();
        self.conn
            .query_row("SELECT count(*) FROM results", [], |row| row.get(0))
            .map_err(err(display, "counting"))
    }

    fn add_board(&mut self, name: &str, token_hash: &str) -> Result<bool> {
        let display = self.display.as_str();
        let n = self
            .conn
            .execute(
                "INSERT INTO boards (name, token_hash) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                params![name, token_hash],
            )
            .map_err(err(display, "adding a board"))?;
        Ok(n == 1)
    }

    fn board_for_token(&mut self, token_hash: &str) -> Result<Option<String>> {
        let display = self.display.as_str();
        self.conn
            .query_row(
                "SELECT name FROM boards WHERE token_hash = ?1",
                [token_hash],
                |row| row.get(0),
            )
            .optional()
            .map_err(err(display, "looking up a token"))
    }

    fn boards(&mut self) -> Result<Vec<String>> {
        let display = self.display.as_str();
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM boards ORDER BY name")
            .map_err(err(display, "listing boards"))?;
        let rows = stmt
            .query_map([], |row| row.get(0))
            .map_err(err(display, "listing boards"))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err(display, "listing boards"))
    }

    fn check(&mut self) -> Result<Vec<String>> {
        let display = self.display.as_str();
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(err(display, "checking integrity"))?;
        let rows = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(err(display, "checking integrity"))?;
        let lines = rows
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err(display, "checking integrity"))?;
        Ok(lines.into_iter().filter(|l| l != "ok").collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of layout 2 (before variants) gets each stored result's
    /// variant when opened.
    #[test]
    fn layout_2_is_migrated_with_the_variants_of_stored_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(LAYOUT_1).unwrap();
            conn.execute_batch(LAYOUT_2).unwrap();
            conn.execute_batch(
                "CREATE UNIQUE INDEX results_uid ON results (uid); PRAGMA user_version = 2;",
            )
            .unwrap();
            let doc = serde_json::json!({"schema": "latlab.watch", "settings": {"selection": "comm loop"}});
            conn.execute(
                "INSERT INTO results (uid, schema, started_at, json) VALUES ('w', 'latlab.watch', 'x', ?1)",
                [doc.to_string()],
            )
            .unwrap();
        }
        let history = crate::History::open(&path).unwrap();
        let entry = &history.list(None).unwrap()[0];
        assert_eq!(entry.variant.as_deref(), Some("comm loop"));
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, LAYOUT_VERSION);
    }
}
