//! `latlab watch`: the wake-ups of running tasks measured and explained live
//! in the kernel (eBPF; see crates/latlab-watch and docs/watch.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use latlab_report::formats::TerminalText;
use latlab_watch::Session;

use latlab_session::watch::{assemble_document, wait_for_a_match, watch_until_stopped, Store};

use crate::config::watch::{resolve, WatchRun};

/// Arguments of `latlab watch`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  latlab watch --comm cyclictest --rt --duration 10m --json watch.json\n  latlab watch --rt --metrics 127.0.0.1:9464\n  latlab watch --threshold 50us -- ./my-control-loop --config x.toml\n  latlab watch --tracefs --comm cyclictest\n\nNeeds root (or CAP_BPF and CAP_PERFMON) and a kernel with BPF and BTF (CONFIG_BPF_SYSCALL, CONFIG_DEBUG_INFO_BTF); without them, --tracefs (root, or write access to tracefs)."
)]
pub struct WatchArgs {
    /// Watch these processes (all their threads, and threads they start); comma-separated.
    #[arg(long, value_name = "PID", value_delimiter = ',')]
    pub pid: Vec<i32>,
    /// Watch threads with these names (`name`, or `prefix*`); comma-separated. Matches are rescanned every second.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub comm: Vec<String>,
    /// Only real-time threads (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE): with --pid, --comm or a command, only
    /// their wake-ups at a real-time priority are measured; alone, every SCHED_FIFO/SCHED_RR user thread
    /// (kernel threads excluded, rescanned every second).
    #[arg(long)]
    pub rt: bool,
    /// How long to wait for the first task the selection matches (a name or real-time thread may appear
    /// later); then the watch fails, storing nothing. 0: fail at once.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::config::watch::wait_duration)]
    pub wait: Duration,
    /// A wake-up later than this is late: its window is explained (e.g. 100us, 1ms).
    #[arg(long, value_name = "DURATION", default_value = "100us", value_parser = crate::config::watch::threshold_ns)]
    pub threshold: u64,
    /// Snapshot interval: each is kept in the result and stored in the history.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = latlab_rt::duration::length)]
    pub interval: Duration,
    /// Stop after this long (e.g. 30s, 1h, 72h); default: until Ctrl-C (or the command ends).
    #[arg(long, value_name = "DURATION", value_parser = latlab_rt::duration::length)]
    pub duration: Option<Duration>,
    /// Write the result (schema latlab.watch) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Serve OpenMetrics (Prometheus) text on this address, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Late windows sent per second and CPU at most (the rest are counted, not explained).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_windows: u32,
    /// Send one normal wake-up in N as a baseline window for the cause ranking (0: none).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub baseline_every: u32,
    /// The history database snapshots and the result are stored in.
    #[command(flatten)]
    pub history: super::history::DbArgs,
    /// Do not store snapshots and the result in the history.
    #[arg(long)]
    pub no_history: bool,
    /// Measure without BPF: stream the same tracepoints from a private tracefs instance and
    /// analyse them as they arrive (nothing written to disk; the instance is removed at the
    /// end). Same figures and causes, at another cost: the kernel writes every scheduler,
    /// interrupt and timer event of every CPU to a ring buffer (paid by the traced tasks) and
    /// latlab decodes them all (its own CPU here 0.74x the BPF side's, 1.5 % of a CPU), and
    /// events are lost when the machine is too busy to read them (counted). docs/watch.md
    #[arg(long)]
    pub tracefs: bool,
    /// No live view and no progress lines; only the final text.
    #[arg(long, short)]
    pub quiet: bool,
    /// The command to start and watch (its threads and children), after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Runs the watch until its duration, Ctrl-C/SIGTERM or the command's end.
pub fn execute(args: WatchArgs) -> anyhow::Result<ExitCode> {
    let WatchRun {
        session: options,
        wait,
        duration,
        json,
        metrics,
        history,
        quiet,
    } = resolve(&args)?;
    let metrics = match &metrics {
        Some(addr) => {
            let (text, bound) = latlab_watch::metrics::serve(addr)?;
            eprintln!("OpenMetrics at http://{bound}/metrics");
            Some(text)
        }
        None => None,
    };
    latlab_rt::stop::install()?;
    let mut session = Session::start(options)?;
    let mut history = match &history {
        Some(db) => Some(db.open().context("opening the history (--db)")?),
        None => None,
    };
    wait_for_a_match(&mut session, wait, quiet)?;
    let mut store = history
        .as_mut()
        .map(|h| move |doc: &serde_json::Value| h.insert_document(doc).map_err(|e| e.to_string()));
    let stopped_by = watch_until_stopped(
        &mut session,
        duration,
        args.interval,
        quiet,
        metrics.as_ref(),
        store.as_mut().map(|store| store as Store<'_>),
    )?;
    let taken = session.snapshots_taken();
    let document = assemble_document(&mut session, &stopped_by);
    // The last, partial interval's snapshot (when finish took one) joins the others.
    let last = (session.snapshots_taken() > taken)
        .then(|| document.snapshots.last())
        .flatten();
    if let (Some(h), Some(last)) = (history.as_mut(), last) {
        let mut snapshot = session.snapshot_document(last);
        snapshot.id = Some(latlab_document::new_id());
        let doc = serde_json::to_value(snapshot)?;
        if let Err(e) = h.insert_document(&doc) {
            eprintln!("warning: the last snapshot was not stored in the history: {e}");
        }
    }
    if let Some(path) = &json {
        let text = latlab_document::text::to_text(&document)?;
        crate::lifecycle::write_file(path, text.as_bytes())?;
        println!("Result written to {}", path.display());
    }
    if let Some(h) = history.as_mut() {
        // A JSON tree of the result only for the history (it takes several
        // times the result's size).
        let value = serde_json::to_value(&document)?;
        match h.insert_document(&value) {
            Ok(id) => println!("Stored in the history as id {id} (`latlab report` draws it)"),
            Err(e) => eprintln!("warning: the result was not stored in the history: {e}"),
        }
    }
    print!("{}", document.terminal_text());
    Ok(ExitCode::SUCCESS)
}
