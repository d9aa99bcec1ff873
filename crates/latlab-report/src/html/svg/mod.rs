//! A small SVG plotter: one plot is axes, series, markers and bands, drawn
//! into a fixed view box. Pure string building, deterministic output (every
//! coordinate is rounded to 0.1 px), no scripts and no external resources.

//!
//! [`axis`] maps values to positions and writes the ticks, [`plot`] is the
//! data of a plot, [`draw`] writes it as SVG.

pub mod axis;
pub mod draw;
pub mod plot;

pub use axis::{Axis, Format, Scale};
pub use plot::{Band, Marker, Plot, Series, Shape};
// The one escaper, at the path the board's pages (`crate::dashboard`) use.
pub use crate::markup::escape;

/// Width of every plot's view box, px.
pub const WIDTH: f64 = 720.0;
/// Height of every plot's view box, px.
pub const HEIGHT: f64 = 300.0;
pub(crate) const LEFT: f64 = 76.0;
pub(crate) const RIGHT: f64 = 18.0;
pub(crate) const TOP: f64 = 44.0;
pub(crate) const BOTTOM: f64 = 46.0;

/// Colours for series, in order: distinguishable, also in grey print.
pub const PALETTE: [&str; 8] = [
    "#1f6fb4", "#d3452c", "#2a9d4a", "#8a4fc0", "#e08a00", "#5b6b7a", "#c2408f", "#17a2b8",
];
