//! Delayed locking for real-time threads in user space, after Lee and Park, "Delayed
//! Locking Technique for Improving Real-Time Performance of Embedded Linux by Prediction
//! of Timer Interrupt".
//!
//! A periodic real-time task shares a lock with non-real-time threads. With a plain
//! mutex, the real-time task wakes up and then waits for whatever critical section a
//! background thread happens to be in. The delayed-locking rule avoids that: a thread
//! may enter critical section *i* only if the section's predicted hold time (plus a
//! margin) ends before the real-time task's next release; otherwise it sleeps until the
//! real-time task has run, and after [`DelayedConfig::max_refusals`] refusals it enters
//! anyway so that nobody starves.
//!
//! - [`DelayedLock`] guards data like `std::sync::Mutex` and applies the rule. It is a
//!   [`Lock`] on the same futex mutex as the [`Variant::Plain`] lock, so only the
//!   admission rule differs; [`Variant`] also offers priority inheritance (PI futex) and
//!   priority ceiling for comparison, behind the same interface.
//! - The lock monitor keeps the hold time per (lock, call site) through
//!   `#[track_caller]`. A hold is timed on `CLOCK_MONOTONIC` and on the holder's
//!   `CLOCK_THREAD_CPUTIME_ID`; if the holder was preempted (the two differ) the CPU
//!   time is recorded instead of the wall time, so preemption never inflates a sample
//!   ([`hold_sample`]). Predictors ([`PredictorKind`]): the maximum and the exponential average (the
//!   paper's two), and a windowed high quantile (the default).
//! - [`ReleaseTimer`] is the timer prediction: the real-time task publishes its next
//!   absolute release time (`CLOCK_MONOTONIC` nanoseconds) each period.
//! - [`bench`](mod@bench) runs the real-thread lock benchmark behind `latlab lockbench`, and [`sim`]
//!   the deterministic uniprocessor-kernel simulation behind `latlab lockbench --simulate`.
//!
//! # Example
//!
//! ```
//! use latlab_lock::{monotonic_ns, sleep_until, DelayedLock, ReleaseTimer};
//! use std::sync::Arc;
//!
//! let timer = ReleaseTimer::new();
//! let shared = Arc::new(DelayedLock::new(Vec::<u64>::new(), timer.clone()));
//!
//! // The real-time task: three periods of 2 ms; it publishes its next release after
//! // its own critical section, then sleeps until that release.
//! let rt = {
//!     let (shared, timer) = (shared.clone(), timer.clone());
//!     std::thread::spawn(move || {
//!         timer.register_current_thread();
//!         let mut release = monotonic_ns();
//!         for _ in 0..3 {
//!             shared.lock().push(release);
//!             release += 2_000_000;
//!             timer.publish(release);
//!             sleep_until(release);
//!         }
//!         timer.retire();
//!     })
//! };
//!
//! // A background thread: each section enters only if it fits before the next release.
//! for _ in 0..100 {
//!     shared.lock().push(0);
//! }
//! rt.join().unwrap();
//! assert_eq!(shared.lock().len(), 103);
//! let counters = shared.counters();
//! assert_eq!(counters.acquisitions, 104);
//! println!("{} refusals, {} forced entries", counters.refusals, counters.forced_entries);
//! ```

#![warn(missing_docs)]

pub mod bench;
pub mod document;
#[doc(hidden)]
pub mod fixtures;
mod lock;
mod monitor;
mod predict;
mod raw;
pub mod shape;
pub mod sim;

mod sys;
mod timer;

pub use lock::{
    decide, Decision, DelayedConfig, DelayedLock, Lock, LockCounters, LockGuard, Variant,
};
pub use monitor::{hold_sample, SiteStats, MAX_SITES};
pub use predict::{Predictor, PredictorKind};
pub use sys::{busy_cpu, busy_wall, monotonic_ns, sleep_until, thread_cpu_ns};
pub use timer::ReleaseTimer;

/// Errors of the lock, the benchmark and the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// A setting is out of range; the message names the valid range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// Shapes for the simulation's kernel sections, but not three.
    #[error("--simulate models three kernel sections (do_softirq, tcp_sendmsg, net_rx): give three --site shapes or none")]
    SimSites {
        /// How many shapes were given.
        given: usize,
    },
    /// A ceiling or real-time priority outside SCHED_FIFO's range.
    #[error("priority {priority} is outside SCHED_FIFO's 1..=99; use at least the real-time task's priority")]
    InvalidPriority {
        /// The rejected priority.
        priority: i32,
    },
    /// The kernel has no priority-inheritance futexes.
    #[error("the kernel rejected a priority-inheritance futex ({source}); PI futexes need CONFIG_FUTEX_PI=y: use the plain or ceiling variant instead")]
    PiUnsupported {
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// A thread could not get its real-time priority.
    #[error("SCHED_FIFO priority {priority} refused for the {thread} thread ({source}): run as root, or grant CAP_SYS_NICE (setcap cap_sys_nice+ep <binary>), or raise RLIMIT_RTPRIO (ulimit -r {priority})")]
    SchedFifo {
        /// Which benchmark thread.
        thread: String,
        /// The priority asked for.
        priority: i32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// A thread could not be pinned to its CPU.
    #[error("cannot pin the {thread} thread to CPU {cpu} ({source}): choose an online CPU (see /sys/devices/system/cpu/online) allowed by the cpuset")]
    Affinity {
        /// Which benchmark thread.
        thread: String,
        /// The CPU asked for.
        cpu: usize,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// A benchmark thread could not be started.
    #[error("cannot start the {thread} thread: {source}")]
    Spawn {
        /// Which benchmark thread.
        thread: String,
        /// The error from the OS.
        source: std::io::Error,
    },
    /// The benchmark's protected counter disagrees with the sections its threads ran.
    #[error("{variant}: {ran} critical sections ran but the protected counter says {counted}; the lock lost mutual exclusion or a wake-up (a bug in latlab-lock, please report it)")]
    LostSections {
        /// The variant.
        variant: String,
        /// Sections the threads completed.
        ran: u64,
        /// What the lock-protected counter says.
        counted: u64,
    },
    /// The benchmark was stopped before the variant measured anything.
    #[error("stopped before {variant} measured anything; let it run longer than its warm-up")]
    NothingMeasured {
        /// The variant.
        variant: String,
    },
    /// A benchmark thread panicked.
    #[error("the {thread} thread panicked; this is a bug in latlab-lock")]
    ThreadPanicked {
        /// Which benchmark thread.
        thread: String,
    },
}

#[cfg(test)]
pub(crate) mod test_support {
    /// Skips a test that needs a privilege this process lacks, printing the reason and
    /// the fix, or fails it when `LATLAB_REQUIRE_PRIVILEGE=1`.
    pub(crate) fn skip_or_fail(what: &str) {
        latlab_testkit::require(
            &format!("{what}: root or CAP_SYS_NICE"),
            false,
            "run the tests as root (or setcap cap_sys_nice+ep on the test binary)",
        );
    }
}
