//! `nanosleep`: a relative sleep of one interval.

use latlab_rt::clock::{monotonic_ns, sleep_until, to_timespec};

use super::{Wake, WakeSource};
use crate::MeasureError;

pub(super) struct Nanosleep {
    pub(super) interval: u64,
    /// The run's start, until the first sleep: the first relative sleep
    /// begins one interval before it, so its intended wake-up is the start,
    /// as with the absolute timers.
    pub(super) start: Option<u64>,
}

impl WakeSource for Nanosleep {
    #[inline]
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        if let Some(start) = self.start.take() {
            sleep_until(start.saturating_sub(self.interval));
        }
        let duration = to_timespec(self.interval);
        let before = monotonic_ns();
        // SAFETY: valid timespec.
        if unsafe { libc::nanosleep(&duration, std::ptr::null_mut()) } != 0 {
            return Ok(None);
        }
        Ok(Some(Wake {
            intended: before + self.interval,
            actual: monotonic_ns(),
            missed: 0,
            uncertain: false,
        }))
    }
}
