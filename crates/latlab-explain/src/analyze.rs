//! Analysis layer: per-window decomposition of the latency, the paper's
//! Table 2 (events per window, normal vs late), and causes ranked across all
//! late windows.
//!
//! A window runs from the intended expiry `E` to the moment the task runs
//! `S`, in three phases: `E..X` waiting for the timer interrupt
//! (`hrtimer_expire_entry` at `X`), `X..W` inside it up to the task's
//! wake-up `W`, and `W..S` waiting for the CPU. Every nanosecond is given to
//! exactly one [`Cause`], by what the relevant CPU was doing at that moment,
//! so the parts add up to the latency exactly.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::{softirq_name, Kind, Names};
use crate::separate::{CpuState, Window};

/// Why part of a wake-up latency went by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "category", rename_all = "snake_case")]
pub enum Cause {
    /// The timer interrupt came late while this task ran and the CPU logged
    /// events: interrupts were disabled in the kernel on its behalf.
    TimerIrqDelay {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
    },
    /// The timer interrupt came late and the CPU logged nothing at all in
    /// the gap: interrupts were off in untraced code, or the (virtual) CPU
    /// was not running (hypervisor preemption, SMI).
    SilentGap {
        /// The task the CPU was running (`comm:pid`; `comm` in a [`CauseRow`]).
        task: String,
    },
    /// Time inside the timer interrupt itself: other expired hrtimer
    /// callbacks and the wake-up.
    HrtimerInterrupt,
    /// A hard interrupt handler ran.
    IrqHandler {
        /// Handler (or x86 vector) name.
        name: String,
    },
    /// A softirq ran.
    Softirq {
        /// Vector name (NET_RX, NET_TX, BLOCK, TIMER, HRTIMER, RCU, SCHED, TASKLET, ...).
        vector: String,
    },
    /// Another task ran on the CPU before the woken task.
    OtherTask {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
        /// Its kernel priority (0-99 real-time, 100-139 normal; -1 unknown).
        prio: i32,
    },
    /// The task running when the wake-up came kept the CPU in the kernel
    /// with no preemption point (non-preemptible kernel code).
    NonPreemptibleKernel {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
    },
    /// The CPU was idle: leaving the idle state (C-state exit, or a halted
    /// vCPU waiting to be run again).
    IdleExit,
    /// Nothing in the trace says (state unknown, or the task itself).
    Unexplained,
}

