//! The end of a watch: its cost, the per-task histograms and the
//! [`WatchDocument`].

use std::collections::BTreeMap;
use std::time::Duration;

use latlab_explain::WindowReport;

use super::snapshots::merge_pairs;
use super::{own_usage, Session, ENDED_TID};
use crate::document::*;
use crate::histograms::{LatencyKind, SparseHistogram};
use crate::loader::Counters;
use crate::select::Policy;

impl Session {
    /// What watching cost so far.
    pub fn overhead(&self) -> Overhead {
        let (cpu, rss) = own_usage();
        let (bpf, runs) = self.side.kernel_time();
        let hours = self.started.elapsed().as_secs_f64() / 3600.0;
        let total = cpu + bpf;
        Overhead {
            process_cpu_ns: cpu.as_nanos() as u64,
            bpf_ns: bpf.as_nanos() as u64,
            bpf_runs: runs,
            cpu_ns_per_hour: if hours > 0.0 {
                (total.as_nanos() as f64 / hours) as u64
            } else {
                0
            },
            max_rss_kib: rss,
            own_late_windows: self.own_late.0,
            own_late_ns: self.own_late.1,
        }
    }

    /// The per-task histograms so far, by kind.
    pub fn task_histograms(&mut self) -> Vec<(i32, String, LatencyKind, SparseHistogram)> {
        self.read_counts();
        self.latest
            .iter()
            .map(|((tid, kind), b)| {
                (
                    *tid,
                    self.comm_of(*tid),
                    *kind,
                    SparseHistogram::from_counts(b),
                )
            })
            .collect()
    }

    /// The result: reads what is left, ends the current interval (a last
    /// snapshot, joined to the one before when under half a second) and
    /// gathers everything.
    pub fn finish(&mut self, stopped_by: &str) -> WatchDocument {
        // What came since the last poll (for the tracefs side, the events
        // it has not read yet: the command's last ~100 ms), then the last
        // interval, joined to the one before when shorter than half a
        // second (no sliver in the long-term plot; its counts are kept).
        if let Err(e) = self.take_what_came(Duration::ZERO, None) {
            self.notes
                .insert(format!("the last events could not be read at the end: {e}"));
        }
        let short = self.last_snapshot.elapsed() < Duration::from_millis(500);
        self.snapshot();
        let n = self.snapshots.len();
        if short && n >= 2 {
            let joined = merge_pairs(&self.snapshots[n - 2..]);
            self.snapshots.truncate(n - 2);
            self.snapshots.extend(joined);
        }
        let mut overall = SparseHistogram::default();
        let mut tasks: BTreeMap<i32, TaskResult> = BTreeMap::new();
        for ((tid, kind), b) in &self.latest {
            let h = SparseHistogram::from_counts(b);
            if *kind != LatencyKind::Irq {
                overall.add(&h);
            }
            let live = self.tasks.get(tid).cloned().unwrap_or_default();
            let info = self.info(*tid).filter(|_| *tid != ENDED_TID);
            let t = tasks.entry(*tid).or_insert_with(|| TaskResult {
                tid: *tid,
                comm: self.comm_of(*tid),
                policy: info.and_then(|i| i.policy),
                rt_priority: info
                    .filter(|i| matches!(i.policy, Some(Policy::Fifo | Policy::Rr)))
                    .map(|i| i.rt_priority),
                thread: None,
                irq: None,
                wakeup: None,
                late_windows: live.late,
                worst_ns: live.worst.map(|w| w.0),
                worst_at_ns: live.worst.map(|w| w.1),
            });
            let result = KindResult {
                summary: h.summary(),
                unsupported_percentiles: crate::stats::unsupported(h.count()),
                histogram: h,
            };
            match kind {
                LatencyKind::Thread => t.thread = Some(result),
                LatencyKind::Irq => t.irq = Some(result),
                LatencyKind::Wakeup => t.wakeup = Some(result),
            }
        }
        let counters = self.side.counters();
        self.counts.throttled = counters.throttled;
        self.counts.lost = counters.lost;
        self.counts.events_lost = counters.events_lost;
        let (causes, categories, worst_windows, analysed) = self.analysis();
        self.counts.analysed = analysed;
        let mut notes: Vec<String> = self.notes.iter().cloned().collect();
        notes.extend(self.side.notes());
        notes.extend(self.policy_notes(&tasks));
        if self.own_late.0 > 0 {
            notes.push(format!(
                "watch's own process (latlab) held a watched thread's CPU in {} late windows, {} of their latency: that is watch's cost (in its overhead), never one of the causes",
                self.own_late.0,
                latlab_measure::units::format_ns(self.own_late.1)
            ));
        }
        if self.functions.hidden() && !self.functions.is_empty() {
            notes.push(
                "timer callbacks are named by address: /proc/kallsyms shows this process no addresses (kernel.kptr_restrict); run latlab as root, or grant CAP_SYSLOG, to have them named"
                    .to_string(),
            );
        }
        if counters.events_lost > 0 {
            notes.push(format!(
                "{} trace events were lost (the tracefs ring buffers overran: the machine was too busy for watch's reader); wake-ups around them may be missing",
                counters.events_lost
            ));
        }
        if counters.hist_full > 0 {
            notes.push(format!(
                "{} samples were not counted: the kernel's histogram map was full (65536 buckets)",
                counters.hist_full
            ));
        }
        if counters.watch_full > 0 {
            notes.push(format!(
                "{} threads started by watched tasks were not watched: the kernel's set of watched threads was full ({} alive at once at most)",
                counters.watch_full,
                crate::bpf_emulator::MAX_WATCHED
            ));
        }
        if counters.shared > 0 {
            notes.push(format!(
                "{} wake-ups were not measured: another watched thread whose id is equal modulo 65536 was woken at the same time (they share a slot of the kernel's pending table)",
                counters.shared
            ));
        }
        if counters.throttled > 0 {
            notes.push(format!(
                "{} late wake-ups were counted but their windows not sent (over {} per second and CPU); the causes are ranked from the ones sent",
                counters.throttled, self.opts.max_windows_per_sec
            ));
        }
        if counters.lost > 0 {
            notes.push(format!(
                "{} windows did not fit into the ring buffer (user space fell behind)",
                counters.lost
            ));
        }
        if self.counts.truncated > 0 {
            notes.push(format!(
                "{} windows began before their CPU's ring of 512 events reached back: explained from the events that remained",
                self.counts.truncated
            ));
        }
        let n = overall.count();
        for claim in crate::stats::unsupported(n) {
            notes.push(format!(
                "overall: {claim}: that percentile is not a measured figure"
            ));
        }
        if n == 0 {
            notes.push(
                "no wake-up of a watched task was seen: check the selection (`latlab watch --pid`, `--comm`, `--rt`)"
                    .into(),
            );
        }
        let spikes = self.spikes();
        WatchDocument {
            envelope: latlab_envelope::Envelope::at(
                std::env::args().collect(),
                self.started_unix_s,
                self.system.clone(),
            ),
            duration_ns: self.started.elapsed().as_nanos() as u64,
            stopped_by: stopped_by.to_string(),
            settings: WatchSettings {
                selection: self.opts.selection.describe(),
                backend: self.side.backend(),
                threshold_ns: self.opts.threshold_ns,
                interval_ns: self.opts.interval.as_nanos() as u64,
                max_windows_per_sec: self.opts.max_windows_per_sec,
                baseline_every: self.opts.baseline_every,
                path_reads: self.side.path_reads(),
            },
            overall: Overall {
                latency: overall.summary(),
            },
            tasks: tasks.into_values().collect(),
            spikes,
            windows_seen: self.counts.clone(),
            causes,
            categories,
            cause_totals: self.totals(),
            worst_windows,
            snapshots: self.snapshots.clone(),
            overhead: self.overhead(),
            notes,
        }
    }

