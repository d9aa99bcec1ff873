//! PREEMPT_RT and ARM traces, built event by event as the 6.1-rt kernel
//! logs them (threaded interrupts, `ktimers/N`, soft hrtimers expired in
//! it, PI-boosted wake-ups), each with a known answer. Every test here
//! covers a defect `latlab explain` had on real traces from the lab's
//! PREEMPT_RT kernel (docs/explain-rt.md).

use crate::model::{Kind, Names, Rec};
use crate::tests::explain;
use crate::{Cause, Options, Records, Report, Silence, Threshold};

const ME: i32 = 42;
const LOAD: i32 = 7;
const KTIMERS: i32 = 15;
const IRQ25: i32 = 113;
const PERIOD: u64 = 1_000_000;
/// The measured task's kernel priorities: SCHED_FIFO 95 and 40.
const FIFO95: i32 = 4;
const FIFO40: i32 = 59;
/// `irq/NN` threads (SCHED_FIFO 50) and `ktimers/N` (SCHED_FIFO 1).
const FIFO50: i32 = 49;
const FIFO1: i32 = 98;
const RT_UNAME: &str = "Linux (none) 6.1.0-56-rt-amd64 #1 SMP PREEMPT_RT Debian 6.1.192-2";

struct Rt {
    names: Names,
    recs: Vec<Rec>,
    /// The measured task's kernel priority.
    prio: i32,
    uname: Option<String>,
}

impl Rt {
    fn new(prio: i32) -> Self {
        let mut b = Rt {
            names: Names::new(),
            recs: Vec::new(),
            prio,
            uname: Some(RT_UNAME.into()),
        };
        b.switch(0, ME, LOAD, 120);
        b
    }

    fn comm(&mut self, pid: i32) -> u32 {
        let n = match pid {
            0 => "swapper/0",
            ME => "latlab-cpu0",
            LOAD => "ld-net0r",
            KTIMERS => "ktimers/0",
            IRQ25 => "irq/25-virtio0-",
            14 => "ksoftirqd/0",
            19 => "rcuc/0",
            _ => "other",
        };
        let s = self.names.intern(n);
        self.names.set_comm(pid, s);
        s
    }

    fn ev(&mut self, ts: u64, kind: Kind, name: &str) {
        let name = self.names.intern(name);
        self.recs.push(Rec {
            ts,
            cpu: 0,
            pid: -1,
            name,
            kind,
        });
    }

