//! `latlab record`'s recording: the capture, the traced command (Ctrl-C
//! passed on, ended at the end of `--duration`), SIGUSR1 snapshots of a
//! flight recorder, and what ended it.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_tracefs::{Capture, CaptureOptions, CaptureReport};

/// A finished recording.
pub struct Recording {
    /// The capture's report (the file, the events per CPU, the ring buffer).
    pub report: CaptureReport,
    /// Ended by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// What ended it, in words ("the command's exit", ...).
    pub ended_by: &'static str,
    /// How the traced command ended, if there was one and it did.
    pub child_status: Option<ExitStatus>,
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

/// Fails before recording, not after, when `out` cannot be written: a
/// directory, or a place where a file next to it cannot be created.
pub fn check_writable(out: &Path) -> anyhow::Result<()> {
    if out.is_dir() {
        anyhow::bail!("{} is a directory; give a file name with -o", out.display());
    }
    let mut probe = out.as_os_str().to_owned();
    probe.push(".partial");
    let probe = PathBuf::from(probe);
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .with_context(|| format!("cannot write next to {}; choose another -o", out.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Records with `opts` into `output`, for `duration` or until `command`
/// (program and arguments, none: until Ctrl-C) ends; notes and snapshots
/// are said on stderr.
pub fn record(
    opts: &CaptureOptions,
    output: &Path,
    duration: Option<Duration>,
    command: &[String],
) -> anyhow::Result<Recording> {
    // Every Ctrl-C only asks to stop: the capture's tracefs instance must
    // always be removed again.
    let session = RtSession::enter(&SessionOptions::recording())?;
    install_snapshot_signal()?;

    let mut capture = Capture::start(opts).context("starting the capture")?;
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
                let path = snapshot_path(output, snapshots);
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
        .stop(output)
        .with_context(|| format!("writing {}", output.display()))?;
    Ok(Recording {
        report,
        interrupted,
        ended_by,
        child_status,
    })
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
    fn an_output_that_cannot_be_written_is_refused_before_recording() {
        let dir =
            std::env::temp_dir().join(format!("latlab-check-writable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = check_writable(&dir).unwrap_err().to_string();
        assert!(
            err.contains("is a directory; give a file name with -o"),
            "{err}"
        );
        let missing = dir.join("no/such/dir/latlab.dat");
        let err = check_writable(&missing).unwrap_err().to_string();
        assert!(err.starts_with("cannot write next to"), "{err}");
        let out = dir.join("latlab.dat");
        check_writable(&out).unwrap();
        assert!(!out.exists() && !dir.join("latlab.dat.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
