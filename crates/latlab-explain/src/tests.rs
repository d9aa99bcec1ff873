//! Synthetic event sequences with a known answer for every cause category.

use crate::model::{Kind, Names, Rec};
use crate::{explain_with, Cause, Options, Records, Report, Result, Silence, Threshold};

/// `crate::explain` (one pass), checked against the two-pass reference:
/// every test below (and in `preempt_rt_tests`) also proves the one-pass windows are
/// identical.
pub(crate) fn explain(source: &Records, names: Names, opts: &Options) -> Result<Report> {
    let one = explain_with(source, names.clone(), opts, true)?;
    let two = explain_with(source, names, opts, false)?;
    assert_eq!(one, two, "one pass and two passes disagree");
    Ok(one)
}

/// A `sched_switch` from `prev` (pid, comm, still runnable) to `next`
/// (pid, comm, priority).
pub(crate) fn switch_kind(prev: (i32, u32, bool), next: (i32, u32, i32)) -> Kind {
    let ((prev_pid, prev_comm, prev_runnable), (next_pid, next_comm, next_prio)) = (prev, next);
    Kind::Switch {
        prev_pid,
        prev_runnable,
        next_pid,
        next_prio,
        next_comm,
        prev_comm,
    }
}

const ME: i32 = 42;
const OTHER: i32 = 7;
const PERIOD: u64 = 1_000_000;

/// Builds a trace of a task (pid 42, "rt") on CPU 0 sleeping on hrtimer 1
/// every 1 ms, with a normal task (pid 7, "hog") as the other runner.
struct Builder {
    names: Names,
    recs: Vec<Rec>,
    me: &'static str,
}

impl Builder {
    fn new() -> Self {
        let mut b = Builder {
            names: Names::new(),
            recs: Vec::new(),
            me: "rt",
        };
        b.switch(0, 0, ME, OTHER, 120);
        b
    }

    fn ev(&mut self, ts: u64, cpu: u32, kind: Kind, name: &str) {
        let name = self.names.intern(name);
        self.recs.push(Rec {
            ts,
            cpu,
            pid: -1,
            name,
            kind,
        });
    }

    fn comm(&mut self, pid: i32) -> u32 {
        let n = match pid {
            0 => "swapper/0".to_string(),
            ME => self.me.to_string(),
            OTHER => "hog".to_string(),
            100..200 => "dd".to_string(),
            p => format!("task{p}"),
        };
        self.names.intern(&n)
    }

    fn switch(&mut self, ts: u64, cpu: u32, prev: i32, next: i32, next_prio: i32) {
        let (prev_comm, next_comm) = (self.comm(prev), self.comm(next));
        self.names.set_comm(prev, prev_comm);
        self.names.set_comm(next, next_comm);
        let kind = switch_kind((prev, prev_comm, prev != ME), (next, next_comm, next_prio));
        self.ev(ts, cpu, kind, "sched_switch");
    }

    /// Period `k`: timer armed, fires `irq_delay` late, wakes the task at
    /// +1 us after the interrupt, exits at +2 us; `between` adds events
    /// after the interrupt; the task runs at `run` (absolute) and sleeps 5
    /// us later, returning the CPU to `back_to`.
    fn period(
        &mut self,
        k: u64,
        irq_delay: u64,
        between: impl FnOnce(&mut Self, u64),
        run: Option<u64>,
        back_to: i32,
    ) -> u64 {
        let t = k * PERIOD;
        self.timer_start(t - 900_000, 1, t);
        let x = t + irq_delay;
        self.timer_entry(x, 1);
        self.waking(x + 1_000, 0);
        self.timer_exit(x + 2_000, 1);
        between(self, x + 2_000);
        let run = run.unwrap_or(x + 3_000);
        let cur = self.current(0);
        self.switch(run, 0, cur, ME, 9);
        self.switch(run + 5_000, 0, ME, back_to, 120);
        run - t
    }

    /// Timer `timer` armed at `ts` on CPU 0 to expire at `expires`.
    fn timer_start(&mut self, ts: u64, timer: u64, expires: u64) {
        self.ev(
            ts,
            0,
            Kind::HrtimerStart {
                timer,
                soft: expires,
                expires,
            },
            "hrtimer_start",
        );
    }

    /// Timer `timer`'s callback entered at `ts` on CPU 0.
    fn timer_entry(&mut self, ts: u64, timer: u64) {
        self.ev(
            ts,
            0,
            Kind::HrtimerExpireEntry {
                timer,
                now: Some(ts),
            },
            "hrtimer_expire_entry",
        );
    }

    /// Timer `timer`'s callback left at `ts` on CPU 0.
    fn timer_exit(&mut self, ts: u64, timer: u64) {
        self.ev(
            ts,
            0,
            Kind::HrtimerExpireExit { timer },
            "hrtimer_expire_exit",
        );
    }

    /// The task woken at `ts` from CPU 0, to run on `target_cpu`.
    fn waking(&mut self, ts: u64, target_cpu: i32) {
        self.ev(
            ts,
            0,
            Kind::Wake {
                pid: ME,
                target_cpu,
                waking: true,
            },
            "sched_waking",
        );
    }

    fn current(&self, cpu: u32) -> i32 {
        self.recs
            .iter()
            .rev()
            .find_map(|r| match r.kind {
                Kind::Switch { next_pid, .. } if r.cpu == cpu => Some(next_pid),
                _ => None,
            })
            .unwrap_or(-1)
    }

    /// Ten normal periods (latency 3 us) then the special one as period 11.
    fn normal_then(
        mut self,
        irq_delay: u64,
        between: impl FnOnce(&mut Self, u64),
        run: Option<u64>,
        fill_gap: bool,
    ) -> (Report, u64) {
        for k in 1..=10 {
            self.period(k, 0, |_, _| {}, None, OTHER);
            if fill_gap {
                // The hog logs something between periods.
                self.ev(k * PERIOD + 500_000, 0, Kind::Other, "sys_enter");
            }
        }
        let lat = self.period(11, irq_delay, between, run, OTHER);
        let opts = Options {
            threshold: Threshold::Ns(10_000),
            ..Options::default()
        };
        let report = explain(&Records::from(self.recs), self.names, &opts).unwrap();
        (report, lat)
    }
}

fn check(report: &Report, lat: u64) -> &crate::WindowReport {
    assert_eq!(report.periods, 11, "{report:#?}");
    assert_eq!(report.late, 1);
    let w = &report.windows[0];
    assert_eq!(w.latency_ns, lat);
    let sum: u64 = w.parts.iter().map(|p| p.ns).sum();
    assert_eq!(
        sum, lat,
        "decomposition must add up to the ns: {:#?}",
        w.parts
    );
    w
}