    /// What the result says of the watched threads' policies: the late
    /// windows of threads that are not real-time left out of the causes,
    /// or, when none was real-time, that their policy is the first fix.
    pub(super) fn policy_notes(&self, tasks: &BTreeMap<i32, TaskResult>) -> Vec<String> {
        let not_real_time: Vec<String> = tasks
            .values()
            .filter(|t| t.late_windows > 0)
            .filter(|t| t.policy.is_some_and(|p| !p.real_time()))
            .map(|t| {
                format!(
                    "{}:{} (SCHED_{})",
                    t.comm,
                    t.tid,
                    t.policy.map_or("?", Policy::name)
                )
            })
            .collect();
        let list = |v: &[String]| {
            let mut s = v.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            if v.len() > 5 {
                s.push_str(&format!(" and {} more", v.len() - 5));
            }
            s
        };
        let mut notes = Vec::new();
        if self.real_time_seen && self.counts.not_real_time > 0 {
            notes.push(format!(
                "{} late wake-ups of threads that are not real-time ({}) are not among the causes: such a thread waits behind every real-time task by design, and advice drawn from it would be about that thread; `--rt` leaves them out of the watch",
                self.counts.not_real_time,
                list(&not_real_time)
            ));
        } else if !self.real_time_seen && !not_real_time.is_empty() {
            notes.push(format!(
                "the watched threads with late wake-ups are not real-time ({}): they share their CPU with every other task and wait behind every real-time one; for a real-time latency run them SCHED_FIFO (chrt -f -p <priority> <tid>), the fix before any of the causes",
                list(&not_real_time)
            ));
        }
        notes
    }

    /// The kernel side's counters.
    pub fn counters(&self) -> Counters {
        self.side.counters()
    }

    /// Cause totals so far (for metrics).
    pub fn cause_totals(&self) -> Vec<CauseTotal> {
        self.totals()
    }

    /// Reports of windows: re-exported for the live view.
    pub fn worst_reports(&mut self) -> Vec<WindowReport> {
        self.analysis().2.into_iter().map(|w| w.window).collect()
    }
}
