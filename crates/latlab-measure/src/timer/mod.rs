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

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use latlab_rt::clock::{monotonic_ns, sleep_until, to_timespec};

use crate::MeasureError;

/// The wake-up mechanism a measurement thread uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TimerKind {
    /// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`: cyclictest's default.
    ClockNanosleep,
    /// Relative `nanosleep`: latency = t2 - t1 - interval (the delayed-locking paper's loop).
    Nanosleep,
    /// `setitimer(ITIMER_REAL)` + SIGALRM (the KTAS paper's method). Process-wide: one thread only.
    Itimer,
    /// `timer_create` with a signal directed at the measurement thread.
    PosixTimer,
    /// `timerfd_create(CLOCK_MONOTONIC)` with an absolute first expiry.
    Timerfd,
    /// `/dev/rtc` periodic interrupts (2..8192 Hz, a power of two).
    Rtc,
}

impl TimerKind {
    /// Every timer kind, in documentation order.
    pub const ALL: [TimerKind; 6] = [
        TimerKind::ClockNanosleep,
        TimerKind::Nanosleep,
        TimerKind::Itimer,
        TimerKind::PosixTimer,
        TimerKind::Timerfd,
        TimerKind::Rtc,
    ];

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::ClockNanosleep => "clock-nanosleep",
            TimerKind::Nanosleep => "nanosleep",
            TimerKind::Itimer => "itimer",
            TimerKind::PosixTimer => "posix-timer",
            TimerKind::Timerfd => "timerfd",
            TimerKind::Rtc => "rtc",
        }
    }
}

