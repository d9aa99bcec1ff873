//! Tests of the emulator against hand-built event streams: timer and other
//! wake-ups, clocks, missing switches, the real-time filter and bounds.

use super::*;
use crate::records::tests::comm;
use crate::records::{EvType, RING};

fn settings() -> Settings {
    Settings {
        threshold_ns: 100_000,
        follow_forks: true,
        max_windows_per_sec: 50,
        baseline_every: 0,
        probe_reads: false,
        rt_only: false,
    }
}

fn at(ts: u64, cpu: u32, pid: i32, input: Input) -> Event {
    Event {
        ts,
        cpu,
        pid,
        input,
    }
}

fn switch(prev: i32, next: i32, name: &str) -> Input {
    Input::Switch {
        prev_pid: prev,
        prev_runnable: false,
        next_pid: next,
        next_prio: 9,
        next_comm: comm(name),
    }
}

fn waking(pid: i32) -> Input {
    Input::Waking {
        pid,
        prio: 9,
        target_cpu: 1,
        comm: comm("rt"),
    }
}

/// A timer wake-up: armed on CPU 0, fired there `irq` ns late, the task
/// running on CPU 1 `thread` ns after the expiry.
fn timer_wakeup(m: &mut BpfEmulator, expiry: u64, irq: u64, thread: u64) {
    m.feed(&at(
        expiry - 500_000,
        0,
        42,
        Input::HrtimerStart {
            timer: 0xa0,
            softexpires: expiry as i64,
        },
    ));
    let fired = expiry + irq;
    m.feed(&at(
        fired,
        0,
        0,
        Input::HrtimerEntry {
            timer: 0xa0,
            now: fired as i64 - 200,
            function: 0,
        },
    ));
    m.feed(&at(fired + 100, 0, 0, waking(42)));
    m.feed(&at(fired + 200, 0, 0, Input::HrtimerExit { timer: 0xa0 }));
    m.feed(&at(expiry + thread, 1, 0, switch(0, 42, "rt")));
}

#[test]
fn a_timer_wakeup_gives_irq_and_thread_latency_and_a_late_window() {
    let mut m = BpfEmulator::new(settings());
    m.watch(42);
    timer_wakeup(&mut m, 10_000_000, 3_000, 20_000);
    timer_wakeup(&mut m, 11_000_000, 4_000, 250_000);
    let h = crate::histograms::group(&m.histogram_counts());
    let thread = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Thread)]);
    let irq = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Irq)]);
    assert_eq!(thread.count(), 2);
    assert!(thread.max().unwrap().abs_diff(250_000) < 500);
    // Bucket bounds: within 0.2 % (latlab run's scheme). The interrupt's
    // moment is its clock read (`now`, 200 ns before the event), as the
    // BPF side takes it; the preemption latency is from there to the run.
    assert!(irq.max().unwrap().abs_diff(3_800) < 10);
    let preemption = crate::histograms::latency_split(&m.histogram_counts(), &[42])
        .unwrap()
        .preemption_latency;
    assert_eq!(preemption.summary.count, 2);
    assert!(preemption.summary.max.abs_diff(246_200) < 500);
    assert_eq!(m.counters().late, 1);
    let w = m.next_window().expect("the late one");
    assert!(m.next_window().is_none());
    assert_eq!(w.head.expires, 11_000_000);
    assert_eq!(w.head.latency(), 250_000);
    assert_eq!((w.head.cpu, w.head.timer_cpu), (1, 0));
    // Both CPUs' rings, merged in time order, the switch included.
    assert!(w.events.windows(2).all(|p| p[0].ts <= p[1].ts));
    assert_eq!(w.events.last().unwrap().ty, EvType::Switch);
    assert_eq!(w.horizon.len(), 2);
}

