//! `latlab record`: capture kernel events into a trace-cmd `.dat` file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_tracefs::{Capture, EVENT_SETS};

use crate::config::record::{resolve, RecordRun};
use latlab_report::text::record::summary;

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

static SNAPSHOT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_snapshot(_sig: libc::c_int) {
    SNAPSHOT.store(true, Ordering::SeqCst);
}

fn install_snapshot_signal() -> anyhow::Result<()> {
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe { latlab_rt::signal::set_handler(libc::SIGUSR1, on_snapshot, libc::SA_RESTART) }
        .context("installing a signal handler")
}

fn snapshot_path(out: &Path, n: u32) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = out
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    out.with_file_name(format!("{stem}-{n}{ext}"))
}

/// Runs the recording.
pub fn execute(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if args.list_events {
        for set in EVENT_SETS {
            let mark = if set.default { "*" } else { " " };
            println!("{mark} {:<12} {}", set.name, set.about);
            println!("    {}", set.events.join(" "));
        }
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
    // Every Ctrl-C only asks to stop: the capture's tracefs instance must
    // always be removed again.
    let session = RtSession::enter(&SessionOptions::recording())?;
    install_snapshot_signal()?;

    let mut capture = Capture::start(&opts).context("starting the capture")?;
    for note in capture.notes() {
        eprintln!("latlab: note: {note}");
    }
    if !capture.missing_events().is_empty() {
        eprintln!(
            "latlab: warning: not on this kernel, skipped: {}",
            capture.missing_events().join(", ")
        );
    }

    let mut child = match command.split_first() {
        Some((prog, rest)) => Some(
            std::process::Command::new(prog)
                .args(rest)
                .spawn()
                .with_context(|| format!("starting `{prog}`"))?,
        ),
        None => None,
    };
    let deadline = duration.map(|d| Instant::now() + d);
    let mut child_status = None;
    let mut snapshots = 0u32;
    let mut forwarded: Option<Instant> = None;
    loop {
        if let Some(c) = child.as_mut() {
            if let Some(status) = c.try_wait().context("waiting for the command")? {
                child_status = Some(status);
                break;
            }
        }
        if session.stop_requested() {
            match (child.as_mut(), forwarded) {
                // Ctrl-C reaches the command too; a `kill -INT` of latlab alone is passed on.
                (Some(c), None) => {
                    // SAFETY: plain kill(2) on our own child.
                    unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
                    forwarded = Some(Instant::now());
                }
                // A command that ignores SIGINT is ended so the recording can stop.
                (Some(c), Some(t)) if t.elapsed() > Duration::from_secs(2) => {
                    child_status = terminate(c);
                    break;
                }
                (Some(_), Some(_)) => {}
                (None, _) => break,
            }
        }
        if SNAPSHOT.swap(false, Ordering::SeqCst) {
            if capture.is_flight_recorder() {
                snapshots += 1;
                let path = snapshot_path(&output, snapshots);
                let report = capture.snapshot_to(&path).context("saving a snapshot")?;
                eprintln!(
                    "latlab: snapshot {}: {} events, {} overwritten",
                    path.display(),
                    report.total_events,
                    report.lost_events
                );
            } else {
                eprintln!("latlab: SIGUSR1 ignored: only --flight-recorder saves snapshots");
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            if let Some(c) = child.as_mut() {
                child_status = terminate(c);
            }
            break;
        }
        if session.stop_requested() {
            // Waiting for the command to end after the Ctrl-C passed on.
            std::thread::sleep(Duration::from_millis(5));
        } else {
            // Ends at once on Ctrl-C or SIGTERM.
            latlab_rt::stop::sleep(Duration::from_millis(20));
        }
    }
    let interrupted = session.stop_requested();
    // What ended the recording: a flight recorder's file holds the events
    // that led up to it.
    let ended_by = if interrupted {
        "Ctrl-C or SIGTERM"
    } else if child_status.is_some() && deadline.is_none_or(|d| Instant::now() < d) {
        "the command's exit"
    } else {
        "the end of --duration"
    };
    let report = capture
        .stop(&output)
        .with_context(|| format!("writing {}", output.display()))?;
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

/// Ends the traced command when --duration is over: SIGTERM, then SIGKILL
/// after two seconds.
fn terminate(c: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(2) {
        if let Ok(Some(status)) = c.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    c.wait().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_names() {
        assert_eq!(
            snapshot_path(Path::new("out/latlab.dat"), 2),
            PathBuf::from("out/latlab-2.dat")
        );
        assert_eq!(
            snapshot_path(Path::new("trace"), 1),
            PathBuf::from("trace-1")
        );
    }
}