    fn current(&self) -> i32 {
        self.recs
            .iter()
            .rev()
            .find_map(|r| match r.kind {
                Kind::Switch { next_pid, .. } => Some(next_pid),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn switch(&mut self, ts: u64, prev: i32, next: i32, next_prio: i32) {
        let (prev_comm, next_comm) = (self.comm(prev), self.comm(next));
        self.ev(
            ts,
            Kind::Switch {
                prev_pid: prev,
                prev_runnable: prev != ME,
                next_pid: next,
                next_prio,
                next_comm,
                prev_comm,
            },
            "sched_switch",
        );
    }

    /// Switches from whatever runs to `next`.
    fn to(&mut self, ts: u64, next: i32, next_prio: i32) {
        let cur = self.current();
        self.switch(ts, cur, next, next_prio);
    }

    fn wake(&mut self, ts: u64, pid: i32) {
        self.ev(
            ts,
            Kind::Wake {
                pid,
                target_cpu: 0,
                waking: true,
            },
            "sched_waking",
        );
    }

    fn irq(&mut self, ts: u64, irq: i32, name: &str) {
        let name = self.names.intern(name);
        let event = if irq < 0 {
            "local_timer_entry"
        } else {
            "irq_handler_entry"
        };
        self.ev(ts, Kind::IrqEntry { irq, name }, event);
    }

    fn irq_exit(&mut self, ts: u64, irq: i32) {
        let event = if irq < 0 {
            "local_timer_exit"
        } else {
            "irq_handler_exit"
        };
        self.ev(ts, Kind::IrqExit { irq }, event);
    }

    fn softirq(&mut self, ts: u64, vec: u8, entry: bool) {
        if entry {
            self.ev(ts, Kind::SoftirqEntry { vec }, "softirq_entry");
        } else {
            self.ev(ts, Kind::SoftirqExit { vec }, "softirq_exit");
        }
    }

    fn arm(&mut self, t: u64) {
        self.ev(
            t - 900_000,
            Kind::HrtimerStart {
                timer: 1,
                soft: t,
                expires: t,
            },
            "hrtimer_start",
        );
    }

    fn expire(&mut self, ts: u64) {
        self.ev(
            ts,
            Kind::HrtimerExpireEntry {
                timer: 1,
                now: Some(ts),
            },
            "hrtimer_expire_entry",
        );
    }

    fn expire_exit(&mut self, ts: u64) {
        self.ev(
            ts,
            Kind::HrtimerExpireExit { timer: 1 },
            "hrtimer_expire_exit",
        );
    }

    /// A hard hrtimer period: the LAPIC timer interrupt `irq_delay` after
    /// the expiry wakes the task; `between` adds events after the
    /// interrupt; the task runs at `run` (default: 3 us after the
    /// interrupt) and sleeps 5 us later, giving the CPU to `back_to`.
    fn hard(
        &mut self,
        k: u64,
        irq_delay: u64,
        between: impl FnOnce(&mut Self, u64),
        run: Option<u64>,
        back_to: (i32, i32),
    ) -> u64 {
        let t = k * PERIOD;
        self.arm(t);
        let x = t + irq_delay;
        self.irq(x, -1, "local_timer");
        self.expire(x + 500);
        self.wake(x + 1_000, ME);
        self.expire_exit(x + 1_500);
        self.irq_exit(x + 2_000, -1);
        between(self, x + 2_000);
        let run = run.unwrap_or(x + 3_000);
        let prio = self.prio;
        self.to(run, ME, prio);
        self.switch(run + 5_000, ME, back_to.0, back_to.1);
        run - t
    }

    /// A soft hrtimer period on PREEMPT_RT: the LAPIC timer interrupt at
    /// the expiry wakes ktimers/0; `before_ktimers` runs from 2 us after it
    /// (what holds ktimers off) and returns when ktimers gets the CPU;
    /// ktimers runs the callback 2 us later, which wakes the task; the
    /// task preempts ktimers, sleeps 5 us later, ktimers finishes.
    fn soft(&mut self, k: u64, before_ktimers: impl FnOnce(&mut Self, u64) -> u64) -> u64 {
        let t = k * PERIOD;
        self.arm(t);
        self.irq(t + 1_000, -1, "local_timer");
        self.wake(t + 1_500, KTIMERS);
        self.irq_exit(t + 2_000, -1);
        let at = before_ktimers(self, t + 2_000);
        self.to(at, KTIMERS, FIFO1);
        self.softirq(at + 500, 8, true);
        self.expire(at + 2_000);
        self.wake(at + 2_500, ME);
        let prio = self.prio;
        let run = at + 3_000;
        self.switch(run, KTIMERS, ME, prio);
        self.switch(run + 5_000, ME, KTIMERS, FIFO1);
        self.expire_exit(run + 5_500);
        self.softirq(run + 6_000, 8, false);
        self.switch(run + 7_000, KTIMERS, LOAD, 120);
        run - t
    }

    fn explain(self, threshold_ns: u64) -> Report {
        let opts = Options {
            threshold: Threshold::Ns(threshold_ns),
            ..Options::default()
        };
        let source = Records {
            recs: self.recs,
            uname: self.uname,
        };
        explain(&source, self.names, &opts).unwrap()
    }
}

fn ns_of(r: &Report, f: impl Fn(&Cause) -> bool) -> u64 {
    let w = &r.windows[0];
    let sum: u64 = w.parts.iter().map(|p| p.ns).sum();
    assert_eq!(sum, w.latency_ns, "the parts add up: {:#?}", w.parts);
    w.parts.iter().filter(|p| f(&p.cause)).map(|p| p.ns).sum()
}

fn normal(b: &mut Rt, periods: std::ops::RangeInclusive<u64>) {
    for k in periods {
        b.hard(k, 0, |_, _| {}, None, (LOAD, 120));
    }
}

/// The trace's uname says PREEMPT_RT: the report says so, and the advice
/// for a delayed timer interrupt no longer says "use PREEMPT_RT". Without
/// a uname, ktimers/N threads say it; a uname without PREEMPT_RT wins over
/// them (a kernel booted with threadirqs).
#[test]
fn a_preempt_rt_kernel_is_known_and_the_advice_fits_it() {
    let build = |uname: Option<&str>, ktimers: bool| {
        let mut b = Rt::new(FIFO95);
        b.uname = uname.map(str::to_string);
        if ktimers {
            b.comm(KTIMERS);
        }
        normal(&mut b, 1..=10);
        // Interrupts off while the load runs: the timer interrupt comes
        // 200 us late, with the load logging meanwhile.
        b.ev(11 * PERIOD + 50_000, Kind::Other, "mm_page_free");
        b.hard(11, 200_000, |_, _| {}, None, (LOAD, 120));
        b.explain(10_000)
    };
    let rt = build(Some(RT_UNAME), false);
    assert!(rt.kernel.preempt_rt);
    assert_eq!(rt.kernel.uname.as_deref(), Some(RT_UNAME));
    let top = &rt.causes[0];
    assert_eq!(top.cause.category(), "timer_irq_delay");
    assert!(
        !top.recommendation.contains("use PREEMPT_RT"),
        "{}",
        top.recommendation
    );
    assert!(
        top.recommendation.contains("raw spinlocks"),
        "{}",
        top.recommendation
    );
    assert_eq!(rt.kernel.evidence, "PREEMPT_RT (the trace's uname)");

    let inferred = build(None, true);
    assert!(inferred.kernel.preempt_rt);
    assert!(
        inferred.kernel.evidence.contains("ktimers"),
        "{}",
        inferred.kernel.evidence
    );

    let threadirqs = build(Some("Linux box 6.13.0 #1 SMP PREEMPT_DYNAMIC"), true);
    assert!(!threadirqs.kernel.preempt_rt);
    assert!(threadirqs.causes[0]
        .recommendation
        .contains("use PREEMPT_RT"));
    let generic = build(None, false);
    assert!(!generic.kernel.preempt_rt);
}

/// A disk interrupt's thread (irq/25-virtio0, SCHED_FIFO 50) runs the
/// completion (a BLOCK softirq inside it) while the task (SCHED_FIFO 40)
/// waits: that is the irq thread's doing, with its priority against the
/// task's and the IRQ's affinity file; before, it was "real-time task
/// irq/25-virtio0-:113 (prio 49)" with generic advice, and the softirq in
/// it was "softirq BLOCK ... or use PREEMPT_RT".
#[test]
fn an_irq_thread_above_the_task_is_named_with_priorities_and_affinity() {
    let mut b = Rt::new(FIFO40);
    normal(&mut b, 1..=10);
    let lat = b.hard(
        11,
        0,
        |b, t| {
            // The hard handler wakes the thread, which preempts the load.
            b.irq(t + 1_000, 25, "virtio0-req.0");
            b.wake(t + 1_500, IRQ25);
            b.irq_exit(t + 2_000, 25);
            b.to(t + 3_000, IRQ25, FIFO50);
            b.softirq(t + 10_000, 4, true);
            b.softirq(t + 60_000, 4, false);
        },
        Some(11 * PERIOD + 90_000),
        (LOAD, 120),
    );
    let r = b.explain(10_000);
    assert_eq!(r.late, 1);
    assert_eq!(r.windows[0].latency_ns, lat);
    let irq_thread = ns_of(&r, |c| {
        matches!(c, Cause::IrqThread { task, irq: 25, prio: FIFO50, task_prio: FIFO40 }
            if task == "irq/25-virtio0-:113")
    });
    // From its switch-in (+5 us after the interrupt) to the task's run.
    assert_eq!(irq_thread, 90_000 - 5_000);
    assert_eq!(ns_of(&r, |c| c.category() == "softirq"), 0);
    // Expired in the interrupt: hard timers.
    assert!(r.table1.iter().all(|p| !p.soft));
    let top = &r.causes[0];
    assert_eq!(top.cause.category(), "irq_thread");
    assert!(
        top.description.contains("IRQ 25")
            && top.description.contains("rt priority 50")
            && top.description.contains("the task's rt priority 40"),
        "{}",
        top.description
    );
    assert!(
        top.recommendation
            .contains("/proc/irq/25/smp_affinity_list")
            && top.recommendation.contains("priority above 50")
            && top.recommendation.contains("chrt -f -p 39 113"),
        "{}",
        top.recommendation
    );
}

/// Without PREEMPT_RT the same softirq in a thread holds the CPU (bottom
/// halves are not preemptible there), so it stays "softirq BLOCK".
#[test]
fn without_preempt_rt_a_softirq_in_a_thread_is_still_the_softirq() {
    let mut b = Rt::new(FIFO40);
    b.uname = Some("Linux box 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian".into());
    normal(&mut b, 1..=10);
    b.hard(
        11,
        0,
        |b, t| {
            b.to(t + 3_000, IRQ25, FIFO50);
            b.softirq(t + 10_000, 4, true);
            b.softirq(t + 60_000, 4, false);
        },
        Some(11 * PERIOD + 90_000),
        (LOAD, 120),
    );
    let r = b.explain(10_000);
    assert_eq!(
        ns_of(
            &r,
            |c| matches!(c, Cause::Softirq { vector } if vector == "BLOCK")
        ),
        50_000
    );
}

/// A task of higher priority that was running when the wake-up came and
/// kept the CPU is ahead by priority, not "non-preemptible kernel code"
/// (before: "irq/25-virtio0-:113 held the CPU in non-preemptible kernel
/// code ... boot with preempt=full or use PREEMPT_RT" on an RT kernel). A
/// lower one that keeps the CPU still is non-preemptible code, with advice
/// for PREEMPT_RT.
#[test]
fn a_higher_priority_task_that_kept_the_cpu_is_ahead_by_priority() {
    let build = |task_prio: i32| {
        let mut b = Rt::new(task_prio);
        normal(&mut b, 1..=10);
        // The irq thread is already running when the timer fires.
        b.to(11 * PERIOD - 20_000, IRQ25, FIFO50);
        let run = Some(11 * PERIOD + 80_000);
        b.hard(11, 0, |_, _| {}, run, (LOAD, 120));
        b.explain(10_000)
    };
    let r = build(FIFO40);
    assert_eq!(
        r.causes[0].cause.category(),
        "irq_thread",
        "{:#?}",
        r.causes
    );
    assert_eq!(ns_of(&r, |c| c.category() == "non_preemptible_kernel"), 0);
    let r = build(FIFO95);
    let top = &r.causes[0];
    assert_eq!(
        top.cause,
        Cause::NonPreemptibleKernel {
            task: "irq/25-virtio0-".into()
        }
    );
    assert!(
        !top.recommendation.contains("use PREEMPT_RT"),
        "{}",
        top.recommendation
    );
    assert!(
        top.recommendation.contains("raw spinlocks"),
        "{}",
        top.recommendation
    );
}

/// ktimers/0 (SCHED_FIFO 1) running the TIMER softirq before a task that
/// is not real-time: a softirq thread that outranks it.
#[test]
fn ktimers_above_a_task_that_is_not_real_time_is_a_softirq_thread() {
    let mut b = Rt::new(120);
    normal(&mut b, 1..=10);
    b.hard(
        11,
        0,
        |b, t| {
            b.to(t + 1_000, KTIMERS, FIFO1);
            b.softirq(t + 2_000, 1, true);
            b.softirq(t + 40_000, 1, false);
        },
        Some(11 * PERIOD + 45_000),
        (LOAD, 120),
    );
    let r = b.explain(10_000);
    let top = &r.causes[0];
    assert_eq!(
        top.cause,
        Cause::SoftirqThread {
            task: "ktimers/0".into(),
            prio: FIFO1,
            task_prio: 120
        }
    );
    assert!(
        top.description.contains("rt priority 1"),
        "{}",
        top.description
    );
    assert!(
        top.recommendation.contains("timer softirqs")
            && top.recommendation.contains("SCHED_FIFO above 1"),
        "{}",
        top.recommendation
    );
}

/// The vCPU stood still for 5 ms inside the timer interrupt, between the
/// task's sched_waking and the end of the callback: a silent gap, not
/// "hrtimer interrupt (other expired timers)" (a 147 ms window of the lab's
/// PREEMPT_RT run under TCG was all "hrtimer interrupt").
#[test]
fn silence_inside_the_timer_interrupt_is_a_silent_gap() {
    let mut b = Rt::new(FIFO95);
    normal(&mut b, 1..=10);
    let t = 11 * PERIOD;
    b.arm(t);
    b.irq(t + 1_000, -1, "local_timer");
    b.expire(t + 1_500);
    b.wake(t + 2_000, ME);
    b.expire_exit(t + 5_002_000);
    b.irq_exit(t + 5_003_000, -1);
    b.to(t + 5_004_000, ME, FIFO95);
    b.switch(t + 5_009_000, ME, LOAD, 120);
    let r = b.explain(10_000);
    assert_eq!(
        ns_of(&r, |c| matches!(
            c,
            Cause::SilentGap {
                within: Silence::InInterrupt,
                ..
            }
        )),
        5_000_000
    );
    assert!(r.causes[0].description.contains("inside an interrupt"));
}

/// posix-timer on PREEMPT_RT: ktimers' callback wakes the task, the task
/// preempts ktimers, blocks at once on the lock the callback holds (PI
/// boosts ktimers), and is woken again, twice. One expiry is one period;
/// before, it made three (8783 periods "every 0 ns" for 3000 samples).
#[test]
fn one_expiry_that_wakes_the_task_three_times_is_one_period() {
    let mut b = Rt::new(FIFO95);
    for k in 1..=10 {
        b.soft(k, |_, t| t + 1_000);
    }
    let t = 11 * PERIOD;
    b.arm(t);
    b.irq(t + 1_000, -1, "local_timer");
    b.wake(t + 1_500, KTIMERS);
    b.irq_exit(t + 2_000, -1);
    b.to(t + 3_000, KTIMERS, FIFO1);
    b.softirq(t + 3_500, 8, true);
    b.expire(t + 4_000);
    for n in 0..3u64 {
        let at = t + 5_000 + n * 20_000;
        b.wake(at, ME);
        b.switch(at + 1_000, KTIMERS, ME, FIFO95);
        // Blocked on the callback's lock: ktimers runs boosted.
        b.switch(at + 2_000, ME, KTIMERS, FIFO95);
    }
    b.expire_exit(t + 70_000);
    b.softirq(t + 70_500, 8, false);
    b.switch(t + 71_000, KTIMERS, LOAD, 120);
    let r = b.explain(10_000);
    assert_eq!(r.periods, 11);
    let task = &r.selected[0];
    assert_eq!(task.median_interval_ns, PERIOD);
    // The period ends at the first switch-in.
    assert_eq!(r.table1[10].latency_ns, 6_000);
}

/// A soft hrtimer on PREEMPT_RT: its hard interrupt came on time, but
/// ktimers/0 (SCHED_FIFO 1) waited 100 us behind the disk's irq thread
/// (SCHED_FIFO 50) before running the callback. Before, that was "timer
/// interrupt delayed while irq/25-virtio0-:113 ran: interrupts off in the
/// kernel ... or use PREEMPT_RT".
#[test]
fn a_soft_hrtimer_waiting_for_ktimers_is_named_with_who_ran() {
    let mut b = Rt::new(FIFO95);
    for k in 1..=10 {
        b.soft(k, |_, t| t + 1_000);
    }
    let lat = b.soft(11, |b, t| {
        b.to(t + 1_000, IRQ25, FIFO50);
        t + 101_000
    });
    let r = b.explain(20_000);
    assert_eq!(r.late, 1);
    assert_eq!(r.windows[0].latency_ns, lat);
    assert!(r.table1.iter().all(|p| p.latency_ns > 0 && p.soft));
    let waited = ns_of(&r, |c| {
        matches!(c, Cause::SoftTimer { thread, task, prio: FIFO50 }
            if thread == "ktimers/0:15" && task == "irq/25-virtio0-:113")
    });
    assert_eq!(waited, 100_000);
    assert_eq!(ns_of(&r, |c| c.category() == "timer_irq_delay"), 0);
    let top = &r.causes[0];
    assert_eq!(top.cause.category(), "soft_timer");
    assert!(
        top.description
            .contains("waited for ktimers/0:15 while irq/25-virtio0-:113 (rt priority 50) ran"),
        "{}",
        top.description
    );
    assert!(
        top.recommendation
            .contains("clock_nanosleep from a SCHED_FIFO/RR thread"),
        "{}",
        top.recommendation
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("11 of 11 periods were soft hrtimer expiries")),
        "{:?}",
        r.notes
    );
}

/// The same wait behind a task that is not real-time (it cannot outrank
/// ktimers, so it held the CPU) and behind ktimers' own other work.
#[test]
fn a_soft_hrtimer_behind_the_load_or_other_softirq_work() {
    let mut b = Rt::new(FIFO95);
    for k in 1..=10 {
        b.soft(k, |_, t| t + 1_000);
    }
    b.soft(11, |_, t| t + 60_000);
    b.soft(12, |b, t| {
        // ktimers runs the TIMER softirq (timer_list timers) first.
        b.to(t + 1_000, KTIMERS, FIFO1);
        b.softirq(t + 1_500, 1, true);
        b.softirq(t + 40_000, 1, false);
        t + 41_000
    });
    let r = b.explain(20_000);
    assert_eq!(r.late, 2);
    let by = |needle: &str| {
        r.causes
            .iter()
            .find(|c| c.description.contains(needle))
            .unwrap_or_else(|| panic!("no cause {needle}: {:#?}", r.causes))
    };
    let load = by("while ld-net0r:7 (nice 0) ran");
    assert!(
        load.recommendation.contains("could not preempt"),
        "{}",
        load.recommendation
    );
    let own = by("ktimers/0:15 ran other softirq work");
    assert!(
        own.recommendation.contains("busy with other timers"),
        "{}",
        own.recommendation
    );
}

/// On PREEMPT_RT a soft timer's callback can be preempted or interrupted
/// in ktimers; what runs meanwhile wakes other tasks. Those wake-ups are
/// not the timer's: no period for the irq thread a hard interrupt wakes
/// inside the callback, nor for a task the preempting thread wakes.
#[test]
fn wakeups_while_a_soft_callback_is_preempted_are_not_the_timers() {
    let mut b = Rt::new(FIFO95);
    for k in 1..=10 {
        let t = k * PERIOD;
        b.arm(t);
        b.irq(t + 1_000, -1, "local_timer");
        b.wake(t + 1_500, KTIMERS);
        b.irq_exit(t + 2_000, -1);
        b.to(t + 3_000, KTIMERS, FIFO1);
        b.softirq(t + 3_500, 8, true);
        b.expire(t + 4_000);
        // A disk interrupt inside the callback wakes its thread, which
        // preempts ktimers and wakes a task of its own.
        b.irq(t + 4_500, 25, "virtio0-req.0");
        b.wake(t + 5_000, IRQ25);
        b.irq_exit(t + 5_500, 25);
        b.switch(t + 6_000, KTIMERS, IRQ25, FIFO50);
        b.wake(t + 7_000, 300);
        b.switch(t + 8_000, IRQ25, KTIMERS, FIFO1);
        b.wake(t + 9_000, ME);
        b.switch(t + 10_000, KTIMERS, ME, FIFO95);
        b.switch(t + 15_000, ME, KTIMERS, FIFO1);
        b.expire_exit(t + 15_500);
        b.softirq(t + 16_000, 8, false);
        b.switch(t + 17_000, KTIMERS, 300, 120);
        b.switch(t + 20_000, 300, LOAD, 120);
    }
    let r = b.explain(20_000);
    let pids: Vec<i32> = r.tasks_found.iter().map(|t| t.pid).collect();
    assert_eq!(pids, [ME], "{:#?}", r.tasks_found);
    assert_eq!(r.periods, 10);
    assert!(r.table1.iter().all(|p| p.latency_ns == 10_000));
}

/// ARM: no irq_vectors; the timer interrupt is an irq_handler_entry of
/// the generic timer (`arch_timer`), or of a board's own clock event
/// device whose name nobody lists (`mxc_timer1` here), learned from the
/// hrtimer expiring inside it. Its time is the timer interrupt's, not
/// "interrupt handler mxc_timer1", and a silent wait for it is a silent gap.
#[test]
fn arm_timer_interrupts_are_known_by_name_or_learned() {
    for timer in ["arch_timer", "mxc_timer1"] {
        let mut b = Rt::new(FIFO95);
        b.uname = None;
        let hard = |b: &mut Rt, k: u64, delay: u64| {
            let t = k * PERIOD;
            b.arm(t);
            b.irq(t + delay, 11, timer);
            b.expire(t + delay + 20_000);
            b.wake(t + delay + 21_000, ME);
            b.expire_exit(t + delay + 22_000);
            b.irq_exit(t + delay + 23_000, 11);
            b.to(t + delay + 24_000, ME, FIFO95);
            b.switch(t + delay + 29_000, ME, LOAD, 120);
        };
        for k in 1..=10 {
            hard(&mut b, k, 0);
        }
        hard(&mut b, 11, 300_000);
        let r = b.explain(100_000);
        assert!(!r.kernel.preempt_rt);
        assert_eq!(ns_of(&r, |c| c.category() == "irq_handler"), 0, "{timer}");
        assert_eq!(
            ns_of(&r, |c| matches!(
                c,
                Cause::SilentGap {
                    within: Silence::BeforeInterrupt,
                    ..
                }
            )),
            300_000 + 20_000,
            "{timer}: {:#?}",
            r.windows[0].parts
        );
    }
}

/// The task's previous cycle overran: it still ran (it had not slept
/// yet) when its next expiry passed, then armed that expiry, already
/// past, and slept. That time is the task's own, not "unexplained" (four
/// late windows of the lab's arm64 PREEMPT_RT mem-load run were).
#[test]
fn a_task_still_running_past_its_expiry_is_its_own_overrun() {
    let mut b = Rt::new(FIFO95);
    normal(&mut b, 1..=10);
    let t = 11 * PERIOD;
    // Period 10 ran long: the task runs from 10.9 ms to 11.4 ms.
    b.to(t - 100_000, ME, FIFO95);
    b.ev(
        t + 399_000,
        Kind::HrtimerStart {
            timer: 1,
            soft: t,
            expires: t,
        },
        "hrtimer_start",
    );
    b.switch(t + 400_000, ME, LOAD, 120);
    b.irq(t + 401_000, -1, "local_timer");
    b.expire(t + 401_500);
    b.wake(t + 402_000, ME);
    b.expire_exit(t + 402_500);
    b.irq_exit(t + 403_000, -1);
    b.to(t + 404_000, ME, FIFO95);
    b.switch(t + 409_000, ME, LOAD, 120);
    let r = b.explain(10_000);
    assert_eq!(r.late, 1);
    assert_eq!(
        ns_of(&r, |c| *c == Cause::TaskItself),
        400_000,
        "{:#?}",
        r.windows[0].parts
    );
    assert_eq!(ns_of(&r, |c| *c == Cause::Unexplained), 0);
    assert_eq!(r.causes[0].cause.category(), "task_itself");
}

/// ktimers/0 waited behind rcuc/0 (both SCHED_FIFO 1), which logged
/// nothing for 20 ms, not even the scheduler tick, though the trace logs
/// timer interrupts: the CPU did not run (a 917 ms window of the lab's
/// PREEMPT_RT timerfd run under TCG), not "waited while rcuc/0 ran". A
/// trace without interrupt events says nothing of the tick (nor of the
/// hard interrupt of the soft timer): there the wait stays rcuc's.
#[test]
fn a_silent_task_that_holds_the_soft_timer_thread_is_a_silent_gap() {
    for ticks in [true, false] {
        let mut b = Rt::new(FIFO95);
        for k in 1..=10 {
            b.soft(k, |_, t| t + 1_000);
        }
        b.soft(11, |b, t| {
            b.to(t + 1_000, 19, FIFO1);
            t + 20_001_000
        });
        if !ticks {
            b.recs
                .retain(|r| !matches!(r.kind, Kind::IrqEntry { .. } | Kind::IrqExit { .. }));
        }
        let r = b.explain(20_000);
        let silent = ns_of(
            &r,
            |c| matches!(c, Cause::SilentGap { task, within: Silence::InTask } if task == "rcuc/0:19"),
        );
        let rcuc = ns_of(
            &r,
            |c| matches!(c, Cause::SoftTimer { task, .. } | Cause::TimerIrqDelay { task } if task == "rcuc/0:19"),
        );
        if ticks {
            assert_eq!((silent, rcuc), (20_000_000, 0));
            assert!(r.causes[0]
                .description
                .contains("not even the scheduler tick"));
        } else {
            assert_eq!(silent, 0);
            assert!(rcuc >= 20_000_000, "{:#?}", r.windows[0].parts);
        }
    }
}

/// On PREEMPT_RT ktimers/0 runs soft hrtimers' callbacks in a thread. While
/// it runs another timer's callback (TCP pacing) ahead of the woken task,
/// that time is the callback's, named with its fix; the thread's time
/// around it stays the thread's, with the priorities that decided the order.
#[test]
fn a_callback_ktimers_runs_is_named_and_the_rest_is_the_threads() {
    const PACE: u64 = 0xffff_8881_06a3_c868;
    let mut b = Rt::new(FIFO40);
    let pace_kick = b.names.intern("tcp_pace_kick");
    normal(&mut b, 1..=10);
    let lat = b.hard(
        11,
        0,
        |b, t| {
            // ktimers/0, boosted to SCHED_FIFO 50 by a lock it holds.
            b.to(t + 1_000, KTIMERS, FIFO50);
            b.softirq(t + 2_000, 8, true);
            b.ev(
                t + 3_000,
                Kind::HrtimerExpireEntry {
                    timer: PACE,
                    now: Some(t + 3_000),
                },
                "hrtimer_expire_entry",
            );
            b.names.set_callback(PACE, t + 3_000, pace_kick);
            b.ev(
                t + 43_000,
                Kind::HrtimerExpireExit { timer: PACE },
                "hrtimer_expire_exit",
            );
            b.softirq(t + 45_000, 8, false);
        },
        Some(11 * PERIOD + 2_000 + 50_000),
        (LOAD, 120),
    );
    let r = b.explain(10_000);
    assert_eq!(r.windows[0].latency_ns, lat);
    let pacing = |c: &Cause| matches!(c, Cause::TimerCallback { function, .. } if function == "tcp_pace_kick");
    assert_eq!(ns_of(&r, pacing), 40_000);
    let thread = ns_of(
        &r,
        |c| matches!(c, Cause::SoftirqThread { task, prio: FIFO50, .. } if task == "ktimers/0:15"),
    );
    assert_eq!(thread, 9_000, "{:#?}", r.windows[0].parts);
    let row = r.causes.iter().find(|c| pacing(&c.cause)).unwrap();
    assert!(
        row.recommendation.contains("RPS/XPS"),
        "{}",
        row.recommendation
    );
}
