//! `latlab history`: the results kept in the SQLite history, and the hook
//! `latlab run` uses to store each result there.

use std::path::PathBuf;
use std::process::ExitCode;

use latlab_history::{History, Location};
use latlab_measure::units::format_ns;

/// Arguments of `latlab history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Show only the newest N results.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// First store these result files (e.g. from another machine, or from
    /// before the history existed; a cyclictest, rt-tests or rtla file as
    /// read by `latlab report`), then list.
    #[arg(long, value_name = "RESULT")]
    pub add: Vec<PathBuf>,
}

/// Which history database (shared by `history`, `compare`, `serve` and the
/// measuring commands).
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The history database: a SQLite FILE (default:
    /// $XDG_DATA_HOME/latlab/history.sqlite, else
    /// ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL
    /// (postgres://USER@HOST/DB; its tables are created on first use).
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<String>,
}

impl DbArgs {
    /// The database: `--db`, or the default file.
    pub fn location(&self) -> anyhow::Result<Location> {
        match &self.db {
            Some(spec) => Ok(Location::parse(spec)),
            None => Ok(Location::Sqlite(latlab_history::default_path()?)),
        }
    }

    /// Opens (creating if needed) the database.
    pub fn open(&self) -> anyhow::Result<History> {
        Ok(History::open_location(&self.location()?)?)
    }

    /// Opens an existing database; a missing SQLite file is an error that
    /// says how results get there.
    pub fn open_existing(&self) -> anyhow::Result<History> {
        let location = self.location()?;
        if let Location::Sqlite(path) = &location {
            if !path.exists() {
                anyhow::bail!(
                    "no history at {}: `latlab run` stores each result there, \
                     `latlab history --add RESULT` stores older ones (or choose another with --db)",
                    path.display()
                );
            }
        }
        Ok(History::open_location(&location)?)
    }
}

/// Stores a latlab result document (run, respond, lockbench) in the history.
/// A failure is a warning, not an error: the result itself is already written.
pub fn record_document(document: &serde_json::Value, db: &DbArgs) -> Option<i64> {
    let stored = db
        .open()
        .and_then(|mut history| Ok(history.insert_document(document)?));
    match stored {
        Ok(id) => Some(id),
        Err(e) => {
            eprintln!("warning: the result was not added to the history: {e:#}");
            None
        }
    }
}

/// Lists the history (after storing `--add` files).
pub fn execute(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let history = if args.add.is_empty() {
        args.db.open_existing()?
    } else {
        // Every file read before any is stored: one that is not a result
        // stores nothing.
        let documents = args
            .add
            .iter()
            .map(|file| crate::cmd::report::read_result_value(file))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut history = args.db.open()?;
        for (file, document) in args.add.iter().zip(&documents) {
            let id = history.insert_document(document)?;
            eprintln!("{} stored as id {id}", file.display());
        }
        history
    };
    let entries = history.list(args.limit)?;
    if entries.is_empty() {
        eprintln!("the history at {} is empty", history.display());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&entries));
    Ok(ExitCode::SUCCESS)
}

/// The listing, one result per line.
fn table(entries: &[latlab_history::Entry]) -> String {
    let rows: Vec<[String; 9]> = entries
        .iter()
        .map(|e| {
            let or = |v: &Option<String>, none: &str| v.clone().unwrap_or_else(|| none.into());
            [
                e.id.to_string(),
                e.started_at
                    .replace('T', " ")
                    .trim_end_matches('Z')
                    .to_string(),
                e.schema.trim_start_matches("latlab.").to_string(),
                or(&e.host, "?"),
                or(&e.kernel, "?"),
                or(&e.preemption, "?"),
                or(&e.load, "none"),
                e.max_ns.map_or("-".into(), format_ns),
                or(&e.verdict, "-"),
            ]
        })
        .collect();
    let header = [
        "id",
        "when (UTC)",
        "kind",
        "host",
        "kernel",
        "preempt",
        "load",
        "max",
        "verdict",
    ];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            // Numbers right-aligned, words left.
            if i == 0 || i == 7 {
                text.push_str(&format!("{cell:>w$}  "));
            } else {
                text.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}
