//! Signals of the signal-based sources: blocking, waiting, and the
//! overrun count of a POSIX timer's signal.

/// Blocks `signal` in the calling thread (and threads it creates later).
pub fn block_signal(signal: libc::c_int) {
    // SAFETY: sigset operations on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The signal posix-timer directs at measurement threads.
pub fn posix_timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 2
}
/// Waits for `signal` (blocked in the thread); `None` on EINTR.
pub(super) fn wait_signal(signal: libc::c_int) -> Option<libc::siginfo_t> {
    // SAFETY: sigset operations on a local set; sigwaitinfo writes into info.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        let mut info: libc::siginfo_t = std::mem::zeroed();
        (libc::sigwaitinfo(&set, &mut info) == signal).then_some(info)
    }
}

/// The `si_overrun` of a POSIX timer's signal: the expiries the kernel
/// skipped when it re-armed the timer as the signal was taken.
pub(super) fn si_overrun(info: &libc::siginfo_t) -> u64 {
    /// The `_timer` member of the kernel's `siginfo_t` union: pointer-aligned,
    /// as the `sigval` in it is a pointer.
    #[repr(C)]
    struct TimerFields {
        tid: libc::c_int,
        overrun: libc::c_int,
        value: *mut libc::c_void,
    }
    /// The head of the kernel's `siginfo_t`: three ints, then the union,
    /// which starts pointer-aligned (offset 16 on 64-bit, 12 on 32-bit) on
    /// every Linux architecture.
    #[repr(C)]
    struct TimerSiginfo {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        timer: TimerFields,
    }
    const _: () =
        assert!(std::mem::size_of::<TimerSiginfo>() <= std::mem::size_of::<libc::siginfo_t>());
    // SAFETY: siginfo_t is larger than this prefix of it and at least as aligned
    // (it holds pointers too); every field is plain data.
    let timer = unsafe { &*(info as *const libc::siginfo_t).cast::<TimerSiginfo>() };
    u64::try_from(timer.timer.overrun).unwrap_or(0)
}
