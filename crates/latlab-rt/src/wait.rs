//! Timed waits between threads that keep their nanoseconds on 32-bit
//! targets: a futex wait with an absolute CLOCK_MONOTONIC deadline
//! ([`futex_wait_until`]), and built on it an [`Event`] (a flag threads wait
//! for) and a [`Condvar`] (a condition variable for a `std::sync::Mutex`).
//!
//! # Why not std's timed waits
//!
//! On the armv7 binary `make dist` builds (musl with a 64-bit `time_t`,
//! std included), every timed wait of Rust's standard library returns
//! early: `thread::park_timeout`, `Condvar::wait_timeout*`,
//! `mpsc::Receiver::recv_timeout`. They all end in std's `futex_wait`
//! (`library/std/src/sys/pal/unix/futex.rs`, line 73 in nightly-2026-05-19),
//! which calls `libc::syscall(libc::SYS_futex, ..., FUTEX_WAIT_BITSET, ...,
//! &libc::timespec)`. On 32-bit ARM `SYS_futex` is the old system call that
//! reads a 32-bit-time timespec `{ i32 tv_sec; i32 tv_nsec }`, but the
//! `libc::timespec` passed has the 64-bit-time layout `{ i64 tv_sec; i32
//! tv_nsec; pad }`: the kernel takes the low word of `tv_sec` as the seconds
//! and its high word (0) as the nanoseconds. The absolute deadline is cut
//! down to a whole second, usually already past, so the wait returns at once
//! (latlab-load's supervisor, waking every 50 ms with `park_timeout`, spun on
//! a CPU instead). `thread::sleep` is not affected (it goes through the C
//! library's `nanosleep`, which musl maps to the 64-bit-time call).
//!
//! Here the timeout is built for the system call that is made: on 32-bit
//! targets `futex_time64` (Linux 5.1) with the kernel's `{ i64, i64 }`
//! timespec, whatever `time_t` the C library has; on a kernel without it
//! (`ENOSYS`), the old `futex` with a `{ long, long }` timespec (monotonic
//! deadlines fit in 32 bits for 68 years of uptime). On 64-bit targets the
//! plain `futex` with `libc::timespec`, as std makes it.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use latlab_rt::wait::Event;
//!
//! let done = Arc::new(Event::new());
//! let setter = done.clone();
//! std::thread::spawn(move || setter.set());
//! assert!(done.wait_timeout(Duration::from_secs(10)));
//! // Set events stay set.
//! assert!(done.wait_timeout(Duration::ZERO));
//! ```

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::clock::monotonic_ns;

/// The absolute CLOCK_MONOTONIC time `timeout` from now, in nanoseconds
/// (saturating: a huge timeout is a deadline that never comes).
pub fn deadline_after(timeout: Duration) -> u64 {
    let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    monotonic_ns().saturating_add(timeout_ns)
}

/// Blocks while `*word == expected`, until another thread wakes the word
/// ([`futex_wake`]) or the absolute CLOCK_MONOTONIC time `deadline_ns` (in
/// nanoseconds; `None`: no deadline) has come. A signal resumes the wait.
///
/// Returns `false` when the deadline came, `true` otherwise: woken, the word
/// did not hold `expected`, or a spurious wake-up (callers re-check their
/// condition in a loop).
pub fn futex_wait_until(word: &AtomicU32, expected: u32, deadline_ns: Option<u64>) -> bool {
    loop {
        if word.load(Ordering::Relaxed) != expected {
            return true;
        }
        // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline
        // (FUTEX_WAIT a relative one); a full bit set makes it a plain wait.
        let rc = futex(
            word,
            libc::FUTEX_WAIT_BITSET,
            expected,
            deadline_ns,
            libc::FUTEX_BITSET_MATCH_ANY as u32,
        );
        match rc {
            Ok(_) => return true,
            Err(libc::EINTR) => continue,
            Err(libc::ETIMEDOUT) => return false,
            // EAGAIN: the word changed before the kernel looked.
            Err(_) => return true,
        }
    }
}

