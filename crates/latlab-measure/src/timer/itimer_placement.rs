//! The arithmetic that places an itimer's expiries on the kernel's grid
//! from µs-resolution `getitimer` reads (pure functions, no system calls).

use super::itimer::itimer_read;

/// The shortest `itimer` interval whose expiries µs-resolution `getitimer`
/// reads place on the grid safely.
pub(super) const ITIMER_MIN_INTERVAL_NS: u64 = 50_000;

/// At most this many `getitimer` reads place an itimer's first expiry.
pub(super) const ITIMER_PLACING_READS: usize = 16;

/// Where the kernel holds an itimer's expiry: somewhere in `earliest ..=
/// latest`, CLOCK_MONOTONIC ns (the kernel's hrtimer clock, read at another
/// moment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ExpiryWindow {
    pub(super) earliest: u64,
    pub(super) latest: u64,
}

impl ExpiryWindow {
    /// An expiry `delay` after the kernel's clock read inside a `setitimer`
    /// call made between the clock reads `before` and `after`.
    pub(super) fn armed(before: u64, after: u64, delay: u64) -> Self {
        ExpiryWindow {
            earliest: before + delay,
            latest: after + delay,
        }
    }

    /// An expiry that `getitimer`, called between the clock reads `before`
    /// and `after`, said lies `left` ahead: the kernel truncates the time
    /// left to whole µs, so `left ..< left + 1 µs` after its own clock read.
    pub(super) fn left(before: u64, after: u64, left: u64) -> Self {
        ExpiryWindow {
            earliest: before + left,
            latest: after + left + 999,
        }
    }

    /// The part of this window that `other`, a window of the same expiry,
    /// agrees with. A window that does not overlap this one contradicts what
    /// placed it and narrows nothing: this one is kept.
    pub(super) fn narrowed(self, other: ExpiryWindow) -> Self {
        let earliest = self.earliest.max(other.earliest);
        let latest = self.latest.min(other.latest);
        if earliest <= latest {
            ExpiryWindow { earliest, latest }
        } else {
            self
        }
    }

    /// How much later than `earliest` the expiry may lie, ns.
    pub(super) fn width(&self) -> u64 {
        self.latest - self.earliest
    }
}

/// Narrows `window`, where `setitimer` put an itimer's first expiry, with
/// `getitimer` reads: until the window is 1 µs wide, [`ITIMER_PLACING_READS`]
/// reads were taken, or the expiry comes too close to read on without making
/// the first wake-up late (0 or 1 µs left place nothing).
pub(super) fn itimer_place_first_expiry(mut window: ExpiryWindow) -> ExpiryWindow {
    for _ in 0..ITIMER_PLACING_READS {
        if window.width() <= 1000 {
            break;
        }
        let (before, after, left, _) = itimer_read();
        if left < 2000 {
            break;
        }
        window = window.narrowed(ExpiryWindow::left(before, after, left));
        if left < 4 * (after - before) + 20_000 {
            break;
        }
    }
    window
}

/// The relative delay (whole µs, at least 1) of an itimer armed at `armed_at`
/// whose grid starts at `start`, and the grid points it skips because it was
/// armed after them.
pub(super) fn itimer_first_expiry(start: u64, armed_at: u64, interval: u64) -> (u64, u64) {
    let skipped = armed_at.saturating_sub(start).div_ceil(interval);
    let first = start + skipped * interval;
    let delay = (first.saturating_sub(armed_at) / 1000 * 1000).max(1000);
    (delay, skipped)
}

/// Where `getitimer` puts an itimer's next expiry after a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NextExpiry {
    /// Placed: within this window.
    Within(ExpiryWindow),
    /// Not placed (see [`itimer_remaining`]): at or before this moment.
    NoLaterThan(u64),
}

/// How many expiries of an itimer a wake-up for the expiry `intended`
/// accounts for, given where `getitimer` put the `next` one. Also whether
/// the count is certain.
///
/// The kernel's grid points lie `intended + k * interval` plus the same
/// phase, 0 to `slack` (the width of the first expiry's window): point `k`
/// somewhere in `intended + k * interval ..= + slack`.
///
/// Placed within a window, the next expiry is the grid point that can lie
/// there: exactly, when one can; the earliest, uncertain, when the window
/// reaches two (an interrupt between the clock reads that
/// `itimer_remaining` could not retry away), or when none can (the reads
/// contradict each other).
///
/// Unplaced, it is the first grid point after the moment the kernel
/// dequeued SIGALRM, which user space cannot see: after `intended`, and no
/// later than the moment given. With one grid point there it is that one.
/// With more (the thread was held about two intervals around the dequeue, or
/// a late timer interrupt left the expiry due without firing) the kernel
/// does not say which: the count is uncertain and the earliest point is
/// taken, so the next sample's latency may be overstated by whole intervals
/// but is never understated.
pub(super) fn itimer_expirations(
    intended: u64,
    slack: u64,
    interval: u64,
    next: NextExpiry,
) -> (u64, bool) {
    match next {
        NextExpiry::Within(window) => {
            // The first point whose latest place reaches the window, and
            // the last whose earliest place is not after it.
            let first = window
                .earliest
                .saturating_sub(intended + slack)
                .div_ceil(interval)
                .max(1);
            let last = window.latest.saturating_sub(intended) / interval;
            if first <= last {
                (first, first != last)
            } else {
                (last.max(1), true)
            }
        }
        NextExpiry::NoLaterThan(latest) => {
            // Grid points `intended + k * interval`, k >= 1, not after
            // `latest` (`intended` is the earliest the kernel's point can
            // be, so none of the kernel's candidates is left out).
            let candidates = latest.saturating_sub(intended) / interval;
            (1, candidates > 1)
        }
    }
}
