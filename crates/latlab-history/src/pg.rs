//! The PostgreSQL backend: versioned migrations applied on first use under
//! an advisory lock, inserts that skip a result already stored.

use postgres::{Client, NoTls};

use crate::backend::Backend;
use crate::filter::Arg;
use crate::location::redact;
use crate::{Columns, Entry, Filter, HistoryError, Result, Stored};

/// The layout of a PostgreSQL history, one migration per version, applied
/// in order on first use and recorded in `latlab_migrations`. A released
/// migration is never edited: a change is a new one at the end.
pub const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE results (
             id          BIGSERIAL PRIMARY KEY,
             uid         TEXT NOT NULL UNIQUE,
             board       TEXT,
             schema      TEXT NOT NULL,
             started_at  TEXT NOT NULL,
             host        TEXT,
             arch        TEXT,
             kernel      TEXT,
             preemption  TEXT,
             load        TEXT,
             max_ns      BIGINT,
             p999_ns     BIGINT,
             verdict     TEXT,
             json        TEXT NOT NULL,
             stored_at   TIMESTAMPTZ NOT NULL DEFAULT now()
         );
         CREATE INDEX results_started ON results (started_at);
         CREATE INDEX results_board ON results (board, id);
         CREATE TABLE boards (
             name        TEXT PRIMARY KEY,
             token_hash  TEXT NOT NULL UNIQUE,
             created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
         );",
    ),
    // The variant of each result, part of its comparable group; the rows
    // stored before are filled by `VARIANT_MIGRATION`'s step in Rust.
    (2, "ALTER TABLE results ADD COLUMN variant TEXT;"),
];

/// The migration after which each stored result's variant is computed
/// from its JSON ([`crate::variant_of`]), in the same transaction.
const VARIANT_MIGRATION: i64 = 2;

/// An arbitrary constant: the advisory lock that serialises migrations.
const MIGRATION_LOCK: i64 = 0x6c61_746c_6162;

fn err(display: &str, action: &'static str) -> impl FnOnce(postgres::Error) -> HistoryError {
    let location = display.to_string();
    move |source| HistoryError::Postgres {
        location,
        action,
        source,
    }
}

fn open(url: &str) -> Result<Client> {
    let display = redact(url);
    let mut config: postgres::Config = url.parse().map_err(err(&display, "reading the URL"))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    let mut client = config.connect(NoTls).map_err(err(&display, "connecting"))?;
    migrate(&mut client, &display)?;
    Ok(client)
}

