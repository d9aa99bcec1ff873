//! `clock-nanosleep`: an absolute sleep to each point of the grid.

use latlab_rt::clock::{monotonic_ns, to_timespec};

use super::grid::Grid;
use super::{Wake, WakeSource};
use crate::MeasureError;

pub(super) struct ClockNanosleep {
    pub(super) grid: Grid,
}

impl WakeSource for ClockNanosleep {
    #[inline]
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let target = to_timespec(self.grid.next);
        // SAFETY: valid timespec; no remaining-time pointer with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &target,
                std::ptr::null_mut(),
            )
        };
        if rc == libc::EINTR {
            return Ok(None);
        }
        Ok(Some(self.grid.wake(monotonic_ns())))
    }
}
