//! `timerfd`: `timerfd_create(CLOCK_MONOTONIC)` read for its expiry count.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use latlab_rt::clock::{monotonic_ns, to_timespec};

use super::grid::KernelExpiries;
use super::{interrupted, os_error, Wake, WakeSource};
use crate::MeasureError;

/// `timerfd_create(CLOCK_MONOTONIC)` armed on the absolute grid: the
/// kernel re-arms it at each read and returns the number of expiries since
/// the last one, so every intended time is an expiry the kernel armed,
/// exactly.
pub(super) struct Timerfd {
    pub(super) fd: OwnedFd,
    pub(super) cpu: usize,
    pub(super) expiries: KernelExpiries,
}

impl Timerfd {
    pub(super) fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
        // SAFETY: timerfd_create returns a new fd or -1.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(os_error("timerfd", cpu, "timerfd_create"));
        }
        // SAFETY: raw is a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let spec = libc::itimerspec {
            it_interval: to_timespec(interval),
            it_value: to_timespec(start),
        };
        // SAFETY: valid fd and spec.
        if unsafe {
            libc::timerfd_settime(
                fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        } != 0
        {
            return Err(os_error("timerfd", cpu, "timerfd_settime"));
        }
        Ok(Timerfd {
            fd,
            cpu,
            expiries: KernelExpiries {
                next: start,
                interval,
                uncertain: false,
            },
        })
    }
}

impl WakeSource for Timerfd {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let mut expirations = 0u64;
        // SAFETY: reading 8 bytes into a u64.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut expirations as *mut u64).cast(),
                8,
            )
        };
        let now = monotonic_ns();
        if n != 8 {
            if interrupted() {
                return Ok(None);
            }
            return Err(os_error("timerfd", self.cpu, "read"));
        }
        Ok(Some(self.expiries.wake(now, expirations)))
    }
}