fn ns_of(w: &crate::WindowReport, f: impl Fn(&Cause) -> bool) -> u64 {
    w.parts.iter().filter(|p| f(&p.cause)).map(|p| p.ns).sum()
}

#[test]
fn softirq_between_wakeup_and_switch_is_named_by_vector() {
    let (r, lat) = Builder::new().normal_then(
        0,
        |b, t| {
            b.ev(t + 100, 0, Kind::SoftirqEntry { vec: 3 }, "softirq_entry");
            b.ev(t + 80_100, 0, Kind::SoftirqExit { vec: 3 }, "softirq_exit");
            b.ev(
                t + 80_200,
                0,
                Kind::SoftirqEntry { vec: 2 },
                "softirq_entry",
            );
            b.ev(t + 90_200, 0, Kind::SoftirqExit { vec: 2 }, "softirq_exit");
        },
        Some(11 * PERIOD + 95_000),
        false,
    );
    let w = check(&r, lat);
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::Softirq { vector } if vector == "NET_RX")
        ),
        80_000
    );
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::Softirq { vector } if vector == "NET_TX")
        ),
        10_000
    );
    assert_eq!(
        r.causes[0].cause,
        Cause::Softirq {
            vector: "NET_RX".into()
        }
    );
    assert!(r.causes[0].recommendation.contains("threaded NAPI"));
    assert_eq!(r.causes[0].late_windows, 1);
    assert_eq!(r.causes[0].normal_windows, 0);
    // Table 2: softirq_entry only in the late window.
    let row = r
        .table2
        .iter()
        .find(|e| e.event == "softirq_entry")
        .unwrap();
    assert_eq!((row.normal, row.late), (0, 2));
}

#[test]
fn silent_timer_interrupt_delay_is_reported_as_such() {
    // Nothing logged on the CPU between expiry and the interrupt.
    let (r, lat) = Builder::new().normal_then(300_000, |_, _| {}, None, false);
    let w = check(&r, lat);
    assert_eq!(w.timer_irq_delay_ns, Some(300_000));
    assert_eq!(ns_of(w, |c| matches!(c, Cause::SilentGap { .. })), 300_000);
    assert_eq!(r.causes[0].cause.category(), "silent_gap");
    assert!(r.causes[0].recommendation.contains("pin the vCPUs"));
}

#[test]
fn steal_time_is_given_as_evidence_for_silent_gaps() {
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    b.period(11, 300_000, |_, _| {}, None, OTHER);
    let opts = Options {
        threshold: Threshold::Ns(10_000),
        steal_ns: vec![(0, 12_500_000), (1, 0)],
        ..Options::default()
    };
    let r = explain(&Records::from(b.recs), b.names, &opts).unwrap();
    let gap = &r.causes[0];
    assert_eq!(gap.cause.category(), "silent_gap");
    assert!(
        gap.recommendation.contains("stole cpu0 12.5 ms"),
        "{}",
        gap.recommendation
    );
    // The steal time is kept as evidence (the text shows it).
    assert_eq!(r.steal_ns, vec![(0, 12_500_000), (1, 0)]);
}

#[test]
fn timer_irq_delay_with_events_names_the_task() {
    // The hog logs an event inside the gap, so the CPU was not silent.
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    b.ev(11 * PERIOD + 50_000, 0, Kind::Other, "mm_page_alloc");
    let lat = b.period(11, 200_000, |_, _| {}, None, OTHER);
    let opts = Options {
        threshold: Threshold::Ns(10_000),
        ..Options::default()
    };
    let r = explain(&Records::from(b.recs), b.names, &opts).unwrap();
    let w = check(&r, lat);
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::TimerIrqDelay { task } if task == "hog:7")
        ),
        200_000
    );
    let top = &r.causes[0];
    assert_eq!(top.related_events[0].0, "mm_page_alloc");
    assert!(top.recommendation.contains("mlock"));
}

#[test]
fn irq_handler_before_the_wakeup_is_named() {
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    let t = 11 * PERIOD;
    let eth = b.names.intern("eth0");
    b.ev(
        t - 10_000,
        0,
        Kind::IrqEntry { irq: 30, name: eth },
        "irq_handler_entry",
    );
    b.ev(t + 60_000, 0, Kind::IrqExit { irq: 30 }, "irq_handler_exit");
    let lat = b.period(11, 61_000, |_, _| {}, None, OTHER);
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::IrqHandler { name } if name == "eth0")
        ),
        60_000
    );
    // After the handler: 1 us with interrupts still off in hog.
    assert_eq!(
        ns_of(w, |c| matches!(c, Cause::TimerIrqDelay { .. })),
        1_000
    );
    // Inside the interrupt: 1 us to the wake-up, 1 us more in the callback.
    assert_eq!(ns_of(w, |c| *c == Cause::HrtimerInterrupt), 2_000);
}

#[test]
fn other_rt_task_that_ran_first_is_named_with_priority() {
    let (r, lat) = Builder::new().normal_then(
        0,
        |b, t| {
            // An RT task (pid 99, prio 1) takes the CPU before ours.
            b.switch(t + 1_000, 0, OTHER, 99, 1);
            b.switch(t + 51_000, 0, 99, OTHER, 120);
        },
        Some(11 * PERIOD + 55_000),
        false,
    );
    let w = check(&r, lat);
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::OtherTask { task, prio: 1, .. } if task == "task99:99")
        ),
        50_000
    );
    assert!(r.causes[0].description.contains("real-time task task99:99"));
}

#[test]
fn current_task_holding_the_cpu_is_non_preemptible_kernel() {
    let (r, lat) = Builder::new().normal_then(
        0,
        |b, t| {
            b.ev(t + 10_000, 0, Kind::Other, "mm_page_alloc");
        },
        Some(11 * PERIOD + 120_000),
        false,
    );
    let w = check(&r, lat);
    // From the wake-up (+1 us) to the switch, minus the 1 us still in the
    // hrtimer callback: hog kept the CPU.
    assert_eq!(
        ns_of(
            w,
            |c| matches!(c, Cause::NonPreemptibleKernel { task } if task == "hog:7")
        ),
        120_000 - 2_000
    );
    assert_eq!(r.causes[0].cause.category(), "non_preemptible_kernel");
    assert!(r.causes[0].recommendation.contains("preempt=full"));
    // Baseline: normal windows have 1 us of it each, subtracted in the excess.
    assert_eq!(r.causes[0].mean_normal_ns, 1_000);
    assert_eq!(r.causes[0].excess_ns, 118_000 - 1_000);
}

/// Ten normal periods, then the CPU goes idle before period 11.
fn idle_before_period_11() -> Builder {
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    b.switch(11 * PERIOD - 100_000, 0, OTHER, 0, 120);
    b
}