/// One futex call on `word` (process-private): `op` with `val` and `val3`,
/// and `deadline_ns` as the timeout in the layout the call made takes
/// (`futex_time64` on 32-bit targets), for the operations this module does
/// not wrap (FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, ...). Returns the kernel's
/// non-negative result or the errno.
pub fn futex(
    word: &AtomicU32,
    op: i32,
    val: u32,
    deadline_ns: Option<u64>,
    val3: u32,
) -> Result<usize, i32> {
    sys::with_deadline(deadline_ns, |nr, timeout| {
        sys::call(nr, word, op, val, timeout, val3)
    })
}

/// Wakes up to `count` threads blocked on `word` in [`futex_wait_until`];
/// returns how many were woken.
pub fn futex_wake(word: &AtomicU32, count: u32) -> usize {
    let count = count.min(i32::MAX as u32);
    futex(word, libc::FUTEX_WAKE, count, None, 0).unwrap_or(0)
}

/// A flag that threads wait for: unset at first, set once by
/// [`Event::set`], then set for good (every wait returns at once). What a
/// stop request or an end of input needs; a timed wait on it keeps its
/// nanoseconds on every target (see the module documentation).
#[derive(Debug, Default)]
pub struct Event {
    /// 0: unset; 1: set.
    state: AtomicU32,
}

impl Event {
    /// An unset event.
    pub const fn new() -> Event {
        Event {
            state: AtomicU32::new(0),
        }
    }

    /// Sets the event and wakes every thread waiting for it.
    pub fn set(&self) {
        if self.state.swap(1, Ordering::Release) == 0 {
            futex_wake(&self.state, u32::MAX);
        }
    }

    /// True once the event is set.
    pub fn is_set(&self) -> bool {
        self.state.load(Ordering::Acquire) != 0
    }

    /// Waits until the event is set or the absolute CLOCK_MONOTONIC time
    /// `deadline_ns` (nanoseconds, as [`crate::clock::monotonic_ns`]) has
    /// come; returns whether the event is set. Never returns `false` before
    /// the deadline.
    pub fn wait_until(&self, deadline_ns: u64) -> bool {
        self.wait_deadline(Some(deadline_ns))
    }

    /// Waits at most `timeout` for the event; returns whether it is set.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        self.wait_until(deadline_after(timeout))
    }

    /// Waits, without a deadline, until the event is set.
    pub fn wait(&self) {
        self.wait_deadline(None);
    }

    fn wait_deadline(&self, deadline_ns: Option<u64>) -> bool {
        loop {
            if self.is_set() {
                return true;
            }
            if !futex_wait_until(&self.state, 0, deadline_ns) {
                // The deadline came (the kernel says so, on CLOCK_MONOTONIC).
                return self.is_set();
            }
        }
    }
}

/// A condition variable for a `std::sync::Mutex`, like `std::sync::Condvar`
/// but with timed waits that keep their nanoseconds on every target (see the
/// module documentation). A notifier changes the protected state while
/// holding the mutex and calls [`Condvar::notify_all`] (during or after).
///
/// A poisoned mutex is not an error here: the waits take the guard anyway.
#[derive(Debug, Default)]
pub struct Condvar {
    /// Counts notifications; waiters sleep while it holds the value they saw
    /// under the mutex, so a notification between their check and their
    /// sleep is not lost.
    sequence: AtomicU32,
}

impl Condvar {
    /// A condition variable nobody waits on.
    pub const fn new() -> Condvar {
        Condvar {
            sequence: AtomicU32::new(0),
        }
    }

    /// Wakes one waiting thread.
    pub fn notify_one(&self) {
        self.sequence.fetch_add(1, Ordering::Relaxed);
        futex_wake(&self.sequence, 1);
    }

