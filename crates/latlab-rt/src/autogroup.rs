//! Scheduler autogroups: running this program again in a session of its own, at a
//! chosen nice value.
//!
//! With `CONFIG_SCHED_AUTOGROUP` (and `kernel.sched_autogroup_enabled = 1`) the fair
//! scheduler shares a CPU between sessions first and between the threads of a session
//! second. A compiler running eight jobs in the next terminal then gets as much CPU as
//! the whole benchmark, and a nice value set on our own threads does not help: nice
//! only weighs threads within their autogroup. Writing a nice value to
//! `/proc/self/autogroup` weighs the whole group; a process gets a group of its own by
//! starting a new session (`setsid`), which a process-group leader (what a shell
//! starts) may not do, hence [`rerun_in_own_group`] starts this program again as a
//! child.
//!
//! ```no_run
//! // At the top of a command: continue in a group of our own at nice -15.
//! const MARKER: &str = "MYTOOL_IN_OWN_AUTOGROUP";
//! if std::env::var_os(MARKER).is_none() {
//!     let code = latlab_rt::autogroup::rerun_in_own_group(-15, MARKER)?;
//!     std::process::exit(code);
//! }
//! # Ok::<(), latlab_rt::RtError>(())
//! ```

use std::ffi::CString;
use std::io::ErrorKind;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::{jobcontrol, stop, RtError};

/// The kernel's view of the calling process's autogroup.
pub const PROC_FILE: &str = "/proc/self/autogroup";

/// An autogroup as `/proc/self/autogroup` describes it (`/autogroup-719 nice 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Autogroup {
    /// The kernel's number for the group.
    pub id: u64,
    /// Its nice value, -20 to 19.
    pub nice: i32,
}

impl Autogroup {
    /// Parses the one line of `/proc/self/autogroup`.
    pub fn parse(line: &str) -> Option<Autogroup> {
        let mut words = line.split_whitespace();
        let id = words.next()?.strip_prefix("/autogroup-")?.parse().ok()?;
        if words.next()? != "nice" {
            return None;
        }
        let nice = words.next()?.parse().ok()?;
        Some(Autogroup { id, nice })
    }
}

/// The calling process's autogroup, or `None` where the kernel has no autogroups
/// (built without `CONFIG_SCHED_AUTOGROUP`) or they are switched off.
pub fn current() -> Option<Autogroup> {
    let enabled = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    if !enabled {
        return None;
    }
    Autogroup::parse(&std::fs::read_to_string(PROC_FILE).ok()?)
}

/// Starts this program again with the same arguments, in a new session (and so a new
/// autogroup) at `nice`, with the environment variable `marker` set so that the child
/// knows not to do it again; waits for it and returns its exit code (128 + the signal
/// when a signal ended it).
///
/// The child is no longer in the terminal's process group, so Ctrl-C and SIGTERM reach
/// it through this process: [`stop`]'s handler is installed here and the signal passed
/// on; Ctrl-Z and `fg` too ([`jobcontrol`]: the child, whose group is orphaned, must
/// call [`jobcontrol::handle_stops`] to stop). If this process dies, the child gets
/// SIGTERM.
pub fn rerun_in_own_group(nice: i32, marker: &str) -> Result<i32, RtError> {
    if !(-20..=19).contains(&nice) {
        return Err(RtError::Autogroup {
            reason: format!("nice {nice} is out of range: use -20 to 19"),
        });
    }
    if current().is_none() {
        return Err(RtError::Autogroup {
            reason: "this kernel has no scheduler autogroups (CONFIG_SCHED_AUTOGROUP, \
                     sysctl kernel.sched_autogroup_enabled=1); leave the option out"
                .into(),
        });
    }
    let exe = std::env::current_exe().map_err(|source| RtError::Io {
        path: PathBuf::from("/proc/self/exe"),
        source,
    })?;
    stop::install()?;
    let path = CString::new(PROC_FILE).expect("no NUL in a constant");
    let value = format!("{nice}\n").into_bytes();
    // SAFETY: getpid is always safe.
    let parent = unsafe { libc::getpid() };
    let mut command = Command::new(&exe);
    command.args(std::env::args_os().skip(1)).env(marker, "1");
    // SAFETY: between fork and exec the closure only makes async-signal-safe calls
    // (setsid, prctl, getppid, open, write, close) on data prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0
                || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from(ErrorKind::BrokenPipe));
            }
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let written = libc::write(fd, value.as_ptr().cast(), value.len());
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            if written != value.len() as isize {
                return Err(error);
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|source| match source.kind() {
        ErrorKind::PermissionDenied => RtError::Autogroup {
            reason: format!(
                "the kernel refused nice {nice} for a new autogroup ({source}): a negative \
                 nice needs root or CAP_SYS_NICE; use 0 or more, or leave the option out"
            ),
        },
        _ => RtError::Io {
            path: exe.clone(),
            source,
        },
    })?;
    // The child leads a session of its own: its group id is its pid.
    let followed = jobcontrol::follow(child.id() as libc::pid_t);
    let mut forwarded = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                followed.forget();
                return Ok(status
                    .code()
                    .or_else(|| status.signal().map(|s| 128 + s))
                    .unwrap_or(1));
            }
            Ok(None) => {}
            Err(source) => {
                followed.forget();
                return Err(RtError::Io { path: exe, source });
            }
        }
        if stop::requested() && !forwarded {
            let signal = stop::signal().unwrap_or(libc::SIGINT);
            // SAFETY: kill with the pid of our own, not yet reaped, child.
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_line() {
        assert_eq!(
            Autogroup::parse("/autogroup-719 nice -15\n"),
            Some(Autogroup { id: 719, nice: -15 })
        );
        assert_eq!(Autogroup::parse("/autogroup-1 nice"), None);
        assert_eq!(Autogroup::parse("autogroup-1 nice 0"), None);
        assert_eq!(Autogroup::parse(""), None);
    }

    #[test]
    fn refuses_a_nice_out_of_range() {
        let err = rerun_in_own_group(20, "LATLAB_TEST_MARKER").unwrap_err();
        assert!(err.to_string().contains("-20 to 19"), "{err}");
    }
}
