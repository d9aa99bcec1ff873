//! `latlab watch`'s loop: wait for the first task the selection matches,
//! then poll the session until its duration, Ctrl-C/SIGTERM or the
//! command's end, with the live screen or progress lines, the metrics and
//! each snapshot handed to the history.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::watch_live::{progress_line, screen};
use latlab_measure::units::format_ns;
use latlab_watch::select::Tasks;
use latlab_watch::Session;

/// Stores a snapshot's document (in the history): its id, or why not (a
/// warning).
pub type Store<'a> = &'a mut dyn FnMut(&serde_json::Value) -> Result<i64, String>;

/// Waits up to `wait` for the first thread the selection matches,
/// rescanning every 100 ms; an error naming the fix when none came (or
/// Ctrl-C came first): nothing was watched, nothing is stored.
pub fn wait_for_a_match(session: &mut Session, wait: Duration, quiet: bool) -> anyhow::Result<()> {
    if session.matched() > 0 {
        return Ok(());
    }
    let selection = &session.options().selection;
    let awaited = selection.awaited();
    let fix = match &selection.tasks {
        Tasks::Comms(_) => "check the name (`ps -eLo pid,tid,policy,rtprio,comm` lists the threads; a name has at most 15 characters, `prefix*` matches a prefix)",
        Tasks::Pids(_) => "check the pid (`ps -eLo pid,tid,policy,rtprio,comm` lists the threads and their policies)",
        Tasks::Command(_) => "check that the command starts the threads it should",
        Tasks::AllUserThreads => "start the real-time task first (`ps -eLo pid,tid,policy,rtprio,comm` lists the threads and their policies)",
    };
    let rt_fix = if selection.real_time {
        ", or leave out --rt to watch threads that are not real-time"
    } else {
        ""
    };
    if !quiet && !wait.is_zero() {
        eprintln!(
            "latlab watch: waiting for {awaited}... (up to {}, --wait)",
            format_ns(wait.as_nanos() as u64)
        );
    }
    let started = Instant::now();
    loop {
        if latlab_rt::stop::requested() {
            anyhow::bail!("stopped before {awaited} appeared: nothing was watched, nothing stored");
        }
        if session.command_exit().is_some() {
            anyhow::bail!(
                "the command ended before {awaited} appeared: nothing was watched, nothing stored; {fix}{rt_fix}"
            );
        }
        if wait.is_zero() {
            anyhow::bail!(
                "no {} is running (--wait 0): nothing was watched, nothing stored; {fix}{rt_fix}, or wait for it (--wait 1m)",
                awaited.trim_start_matches("a ")
            );
        }
        if started.elapsed() >= wait {
            anyhow::bail!(
                "no {} appeared within {} (--wait): nothing was watched, nothing stored; {fix}{rt_fix}, or wait longer (--wait 10m)",
                awaited.trim_start_matches("a "),
                format_ns(wait.as_nanos() as u64)
            );
        }
        session.poll(Duration::from_millis(100))?;
        session.rescan()?;
        if session.matched() > 0 {
            session.restart_clock();
            return Ok(());
        }
    }
}

/// Watches until the duration is over, Ctrl-C/SIGTERM or the command's end
/// (what stopped it is returned, for the document): the screen on a
/// terminal (or a progress line every `interval`, at most 10 s, unless
/// `quiet`), the OpenMetrics text `metrics` kept current, and every
/// snapshot handed to `store`. Then the command is stopped.
pub fn watch_until_stopped(
    session: &mut Session,
    duration: Option<Duration>,
    interval: Duration,
    quiet: bool,
    metrics: Option<&latlab_watch::metrics::Shared>,
    mut store: Option<Store<'_>>,
) -> anyhow::Result<String> {
    let threshold = session.options().threshold_ns;
    let describe = session.options().selection.describe();
    let side = session.options().backend.name();
    let tty = std::io::stderr().is_terminal() && !quiet;
    let started = Instant::now();
    let mut last_view = Instant::now() - Duration::from_secs(10);
    let mut last_line = Instant::now();
    let progress_every = interval.min(Duration::from_secs(10));
    if !quiet && !tty {
        eprintln!(
            "latlab watch ({side}): {describe}, {} task(s) now, threshold {}",
            session.watched().len(),
            format_ns(threshold)
        );
    }
    let stopped_by = loop {
        if latlab_rt::stop::requested() {
            break match latlab_rt::stop::signal() {
                Some(libc::SIGTERM) => "SIGTERM".to_string(),
                _ => "Ctrl-C".to_string(),
            };
        }
        if duration.is_some_and(|d| started.elapsed() >= d) {
            break "duration".to_string();
        }
        if let Some(status) = session.command_exit() {
            break format!("the command ended ({status})");
        }
        session.poll(Duration::from_millis(100))?;
        if session.snapshot_due() {
            let snap = session.snapshot();
            if let Some(store) = store.as_mut() {
                let mut snapshot = session.snapshot_document(&snap);
                snapshot.id = Some(latlab_document::new_id());
                let doc = serde_json::to_value(snapshot)?;
                if let Err(e) = store(&doc) {
                    eprintln!("warning: the snapshot was not stored in the history: {e}");
                }
            }
        }
        if last_view.elapsed() >= Duration::from_secs(1) {
            last_view = Instant::now();
            let line_due = !quiet && last_line.elapsed() >= progress_every;
            let need_live = tty || metrics.is_some() || line_due;
            if !need_live {
                continue;
            }
            let live = session.live();
            let overhead = session.overhead();
            let share = (overhead.process_cpu_ns + overhead.bpf_ns) as f64
                / live.elapsed.as_nanos().max(1) as f64;
            if let Some(text) = &metrics {
                let body = latlab_watch::metrics::render(
                    &session.task_histograms(),
                    &session.cause_totals(),
                    live.counters.late,
                    &overhead,
                );
                if let Ok(mut t) = text.lock() {
                    *t = body;
                }
            }
            if tty {
                eprint!(
                    "\x1b[H\x1b[2J{}",
                    screen(&live, &describe, threshold, share, side)
                );
            } else if line_due {
                last_line = Instant::now();
                eprintln!("{}", progress_line(&live));
            }
        }
    };
    session.stop_command();
    if tty {
        eprint!("\x1b[H\x1b[2J");
    }
    Ok(stopped_by)
}

/// The watch's document, from the session that ended (`stopped_by` says why).
pub fn assemble_document(session: &mut Session, stopped_by: &str) -> latlab_watch::WatchDocument {
    // The envelope (id, command line, start) is the session's.
    session.finish(stopped_by)
}