/// `explain` with a 10 us threshold.
fn explain_over_10us(b: Builder) -> Report {
    explain_at(b, Threshold::Ns(10_000))
}

/// `explain` of `b`'s trace with `threshold` and the default options.
fn explain_at(b: Builder, threshold: Threshold) -> Report {
    let opts = Options {
        threshold,
        ..Options::default()
    };
    explain(&Records::from(b.recs), b.names, &opts).unwrap()
}

#[test]
fn a_long_silence_of_an_idle_cpu_after_the_wake_up_is_a_silent_gap() {
    // Woken on time, the idle CPU logs nothing for 3 ms before it
    // switches to the task.
    let mut b = idle_before_period_11();
    let lat = b.period(11, 0, |_, _| {}, Some(11 * PERIOD + 3_002_000), 0);
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    let silent = ns_of(
        w,
        |c| matches!(c, Cause::SilentGap { task, within: Silence::InIdle } if task.ends_with(":0")),
    );
    assert_eq!(silent, 3_000_000, "{:?}", w.parts);
    assert_eq!(r.causes[0].cause.category(), "silent_gap");
    assert!(
        r.causes[0].description.contains("after the wake-up, idle"),
        "{}",
        r.causes[0].description
    );
}

#[test]
fn idle_cpu_is_idle_exit() {
    // The interrupt comes 40 us late to the idle CPU.
    let mut b = idle_before_period_11();
    let lat = b.period(11, 40_000, |_, _| {}, None, 0);
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    // 40 us before the interrupt + 1 us after the callback, idle both times.
    assert_eq!(ns_of(w, |c| *c == Cause::IdleExit), 41_000);
    assert_eq!(r.causes[0].cause, Cause::IdleExit);
    assert!(r.causes[0].recommendation.contains("cpu_dma_latency"));
}

#[test]
fn unknown_cpu_state_is_unexplained_never_hidden() {
    // No sched_switch before the first period: nobody knows what CPU 0 ran.
    let mut b = Builder {
        names: Names::new(),
        recs: Vec::new(),
        me: "rt",
    };
    let lat = b.period(1, 0, |_, _| {}, Some(PERIOD + 30_000), OTHER);
    for k in 2..=11 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    // 1 us to the wake-up and 1 us more in the callback, the rest unknown.
    assert_eq!(ns_of(w, |c| *c == Cause::HrtimerInterrupt), 2_000);
    assert_eq!(ns_of(w, |c| *c == Cause::Unexplained), 28_000);
    assert_eq!(r.causes[0].cause, Cause::Unexplained);
}

#[test]
fn itimer_rearmed_in_callback_steps_by_interval() {
    // Armed once at 1 ms with 1 ms interval, never re-armed: expiries 2..5 ms
    // are extrapolated; the 4 ms one fires 30 us late.
    let mut b = Builder::new();
    b.timer_start(500_000, 9, PERIOD);
    b.timer_start(900_000, 9, PERIOD);
    let mut lats = Vec::new();
    for k in 1..=5u64 {
        let t = k * PERIOD + if k == 4 { 30_000 } else { 0 };
        if k == 2 {
            // A second start sets the interval (setitimer re-arms at dequeue).
            b.timer_start(PERIOD + 500_000, 9, 2 * PERIOD);
        }
        b.timer_entry(t, 9);
        b.waking(t + 1_000, 0);
        b.timer_exit(t + 2_000, 9);
        b.switch(t + 3_000, 0, OTHER, ME, 9);
        b.switch(t + 8_000, 0, ME, OTHER, 120);
        lats.push(t + 3_000 - k * PERIOD);
    }
    let r = explain(&Records::from(b.recs), b.names, &Options::default()).unwrap();
    let got: Vec<u64> = r.table1.iter().map(|p| p.latency_ns).collect();
    assert_eq!(got, lats);
}

#[test]
fn latlab_threads_are_chosen_automatically_and_percentile_threshold_works() {
    let mut b = Builder::new();
    b.me = "latlab-cpu0";
    for k in 1..=100 {
        let extra = if k % 10 == 0 { 50_000 } else { 0 };
        b.period(k, extra, |_, _| {}, None, OTHER);
    }
    let r = explain_at(b, Threshold::Percentile(85.0));
    assert!(r.selection.contains("latlab"));
    assert_eq!(r.late, 10);
    // All 90 normal periods (fewer than the default 200) are the baseline.
    assert_eq!(r.baseline_windows, 90);
    let counts: Vec<u64> = r.table1.iter().filter_map(|p| p.late_count).collect();
    assert_eq!(counts, (1..=10).collect::<Vec<_>>());
}

#[test]
fn marker_lines_give_periods_when_no_timer_events() {
    let mut names = Names::new();
    let print = names.intern("print");
    let recs: Vec<Rec> = (1..=5u64)
        .map(|k| Rec {
            ts: k * PERIOD + 40_000,
            cpu: 1,
            pid: 77,
            name: print,
            kind: Kind::Marker {
                cycle: k,
                intended: k * PERIOD,
                actual: k * PERIOD + 40_000,
            },
        })
        .collect();
    let r = explain(&Records::from(recs), names, &Options::default()).unwrap();
    assert_eq!(r.tasks_found.len(), 1);
    assert!(r.tasks_found[0].from_markers);
    assert!(r.table1.iter().all(|p| p.latency_ns == 40_000));
}

#[test]
fn thresholds_parse() {
    assert_eq!(Threshold::parse("100us").unwrap(), Threshold::Ns(100_000));
    assert_eq!(Threshold::parse("1.5ms").unwrap(), Threshold::Ns(1_500_000));
    assert_eq!(Threshold::parse("80000ns").unwrap(), Threshold::Ns(80_000));
    // A bare number has no unit: an error naming the units, never a guess.
    let bare = Threshold::parse("50").unwrap_err().to_string();
    assert!(bare.contains("give a unit: 50us or 50ms"), "{bare}");
    assert_eq!(
        Threshold::parse("p99").unwrap(),
        Threshold::Percentile(99.0)
    );
    assert!(Threshold::parse("p100").is_err());
    assert!(Threshold::parse("fast")
        .unwrap_err()
        .to_string()
        .contains("100us"));
}

