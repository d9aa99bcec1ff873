//! Where the intended wake-ups lie: the grid latlab arms itself, and the
//! expiries a periodic kernel timer reports it armed.

use super::Wake;

/// The grid of a timer latlab arms itself (`clock-nanosleep`): the
/// next point to sleep until, moved past the wake-up when it came late.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grid {
    pub(super) next: u64,
    pub(super) interval: u64,
}

/// The expiries of a periodic kernel timer (`posix-timer`, `timerfd`, `rtc`,
/// `itimer`): `next` is the one the kernel has armed, and the kernel's own
/// expiration count of each wake-up moves it on.
#[derive(Debug, Clone, Copy)]
pub(super) struct KernelExpiries {
    pub(super) next: u64,
    pub(super) interval: u64,
    /// `next` is the earliest the kernel can have armed, not known exactly.
    pub(super) uncertain: bool,
}

impl KernelExpiries {
    /// Accounts a wake-up at `now` that the kernel reports as `expirations`
    /// expiries of the timer (1 plus its overruns, at least 1): the wake-up
    /// answers the armed expiry, the overruns are missed periods, and the
    /// kernel re-armed the timer `expirations` intervals after it.
    pub(super) fn wake(&mut self, now: u64, expirations: u64) -> Wake {
        let expirations = expirations.max(1);
        let intended = self.next;
        self.next += expirations * self.interval;
        Wake {
            intended,
            actual: now,
            missed: expirations - 1,
            uncertain: std::mem::take(&mut self.uncertain),
        }
    }
}

impl Grid {
    /// Accounts a wake-up at `now` against the grid point it answers.
    pub(super) fn wake(&mut self, now: u64) -> Wake {
        let intended = self.next;
        self.next += self.interval;
        let mut missed = 0;
        if now >= self.next {
            missed = (now - self.next) / self.interval + 1;
            self.next += missed * self.interval;
        }
        Wake {
            intended,
            actual: now,
            missed,
            uncertain: false,
        }
    }
}
