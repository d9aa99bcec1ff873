//! The wake-up mechanisms a measurement thread can use, by name.

use serde::{Deserialize, Serialize};

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