#[test]
fn remote_wakeup_uses_the_task_cpu_for_the_wait_after_the_wakeup() {
    // The timer fires on CPU 0; the task runs on CPU 1, which is idle and
    // takes 20 us to switch to it after the IPI.
    let mut b = Builder::new();
    b.switch(0, 1, ME, 0, 120);
    let mut lats = Vec::new();
    for k in 1..=11u64 {
        let t = k * PERIOD;
        let wait = if k == 11 { 20_000 } else { 1_000 };
        b.timer_start(t - 900_000, 1, t);
        b.timer_entry(t, 1);
        b.waking(t + 1_000, 1);
        b.ev(t + 1_500, 0, Kind::IpiSend { mask: 0b10 }, "ipi_send_cpu");
        b.timer_exit(t + 2_000, 1);
        b.switch(t + 2_000 + wait, 1, 0, ME, 9);
        b.switch(t + 10_000 + wait, 1, ME, 0, 120);
        lats.push(2_000 + wait);
    }
    let r = explain_over_10us(b);
    let w = check(&r, lats[10]);
    assert_eq!((w.cpu, w.timer_cpu), (1, 0));
    // 1 us to the wake-up in the interrupt on CPU 0; then CPU 1 was idle.
    assert_eq!(ns_of(w, |c| *c == Cause::HrtimerInterrupt), 1_000);
    assert_eq!(ns_of(w, |c| *c == Cause::IdleExit), 21_000);
    // The IPI on CPU 0 aimed at CPU 1 is part of the window.
    let ipi = r.table2.iter().find(|e| e.event == "ipi_send_cpu").unwrap();
    assert_eq!(ipi.late, 1);
}

/// A `sched_switch` from `prev_pid`, still runnable, to `next_pid`.
fn preempted(prev_pid: i32, prev_comm: u32, next_pid: i32, next_prio: i32, next_comm: u32) -> Kind {
    switch_kind(
        (prev_pid, prev_comm, true),
        (next_pid, next_comm, next_prio),
    )
}

/// Feeds `recs` to a detector and a collector as explain's one pass does,
/// trimming the collector's history after each record when `trim`.
fn collect(
    recs: &[Rec],
    det: &mut crate::detect::Detector,
    col: &mut crate::separate::Collector,
    trim: bool,
) {
    for r in recs {
        col.push(r);
        let found = det.periods.len();
        det.push(r);
        for k in found..det.periods.len() {
            col.ended(k, det.periods[k]);
        }
        if trim {
            col.trim(det.oldest_open());
        }
    }
    col.finish();
}

/// Two tasks on two CPUs with timers, remote wake-ups, interrupts,
/// softirqs, other tasks, equal timestamps and a CPU whose clock steps back
/// now and then: one pass must cut exactly the windows two passes cut.
#[test]
fn one_pass_windows_equal_two_pass_windows_on_a_messy_trace() {
    let mut names = Names::new();
    let mut recs = Vec::new();
    let mut rng = latlab_rt::rng::Rng::new(0x2545_f491_4f6c_dd1d);
    let mut ev = |names: &mut Names, ts: u64, cpu: u32, kind: Kind, n: &str| {
        recs.push(Rec {
            ts,
            cpu,
            pid: -1,
            name: names.intern(n),
            kind,
        })
    };
    let comms: Vec<u32> = ["idle", "rt1", "rt2", "hog", "dd"]
        .iter()
        .map(|c| names.intern(c))
        .collect();
    let pids = [0, 41, 42, 7, 300];
    for (i, &p) in pids.iter().enumerate().skip(1) {
        names.set_comm(p, comms[i]);
    }
    let eth = names.intern("eth0");
    let mut cur = [7, 300];
    for k in 1..=400u64 {
        let t = k * 250_000;
        let task = 1 + (k % 2) as usize; // rt1 and rt2 alternate
        let pid = pids[task];
        let timer_cpu = rng.below(2) as u32;
        let cpu = if rng.below(4) == 0 {
            1 - timer_cpu
        } else {
            timer_cpu
        };
        let delay = [0, 500, 30_000, 200_000][rng.below(4) as usize];
        ev(
            &mut names,
            t - 100_000,
            timer_cpu,
            Kind::HrtimerStart {
                timer: task as u64,
                soft: t,
                expires: t,
            },
            "hrtimer_start",
        );
        // Noise on both CPUs, some of it before the intended time, some
        // with a timestamp that steps back.
        for _ in 0..rng.below(6) {
            let c = rng.below(2) as u32;
            let at = t - 20_000 + rng.below(20_000 + delay);
            match rng.below(5) {
                0 => ev(
                    &mut names,
                    at,
                    c,
                    Kind::SoftirqEntry { vec: 3 },
                    "softirq_entry",
                ),
                1 => ev(
                    &mut names,
                    at,
                    c,
                    Kind::SoftirqExit { vec: 3 },
                    "softirq_exit",
                ),
                2 => ev(
                    &mut names,
                    at,
                    c,
                    Kind::IrqEntry { irq: 30, name: eth },
                    "irq_handler_entry",
                ),
                3 => ev(
                    &mut names,
                    at,
                    c,
                    Kind::IrqExit { irq: 30 },
                    "irq_handler_exit",
                ),
                _ => ev(&mut names, at, c, Kind::Other, "mm_page_alloc"),
            }
        }
        let x = t + delay;
        ev(
            &mut names,
            x,
            timer_cpu,
            Kind::HrtimerExpireEntry {
                timer: task as u64,
                now: Some(x),
            },
            "hrtimer_expire_entry",
        );
        ev(
            &mut names,
            x + 1_000,
            timer_cpu,
            Kind::Wake {
                pid,
                target_cpu: cpu as i32,
                waking: true,
            },
            "sched_waking",
        );
        if cpu != timer_cpu {
            ev(
                &mut names,
                x + 1_000,
                timer_cpu,
                Kind::IpiSend { mask: 1 << cpu },
                "ipi_send_cpu",
            );
        }
        ev(
            &mut names,
            x + 2_000,
            timer_cpu,
            Kind::HrtimerExpireExit { timer: task as u64 },
            "hrtimer_expire_exit",
        );
        let mut run = x + 3_000;
        if rng.below(3) == 0 {
            // A short-lived dd pid or the hog runs first.
            let other = if rng.below(2) == 0 {
                7
            } else {
                1000 + k as i32
            };
            let comm = if other == 7 { comms[3] } else { comms[4] };
            names.set_comm(other, comm);
            let prev = cur[cpu as usize];
            let switch = preempted(prev, comms[3], other, 120, comm);
            ev(&mut names, run, cpu, switch, "sched_switch");
            cur[cpu as usize] = other;
            run += rng.below(80_000);
        }
        let prev = cur[cpu as usize];
        let me = comms[task];
        let switch = preempted(prev, comms[3], pid, 9, me);
        ev(&mut names, run, cpu, switch, "sched_switch");
        // An event with the same timestamp right after the switch.
        ev(&mut names, run, cpu, Kind::Other, "sys_enter");
        ev(
            &mut names,
            run + 4_000,
            cpu,
            Kind::Switch {
                prev_pid: pid,
                prev_runnable: false,
                next_pid: 7,
                next_prio: 120,
                next_comm: comms[3],
                prev_comm: me,
            },
            "sched_switch",
        );
        cur[cpu as usize] = 7;
    }
    // Events come per CPU in time order, merged by timestamp, except that
    // CPU 1 sometimes logs a little in the past.
    recs.sort_by_key(|r| r.ts);
    for (i, r) in recs.iter_mut().enumerate() {
        if r.cpu == 1 && i % 97 == 0 {
            r.ts = r.ts.saturating_sub(3_000);
        }
    }
    for threshold in [Threshold::Percentile(90.0), Threshold::Ns(20_000)] {
        let opts = Options {
            threshold,
            baseline: 25,
            pids: vec![41, 42],
            ..Options::default()
        };
        // `explain` here asserts that one pass equals two passes.
        let r = explain(&Records::from(recs.clone()), names.clone(), &opts).unwrap();
        assert!(r.late > 10, "{}", r.late);
        assert_eq!(r.baseline_windows, 25);
    }
}

