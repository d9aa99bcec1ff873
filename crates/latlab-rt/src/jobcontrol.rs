//! Job control for process groups out of the terminal's reach.
//!
//! latlab starts some children in a process group (or session) of their own:
//! the load process and a `--load-cmd` command, so that Ctrl-C reaches only
//! latlab, which then stops them in order; `lockbench --autogroup-nice`'s copy
//! of itself, for a scheduler autogroup of its own. The same separation would
//! keep them running on Ctrl-Z, which stops only the terminal's foreground
//! group. So a process that starts such a group [`follow`]s it: on SIGTSTP it
//! stops the followed groups (with SIGTSTP, which a follower there passes on
//! in turn), then itself; on SIGCONT (`fg`, `bg`) it continues them.
//!
//! ```no_run
//! use std::os::unix::process::CommandExt;
//! // A child leading a process group of its own (its group id is its pid).
//! let child = std::process::Command::new("sleep")
//!     .arg("60")
//!     .process_group(0)
//!     .spawn()?;
//! let followed = latlab_rt::jobcontrol::follow(child.id() as i32);
//! // ... Ctrl-Z now stops the child's group with us ...
//! followed.forget(); // before reaping the child
//! # Ok::<(), std::io::Error>(())
//! ```

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Once;

use crate::{signal, stop};

/// Process groups followed at once: a load process and a command, with room
/// to spare.
const SLOTS: usize = 4;

static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();
/// Counts SIGCONTs, so a stop handler continued before it stopped itself
/// does not stop after all.
static CONTINUED: AtomicU32 = AtomicU32::new(0);
/// The parent whose death ends this process ([`stop_when_orphaned`]), or 0.
static PARENT: AtomicI32 = AtomicI32::new(0);

/// A followed process group; dropping it stops following.
#[derive(Debug)]
pub struct Followed {
    pgid: libc::pid_t,
    slot: Option<usize>,
}

impl Followed {
    /// Stops following the group: call it before the group's leader is reaped,
    /// after which its id may be reused.
    pub fn forget(&self) {
        if let Some(slot) = self.slot {
            let _ = GROUPS[slot].compare_exchange(self.pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}

impl Drop for Followed {
    fn drop(&mut self) {
        self.forget();
    }
}

/// Stops and continues process group `pgid` along with this process from now
/// on. Best effort: with every slot taken, or if the handlers cannot be
/// installed, the group is simply not followed.
pub fn follow(pgid: libc::pid_t) -> Followed {
    // SAFETY: getpgrp has no preconditions.
    debug_assert_ne!(pgid, unsafe { libc::getpgrp() }, "following our own group");
    handle_stops();
    let slot = GROUPS.iter().position(|g| {
        g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    Followed { pgid, slot }
}

/// Installs the SIGTSTP and SIGCONT handlers (once; [`follow`] does it too).
/// A process whose group is orphaned (its parent is in another session, as
/// with [`crate::autogroup`]) needs them to stop at all: the kernel discards
/// a SIGTSTP that would stop such a process by default.
pub fn handle_stops() {
    INSTALL.call_once(install);
}

/// For a process started by `parent` in a group the kernel will never
/// continue on its own (a session of its own, as [`crate::autogroup`]'s
/// copy): handles Ctrl-Z ([`handle_stops`]) and, once `parent` is gone, asks
/// this process to stop ([`stop::request`]). The parent must make its death
/// continue us: `PR_SET_PDEATHSIG` with SIGCONT.
pub fn stop_when_orphaned(parent: libc::pid_t) {
    PARENT.store(parent, Ordering::SeqCst);
    handle_stops();
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        stop::request();
    }
}

extern "C" fn on_stop(_: libc::c_int) {
    let errno = errno();
    let continued = CONTINUED.load(Ordering::SeqCst);
    signal_groups(libc::SIGTSTP);
    if CONTINUED.load(Ordering::SeqCst) == continued {
        // SAFETY: raise is async-signal-safe; SIGSTOP stops the whole process
        // (the default action of SIGTSTP, which this handler replaces).
        unsafe { libc::raise(libc::SIGSTOP) };
    }
    restore_errno(errno);
}

extern "C" fn on_continue(_: libc::c_int) {
    let errno = errno();
    CONTINUED.fetch_add(1, Ordering::SeqCst);
    signal_groups(libc::SIGCONT);
    let parent = PARENT.load(Ordering::SeqCst);
    // SAFETY: getppid is async-signal-safe.
    if parent != 0 && unsafe { libc::getppid() } != parent {
        stop::request();
    }
    restore_errno(errno);
}

/// Sends `signal` to every followed group (async-signal-safe).
fn signal_groups(signal: libc::c_int) {
    for group in &GROUPS {
        let pgid = group.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe { libc::kill(-pgid, signal) };
        }
    }
}

fn errno() -> libc::c_int {
    // SAFETY: the calling thread's errno location.
    unsafe { *libc::__errno_location() }
}

fn restore_errno(value: libc::c_int) {
    // SAFETY: the calling thread's errno location.
    unsafe { *libc::__errno_location() = value };
}

fn install() {
    for (sig, handler) in [
        (libc::SIGTSTP, on_stop as signal::Handler),
        (libc::SIGCONT, on_continue),
    ] {
        // A signal ignored by whoever started us stays ignored.
        if signal::is_ignored(sig) {
            continue;
        }
        // SAFETY: the handlers make only async-signal-safe calls; SA_RESTART
        // keeps interrupted system calls going where the kernel allows.
        let _ = unsafe { signal::set_handler(sig, handler, libc::SA_RESTART) };
    }
}
