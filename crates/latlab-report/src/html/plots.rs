//! The plots of a report, built from results with the statistics of
//! latlab-measure (bucket counts, summaries): this module only regroups
//! buckets into display bins, it computes no percentile of its own.

use std::collections::BTreeMap;

use latlab_load::LoadReport;
use latlab_measure::histogram::Histogram;
use latlab_measure::result::RunResult;

use super::svg::{Axis, Band, Format, Marker, Plot, Series, Shape, PALETTE};
use crate::units::micros;

/// Display bins per decade of latency in histograms.
const BINS_PER_DECADE: f64 = 20.0;
/// Points per decade of the cumulative distribution.
const CDF_PER_DECADE: f64 = 50.0;
/// Display bins of the period deviation plot.
const DEVIATION_BINS: f64 = 80.0;

/// Colour number `i` of the palette.
pub fn color(i: usize) -> String {
    PALETTE[i % PALETTE.len()].to_string()
}

/// A bucket's middle in µs (at least 1 ns, so it has a place on a log axis).
fn middle_us(low: u64, high: u64) -> f64 {
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

/// Per-second max (solid) and p99 (dashed) of each thread, log latency axis.
pub fn series_plot(id: &str, run: &RunResult) -> Option<Plot> {
    if run.threads.iter().all(|t| t.series.is_empty()) {
        return None;
    }
    let end = run
        .threads
        .iter()
        .flat_map(|t| t.series.iter().map(|p| p.start_s + p.width_s))
        .fold(1.0, f64::max);
    let lo = run
        .threads
        .iter()
        .flat_map(|t| t.series.iter().map(|p| p.p99_ns))
        .min()
        .unwrap_or(1_000);
    let hi = run
        .threads
        .iter()
        .flat_map(|t| t.series.iter().map(|p| p.max_ns))
        .max()
        .unwrap_or(1_000);
    let mut plot = Plot::new(
        id,
        "Latency over time: per-second max (solid) and p99 (dashed)",
        Axis::linear(0.0, end, "time since start (s)"),
        Axis::log(micros(lo.max(1)), micros(hi.max(1)), "latency (µs, log)"),
    );
    for (i, thread) in run.threads.iter().enumerate() {
        let mid = |p: &latlab_measure::series::SeriesPoint| p.start_s + p.width_s / 2.0;
        plot.series.push(Series {
            name: format!("CPU{} max", thread.cpu),
            color: color(i),
            shape: Shape::Line(
                thread
                    .series
                    .iter()
                    .map(|p| (mid(p), micros(p.max_ns)))
                    .collect(),
            ),
            dashed: false,
        });
        plot.series.push(Series {
            name: format!("CPU{} p99", thread.cpu),
            color: color(i),
            shape: Shape::Line(
                thread
                    .series
                    .iter()
                    .map(|p| (mid(p), micros(p.p99_ns)))
                    .collect(),
            ),
            dashed: true,
        });
    }
    Some(plot)
}

/// Signed period deviation (early below zero, late above) with the
/// tolerance band; linear deviation axis, log count axis.
pub fn period_plot(id: &str, run: &RunResult) -> Option<Plot> {
    let p = &run.overall.period;
    if p.count == 0 {
        return None;
    }
    let tol = micros(p.tolerance_ns);
    // From the earliest to the latest period, and at least twice the band.
    let lo = (-micros(p.min_deviation_ns.min(0).unsigned_abs()))
        .min(-2.0 * tol)
        .min(-1.0);
    let hi = micros(p.max_deviation_ns.max(0).unsigned_abs())
        .max(2.0 * tol)
        .max(1.0);
    let width = (hi - lo) / DEVIATION_BINS;
    let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
    for (histogram, sign) in [(&p.early_histogram, -1.0), (&p.late_histogram, 1.0)] {
        for b in histogram.buckets() {
            let x = sign * middle_us(b.low, b.high);
            let index = (((x - lo) / width).floor() as i64).clamp(0, DEVIATION_BINS as i64 - 1);
            *bins.entry(index).or_default() += b.count;
        }
    }
    let top = bins.values().copied().max().unwrap_or(1) as f64;
    let mut plot = Plot::new(
        id,
        &format!(
            "Period deviation from {} ({:.1} % within ±{})",
            latlab_measure::units::format_ns(p.reference_ns),
            p.share_within * 100.0,
            latlab_measure::units::format_ns(p.tolerance_ns)
        ),
        Axis::linear(lo, hi, "period minus reference (µs)"),
        Axis::log(1.0, top, "periods (log)"),
    );
    plot.y.min = 0.5;
    plot.bands.push(Band {
        from: -tol,
        to: tol,
        label: "tolerance".into(),
    });
    plot.series.push(Series {
        name: "periods".into(),
        color: color(0),
        shape: Shape::Bins(
            bins.into_iter()
                .map(|(i, n)| {
                    let (a, b) = (lo + i as f64 * width, lo + (i + 1) as f64 * width);
                    (a, b, n as f64)
                })
                .collect(),
        ),
        dashed: false,
    });
    Some(plot)
}

/// One kind of background work from a load report.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadKind {
    /// `cpu`, `io`, ... or `command`.
    pub kind: String,
    /// Unit of the rate.
    pub unit: String,
    /// Workers.
    pub workers: u64,
    /// Mean rate, units per second.
    pub per_second: f64,
    /// Rate per interval.
    pub series: Vec<f64>,
}

/// The kinds of a load report that had workers (and the external command,
/// if one ran), and its interval in seconds.
pub fn load_kinds(load: &LoadReport) -> (Vec<LoadKind>, f64) {
    let mut kinds: Vec<LoadKind> = load
        .kinds
        .iter()
        .filter(|k| k.workers > 0)
        .map(|k| LoadKind {
            kind: k.kind.clone(),
            unit: k.unit.clone(),
            workers: k.workers as u64,
            per_second: k.per_second,
            series: k.series.clone(),
        })
        .collect();
    if let Some(external) = &load.external {
        kinds.push(LoadKind {
            kind: "command".into(),
            unit: "CPUs busy".into(),
            workers: 1,
            per_second: external.cpus_busy,
            series: external.series.clone(),
        });
    }
    (kinds, load.interval_s)
}

/// Throughput of each load kind over time, as a share of its own mean
/// (so kinds with different units share one axis).
pub fn load_plot(id: &str, load: &LoadReport) -> Option<Plot> {
    let (kinds, interval) = load_kinds(load);
    let kinds: Vec<&LoadKind> = kinds
        .iter()
        .filter(|k| !k.series.is_empty() && k.per_second > 0.0)
        .collect();
    if kinds.is_empty() {
        return None;
    }
    let end = kinds
        .iter()
        .map(|k| k.series.len() as f64 * interval)
        .fold(interval, f64::max);
    let top = kinds
        .iter()
        .flat_map(|k| k.series.iter().map(move |v| v / k.per_second))
        .fold(1.2, f64::max)
        * 1.05;
    let mut plot = Plot::new(
        id,
        "Background load throughput per interval (100 % = its mean)",
        Axis::linear(0.0, end, "time since load start (s)"),
        Axis::linear(0.0, top, "throughput, share of mean").with_format(Format::Percent),
    );
    for (i, k) in kinds.iter().enumerate() {
        plot.series.push(Series {
            name: k.kind.clone(),
            color: color(i),
            shape: Shape::Line(
                k.series
                    .iter()
                    .enumerate()
                    .map(|(j, v)| ((j as f64 + 0.5) * interval, v / k.per_second))
                    .collect(),
            ),
            dashed: false,
        });
    }
    Some(plot)
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
