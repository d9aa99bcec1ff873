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

/// The size of [`map_shared_page`]'s mapping.
pub const SHARED_PAGE_BYTES: usize = 4096;

/// Maps [`SHARED_PAGE_BYTES`] of zero-filled memory shared with the
/// children this process forks afterwards (an anonymous `MAP_SHARED`
/// mapping); the caller unmaps it (`munmap`) when done.
pub fn map_shared_page() -> std::io::Result<*mut libc::c_void> {
    // SAFETY: a fresh anonymous mapping aliases nothing; checked for failure.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SHARED_PAGE_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ptr)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_page_is_zeroed_and_seen_by_a_forked_child() {
        let page = map_shared_page().unwrap().cast::<u8>();
        // SAFETY: the page is ours and SHARED_PAGE_BYTES long.
        let bytes = unsafe { std::slice::from_raw_parts(page, SHARED_PAGE_BYTES) };
        assert!(bytes.iter().all(|&b| b == 0));
        // SAFETY: the child only writes one byte of the page and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: as above; _exit skips the parent's destructors.
            unsafe {
                *page.add(7) = 42;
                libc::_exit(0);
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        // SAFETY: the child has exited; the parent reads its own mapping.
        let seen = unsafe { std::ptr::read_volatile(page.add(7)) };
        assert_eq!(seen, 42, "the child's write is seen by the parent");
        // SAFETY: unmapping what map_shared_page mapped.
        assert_eq!(unsafe { libc::munmap(page.cast(), SHARED_PAGE_BYTES) }, 0);
    }
}
