//! Detection layer: the periods of periodic timer tasks, found from the
//! trace itself.
//!
//! A period starts at the timer's intended expiry and ends when the woken
//! task is switched in. For every `hrtimer_expire_entry` the intended expiry
//! is the last armed soft expiry of that hrtimer (`hrtimer_start`; for a
//! timer re-armed without a traced start, the previous expiry plus the last
//! interval). Its place on the trace clock is the expire event's timestamp
//! minus the timer's own `now - softexpires`, so any trace clock works. A
//! `sched_waking`/`sched_wakeup` logged inside the callback ties the timer
//! to the task it wakes (clock_nanosleep, timerfd and itimer/SIGALRM all do
//! this), and the next `sched_switch` to that task ends the period.

use latlab_measure::stats::{Stats, Summary};
use std::collections::HashMap;

use serde::Serialize;

use crate::model::{FastMap, Kind, Rec, HRTIMER_SOFTIRQ};

/// How a period was found.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PeriodSource {
    /// hrtimer expiry, wake-up and context switch events.
    Hrtimer,
    /// A latlab `trace_marker` sample line (late samples only).
    Marker,
}

/// One activation of a periodic task.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Period {
    /// The task.
    pub pid: i32,
    /// Intended wake-up (trace clock ns).
    pub intended: u64,
    /// The expiry the kernel armed for this period: the timer's soft expiry
    /// on the timer's own clock (ns), as `hrtimer_start` logged it (or the
    /// previous expiry stepped by whole intervals, for a timer re-armed
    /// without a traced start). `intended` is this moment placed on the
    /// trace clock; with `trace_clock=mono` and a CLOCK_MONOTONIC timer the
    /// two differ only by how long the interrupt took to reach the callback,
    /// and this one is exactly what a program that armed the timer asked
    /// for. `None` for periods found from markers.
    pub expiry: Option<u64>,
    /// `hrtimer_expire_entry` (the timer interrupt), trace clock ns.
    pub expire: Option<u64>,
    /// `sched_waking` (or `sched_wakeup`) of the task.
    pub wake: Option<u64>,
    /// The moment the task runs (its `sched_switch`, or the marker's actual time).
    pub run: u64,
    /// CPU the timer fired on.
    pub timer_cpu: u32,
    /// CPU the task ran on.
    pub cpu: u32,
    /// Index of the event that ended the period (position in the trace).
    pub position: u64,
    /// How it was found.
    pub source: PeriodSource,
    /// The timer expired in softirq context (`HRTIMER` softirq, outside any
    /// hard interrupt): a soft hrtimer. On PREEMPT_RT every hrtimer not
    /// marked hard is one (posix timers, itimer, timerfd, the sleep of a
    /// task that is not real-time), and its callback runs in the `ktimers/N`
    /// thread (6.1-rt and later; `ksoftirqd/N` before), so the wake-up
    /// waits until that thread gets the CPU.
    pub soft: bool,
}

