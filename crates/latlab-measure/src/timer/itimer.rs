//! `itimer`: `setitimer(ITIMER_REAL)` and SIGALRM, its expiries placed on
//! the kernel's grid by `getitimer` reads.

use latlab_rt::clock::monotonic_ns;

use super::grid::KernelExpiries;
use super::itimer_placement::{
    itimer_expirations, itimer_first_expiry, itimer_place_first_expiry, ExpiryWindow, NextExpiry,
    ITIMER_MIN_INTERVAL_NS,
};
use super::signal::{block_signal, wait_signal};
use super::{os_error, Wake, WakeSource};
use crate::MeasureError;

/// `setitimer(ITIMER_REAL)` + SIGALRM. The kernel re-arms the timer when
/// SIGALRM is dequeued and reports no overruns, so after each wake-up latlab
/// reads the time left to the next expiry (`getitimer`, in µs) and places it
/// on the timer's grid.
///
/// That grid is the kernel's: its first expiry plus whole intervals. The
/// first expiry is relative to the kernel's own clock read inside
/// `setitimer`, which a slow call (an interrupt, a preemption, an emulated
/// CPU: 0.4-0.7 ms in the lab's 32-bit ARM guest) puts well after any clock
/// read of latlab's before the call. So latlab places it as it places the
/// later ones: `getitimer` right after arming, and the window of times the
/// call and every read agree on ([`ExpiryWindow`]). Intended times are that
/// window's earliest end (latencies overstated by at most its width, never
/// understated), and each wake-up counts the kernel's grid points that fit
/// between that width and what `getitimer` says ([`itimer_expirations`]).
pub(super) struct Itimer {
    pub(super) expiries: KernelExpiries,
    /// How much later than `expiries.next` the kernel's expiry may lie: the
    /// width of the first expiry's window, ns.
    pub(super) phase_slack: u64,
    /// Grid points before the timer was armed, added to the first wake's missed.
    pub(super) skipped: u64,
}

impl Itimer {
    pub(super) fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
        block_signal(libc::SIGALRM);
        let timeval = |ns: u64| libc::timeval {
            // `as _`: the target's widths (libc's musl aliases are deprecated).
            tv_sec: (ns / 1_000_000_000) as _,
            tv_usec: ((ns % 1_000_000_000) / 1000) as _,
        };
        if interval % 1000 != 0 || interval < ITIMER_MIN_INTERVAL_NS {
            return Err(MeasureError::Config(
                "the itimer timer counts in microseconds and places each expiry from getitimer's \
                 remaining time: choose an --interval that is a whole number of microseconds, \
                 50us or more"
                    .into(),
            ));
        }
        // A thread that arms after `start` (it ran late) starts at the next
        // grid point and counts the ones it skipped as missed, as the
        // absolute timers do.
        let armed_at = monotonic_ns();
        let (delay, skipped) = itimer_first_expiry(start, armed_at, interval);
        let value = libc::itimerval {
            it_interval: timeval(interval),
            it_value: timeval(delay),
        };
        // SAFETY: valid itimerval.
        if unsafe { libc::setitimer(libc::ITIMER_REAL, &value, std::ptr::null_mut()) } != 0 {
            return Err(os_error("itimer", cpu, "setitimer"));
        }
        let armed_by = monotonic_ns();
        let first = itimer_place_first_expiry(ExpiryWindow::armed(armed_at, armed_by, delay));
        Ok(Itimer {
            expiries: KernelExpiries {
                next: first.earliest,
                interval,
                uncertain: false,
            },
            phase_slack: first.width(),
            skipped,
        })
    }
}

