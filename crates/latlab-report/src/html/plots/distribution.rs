//! Latency distributions drawn: histograms in log-spaced bins, the share
//! of samples above each latency, percentile markers.

use std::collections::BTreeMap;

use latlab_measure::histogram::Histogram;
use latlab_measure::result::RunResult;

use super::super::svg::{Axis, Format, Marker, Plot, Series, Shape};
use super::color;
use crate::units::micros;

/// Display bins per decade of latency in histograms.
const BINS_PER_DECADE: f64 = 20.0;
/// Points per decade of the cumulative distribution.
const CDF_PER_DECADE: f64 = 50.0;
/// A bucket's middle in µs (at least 1 ns, so it has a place on a log axis).
pub(crate) fn middle_us(low: u64, high: u64) -> f64 {
    (low / 2 + high / 2 + (low % 2 + high % 2) / 2).max(1) as f64 / 1e3
}

/// Buckets regrouped into log-spaced bins: `(low µs, high µs, count)`.
pub fn log_bins(histogram: &Histogram) -> Vec<(f64, f64, f64)> {
    let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
    for b in histogram.buckets() {
        let index = (middle_us(b.low, b.high).log10() * BINS_PER_DECADE).floor() as i64;
        *bins.entry(index).or_default() += b.count;
    }
    bins.into_iter()
        .map(|(i, count)| {
            (
                10f64.powf(i as f64 / BINS_PER_DECADE),
                10f64.powf((i + 1) as f64 / BINS_PER_DECADE),
                count as f64,
            )
        })
        .collect()
}

/// The share of samples above x, at log-spaced x (µs), as a staircase that
/// starts at 100 % and ends at the largest sample.
pub fn tail_points(histogram: &Histogram) -> Vec<(f64, f64)> {
    let total = histogram.count();
    if total == 0 {
        return Vec::new();
    }
    let mut points = Vec::new();
    let mut seen = 0u64;
    let mut current: Option<i64> = None;
    for b in histogram.buckets() {
        let x = micros(b.high.max(1));
        let index = (x.log10() * CDF_PER_DECADE).floor() as i64;
        if current.is_none() {
            points.push((micros(b.low.max(1)), 1.0));
        }
        seen += b.count;
        let above = (total - seen) as f64 / total as f64;
        if current == Some(index) {
            if let Some(last) = points.last_mut() {
                *last = (x, above);
            }
        } else {
            points.push((x, above));
        }
        current = Some(index);
    }
    points
}

fn latency_range(histograms: &[&Histogram]) -> (f64, f64) {
    let min = histograms
        .iter()
        .filter_map(|h| h.min())
        .min()
        .unwrap_or(1_000);
    let max = histograms
        .iter()
        .filter_map(|h| h.max())
        .max()
        .unwrap_or(1_000);
    (micros(min.max(1)), micros(max.max(1)) * 1.0001)
}

/// Histogram plot of several histograms on a log count axis.
pub fn histogram_plot(id: &str, title: &str, series: &[(String, &Histogram)]) -> Plot {
    let hists: Vec<&Histogram> = series.iter().map(|s| s.1).collect();
    let (lo, hi) = latency_range(&hists);
    let top = hists
        .iter()
        .flat_map(|h| log_bins(h))
        .map(|b| b.2)
        .fold(1.0, f64::max);
    let mut plot = Plot::new(
        id,
        title,
        Axis::log(lo, hi, "latency (µs, log)"),
        Axis::log(1.0, top, "samples (log)"),
    );
    plot.y.min = 0.5;
    for (i, (name, h)) in series.iter().enumerate() {
        plot.series.push(Series {
            name: name.clone(),
            color: color(i),
            shape: Shape::Bins(log_bins(h)),
            dashed: false,
        });
    }
    plot
}

/// Share of samples above each latency, log-log, with markers.
pub fn tail_plot(
    id: &str,
    title: &str,
    series: &[(String, &Histogram)],
    markers: Vec<Marker>,
) -> Plot {
    let hists: Vec<&Histogram> = series.iter().map(|s| s.1).collect();
    let (lo, hi) = latency_range(&hists);
    let most = hists.iter().map(|h| h.count()).max().unwrap_or(1).max(1);
    let mut plot = Plot::new(
        id,
        title,
        Axis::log(lo, hi, "latency (µs, log)"),
        Axis::log(1.0 / most as f64, 1.0, "share of samples above (log)")
            .with_format(Format::Percent),
    );
    for (i, (name, h)) in series.iter().enumerate() {
        let mut points = tail_points(h);
        // The last step falls to the bottom of the axis at the maximum.
        if let Some(&(x, _)) = points.last() {
            points.push((x, plot.y.min));
        }
        plot.series.push(Series {
            name: name.clone(),
            color: color(i),
            shape: Shape::Steps(points),
            dashed: false,
        });
    }
    plot.markers = markers;
    plot
}

/// The p99, p99.9 and max markers of a run.
pub fn percentile_markers(run: &RunResult, color: &str, prefix: &str) -> Vec<Marker> {
    let s = &run.overall.latency;
    [("p99", s.p99), ("p99.9", s.p99_9), ("max", s.max)]
        .into_iter()
        .map(|(name, ns)| Marker {
            x: micros(ns),
            label: format!("{prefix}{name} {}", latlab_measure::units::format_ns(ns)),
            color: color.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bins_keep_every_sample() {
        let mut h = Histogram::new();
        for v in [0u64, 5, 2_000, 2_100, 50_000, 3_420_000] {
            h.record(v);
        }
        let bins = log_bins(&h);
        assert_eq!(bins.iter().map(|b| b.2).sum::<f64>(), 6.0);
        // 2.0 and 2.1 µs share a bin 1/20 decade wide; the 3.42 ms sample is in the last.
        assert!(bins.iter().any(|b| b.2 == 2.0 && b.0 <= 2.0 && b.1 > 2.1));
        let last = bins.last().unwrap();
        assert!(last.0 <= 3420.0 && 3420.0 < last.1);
    }

    #[test]
    fn tail_starts_at_all_and_ends_at_nothing_above_the_max() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let points = tail_points(&h);
        assert_eq!(points.first().unwrap().1, 1.0);
        let last = points.last().unwrap();
        assert_eq!(last.1, 0.0);
        assert!((last.0 - 1000.0).abs() < 2.0);
        // Monotonic: x grows, the share above falls.
        for w in points.windows(2) {
            assert!(w[1].0 >= w[0].0 && w[1].1 <= w[0].1, "{w:?}");
        }
        // Each point: the share of the values 1..=1000 µs above x, within
        // bucket resolution (0.2 %).
        for &(x, share) in &points[1..points.len() - 1] {
            let exact = (1000.0 - x.floor()) / 1000.0;
            assert!(
                (share - exact).abs() <= 0.002 * x / 1000.0 + 1e-9,
                "{x} {share}"
            );
        }
    }
}