/// A window whose start has left the one-pass history (a timer interrupt
/// delayed far beyond HISTORY_NS while another CPU logs plenty) is not cut
/// in the pass; explain then cuts it in a second pass, with the same result.
#[test]
fn window_older_than_the_history_falls_back_to_a_second_pass() {
    use crate::separate::{Collector, HISTORY_NS};
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    // Period 11's timer interrupt comes HISTORY_NS + 50 ms late; CPU 1
    // logs an event every 100 us meanwhile.
    let t = 11 * PERIOD;
    let delay = HISTORY_NS + 50_000_000;
    let mut noise = t;
    while noise < t + delay {
        b.ev(noise, 1, Kind::Other, "sys_enter");
        noise += 100_000;
    }
    let lat = b.period(11, delay, |_, _| {}, None, OTHER);
    b.recs.sort_by_key(|r| r.ts);
    // The collector alone cannot cut period 11 (index 10).
    let mut det = crate::detect::Detector::new();
    let mut col = Collector::new();
    collect(&b.recs, &mut det, &mut col, true);
    assert_eq!(det.periods.len(), 11);
    assert!(col.windows[9].is_some());
    assert!(col.windows[10].is_none(), "its start left the history");
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    assert_eq!(ns_of(w, |c| matches!(c, Cause::SilentGap { .. })), delay);
}

