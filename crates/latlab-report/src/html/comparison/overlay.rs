//! The overlaid plots of each comparison: histograms and tail
//! distributions.

use latlab_document::comparable::Quantity;
use latlab_measure::histogram::Histogram;
use latlab_measure::units::format_ns;

use super::super::entry::Entry;
use super::super::plots::{self, color};
use super::super::svg::{Marker, Plot};
use super::plan::{plan, Member};
use crate::units;

/// The plot ids of comparison `n` (0-based): `compare` for the first.
pub(crate) fn prefix(n: usize) -> String {
    if n == 0 {
        "compare".into()
    } else {
        format!("compare{}", n + 1)
    }
}

/// The overlaid histograms and tail distributions of each comparison.
pub fn plots(entries: &[Entry]) -> Vec<Plot> {
    plan(entries)
        .compared
        .iter()
        .enumerate()
        .flat_map(|(n, (quantity, members))| quantity_plots(&prefix(n), *quantity, members))
        .collect()
}

pub(crate) fn quantity_plots(
    prefix: &str,
    quantity: Quantity,
    members: &[Member<'_>],
) -> Vec<Plot> {
    // The members with a histogram (a peer file may have none), each with
    // its colour in both plots.
    let drawn: Vec<&Member<'_>> = members
        .iter()
        .filter(|m| m.distribution.histogram.is_some())
        .collect();
    let series = |tail: bool| -> Vec<(String, &Histogram)> {
        drawn
            .iter()
            .filter_map(|m| {
                let d = &m.distribution;
                let h = if tail { &d.tail } else { &d.histogram };
                Some((m.label.clone(), h.as_deref()?))
            })
            .collect()
    };
    let markers = drawn
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let max = m.distribution.figures.max.known()?;
            Some(Marker {
                x: units::micros(max),
                label: format!("max {}", format_ns(max)),
                color: color(i),
            })
        })
        .collect();
    let (histogram, tail) = match quantity {
        Quantity::TimerWakeUp => (
            "Latency histograms, all CPUs".to_string(),
            "Cumulative distribution: share of samples above each latency".to_string(),
        ),
        other => (
            format!("Histograms of the {}", other.name()),
            format!("Share of samples above each {}", other.name()),
        ),
    };
    vec![
        plots::histogram_plot(&format!("{prefix}-histogram"), &histogram, &series(false)),
        plots::tail_plot(&format!("{prefix}-tail"), &tail, &series(true), markers),
    ]
}