    /// Wakes every waiting thread.
    pub fn notify_all(&self) {
        self.sequence.fetch_add(1, Ordering::Relaxed);
        futex_wake(&self.sequence, u32::MAX);
    }

    /// Locks `mutex` and waits while `condition` holds for the protected
    /// value, at most until the absolute CLOCK_MONOTONIC time `deadline_ns`.
    /// Returns the guard and whether the deadline came with the condition
    /// still holding (`true`: timed out; never before the deadline).
    pub fn wait_while_until<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        deadline_ns: u64,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        let lock = || mutex.lock().unwrap_or_else(|p| p.into_inner());
        let mut guard = lock();
        loop {
            if !condition(&mut guard) {
                return (guard, false);
            }
            if monotonic_ns() >= deadline_ns {
                return (guard, true);
            }
            // Read under the mutex: a notifier changes the state under it
            // and counts after, so either we see its change or it sees us
            // asleep (or the count differs and the wait returns at once).
            let seen = self.sequence.load(Ordering::Relaxed);
            drop(guard);
            futex_wait_until(&self.sequence, seen, Some(deadline_ns));
            guard = lock();
        }
    }

    /// [`Condvar::wait_while_until`] with a deadline `timeout` from now.
    pub fn wait_timeout_while<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        timeout: Duration,
        condition: impl FnMut(&mut T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        self.wait_while_until(mutex, deadline_after(timeout), condition)
    }
}

/// The futex system call, with the timeout in the layout the call made takes.
mod sys {
    use std::sync::atomic::AtomicU32;

    /// The errno of the last failed call.
    fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    /// One futex system call `nr` on `word` (always process-private), the
    /// timeout null or a timespec of the layout `nr` reads. Returns the
    /// kernel's non-negative result or the errno.
    pub(super) fn call(
        nr: libc::c_long,
        word: &AtomicU32,
        op: i32,
        val: u32,
        timeout: *const libc::c_void,
        val3: u32,
    ) -> Result<usize, i32> {
        // SAFETY: `word` is a valid, aligned u32 that outlives the call; the
        // caller passes a null timeout or a valid one of the layout `nr` reads.
        let rc = unsafe {
            libc::syscall(
                nr,
                word.as_ptr(),
                op | libc::FUTEX_PRIVATE_FLAG,
                val,
                timeout,
                std::ptr::null::<u32>(),
                val3,
            )
        };
        if rc < 0 {
            Err(errno())
        } else {
            Ok(rc as usize)
        }
    }

    /// 64-bit targets: `call` of the one futex system call, with libc's
    /// timespec of the absolute CLOCK_MONOTONIC `deadline_ns`.
    #[cfg(not(all(target_pointer_width = "32", not(target_arch = "x86_64"))))]
    pub(super) fn with_deadline(
        deadline_ns: Option<u64>,
        call: impl Fn(libc::c_long, *const libc::c_void) -> Result<usize, i32>,
    ) -> Result<usize, i32> {
        let ts = deadline_ns.map(crate::clock::to_timespec);
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        call(libc::SYS_futex, ts_ptr.cast())
    }

    /// The kernel's `struct __kernel_timespec`: 64-bit seconds and
    /// nanoseconds on every architecture, what `futex_time64` reads.
    #[cfg(all(target_pointer_width = "32", not(target_arch = "x86_64")))]
    #[repr(C)]
    struct KernelTimespec64 {
        tv_sec: i64,
        tv_nsec: i64,
    }

    /// `__NR_futex_time64`: 422 in the table every 32-bit architecture
    /// shares since Linux 5.1, offset by the ABI's base on MIPS.
    #[cfg(all(target_pointer_width = "32", not(target_arch = "x86_64")))]
    const SYS_FUTEX_TIME64: libc::c_long = if cfg!(target_arch = "mips") {
        4422
    } else if cfg!(target_arch = "mips64") {
        6422
    } else {
        422
    };

