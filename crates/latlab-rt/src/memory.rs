//! Memory locking, so page faults do not show up as latency.

use crate::RtError;

/// Locks all current and future pages of the process in RAM.
pub fn lock_all() -> Result<(), RtError> {
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(RtError::MlockRefused {
            source: std::io::Error::last_os_error(),
        })
    }
}

/// Undoes [`lock_all`].
pub fn unlock_all() {
    // SAFETY: munlockall has no preconditions.
    unsafe { libc::munlockall() };
}

/// True when the process has pages locked (VmLck in /proc/self/status > 0).
pub fn is_locked() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmLck:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|kb| kb.parse::<u64>().ok())
        .is_some_and(|kb| kb > 0)
}

/// Touches `bytes` of the calling thread's stack so later use does not fault.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 4096;
    fn touch(depth: usize) {
        let mut page = [0u8; CHUNK];
        // Keep the write from being optimised away.
        std::hint::black_box(&mut page);
        if depth > 1 {
            touch(depth - 1);
        }
    }
    touch(bytes / CHUNK);
}
