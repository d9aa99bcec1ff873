//! A process-wide stop request set by Ctrl-C (SIGINT) or SIGTERM, and the
//! one way every command's waits end on it, whatever they wait in.
//!
//! Long-running commands wind down cleanly on a stop: results so far are
//! written and state is restored. A stop reaches a waiting thread in one of
//! two ways:
//!
//! - **A wait of latlab's own** (a poll loop's pause, a pacing sleep) waits on
//!   the stop word itself: [`sleep`] and [`sleep_until`] are futex waits that
//!   the signal handler wakes at once, whichever thread took the signal.
//! - **A blocking system call** (a measurement thread's `clock_nanosleep`,
//!   `sigwaitinfo`, a timerfd or RTC `read`, a `ppoll` for an answer) is
//!   interrupted: [`interrupt`] sends the thread [`interrupt_signal`], whose
//!   handler does nothing and is installed without `SA_RESTART`, so the call
//!   returns `EINTR` and the thread's loop sees the stop. The owner of such
//!   threads interrupts them itself when it stops them (the measurement
//!   engine does), or a thread marks itself [`interruptible`] for the time
//!   it waits: then a stop interrupts it at once and again every 5 ms until
//!   it is out of that region (a signal that arrives just before the thread
//!   blocks would otherwise be lost).
//!
//! A wait interrupted this way ends early: the code that measures on the
//! other side of it (a timer wake-up, an answer's arrival) must not take it
//! as a sample. The measurement engine drops every wake-up that ends after
//! a stop.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Once;
use std::time::Duration;

use crate::wait::{deadline_after, futex_wait_until, futex_wake};
use crate::RtError;

/// 0 until a stop is requested, then 1: a futex word, so waits on it end
/// when it is set.
static STOP: AtomicU32 = AtomicU32::new(0);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Sets the stop word and wakes every thread waiting on it. Async-signal-safe
/// (atomics and one `futex` system call); keeps `errno`.
fn set_stop() {
    // SAFETY: __errno_location returns this thread's errno, valid while it lives.
    let errno = unsafe { *libc::__errno_location() };
    STOP.store(1, Ordering::SeqCst);
    futex_wake(&STOP, u32::MAX);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::SeqCst);
    set_stop();
}

/// How a second Ctrl-C is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signals {
    /// The first Ctrl-C or SIGTERM asks to stop; a second one kills the
    /// process the usual way (the handler is one-shot). Blocking system calls
    /// in the thread the signal lands in return EINTR (no SA_RESTART).
    SecondKills,
    /// Every Ctrl-C or SIGTERM only asks to stop, and interrupted system
    /// calls go on (SA_RESTART): for a command that must always clean up
    /// what it set up in the kernel (`latlab record` and its tracefs
    /// instance) or in other processes (`latlab scenario` and its step).
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
        // SAFETY: the handler only stores to atomics and wakes a futex, which
        // is async-signal-safe.
        unsafe { crate::signal::set_handler(signal, on_signal, flags) }.map_err(RtError::Signal)?;
    }
    Ok(())
}

/// True once Ctrl-C or SIGTERM arrived (or [`request`] was called).
#[inline]
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed) != 0
}

/// Asks every loop polling [`requested`] to stop (e.g. when a load fails),
/// and ends every [`sleep`] at once.
pub fn request() {
    set_stop();
}

/// The signal that asked to stop, if a signal did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns`, or less:
/// a stop ends the sleep at once. Returns [`requested`].
pub fn sleep_until(deadline_ns: u64) -> bool {
    while !requested() {
        if !futex_wait_until(&STOP, 0, Some(deadline_ns)) {
            break;
        }
    }
    requested()
}

/// Sleeps for `timeout`, or less: a stop ends the sleep at once. Returns
/// [`requested`].
pub fn sleep(timeout: Duration) -> bool {
    sleep_until(deadline_after(timeout))
}

/// The signal that interrupts a thread's blocking system call on a stop
/// (`SIGRTMIN + 3`; `+ 2` is the posix-timer's). Its handler does nothing.
pub fn interrupt_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