/// A disk load runs a new `dd` process for every block: each late window
/// here is held up by a different dd pid (51 us each), one by the hog
/// (118 us). Grouped by pid, the hog ranked first and the dd processes
/// came after it as five small causes; grouped by command, dd is the
/// main cause and its pids are listed.
#[test]
fn short_lived_processes_of_one_command_rank_as_one_cause() {
    let mut b = Builder::new();
    let mut k = 0;
    for _ in 0..20 {
        k += 1;
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    for dd in 100..105 {
        k += 1;
        let t = k * PERIOD;
        b.switch(t - 100_000, 0, OTHER, dd, 120);
        b.period(k, 0, |_, _| {}, Some(t + 53_000), OTHER);
        k += 1;
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    k += 1;
    b.period(k, 0, |_, _| {}, Some(k * PERIOD + 120_000), OTHER);
    let r = explain_over_10us(b);
    assert_eq!(r.late, 6);
    let top = &r.causes[0];
    assert_eq!(
        top.cause,
        Cause::NonPreemptibleKernel { task: "dd".into() },
        "{:#?}",
        r.causes
    );
    assert_eq!(top.late_windows, 5);
    assert_eq!(top.late_ns, 5 * 51_000);
    let pids: Vec<(i32, u64, u64)> = top
        .pids
        .iter()
        .map(|p| (p.pid, p.late_ns, p.late_windows))
        .collect();
    assert_eq!(pids, (100..105).map(|p| (p, 51_000, 1)).collect::<Vec<_>>());
    assert!(
        top.description.contains("dd (5 pids)"),
        "{}",
        top.description
    );
    // A cause with one pid is still named with it.
    let hog = &r.causes[1];
    assert!(hog.description.contains("hog:7"), "{}", hog.description);
    assert_eq!(hog.pids.len(), 1);
    assert!(
        top.description.contains("dd (5 pids) held the CPU"),
        "{}",
        top.description
    );
    assert_eq!(top.pids[0].pid, 100, "its pids, most first: {:?}", top.pids);
    // Each window keeps the pid that held it.
    assert!(r.windows.iter().any(|w| w.parts.iter().any(|p| p.cause
        == Cause::NonPreemptibleKernel {
            task: "dd:102".into()
        })));
}

#[test]
fn causes_group_by_command_name_even_with_colons_but_not_unknown_names() {
    let c = Cause::OtherTask {
        task: "kworker/0:1H:45".into(),
        prio: 120,
        task_prio: 9,
    };
    assert_eq!(
        c.by_command(),
        (
            Cause::OtherTask {
                task: "kworker/0:1H".into(),
                prio: 120,
                task_prio: 9
            },
            Some(45)
        )
    );
    let unknown = Cause::SilentGap {
        task: "<...>:812".into(),
        within: Silence::BeforeInterrupt,
    };
    assert_eq!(unknown.by_command(), (unknown.clone(), None));
    assert_eq!(Cause::IdleExit.by_command(), (Cause::IdleExit, None));
}

/// Windows that outgrow the collector's budget are all dropped (memory
/// stays bounded) and the collector says so; explain then cuts the chosen
/// windows in a second pass.
#[test]
fn collector_gives_up_past_its_budget() {
    use crate::separate::Collector;
    let mut b = Builder::new();
    for k in 1..=30 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    let run = |budget: usize| {
        let mut det = crate::detect::Detector::new();
        let mut col = Collector::with_budget(budget, 0);
        collect(&b.recs, &mut det, &mut col, false);
        col
    };
    let all = run(usize::MAX);
    assert!(!all.gave_up);
    let held: usize = all
        .windows
        .iter()
        .flatten()
        .map(|w| {
            std::mem::size_of::<crate::separate::Window>()
                + w.events.len() * std::mem::size_of::<Rec>()
        })
        .sum();
    assert_eq!(all.windows.iter().flatten().count(), 30);
    let small = run(held / 2);
    assert!(small.gave_up);
    assert!(small.windows.iter().all(|w| w.is_none()));
}

/// Two dd processes in one late window count as one late window of the
/// dd cause (not two), their latency adds up, and the normal-window share
/// that is subtracted is dd's as a whole.
#[test]
fn one_command_counts_once_per_window_whatever_its_pids() {
    use crate::analyze::{rank_causes, Part};
    use crate::detect::{Period, PeriodSource};
    use crate::separate::{CpuState, Window};
    let window = |late: bool| Window {
        period: 0,
        late,
        p: Period {
            pid: ME,
            intended: 0,
            expiry: None,
            expire: None,
            wake: None,
            run: 100_000,
            timer_cpu: 0,
            cpu: 0,
            position: 0,
            source: PeriodSource::Hrtimer,
            soft: false,
        },
        timer_cpu_state: CpuState::default(),
        task_cpu_state: CpuState::default(),
        events: Vec::new(),
        dropped: 0,
        text: Vec::new(),
    };
    let dd = |pid: i32, ns: u64| Part {
        cause: Cause::NonPreemptibleKernel {
            task: format!("dd:{pid}"),
        },
        ns,
    };
    let windows = [window(true), window(true), window(false)];
    let parts = [
        vec![dd(100, 30_000), dd(101, 20_000)],
        vec![dd(102, 10_000)],
        vec![dd(103, 5_000)],
    ];
    let rows = rank_causes(
        &windows,
        &parts,
        &Names::new(),
        &crate::analyze::Context::default(),
    );
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let r = &rows[0];
    assert_eq!((r.late_windows, r.normal_windows), (2, 1));
    assert_eq!(r.late_ns, 60_000);
    assert_eq!(r.mean_normal_ns, 5_000);
    assert_eq!(r.excess_ns, 60_000 - 2 * 5_000);
    let pids: Vec<(i32, u64)> = r.pids.iter().map(|p| (p.pid, p.late_ns)).collect();
    assert_eq!(pids, [(100, 30_000), (101, 20_000), (102, 10_000)]);
    assert_eq!(
        r.description,
        "dd (3 pids) held the CPU in non-preemptible kernel code"
    );
}

/// The one pass cuts only the windows of the tasks it expects to be
/// chosen (here: named `cyclictest` when their period ended). A task that
/// takes that name later (exec) is chosen with periods whose windows were
/// not cut: explain falls back to a second pass and the result is the
/// same as two passes (the `explain` helper checks).
#[test]
fn task_renamed_after_its_periods_still_gets_its_windows() {
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    b.me = "cyclictest";
    let lat = b.period(11, 0, |_, _| {}, Some(11 * PERIOD + 40_000), OTHER);
    let r = explain(
        &Records::from(b.recs),
        b.names,
        &Options {
            threshold: Threshold::Ns(10_000),
            comms: vec!["cyclictest".into()],
            ..Options::default()
        },
    )
    .unwrap();
    let w = check(&r, lat);
    assert!(w.events > 0);
    assert_eq!(r.baseline_windows, 10);
}

/// A latlab measurement thread that appears after another timer task:
/// the windows already cut for the other task are dropped, and the report
/// equals two passes (the `explain` helper checks).
#[test]
fn latlab_thread_seen_late_drops_the_other_tasks_windows() {
    use crate::separate::Collector;
    let mut b = Builder::new();
    b.me = "latlab-cpu0";
    // pid 55 ("sigwait") wakes from hrtimer 2 on CPU 1 every 1 ms first.
    let sig = b.names.intern("sigwait");
    b.names.set_comm(55, sig);
    for k in 1..=10u64 {
        let t = k * PERIOD;
        b.ev(
            t - 500_000,
            1,
            Kind::HrtimerStart {
                timer: 2,
                soft: t,
                expires: t,
            },
            "hrtimer_start",
        );
        b.ev(
            t,
            1,
            Kind::HrtimerExpireEntry {
                timer: 2,
                now: Some(t),
            },
            "hrtimer_expire_entry",
        );
        b.ev(
            t + 1_000,
            1,
            Kind::Wake {
                pid: 55,
                target_cpu: 1,
                waking: true,
            },
            "sched_waking",
        );
        b.ev(
            t + 2_000,
            1,
            Kind::HrtimerExpireExit { timer: 2 },
            "hrtimer_expire_exit",
        );
        b.ev(
            t + 3_000,
            1,
            Kind::Switch {
                prev_pid: 0,
                prev_runnable: false,
                next_pid: 55,
                next_prio: 120,
                next_comm: sig,
                prev_comm: sig,
            },
            "sched_switch",
        );
        b.ev(
            t + 9_000,
            1,
            Kind::Switch {
                prev_pid: 55,
                prev_runnable: false,
                next_pid: 0,
                next_prio: 120,
                next_comm: sig,
                prev_comm: sig,
            },
            "sched_switch",
        );
    }
    let mut lat = 0;
    for k in 11..=30 {
        let run = (k == 25).then_some(k * PERIOD + 30_000);
        lat = lat.max(b.period(k, 0, |_, _| {}, run, OTHER));
    }
    b.recs.sort_by_key(|r| r.ts);
    // The collector alone: sigwait's windows were cut, then dropped.
    let mut col = Collector::new();
    let mut det = crate::detect::Detector::new();
    collect(&b.recs, &mut det, &mut col, false);
    let cut = |col: &Collector, pid: i32| {
        col.windows
            .iter()
            .flatten()
            .filter(|w| w.p.pid == pid)
            .count()
    };
    assert_eq!((cut(&col, 55), cut(&col, ME)), (10, 20));
    col.retain(|p| p.pid == ME);
    assert_eq!((cut(&col, 55), cut(&col, ME)), (0, 20));
    let r = explain_over_10us(b);
    assert!(r.selection.contains("latlab"), "{}", r.selection);
    assert_eq!(r.tasks_found.len(), 2);
    assert_eq!(r.late, 1);
    assert_eq!(r.windows[0].latency_ns, lat);
}

/// `--comm cyclictest` chooses the measuring thread (1 ms) and the main
/// thread (10 ms): the report says they are analysed together and how to
/// choose one; tasks of one period, or tasks not chosen, give no note.
#[test]
fn comm_choosing_tasks_of_different_periods_is_noted() {
    use crate::detect::TaskSummary;
    let task = |pid, interval| TaskSummary {
        pid,
        comm: "cyclictest".into(),
        periods: 100,
        median_interval_ns: interval,
        regularity: 1.0,
        latency: Default::default(),
        from_markers: false,
    };
    let tasks = [
        task(31570, 1_000_000),
        task(31569, 10_100_000),
        task(31571, 1_000_000),
    ];
    let note = crate::mixed_periods_note(&tasks, &[31569, 31570]).expect("a note");
    assert!(note.contains("cyclictest:31570 every 1.00 ms"), "{note}");
    assert!(note.contains("cyclictest:31569 every 10.1 ms"), "{note}");
    assert!(note.contains("--pid"), "{note}");
    assert_eq!(crate::mixed_periods_note(&tasks, &[31570, 31571]), None);
    assert_eq!(crate::mixed_periods_note(&tasks, &[31570]), None);
}

/// TCP pacing on the measured CPU, as a network load makes it (the events
/// of the late windows of a real trace, `tests/fixtures/net-pacing.dat`):
/// after the wake-up, three times, the timer interrupt comes (5 us) and
/// only raises the HRTIMER softirq, which runs the pacing timer's callback
/// (3 us) and 17 us of its own with interrupts off. `named` gives the
/// callback its function, as a trace with the `function` field does.
fn pacing_after_the_wakeup(named: bool) -> (Report, u64) {
    const PACE: u64 = 0xffff_8881_06a3_c868;
    let mut b = Builder::new();
    let local_timer = b.names.intern("local_timer");
    let pace_kick = b.names.intern("tcp_pace_kick");
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    let lat = b.period(
        11,
        0,
        |b, t| {
            for i in 0..3u64 {
                let a = t + 1_000 + i * 26_000;
                b.ev(
                    a,
                    0,
                    Kind::IrqEntry {
                        irq: -1,
                        name: local_timer,
                    },
                    "local_timer_entry",
                );
                b.ev(a + 5_000, 0, Kind::IrqExit { irq: -1 }, "local_timer_exit");
                b.ev(a + 5_000, 0, Kind::SoftirqEntry { vec: 8 }, "softirq_entry");
                b.timer_entry(a + 6_000, PACE);
                if named {
                    b.names.set_callback(PACE, a + 6_000, pace_kick);
                }
                b.timer_exit(a + 9_000, PACE);
                b.ev(a + 26_000, 0, Kind::SoftirqExit { vec: 8 }, "softirq_exit");
            }
        },
        Some(11 * PERIOD + 3_000 + 79_000),
        OTHER,
    );
    let opts = Options {
        threshold: Threshold::Ns(10_000),
        ..Options::default()
    };
    (
        explain(&Records::from(b.recs), b.names, &opts).unwrap(),
        lat,
    )
}

#[test]
fn a_soft_hrtimer_callback_is_named_with_its_interrupt_and_softirq_time() {
    let (r, lat) = pacing_after_the_wakeup(true);
    let w = check(&r, lat);
    let pacing = Cause::TimerCallback {
        function: "tcp_pace_kick".into(),
        timer: crate::TimerKind::SoftHrtimer,
    };
    // Three interrupts that only raised the softirq (3 x 5 us) and three
    // softirqs that ran only the pacing callback (3 x 21 us) are its time.
    assert_eq!(ns_of(w, |c| *c == pacing), 3 * 26_000, "{:#?}", w.parts);
    assert_eq!(ns_of(w, |c| matches!(c, Cause::Softirq { .. })), 0);
    // The interrupt of the task's own timer stays the hrtimer interrupt.
    assert_eq!(ns_of(w, |c| *c == Cause::HrtimerInterrupt), 2_000);
    let top = &r.causes[0];
    assert_eq!(top.cause, pacing);
    assert!(
        top.description.contains("timer callback tcp_pace_kick"),
        "{}",
        top.description
    );
    assert!(
        top.description.contains("TCP pacing"),
        "{}",
        top.description
    );
    assert!(
        top.recommendation.contains("RPS/XPS"),
        "{}",
        top.recommendation
    );
    assert!(
        !top.recommendation.contains("IRQ affinity)"),
        "{}",
        top.recommendation
    );
}

#[test]
fn timer_softirqs_without_named_callbacks_say_how_to_name_them() {
    // latlab watch's windows (and traces without the `function` field)
    // do not name the callbacks: the softirq keeps its vector, and the
    // advice no longer says that IRQ affinity moves it.
    let (r, lat) = pacing_after_the_wakeup(false);
    let w = check(&r, lat);
    let soft = ns_of(
        w,
        |c| matches!(c, Cause::Softirq { vector } if vector == "HRTIMER"),
    );
    // The softirq outside the callback (1 + 17 us, three times); the
    // callback and the interrupts stay the hrtimer interrupt's.
    assert_eq!(soft, 3 * 18_000, "{:#?}", w.parts);
    assert_eq!(
        ns_of(w, |c| *c == Cause::HrtimerInterrupt),
        3 * 8_000 + 2_000
    );
    assert!(r
        .causes
        .iter()
        .all(|c| c.cause.category() != "timer_callback"));
    let row = r
        .causes
        .iter()
        .find(|c| matches!(&c.cause, Cause::Softirq { vector } if vector == "HRTIMER"))
        .unwrap();
    assert!(
        row.recommendation.contains("hrtimer_expire_entry"),
        "{}",
        row.recommendation
    );
    assert!(row
        .recommendation
        .contains("IRQ affinity does not move timers"));
}

#[test]
fn a_hard_hrtimer_and_a_timer_list_callback_are_named_where_they_ran() {
    const TICK: u64 = 0xffff_8880_0000_1000;
    const WHEEL: u64 = 0xffff_8880_0000_2000;
    let mut b = Builder::new();
    let local_timer = b.names.intern("local_timer");
    let (tick, work) = (
        b.names.intern("tick_nohz_handler"),
        b.names.intern("delayed_work_timer_fn"),
    );
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    // The tick's callback runs 30 us in the timer interrupt before the
    // task's own expiry (its interrupt delayed by it); after the wake-up
    // the TIMER softirq runs a delayed work item's timer for 20 us.
    let t = 11 * PERIOD;
    b.ev(
        t - 1_000,
        0,
        Kind::IrqEntry {
            irq: -1,
            name: local_timer,
        },
        "local_timer_entry",
    );
    b.timer_entry(t - 500, TICK);
    b.names.set_callback(TICK, t - 500, tick);
    b.timer_exit(t + 30_000, TICK);
    let lat = b.period(
        11,
        30_000,
        |b, x| {
            b.ev(x + 1_000, 0, Kind::IrqExit { irq: -1 }, "local_timer_exit");
            b.ev(x + 1_000, 0, Kind::SoftirqEntry { vec: 1 }, "softirq_entry");
            b.ev(
                x + 2_000,
                0,
                Kind::TimerExpireEntry { timer: WHEEL },
                "timer_expire_entry",
            );
            b.names.set_callback(WHEEL, x + 2_000, work);
            b.ev(
                x + 22_000,
                0,
                Kind::TimerExpireExit { timer: WHEEL },
                "timer_expire_exit",
            );
            b.ev(x + 23_000, 0, Kind::SoftirqExit { vec: 1 }, "softirq_exit");
        },
        Some(11 * PERIOD + 30_000 + 2_000 + 24_000),
        OTHER,
    );
    let r = explain_over_10us(b);
    let w = check(&r, lat);
    let hard = Cause::TimerCallback {
        function: "tick_nohz_handler".into(),
        timer: crate::TimerKind::Hrtimer,
    };
    let wheel = Cause::TimerCallback {
        function: "delayed_work_timer_fn".into(),
        timer: crate::TimerKind::TimerList,
    };
    // From the expiry to the task's own callback, and the interrupt's time
    // after it (1 us): the interrupt ran the tick longest.
    assert_eq!(ns_of(w, |c| *c == hard), 31_000, "{:#?}", w.parts);
    assert_eq!(ns_of(w, |c| matches!(c, Cause::SilentGap { .. })), 0);
    // The task's own expiry: the hrtimer interrupt.
    assert_eq!(ns_of(w, |c| *c == Cause::HrtimerInterrupt), 2_000);
    // The TIMER softirq ran only the work item's timer: all of it (22 us).
    assert_eq!(ns_of(w, |c| *c == wheel), 22_000, "{:#?}", w.parts);
    let tick_row = r.causes.iter().find(|c| c.cause == hard).unwrap();
    assert!(tick_row.description.contains("scheduler tick"));
    assert!(tick_row.recommendation.contains("nohz_full"));
    let wheel_row = r.causes.iter().find(|c| c.cause == wheel).unwrap();
    assert!(wheel_row
        .description
        .contains("timer_list, in the TIMER softirq"));
}

/// A trace whose only periodic timer task is rt:42.
fn one_task_trace() -> (Records, Names) {
    let mut b = Builder::new();
    for k in 1..=10 {
        b.period(k, 0, |_, _| {}, None, OTHER);
    }
    (Records::from(b.recs), b.names)
}

#[test]
fn a_selection_that_matches_nothing_is_an_error_naming_the_tasks_found() {
    let (recs, names) = one_task_trace();
    for opts in [
        Options {
            pids: vec![4242],
            ..Options::default()
        },
        Options {
            comms: vec!["nosuchtask".into()],
            ..Options::default()
        },
        // One selector that matches and one that does not: the typo is
        // not hidden by the other.
        Options {
            pids: vec![ME, 4242],
            ..Options::default()
        },
    ] {
        let err = explain(&recs, names.clone(), &opts).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, crate::ExplainError::NoSuchTask { .. }),
            "{text}"
        );
        assert!(
            text.contains("--pid 4242") || text.contains("--comm nosuchtask"),
            "{text}"
        );
        assert!(text.contains("rt:42 (10 periods every 1.00 ms)"), "{text}");
        assert!(text.contains("--pid PID or --comm NAME"), "{text}");
    }
    // What matches is analysed.
    for opts in [
        Options {
            pids: vec![ME],
            ..Options::default()
        },
        Options {
            comms: vec!["r*".into()],
            ..Options::default()
        },
    ] {
        assert_eq!(explain(&recs, names.clone(), &opts).unwrap().periods, 10);
    }
}

