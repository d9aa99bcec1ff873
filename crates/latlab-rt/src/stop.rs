//! A process-wide stop request set by Ctrl-C (SIGINT) or SIGTERM.
//!
//! Long-running commands poll [`requested`] and wind down cleanly: results
//! so far are written and state is restored. A second Ctrl-C kills the
//! process the usual way (the handler is one-shot).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::RtError;

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// How a second Ctrl-C is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signals {
    /// The first Ctrl-C or SIGTERM asks to stop; a second one kills the
    /// process the usual way (the handler is one-shot). Blocking system calls
    /// in any thread return EINTR when the signal lands there (no SA_RESTART),
    /// so sleeping real-time threads see the request at once.
    SecondKills,
    /// Every Ctrl-C or SIGTERM only asks to stop, and interrupted system
    /// calls go on (SA_RESTART): for a command that must always clean up
    /// what it set up in the kernel (`latlab record` and its tracefs
    /// instance) and polls [`requested`].
    AlwaysCleanUp,
}

/// Installs the SIGINT and SIGTERM handlers (the one-shot kind,
/// [`Signals::SecondKills`]).
pub fn install() -> Result<(), RtError> {
    install_with(Signals::SecondKills)
}

/// Installs the SIGINT and SIGTERM handlers of the given kind.
pub fn install_with(kind: Signals) -> Result<(), RtError> {
    let flags = match kind {
        Signals::SecondKills => libc::SA_RESETHAND,
        Signals::AlwaysCleanUp => libc::SA_RESTART,
    };
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe.
        unsafe { crate::signal::set_handler(signal, on_signal, flags) }.map_err(RtError::Signal)?;
    }
    Ok(())
}

/// True once Ctrl-C or SIGTERM arrived (or [`request`] was called).
#[inline]
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks every loop polling [`requested`] to stop (e.g. when a load fails).
pub fn request() {
    STOP.store(true, Ordering::SeqCst);
}

/// The signal that asked to stop, if a signal did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
