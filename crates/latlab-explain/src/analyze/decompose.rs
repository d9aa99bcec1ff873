//! The decomposition of one window's latency into [`Part`]s, phase by phase
//! (see the [`analyze`](super) module docs).

use std::collections::BTreeMap;

use serde::Serialize;

use super::cause::{Cause, Silence, STALL_NS, TASK_STALL_NS};
use super::context::Context;
use crate::model::{softirq_name, Kind, Names, ThreadKind, HRTIMER_SOFTIRQ, TIMER_SOFTIRQ};
use crate::separate::{CpuState, Window};
use crate::timer_work::TimerWork;

/// One part of a window's decomposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Part {
    /// The cause.
    pub cause: Cause,
    /// Nanoseconds it accounts for.
    pub ns: u64,
}

pub(super) fn task_label(names: &Names, pid: i32) -> String {
    format!("{}:{}", names.comm(pid), pid)
}

/// The phases of a window (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// `E..H`: waiting for the timer interrupt.
    Interrupt,
    /// `H..X`: a soft hrtimer waiting for its softirq thread.
    SoftWait,
    /// `X..W`: in the callback, up to the wake-up.
    Callback,
    /// `W..S`: woken, waiting for the CPU.
    Run,
}

/// Splits a window's latency into causes; the parts add up to
/// `w.p.latency()` exactly.
pub fn decompose(w: &Window, names: &Names, ctx: &Context) -> Vec<Part> {
    let p = &w.p;
    let e = p.intended;
    let s = p.run.max(e);
    let x = p.expire.unwrap_or(s).clamp(e, s);
    let wk = p.wake.unwrap_or(x).clamp(x, s);
    let mut timer_st = w.timer_cpu_state.clone();
    let mut task_st = w.task_cpu_state.clone();
    let same_cpu = p.timer_cpu == p.cpu;
    let timer_irq = |st: &CpuState| st.irqs.iter().any(|&i| ctx.is_timer_irq(i, names));
    // A soft timer: the hard timer interrupt that raised the softirq (the
    // first one on the timer CPU from E on), and the thread that ran the
    // callback (the task on the timer CPU at X).
    let (h, soft_thread) = if p.soft {
        let mut h = if timer_irq(&timer_st) { Some(e) } else { None };
        let mut thread = timer_st.current;
        for r in w.events.iter().filter(|r| r.cpu == p.timer_cpu) {
            match r.kind {
                Kind::IrqEntry { name, .. } if h.is_none() && ctx.is_timer_irq(name, names) => {
                    h = Some(r.ts.clamp(e, x))
                }
                Kind::Switch { next_pid, .. } if r.ts <= x => thread = next_pid,
                Kind::HrtimerExpireEntry { .. } if r.ts >= x => break,
                _ => {}
            }
        }
        (h.unwrap_or(x).min(x), thread)
    } else {
        (x, -1)
    };
    // Did the timer CPU log anything between E and the timer interrupt?
    // (The timer interrupt's own entry does not count.)
    let silent_a = !w.events.iter().any(|r| {
        r.cpu == p.timer_cpu
            && r.ts > e
            && r.ts < h
            && !matches!(r.kind, Kind::IrqEntry { name, .. } if ctx.is_timer_irq(name, names))
    });
    // Stretches of over STALL_NS without an event on the two CPUs.
    let mut stalls: Vec<(u32, u64, u64)> = Vec::new();
    let mut last = [(p.timer_cpu, e), (p.cpu, e)];
    for r in &w.events {
        for (cpu, at) in last.iter_mut() {
            if r.cpu == *cpu {
                let ts = r.ts.clamp(e, s);
                if ts >= *at + STALL_NS {
                    stalls.push((*cpu, *at, ts));
                }
                *at = ts.max(*at);
            }
        }
    }
    let stalled = |cpu: u32, t: u64| stalls.iter().any(|&(c, a, b)| c == cpu && a <= t && t < b);
    let stalled_task = |cpu: u32, t: u64| {
        ctx.ticks_traced
            && stalls
                .iter()
                .any(|&(c, a, b)| c == cpu && a <= t && t < b && b - a >= TASK_STALL_NS)
    };
    // The woken task's priority, as it was switched in.
    let task_prio = w
        .events
        .iter()
        .rev()
        .find_map(|r| match r.kind {
            Kind::Switch {
                next_pid,
                next_prio,
                ..
            } if next_pid == p.pid => Some(next_prio),
            _ => None,
        })
        .unwrap_or(-1);
    let mut preempted: Option<i32> = None;
    let mut acc: BTreeMap<Cause, u64> = BTreeMap::new();
    let mut t = e;
    let work = TimerWork::of(w, names, ctx);
    // Timer work for another timer's callback, named.
    let other_timer = |cpu: u32, t: u64, st: &CpuState| {
        work.at(cpu, t, st, names)
            .map(|(f, timer)| Cause::TimerCallback {
                function: names.get(f).to_string(),
                timer,
            })
    };

    let classify =
        |t: u64, timer_st: &CpuState, task_st: &CpuState, preempted: Option<i32>| -> Cause {
            let phase = if t < h {
                Phase::Interrupt
            } else if t < x {
                Phase::SoftWait
            } else if t < wk {
                Phase::Callback
            } else {
                Phase::Run
            };
            let (st, cpu) = if phase == Phase::Run {
                (task_st, p.cpu)
            } else {
                (timer_st, p.timer_cpu)
            };
            let waiting_for_thread = |st: &CpuState| Cause::SoftTimer {
                thread: task_label(names, soft_thread),
                task: task_label(names, st.current),
                prio: st.current_prio.unwrap_or(-1),
            };
            if phase == Phase::Callback {
                // A soft timer's callback runs in a thread that can be preempted.
                if p.soft
                    && st.known
                    && st.irqs.is_empty()
                    && st.current != soft_thread
                    && st.current > 0
                {
                    return waiting_for_thread(st);
                }
                if stalled(cpu, t) && st.known {
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::InInterrupt,
                    };
                }
                return Cause::HrtimerInterrupt;
            }
            if let Some(&irq) = st.irqs.last() {
                let is_timer = ctx.is_timer_irq(irq, names);
                // Another timer's callback running in the interrupt: the
                // CPU was busy with it, not standing still.
                let in_callback = work.running(cpu, st, names).is_some();
                if phase == Phase::Interrupt && silent_a && is_timer && st.known && !in_callback {
                    // The interrupt came but nothing happened in it until
                    // the expiry: the CPU stood still (on a VM: the host
                    // ran something else).
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::BeforeInterrupt,
                    };
                }
                if stalled(cpu, t) && st.known {
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::InInterrupt,
                    };
                }
                if is_timer || (phase == Phase::Run && st.in_hrtimer) {
                    return other_timer(cpu, t, st).unwrap_or(Cause::HrtimerInterrupt);
                }
                return Cause::IrqHandler {
                    name: names.get(irq).to_string(),
                };
            }
            if st.in_hrtimer && !(p.soft && phase == Phase::SoftWait) {
                return other_timer(cpu, t, st).unwrap_or(Cause::HrtimerInterrupt);
            }
            // Without PREEMPT_RT a softirq holds the CPU; with it, the
            // softirq is its thread's time (below). The timer softirqs'
            // time is their callbacks'.
            if let (Some(v), false) = (st.softirq, ctx.rt) {
                if v == HRTIMER_SOFTIRQ || v == TIMER_SOFTIRQ {
                    if let Some(c) = other_timer(cpu, t, st) {
                        return c;
                    }
                }
                return Cause::Softirq {
                    vector: softirq_name(v),
                };
            }
            if !st.known {
                return Cause::Unexplained;
            }
            if st.current == 0 {
                // Woken, the idle CPU switches at once: a long silence
                // there is the CPU not running, not its idle state.
                if phase == Phase::Run && stalled(cpu, t) {
                    return Cause::SilentGap {
                        task: task_label(names, 0),
                        within: Silence::InIdle,
                    };
                }
                return Cause::IdleExit;
            }
            if st.current == p.pid {
                // Before the wake-up: the task had not slept yet. After
                // it, the trace contradicts itself.
                return if phase == Phase::Run {
                    Cause::Unexplained
                } else {
                    Cause::TaskItself
                };
            }
            let task = task_label(names, st.current);
            if matches!(phase, Phase::SoftWait | Phase::Run) && stalled_task(cpu, t) {
                return Cause::SilentGap {
                    task,
                    within: Silence::InTask,
                };
            }
            match phase {
                Phase::Interrupt if silent_a => Cause::SilentGap {
                    task,
                    within: Silence::BeforeInterrupt,
                },
                Phase::Interrupt => Cause::TimerIrqDelay { task },
                Phase::SoftWait => waiting_for_thread(st),
                _ => {
                    let prio = st.current_prio.unwrap_or(-1);
                    let outranks = prio >= 0 && task_prio >= 0 && prio <= task_prio;
                    if !outranks && preempted == Some(st.current) {
                        return Cause::NonPreemptibleKernel { task };
                    }
                    match ThreadKind::of(names.comm(st.current)) {
                        ThreadKind::IrqThread(irq) => Cause::IrqThread {
                            task,
                            irq,
                            prio,
                            task_prio,
                        },
                        ThreadKind::Ktimers | ThreadKind::Ksoftirqd => Cause::SoftirqThread {
                            task,
                            prio,
                            task_prio,
                        },
                        ThreadKind::Rcu | ThreadKind::Kworker | ThreadKind::Stopper => {
                            Cause::KernelThread {
                                task,
                                prio,
                                task_prio,
                            }
                        }
                        ThreadKind::Other => Cause::OtherTask {
                            task,
                            prio,
                            task_prio,
                        },
                    }
                }
            }
        };

    let mut boundaries = vec![h, x, wk];
    boundaries.retain(|&b| b > e && b < s);
    boundaries.dedup();
    let mut bi = 0;
    let mut advance = |to: u64,
                       t: &mut u64,
                       timer_st: &CpuState,
                       task_st: &CpuState,
                       preempted: &mut Option<i32>,
                       acc: &mut BTreeMap<Cause, u64>| {
        // Split at phase boundaries between *t and `to`.
        while *t < to {
            while bi < boundaries.len() && boundaries[bi] <= *t {
                bi += 1;
            }
            let end = boundaries
                .get(bi)
                .copied()
                .filter(|&b| b < to)
                .unwrap_or(to);
            if *t >= wk && preempted.is_none() {
                *preempted = Some(if task_st.known { task_st.current } else { -2 });
            }
            let c = classify(*t, timer_st, task_st, *preempted);
            *acc.entry(c).or_default() += end - *t;
            *t = end;
        }
    };
    for r in &w.events {
        let ts = r.ts.clamp(e, s);
        advance(ts, &mut t, &timer_st, &task_st, &mut preempted, &mut acc);
        if r.cpu == p.timer_cpu {
            timer_st.apply(r);
        }
        if r.cpu == p.cpu && !same_cpu {
            task_st.apply(r);
        }
        if same_cpu {
            task_st.clone_from(&timer_st);
        }
    }
    advance(s, &mut t, &timer_st, &task_st, &mut preempted, &mut acc);
    let mut parts: Vec<Part> = acc
        .into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(cause, ns)| Part { cause, ns })
        .collect();
    parts.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.cause.cmp(&b.cause)));
    parts
}
