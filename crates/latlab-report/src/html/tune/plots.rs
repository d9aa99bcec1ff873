//! The plots of a tune result: before/after as a tail of its figures, and
//! a forest plot of each fix's effect per metric.

use latlab_tune::result::{Figures, TuneResult};
use latlab_tune::verify::{Effect, Metric};

use super::super::plots::color;
use super::super::svg::{Axis, Band, Format, Marker, Plot, Series, Shape};
use crate::text::tune::effect_of;
use crate::units::{format_ns, us};

/// The colour of a kept fix's row in the forest plots, and of a dropped one's.
const KEPT: &str = "#2a9d4a";
const DROPPED: &str = "#d3452c";

/// The share of wake-ups later than each of p50, p99, p99.9 and max (the
/// max: one sample in all), as points on a log-log tail.
fn tail(f: &Figures) -> Vec<(f64, f64)> {
    let one = 1.0 / f.samples.max(1) as f64;
    [
        (f.p50_ns, 0.5),
        (f.p99_ns, 0.01),
        (f.p999_ns, 0.001),
        (f.max_ns, one),
    ]
    .into_iter()
    .map(|(ns, share)| ((ns.max(1) as f64) / 1e3, share.min(0.5)))
    .collect()
}

/// Before and after, as the share of wake-ups later than each figure.
pub fn before_after_plot(id: &str, r: &TuneResult) -> Plot {
    let runs: Vec<(&str, &Figures)> = std::iter::once(("before", &r.baseline))
        .chain(r.after.as_ref().map(|a| ("after", a)))
        .collect();
    let lo = runs.iter().map(|(_, f)| f.p50_ns).min().unwrap_or(1).max(1) as f64 / 1e3;
    let deadline = r.settings.deadline_ns.unwrap_or(0);
    let hi = runs
        .iter()
        .map(|(_, f)| f.max_ns)
        .max()
        .unwrap_or(1)
        .max(deadline) as f64
        / 1e3;
    let samples = runs
        .iter()
        .map(|(_, f)| f.samples)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut plot = Plot::new(
        id,
        "Before and after: share of wake-ups later than p50, p99, p99.9, max",
        Axis::log(lo, hi, "latency (µs, log)"),
        Axis::log(1.0 / samples as f64, 1.0, "share of wake-ups later (log)")
            .with_format(Format::Percent),
    );
    for (i, (name, f)) in runs.iter().enumerate() {
        plot.series.push(Series {
            name: (*name).into(),
            color: color(i),
            shape: Shape::LineWithPoints(tail(f)),
            dashed: false,
        });
    }
    if let Some(d) = r.settings.deadline_ns {
        plot.markers.push(Marker {
            x: d as f64 / 1e3,
            label: format!("deadline {}", format_ns(d)),
            color: "#b02a1a".into(),
        });
    }
    plot
}

/// The forest plot of `metric`: one row per measured fix (row 1 = fix #1
/// of those measured), its interval as a bar with end caps and a tick at
/// the estimate, green when kept, red when dropped; the band of ± the
/// noise between identical rounds; a line at no change. None when no fix
/// was measured.
pub fn effect_plot(id: &str, r: &TuneResult, metric: Metric) -> Option<Plot> {
    let measured: Vec<(usize, &Effect)> = r
        .fixes
        .iter()
        .enumerate()
        .filter_map(|(i, f)| effect_of(f).map(|e| (i + 1, e)))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let noise = measured
        .iter()
        .map(|(_, e)| e.change(metric).noise_ns)
        .max()
        .unwrap_or(0) as f64
        / 1e3;
    let (mut lo, mut hi) = (-noise, noise);
    for (_, e) in &measured {
        let c = e.change(metric);
        lo = lo.min(c.low_ns as f64 / 1e3);
        hi = hi.max(c.high_ns as f64 / 1e3);
    }
    // Room on the right for the noise band's label.
    let pad = ((hi - lo) * 0.08).max(1.0);
    let rows = measured.len() as f64;
    let mut plot = Plot::new(
        id,
        &format!(
            "Effect of each fix on {} (applied − undone), with its interval",
            metric.name()
        ),
        Axis::linear(
            lo - pad,
            hi + 2.5 * pad,
            &format!("change of {} (µs)", metric.name()),
        ),
        Axis::linear(
            0.0,
            (rows + 1.0).max(5.0),
            "fix (row = #, as in the tables)",
        ),
    );
    plot.bands.push(Band {
        from: -noise,
        to: noise,
        label: format!("noise ±{} µs", us((noise * 1e3) as u64)),
    });
    plot.markers.push(Marker {
        x: 0.0,
        label: String::new(),
        color: "#5b6b7a".into(),
    });
    for (row, (n, e)) in measured.iter().enumerate() {
        let c = e.change(metric);
        let y = row as f64 + 1.0;
        let (a, m, b) = (
            c.low_ns as f64 / 1e3,
            c.shift_ns as f64 / 1e3,
            c.high_ns as f64 / 1e3,
        );
        let (cap, tick) = (0.12, 0.3);
        let beam = vec![
            (a, y + cap),
            (a, y - cap),
            (a, y),
            (m, y),
            (m, y + tick),
            (m, y - tick),
            (m, y),
            (b, y),
            (b, y + cap),
            (b, y - cap),
        ];
        plot.series.push(Series {
            name: format!("#{n} {}", if e.kept { "kept" } else { "dropped" }),
            color: if e.kept { KEPT } else { DROPPED }.into(),
            shape: Shape::Line(beam),
            dashed: false,
        });
    }
    Some(plot)
}
