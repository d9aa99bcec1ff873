//! A background load's plot: each kind's throughput over time.

use latlab_load::LoadReport;

use super::super::svg::{Axis, Format, Plot, Series, Shape};
use super::color;

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