impl Cause {
    /// The category name (the JSON `category` tag).
    pub fn category(&self) -> &'static str {
        match self {
            Cause::TimerIrqDelay { .. } => "timer_irq_delay",
            Cause::SilentGap { .. } => "silent_gap",
            Cause::HrtimerInterrupt => "hrtimer_interrupt",
            Cause::IrqHandler { .. } => "irq_handler",
            Cause::Softirq { .. } => "softirq",
            Cause::OtherTask { .. } => "other_task",
            Cause::NonPreemptibleKernel { .. } => "non_preemptible_kernel",
            Cause::IdleExit => "idle_exit",
            Cause::Unexplained => "unexplained",
        }
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        match self {
            Cause::TimerIrqDelay { task } => {
                format!("timer interrupt delayed while {task} ran: interrupts off in the kernel (or, on a VM, the virtual timer delivered late)")
            }
            Cause::SilentGap { task } => format!(
                "timer interrupt delayed, CPU logged nothing (running {task}): interrupts off in untraced code, or the vCPU was not running (hypervisor, SMI)"
            ),
            Cause::HrtimerInterrupt => "hrtimer interrupt (other expired timers, the wake-up itself)".into(),
            Cause::IrqHandler { name } => format!("interrupt handler {name}"),
            Cause::Softirq { vector } => format!("softirq {vector}"),
            Cause::OtherTask { task, prio } => {
                if (0..100).contains(prio) {
                    format!("real-time task {task} (prio {prio}) ran first")
                } else {
                    format!("task {task} ran first")
                }
            }
            Cause::NonPreemptibleKernel { task } => {
                format!("{task} held the CPU in non-preemptible kernel code")
            }
            Cause::IdleExit => "exit from an idle state".into(),
            Cause::Unexplained => "unexplained".into(),
        }
    }

    /// What to do about it.
    pub fn recommendation(&self, related: &[(String, u64)]) -> String {
        let allocs = related.iter().any(|(n, _)| n.starts_with("mm_page_alloc"));
        let base = match self {
            Cause::Softirq { vector } if vector.starts_with("NET") => {
                "network softirqs on the RT CPU: enable threaded NAPI (echo 1 > /sys/class/net/<dev>/threaded), move the NIC's IRQ affinity away from the RT CPU, or use PREEMPT_RT".to_string()
            }
            Cause::Softirq { vector } if vector == "BLOCK" => {
                "block I/O completion on the RT CPU: move the storage IRQ affinity away from it, or use PREEMPT_RT".into()
            }
            Cause::Softirq { vector } if vector == "RCU" => {
                "RCU callbacks on the RT CPU: boot with rcu_nocbs=<rt cpus> (and nohz_full)".into()
            }
            Cause::Softirq { .. } => {
                "softirq work on the RT CPU: move the interrupts that raise it away (IRQ affinity), or use PREEMPT_RT (softirqs become preemptible threads)".into()
            }
            Cause::IrqHandler { name } => format!(
                "interrupt {name} on the RT CPU: set its affinity (/proc/irq/N/smp_affinity) to other CPUs, or use threaded IRQs/PREEMPT_RT"
            ),
            Cause::NonPreemptibleKernel { task } if task.starts_with("ksoftirqd") => {
                "softirq work deferred to ksoftirqd held the CPU: threaded NAPI / IRQ affinity away from the RT CPU, and preempt=full or PREEMPT_RT".into()
            }
            Cause::NonPreemptibleKernel { task } => format!(
                "{task} ran long kernel code without a preemption point: boot with preempt=full (PREEMPT_DYNAMIC) or use PREEMPT_RT, or keep it off the RT CPU (affinity, cpusets, isolcpus)"
            ),
            Cause::TimerIrqDelay { task } => format!(
                "{task} disabled interrupts in the kernel: keep it off the RT CPU (affinity, cpusets), or use PREEMPT_RT (spinlocks no longer disable interrupts)"
            ),
            Cause::SilentGap { .. } => {
                "nothing was logged: if this is a VM, pin the vCPUs to dedicated host CPUs or use bare metal (check steal time); on bare metal look for SMIs (hwlatdetect) or enable more tracepoints".into()
            }
            Cause::OtherTask { task, prio } if (0..100).contains(prio) => format!(
                "{task} has equal or higher RT priority on the same CPU: give the measured task a higher priority or move {task} to another CPU"
            ),
            Cause::OtherTask { task, .. } => format!(
                "{task} was picked first: check the measured task's policy and priority (SCHED_FIFO), or move {task} away"
            ),
            Cause::IdleExit => {
                "deep idle states: hold /dev/cpu_dma_latency at 0 (latlab run does by default) or limit C-states (idle=poll, intel_idle.max_cstate=1); on a VM the halted vCPU must be rescheduled by the host (pin vCPUs)".into()
            }
            Cause::HrtimerInterrupt => {
                "time spent in the timer interrupt: many timers expire together; spread or drop other timers on the RT CPU (nohz_full)".into()
            }
            Cause::Unexplained => {
                "the trace does not say: record with more events (irq, irq_vectors, sched, timer, syscalls) and check for lost events".into()
            }
        };
        if allocs {
            format!("{base}; it allocated pages (mm_page_alloc) while the task waited: pre-fault and mlock memory, keep memory-hungry work off the RT CPU")
        } else {
            base
        }
    }
}

