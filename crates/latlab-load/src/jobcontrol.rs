//! Job control for the process groups a load starts.
//!
//! The load process and a `--load-cmd` command each lead a process group of
//! their own, so that Ctrl-C reaches only latlab, which then stops them in
//! order. The same separation would keep them running on Ctrl-Z, which stops
//! only the terminal's foreground group. So a process that starts such a
//! group [`follow`]s it: on SIGTSTP it stops the followed groups (with SIGTSTP,
//! which a load process in turn passes on to its command's group), then
//! itself; on SIGCONT (`fg`, `bg`) it continues them.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

/// Process groups followed at once: a load process and a command, with room
/// to spare.
const SLOTS: usize = 4;

static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();

/// A followed process group; dropping it stops following.
#[derive(Debug)]
pub(crate) struct Followed {
    pgid: libc::pid_t,
    slot: Option<usize>,
}

impl Followed {
    /// Stops following the group: call it before the group's leader is reaped,
    /// after which its id may be reused.
    pub(crate) fn forget(&self) {
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
pub(crate) fn follow(pgid: libc::pid_t) -> Followed {
    INSTALL.call_once(install);
    let slot = GROUPS.iter().position(|g| {
        g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    Followed { pgid, slot }
}

extern "C" fn on_stop(_: libc::c_int) {
    let errno = errno();
    signal_groups(libc::SIGTSTP);
    // SAFETY: raise is async-signal-safe; SIGSTOP stops the whole process
    // (the default action of SIGTSTP, which this handler replaces).
    unsafe { libc::raise(libc::SIGSTOP) };
    restore_errno(errno);
}

extern "C" fn on_continue(_: libc::c_int) {
    let errno = errno();
    signal_groups(libc::SIGCONT);
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
    for (signal, handler) in [
        (libc::SIGTSTP, on_stop as extern "C" fn(libc::c_int)),
        (libc::SIGCONT, on_continue),
    ] {
        // SAFETY: the handlers make only async-signal-safe calls; SA_RESTART
        // keeps interrupted system calls going where the kernel allows. A
        // signal ignored by whoever started us stays ignored.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old);
            if old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
