//! Tests of the wake sources' accounting: grids, kernel expiry counts, the
//! itimer's placement, RTC periods and names.

use super::grid::{Grid, KernelExpiries};
use super::itimer_placement::{itimer_expirations, itimer_first_expiry, ExpiryWindow, NextExpiry};
use super::rtc::rtc_rate;
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