/// One part of a window's decomposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    /// The cause.
    pub cause: Cause,
    /// Nanoseconds it accounts for.
    pub ns: u64,
}

/// Interrupts that deliver the hrtimer expiry (x86 LAPIC timer vector, ARM arch timer).
fn is_timer_irq(name: &str) -> bool {
    name == "local_timer" || name.contains("arch_timer")
}

fn task_label(names: &Names, pid: i32) -> String {
    format!("{}:{}", names.comm(pid), pid)
}

/// Splits a window's latency into causes; the parts add up to
/// `w.p.latency()` exactly.
pub fn decompose(w: &Window, names: &Names) -> Vec<Part> {
    let p = &w.p;
    let e = p.intended;
    let s = p.run.max(e);
    let x = p.expire.unwrap_or(s).clamp(e, s);
    let wk = p.wake.unwrap_or(x).clamp(x, s);
    let mut timer_st = w.timer_cpu_state.clone();
    let mut task_st = w.task_cpu_state.clone();
    let same_cpu = p.timer_cpu == p.cpu;
    // Did the timer CPU log anything between E and X?
    // (The timer interrupt's own entry does not count.)
    let silent_a = !w.events.iter().any(|r| {
        r.cpu == p.timer_cpu
            && r.ts > e
            && r.ts < x
            && !matches!(r.kind, Kind::IrqEntry { name, .. } if is_timer_irq(names.get(name)))
    });
    let mut preempted: Option<i32> = None;
    let mut acc: BTreeMap<Cause, u64> = BTreeMap::new();
    let mut t = e;

    let classify =
        |t: u64, timer_st: &CpuState, task_st: &CpuState, preempted: Option<i32>| -> Cause {
            let (phase, st) = if t < x {
                (0, timer_st)
            } else if t < wk {
                (1, timer_st)
            } else {
                (2, task_st)
            };
            if phase == 1 {
                return Cause::HrtimerInterrupt;
            }
            if let Some(&irq) = st.irqs.last() {
                let n = names.get(irq);
                if phase == 0 && silent_a && is_timer_irq(n) && st.known {
                    // The interrupt came but nothing happened in it until
                    // the expiry: the CPU stood still (on a VM: the host
                    // ran something else).
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                    };
                }
                if is_timer_irq(n) || (phase == 2 && st.in_hrtimer) {
                    return Cause::HrtimerInterrupt;
                }
                return Cause::IrqHandler {
                    name: n.to_string(),
                };
            }
            if st.in_hrtimer {
                return Cause::HrtimerInterrupt;
            }
            if let Some(v) = st.softirq {
                return Cause::Softirq {
                    vector: softirq_name(v),
                };
            }
            if !st.known {
                return Cause::Unexplained;
            }
            if st.current == 0 {
                return Cause::IdleExit;
            }
            if st.current == p.pid {
                return Cause::Unexplained;
            }
            let task = task_label(names, st.current);
            match phase {
                0 if silent_a => Cause::SilentGap { task },
                0 => Cause::TimerIrqDelay { task },
                _ if preempted == Some(st.current) => Cause::NonPreemptibleKernel { task },
                _ => Cause::OtherTask { task, prio: -1 },
            }
        };

    let mut prio_of: HashMap<i32, i32> = HashMap::new();
    let mut boundaries = vec![x, wk];
    boundaries.retain(|&b| b > e && b < s);
    let mut bi = 0;
    let mut advance = |to: u64,
                       t: &mut u64,
                       timer_st: &CpuState,
                       task_st: &CpuState,
                       preempted: &mut Option<i32>,
                       acc: &mut BTreeMap<Cause, u64>,
                       prio_of: &HashMap<i32, i32>| {
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
            let mut c = classify(*t, timer_st, task_st, *preempted);
            if let Cause::OtherTask { task: _, prio } = &mut c {
                *prio = prio_of.get(&task_st.current).copied().unwrap_or(-1);
            }
            *acc.entry(c).or_default() += end - *t;
            *t = end;
        }
    };
    for r in &w.events {
        let ts = r.ts.clamp(e, s);
        advance(
            ts,
            &mut t,
            &timer_st,
            &task_st,
            &mut preempted,
            &mut acc,
            &prio_of,
        );
        if let Kind::Switch {
            next_pid,
            next_prio,
            ..
        } = r.kind
        {
            prio_of.insert(next_pid, next_prio);
        }
        if r.cpu == p.timer_cpu {
            timer_st.apply(r);
        }
        if r.cpu == p.cpu && !same_cpu {
            task_st.apply(r);
        }
        if same_cpu {
            task_st = timer_st.clone();
        }
    }
    advance(
        s,
        &mut t,
        &timer_st,
        &task_st,
        &mut preempted,
        &mut acc,
        &prio_of,
    );
    let mut parts: Vec<Part> = acc
        .into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(cause, ns)| Part { cause, ns })
        .collect();
    parts.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.cause.cmp(&b.cause)));
    parts
}