#[test]
fn other_wakeups_and_unwatched_tasks() {
    let mut m = BpfEmulator::new(settings());
    m.watch(42);
    m.feed(&at(1_000, 0, 7, waking(42)));
    m.feed(&at(6_000, 1, 0, switch(0, 42, "rt")));
    // Unwatched: nothing counted. Woken while running: nothing pending.
    m.feed(&at(7_000, 0, 7, waking(43)));
    m.feed(&at(8_000, 1, 0, switch(0, 43, "x")));
    m.feed(&at(9_000, 1, 42, waking(42)));
    m.feed(&at(9_500, 1, 42, switch(42, 42, "rt")));
    let h = crate::histograms::group(&m.histogram_counts());
    assert_eq!(h.len(), 1);
    let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
    assert_eq!(w.count(), 1);
    assert!(w.max().unwrap().abs_diff(5_000) < 10);
    assert_eq!(m.counters().late, 0);
}

fn preempted(prev: i32, next: i32) -> Input {
    Input::Switch {
        prev_pid: prev,
        prev_runnable: true,
        next_pid: next,
        next_prio: 120,
        next_comm: comm("hog"),
    }
}

#[test]
fn only_a_wake_up_from_sleep_is_measured() {
    let mut m = BpfEmulator::new(settings());
    m.watch(42);
    // Woken from CPU 1 while still running on CPU 0 (it never slept),
    // then preempted by a hog: the end of the preemption is no wake-up.
    m.feed(&at(1_000, 1, 7, waking(42)));
    m.feed(&at(500_000, 0, 42, preempted(42, 99)));
    m.feed(&at(900_000, 0, 99, preempted(99, 42)));
    // Woken while preempted (only its state changes): nothing either.
    m.feed(&at(1_000_000, 0, 42, preempted(42, 99)));
    m.feed(&at(1_001_000, 1, 7, waking(42)));
    m.feed(&at(1_400_000, 0, 99, preempted(99, 42)));
    // A sleep, its wake-up and the switch in: one sample of 3 us.
    m.feed(&at(2_000_000, 0, 42, switch(42, 0, "idle")));
    m.feed(&at(3_000_000, 1, 7, waking(42)));
    m.feed(&at(3_003_000, 0, 0, switch(0, 42, "rt")));
    let h = crate::histograms::group(&m.histogram_counts());
    let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
    assert_eq!(w.count(), 1);
    assert!(w.max().unwrap().abs_diff(3_000) < 10);
}

#[test]
fn a_timer_of_another_clock_or_rearmed_in_its_callback_is_not_timer_driven() {
    let mut m = BpfEmulator::new(settings());
    m.watch(42);
    // CLOCK_REALTIME (its `now` is far from the trace clock).
    m.feed(&at(
        100,
        0,
        0,
        Input::HrtimerStart {
            timer: 1,
            softexpires: 5_000,
        },
    ));
    m.feed(&at(
        1_000,
        0,
        0,
        Input::HrtimerEntry {
            timer: 1,
            now: 1_700_000_000_000_000_000,
            function: 0,
        },
    ));
    m.feed(&at(1_100, 0, 0, waking(42)));
    m.feed(&at(1_200, 0, 0, Input::HrtimerExit { timer: 1 }));
    m.feed(&at(2_000, 0, 0, switch(0, 42, "rt")));
    // The same timer firing again without a new start.
    m.feed(&at(
        3_000,
        0,
        0,
        Input::HrtimerEntry {
            timer: 1,
            now: 2_990,
            function: 0,
        },
    ));
    m.feed(&at(3_100, 0, 0, waking(42)));
    m.feed(&at(3_200, 0, 0, Input::HrtimerExit { timer: 1 }));
    m.feed(&at(4_000, 0, 0, switch(0, 42, "rt")));
    let h = crate::histograms::group(&m.histogram_counts());
    let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
    assert_eq!(w.count(), 2);
    assert!(!h.contains_key(&(42, crate::histograms::LatencyKind::Thread)));
}

