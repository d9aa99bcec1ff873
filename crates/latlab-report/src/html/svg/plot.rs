//! What a plot holds: its axes, series, markers and bands.

use super::axis::Axis;

/// What a series draws.
#[derive(Debug, Clone)]
pub enum Shape {
    /// Points joined by straight lines.
    Line(Vec<(f64, f64)>),
    /// Points joined by straight lines, each point also a dot (one result
    /// each, so a single one shows).
    LineWithPoints(Vec<(f64, f64)>),
    /// A staircase: each y holds until the next x.
    Steps(Vec<(f64, f64)>),
    /// Bins `(x_low, x_high, y)` drawn as a filled outline down to the axis.
    Bins(Vec<(f64, f64, f64)>),
}

/// One named series.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// CSS colour.
    pub color: String,
    /// The data.
    pub shape: Shape,
    /// Dashed stroke (to tell e.g. p99 from max).
    pub dashed: bool,
}

/// A vertical line at `x` with a label (p99, max).
#[derive(Debug, Clone)]
pub struct Marker {
    /// Position on the x axis.
    pub x: f64,
    /// Label at the top of the line.
    pub label: String,
    /// CSS colour.
    pub color: String,
}

/// A shaded x range (a tolerance band).
#[derive(Debug, Clone)]
pub struct Band {
    /// Start on the x axis.
    pub from: f64,
    /// End on the x axis.
    pub to: f64,
    /// Label inside the band.
    pub label: String,
}

/// A complete plot.
#[derive(Debug, Clone)]
pub struct Plot {
    /// Identifier: unique within a report, used for the clip path and as
    /// the file name of `--png`.
    pub id: String,
    /// Title drawn above the plot.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The data, drawn in order.
    pub series: Vec<Series>,
    /// Vertical marker lines.
    pub markers: Vec<Marker>,
    /// Shaded x ranges, drawn under the data.
    pub bands: Vec<Band>,
}

impl Plot {
    /// A plot with axes and no data yet.
    pub fn new(id: &str, title: &str, x: Axis, y: Axis) -> Plot {
        Plot {
            id: id.into(),
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            markers: Vec::new(),
            bands: Vec::new(),
        }
    }
}