/// One row of the paper's Table 2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    /// Event name.
    pub event: String,
    /// Occurrences in normal windows.
    pub normal: u64,
    /// Occurrences in late windows.
    pub late: u64,
    /// Per normal window.
    pub normal_per_window: f64,
    /// Per late window.
    pub late_per_window: f64,
}

/// The paper's Table 2: event counts in normal vs late windows, normalised
/// per window, most over-represented in late windows first.
pub fn event_table(windows: &[Window], names: &Names) -> Vec<EventRow> {
    let n_late = windows.iter().filter(|w| w.late).count().max(1) as f64;
    let n_norm = windows.iter().filter(|w| !w.late).count().max(1) as f64;
    let mut counts: HashMap<u32, (u64, u64)> = HashMap::new();
    for w in windows {
        for r in &w.events {
            let c = counts.entry(r.name).or_default();
            if w.late {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
    }
    let mut rows: Vec<EventRow> = counts
        .into_iter()
        .map(|(n, (a, b))| EventRow {
            event: names.get(n).to_string(),
            normal: a,
            late: b,
            normal_per_window: a as f64 / n_norm,
            late_per_window: b as f64 / n_late,
        })
        .collect();
    rows.sort_by(|a, b| {
        let da = a.late_per_window - a.normal_per_window;
        let db = b.late_per_window - b.normal_per_window;
        db.total_cmp(&da).then(a.event.cmp(&b.event))
    });
    rows
}

/// A cause ranked across all late windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseRow {
    /// The cause.
    pub cause: Cause,
    /// Its description.
    pub description: String,
    /// Late windows it appears in.
    pub late_windows: u64,
    /// Normal (baseline) windows it appears in.
    pub normal_windows: u64,
    /// Latency it accounts for, summed over late windows (ns).
    pub late_ns: u64,
    /// Mean per late window (ns).
    pub mean_late_ns: u64,
    /// Mean per normal window (ns).
    pub mean_normal_ns: u64,
    /// Latency beyond its normal share: `late_ns - late windows x mean_normal_ns` (ns).
    pub excess_ns: u64,
    /// Share of all late-window latency (0-1).
    pub share: f64,
    /// For a cause that names a task: every process with that command name
    /// (`comm`) that took part in a late window, most late latency first.
    /// Short-lived processes (each `dd` of a disk load, each fork of a
    /// shell loop) have their own pids but are one cause.
    pub pids: Vec<PidRow>,
    /// Events the task(s) named in the cause logged in late windows, most first.
    pub related_events: Vec<(String, u64)>,
    /// What to do about it.
    pub recommendation: String,
}

/// One process's part in a cause grouped by command name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PidRow {
    /// The process (thread) id.
    pub pid: i32,
    /// Latency it accounts for, summed over late windows (ns).
    pub late_ns: u64,
    /// Late windows it appears in.
    pub late_windows: u64,
}

