//! Thin, safe wrappers around the Linux system calls the locks need: clocks,
//! futexes, thread ids and scheduling parameters.

use std::cell::Cell;
use std::sync::atomic::AtomicU32;

pub use latlab_rt::clock::{monotonic_ns, sleep_until, thread_cpu_ns};
use latlab_rt::cpuset::CpuSet;
use latlab_rt::sched::param as sched_param;

/// Spins (without sleeping) until `CLOCK_MONOTONIC` has advanced by `ns`.
pub fn busy_wall(ns: u64) {
    let end = monotonic_ns() + ns;
    while monotonic_ns() < end {
        std::hint::spin_loop();
    }
}

/// Spins until the calling thread has consumed `ns` of CPU time.
pub fn busy_cpu(ns: u64) {
    let end = thread_cpu_ns() + ns;
    while thread_cpu_ns() < end {
        std::hint::spin_loop();
    }
}

thread_local! {
    static TID: Cell<i32> = const { Cell::new(0) };
}

/// The kernel thread id of the calling thread (cached per thread).
pub fn gettid() -> i32 {
    TID.with(|cell| {
        let cached = cell.get();
        if cached != 0 {
            return cached;
        }
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        cell.set(tid);
        tid
    })
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

// The futex calls go through `latlab_rt::wait`, which passes each timeout in
// the layout the call takes (`futex_time64` on 32-bit targets built with a
// 64-bit `time_t`, as `make dist` builds them).

/// Blocks while `*word == expected` (FUTEX_WAIT). Returns on wake-up, signal or a changed value.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32) {
    let _ = latlab_rt::wait::futex(word, libc::FUTEX_WAIT, expected, None, 0);
}

/// Blocks while `*word == expected`, at most until the absolute `CLOCK_MONOTONIC` time
/// `deadline_ns`. Returns on wake-up, a changed value or the deadline.
pub(crate) fn futex_wait_until(word: &AtomicU32, expected: u32, deadline_ns: u64) {
    latlab_rt::wait::futex_wait_until(word, expected, Some(deadline_ns));
}

/// Wakes up to `count` threads blocked on `word`.
pub(crate) fn futex_wake(word: &AtomicU32, count: i32) {
    latlab_rt::wait::futex_wake(word, count.max(0) as u32);
}

/// FUTEX_LOCK_PI: blocks until the kernel hands the PI futex to the caller, boosting the
/// owner to the caller's priority meanwhile. Returns the errno on failure.
pub(crate) fn futex_lock_pi(word: &AtomicU32) -> Result<(), i32> {
    latlab_rt::wait::futex(word, libc::FUTEX_LOCK_PI, 0, None, 0).map(drop)
}

/// FUTEX_UNLOCK_PI: hands the PI futex to the highest-priority waiter. Returns the errno on
/// failure.
pub(crate) fn futex_unlock_pi(word: &AtomicU32) -> Result<(), i32> {
    latlab_rt::wait::futex(word, libc::FUTEX_UNLOCK_PI, 0, None, 0).map(drop)
}

/// A thread's scheduling policy and static priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedParams {
    /// `SCHED_OTHER`, `SCHED_FIFO`, ... as the kernel numbers them.
    pub policy: i32,
    /// Static priority (0 for the normal policies).
    pub priority: i32,
}

/// The calling thread's scheduling policy and priority.
pub fn current_sched() -> SchedParams {
    // The system calls, not the C functions: musl's return ENOSYS.
    // SAFETY: querying the calling thread (pid 0) with a valid sched_param.
    let policy = unsafe { libc::syscall(libc::SYS_sched_getscheduler, 0) } as i32;
    let mut param = sched_param(0);
    // SAFETY: as above; param is writable.
    unsafe {
        libc::syscall(
            libc::SYS_sched_getparam,
            0,
            &mut param as *mut libc::sched_param,
        )
    };
    SchedParams {
        policy: policy & !libc::SCHED_RESET_ON_FORK,
        priority: param.sched_priority,
    }
}

/// Sets the calling thread's policy and priority. Returns the errno on failure.
pub fn set_sched(params: SchedParams) -> Result<(), i32> {
    let param = sched_param(params.priority);
    // SAFETY: changing the calling thread (pid 0) with a valid sched_param
    // (the system call: musl's sched_setscheduler returns ENOSYS).
    let param = &param as *const libc::sched_param;
    if unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, params.policy, param) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Pins the calling thread to `cpu`. Returns the errno on failure.
pub fn pin_to_cpu(cpu: usize) -> Result<(), i32> {
    let set = CpuSet::single(cpu).map_err(|_| libc::EINVAL)?;
    set.apply_to_current_thread()
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))
}
