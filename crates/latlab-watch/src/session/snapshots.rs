//! Snapshots: one per interval, spikes and cause totals, merged pairwise
//! past [`MAX_SNAPSHOTS`](super::MAX_SNAPSHOTS).

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Session, ENDED_TID, MAX_CAUSES, MAX_SNAPSHOTS};
use crate::document::*;
use crate::histograms::{self, Counts, LatencyKind, SparseHistogram};

impl Session {
    /// Reads the kernel's histograms now, with the counts of the threads
    /// that ended.
    pub(super) fn read_counts(&mut self) -> &Counts {
        let mut rows = self.side.histogram_counts();
        for e in &self.ended {
            rows.extend(
                e.rows
                    .iter()
                    .map(|&(kind, bucket, n)| (e.tid, kind, bucket, n)),
            );
        }
        rows.extend(
            self.folded
                .iter()
                .map(|(&(kind, bucket), &n)| (ENDED_TID as u32, kind, bucket, n)),
        );
        self.latest = histograms::group(&rows);
        &self.latest
    }

    /// Whether an interval has passed since the last snapshot.
    pub fn snapshot_due(&self) -> bool {
        self.last_snapshot.elapsed() >= self.opts.interval
    }

    /// Ends the current interval: its snapshot (also kept in the result).
    pub fn snapshot(&mut self) -> Snapshot {
        let interval = self.last_snapshot.elapsed();
        self.last_snapshot = Instant::now();
        self.read_counts();
        let d = histograms::delta(&self.latest, &self.at_last_snapshot);
        let mut all = SparseHistogram::default();
        for ((_, kind), b) in &d {
            if *kind != LatencyKind::Irq {
                all.add(&SparseHistogram::from_counts(b));
            }
        }
        let late_total = self.side.counters().late;
        let snap = Snapshot {
            at_ns: self.started.elapsed().as_nanos() as u64,
            interval_ns: interval.as_nanos() as u64,
            samples: all.count(),
            worst_ns: all.max().unwrap_or(0),
            p99_ns: all.value_at_percentile(99.0).unwrap_or(0),
            late: late_total.saturating_sub(self.late_at_last_snapshot),
            by_category: std::mem::take(&mut self.interval_categories)
                .into_iter()
                .collect(),
        };
        self.late_at_last_snapshot = late_total;
        self.at_last_snapshot = self.latest.clone();
        self.snapshots.push(snap.clone());
        if self.snapshots.len() > MAX_SNAPSHOTS {
            self.snapshots = merge_pairs(&self.snapshots);
        }
        snap
    }

    /// Snapshots taken so far (each interval, and the last one `finish` takes).
    pub fn snapshots_taken(&self) -> usize {
        self.snapshots.len()
    }

    /// The history document of a snapshot.
    pub fn snapshot_document(&self, snap: &Snapshot) -> SnapshotDocument {
        SnapshotDocument {
            schema: SNAPSHOT_SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            id: None,
            started_at: latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()),
            watch_started_at: latlab_rt::clock::format_utc(self.started_unix_s),
            selection: self.opts.selection.describe(),
            system: self.system.clone(),
            overall: Overall {
                latency: latlab_measure::stats::Summary {
                    count: snap.samples,
                    max: snap.worst_ns,
                    p99: snap.p99_ns,
                    ..Default::default()
                },
            },
            snapshot: snap.clone(),
        }
    }

    pub(super) fn spikes(&self) -> Spikes {
        let count = self.side.counters().late;
        let (per_hour, lo, hi) =
            crate::stats::rate_per_hour(count, self.started.elapsed().as_nanos() as u64);
        let (worst_ns, worst_at_ns) = self.worst.unwrap_or((0, 0));
        Spikes {
            threshold_ns: self.opts.threshold_ns,
            count,
            per_hour,
            per_hour_low: lo,
            per_hour_high: hi,
            worst_ns,
            worst_at_ns,
        }
    }

    /// Cause totals, most late latency first.
    pub(super) fn totals(&self) -> Vec<CauseTotal> {
        let mut v: Vec<CauseTotal> = self
            .cause_totals
            .iter()
            .map(|((category, description), &(n, ns))| CauseTotal {
                category: category.clone(),
                description: description.clone(),
                late_windows: n,
                late_ns: ns,
            })
            .collect();
        if self.other_causes.0 > 0 {
            v.push(CauseTotal {
                category: "other".into(),
                description: format!("causes past the first {MAX_CAUSES}"),
                late_windows: self.other_causes.0,
                late_ns: self.other_causes.1,
            });
        }
        v.sort_by(|a, b| {
            b.late_ns
                .cmp(&a.late_ns)
                .then(a.description.cmp(&b.description))
        });
        v
    }
}

/// Neighbouring snapshots merged: half as many, each twice as long.
pub fn merge_pairs(s: &[Snapshot]) -> Vec<Snapshot> {
    s.chunks(2)
        .map(|c| {
            let mut m = c[0].clone();
            if let Some(b) = c.get(1) {
                m.at_ns = b.at_ns;
                m.interval_ns += b.interval_ns;
                m.samples += b.samples;
                m.worst_ns = m.worst_ns.max(b.worst_ns);
                m.p99_ns = m.p99_ns.max(b.p99_ns);
                m.late += b.late;
                let mut cats: BTreeMap<String, u64> = m.by_category.into_iter().collect();
                for (k, v) in &b.by_category {
                    *cats.entry(k.clone()).or_default() += v;
                }
                m.by_category = cats.into_iter().collect();
            }
            m
        })
        .collect()
}
