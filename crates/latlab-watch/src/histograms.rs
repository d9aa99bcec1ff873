//! The kernel's histogram counts (per task, kind and bucket index, the
//! bucket scheme of latlab-measure), cumulative and per interval, as
//! [`SparseHistogram`]s: only the buckets in use, where a
//! [`Histogram`] holds every bucket (224 KiB), so that a watch's memory
//! grows with the buckets its threads use, not with its threads times
//! 224 KiB.

use std::collections::BTreeMap;

use latlab_measure::histogram::{bucket_bounds, Bucket, Histogram};
use latlab_measure::result::{LatencyPart, LatencySplit};
use latlab_measure::stats::Summary;

/// What a latency measures (`enum kind` of the BPF side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LatencyKind {
    /// Timer-driven: soft expiry to running.
    Thread,
    /// Timer-driven: soft expiry to the timer interrupt (its clock read for the callback).
    Irq,
    /// Other wake-ups: sched_waking to running.
    Wakeup,
}

impl LatencyKind {
    /// From the kernel's number.
    pub fn of(code: u32) -> Option<LatencyKind> {
        [LatencyKind::Thread, LatencyKind::Irq, LatencyKind::Wakeup]
            .into_iter()
            .find(|k| k.code() == code)
    }

    /// The kernel's number (`enum kind` of the BPF side).
    pub fn code(self) -> u32 {
        match self {
            LatencyKind::Thread => 0,
            LatencyKind::Irq => 1,
            LatencyKind::Wakeup => 2,
        }
    }

    /// Its name in metrics and tables.
    pub fn name(self) -> &'static str {
        match self {
            LatencyKind::Thread => "thread",
            LatencyKind::Irq => "irq",
            LatencyKind::Wakeup => "wakeup",
        }
    }
}

/// The kernel's number of the preemption latency (`KIND_PREEMPT`): the
/// timer interrupt to the task running, counted for every timer-driven
/// wake-up beside [`LatencyKind::Irq`] and [`LatencyKind::Thread`]. Not a
/// [`LatencyKind`]: [`group`] leaves it out, and `latlab run --split` reads
/// it with [`latency_split`].
pub const PREEMPTION_KIND: u32 = 3;

/// The split of the timer-driven wake-ups of the tasks `tids` (all of them
/// together) from the kernel's `(pid, kind, bucket, count)` rows; `None`
/// when the kernel saw no wake-up of them at all.
pub fn latency_split(rows: &[(u32, u32, u32, u64)], tids: &[i32]) -> Option<LatencySplit> {
    let mut by_kind: BTreeMap<u32, BTreeMap<u32, u64>> = BTreeMap::new();
    for &(pid, kind, bucket, n) in rows {
        if tids.contains(&(pid as i32)) {
            *by_kind.entry(kind).or_default().entry(bucket).or_default() += n;
        }
    }
    if by_kind.is_empty() {
        return None;
    }
    let part = |kind: u32| {
        let h = histogram(&by_kind.get(&kind).cloned().unwrap_or_default());
        LatencyPart {
            summary: summary(&h),
            histogram: h,
        }
    };
    let count = |kind: u32| by_kind.get(&kind).map_or(0, |b| b.values().sum());
    Some(LatencySplit {
        timer_wakeups: count(LatencyKind::Thread.code()),
        other_wakeups: count(LatencyKind::Wakeup.code()),
        interrupt_latency: part(LatencyKind::Irq.code()),
        preemption_latency: part(PREEMPTION_KIND),
        thread_latency: part(LatencyKind::Thread.code()),
    })
}

/// Sparse counts: per (task, kind), bucket index to count.
pub type Counts = BTreeMap<(i32, LatencyKind), BTreeMap<u32, u64>>;

/// Groups the kernel's `(pid, kind, bucket, count)` rows.
pub fn group(rows: &[(u32, u32, u32, u64)]) -> Counts {
    let mut out: Counts = BTreeMap::new();
    for &(pid, kind, bucket, n) in rows {
        if let Some(k) = LatencyKind::of(kind) {
            *out.entry((pid as i32, k))
                .or_default()
                .entry(bucket)
                .or_default() += n;
        }
    }
    out
}

/// Moves the counts of task `from` to task `into`, bucket by bucket.
pub fn fold(counts: &mut Counts, from: i32, into: i32) {
    let keys: Vec<(i32, LatencyKind)> = counts.keys().filter(|k| k.0 == from).copied().collect();
    for key in keys {
        if let Some(buckets) = counts.remove(&key) {
            let target = counts.entry((into, key.1)).or_default();
            for (b, n) in buckets {
                *target.entry(b).or_default() += n;
            }
        }
    }
}

