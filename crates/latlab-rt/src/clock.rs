//! CLOCK_MONOTONIC in nanoseconds: the one time line of measurement threads
//! and (with `trace_clock=mono`) of kernel traces.

/// Current CLOCK_MONOTONIC time in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = zeroed_timespec();
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time the calling thread has consumed (`CLOCK_THREAD_CPUTIME_ID`), in
/// nanoseconds. Time the thread spends preempted or blocked does not advance it.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    let mut ts = zeroed_timespec();
    // SAFETY: ts is a valid timespec; the clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Converts nanoseconds to a `timespec`.
///
/// Portable across C libraries: `tv_sec` takes whatever width the target's
/// `time_t` has (64 bits on every target `make dist` builds, 32-bit ARM
/// included), and the struct is built from zeroes because 32-bit musl with
/// 64-bit time has a private padding field a struct literal cannot name.
#[inline]
pub fn to_timespec(ns: u64) -> libc::timespec {
    let mut ts = zeroed_timespec();
    ts.tv_sec = (ns / 1_000_000_000) as _;
    ts.tv_nsec = (ns % 1_000_000_000) as _;
    ts
}

/// A `timespec` of zero, whatever private fields the target's C library adds.
#[inline]
pub fn zeroed_timespec() -> libc::timespec {
    // SAFETY: timespec is plain integers; all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

/// One absolute `clock_nanosleep` on CLOCK_MONOTONIC until `deadline_ns`:
/// 0 when the deadline came (or had passed), else the error number (EINTR
/// when a signal handler ran first).
pub fn nanosleep_until(deadline_ns: u64) -> i32 {
    let ts = to_timespec(deadline_ns);
    // SAFETY: a valid timespec; no remainder pointer with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns` (returns at
/// once if it has passed). A signal resumes the sleep, unless it asked the
/// process to stop ([`crate::stop::requested`]): then it returns early so
/// that the caller's loop can wind down.
pub fn sleep_until(deadline_ns: u64) {
    loop {
        let rc = nanosleep_until(deadline_ns);
        if rc != libc::EINTR || crate::stop::requested() {
            return;
        }
    }
}

/// Current CLOCK_REALTIME as seconds since the Unix epoch.
pub fn unix_time_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Formats seconds since the Unix epoch as UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(unix_s: f64) -> String {
    let (date, time) = utc_parts(unix_s as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        date.0, date.1, date.2, time.0, time.1, time.2
    )
}

/// Formats seconds since the Unix epoch as a file-name-safe stamp `YYYYmmdd-HHMMSS`.
pub fn format_stamp(unix_s: f64) -> String {
    let (date, time) = utc_parts(unix_s as i64);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        date.0, date.1, date.2, time.0, time.1, time.2
    )
}

fn utc_parts(secs: i64) -> ((i64, u32, u32), (u32, u32, u32)) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400) as u32;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    ((year, month, day), (rem / 3600, rem / 60 % 60, rem % 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleep_until_a_deadline_ends_at_it_and_a_past_one_at_once() {
        let deadline = monotonic_ns() + 2_000_000;
        assert_eq!(nanosleep_until(deadline), 0);
        assert!(monotonic_ns() >= deadline);
        let before = monotonic_ns();
        assert_eq!(nanosleep_until(before - 1_000_000_000), 0);
        assert!(monotonic_ns() - before < 1_000_000_000);
    }

    #[test]
    fn utc_formatting_matches_known_dates() {
        assert_eq!(format_utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400.0), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_795_312_479.0), "2026-11-22T01:54:39Z");
        assert_eq!(format_stamp(1_795_312_479.0), "20261122-015439");
    }

    #[test]
    fn sleep_until_resumes_after_a_signal_that_does_not_ask_to_stop() {
        extern "C" fn ignore(_: libc::c_int) {}
        // SAFETY: the handler does nothing.
        unsafe { crate::signal::set_handler(libc::SIGUSR2, ignore, 0) }.unwrap();
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let interrupter = std::thread::spawn(move || {
            for _ in 0..5 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                // SAFETY: signalling a thread that is alive (it joins us below).
                unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR2) };
            }
        });
        let start = monotonic_ns();
        sleep_until(start + 200_000_000);
        let slept = monotonic_ns() - start;
        interrupter.join().unwrap();
        assert!(slept >= 200_000_000, "returned after {slept} ns");
    }

    #[test]
    fn thread_cpu_time_advances_only_while_running() {
        let start = thread_cpu_ns();
        let wall = monotonic_ns();
        while monotonic_ns() - wall < 20_000_000 {
            std::hint::spin_loop();
        }
        let spun = thread_cpu_ns() - start;
        assert!(spun > 0);
        let before_sleep = thread_cpu_ns();
        sleep_until(monotonic_ns() + 50_000_000);
        assert!(thread_cpu_ns() - before_sleep < 50_000_000);
    }

    #[test]
    fn past_deadlines_return_at_once() {
        let start = monotonic_ns();
        sleep_until(start.saturating_sub(1_000_000));
        sleep_until(0);
        assert!(monotonic_ns() - start < 1_000_000_000);
    }

    #[test]
    fn timespec_round_trip() {
        let ts = to_timespec(3_000_000_123);
        assert_eq!((ts.tv_sec, ts.tv_nsec), (3, 123));
    }
}