impl Cause {
    /// The task label (`comm:pid`) of a cause that names a task.
    fn task(&self) -> Option<&str> {
        match self {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => Some(task),
            _ => None,
        }
    }

    /// The same cause naming `task` instead.
    fn with_task(&self, label: String) -> Cause {
        let mut c = self.clone();
        match &mut c {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => *task = label,
            _ => {}
        }
        c
    }

    /// The cause grouped by command name (`dd:812` -> `dd`) and the pid it
    /// named. A task with an unknown name (`<...>:812`) stays on its own.
    pub fn by_command(&self) -> (Cause, Option<i32>) {
        let Some((comm, pid)) = self
            .task()
            .and_then(|t| t.rsplit_once(':'))
            .and_then(|(c, p)| Some((c, p.parse::<i32>().ok()?)))
        else {
            return (self.clone(), None);
        };
        if comm == "<...>" {
            return (self.clone(), None);
        }
        (self.with_task(comm.to_string()), Some(pid))
    }
}

/// Ranks causes across windows by the latency they add beyond their share
/// in normal windows. `parts[i]` is the decomposition of `windows[i]`.
/// Causes that name a task are grouped by the task's command name
/// ([`Cause::by_command`]), with each pid's part in [`CauseRow::pids`].
pub fn rank_causes(windows: &[Window], parts: &[Vec<Part>], names: &Names) -> Vec<CauseRow> {
    let n_late = windows.iter().filter(|w| w.late).count() as u64;
    let n_norm = windows.iter().filter(|w| !w.late).count() as u64;
    let total_late: u64 = windows
        .iter()
        .zip(parts)
        .filter(|(w, _)| w.late)
        .map(|(_, ps)| ps.iter().map(|p| p.ns).sum::<u64>())
        .sum();
    // (late windows, normal windows, late ns, normal ns) per grouped cause,
    // and (late windows, late ns) per pid of it.
    let mut agg: BTreeMap<Cause, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut by_pid: BTreeMap<Cause, BTreeMap<i32, (u64, u64)>> = BTreeMap::new();
    for (w, ps) in windows.iter().zip(parts) {
        let mut in_window: BTreeMap<Cause, u64> = BTreeMap::new();
        for p in ps {
            let (group, pid) = p.cause.by_command();
            if let (Some(pid), true) = (pid, w.late) {
                let e = by_pid
                    .entry(group.clone())
                    .or_default()
                    .entry(pid)
                    .or_default();
                e.0 += 1;
                e.1 += p.ns;
            }
            *in_window.entry(group).or_default() += p.ns;
        }
        for (group, ns) in in_window {
            let a = agg.entry(group).or_default();
            if w.late {
                a.0 += 1;
                a.2 += ns;
            } else {
                a.1 += 1;
                a.3 += ns;
            }
        }
    }
    // Events per (pid) in late windows, by the task that logged them.
    let mut per_pid: HashMap<i32, HashMap<u32, u64>> = HashMap::new();
    for w in windows.iter().filter(|w| w.late) {
        let mut cur: HashMap<u32, i32> = HashMap::new();
        cur.insert(w.p.cpu, w.task_cpu_state.current);
        cur.insert(w.p.timer_cpu, w.timer_cpu_state.current);
        for r in &w.events {
            let pid = if r.pid >= 0 {
                r.pid
            } else {
                cur.get(&r.cpu).copied().unwrap_or(-1)
            };
            if let Kind::Switch { next_pid, .. } = r.kind {
                cur.insert(r.cpu, next_pid);
            }
            if pid > 0 && r.kind == Kind::Other {
                *per_pid.entry(pid).or_default().entry(r.name).or_default() += 1;
            }
        }
    }
    let mut rows: Vec<CauseRow> = agg
        .into_iter()
        .filter(|(_, a)| a.0 > 0)
        .map(|(cause, (lw, nw, lns, nns))| {
            let mean_late = lns / n_late.max(1);
            let mean_normal = nns.checked_div(n_norm).unwrap_or(0);
            let mut pids: Vec<PidRow> = by_pid
                .get(&cause)
                .map(|m| {
                    m.iter()
                        .map(|(&pid, &(late_windows, late_ns))| PidRow {
                            pid,
                            late_ns,
                            late_windows,
                        })
                        .collect()
                })
                .unwrap_or_default();
            pids.sort_by(|a, b| b.late_ns.cmp(&a.late_ns).then(a.pid.cmp(&b.pid)));
            let mut events: HashMap<u32, u64> = HashMap::new();
            for m in pids.iter().filter_map(|p| per_pid.get(&p.pid)) {
                for (&n, &c) in m {
                    *events.entry(n).or_default() += c;
                }
            }
            let mut related: Vec<(String, u64)> = events
                .into_iter()
                .map(|(n, c)| (names.get(n).to_string(), c))
                .collect();
            related.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            related.truncate(5);
            // One pid: named as before (`hog:7`); several: `dd (14 pids)`.
            let shown = match (cause.task(), pids.as_slice()) {
                (Some(comm), [one]) => cause.with_task(format!("{comm}:{}", one.pid)),
                (Some(comm), many) if many.len() > 1 => {
                    cause.with_task(format!("{comm} ({} pids)", many.len()))
                }
                _ => cause.clone(),
            };
            CauseRow {
                description: shown.describe(),
                recommendation: shown.recommendation(&related),
                late_windows: lw,
                normal_windows: nw,
                late_ns: lns,
                mean_late_ns: mean_late,
                mean_normal_ns: mean_normal,
                excess_ns: lns.saturating_sub(mean_normal * n_late),
                share: if total_late > 0 {
                    lns as f64 / total_late as f64
                } else {
                    0.0
                },
                pids,
                related_events: related,
                cause,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.excess_ns
            .cmp(&a.excess_ns)
            .then(b.late_ns.cmp(&a.late_ns))
            .then(a.cause.cmp(&b.cause))
    });
    rows
}

/// A cause category summed over all its causes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryRow {
    /// Category name ([`Cause::category`]).
    pub category: String,
    /// Late windows where it appears.
    pub late_windows: u64,
    /// Normal windows where it appears.
    pub normal_windows: u64,
    /// Latency it accounts for in late windows (ns).
    pub late_ns: u64,
    /// Mean per normal window (ns).
    pub mean_normal_ns: u64,
    /// Share of all late-window latency (0-1).
    pub share: f64,
}