/// `now - before`, bucket by bucket (the counts of one interval).
pub fn delta(now: &Counts, before: &Counts) -> Counts {
    let mut out: Counts = BTreeMap::new();
    for (key, buckets) in now {
        let old = before.get(key);
        for (&b, &n) in buckets {
            let d = n.saturating_sub(old.and_then(|o| o.get(&b)).copied().unwrap_or(0));
            if d > 0 {
                *out.entry(*key).or_default().entry(b).or_default() += d;
            }
        }
    }
    out
}

/// The histogram of sparse bucket counts.
pub fn histogram(buckets: &BTreeMap<u32, u64>) -> Histogram {
    let list: Vec<Bucket> = buckets
        .iter()
        .filter_map(|(&b, &count)| {
            let (low, high) = bucket_bounds(b as usize)?;
            Some(Bucket { low, high, count })
        })
        .collect();
    Histogram::from_buckets(&list)
}

/// The mean and standard deviation of `buckets` from their midpoints.
fn moments(buckets: impl Iterator<Item = Bucket>, count: u64) -> (f64, f64) {
    let (mut sum, mut sq) = (0f64, 0f64);
    for b in buckets {
        let mid = (b.low as f64 + b.high as f64) / 2.0;
        sum += mid * b.count as f64;
        sq += mid * mid * b.count as f64;
    }
    let n = count as f64;
    let mean = sum / n;
    (mean, (sq / n - mean * mean).max(0.0).sqrt())
}

/// latlab run's summary of a histogram; the mean and deviation from bucket
/// midpoints (exact below 1024 ns, within 0.2 % above).
pub fn summary(h: &Histogram) -> Summary {
    summarize(h.count(), h.buckets(), (h.min(), h.max()), |p| {
        h.value_at_percentile(p)
    })
}

/// The summary of `count` samples in `buckets`, their extremes and the
/// percentiles `at` reads (zeroes for no sample).
fn summarize(
    count: u64,
    buckets: impl Iterator<Item = Bucket>,
    (min, max): (Option<u64>, Option<u64>),
    at: impl Fn(f64) -> Option<u64>,
) -> Summary {
    if count == 0 {
        return Summary::default();
    }
    let (mean, stddev) = moments(buckets, count);
    let at = |p| at(p).unwrap_or(0);
    Summary {
        count,
        min: min.unwrap_or(0),
        mean,
        stddev,
        p50: at(50.0),
        p90: at(90.0),
        p99: at(99.0),
        p99_9: at(99.9),
        p99_99: at(99.99),
        max: max.unwrap_or(0),
    }
}

/// A histogram with latlab-measure's buckets that keeps only the buckets in
/// use (bucket index to count): what the kernel counts, and what a watch
/// keeps per task and kind. Its figures are those of the [`Histogram`] of
/// the same buckets ([`SparseHistogram::to_histogram`]), its JSON the same
/// list of buckets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SparseHistogram {
    counts: BTreeMap<u32, u64>,
}

impl SparseHistogram {
    /// The histogram of bucket counts (index to count).
    pub fn from_counts(counts: &BTreeMap<u32, u64>) -> SparseHistogram {
        SparseHistogram {
            counts: counts
                .iter()
                .filter(|(&b, &n)| n > 0 && bucket_bounds(b as usize).is_some())
                .map(|(&b, &n)| (b, n))
                .collect(),
        }
    }

    /// Adds every count of `other`.
    pub fn add(&mut self, other: &SparseHistogram) {
        for (&b, &n) in &other.counts {
            *self.counts.entry(b).or_default() += n;
        }
    }

    /// Number of values counted.
    pub fn count(&self) -> u64 {
        self.counts.values().sum()
    }

    fn bounds(index: u32) -> (u64, u64) {
        bucket_bounds(index as usize).unwrap_or((u64::MAX, u64::MAX))
    }

    /// The lowest bucket's smallest value, as [`Histogram::from_buckets`]
    /// gives it; `None` when empty.
    pub fn min(&self) -> Option<u64> {
        self.counts.keys().next().map(|&b| Self::bounds(b).0)
    }

    /// The highest bucket's largest value; `None` when empty.
    pub fn max(&self) -> Option<u64> {
        self.counts.keys().next_back().map(|&b| Self::bounds(b).1)
    }

