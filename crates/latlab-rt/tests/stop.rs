//! A stop (SIGINT, SIGTERM) ends every kind of wait at once: a sleep on the
//! stop word, and a blocking system call of an interruptible thread. One test
//! in its own binary: a stop cannot be taken back.

use std::time::Duration;

use latlab_rt::clock::{monotonic_ns, nanosleep_until};
use latlab_rt::stop;

/// A 60 s absolute `clock_nanosleep` that only a signal ends; returns how
/// long it slept when a stop had been requested. SIGINT is blocked in the
/// thread: it reaches the sleep only as the stop's interruption.
fn sleep_60s_until_stopped() -> u64 {
    // SAFETY: sigset operations on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    let start = monotonic_ns();
    loop {
        let rc = nanosleep_until(start + 60_000_000_000);
        assert_eq!(rc, libc::EINTR, "only a signal ends a 60 s sleep here");
        if stop::requested() {
            return monotonic_ns() - start;
        }
    }
}

#[test]
fn sigint_ends_sleeps_and_interrupts_the_blocking_calls_of_interruptible_threads() {
    stop::install_with(stop::Signals::AlwaysCleanUp).unwrap();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let interruptible = std::thread::spawn(move || {
        let _guard = stop::interruptible();
        // SAFETY: gettid has no preconditions.
        tid_tx.send(unsafe { libc::gettid() }).unwrap();
        sleep_60s_until_stopped()
    });
    let owned_tid = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let owned = {
        let tid = owned_tid.clone();
        std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid.store(
                unsafe { libc::gettid() },
                std::sync::atomic::Ordering::SeqCst,
            );
            sleep_60s_until_stopped()
        })
    };
    let napper = std::thread::spawn(|| {
        let start = monotonic_ns();
        (stop::sleep(Duration::from_secs(60)), monotonic_ns() - start)
    });
    let tid = tid_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // An owner's interrupt before any stop: EINTR, and the thread sleeps on.
    stop::interrupt(tid);
    std::thread::sleep(Duration::from_millis(50));
    assert!(!interruptible.is_finished() && !napper.is_finished());

    // Ctrl-C to the process: whichever thread takes it, the sleep on the
    // stop word ends and the interruptible thread's call returns EINTR.
    // SAFETY: a process-directed SIGINT, whose handler is installed above.
    unsafe { libc::kill(libc::getpid(), libc::SIGINT) };
    let (stopped, napped) = napper.join().unwrap();
    let slept = interruptible.join().unwrap();
    assert!(stopped);
    assert_eq!(stop::signal(), Some(libc::SIGINT));
    // Not a timing claim ("at once" is measured by hand, docs/results): this
    // catches waits that outlive the stop by their whole length.
    assert!(
        napped < 30_000_000_000 && slept < 30_000_000_000,
        "{napped} {slept}"
    );
    // A thread that is not interruptible is its owner's to interrupt.
    assert!(!owned.is_finished());
    stop::interrupt(owned_tid.load(std::sync::atomic::Ordering::SeqCst));
    assert!(owned.join().unwrap() < 30_000_000_000);
    // After a stop, sleeps end at once.
    assert!(stop::sleep_until(monotonic_ns() + 60_000_000_000));
}
