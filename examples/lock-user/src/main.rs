//! A periodic control thread and a background logger share one buffer
//! behind a `latlab_lock::DelayedLock`.
//!
//! The control thread wakes every 2 ms, appends a sample under the lock and
//! publishes its next release. The logger takes the same lock to flush the
//! buffer, a critical section of about 300 µs. With a plain mutex the
//! control thread would sometimes wake up while the logger is inside and
//! wait for it; the delayed lock lets the logger in only when its section
//! (as predicted from its earlier holds) ends before the next release.
//!
//! A real program runs the control thread at SCHED_FIFO; this one runs at
//! whatever priority it is given, so it works without privileges too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use latlab_lock::{busy_wall, monotonic_ns, sleep_until, DelayedLock, ReleaseTimer};

const PERIOD_NS: u64 = 2_000_000;
const PERIODS: u64 = 250;
const FLUSH_NS: u64 = 300_000;

/// What the control thread appends each period.
struct Sample {
    period: u64,
    woke_late_ns: u64,
}

fn main() {
    let timer = ReleaseTimer::new();
    let buffer = Arc::new(DelayedLock::new(Vec::<Sample>::new(), timer.clone()));
    let stop = Arc::new(AtomicBool::new(false));

    let control = {
        let (buffer, timer) = (Arc::clone(&buffer), timer.clone());
        std::thread::spawn(move || {
            timer.register_current_thread();
            let mut release = monotonic_ns() + PERIOD_NS;
            timer.publish(release);
            let mut worst_wait_ns = 0;
            for period in 0..PERIODS {
                sleep_until(release);
                let woke = monotonic_ns();
                buffer.lock().push(Sample {
                    period,
                    woke_late_ns: woke.saturating_sub(release),
                });
                // How long the critical section took to enter and run.
                worst_wait_ns = worst_wait_ns.max(monotonic_ns() - woke);
                release += PERIOD_NS;
                timer.publish(release);
            }
            timer.retire();
            worst_wait_ns
        })
    };

    let logger = {
        let (buffer, stop) = (Arc::clone(&buffer), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (mut flushed, mut worst_late_ns, mut next_period) = (0u64, 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                {
                    let mut samples = buffer.lock();
                    busy_wall(FLUSH_NS); // formatting and writing the log
                    for sample in samples.drain(..) {
                        assert_eq!(sample.period, next_period, "samples arrive in order");
                        next_period += 1;
                        worst_late_ns = worst_late_ns.max(sample.woke_late_ns);
                        flushed += 1;
                    }
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            (flushed, worst_late_ns)
        })
    };

    let worst_wait_ns = control.join().expect("the control thread panicked");
    stop.store(true, Ordering::Relaxed);
    let (flushed, worst_late_ns) = logger.join().expect("the logger panicked");
    let left = buffer.lock().len() as u64;
    assert_eq!(flushed + left, PERIODS, "every sample was flushed or is still buffered");

    let counters = buffer.counters();
    assert_eq!(counters.rt_acquisitions, PERIODS, "the control thread took the lock each period");
    println!(
        "lock-user: {PERIODS} periods of {} us; the control thread woke at most {} us late and \
         spent at most {} us in its critical section; the logger flushed {flushed} samples, \
         was refused {} times ({} forced entries, {} mispredictions)",
        PERIOD_NS / 1000,
        worst_late_ns / 1000,
        worst_wait_ns / 1000,
        counters.refusals,
        counters.forced_entries,
        counters.mispredictions
    );
}