    /// The value at percentile `p` by [`Histogram::value_at_percentile`]'s
    /// rule (nearest rank, the bucket's upper bound clamped to the min and
    /// max); `None` when empty.
    pub fn value_at_percentile(&self, p: f64) -> Option<u64> {
        let total = self.count();
        let (min, max) = (self.min()?, self.max()?);
        let micro = (p.clamp(0.0, 100.0) * 1e6).round() as u128;
        let rank = (micro * u128::from(total)).div_ceil(100_000_000u128) as u64;
        let rank = rank.clamp(1, total);
        let mut seen = 0u64;
        for (&b, &n) in &self.counts {
            seen += n;
            if seen >= rank {
                return Some(Self::bounds(b).1.clamp(min, max));
            }
        }
        Some(max)
    }

    /// Values in buckets whose upper bound is at or below `value`.
    pub fn count_at_or_below(&self, value: u64) -> u64 {
        self.counts
            .iter()
            .take_while(|(&b, _)| Self::bounds(b).1 <= value)
            .map(|(_, &n)| n)
            .sum()
    }

    /// The buckets in use, lowest first.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.counts.iter().map(|(&b, &count)| {
            let (low, high) = Self::bounds(b);
            Bucket { low, high, count }
        })
    }

    /// The same counts as a [`Histogram`] (224 KiB: for a plot, not to keep).
    pub fn to_histogram(&self) -> Histogram {
        Histogram::from_buckets(&self.buckets().collect::<Vec<_>>())
    }

    /// latlab run's summary ([`summary`]), from the buckets in use.
    pub fn summary(&self) -> Summary {
        summarize(
            self.count(),
            self.buckets(),
            (self.min(), self.max()),
            |p| self.value_at_percentile(p),
        )
    }
}

/// In JSON, as a [`Histogram`]: its runs of buckets
/// ([`latlab_measure::histogram::runs_of`]); the `{low, high, count}`
/// buckets of schema version 1 read too.
impl serde::Serialize for SparseHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let counts = self.counts.iter().map(|(&b, &n)| (b as usize, n));
        serializer.collect_seq(latlab_measure::histogram::runs_of(counts))
    }
}

impl<'de> serde::Deserialize<'de> for SparseHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let latlab_measure::histogram::StoredCounts(stored) =
            serde::Deserialize::deserialize(deserializer)?;
        let mut counts = BTreeMap::new();
        for (index, count) in stored {
            *counts.entry(index as u32).or_default() += count;
        }
        Ok(SparseHistogram { counts })
    }
}