#[test]
fn a_trace_without_a_periodic_timer_task_is_an_error() {
    let mut b = Builder::new();
    b.switch(1_000, 0, OTHER, ME, 120);
    b.ev(2_000, 0, Kind::Other, "sys_enter");
    let err = explain(&Records::from(b.recs), b.names, &Options::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, crate::ExplainError::NoPeriodicTask { events: 3 }),
        "{text}"
    );
    assert!(text.contains("hrtimer_expire_entry"), "{text}");
}

/// `latlab watch` cuts its windows in the kernel and hands them to
/// [`crate::analyze_windows`]; its BPF side logs no `hrtimer_expire_exit`.
/// A callback named in [`Names::set_callback`] (what watch would do with a
/// function address it logged) is named there too, each ending where its
/// softirq does.
#[test]
fn windows_cut_elsewhere_name_the_callbacks_given_to_names_even_without_exits() {
    use crate::separate::{CpuState, Window};
    use crate::{Period, PeriodSource};
    const PACE: u64 = 0xffff_8881_06a3_c868;
    let mut names = Names::new();
    let (me, other) = (names.intern("latlab-cpu0"), names.intern("ld-net0r"));
    names.set_comm(ME, me);
    names.set_comm(OTHER, other);
    let timer_irq = names.intern("local_timer");
    let pace_kick = names.intern("tcp_pace_kick");
    let t = 10_000_000u64;
    let window = |late: bool, extra: u64, names: &mut Names| {
        let rec = |ts, kind| Rec {
            ts,
            cpu: 0,
            pid: OTHER,
            name: 0,
            kind,
        };
        let mut events = vec![
            rec(
                t,
                Kind::IrqEntry {
                    irq: -1,
                    name: timer_irq,
                },
            ),
            rec(
                t + 500,
                Kind::HrtimerExpireEntry {
                    timer: 1,
                    now: None,
                },
            ),
            rec(
                t + 1_000,
                Kind::Wake {
                    pid: ME,
                    target_cpu: 0,
                    waking: true,
                },
            ),
            rec(t + 2_000, Kind::IrqExit { irq: -1 }),
        ];
        if extra > 0 {
            events.push(rec(t + 2_000, Kind::SoftirqEntry { vec: 8 }));
            events.push(rec(
                t + 3_000,
                Kind::HrtimerExpireEntry {
                    timer: PACE,
                    now: None,
                },
            ));
            names.set_callback(PACE, t + 3_000, pace_kick);
            events.push(rec(t + 2_000 + extra, Kind::SoftirqExit { vec: 8 }));
        }
        let run = t + 3_000 + extra;
        events.push(rec(
            run,
            Kind::Switch {
                prev_pid: OTHER,
                prev_runnable: true,
                next_pid: ME,
                next_prio: 4,
                next_comm: me,
                prev_comm: other,
            },
        ));
        let mut st = CpuState::default();
        st.apply(&rec(
            t - 100_000,
            Kind::Switch {
                prev_pid: ME,
                prev_runnable: false,
                next_pid: OTHER,
                next_prio: 120,
                next_comm: other,
                prev_comm: me,
            },
        ));
        Window {
            period: 0,
            late,
            p: Period {
                pid: ME,
                intended: t,
                expiry: Some(t),
                expire: Some(t + 500),
                wake: Some(t + 1_000),
                run,
                timer_cpu: 0,
                cpu: 0,
                position: 0,
                source: PeriodSource::Hrtimer,
                soft: false,
            },
            timer_cpu_state: st.clone(),
            task_cpu_state: st,
            events,
            dropped: 0,
            text: Vec::new(),
        }
    };
    let windows = [
        window(true, 60_000, &mut names),
        window(false, 0, &mut names),
    ];
    let a = crate::analyze_windows(&windows, &names, false);
    let top = &a.causes[0];
    assert_eq!(
        top.cause,
        Cause::TimerCallback {
            function: "tcp_pace_kick".into(),
            timer: crate::TimerKind::SoftHrtimer,
        },
        "{:#?}",
        a.causes
    );
    // The whole softirq: its callback ran to its end (no exit logged).
    assert_eq!(top.late_ns, 60_000);
}