#[test]
fn a_switch_the_trace_lacks_is_put_in_where_the_task_shows_running() {
    let mut m = BpfEmulator::new(settings());
    m.watch(42);
    m.feed(&at(1_000, 1, 7, switch(7, 0, "swapper/1")));
    m.feed(&at(2_000, 0, 0, waking(42)));
    // No switch idle -> 42 on CPU 1; 42's first event there at 9 000.
    m.feed(&at(
        9_000,
        1,
        42,
        Input::HrtimerSetup {
            timer: 5,
            clockid: 1,
            mode: 0,
        },
    ));
    assert_eq!(m.inferred_switches(), 1);
    let h = crate::histograms::group(&m.histogram_counts());
    let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
    assert_eq!(w.count(), 1);
    assert!(w.max().unwrap().abs_diff(7_000) < 10);
    // A recorded switch needs nothing put in.
    m.feed(&at(10_000, 1, 42, switch(42, 0, "swapper/1")));
    m.feed(&at(11_000, 1, 0, Input::IrqEntry { irq: 3 }));
    assert_eq!(m.inferred_switches(), 1);
}

#[test]
fn rt_only_measures_real_time_wake_ups_and_an_exit_leaves_the_set() {
    let mut m = BpfEmulator::new(Settings {
        rt_only: true,
        ..settings()
    });
    m.watch(42);
    let wake_up = |m: &mut BpfEmulator, t: u64, prio: i32| {
        m.feed(&at(t, 0, 0, waking(42)));
        m.feed(&at(
            t + 1_000,
            0,
            0,
            Input::Switch {
                prev_pid: 0,
                prev_runnable: false,
                next_pid: 42,
                next_prio: prio,
                next_comm: comm("loop"),
            },
        ));
        m.feed(&at(t + 2_000, 0, 42, switch(42, 0, "swapper/0")));
    };
    // SCHED_OTHER (prio 120): not measured; SCHED_FIFO 90 (prio 9) and
    // SCHED_DEADLINE (prio -1): measured.
    wake_up(&mut m, 1_000_000, 120);
    assert_eq!(crate::histograms::group(&m.histogram_counts()).len(), 0);
    wake_up(&mut m, 2_000_000, 9);
    wake_up(&mut m, 3_000_000, -1);
    let counted: u64 = m.histogram_counts().iter().map(|r| r.3).sum();
    assert_eq!(counted, 2);
    // Its end takes it out of the set; its counts stay until taken.
    m.feed(&at(4_000_000, 0, 42, Input::Exit { pid: 42 }));
    assert!(m.watched().is_empty());
    let rows = m.histogram_counts();
    assert_eq!(m.take_rows(&rows).len(), rows.len());
    assert!(m.histogram_counts().is_empty());
}

#[test]
fn forks_throttling_baseline_and_bounds() {
    let mut m = BpfEmulator::new(Settings {
        max_windows_per_sec: 2,
        baseline_every: 3,
        ..settings()
    });
    m.watch(42);
    m.feed(&at(
        10,
        0,
        42,
        Input::Fork {
            parent: 42,
            child: 50,
        },
    ));
    assert!(m.watched().contains(&50));
    // Five late wake-ups of 50 in one second: two windows, three throttled.
    for k in 0..5u64 {
        let t = 1_000_000 + k * 1_000_000;
        m.feed(&at(t, 0, 0, waking(50)));
        m.feed(&at(t + 200_000, 0, 0, switch(0, 50, "child")));
    }
    assert_eq!(m.counters().late, 5);
    assert_eq!(m.counters().throttled, 3);
    let mut n = 0;
    while m.next_window().is_some() {
        n += 1;
    }
    assert_eq!(n, 2);
    // In the next second, every third normal wake-up is a baseline window.
    for k in 0..6u64 {
        let t = 2_000_000_000 + k * 1_000_000;
        m.feed(&at(t, 0, 0, waking(50)));
        m.feed(&at(t + 1_000, 0, 0, switch(0, 50, "child")));
    }
    let w = m.next_window().expect("a baseline window");
    assert!(!w.head.late);
    // The ring keeps the newest RING events.
    for k in 0..(RING as u64 + 5) {
        m.feed(&at(3_000_000_000 + k, 0, 0, Input::IrqEntry { irq: 11 }));
    }
    assert_eq!(m.cpus[0].ring.len(), RING);
    m.unwatch(50);
    assert!(!m.watched().contains(&50));
}
