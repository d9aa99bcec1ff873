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
//! if !latlab_rt::autogroup::settle_copy(MARKER) {
//!     let code = latlab_rt::autogroup::rerun_in_own_group(-15, MARKER)?;
//!     std::process::exit(code);
//! }
//! // ... the copy does the work ...
//! # Ok::<(), latlab_rt::RtError>(())
//! ```

use std::ffi::CString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::Duration;

use crate::{jobcontrol, RtError};

/// The copy [`rerun_in_own_group`] waits for, for the signal handler.
static COPY: AtomicI32 = AtomicI32::new(0);
/// Ctrl-C, SIGTERM and SIGHUP received while waiting.
static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// The kernel's view of the calling process's autogroup.
pub const PROC_FILE: &str = "/proc/self/autogroup";

/// An autogroup as `/proc/self/autogroup` describes it (`/autogroup-719 nice 0`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
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

/// The sysctl that switches autogroups on and off.
pub const SYSCTL_FILE: &str = "/proc/sys/kernel/sched_autogroup_enabled";

/// True when the kernel has scheduler autogroups (`CONFIG_SCHED_AUTOGROUP`) and they
/// are switched on (`kernel.sched_autogroup_enabled = 1`).
pub fn enabled() -> bool {
    std::fs::read_to_string(SYSCTL_FILE).is_ok_and(|s| s.trim() == "1")
}

/// The calling process's autogroup, or `None` where autogroups are not [`enabled`] or
/// the process is still in the kernel's root group. A process is there when neither
/// it nor a parent ever started a session: init's children, such as services and
/// some CI runners (`/proc/self/autogroup` is empty then). [`rerun_in_own_group`]
/// works from there too.
pub fn current() -> Option<Autogroup> {
    if !enabled() {
        return None;
    }
    Autogroup::parse(&std::fs::read_to_string(PROC_FILE).ok()?)
}

/// Starts this program again with the same arguments, in a new session (and so a new
/// autogroup) at `nice`, with the environment variable `marker` set so that the child
/// knows not to do it again; waits for it and returns its exit code (128 + the signal
/// when a signal ended it).
///
/// The child is no longer in the terminal's process group, so signals reach it
/// through this process: the first Ctrl-C or SIGTERM is passed on (a hang-up as
/// SIGTERM), a second one kills it at once; Ctrl-Z and `fg` are passed on too
/// ([`jobcontrol`]). If this process dies, the child is continued and stops
/// cleanly. The child must call [`settle_copy`] first thing.
pub fn rerun_in_own_group(nice: i32, marker: &str) -> Result<i32, RtError> {
    if !(-20..=19).contains(&nice) {
        return Err(RtError::Autogroup {
            reason: format!("nice {nice} is out of range: use -20 to 19"),
        });
    }
    if !enabled() {
        return Err(RtError::Autogroup {
            reason: "scheduler autogroups are off on this kernel: they need \
                     CONFIG_SCHED_AUTOGROUP and `sysctl kernel.sched_autogroup_enabled=1`; \
                     switch them on, or leave the option out"
                .into(),
        });
    }
    let exe = std::env::current_exe().map_err(|source| RtError::Io {
        path: PathBuf::from("/proc/self/exe"),
        source,
    })?;
    install_pass_on()?;
    let path = CString::new(PROC_FILE).expect("no NUL in a constant");
    let value = format!("{nice}\n").into_bytes();
    // SAFETY: getpid is always safe.
    let parent = unsafe { libc::getpid() };
    let mut command = Command::new(&exe);
    command
        .args(std::env::args_os().skip(1))
        .env(marker, parent.to_string());
    // SAFETY: between fork and exec the closure only makes async-signal-safe calls
    // (setsid, prctl, getppid, open, write, close) on data prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            // A continue on our parent's death: a stopped copy would otherwise
            // wait for it forever (see `settle_copy`).
            if libc::setsid() < 0
                || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGCONT as libc::c_ulong) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let written = libc::write(fd, value.as_ptr().cast(), value.len());
            let error = if written < 0 {
                std::io::Error::last_os_error()
            } else {
                std::io::Error::from_raw_os_error(libc::EIO)
            };
            libc::close(fd);
            if written != value.len() as isize {
                return Err(error);
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|source| match source.raw_os_error() {
            // The autogroup's answer to a nice we may not set (exec would say EACCES).
            Some(libc::EPERM) => RtError::Autogroup {
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
    let pid = child.id() as libc::pid_t;
    COPY.store(pid, Ordering::SeqCst);
    let followed = jobcontrol::follow(pid);
    // Until it has exited; not reaped yet, so its ids cannot be reused meanwhile.
    while !crate::process::child_exited(child.id()) {
        std::thread::sleep(Duration::from_millis(20));
    }
    COPY.store(0, Ordering::SeqCst);
    followed.forget();
    let status = child
        .wait()
        .map_err(|source| RtError::Io { path: exe, source })?;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

/// In the copy [`rerun_in_own_group`] started (its `marker` is set to the
/// pid of the latlab that started it): makes Ctrl-Z stop it (its process
/// group is orphaned, and the kernel discards a SIGTSTP that would stop such
/// a process by default) and asks it to stop ([`crate::stop::request`]) once
/// that latlab is gone. False outside such a copy.
pub fn settle_copy(marker: &str) -> bool {
    let Some(parent) = std::env::var(marker).ok().and_then(|v| v.parse().ok()) else {
        return false;
    };
    jobcontrol::stop_when_orphaned(parent);
    true
}

/// Passes Ctrl-C, SIGTERM and SIGHUP on to the copy: the first as a stop
/// request (continuing it first, in case it is stopped), any further one as
/// SIGKILL, as a second Ctrl-C kills every latlab command at once.
extern "C" fn pass_on(signal: libc::c_int) {
    let copy = COPY.load(Ordering::SeqCst);
    if copy <= 0 {
        return;
    }
    let first = SIGNALS.fetch_add(1, Ordering::SeqCst) == 0;
    // SAFETY: kill is async-signal-safe; `copy` is our child, not yet reaped.
    unsafe {
        if first {
            let stop = if signal == libc::SIGHUP {
                libc::SIGTERM
            } else {
                signal
            };
            libc::kill(copy, libc::SIGCONT);
            libc::kill(copy, stop);
        } else {
            libc::kill(-copy, libc::SIGKILL);
        }
    }
}

fn install_pass_on() -> Result<(), RtError> {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only reads atomics and calls kill.
        unsafe { crate::signal::set_handler(signal, pass_on, libc::SA_RESTART) }
            .map_err(RtError::Signal)?;
    }
    Ok(())
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
