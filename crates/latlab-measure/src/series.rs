//! Per-second maximum and 99th percentile over the run, in bounded memory.

use serde::{Deserialize, Serialize};

/// Most points a series keeps; beyond that, neighbours merge and the
/// point width doubles (so a week-long run still has a few thousand points).
pub const MAX_POINTS: usize = 4096;

/// One point of the series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesPoint {
    /// Start of the point, seconds since the start of the run.
    pub start_s: f64,
    /// Width of the point in seconds (1 until the series is coarsened).
    pub width_s: f64,
    /// Samples in the point.
    pub count: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// 99th percentile latency, ns (exact per second; after coarsening, the
    /// largest per-second p99 merged into the point).
    pub p99_ns: u64,
}

/// Builds the series as samples arrive, one second at a time.
#[derive(Debug, Clone)]
pub struct SecondSeries {
    points: Vec<SeriesPoint>,
    width_s: u64,
    current_second: u64,
    current: Vec<u64>,
}

impl SecondSeries {
    /// A series expecting at most `samples_per_second` samples per second
    /// (the buffer for the current second is allocated once, up front).
    pub fn new(samples_per_second: usize) -> Self {
        SecondSeries {
            points: Vec::with_capacity(MAX_POINTS + 1),
            width_s: 1,
            current_second: 0,
            current: Vec::with_capacity(samples_per_second + 2),
        }
    }

    /// Adds a sample taken `offset_ns` after the start of the run.
    #[inline]
    pub fn record(&mut self, offset_ns: u64, latency_ns: u64) {
        let second = offset_ns / 1_000_000_000;
        if second != self.current_second {
            self.flush();
            self.current_second = second;
        }
        if self.current.len() == self.current.capacity() {
            // More samples than the period allows: keep the largest so max
            // and p99 stay conservative without allocating.
            if let Some(min) = self.current.iter_mut().min() {
                *min = (*min).max(latency_ns);
            }
            return;
        }
        self.current.push(latency_ns);
    }

    fn flush(&mut self) {
        if self.current.is_empty() {
            return;
        }
        let count = self.current.len();
        let rank = (count * 99).div_ceil(100).max(1) - 1;
        let (_, &mut p99, _) = self.current.select_nth_unstable(rank);
        let max = *self.current.iter().max().unwrap_or(&0);
        self.push(SeriesPoint {
            start_s: self.current_second as f64,
            width_s: 1.0,
            count: count as u64,
            max_ns: max,
            p99_ns: p99,
        });
        self.current.clear();
    }

    fn push(&mut self, point: SeriesPoint) {
        let width = self.width_s as f64;
        let start = (point.start_s / width).floor() * width;
        match self.points.last_mut() {
            Some(last) if last.start_s == start => {
                last.count += point.count;
                last.max_ns = last.max_ns.max(point.max_ns);
                last.p99_ns = last.p99_ns.max(point.p99_ns);
            }
            _ => self.points.push(SeriesPoint {
                start_s: start,
                width_s: width,
                ..point
            }),
        }
        if self.points.len() > MAX_POINTS {
            self.coarsen();
        }
    }

    /// Doubles the point width, merging neighbours in place (no allocation).
    fn coarsen(&mut self) {
        self.width_s *= 2;
        let width = self.width_s as f64;
        let mut kept = 0;
        for i in 0..self.points.len() {
            let point = self.points[i];
            let start = (point.start_s / width).floor() * width;
            if kept > 0 && self.points[kept - 1].start_s == start {
                let last = &mut self.points[kept - 1];
                last.count += point.count;
                last.max_ns = last.max_ns.max(point.max_ns);
                last.p99_ns = last.p99_ns.max(point.p99_ns);
            } else {
                self.points[kept] = SeriesPoint {
                    start_s: start,
                    width_s: width,
                    ..point
                };
                kept += 1;
            }
        }
        self.points.truncate(kept);
    }

    /// Ends the series and returns its points.
    pub fn finish(mut self) -> Vec<SeriesPoint> {
        self.flush();
        self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_point_per_second_with_exact_p99_and_max() {
        let mut s = SecondSeries::new(1000);
        for i in 0..1000u64 {
            s.record(i * 1_000_000, 1000 - i); // second 0: 1..=1000
        }
        for i in 0..1000u64 {
            s.record(1_000_000_000 + i * 1_000_000, 5); // second 1: all 5
        }
        let points = s.finish();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].count, 1000);
        assert_eq!(points[0].max_ns, 1000);
        assert_eq!(points[0].p99_ns, 990);
        assert_eq!((points[1].max_ns, points[1].p99_ns), (5, 5));
    }

    #[test]
    fn long_runs_stay_bounded() {
        let mut s = SecondSeries::new(1);
        for second in 0..(3 * MAX_POINTS as u64) {
            s.record(second * 1_000_000_000, second);
        }
        let points = s.finish();
        assert!(points.len() <= MAX_POINTS);
        assert_eq!(
            points.iter().map(|p| p.count).sum::<u64>(),
            3 * MAX_POINTS as u64
        );
        assert_eq!(points.last().unwrap().max_ns, 3 * MAX_POINTS as u64 - 1);
        assert!(points[0].width_s >= 2.0);
    }
}
