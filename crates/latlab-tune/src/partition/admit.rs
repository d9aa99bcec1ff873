//! A child process moving itself into the partition before it execs.

/// The partition's `cgroup.procs`, open for writing: a child writes its
/// own pid there before it runs the measurement.
#[derive(Debug)]
pub struct Admitter {
    file: std::fs::File,
}

impl Admitter {
    /// Moves the calling process into the partition. Async-signal-safe
    /// (getpid, write, no allocation): for `CommandExt::pre_exec`.
    pub fn admit_self(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: getpid cannot fail.
        let mut pid = unsafe { libc::getpid() } as u32;
        let mut digits = [0u8; 10];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (pid % 10) as u8;
            pid /= 10;
            if pid == 0 {
                break;
            }
        }
        let text = &digits[start..];
        // SAFETY: writes `text` (a live stack buffer) to an open file.
        let n = unsafe { libc::write(self.file.as_raw_fd(), text.as_ptr().cast(), text.len()) };
        if n == text.len() as isize {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Admitter {
    pub(super) fn new(file: std::fs::File) -> Admitter {
        Admitter { file }
    }
}
