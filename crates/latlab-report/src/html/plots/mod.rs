//! The plots of a report, built from results with the statistics of
//! latlab-measure (bucket counts, summaries): this module only regroups
//! buckets into display bins, it computes no percentile of its own.

//!
//! [`distribution`]: histograms, tail distributions and percentile markers
//! (every kind with a latency); [`run`]: a run's latency over time and
//! period accuracy; [`load`]: a background load's throughput.

pub mod distribution;
pub mod load;
pub mod run;

pub use distribution::{histogram_plot, log_bins, percentile_markers, tail_plot, tail_points};
pub use load::{load_kinds, load_plot, LoadKind};
pub use run::{period_plot, series_plot};

use super::svg::PALETTE;

/// Colour number `i` of the palette.
pub fn color(i: usize) -> String {
    PALETTE[i % PALETTE.len()].to_string()
}