    /// Set once `futex_time64` answered ENOSYS (a kernel before 5.1).
    #[cfg(all(target_pointer_width = "32", not(target_arch = "x86_64")))]
    static NO_TIME64: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// 32-bit targets: `futex_time64` with the kernel's 64-bit timespec, so
    /// the call is right whatever `time_t` the C library was built with; on
    /// a kernel without it, the old `futex` with a 32-bit timespec.
    #[cfg(all(target_pointer_width = "32", not(target_arch = "x86_64")))]
    pub(super) fn with_deadline(
        deadline_ns: Option<u64>,
        call: impl Fn(libc::c_long, *const libc::c_void) -> Result<usize, i32>,
    ) -> Result<usize, i32> {
        use std::sync::atomic::Ordering;
        let secs = deadline_ns.map(|ns| (ns / 1_000_000_000, ns % 1_000_000_000));
        if !NO_TIME64.load(Ordering::Relaxed) {
            let ts = secs.map(|(s, ns)| KernelTimespec64 {
                tv_sec: s as i64,
                tv_nsec: ns as i64,
            });
            let ts_ptr = ts
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const KernelTimespec64);
            match call(SYS_FUTEX_TIME64, ts_ptr.cast()) {
                Err(libc::ENOSYS) => NO_TIME64.store(true, Ordering::Relaxed),
                result => return result,
            }
        }
        // CLOCK_MONOTONIC seconds fit in 32 bits for 68 years of uptime; a
        // deadline beyond that is no deadline.
        let old = secs
            .filter(|&(s, _)| s <= libc::c_long::MAX as u64)
            .map(|(s, ns)| [s as libc::c_long, ns as libc::c_long]);
        let old_ptr = old
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const [libc::c_long; 2]);
        call(libc::SYS_futex, old_ptr.cast())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const NS_PER_S: u64 = 1_000_000_000;

    /// A deadline 300 ms ahead, at least 1 ms away from a whole second: a
    /// wait that loses its nanoseconds ends at the whole second before it.
    fn deadline_between_seconds() -> u64 {
        let mut deadline = monotonic_ns() + 300_000_000;
        let frac = deadline % NS_PER_S;
        if !(1_000_000..NS_PER_S - 1_000_000).contains(&frac) {
            deadline += 100_000_000;
        }
        deadline
    }

    /// Asserts that a wait that timed out did not end before its deadline.
    fn assert_not_early(what: &str, deadline_ns: u64) {
        let now = monotonic_ns();
        assert!(
            now >= deadline_ns,
            "{what} returned {:.3} ms before its deadline (at {}.{:09} s): the timeout lost precision",
            (deadline_ns - now) as f64 / 1e6,
            deadline_ns / NS_PER_S,
            deadline_ns % NS_PER_S
        );
    }

    #[test]
    fn a_futex_wait_does_not_end_before_a_deadline_between_whole_seconds() {
        let word = AtomicU32::new(7);
        let deadline = deadline_between_seconds();
        // Spurious wake-ups may end a wait early; a timeout may not.
        while futex_wait_until(&word, 7, Some(deadline)) {}
        assert_not_early("futex_wait_until", deadline);
    }

    #[test]
    fn an_event_wait_does_not_time_out_before_a_deadline_between_whole_seconds() {
        let event = Event::new();
        let deadline = deadline_between_seconds();
        assert!(!event.wait_until(deadline));
        assert_not_early("Event::wait_until", deadline);
        let deadline = monotonic_ns() + 250_000_000;
        assert!(!event.wait_timeout(Duration::from_millis(250)));
        assert_not_early("Event::wait_timeout", deadline);
    }

    #[test]
    fn a_condvar_wait_does_not_time_out_before_a_deadline_between_whole_seconds() {
        let mutex = Mutex::new(0);
        let condvar = Condvar::new();
        let deadline = deadline_between_seconds();
        let (guard, timed_out) = condvar.wait_while_until(&mutex, deadline, |n| *n == 0);
        assert!(timed_out);
        assert_eq!(*guard, 0);
        assert_not_early("Condvar::wait_while_until", deadline);
    }

    #[test]
    fn a_futex_wait_returns_at_once_when_the_word_has_changed() {
        let word = AtomicU32::new(1);
        let deadline = monotonic_ns() + 10 * NS_PER_S;
        assert!(futex_wait_until(&word, 0, Some(deadline)));
        assert!(monotonic_ns() < deadline);
        assert_eq!(futex_wake(&word, 1), 0, "nobody was waiting");
    }

    #[test]
    fn setting_an_event_wakes_its_waiter_before_the_deadline() {
        let event = Arc::new(Event::new());
        let setter = event.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            setter.set();
        });
        let deadline = monotonic_ns() + 20 * NS_PER_S;
        assert!(event.wait_until(deadline));
        let left = deadline.saturating_sub(monotonic_ns());
        assert!(left > 0, "the wait ran to its deadline");
        assert!(event.is_set());
        // Set for good: no wait blocks any more.
        assert!(event.wait_until(0));
        event.wait();
        thread.join().unwrap();
    }

    #[test]
    fn a_notified_condvar_wait_returns_before_the_deadline_with_the_new_state() {
        let shared = Arc::new((Mutex::new(0), Condvar::new()));
        let notifier = shared.clone();
        let thread = std::thread::spawn(move || {
            for n in 1..=3 {
                std::thread::sleep(Duration::from_millis(20));
                *notifier.0.lock().unwrap() = n;
                notifier.1.notify_all();
            }
        });
        let deadline = monotonic_ns() + 20 * NS_PER_S;
        let (guard, timed_out) = shared.1.wait_while_until(&shared.0, deadline, |n| *n < 3);
        assert!(!timed_out);
        assert_eq!(*guard, 3);
        assert!(monotonic_ns() < deadline);
        drop(guard);
        thread.join().unwrap();
    }

    #[test]
    fn notify_one_wakes_one_more_waiter_each_time() {
        let shared = Arc::new((Mutex::new(0u32), Condvar::new()));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let (mut guard, timed_out) =
                        shared
                            .1
                            .wait_timeout_while(&shared.0, Duration::from_secs(20), |n| *n == 0);
                    assert!(!timed_out);
                    *guard -= 1;
                })
            })
            .collect();
        // Each notification hands out one token; two rounds end both waiters.
        for _ in 0..2 {
            *shared.0.lock().unwrap() += 1;
            shared.1.notify_one();
            std::thread::sleep(Duration::from_millis(20));
        }
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*shared.0.lock().unwrap(), 0);
    }

    #[test]
    fn a_huge_timeout_is_a_deadline_that_never_comes() {
        assert_eq!(deadline_after(Duration::MAX), u64::MAX);
        let event = Event::new();
        event.set();
        assert!(event.wait_timeout(Duration::MAX));
    }

    /// Shows the std defect this module works around: on armv7 with a
    /// 64-bit `time_t` (the `make dist` build), `park_timeout` returns at
    /// the whole second before its deadline. Not run by default (it fails
    /// there, by std's fault); `scripts/dist.sh check` runs it with
    /// `--ignored` and expects the failure on armv7 only.
    #[test]
    #[ignore = "documents a std defect on 32-bit time64 targets; run with --ignored"]
    fn std_park_timeout_does_not_return_before_its_deadline() {
        let deadline = deadline_between_seconds();
        let timeout = Duration::from_nanos(deadline - monotonic_ns());
        let started = monotonic_ns();
        // Nothing unparks this thread: an early return is the timeout's.
        std::thread::park_timeout(timeout);
        let waited = monotonic_ns() - started;
        assert!(
            waited >= timeout.as_nanos() as u64,
            "std::thread::park_timeout({timeout:?}) returned after {:.3} ms",
            waited as f64 / 1e6
        );
    }
}
