//! The live view's figures.

use std::collections::BTreeMap;
use std::time::Duration;

use super::threads::ThreadInfo;
use super::Session;
use crate::document::*;
use crate::histograms::{self, LatencyKind, SparseHistogram};
use crate::loader::Counters;

/// A task as the live view shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTask {
    /// Thread id.
    pub tid: i32,
    /// Name.
    pub comm: String,
    /// Wake-ups measured so far.
    pub samples: u64,
    /// Latest interval's worst (ns), thread or wake-up latency.
    pub current_ns: u64,
    /// Its 99th percentile over the whole watch (ns).
    pub p99_ns: u64,
    /// Worst so far (ns).
    pub worst_ns: u64,
    /// Timer-interrupt part: worst irq latency (ns), if timer-driven.
    pub irq_worst_ns: Option<u64>,
    /// Late windows.
    pub late: u64,
    /// Its policy and real-time priority (`FIFO 95`, `OTHER`; `-` unknown).
    pub policy: String,
}

/// The live figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    /// Time watched.
    pub elapsed: Duration,
    /// Per task, worst first.
    pub tasks: Vec<LiveTask>,
    /// Spikes per hour with the 95 % interval.
    pub spikes: Spikes,
    /// Time since the worst spike, if any.
    pub since_worst: Option<Duration>,
    /// Top causes over the watch (description, late windows, share of late ns).
    pub top_causes: Vec<(String, u64, f64)>,
    /// The kernel's counters.
    pub counters: Counters,
}

impl Session {
    /// The live figures (reads the kernel's histograms).
    pub fn live(&mut self) -> Live {
        self.read_counts();
        let latest_interval = histograms::delta(&self.latest, &self.at_last_snapshot);
        let mut tasks: BTreeMap<i32, LiveTask> = BTreeMap::new();
        for ((tid, kind), b) in &self.latest {
            let h = SparseHistogram::from_counts(b);
            let t = tasks.entry(*tid).or_insert_with(|| LiveTask {
                tid: *tid,
                comm: self.comm_of(*tid),
                samples: 0,
                current_ns: 0,
                p99_ns: 0,
                worst_ns: 0,
                irq_worst_ns: None,
                late: self.tasks.get(tid).map_or(0, |t| t.late),
                policy: self
                    .info(*tid)
                    .map_or_else(|| "-".into(), ThreadInfo::policy_label),
            });
            if *kind == LatencyKind::Irq {
                t.irq_worst_ns = h.max();
                continue;
            }
            t.samples += h.count();
            t.p99_ns = t.p99_ns.max(h.value_at_percentile(99.0).unwrap_or(0));
            let exact = self.tasks.get(tid).and_then(|t| t.worst).map_or(0, |w| w.0);
            t.worst_ns = t.worst_ns.max(h.max().unwrap_or(0)).max(exact);
            if let Some(cur) = latest_interval.get(&(*tid, *kind)) {
                t.current_ns = t
                    .current_ns
                    .max(SparseHistogram::from_counts(cur).max().unwrap_or(0));
            }
        }
        let mut tasks: Vec<LiveTask> = tasks.into_values().collect();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.worst_ns));
        let totals = self.totals();
        let all_ns: u64 = totals.iter().map(|t| t.late_ns).sum();
        let top_causes = totals
            .iter()
            .take(3)
            .map(|t| {
                (
                    t.description.clone(),
                    t.late_windows,
                    if all_ns > 0 {
                        t.late_ns as f64 / all_ns as f64
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        let elapsed = self.started.elapsed();
        Live {
            elapsed,
            tasks,
            spikes: self.spikes(),
            since_worst: self
                .worst
                .map(|(_, at)| elapsed.saturating_sub(Duration::from_nanos(at))),
            top_causes,
            counters: self.side.counters(),
        }
    }
}
