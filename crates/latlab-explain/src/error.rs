//! The crate's error type.

use std::path::PathBuf;

/// Errors of the explain analysis.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The trace could not be read or decoded.
    #[error("reading trace {path}: {source}")]
    Trace {
        /// The trace file or directory.
        path: PathBuf,
        /// The decoder's error (names the byte offset for corrupt files).
        #[source]
        source: latlab_ftrace::Error,
    },
    /// A file (trace, run result, window dump) could not be opened or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A `latlab run` result file did not parse.
    #[error("{path}: not a `latlab run --json` result ({reason})")]
    RunResult {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A threshold could not be parsed.
    #[error("threshold {spec:?}: {reason} (write e.g. `100us`, `1.5ms`, `80000ns` or a percentile like `p99`)")]
    BadThreshold {
        /// What the user wrote.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// The tasks asked for (`--pid`, `--comm`) are not among the trace's
    /// periodic timer tasks.
    #[error(
        "{asked} matches no periodic timer task in the trace; {}",
        found_tasks(found)
    )]
    NoSuchTask {
        /// The selectors that matched nothing (`--pid 4242`, `--comm x`).
        asked: String,
        /// The periodic timer tasks the trace has, most periodic first.
        found: Vec<crate::TaskSummary>,
    },
    /// No task of the trace woke periodically from a timer (or wrote
    /// latlab's `trace_marker` samples): there is nothing to explain.
    #[error("no task woke periodically from a timer in the trace ({events} events): record with sched_switch, sched_waking, hrtimer_start and hrtimer_expire_entry (latlab record's default events) while the periodic task runs, or with latlab run --trace")]
    NoPeriodicTask {
        /// Events in the trace.
        events: u64,
    },
}

/// `it has: a:1 (10 periods every 1.00 ms), ...; choose ...`.
fn found_tasks(found: &[crate::TaskSummary]) -> String {
    if found.is_empty() {
        return "it has none: record with sched_switch, sched_waking, hrtimer_start and hrtimer_expire_entry (latlab record's default events) while the periodic task runs".into();
    }
    let list: Vec<String> = found
        .iter()
        .take(5)
        .map(|t| match t.periods {
            1 => format!("{}:{} (1 period)", t.comm, t.pid),
            n => format!(
                "{}:{} ({n} periods every {})",
                t.comm,
                t.pid,
                latlab_measure::units::format_ns(t.median_interval_ns)
            ),
        })
        .collect();
    let more = if found.len() > 5 {
        format!(" and {} more", found.len() - 5)
    } else {
        String::new()
    };
    format!(
        "it has {}{more}: choose one with --pid PID or --comm NAME (`name*` matches a prefix)",
        list.join(", ")
    )
}

/// Result with [`ExplainError`].
pub type Result<T, E = ExplainError> = std::result::Result<T, E>;
