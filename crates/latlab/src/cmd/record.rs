//! `latlab record`: capture kernel events into a trace-cmd `.dat` file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use latlab_session::record::{record, Recording};

use crate::config::record::{resolve, RecordRun};
use latlab_report::text::record::{event_sets, summary};

/// Arguments of `latlab record`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Event sets (defaults marked *): run `latlab record --list-events`.\n\
Examples:\n  latlab record -- ./my-app --arg\n  latlab record --duration 10s --events +syscalls\n  \
latlab record --flight-recorder --duration 1h   # save with `kill -USR1 <pid>`"
)]
pub struct RecordArgs {
    /// Output file (trace-cmd .dat version 6).
    #[arg(short, long, default_value = "latlab.dat")]
    pub output: PathBuf,
    /// Events: set names (sched, irq, timer, ...), `system:event`, `system:*`;
    /// `+X` adds to the defaults, `-X` removes. Repeat or separate with commas.
    #[arg(short, long, value_delimiter = ',', allow_hyphen_values = true)]
    pub events: Vec<String>,
    /// Ring-buffer size per CPU in KiB [default: from the available memory:
    /// 1/16 of it over all CPUs, at most 32 MiB per CPU to start, doubled up
    /// to 256 MiB while a CPU's buffer fills; the kernel's with --flight-recorder].
    #[arg(long, value_name = "KB", value_parser = clap::value_parser!(u32).range(1..))]
    pub buffer_size: Option<u32>,
    /// Record for this long (e.g. 500ms, 10s, 2m); without a command and
    /// without --duration, record until Ctrl-C.
    #[arg(short, long, value_name = "DURATION", value_parser = latlab_rt::duration::length)]
    pub duration: Option<Duration>,
    /// Keep events only in the ring buffer and write them when SIGUSR1
    /// arrives (to FILE-1.dat, FILE-2.dat, ...) and at the end (to FILE).
    #[arg(long)]
    pub flight_recorder: bool,
    /// Do not store /proc/kallsyms (smaller file; function addresses stay numbers).
    #[arg(long)]
    pub no_kallsyms: bool,
    /// The CPUs the real-time tasks run on (e.g. `1-3`): the page allocator's
    /// events (kmem, the busiest under load) are recorded only there, where
    /// `latlab explain` reads them; every other event on every CPU
    /// [default: every CPU].
    #[arg(long, value_name = "LIST")]
    pub rt_cpus: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// List the event sets and exit.
    #[arg(long)]
    pub list_events: bool,
    /// The command to trace (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs the recording.
pub fn execute(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if args.list_events {
        print!("{}", event_sets());
        return Ok(ExitCode::SUCCESS);
    }
    if args.flight_recorder && args.command.is_empty() && args.duration.is_none() {
        eprintln!(
            "latlab: flight recorder runs until Ctrl-C; `kill -USR1 {}` saves a snapshot",
            std::process::id()
        );
    }
    let RecordRun {
        capture: opts,
        output,
        duration,
        command,
        json,
    } = resolve(&args)?;
    let Recording {
        report,
        interrupted,
        ended_by,
        child_status,
    } = record(&opts, &output, duration, &command)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", summary(&report, interrupted));
        if report.flight_recorder {
            println!(
                "flight recorder: the ring buffer's last {} events before {ended_by} \
                 ({} overwritten before them)",
                report.total_events, report.lost_events
            );
        }
    }
    if let Some(status) = child_status {
        if !status.success() {
            eprintln!("latlab: the traced command exited with {status}");
        }
    }
    if let Some(advice) = report.loss_advice("--buffer-size", "--events") {
        eprintln!("latlab: warning: {advice}");
    }
    Ok(ExitCode::SUCCESS)
}
