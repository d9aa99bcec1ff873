//! Causes ranked across all late windows by the latency they add beyond
//! their share in normal windows.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::cause::Cause;
use super::context::Context;
use super::decompose::Part;
use crate::model::{Kind, Names, Sym};
use crate::separate::Window;

/// A cause ranked across all late windows.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// The hard interrupts that woke the task(s) named in the cause in late
    /// windows (the interrupt being handled on the CPU that logged the
    /// wake-up), most first: for an `irq/NN` thread its own IRQ, for
    /// `ktimers/N` the timer interrupt, for `ksoftirqd/N` the device whose
    /// softirq work it took over.
    pub woken_by: Vec<(String, u64)>,
    /// What to do about it.
    pub recommendation: String,
}

/// One process's part in a cause grouped by command name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PidRow {
    /// The process (thread) id.
    pub pid: i32,
    /// Latency it accounts for, summed over late windows (ns).
    pub late_ns: u64,
    /// Late windows it appears in.
    pub late_windows: u64,
}
/// Ranks causes across windows by the latency they add beyond their share
/// in normal windows. `parts[i]` is the decomposition of `windows[i]`.
/// Causes that name a task are grouped by the task's command name
/// ([`Cause::by_command`]), with each pid's part in [`CauseRow::pids`].
pub fn rank_causes(
    windows: &[Window],
    parts: &[Vec<Part>],
    names: &Names,
    ctx: &Context,
) -> Vec<CauseRow> {
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
    // Events per (pid) in late windows, by the task that logged them, and
    // the hard interrupts that woke each pid there.
    let mut per_pid: HashMap<i32, HashMap<u32, u64>> = HashMap::new();
    let mut woken: HashMap<i32, HashMap<u32, u64>> = HashMap::new();
    for w in windows.iter().filter(|w| w.late) {
        let mut cur: HashMap<u32, i32> = HashMap::new();
        cur.insert(w.p.cpu, w.task_cpu_state.current);
        cur.insert(w.p.timer_cpu, w.timer_cpu_state.current);
        let mut irq: HashMap<u32, Sym> = HashMap::new();
        for (cpu, st) in [
            (w.p.cpu, &w.task_cpu_state),
            (w.p.timer_cpu, &w.timer_cpu_state),
        ] {
            if let Some(&n) = st.irqs.last() {
                irq.insert(cpu, n);
            }
        }
        for r in &w.events {
            let pid = if r.pid >= 0 {
                r.pid
            } else {
                cur.get(&r.cpu).copied().unwrap_or(-1)
            };
            match r.kind {
                Kind::Switch { next_pid, .. } => {
                    cur.insert(r.cpu, next_pid);
                    irq.remove(&r.cpu);
                }
                Kind::IrqEntry { name, .. } => {
                    irq.insert(r.cpu, name);
                }
                Kind::IrqExit { .. } => {
                    irq.remove(&r.cpu);
                }
                Kind::Wake { pid: woke, .. } => {
                    if let Some(&n) = irq.get(&r.cpu) {
                        *woken.entry(woke).or_default().entry(n).or_default() += 1;
                    }
                }
                _ => {}
            }
            if pid > 0 && r.kind == Kind::Other {
                *per_pid.entry(pid).or_default().entry(r.name).or_default() += 1;
            }
        }
    }
    let top = |maps: &HashMap<i32, HashMap<u32, u64>>, pids: &[PidRow]| {
        let mut sum: HashMap<u32, u64> = HashMap::new();
        for m in pids.iter().filter_map(|p| maps.get(&p.pid)) {
            for (&n, &c) in m {
                *sum.entry(n).or_default() += c;
            }
        }
        let mut v: Vec<(String, u64)> = sum
            .into_iter()
            .map(|(n, c)| (names.get(n).to_string(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(5);
        v
    };
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
            let related = top(&per_pid, &pids);
            let woken_by = top(&woken, &pids);
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
                recommendation: shown.recommendation(&related, ctx.rt),
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
                woken_by,
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
