//! `latlab history`: the results kept in the history (SQLite or
//! PostgreSQL), listed with filters or deleted, and the hook `latlab run`
//! uses to store each result there.

use std::path::PathBuf;
use std::process::ExitCode;

use latlab_history::{Filter, History, Location};

/// Arguments of `latlab history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub filters: HistoryFilters,
    /// First store these result files (e.g. from another machine, or from
    /// before the history existed; a cyclictest, rt-tests or rtla file as
    /// read by `latlab report`), then list.
    #[arg(long, value_name = "RESULT", conflicts_with = "delete_listed")]
    pub add: Vec<PathBuf>,
    /// Delete these results (ids as listed), all or none: when one is not
    /// stored, nothing is deleted. A SQLite file shrinks accordingly.
    #[arg(long, value_name = "ID", num_args = 1.., value_delimiter = ',',
          conflicts_with_all = ["add", "delete_listed", "limit", "kind", "board", "host", "kernel", "load", "since", "until"])]
    pub delete: Vec<i64>,
    /// Delete every result the filters select (give at least one filter;
    /// the deleted results are listed).
    #[arg(long)]
    pub delete_listed: bool,
}

/// Which results `latlab history` lists (or deletes with --delete-listed).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HistoryFilters {
    /// Only the newest N results (of those the other filters select).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only results of this kind: run, respond, watch, watch-snapshot,
    /// lockbench, peer (a cyclictest, rt-tests or rtla file), ... (as
    /// listed), or a whole schema.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// Only results pushed by this board (to `latlab serve`).
    #[arg(long, value_name = "NAME")]
    pub board: Option<String>,
    /// Only results measured on this host.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Only results from this kernel release.
    #[arg(long, value_name = "RELEASE")]
    pub kernel: Option<String>,
    /// Only results under this load, as listed (`none`: without load).
    #[arg(long, value_name = "LOAD")]
    pub load: Option<String>,
    /// Only results started on or after this UTC date or time
    /// (YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only results started on or before this UTC date or time (a day
    /// given includes the whole day).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

impl HistoryFilters {
    /// The store's filter; a time that is not a UTC date or time is an
    /// error naming the forms.
    pub fn filter(&self) -> anyhow::Result<Filter> {
        let time = |t: &Option<String>| -> anyhow::Result<Option<String>> {
            Ok(t.as_deref().map(latlab_history::check_time).transpose()?)
        };
        Ok(Filter {
            kind: self.kind.clone(),
            board: self.board.clone(),
            host: self.host.clone(),
            kernel: self.kernel.clone(),
            load: self
                .load
                .clone()
                .map(|l| if l == "none" { String::new() } else { l }),
            since: time(&self.since)?,
            until: time(&self.until)?,
            limit: self.limit,
            ..Filter::default()
        })
    }

    /// The filters as given on the command line, for messages.
    fn words(&self) -> String {
        let mut words = Vec::new();
        for (flag, value) in [
            ("--kind", &self.kind),
            ("--board", &self.board),
            ("--host", &self.host),
            ("--kernel", &self.kernel),
            ("--load", &self.load),
            ("--since", &self.since),
            ("--until", &self.until),
        ] {
            if let Some(value) = value {
                words.push(format!("{flag} {value}"));
            }
        }
        words.join(" ")
    }
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
        Ok(History::open_existing(&self.location()?)?)
    }
}

/// Stores a result document (run, respond, lockbench, ...) in the history.
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

/// Lists the history (after storing `--add` files), or deletes results.
pub fn execute(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let filter = args.filters.filter()?;
    if !args.delete.is_empty() {
        let mut history = args.db.open_existing()?;
        return delete(&mut history, &args.delete);
    }
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
    if args.delete_listed && !filter.narrows() && filter.limit.is_none() {
        anyhow::bail!(
            "--delete-listed deletes what the filters select, and none was given: \
             give --kind, --board, --host, --kernel, --load, --since, --until or --limit \
             (or --delete ID... for single results)"
        );
    }
    let entries = history.query(&filter)?;
    if entries.is_empty() {
        if filter.narrows() {
            eprintln!(
                "no result in {} matches {} (it holds {} results: `latlab history` lists them all)",
                history.display(),
                args.filters.words(),
                history.count()?
            );
        } else {
            eprintln!("the history at {} is empty", history.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", latlab_report::history::listing(&entries));
    if args.delete_listed {
        let ids: Vec<i64> = entries.iter().map(|e| e.id).collect();
        let mut history = history;
        return delete(&mut history, &ids);
    }
    Ok(ExitCode::SUCCESS)
}

/// Deletes results by id (all or none) and says what it freed.
fn delete(history: &mut History, ids: &[i64]) -> anyhow::Result<ExitCode> {
    let deletion = history.delete_and_reclaim(ids)?;
    eprint!("{}", latlab_report::history::deleted(&deletion));
    Ok(ExitCode::SUCCESS)
}