/// Causes summed by category, largest share of late latency first.
pub fn categories(windows: &[Window], parts: &[Vec<Part>]) -> Vec<CategoryRow> {
    let n_norm = windows.iter().filter(|w| !w.late).count() as u64;
    let mut agg: BTreeMap<&'static str, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut total = 0u64;
    for (w, ps) in windows.iter().zip(parts) {
        let mut seen: Vec<&'static str> = Vec::new();
        for p in ps {
            let c = p.cause.category();
            let a = agg.entry(c).or_default();
            if w.late {
                a.2 += p.ns;
                total += p.ns;
            } else {
                a.3 += p.ns;
            }
            if !seen.contains(&c) {
                seen.push(c);
                if w.late {
                    a.0 += 1;
                } else {
                    a.1 += 1;
                }
            }
        }
    }
    let mut rows: Vec<CategoryRow> = agg
        .into_iter()
        .filter(|(_, a)| a.0 > 0)
        .map(|(c, (lw, nw, lns, nns))| CategoryRow {
            category: c.to_string(),
            late_windows: lw,
            normal_windows: nw,
            late_ns: lns,
            mean_normal_ns: nns.checked_div(n_norm).unwrap_or(0),
            share: if total > 0 {
                lns as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    rows.sort_by(|a, b| b.late_ns.cmp(&a.late_ns).then(a.category.cmp(&b.category)));
    rows
}