impl std::str::FromStr for TimerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = TimerKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown timer {s:?} (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for TimerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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

/// The grid of a timer latlab arms itself (`clock-nanosleep`): the
/// next point to sleep until, moved past the wake-up when it came late.
#[derive(Debug, Clone, Copy)]
struct Grid {
    next: u64,
    interval: u64,
}

/// The expiries of a periodic kernel timer (`posix-timer`, `timerfd`, `rtc`,
/// `itimer`): `next` is the one the kernel has armed, and the kernel's own
/// expiration count of each wake-up moves it on.
#[derive(Debug, Clone, Copy)]
struct KernelExpiries {
    next: u64,
    interval: u64,
    /// `next` is the earliest the kernel can have armed, not known exactly.
    uncertain: bool,
}

impl KernelExpiries {
    /// Accounts a wake-up at `now` that the kernel reports as `expirations`
    /// expiries of the timer (1 plus its overruns, at least 1): the wake-up
    /// answers the armed expiry, the overruns are missed periods, and the
    /// kernel re-armed the timer `expirations` intervals after it.
    fn wake(&mut self, now: u64, expirations: u64) -> Wake {
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
    fn wake(&mut self, now: u64) -> Wake {
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

/// Blocks `signal` in the calling thread (and threads it creates later).
pub fn block_signal(signal: libc::c_int) {
    // SAFETY: sigset operations on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The signal posix-timer directs at measurement threads.
pub fn posix_timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 2
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

struct ClockNanosleep {
    grid: Grid,
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

struct Nanosleep {
    interval: u64,
    /// The run's start, until the first sleep: the first relative sleep
    /// begins one interval before it, so its intended wake-up is the start,
    /// as with the absolute timers.
    start: Option<u64>,
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

/// Waits for `signal` (blocked in the thread); `None` on EINTR.
fn wait_signal(signal: libc::c_int) -> Option<libc::siginfo_t> {
    // SAFETY: sigset operations on a local set; sigwaitinfo writes into info.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        let mut info: libc::siginfo_t = std::mem::zeroed();
        (libc::sigwaitinfo(&set, &mut info) == signal).then_some(info)
    }
}

/// The `si_overrun` of a POSIX timer's signal: the expiries the kernel
/// skipped when it re-armed the timer as the signal was taken.
fn si_overrun(info: &libc::siginfo_t) -> u64 {
    /// The `_timer` member of the kernel's `siginfo_t` union: pointer-aligned,
    /// as the `sigval` in it is a pointer.
    #[repr(C)]
    struct TimerFields {
        tid: libc::c_int,
        overrun: libc::c_int,
        value: *mut libc::c_void,
    }
    /// The head of the kernel's `siginfo_t`: three ints, then the union,
    /// which starts pointer-aligned (offset 16 on 64-bit, 12 on 32-bit) on
    /// every Linux architecture.
    #[repr(C)]
    struct TimerSiginfo {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        timer: TimerFields,
    }
    const _: () =
        assert!(std::mem::size_of::<TimerSiginfo>() <= std::mem::size_of::<libc::siginfo_t>());
    // SAFETY: siginfo_t is larger than this prefix of it and at least as aligned
    // (it holds pointers too); every field is plain data.
    let timer = unsafe { &*(info as *const libc::siginfo_t).cast::<TimerSiginfo>() };
    u64::try_from(timer.timer.overrun).unwrap_or(0)
}

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
struct Itimer {
    expiries: KernelExpiries,
    /// How much later than `expiries.next` the kernel's expiry may lie: the
    /// width of the first expiry's window, ns.
    phase_slack: u64,
    /// Grid points before the timer was armed, added to the first wake's missed.
    skipped: u64,
}

impl Itimer {
    fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
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

/// The shortest `itimer` interval whose expiries µs-resolution `getitimer`
/// reads place on the grid safely.
const ITIMER_MIN_INTERVAL_NS: u64 = 50_000;

/// At most this many `getitimer` reads place an itimer's first expiry.
const ITIMER_PLACING_READS: usize = 16;

/// Where the kernel holds an itimer's expiry: somewhere in `earliest ..=
/// latest`, CLOCK_MONOTONIC ns (the kernel's hrtimer clock, read at another
/// moment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ExpiryWindow {
    earliest: u64,
    latest: u64,
}

impl ExpiryWindow {
    /// An expiry `delay` after the kernel's clock read inside a `setitimer`
    /// call made between the clock reads `before` and `after`.
    fn armed(before: u64, after: u64, delay: u64) -> Self {
        ExpiryWindow {
            earliest: before + delay,
            latest: after + delay,
        }
    }

    /// An expiry that `getitimer`, called between the clock reads `before`
    /// and `after`, said lies `left` ahead: the kernel truncates the time
    /// left to whole µs, so `left ..< left + 1 µs` after its own clock read.
    fn left(before: u64, after: u64, left: u64) -> Self {
        ExpiryWindow {
            earliest: before + left,
            latest: after + left + 999,
        }
    }

    /// The part of this window that `other`, a window of the same expiry,
    /// agrees with. A window that does not overlap this one contradicts what
    /// placed it and narrows nothing: this one is kept.
    fn narrowed(self, other: ExpiryWindow) -> Self {
        let earliest = self.earliest.max(other.earliest);
        let latest = self.latest.min(other.latest);
        if earliest <= latest {
            ExpiryWindow { earliest, latest }
        } else {
            self
        }
    }

    /// How much later than `earliest` the expiry may lie, ns.
    fn width(&self) -> u64 {
        self.latest - self.earliest
    }
}

/// Narrows `window`, where `setitimer` put an itimer's first expiry, with
/// `getitimer` reads: until the window is 1 µs wide, [`ITIMER_PLACING_READS`]
/// reads were taken, or the expiry comes too close to read on without making
/// the first wake-up late (0 or 1 µs left place nothing).
fn itimer_place_first_expiry(mut window: ExpiryWindow) -> ExpiryWindow {
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
fn itimer_first_expiry(start: u64, armed_at: u64, interval: u64) -> (u64, u64) {
    let skipped = armed_at.saturating_sub(start).div_ceil(interval);
    let first = start + skipped * interval;
    let delay = (first.saturating_sub(armed_at) / 1000 * 1000).max(1000);
    (delay, skipped)
}

/// Where `getitimer` puts an itimer's next expiry after a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NextExpiry {
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
fn itimer_expirations(intended: u64, slack: u64, interval: u64, next: NextExpiry) -> (u64, bool) {
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

/// One read of the process's ITIMER_REAL: the clock before, the clock
/// after, the time `getitimer` said was left to the next expiry (ns, whole
/// µs), and whether SIGALRM was pending just after it.
fn itimer_read() -> (u64, u64, u64, bool) {
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
fn itimer_remaining(slack: u64) -> NextExpiry {
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
    fn account(&mut self, now: u64, next: NextExpiry) -> Wake {
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

/// `timer_create` with a signal directed at the thread, armed on the
/// absolute grid: the kernel re-arms it as the signal is dequeued and
/// reports the expiries it skipped in the signal's `si_overrun`, so every
/// intended time is an expiry the kernel armed, exactly.
struct PosixTimer {
    id: libc::timer_t,
    expiries: KernelExpiries,
}

impl PosixTimer {
    fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
        let signal = posix_timer_signal();
        block_signal(signal);
        // SAFETY: sigevent is plain data; gettid has no preconditions; the
        // timer id is written by the kernel.
        let id = unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = signal;
            event.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut id) != 0 {
                return Err(os_error("posix-timer", cpu, "timer_create"));
            }
            id
        };
        let spec = libc::itimerspec {
            it_interval: to_timespec(interval),
            it_value: to_timespec(start),
        };
        // SAFETY: id was created above; spec is valid.
        if unsafe { libc::timer_settime(id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) } != 0
        {
            let err = os_error("posix-timer", cpu, "timer_settime");
            unsafe { libc::timer_delete(id) };
            return Err(err);
        }
        Ok(PosixTimer {
            id,
            expiries: KernelExpiries {
                next: start,
                interval,
                uncertain: false,
            },
        })
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: the id is ours and deleted once.
        unsafe { libc::timer_delete(self.id) };
    }
}

impl WakeSource for PosixTimer {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let Some(info) = wait_signal(posix_timer_signal()) else {
            return Ok(None);
        };
        let now = monotonic_ns();
        Ok(Some(self.expiries.wake(now, 1 + si_overrun(&info))))
    }
}

/// `timerfd_create(CLOCK_MONOTONIC)` armed on the absolute grid: the
/// kernel re-arms it at each read and returns the number of expiries since
/// the last one, so every intended time is an expiry the kernel armed,
/// exactly.
struct Timerfd {
    fd: OwnedFd,
    cpu: usize,
    expiries: KernelExpiries,
}

impl Timerfd {
    fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
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

/// `/dev/rtc` periodic interrupts. No driver makes them in hardware since
/// Linux 2.6.38: the RTC core emulates them with a CLOCK_MONOTONIC hrtimer
/// (`rtc_pie_update_irq`), started one period (`NSEC_PER_SEC / rate`) after
/// `RTC_PIE_ON` and forwarded in its callback, and each read returns how
/// many periods passed since the last. So the intended times are a
/// monotonic grid whose phase lies between the clock reads around
/// `RTC_PIE_ON` (latlab takes the earlier one: at most that call's duration
/// early, never late), and the kernel's count moves it on.
struct Rtc {
    fd: OwnedFd,
    cpu: usize,
    expiries: KernelExpiries,
}

// ioctl numbers: libc::Ioctl is c_ulong on glibc and c_int on musl;
// RTC_IRQP_SET = _IOW('p', 0x0c, unsigned long) encodes sizeof(unsigned long).
const RTC_IRQP_SET: libc::Ioctl =
    0x4000_700c | ((std::mem::size_of::<libc::c_ulong>() as libc::Ioctl) << 16);
const RTC_PIE_ON: libc::Ioctl = 0x7005;
const RTC_PIE_OFF: libc::Ioctl = 0x7006;

/// The rate of `--interval` on the RTC (a power of two, 2..8192 Hz), and the
/// period the kernel's RTC core makes of it (`NSEC_PER_SEC / rate`, ns).
fn rtc_rate(interval: u64) -> Result<(u64, u64), MeasureError> {
    let hz = (1e9 / interval.max(1) as f64).round() as u64;
    if !(2..=8192).contains(&hz) || !hz.is_power_of_two() {
        return Err(MeasureError::Config(format!(
            "the rtc timer runs at 2..8192 Hz in powers of two; --interval {interval} ns is \
             {hz} Hz (try 1024 Hz = --interval 976562ns, or 8192 Hz = --interval 122070ns)"
        )));
    }
    Ok((hz, 1_000_000_000 / hz))
}

impl Rtc {
    fn new(cpu: usize, interval: u64, start: u64, device: &Path) -> Result<Self, MeasureError> {
        let (hz, period) = rtc_rate(interval)?;
        let file = std::fs::File::open(device).map_err(|source| MeasureError::NoRtc {
            path: PathBuf::from(device),
            source,
        })?;
        let fd = OwnedFd::from(file);
        // SAFETY: an RTC ioctl on an open RTC device with an integer argument.
        if unsafe { libc::ioctl(fd.as_raw_fd(), RTC_IRQP_SET, hz as libc::c_ulong) } != 0 {
            return Err(os_error("rtc", cpu, "RTC_IRQP_SET (raise max_user_freq?)"));
        }
        // Interrupts counted before this run (periodic interrupts left on by
        // another program) would shift every later sample: off, and drained.
        rtc_stop_and_drain(&fd);
        // The first interrupt comes one period after arming: arm one period
        // before the run's start, so the grid begins there as for the other
        // timers. The kernel's clock read lies inside the call, after this
        // one: intended times are at most the call's duration early. (Not
        // armed again when slow: switching the interrupts off
        // spins until a running callback is done, and under emulation that
        // livelocked a guest at 8192 Hz.)
        sleep_until(start.saturating_sub(period));
        let armed_at = monotonic_ns();
        // SAFETY: as above.
        if unsafe { libc::ioctl(fd.as_raw_fd(), RTC_PIE_ON, 0) } != 0 {
            return Err(os_error("rtc", cpu, "RTC_PIE_ON"));
        }
        Ok(Rtc {
            fd,
            cpu,
            expiries: KernelExpiries {
                next: armed_at + period,
                interval: period,
                uncertain: false,
            },
        })
    }
}

/// Switches an RTC's periodic interrupts off and drops the interrupts it
/// counted and nobody read.
fn rtc_stop_and_drain(fd: &OwnedFd) {
    // SAFETY: RTC_PIE_OFF, fcntl and one non-blocking read of one unsigned
    // long on our own open RTC device.
    unsafe {
        libc::ioctl(fd.as_raw_fd(), RTC_PIE_OFF, 0);
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        let mut stale: libc::c_ulong = 0;
        libc::read(
            fd.as_raw_fd(),
            (&mut stale as *mut libc::c_ulong).cast(),
            std::mem::size_of::<libc::c_ulong>(),
        );
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags);
    }
}

impl Drop for Rtc {
    fn drop(&mut self) {
        // Switching the interrupts off (here, or the close) spins until a
        // running callback returns. On PREEMPT_RT that callback runs in the
        // `ktimers/N` thread (SCHED_FIFO 1), which the woken measurement
        // thread may have preempted mid-callback: spinning at a real-time
        // priority above it would never let it finish (a guest hung so).
        // The measurement is over: leave real-time priority first.
        let _ = latlab_rt::sched::set_current_thread(latlab_rt::sched::Policy::Other, 0);
        // SAFETY: turning periodic interrupts off on our own fd.
        unsafe { libc::ioctl(self.fd.as_raw_fd(), RTC_PIE_OFF, 0) };
    }
}

impl WakeSource for Rtc {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let mut data: libc::c_ulong = 0;
        // SAFETY: the RTC read returns one unsigned long.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut data as *mut libc::c_ulong).cast(),
                std::mem::size_of::<libc::c_ulong>(),
            )
        };
        let now = monotonic_ns();
        if n < 0 {
            if interrupted() {
                return Ok(None);
            }
            return Err(os_error("rtc", self.cpu, "read"));
        }
        // Bits 8 and up: the periods since the last read.
        Ok(Some(self.expiries.wake(now, data as u64 >> 8)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_last_wake_up_counts_only_the_periods_of_the_run() {
        // Run ends at 1000; the wake-up for 900 comes at 1250: the periods at 1000 and
        // 1100 are after the run.
        let mut grid = Grid {
            next: 900,
            interval: 100,
        };
        let wake = grid.wake(1_250);
        assert_eq!(wake.missed, 3);
        assert_eq!(wake.missed_before(1_000, 100).missed, 0);
        // The same wake-up in a longer run: 1000 and 1100 were skipped inside it.
        assert_eq!(wake.missed_before(1_150, 100).missed, 2);
        assert_eq!(wake.missed_before(10_000, 100).missed, 3);
        // A grid point exactly at the end is not part of the run.
        assert_eq!(wake.missed_before(1_100, 100).missed, 1);
    }

    #[test]
    fn itimer_armed_late_starts_at_the_next_grid_point_and_counts_the_skipped() {
        // Armed in time: the first expiry is the start, nothing skipped.
        assert_eq!(
            itimer_first_expiry(10_000_000, 4_000_000, 1_000_000),
            (6_000_000, 0)
        );
        // Armed 5.5 periods late: the 6th grid point, 6 skipped.
        assert_eq!(
            itimer_first_expiry(10_000_000, 15_500_000, 1_000_000),
            (500_000, 6)
        );
        // Armed exactly on a grid point: that point is the first expiry (1 µs on).
        assert_eq!(
            itimer_first_expiry(10_000_000, 12_000_000, 1_000_000),
            (1_000, 2)
        );
    }

    #[test]
    fn kernel_expiries_follow_the_kernels_count_not_the_clock() {
        // The kernel's timer at 1000, 1100, ...: the wake-up for 1000 is taken
        // at 1095 (the kernel re-arms to 1100) but latlab reads its clock at
        // 1105, after 1100. The kernel counts one expiry: 1100 is still the
        // next one, not a missed period.
        let mut expiries = KernelExpiries {
            next: 1_000,
            interval: 100,
            uncertain: false,
        };
        let w = expiries.wake(1_105, 1);
        assert_eq!((w.intended, w.missed), (1_000, 0));
        // The 1100 expiry's signal is already pending: it is the next sample.
        let w = expiries.wake(1_110, 1);
        assert_eq!((w.intended, w.actual, w.missed), (1_100, 1_110, 0));
        // Three expiries in one wake-up: 1200 answered, 1300 and 1400 missed.
        let w = expiries.wake(1_450, 3);
        assert_eq!((w.intended, w.missed), (1_200, 2));
        assert_eq!(expiries.next, 1_500);
        // A count of 0 (never from the kernel) is taken as one expiry.
        let w = expiries.wake(1_501, 0);
        assert_eq!((w.intended, w.missed), (1_500, 0));
    }

    /// The kernel's next expiry placed by a getitimer read: `left` (whole
    /// µs) between the clock reads `before` and `after`.
    fn left(before: u64, after: u64, left: u64) -> NextExpiry {
        NextExpiry::Within(ExpiryWindow::left(before, after, left))
    }

    /// Not placed by getitimer: the next expiry 2 µs after `after` at the latest.
    fn unplaced(after: u64) -> NextExpiry {
        NextExpiry::NoLaterThan(after + 1999)
    }

    #[test]
    fn itimer_expirations_place_the_remaining_time_on_the_grid() {
        let us = 1_000;
        // Expiry at 1 ms, interval 100 µs, the kernel's phase known exactly;
        // woken at 1.010 ms, 89.6 µs left (truncated to 89 µs) when getitimer
        // ran between 1.0102 and 1.0106 ms: the next expiry is 1.1 ms, one
        // interval on.
        let at = |next| itimer_expirations(1_000 * us, 0, 100 * us, next);
        assert_eq!(at(left(1_010_200, 1_010_600, 89 * us)), (1, false));
        // Woken 250 µs late: 49 µs left means the next is 1.3 ms, three on.
        assert_eq!(at(left(1_250_100, 1_250_400, 49 * us)), (3, false));
        // 2 µs is still a place: 1.1 ms, read between 1.0975 and 1.0978 ms.
        assert_eq!(at(left(1_097_500, 1_097_800, 2 * us)), (1, false));
        // Nothing left: the next expiry (1.1 ms) fired between the dequeue and
        // getitimer (woken at 1.0999 ms, getitimer done at 1.1003 ms). Only
        // 1.1 ms lies between the expiry and getitimer: certain.
        assert_eq!(at(unplaced(1_100_300)), (1, false));
        // Due but not fired (a late timer interrupt), getitimer's 1 µs.
        assert_eq!(at(unplaced(1_100_900)), (1, false));
        // Nothing left at 1.2101 ms: 1.1 or 1.2 ms, depending on when the kernel
        // dequeued SIGALRM, which it does not tell. The earliest, flagged.
        assert_eq!(at(unplaced(1_210_100)), (1, true));
        // The count is never 0, even for a clock read before the expiry.
        assert_eq!(at(unplaced(990_500)), (1, false));
        // Reads that contradict the grid (no point can lie in 1.1205 to
        // 1.1816 ms): the earliest that can, flagged.
        assert_eq!(at(left(1_090_500, 1_150_600, 30 * us)), (1, true));
    }

    #[test]
    fn itimer_expirations_place_within_the_phase_the_arming_left_open() {
        let us = 1_000;
        // The kernel's grid 0-5 µs after latlab's intended times: 1.000 ms
        // stands for an expiry in 1.000..=1.005 ms.
        let at = |next| itimer_expirations(1_000 * us, 5 * us, 100 * us, next);
        // 90 µs left between 1.0102 and 1.0106 ms: the next expiry in 1.1002
        // to 1.1016 ms, where the first point (1.100-1.105 ms) lies.
        assert_eq!(at(left(1_010_200, 1_010_600, 90 * us)), (1, false));
        // An interrupt of 70 µs between the clock reads: 31 µs left puts the
        // next expiry in 1.101 to 1.172 ms, where only the first point can lie.
        assert_eq!(at(left(1_070_000, 1_140_000, 31 * us)), (1, false));
        // 110 µs between them: 1.095 to 1.206 ms reaches two points. The
        // earliest, flagged.
        assert_eq!(at(left(1_050_000, 1_160_000, 45 * us)), (1, true));
    }

    #[test]
    fn itimer_grid_is_where_getitimer_puts_it_after_a_slow_setitimer() {
        // armmp in the lab (32-bit ARM under QEMU, 1 ms interval): the clock
        // read before setitimer at 10.0000 ms, the kernel's own read inside
        // the call 697.3 µs later, the call back at 10.8000 ms; armed with 9
        // ms to go, so the first expiry is at 19.6973 ms. Taking 19.0000 ms
        // for it put every wake-up's getitimer one interval further on the
        // grid (1.6964 intervals rounded up) and each sample 302.7 µs before
        // the kernel's expiry: "early wake-ups" on nearly every sample.
        let us = 1_000;
        let armed = ExpiryWindow::armed(10_000 * us, 10_800 * us, 9_000 * us);
        assert_eq!((armed.earliest, armed.width()), (19_000 * us, 800 * us));
        // getitimer after arming (between 10.90000 and 10.90004 ms): 8797 µs
        // left (8797.28 truncated). The first expiry lies in 19.6970 to
        // 19.69804 ms.
        let first = armed.narrowed(ExpiryWindow::left(10_900_000, 10_900_040, 8_797 * us));
        assert_eq!(
            first,
            ExpiryWindow::left(10_900_000, 10_900_040, 8_797 * us)
        );
        assert!((first.earliest..=first.latest).contains(&19_697_300));
        // The wake-up for it, 50 µs late: getitimer says 949 µs to the next,
        // 20.6973 ms: one interval on, certain.
        let next = left(19_747_400, 19_747_460, 949 * us);
        assert_eq!(
            itimer_expirations(first.earliest, first.width(), 1_000 * us, next),
            (1, false)
        );
        // Woken 1.2 ms late, the kernel re-armed to 21.6973 ms: two on.
        let next = left(20_897_300, 20_897_340, 799 * us);
        assert_eq!(
            itimer_expirations(first.earliest, first.width(), 1_000 * us, next),
            (2, false)
        );
    }

    #[test]
    fn an_itimer_phase_no_read_narrowed_is_taken_from_the_next_placed_expiry() {
        // arm64 under a loaded QEMU: setitimer's clock reads 4.5 ms apart and
        // the thread held past the first expiry before its first getitimer,
        // so the phase stayed 4.5 ms wide and every wake-up's count was
        // uncertain, each sample overstated by up to 4.5 ms (p50 5.03 ms
        // against posix-timer's 1.10 ms in the same guest).
        let us = 1_000;
        let mut itimer = Itimer {
            expiries: KernelExpiries {
                next: 10_000 * us,
                interval: 1_000 * us,
                uncertain: false,
            },
            phase_slack: 4_500 * us,
            skipped: 0,
        };
        // The kernel's first expiry was 14.2 ms; woken at 14.3 ms, 899 µs
        // left: the next is 15.2 ms, which 11.2..=15.2 ms could all be.
        let w = itimer.account(14_300 * us, left(14_300_100, 14_300_400, 899 * us));
        assert_eq!(w.intended, 10_000 * us);
        assert_eq!(
            (itimer.expiries.next, itimer.phase_slack),
            (15_199_100, 1_299)
        );
        // From there the grid is the kernel's: the next wake-up is certain
        // and measured against 15.2 ms (less 0.9 µs), not 11 ms.
        let w = itimer.account(15_250 * us, left(15_250_100, 15_250_300, 949 * us));
        assert_eq!((w.intended, w.uncertain), (15_199_100, false));
        let w = itimer.account(16_250 * us, left(16_250_100, 16_250_300, 949 * us));
        assert_eq!((w.intended, w.uncertain, w.missed), (16_199_100, false, 0));
        // A phase already known better than the read is left alone.
        let before = (itimer.expiries.next, itimer.phase_slack);
        itimer.account(17_250 * us, left(17_100_000, 17_260_000, 939 * us));
        assert_eq!(before.1, itimer.phase_slack);
    }

    #[test]
    fn expiry_windows_narrow_to_what_every_read_agrees_on() {
        let w = ExpiryWindow {
            earliest: 1_000,
            latest: 2_000,
        };
        let r = ExpiryWindow {
            earliest: 1_500,
            latest: 2_500,
        };
        assert_eq!(
            w.narrowed(r),
            ExpiryWindow {
                earliest: 1_500,
                latest: 2_000
            }
        );
        // A read that does not overlap contradicts the window: ignored.
        let r = ExpiryWindow {
            earliest: 2_001,
            latest: 2_500,
        };
        assert_eq!(w.narrowed(r), w);
        // getitimer's truncation: 3 µs left read between 10 and 10.2 µs is
        // 13 µs to 14.199 µs.
        assert_eq!(
            ExpiryWindow::left(10_000, 10_200, 3_000),
            ExpiryWindow {
                earliest: 13_000,
                latest: 14_199
            }
        );
    }

    #[test]
    fn itimer_truncated_last_microseconds_are_not_taken_for_a_fired_expiry() {
        // A timer_truth failure (200 µs interval, hog and cyclictest on the
        // CPU): the wake-up for the expiry 34013.394743038 s (latlab's grid;
        // the kernel's lies 1432 ns later, within the 2 µs its arming left
        // open) ran at .395127, the SIGALRM dequeue at .395130 re-armed the
        // timer to .395144470 (skipping .394944470), the clock read was
        // .395142017, and getitimer ran after .395142470 and before
        // .395143038: the kernel had 1.4 to 2 µs left, which it truncates to
        // 1 µs, the value it also gives for an expiry that is due but has not
        // fired. Taking it for a fired expiry counted 1 (certain) and put the
        // next sample one interval early. Unplaced, the next expiry may be 1
        // or 2 grid points on.
        // Clock reads and left time of getitimer, in ns after 34013.394 s.
        let base = 34_013_394_000_000;
        let next_of_5206 = |next| itimer_expirations(base + 743_038, 2_000, 200_000, next);
        assert_eq!(next_of_5206(unplaced(base + 1_142_900)), (1, true));
        // Read again: 0 with SIGALRM not pending is less than 1 µs left, the
        // timer still armed: 2 grid points on, exactly.
        let read = left(base + 1_143_500, base + 1_143_900, 0);
        assert_eq!(next_of_5206(read), (2, false));
        // With 2 µs left the place is exact: 2 grid points on.
        let read = left(base + 1_142_100, base + 1_142_400, 2_000);
        assert_eq!(next_of_5206(read), (2, false));
    }

    #[test]
    fn itimer_refuses_intervals_its_grid_cannot_resolve() {
        for interval in [20_000, 100_500] {
            let err = Itimer::new(0, interval, 0).err().expect("refused");
            assert!(err.to_string().contains("50us or more"), "{err}");
        }
    }

    #[test]
    fn an_uncertain_itimer_expiry_flags_the_next_wake_up_only() {
        let mut expiries = KernelExpiries {
            next: 1_000,
            interval: 100,
            uncertain: false,
        };
        assert!(!expiries.wake(1_210, 1).uncertain);
        expiries.uncertain = true;
        let w = expiries.wake(1_215, 2);
        assert!(w.uncertain);
        assert_eq!((w.intended, w.missed), (1_100, 1));
        assert!(!expiries.wake(1_305, 1).uncertain);
    }

    #[test]
    fn grid_counts_missed_periods_and_moves_on() {
        let mut grid = Grid {
            next: 1_000,
            interval: 100,
        };
        assert_eq!(
            grid.wake(1_010),
            Wake {
                intended: 1_000,
                actual: 1_010,
                missed: 0,
                uncertain: false
            }
        );
        // Woke 350 late: the points at 1100+100=1200 and 1300 were skipped.
        let w = grid.wake(1_450);
        assert_eq!((w.intended, w.missed), (1_100, 3));
        assert_eq!(grid.next, 1_500);
        let w = grid.wake(1_501);
        assert_eq!((w.intended, w.missed), (1_500, 0));
    }

    #[test]
    fn rtc_periods_are_the_kernels_integer_division() {
        assert_eq!(rtc_rate(976_562).unwrap(), (1024, 976_562));
        assert_eq!(rtc_rate(122_070).unwrap(), (8192, 122_070));
        assert_eq!(rtc_rate(500_000_000).unwrap(), (2, 500_000_000));
        assert!(rtc_rate(1_000_000).is_err());
    }

    #[test]
    fn timer_names_parse() {
        for kind in TimerKind::ALL {
            assert_eq!(kind.name().parse::<TimerKind>().unwrap(), kind);
        }
        assert!("hpet"
            .parse::<TimerKind>()
            .unwrap_err()
            .contains("clock-nanosleep"));
    }

    #[test]
    fn missing_rtc_names_the_device() {
        let err = Rtc::new(0, 1_000_000, 0, Path::new("/nonexistent/rtc"))
            .err()
            .unwrap();
        assert!(err.to_string().contains("2..8192 Hz"), "{err}");
        let err = Rtc::new(0, 976_562, 0, Path::new("/nonexistent/rtc"))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("no RTC device") && text.contains("/nonexistent/rtc"),
            "{text}"
        );
    }
}