impl Period {
    /// Wake-up latency: from the intended time to the moment the task runs.
    pub fn latency(&self) -> u64 {
        self.run.saturating_sub(self.intended)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct TimerState {
    armed: Option<u64>,
    last: Option<u64>,
    interval: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct InExpire {
    entry: u64,
    intended: Option<u64>,
    expiry: Option<u64>,
    /// The task the callback runs on top of, and the hard interrupt depth:
    /// a wake-up counts as the callback's only in the same context (on
    /// PREEMPT_RT a soft timer's callback runs in a thread that can be
    /// preempted or interrupted, and what runs meanwhile wakes others).
    task: i32,
    depth: u8,
    soft: bool,
}

/// What the detector knows of one CPU.
#[derive(Debug, Default, Clone, Copy)]
struct CpuCtx {
    /// Running task (-1 unknown).
    current: i32,
    /// Hard interrupts being handled (irq_handler_entry, x86 vectors).
    depth: u8,
    /// The task running a softirq on this CPU and its vector: on
    /// PREEMPT_RT a softirq runs in a task and can be preempted, so it is
    /// the task's state, not the CPU's.
    softirq: Option<(i32, u8)>,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    intended: u64,
    expiry: Option<u64>,
    expire: u64,
    wake: u64,
    timer_cpu: u32,
    soft: bool,
}

/// Streaming period detector (feed it every event in time order).
#[derive(Debug, Default)]
pub struct Detector {
    timers: FastMap<u64, TimerState>,
    in_expire: Vec<Option<InExpire>>,
    cpus: Vec<CpuCtx>,
    pending: FastMap<i32, Pending>,
    /// The expiry (its `hrtimer_expire_entry` time) of each task's last
    /// period: one expiry makes one period, however often its callback
    /// wakes the task (on PREEMPT_RT a task woken from `ktimers` can block
    /// at once on a lock the callback holds and be woken again).
    last_expire: FastMap<i32, u64>,
    /// Periods found, in the order they ended.
    pub periods: Vec<Period>,
    /// Events seen.
    pub events: u64,
    /// First and last timestamps.
    pub span: Option<(u64, u64)>,
}

fn slot<T: Default + Clone>(v: &mut Vec<T>, cpu: u32) -> &mut T {
    let i = cpu as usize;
    if i >= v.len() {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl Detector {
    /// A fresh detector.
    pub fn new() -> Self {
        Self::default()
    }

    /// The earliest intended time of a period that has begun but not yet
    /// ended (a timer callback running, or a task woken and not yet
    /// switched in): its window may still need events from then on.
    pub fn oldest_open(&self) -> Option<u64> {
        let expiring = self.in_expire.iter().flatten().filter_map(|e| e.intended);
        let woken = self.pending.values().map(|p| p.intended);
        expiring.chain(woken).min()
    }

    /// Feeds one event.
    pub fn push(&mut self, r: &Rec) {
        let position = self.events;
        self.events += 1;
        self.span = Some(match self.span {
            None => (r.ts, r.ts),
            Some((a, b)) => (a.min(r.ts), b.max(r.ts)),
        });
        if r.cpu == u32::MAX {
            return;
        }
        let ctx = *slot(&mut self.cpus, r.cpu);
        match r.kind {
            Kind::HrtimerStart { timer, soft, .. } => {
                self.timers.entry(timer).or_default().armed = Some(soft);
            }
            Kind::HrtimerExpireEntry { timer, now } => {
                let t = self.timers.entry(timer).or_default();
                let intended_clock = match (t.armed.take(), t.last, t.interval) {
                    (Some(a), _, _) => Some(a),
                    (None, Some(last), Some(iv)) if iv > 0 => {
                        // Re-armed in the callback (hrtimer_forward): step
                        // whole intervals up to the expiry.
                        let mut next = last + iv;
                        if let Some(now) = now {
                            if now > next {
                                next += (now - next) / iv * iv;
                            }
                        }
                        Some(next)
                    }
                    _ => None,
                };
                if let Some(i) = intended_clock {
                    if let Some(last) = t.last {
                        if i > last {
                            t.interval = Some(i - last);
                        }
                    }
                    t.last = Some(i);
                }
                let intended = intended_clock.map(|i| match now {
                    Some(now) => r.ts.saturating_sub(now.saturating_sub(i)),
                    // No `now`: assume the trace clock is the timer's clock
                    // when the two are close, else assume no delay.
                    None if i.abs_diff(r.ts) < 1_000_000_000 => i.min(r.ts),
                    None => r.ts,
                });
                *slot(&mut self.in_expire, r.cpu) = Some(InExpire {
                    entry: r.ts,
                    intended,
                    expiry: intended_clock,
                    task: ctx.current,
                    depth: ctx.depth,
                    soft: ctx.depth == 0 && ctx.softirq == Some((ctx.current, HRTIMER_SOFTIRQ)),
                });
            }
            Kind::HrtimerExpireExit { .. } => {
                *slot(&mut self.in_expire, r.cpu) = None;
            }
            Kind::Wake { pid, .. } => {
                let Some(x) = *slot(&mut self.in_expire, r.cpu) else {
                    return;
                };
                let Some(intended) = x.intended else {
                    return;
                };
                // Only the callback's own wake-ups, each task once per expiry.
                if pid <= 0
                    || x.task != ctx.current
                    || x.depth != ctx.depth
                    || self.last_expire.get(&pid) == Some(&x.entry)
                    || self.pending.get(&pid).is_some_and(|p| p.expire == x.entry)
                {
                    return;
                }
                self.pending.insert(
                    pid,
                    Pending {
                        intended,
                        expiry: x.expiry,
                        expire: x.entry,
                        wake: r.ts,
                        timer_cpu: r.cpu,
                        soft: x.soft,
                    },
                );
            }
            Kind::IrqEntry { .. } => {
                let c = slot(&mut self.cpus, r.cpu);
                c.depth = c.depth.saturating_add(1);
            }
            Kind::IrqExit { .. } => {
                let c = slot(&mut self.cpus, r.cpu);
                c.depth = c.depth.saturating_sub(1);
            }
            Kind::SoftirqEntry { vec } => {
                let c = slot(&mut self.cpus, r.cpu);
                c.softirq = Some((c.current, vec));
            }
            Kind::SoftirqExit { .. } => {
                slot(&mut self.cpus, r.cpu).softirq = None;
            }
            Kind::Switch { next_pid, .. } => {
                let c = slot(&mut self.cpus, r.cpu);
                c.current = next_pid;
                // A switch happens in task context.
                c.depth = 0;
                if let Some(p) = self.pending.remove(&next_pid) {
                    self.last_expire.insert(next_pid, p.expire);
                    self.periods.push(Period {
                        pid: next_pid,
                        intended: p.intended,
                        expiry: p.expiry,
                        expire: Some(p.expire),
                        wake: Some(p.wake),
                        run: r.ts,
                        timer_cpu: p.timer_cpu,
                        cpu: r.cpu,
                        position,
                        source: PeriodSource::Hrtimer,
                        soft: p.soft,
                    });
                }
            }
            Kind::Marker {
                intended, actual, ..
            } => {
                let pid = if r.pid >= 0 { r.pid } else { ctx.current };
                // The marker is written right after `actual`: place the
                // period on the trace clock from the marker's own timestamp.
                let lat = actual.saturating_sub(intended);
                self.periods.push(Period {
                    pid,
                    intended: r.ts.saturating_sub(lat),
                    expiry: None,
                    expire: None,
                    wake: None,
                    run: r.ts,
                    timer_cpu: r.cpu,
                    cpu: r.cpu,
                    position,
                    source: PeriodSource::Marker,
                    soft: false,
                });
            }
            _ => {}
        }
    }
}

/// A task that woke periodically from a timer.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TaskSummary {
    /// Task id.
    pub pid: i32,
    /// Task name.
    pub comm: String,
    /// Periods found (timer wake-ups).
    pub periods: u64,
    /// Median time between intended wake-ups (ns).
    pub median_interval_ns: u64,
    /// Fraction of intervals within 10 % of the median (1.0 = perfectly periodic).
    pub regularity: f64,
    /// Latency percentiles over its periods (ns).
    pub latency: Summary,
    /// Whether the periods came from latlab trace_marker lines.
    pub from_markers: bool,
}

/// The `p`-th percentile (0-100, nearest rank) of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Latency statistics of periods, computed by latlab-measure (the one
/// place latlab computes min/mean/percentiles/max).
pub fn latency_summary<'a>(periods: impl IntoIterator<Item = &'a Period>) -> Summary {
    let mut stats = Stats::new();
    for p in periods {
        stats.record(p.latency());
    }
    stats.summary()
}

/// Groups periods by task and measures how periodic each task is.
pub fn summarize_tasks(periods: &[Period], comm: impl Fn(i32) -> String) -> Vec<TaskSummary> {
    let mut by: HashMap<i32, Vec<&Period>> = HashMap::new();
    for p in periods {
        by.entry(p.pid).or_default().push(p);
    }
    let mut out: Vec<TaskSummary> = by
        .into_iter()
        .map(|(pid, mut ps)| {
            // A task with timer periods: its marker periods only repeat its
            // late ones (and would count them twice).
            if ps.iter().any(|p| p.source == PeriodSource::Hrtimer) {
                ps.retain(|p| p.source == PeriodSource::Hrtimer);
            }
            let mut iv: Vec<u64> = ps
                .windows(2)
                .map(|w| w[1].intended.saturating_sub(w[0].intended))
                .collect();
            iv.sort_unstable();
            let median = percentile(&iv, 50.0);
            let regular = iv
                .iter()
                .filter(|&&v| v.abs_diff(median) * 10 <= median)
                .count();
            TaskSummary {
                pid,
                comm: comm(pid),
                periods: ps.len() as u64,
                median_interval_ns: median,
                regularity: if iv.is_empty() {
                    0.0
                } else {
                    regular as f64 / iv.len() as f64
                },
                latency: latency_summary(ps.iter().copied()),
                from_markers: ps.iter().all(|p| p.source == PeriodSource::Marker),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let sa = a.periods as f64 * a.regularity;
        let sb = b.periods as f64 * b.regularity;
        sb.total_cmp(&sa).then(a.pid.cmp(&b.pid))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_with_timer_periods_is_summarized_without_its_marker_lines() {
        let at = |k: u64, source| Period {
            pid: 42,
            intended: k * 100_000,
            expiry: None,
            expire: None,
            wake: None,
            run: k * 100_000
                + if source == PeriodSource::Marker {
                    900_000
                } else {
                    10_000
                },
            timer_cpu: 0,
            cpu: 0,
            position: k,
            source,
            soft: false,
        };
        let mut periods: Vec<Period> = (1..=10).map(|k| at(k, PeriodSource::Hrtimer)).collect();
        periods.push(at(5, PeriodSource::Marker));
        let tasks = summarize_tasks(&periods, |_| "latlab-cpu0".into());
        assert_eq!(tasks[0].periods, 10);
        assert_eq!(tasks[0].latency.max, 10_000);
        assert!((tasks[0].regularity - 1.0).abs() < 1e-9);
        assert!(!tasks[0].from_markers);
        // Marker lines alone still make a task.
        let tasks = summarize_tasks(&[at(1, PeriodSource::Marker)], |_| "t".into());
        assert!(tasks[0].from_markers);
    }

    /// One timer period of pid 42 on a trace clock 5 s ahead of the timer's
    /// clock: armed (or not) for `soft`, expiring `delay` late.
    fn period(det: &mut Detector, arm: Option<u64>, soft: u64, delay: u64) {
        let ahead = 5_000_000_000;
        let rec = |ts, kind| Rec {
            ts,
            cpu: 0,
            pid: 7,
            name: 0,
            kind,
        };
        if let Some(soft) = arm {
            det.push(&rec(
                soft + ahead - 100_000,
                Kind::HrtimerStart {
                    timer: 1,
                    soft,
                    expires: soft,
                },
            ));
        }
        let now = soft + delay;
        let entry = now + ahead;
        det.push(&rec(
            entry,
            Kind::HrtimerExpireEntry {
                timer: 1,
                now: Some(now),
            },
        ));
        det.push(&rec(
            entry + 1_000,
            Kind::Wake {
                pid: 42,
                target_cpu: 0,
                waking: true,
            },
        ));
        det.push(&rec(entry + 2_000, Kind::HrtimerExpireExit { timer: 1 }));
        det.push(&rec(
            entry + 3_000,
            Kind::Switch {
                prev_pid: 7,
                prev_runnable: true,
                next_pid: 42,
                next_prio: 9,
                next_comm: 0,
                prev_comm: 0,
            },
        ));
    }

    #[test]
    fn a_period_keeps_the_expiry_the_kernel_armed_on_the_timers_clock() {
        let mut det = Detector::new();
        period(&mut det, Some(1_000_000), 1_000_000, 4_000);
        period(&mut det, Some(1_200_000), 1_200_000, 2_000);
        // Re-armed in the callback (no hrtimer_start): the expiry is stepped by
        // the last interval, past a skipped one.
        period(&mut det, None, 1_600_000, 3_000);
        let expiries: Vec<_> = det.periods.iter().map(|p| p.expiry).collect();
        assert_eq!(
            expiries,
            [Some(1_000_000), Some(1_200_000), Some(1_600_000)]
        );
        // `intended` is the same moment on the trace clock.
        let intended: Vec<_> = det.periods.iter().map(|p| p.intended).collect();
        assert_eq!(intended, [5_001_000_000, 5_001_200_000, 5_001_600_000]);
    }
}