extern "C" fn on_interrupt(_: libc::c_int) {}

/// Installs the do-nothing handler of [`interrupt_signal`] (once), without
/// SA_RESTART: a blocking call the signal lands in returns EINTR.
fn install_interrupt_handler() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: the handler does nothing.
        let installed = unsafe { crate::signal::set_handler(interrupt_signal(), on_interrupt, 0) };
        debug_assert!(installed.is_ok(), "{installed:?}");
    });
}

/// Makes the blocking system call thread `tid` (of this process) is in, if
/// any, return EINTR; a thread not in one only runs the empty handler.
pub fn interrupt(tid: i32) {
    install_interrupt_handler();
    // SAFETY: tgkill to a thread of this process, with a signal whose handler
    // does nothing.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, interrupt_signal());
    }
}

/// How many threads can be [`interruptible`] at once.
const SLOTS: usize = 256;

/// Thread ids of the [`interruptible`] threads (0: a free slot).
static INTERRUPTIBLE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// How many slots are taken: the futex word the interrupter waits on.
static TAKEN: AtomicU32 = AtomicU32::new(0);

/// While alive, a stop interrupts the blocking system calls of the thread
/// that made it (see [`interruptible`]).
#[must_use = "the thread is interruptible while the guard lives"]
#[derive(Debug)]
pub struct Interruptible {
    slot: Option<usize>,
}

/// Marks the calling thread interruptible until the guard is dropped: on a
/// stop, its blocking system calls return EINTR (it is sent
/// [`interrupt_signal`] at once and every 5 ms after, until the guard is
/// dropped). Keep the region to the waits: a file write interrupted in it
/// would have to retry.
pub fn interruptible() -> Interruptible {
    thread_local! {
        /// This thread's id, once [`interrupt_signal`] is unblocked in it.
        static READY: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
    }
    let tid = READY.with(|ready| {
        if ready.get() == 0 {
            install_interrupt_handler();
            unblock_interrupt_signal();
            start_interrupter();
            // SAFETY: gettid has no preconditions.
            ready.set(unsafe { libc::gettid() });
        }
        ready.get()
    });
    // Cheap enough for every wait of a measurement loop: no system call
    // unless a stop is already under way (the interrupter then waits on
    // TAKEN).
    let slot = INTERRUPTIBLE.iter().position(|slot| {
        slot.compare_exchange(0, tid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if slot.is_some() {
        TAKEN.fetch_add(1, Ordering::SeqCst);
        if requested() {
            futex_wake(&TAKEN, u32::MAX);
        }
    }
    Interruptible { slot }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            INTERRUPTIBLE[slot].store(0, Ordering::SeqCst);
            TAKEN.fetch_sub(1, Ordering::SeqCst);
            if requested() {
                futex_wake(&TAKEN, u32::MAX);
            }
        }
    }
}

/// Unblocks [`interrupt_signal`] in the calling thread (a thread may have
/// inherited a mask that blocks it).
fn unblock_interrupt_signal() {
    // SAFETY: sigset operations on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, interrupt_signal());
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts (once) the thread that interrupts the [`interruptible`] threads
/// when a stop is requested: at once, then every 5 ms while any is left.
fn start_interrupter() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("latlab-stop".into())
            .stack_size(64 * 1024)
            .spawn(|| {
                while !requested() {
                    futex_wait_until(&STOP, 0, None);
                }
                loop {
                    let taken = TAKEN.load(Ordering::SeqCst);
                    if taken == 0 {
                        futex_wait_until(&TAKEN, 0, None);
                        continue;
                    }
                    for slot in &INTERRUPTIBLE {
                        match slot.load(Ordering::SeqCst) {
                            0 => {}
                            tid => interrupt(tid),
                        }
                    }
                    futex_wait_until(
                        &TAKEN,
                        taken,
                        Some(deadline_after(Duration::from_millis(5))),
                    );
                }
            });
        debug_assert!(spawned.is_ok(), "{spawned:?}");
    });
}
