//! Wake-up sources: each blocks until its next activation and reports the
//! intended and actual wake-up times on CLOCK_MONOTONIC.
//!
//! Every sample is measured against the expiry the kernel actually armed:
//!
//! - `clock-nanosleep` arms each sleep itself at the next point of the grid
//!   `start + k * interval`; a wake-up later than the following point skips
//!   the points already past (counted as missed), so a late wake-up never
//!   causes a burst of catch-up samples.
//! - `posix-timer`, `timerfd` and `itimer` are periodic kernel timers. The
//!   kernel re-arms them when the thread takes the expiry (the signal is
//!   dequeued, the timerfd read), to the first grid point after that moment,
//!   and counts the points it skipped. latlab takes that count from the
//!   kernel (`si_overrun`, the timerfd expiration count, `getitimer`'s
//!   remaining time) instead of deciding from its own clock read, which
//!   comes later and would disagree whenever a grid point falls in between.
//! - `nanosleep` is relative: the intended wake-up is the clock read before
//!   the call plus the interval.
//! - `rtc` periodic interrupts are an hrtimer of the kernel's RTC core,
//!   relative to `RTC_PIE_ON`: placed like `itimer`, counted by the read.
//!
//! One file per wake source (`clock_nanosleep`, `nanosleep`, `itimer` with
//! its `itimer_placement`, `posix_timer`, `timerfd`, `rtc`), and the shared
//! part: the [`TimerKind`] names, the `grid` of intended wake-ups and the
//! `signal` plumbing.

mod clock_nanosleep;
mod grid;
mod itimer;
mod itimer_placement;
mod kind;
mod nanosleep;
mod posix_timer;
mod rtc;
mod signal;
#[cfg(test)]
mod tests;
mod timerfd;

use std::path::Path;

use crate::MeasureError;

use clock_nanosleep::ClockNanosleep;
use grid::Grid;
use itimer::Itimer;
pub use kind::TimerKind;
use nanosleep::Nanosleep;
use posix_timer::PosixTimer;
use rtc::Rtc;
pub use signal::{block_signal, posix_timer_signal};
use timerfd::Timerfd;

/// One activation of a measurement thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// When the thread should have woken, CLOCK_MONOTONIC ns.
    pub intended: u64,
    /// When it observed itself running, CLOCK_MONOTONIC ns.
    pub actual: u64,
    /// Whole periods skipped since the previous activation.
    pub missed: u64,
    /// The kernel did not say which expiry this wake-up answers (`itimer`
    /// only, rarely): `intended` is then the earliest it can be, so the
    /// latency may be overstated by whole intervals, never understated.
    pub uncertain: bool,
}

impl Wake {
    /// The same activation with only the skipped periods whose grid points lie before
    /// `end` (the end of the run) counted: a last wake-up that comes late must not
    /// count periods after the run as missed. `intended` must be before `end`.
    pub fn missed_before(self, end: u64, interval: u64) -> Wake {
        let in_run = end.saturating_sub(self.intended + 1) / interval.max(1);
        Wake {
            missed: self.missed.min(in_run),
            ..self
        }
    }
}

/// Something a measurement thread blocks on.
pub trait WakeSource {
    /// Blocks until the next activation. `Ok(None)` when interrupted by a signal.
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError>;
}
/// Opens a wake-up source for the calling thread. Must be called on the
/// measurement thread itself (signal-based sources direct signals at it).
pub fn open(
    kind: TimerKind,
    cpu: usize,
    interval_ns: u64,
    start_ns: u64,
    rtc_device: &Path,
) -> Result<Box<dyn WakeSource>, MeasureError> {
    Ok(match kind {
        TimerKind::ClockNanosleep => Box::new(ClockNanosleep {
            grid: Grid {
                next: start_ns,
                interval: interval_ns,
            },
        }),
        TimerKind::Nanosleep => Box::new(Nanosleep {
            interval: interval_ns,
            start: Some(start_ns),
        }),
        TimerKind::Itimer => Box::new(Itimer::new(cpu, interval_ns, start_ns)?),
        TimerKind::PosixTimer => Box::new(PosixTimer::new(cpu, interval_ns, start_ns)?),
        TimerKind::Timerfd => Box::new(Timerfd::new(cpu, interval_ns, start_ns)?),
        TimerKind::Rtc => Box::new(Rtc::new(cpu, interval_ns, start_ns, rtc_device)?),
    })
}
fn os_error(timer: &'static str, cpu: usize, what: &'static str) -> MeasureError {
    MeasureError::Timer {
        timer,
        cpu,
        what,
        source: std::io::Error::last_os_error(),
    }
}

fn interrupted() -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
}
