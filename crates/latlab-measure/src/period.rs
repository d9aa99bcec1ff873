//! Period accuracy (the Moblin paper's second test): for every activation,
//! the period since the previous one and its deviation from the reference.

use serde::{Deserialize, Serialize};

use crate::histogram::Histogram;
use crate::stats::{Stats, Summary};

/// Tracks periods between consecutive activations of one thread.
#[derive(Debug, Clone)]
pub struct PeriodTracker {
    reference_ns: u64,
    tolerance_ns: u64,
    previous: Option<u64>,
    abs_deviation: Stats,
    early: Histogram,
    late: Histogram,
    within: u64,
    min_deviation: i64,
    max_deviation: i64,
    sum_deviation: i128,
}

impl PeriodTracker {
    /// Periods of `reference_ns`, accepted within ±`tolerance_ns`.
    pub fn new(reference_ns: u64, tolerance_ns: u64) -> Self {
        PeriodTracker {
            reference_ns,
            tolerance_ns,
            previous: None,
            abs_deviation: Stats::new(),
            early: Histogram::new(),
            late: Histogram::new(),
            within: 0,
            min_deviation: i64::MAX,
            max_deviation: i64::MIN,
            sum_deviation: 0,
        }
    }

    /// Accounts an activation at `actual_ns`; returns the deviation of the
    /// period it closes (`None` for the first activation).
    #[inline]
    pub fn record(&mut self, actual_ns: u64) -> Option<i64> {
        let previous = self.previous.replace(actual_ns)?;
        let period = actual_ns.saturating_sub(previous);
        let deviation = period as i64 - self.reference_ns as i64;
        let magnitude = deviation.unsigned_abs();
        self.abs_deviation.record(magnitude);
        if deviation < 0 {
            self.early.record(magnitude);
        } else {
            self.late.record(magnitude);
        }
        if magnitude <= self.tolerance_ns {
            self.within += 1;
        }
        self.min_deviation = self.min_deviation.min(deviation);
        self.max_deviation = self.max_deviation.max(deviation);
        self.sum_deviation += i128::from(deviation);
        Some(deviation)
    }

    /// Adds the periods of `other` (another thread with the same reference).
    pub fn merge(&mut self, other: &PeriodTracker) {
        self.abs_deviation.merge(&other.abs_deviation);
        self.early.merge(&other.early);
        self.late.merge(&other.late);
        self.within += other.within;
        self.min_deviation = self.min_deviation.min(other.min_deviation);
        self.max_deviation = self.max_deviation.max(other.max_deviation);
        self.sum_deviation += other.sum_deviation;
    }

    /// The figures of all periods so far.
    pub fn summary(&self) -> PeriodSummary {
        let count = self.abs_deviation.count();
        PeriodSummary {
            reference_ns: self.reference_ns,
            tolerance_ns: self.tolerance_ns,
            count,
            within_tolerance: self.within,
            share_within: if count == 0 {
                1.0
            } else {
                self.within as f64 / count as f64
            },
            min_deviation_ns: if count == 0 { 0 } else { self.min_deviation },
            max_deviation_ns: if count == 0 { 0 } else { self.max_deviation },
            mean_deviation_ns: if count == 0 {
                0.0
            } else {
                self.sum_deviation as f64 / count as f64
            },
            abs_deviation: self.abs_deviation.summary(),
            early_histogram: self.early.clone(),
            late_histogram: self.late.clone(),
        }
    }
}

/// Period accuracy of a thread or of a whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeriodSummary {
    /// The reference period, ns.
    pub reference_ns: u64,
    /// Accepted deviation either way, ns.
    pub tolerance_ns: u64,
    /// Periods measured (activations minus one per thread).
    pub count: u64,
    /// Periods within ±tolerance.
    pub within_tolerance: u64,
    /// `within_tolerance / count` (1.0 when nothing was measured).
    pub share_within: f64,
    /// Most negative deviation (shortest period minus reference), ns.
    pub min_deviation_ns: i64,
    /// Largest deviation (longest period minus reference), ns.
    pub max_deviation_ns: i64,
    /// Mean signed deviation, ns.
    pub mean_deviation_ns: f64,
    /// Statistics of |deviation|.
    pub abs_deviation: Summary,
    /// Histogram of |deviation| of periods shorter than the reference; not
    /// written when empty, nor in a run's `overall` (the threads' merged).
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub early_histogram: Histogram,
    /// Histogram of deviation of periods at or above the reference; not
    /// written when empty, nor in a run's `overall`.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub late_histogram: Histogram,
}

impl PeriodSummary {
    /// The figures alone: the histograms left empty.
    pub fn without_histograms(&self) -> PeriodSummary {
        PeriodSummary {
            early_histogram: Histogram::new(),
            late_histogram: Histogram::new(),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviations_and_tolerance_share() {
        let mut p = PeriodTracker::new(1_000, 50);
        assert_eq!(p.record(10_000), None);
        assert_eq!(p.record(11_000), Some(0));
        assert_eq!(p.record(12_040), Some(40));
        assert_eq!(p.record(12_980), Some(-60));
        assert_eq!(p.record(15_000), Some(1_020)); // a missed period shows here
        let s = p.summary();
        assert_eq!(s.count, 4);
        assert_eq!(s.within_tolerance, 2);
        assert!((s.share_within - 0.5).abs() < 1e-12);
        assert_eq!((s.min_deviation_ns, s.max_deviation_ns), (-60, 1_020));
        assert!((s.mean_deviation_ns - 250.0).abs() < 1e-9);
        assert_eq!(s.abs_deviation.max, 1_020);
        assert_eq!(s.early_histogram.count(), 1);
        assert_eq!(s.late_histogram.count(), 3);
    }
}
