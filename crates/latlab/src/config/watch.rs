//! `latlab watch`'s arguments resolved into the watch session's options
//! and what the command does around it.

use std::path::PathBuf;
use std::time::Duration;

use latlab_watch::select::{Selection, Tasks};
use latlab_watch::SessionOptions;

use crate::cmd::history::DbArgs;
use crate::cmd::watch::WatchArgs;

/// `latlab watch`, resolved.
#[derive(Debug)]
pub struct WatchRun {
    /// The session: the tasks, the threshold, the snapshot interval, the side.
    pub session: SessionOptions,
    /// How long to wait for the first matching task.
    pub wait: Duration,
    /// Stop after this long (`None`: Ctrl-C or the command's end).
    pub duration: Option<Duration>,
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// The OpenMetrics address.
    pub metrics: Option<String>,
    /// The history the snapshots and the result go to (`None`: `--no-history`).
    pub history: Option<DbArgs>,
    /// `--quiet`.
    pub quiet: bool,
}

/// Validates `args` into a [`WatchRun`].
pub fn resolve(args: &WatchArgs) -> anyhow::Result<WatchRun> {
    let selection = selection(args)?;
    if args.interval < Duration::from_secs(1) {
        anyhow::bail!("--interval must be at least 1s");
    }
    Ok(WatchRun {
        session: SessionOptions {
            selection,
            threshold_ns: args.threshold,
            interval: args.interval,
            max_windows_per_sec: args.max_windows,
            baseline_every: args.baseline_every,
            backend: if args.tracefs {
                latlab_watch::Backend::Tracefs
            } else {
                latlab_watch::Backend::Bpf
            },
        },
        wait: args.wait,
        duration: args.duration,
        json: args.json.clone(),
        metrics: args.metrics.clone(),
        history: (!args.no_history).then(|| args.history.clone()),
        quiet: args.quiet,
    })
}

fn selection(args: &WatchArgs) -> anyhow::Result<Selection> {
    let chosen = [
        !args.pid.is_empty(),
        !args.comm.is_empty(),
        !args.command.is_empty(),
    ]
    .iter()
    .filter(|&&b| b)
    .count();
    if chosen > 1 || chosen == 0 && !args.rt {
        anyhow::bail!(
            "choose the tasks to watch with exactly one of --pid PID, --comm NAME, or -- COMMAND (with --rt: only their real-time threads), or --rt alone (every real-time user thread)"
        );
    }
    let tasks = if !args.pid.is_empty() {
        Tasks::Pids(args.pid.clone())
    } else if !args.comm.is_empty() {
        Tasks::Comms(args.comm.clone())
    } else if !args.command.is_empty() {
        Tasks::Command(args.command.clone())
    } else {
        return Ok(Selection::every_real_time_thread());
    };
    Ok(Selection {
        tasks,
        real_time: args.rt,
    })
}

/// `--wait`: how long, with its unit; 0 fails at once.
pub fn wait_duration(text: &str) -> Result<Duration, String> {
    latlab_rt::duration::length_or_zero_ns(text).map(Duration::from_nanos)
}

/// `--threshold`: a duration with its unit, above zero.
pub fn threshold_ns(text: &str) -> Result<u64, String> {
    if text.trim_start().starts_with(['p', 'P']) {
        return Err(
            "give a time such as 100us or 1ms (a percentile is not known before the watch)".into(),
        );
    }
    latlab_rt::duration::period(text)
}