impl schemars::JsonSchema for SparseHistogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Histogram::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Histogram::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_measure::histogram::bucket_index;

    #[test]
    fn kernel_counts_give_the_same_statistics_as_latlab_run() {
        // What the kernel would count for these samples, bucket by bucket.
        let samples: Vec<u64> = (1..=5000u64).map(|i| i * 37 % 90_001 + 500).collect();
        let mut rows = Vec::new();
        let mut direct = Histogram::new();
        for &s in &samples {
            rows.push((7u32, 0u32, bucket_index(s) as u32, 1u64));
            direct.record(s);
        }
        let counts = group(&rows);
        let h = histogram(&counts[&(7, LatencyKind::Thread)]);
        assert_eq!(h.count(), 5000);
        for p in [50.0, 90.0, 99.0, 99.9] {
            let (a, b) = (
                h.value_at_percentile(p).unwrap(),
                direct.value_at_percentile(p).unwrap(),
            );
            // The same bucket: at most its width apart (the exact min/max
            // clamp only the direct one).
            assert!(a.abs_diff(b) <= b / 512 + 1, "p{p}: {a} vs {b}");
        }
        let s = summary(&h);
        let exact_mean = samples.iter().sum::<u64>() as f64 / 5000.0;
        assert!(
            (s.mean - exact_mean).abs() / exact_mean < 0.002,
            "{} vs {exact_mean}",
            s.mean
        );
    }

    #[test]
    fn a_sparse_histogram_gives_the_figures_and_json_of_the_dense_one() {
        // Spread over the exact range and several powers of two, with
        // repeats, as a watched thread's latencies are.
        let samples: Vec<u64> = (1..=20_000u64)
            .map(|i| (i * 7919 % 3_000_017) + i % 700)
            .collect();
        let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
        for &s in &samples {
            *counts.entry(bucket_index(s) as u32).or_default() += 1;
        }
        let sparse = SparseHistogram::from_counts(&counts);
        let dense = histogram(&counts);
        assert_eq!(sparse.to_histogram(), dense);
        assert_eq!(sparse.summary(), summary(&dense));
        for p in [0.0, 1.0, 50.0, 99.0, 99.9, 99.99, 100.0] {
            assert_eq!(
                sparse.value_at_percentile(p),
                dense.value_at_percentile(p),
                "p{p}"
            );
        }
        for v in [0, 500, 1_023, 1_024, 50_000, 2_999_999, u64::MAX] {
            assert_eq!(
                sparse.count_at_or_below(v),
                dense.count_at_or_below(v),
                "{v}"
            );
        }
        let json = serde_json::to_string(&sparse).unwrap();
        assert_eq!(json, serde_json::to_string(&dense).unwrap());
        let back: SparseHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, sparse);
        // Results of schema version 1 hold `{low, high, count}` buckets.
        let version_1 = serde_json::to_string(&dense.buckets().collect::<Vec<_>>()).unwrap();
        let back: SparseHistogram = serde_json::from_str(&version_1).unwrap();
        assert_eq!(back, sparse);
        assert_eq!(SparseHistogram::default().summary(), Summary::default());
        assert_eq!(SparseHistogram::default().value_at_percentile(50.0), None);
    }

    #[test]
    fn the_split_adds_the_chosen_threads_and_keeps_the_kinds_apart() {
        let b = |ns: u64| bucket_index(ns) as u32;
        let rows = [
            // Thread 7: two timer wake-ups (irq 200 ns + 300 ns, 400 ns + 100 ns; below 1024 ns a bucket is one ns), one other.
            (7, 1, b(200), 1),
            (7, 1, b(400), 1),
            (7, PREEMPTION_KIND, b(300), 1),
            (7, PREEMPTION_KIND, b(100), 1),
            (7, 0, b(500), 2),
            (7, 2, b(900), 1),
            // Thread 8: one timer wake-up; thread 9 is not asked for.
            (8, 1, b(600), 1),
            (8, PREEMPTION_KIND, b(100), 1),
            (8, 0, b(700), 1),
            (9, 0, b(7_000), 5),
        ];
        let one = latency_split(&rows, &[7]).unwrap();
        assert_eq!((one.timer_wakeups, one.other_wakeups), (2, 1));
        assert_eq!(one.interrupt_latency.summary.count, 2);
        assert_eq!(one.interrupt_latency.summary.max, 400);
        assert_eq!(one.preemption_latency.summary.min, 100);
        assert_eq!(one.thread_latency.summary.p50, 500);
        let both = latency_split(&rows, &[7, 8]).unwrap();
        assert_eq!(both.timer_wakeups, 3);
        assert_eq!(both.interrupt_latency.histogram.count(), 3);
        assert_eq!(both.thread_latency.summary.max, 700);
        assert!(latency_split(&rows, &[10]).is_none());
    }

    #[test]
    fn folded_tasks_keep_their_counts_and_intervals_stay_right() {
        // Task 7 ended: its counts move to task 0 in both the counts now
        // and those at the last snapshot, so the interval's delta neither
        // loses nor counts them twice.
        let mut before = group(&[(7, 0, 10, 3), (0, 0, 10, 2), (8, 0, 10, 1)]);
        let mut now = group(&[(7, 0, 10, 5), (7, 2, 4, 1), (0, 0, 10, 2), (8, 0, 10, 1)]);
        fold(&mut before, 7, 0);
        fold(&mut now, 7, 0);
        assert!(!now.keys().any(|k| k.0 == 7));
        assert_eq!(now[&(0, LatencyKind::Thread)][&10], 7);
        assert_eq!(now[&(0, LatencyKind::Wakeup)][&4], 1);
        assert_eq!(now[&(8, LatencyKind::Thread)][&10], 1);
        let d = delta(&now, &before);
        assert_eq!(d[&(0, LatencyKind::Thread)][&10], 2);
        assert_eq!(d[&(0, LatencyKind::Wakeup)][&4], 1);
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn an_interval_is_the_difference_of_two_reads() {
        let before = group(&[(1, 0, 10, 5), (1, 2, 20, 1)]);
        let now = group(&[(1, 0, 10, 8), (1, 0, 11, 2), (1, 2, 20, 1)]);
        let d = delta(&now, &before);
        assert_eq!(
            d[&(1, LatencyKind::Thread)],
            BTreeMap::from([(10, 3), (11, 2)])
        );
        assert!(!d.contains_key(&(1, LatencyKind::Wakeup)));
    }
}
