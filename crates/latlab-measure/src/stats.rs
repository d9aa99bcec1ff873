//! Summary statistics over nanosecond samples: exact count, min, max, mean
//! and standard deviation; percentiles from the [`Histogram`].
//!
//! The one place latlab computes min/avg/max/percentiles: `run`, `respond`
//! and `lockbench` all use [`Stats`].

use serde::{Deserialize, Serialize};

use crate::histogram::Histogram;

/// Accumulates samples in constant memory.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    histogram: Histogram,
    sum: u128,
    sum_of_squares: u128,
}

impl Stats {
    /// No samples yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample (ns).
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.histogram.record(value);
        let v = u128::from(value);
        self.sum += v;
        self.sum_of_squares = self.sum_of_squares.saturating_add(v * v);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Stats) {
        self.histogram.merge(&other.histogram);
        self.sum += other.sum;
        self.sum_of_squares = self.sum_of_squares.saturating_add(other.sum_of_squares);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.histogram.count()
    }

    /// Largest sample so far (0 when empty).
    pub fn max(&self) -> u64 {
        self.histogram.max().unwrap_or(0)
    }

    /// The histogram of all samples.
    pub fn histogram(&self) -> &Histogram {
        &self.histogram
    }

    /// The summary figures; all zero when there are no samples.
    pub fn summary(&self) -> Summary {
        let count = self.count();
        if count == 0 {
            return Summary::default();
        }
        let n = count as f64;
        let mean = self.sum as f64 / n;
        let variance = (self.sum_of_squares as f64 / n - mean * mean).max(0.0);
        let at = |p| self.histogram.value_at_percentile(p).unwrap_or(0);
        Summary {
            count,
            min: self.histogram.min().unwrap_or(0),
            mean,
            stddev: variance.sqrt(),
            p50: at(50.0),
            p90: at(90.0),
            p99: at(99.0),
            p99_9: at(99.9),
            p99_99: at(99.99),
            max: self.max(),
        }
    }
}

/// Summary figures of a set of samples, all in nanoseconds.
///
/// Percentiles use the nearest-rank rule and are exact below 1024 ns;
/// above, they are the upper bound of a histogram bucket at most 0.2 % wide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample.
    pub min: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Population standard deviation.
    pub stddev: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
    /// Largest sample.
    pub max: u64,
}

impl Summary {
    /// The value of a named percentile field (50, 90, 99, 99.9, 99.99, 100),
    /// or `None` for a percentile the summary does not keep.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        const KEPT: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 100.0];
        let values = [
            self.p50,
            self.p90,
            self.p99,
            self.p99_9,
            self.p99_99,
            self.max,
        ];
        KEPT.iter()
            .position(|&k| (k - p).abs() < 1e-9)
            .map(|i| values[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_matches_exact_values() {
        let mut stats = Stats::new();
        for v in 1..=1000u64 {
            stats.record(v);
        }
        let s = stats.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, 1);
        assert_eq!(s.max, 1000);
        assert!((s.mean - 500.5).abs() < 1e-9);
        // population stddev of 1..=n is sqrt((n^2 - 1) / 12)
        let expected = ((1000.0f64 * 1000.0 - 1.0) / 12.0).sqrt();
        assert!((s.stddev - expected).abs() < 1e-6, "{}", s.stddev);
        assert_eq!(
            (s.p50, s.p90, s.p99, s.p99_9, s.p99_99),
            (500, 900, 990, 999, 1000)
        );
        assert_eq!(s.percentile(99.9), Some(999));
        assert_eq!(s.percentile(95.0), None);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = Stats::new();
        let mut b = Stats::new();
        let mut all = Stats::new();
        for v in 0..5000u64 {
            let x = v * v % 100_003;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(Stats::new().summary(), Summary::default());
    }

    #[test]
    fn constant_samples_have_zero_stddev() {
        let mut s = Stats::new();
        for _ in 0..100 {
            s.record(3_000_000);
        }
        let summary = s.summary();
        assert_eq!(summary.stddev, 0.0);
        assert_eq!(summary.p99, 3_000_000);
    }
}
