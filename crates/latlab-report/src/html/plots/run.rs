//! A run's plots over time: the worst and p99 latency per interval, and
//! the deviation of its periods.

use std::collections::BTreeMap;

use latlab_measure::result::RunResult;

use super::super::svg::{Axis, Band, Plot, Series, Shape};
use super::color;
use super::distribution::middle_us;
use crate::units::micros;

/// Display bins of the period deviation plot.
const DEVIATION_BINS: f64 = 80.0;

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