/// One read of the process's ITIMER_REAL: the clock before, the clock
/// after, the time `getitimer` said was left to the next expiry (ns, whole
/// µs), and whether SIGALRM was pending just after it.
pub(super) fn itimer_read() -> (u64, u64, u64, bool) {
    // SAFETY: an itimerval and a sigset_t are plain data; getitimer and
    // sigpending write into them.
    let mut value: libc::itimerval = unsafe { std::mem::zeroed() };
    let mut pending: libc::sigset_t = unsafe { std::mem::zeroed() };
    let before = monotonic_ns();
    // SAFETY: as above.
    let alarm_pending = unsafe {
        libc::getitimer(libc::ITIMER_REAL, &mut value);
        libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, libc::SIGALRM) == 1
    };
    let after = monotonic_ns();
    let ns = value.it_value.tv_sec as u64 * 1_000_000_000 + value.it_value.tv_usec as u64 * 1000;
    (before, after, ns, alarm_pending)
}

/// Where the next expiry of the process's ITIMER_REAL lies, from `getitimer`
/// read between two clock reads no more than `slack` apart if that can be
/// had in a few tries (an interrupt or a host stall between them would blur
/// where the kernel read its clock).
///
/// `getitimer` gives 1 µs both for 1 to 2 µs left and for an expiry that is
/// due but has not fired (a late timer interrupt, up to milliseconds in a
/// QEMU guest), and 0 both for less than 1 µs left and for an expiry that
/// has fired (SIGALRM pending: the kernel re-arms the timer only when it is
/// dequeued). For those it is read again for a few µs: 0 while SIGALRM is
/// not pending is the timer still armed with less than 1 µs left, which
/// places it; SIGALRM pending first, or no answer in time, leaves it
/// unplaced: no later than 2 µs after the first read.
pub(super) fn itimer_remaining(slack: u64) -> NextExpiry {
    let mut tries = 0;
    let (before, after, ns, alarm_pending) = loop {
        let read = itimer_read();
        tries += 1;
        if read.1 - read.0 <= slack || tries == 10 {
            break read;
        }
    };
    if ns >= 2000 || (ns == 0 && !alarm_pending) {
        return NextExpiry::Within(ExpiryWindow::left(before, after, ns));
    }
    // A next expiry 1-2 µs ahead has passed 3 µs after the read.
    while monotonic_ns() < after + 3000 {
        let (b, a, ns, alarm_pending) = itimer_read();
        if alarm_pending {
            break;
        }
        if ns == 0 && a - b <= slack {
            return NextExpiry::Within(ExpiryWindow::left(b, a, 0));
        }
    }
    NextExpiry::NoLaterThan(after + 1999)
}

impl Drop for Itimer {
    fn drop(&mut self) {
        // SAFETY: a zeroed itimerval disarms the timer.
        unsafe {
            let off: libc::itimerval = std::mem::zeroed();
            libc::setitimer(libc::ITIMER_REAL, &off, std::ptr::null_mut());
        }
    }
}

impl WakeSource for Itimer {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        if wait_signal(libc::SIGALRM).is_none() {
            return Ok(None);
        }
        let now = monotonic_ns();
        let next = itimer_remaining(self.expiries.interval / 8);
        Ok(Some(self.account(now, next)))
    }
}

impl Itimer {
    /// Accounts a wake-up at `now` after which `getitimer` put the next
    /// expiry at `next`.
    ///
    /// When the grid's phase is known less well than that window (no read
    /// could narrow the first expiry's: the thread was held past it before
    /// its first `getitimer`), the window is where the next expiry is, and
    /// the grid moves there: only this wake-up's count stays uncertain,
    /// instead of every later one overstated by up to the phase's width.
    pub(super) fn account(&mut self, now: u64, next: NextExpiry) -> Wake {
        let (expirations, uncertain) = itimer_expirations(
            self.expiries.next,
            self.phase_slack,
            self.expiries.interval,
            next,
        );
        let mut wake = self.expiries.wake(now, expirations);
        self.expiries.uncertain = uncertain;
        if let NextExpiry::Within(window) = next {
            if uncertain && window.width() < self.phase_slack && window.earliest > wake.intended {
                self.expiries.next = window.earliest;
                self.expiries.uncertain = false;
                self.phase_slack = window.width();
            }
        }
        wake.missed += std::mem::take(&mut self.skipped);
        wake
    }
}