fn migrate(client: &mut Client, display: &str) -> Result<()> {
    let mut tx = client
        .transaction()
        .map_err(err(display, "starting the migration"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(err(display, "locking for the migration"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS latlab_migrations (
             version     BIGINT PRIMARY KEY,
             applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .map_err(err(display, "creating the migration table"))?;
    let applied: i64 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM latlab_migrations",
            &[],
        )
        .map_err(err(display, "reading the layout version"))?
        .get(0);
    let newest = POSTGRES_MIGRATIONS.last().map_or(0, |m| m.0);
    if applied > newest {
        return Err(HistoryError::Newer {
            location: display.to_string(),
            found: applied,
            supported: newest,
        });
    }
    for (version, sql) in POSTGRES_MIGRATIONS.iter().filter(|m| m.0 > applied) {
        tx.batch_execute(sql)
            .map_err(err(display, "applying a migration"))?;
        if *version == VARIANT_MIGRATION {
            let rows = tx
                .query("SELECT id, json FROM results", &[])
                .map_err(err(display, "applying a migration"))?;
            for row in rows {
                let (id, json): (i64, String) = (row.get(0), row.get(1));
                let value: serde_json::Value =
                    serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
                tx.execute(
                    "UPDATE results SET variant = $1 WHERE id = $2",
                    &[&crate::variant_of(&value), &id],
                )
                .map_err(err(display, "applying a migration"))?;
            }
        }
        tx.execute(
            "INSERT INTO latlab_migrations (version) VALUES ($1)",
            &[version],
        )
        .map_err(err(display, "recording a migration"))?;
    }
    tx.commit()
        .map_err(err(display, "committing the migration"))
}

/// An open PostgreSQL history.
pub(crate) struct PostgresStore {
    client: Client,
    /// The URL without its password, for messages.
    display: String,
}

impl PostgresStore {
    /// Connects to `url` and applies the migrations not yet applied.
    pub(crate) fn open(url: &str) -> Result<PostgresStore> {
        Ok(PostgresStore {
            client: open(url)?,
            display: redact(url),
        })
    }
}

impl Backend for PostgresStore {
    fn store(&mut self, c: &Columns, board: Option<&str>, json: &str) -> Result<Stored> {
        let (client, display) = (&mut self.client, self.display.as_str());
        let inserted = client
        .query_opt(
            "INSERT INTO results (uid, board, schema, started_at, host, arch, kernel, preemption,
                                  load, max_ns, p999_ns, verdict, json, variant)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
             ON CONFLICT (uid) DO NOTHING RETURNING id",
            &[
                &c.uid,
                &board,
                &c.schema,
                &c.started_at,
                &c.host,
                &c.arch,
                &c.kernel,
                &c.preemption,
                &c.load,
                &c.max_ns,
                &c.p999_ns,
                &c.verdict,
                &json,
                &c.variant,
            ],
        )
        .map_err(err(display, "inserting a result"))?;
        let (id, new) = match inserted {
            Some(row) => (row.get(0), true),
            None => (
                client
                    .query_one("SELECT id FROM results WHERE uid = $1", &[&c.uid])
                    .map_err(err(display, "reading the stored result's id"))?
                    .get(0),
                false,
            ),
        };
        Ok(Stored {
            id,
            uid: c.uid.clone(),
            new,
        })
    }

    fn query(&mut self, filter: &Filter) -> Result<Vec<Entry>> {
        let (client, display) = (&mut self.client, self.display.as_str());
        let (condition, mut args) = filter.condition(|n, arg| match arg {
            Arg::Int(_) => format!("${n}::BIGINT"),
            Arg::Text(_) => format!("${n}::TEXT"),
        });
        let mut sql = format!(
            "SELECT {} FROM results WHERE {condition} ORDER BY id DESC",
            crate::sqlite::COLUMNS
        );
        if let Some(limit) = filter.limit {
            args.push(Arg::Int(limit as i64));
            sql.push_str(&format!(" LIMIT ${}", args.len()));
        }
        let values: Vec<Box<dyn postgres::types::ToSql + Sync>> = args
            .into_iter()
            .map(|a| -> Box<dyn postgres::types::ToSql + Sync> {
                match a {
                    Arg::Int(v) => Box::new(v),
                    Arg::Text(v) => Box::new(v),
                }
            })
            .collect();
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
            values.iter().map(|a| a.as_ref()).collect();
        let rows = client
            .query(&sql, &params)
            .map_err(err(display, "listing"))?;
        Ok(rows
            .iter()
            .map(|row| Entry {
                id: row.get(0),
                uid: row.get(1),
                board: row.get(2),
                schema: row.get(3),
                started_at: row.get(4),
                host: row.get(5),
                arch: row.get(6),
                kernel: row.get(7),
                preemption: row.get(8),
                load: row.get(9),
                variant: row.get(10),
                max_ns: row.get::<_, Option<i64>>(11).map(|v| v as u64),
                p999_ns: row.get::<_, Option<i64>>(12).map(|v| v as u64),
                verdict: row.get(13),
            })
            .collect())
    }

    fn delete(&mut self, ids: &[i64]) -> Result<Vec<i64>> {
        let (client, display) = (&mut self.client, self.display.as_str());
        let mut tx = client
            .transaction()
            .map_err(err(display, "starting a transaction"))?;
        let deleted: Vec<i64> = tx
            .query(
                "DELETE FROM results WHERE id = ANY($1) RETURNING id",
                &[&ids],
            )
            .map_err(err(display, "deleting results"))?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let missing: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| !deleted.contains(id))
            .collect();
        if missing.is_empty() {
            tx.commit().map_err(err(display, "committing"))?;
        } else {
            tx.rollback().map_err(err(display, "rolling back"))?;
        }
        Ok(missing)
    }

    fn get(&mut self, id: i64) -> Result<Option<String>> {
        let (client, display) = (&mut self.client, self.display.as_str());
        Ok(client
            .query_opt("SELECT json FROM results WHERE id = $1", &[&id])
            .map_err(err(display, "reading a result"))?
            .map(|row| row.get(0)))
    }

    /// PostgreSQL reclaims the space itself (autovacuum): nothing to do.
    fn reclaim(&mut self) -> Result<()> {
        Ok(())
    }

    fn count(&mut self) -> Result<i64> {
        let (client, display) = (&mut self.client, self.display.as_str());
        Ok(client
            .query_one("SELECT count(*) FROM results", &[])
            .map_err(err(display, "counting"))?
            .get(0))
    }

    fn add_board(&mut self, name: &str, token_hash: &str) -> Result<bool> {
        let (client, display) = (&mut self.client, self.display.as_str());
        let n = client
            .execute(
                "INSERT INTO boards (name, token_hash) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&name, &token_hash],
            )
            .map_err(err(display, "adding a board"))?;
        Ok(n == 1)
    }

    fn board_for_token(&mut self, token_hash: &str) -> Result<Option<String>> {
        let (client, display) = (&mut self.client, self.display.as_str());
        Ok(client
            .query_opt(
                "SELECT name FROM boards WHERE token_hash = $1",
                &[&token_hash],
            )
            .map_err(err(display, "looking up a token"))?
            .map(|row| row.get(0)))
    }

    fn boards(&mut self) -> Result<Vec<String>> {
        let (client, display) = (&mut self.client, self.display.as_str());
        Ok(client
            .query("SELECT name FROM boards ORDER BY name", &[])
            .map_err(err(display, "listing boards"))?
            .iter()
            .map(|row| row.get(0))
            .collect())
    }

    /// PostgreSQL checks itself: nothing to list.
    fn check(&mut self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}
