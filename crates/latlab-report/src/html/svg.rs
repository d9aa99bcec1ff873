//! A small SVG plotter: one plot is axes, series, markers and bands, drawn
//! into a fixed view box. Pure string building, deterministic output (every
//! coordinate is rounded to 0.1 px), no scripts and no external resources.

use std::fmt::Write;

/// Width of every plot's view box, px.
pub const WIDTH: f64 = 720.0;
/// Height of every plot's view box, px.
pub const HEIGHT: f64 = 300.0;
const LEFT: f64 = 76.0;
const RIGHT: f64 = 18.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 46.0;

/// Colours for series, in order: distinguishable, also in grey print.
pub const PALETTE: [&str; 8] = [
    "#1f6fb4", "#d3452c", "#2a9d4a", "#8a4fc0", "#e08a00", "#5b6b7a", "#c2408f", "#17a2b8",
];

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Proportional.
    Linear,
    /// Logarithmic (values at or below zero sit on the axis minimum).
    Log,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A number with k/M/G suffixes: `1`, `250`, `10k`, `1M`.
    Number,
    /// A share written as a percentage: `100%`, `0.1%`, `0.001%`.
    Percent,
}

/// One axis.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// Linear or log.
    pub scale: Scale,
    /// Axis title.
    pub label: String,
    /// Tick label format.
    pub format: Format,
}

impl Axis {
    /// A linear axis over `min..=max` (widened if empty).
    pub fn linear(min: f64, max: f64, label: &str) -> Axis {
        let max = if max > min { max } else { min + 1.0 };
        Axis {
            min,
            max,
            scale: Scale::Linear,
            label: label.into(),
            format: Format::Number,
        }
    }

    /// A log axis from the decade at or below `min` to the decade at or above `max`.
    pub fn log(min: f64, max: f64, label: &str) -> Axis {
        let min = if min > 0.0 { min } else { 1.0 };
        let max = if max > min { max } else { min * 10.0 };
        Axis {
            min: 10f64.powf(min.log10().floor()),
            max: 10f64.powf(max.log10().ceil()),
            scale: Scale::Log,
            label: label.into(),
            format: Format::Number,
        }
    }

    /// The same axis with another tick format.
    pub fn with_format(mut self, format: Format) -> Axis {
        self.format = format;
        self
    }

    /// Position of `value` along the axis, 0..=1 (clamped).
    pub fn fraction(&self, value: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear => (value - self.min) / (self.max - self.min),
            Scale::Log => {
                if value <= 0.0 {
                    0.0
                } else {
                    (value.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
                }
            }
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Tick positions and labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let values: Vec<f64> = match self.scale {
            Scale::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let mut v = (self.min / step).ceil() * step;
                let mut out = Vec::new();
                while v <= self.max + step * 1e-9 && out.len() < 50 {
                    out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                    v += step;
                }
                out
            }
            Scale::Log => {
                let first = self.min.log10().round() as i32;
                let last = self.max.log10().round() as i32;
                let decades = last - first;
                let mantissas: &[f64] = if decades <= 2 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let every = (decades / 8 + 1).max(1);
                let mut out = Vec::new();
                for e in first..=last {
                    if (e - first) % every != 0 {
                        continue;
                    }
                    for m in mantissas {
                        let v = m * 10f64.powi(e);
                        if v >= self.min * 0.999 && v <= self.max * 1.001 {
                            out.push(v);
                        }
                    }
                }
                out
            }
        };
        values
            .into_iter()
            .map(|v| (v, format_tick(v, self.format)))
            .collect()
    }
}

/// A step of 1, 2 or 5 times a power of ten near `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let m = raw / magnitude;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// A number in at most 3 significant digits, without trailing zeros.
pub fn short_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - 1 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn format_tick(v: f64, format: Format) -> String {
    match format {
        Format::Percent => format!("{}%", short_number(v * 100.0)),
        Format::Number => {
            let a = v.abs();
            if a >= 1e9 {
                format!("{}G", short_number(v / 1e9))
            } else if a >= 1e6 {
                format!("{}M", short_number(v / 1e6))
            } else if a >= 1e4 {
                format!("{}k", short_number(v / 1e3))
            } else {
                short_number(v)
            }
        }
    }
}

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

/// Escapes `&`, `<`, `>` and quotes for XML/HTML text and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate rounded to 0.1 px.
fn c(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
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

    fn px(&self, x: f64) -> f64 {
        LEFT + self.x.fraction(x) * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT - BOTTOM - self.y.fraction(y) * (HEIGHT - TOP - BOTTOM)
    }

    /// The plot as a standalone `<svg>` element (with the SVG namespace, so
    /// the same text is a valid .svg file).
    pub fn to_svg(&self) -> String {
        let mut s = String::new();
        let (x0, x1) = (LEFT, WIDTH - RIGHT);
        let (y0, y1) = (HEIGHT - BOTTOM, TOP);
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {} {}\" \
             role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"13\">",
            WIDTH,
            HEIGHT,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#fff\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"19\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            c(x0),
            escape(&self.title)
        );
        // Bands under everything.
        for band in &self.bands {
            let (a, b) = (self.px(band.from), self.px(band.to));
            let _ = writeln!(
                s,
                "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2a9d4a\" fill-opacity=\"0.13\"/>",
                c(a),
                c(y1),
                c((b - a).max(1.0)),
                c(y0 - y1)
            );
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" fill=\"#1d7a38\" text-anchor=\"start\">{}</text>",
                c(b + 3.0),
                c(y1 + 12.0),
                escape(&band.label)
            );
        }
        // Grid and ticks.
        s.push_str("<g class=\"grid\" stroke=\"#e3e6ea\" stroke-width=\"1\">\n");
        let xticks = self.x.ticks();
        let yticks = self.y.ticks();
        for (v, _) in &xticks {
            let x = self.px(*v);
            let _ = writeln!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                c(x),
                c(y0),
                c(x),
                c(y1)
            );
        }
        for (v, _) in &yticks {
            let y = self.py(*v);
            let _ = writeln!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                c(x0),
                c(y),
                c(x1),
                c(y)
            );
        }
        s.push_str("</g>\n<g class=\"ticks\" fill=\"#444\">\n");
        for (v, label) in &xticks {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                c(self.px(*v)),
                c(y0 + 17.0),
                escape(label)
            );
        }
        for (v, label) in &yticks {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                c(x0 - 6.0),
                c(self.py(*v) + 4.0),
                escape(label)
            );
        }
        s.push_str("</g>\n");
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
            c((x0 + x1) / 2.0),
            c(HEIGHT - 8.0),
            escape(&self.x.label)
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
            c((y0 + y1) / 2.0),
            escape(&self.y.label)
        );
        // Data, clipped to the plot area.
        let _ = writeln!(
            s,
            "<clipPath id=\"clip-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>",
            self.id,
            c(x0),
            c(y1 - 1.0),
            c(x1 - x0),
            c(y0 - y1 + 1.0)
        );
        let _ = writeln!(s, "<g clip-path=\"url(#clip-{})\">", self.id);
        for series in &self.series {
            self.draw_series(&mut s, series);
        }
        s.push_str("</g>\n");
        for marker in &self.markers {
            let x = self.px(marker.x);
            let _ = writeln!(
                s,
                "<line class=\"marker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-dasharray=\"4 3\"/>",
                c(x),
                c(y0),
                c(x),
                c(y1),
                marker.color
            );
        }
        // Marker labels: each in the first row where it overlaps no label
        // already placed (widths estimated from the text length), a new
        // row when every row has one in the way (four runs whose maxima lie
        // close together take four rows).
        let mut rows: Vec<Vec<(f64, f64)>> = Vec::new();
        for marker in &self.markers {
            let x = self.px(marker.x);
            let width = 7.0 * marker.label.chars().count() as f64;
            let anchor = if x > x1 - 110.0 { "end" } else { "start" };
            let (tx, span) = if anchor == "end" {
                (x - 3.0, (x - 3.0 - width, x - 3.0))
            } else {
                (x + 3.0, (x + 3.0, x + 3.0 + width))
            };
            let row = (0..rows.len())
                .find(|&r| rows[r].iter().all(|&(a, b)| span.1 < a || span.0 > b))
                .unwrap_or_else(|| {
                    rows.push(Vec::new());
                    rows.len() - 1
                });
            rows[row].push(span);
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" fill=\"{}\" text-anchor=\"{anchor}\">{}</text>",
                c(tx),
                c(y1 + 13.0 + 14.0 * row as f64),
                marker.color,
                escape(&marker.label)
            );
        }
        // Axes frame.
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>",
            c(x0),
            c(y1),
            c(x1 - x0),
            c(y0 - y1)
        );
        // Legend, right-aligned above the plot.
        let mut lx = x1;
        for series in self.series.iter().rev() {
            let width = 16.0 + 7.4 * series.name.chars().count() as f64 + 14.0;
            lx -= width;
            let dash = if series.dashed {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<line x1=\"{}\" y1=\"33\" x2=\"{}\" y2=\"33\" stroke=\"{}\" stroke-width=\"2.5\"{dash}/>\
                 <text x=\"{}\" y=\"37\">{}</text>",
                c(lx),
                c(lx + 12.0),
                series.color,
                c(lx + 16.0),
                escape(&series.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }

    fn draw_series(&self, s: &mut String, series: &Series) {
        let dash = if series.dashed {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        let mut d = String::new();
        match &series.shape {
            Shape::Line(points) => {
                for (i, (x, y)) in points.iter().enumerate() {
                    let _ = write!(
                        d,
                        "{}{} {}",
                        if i == 0 { "M" } else { " L" },
                        c(self.px(*x)),
                        c(self.py(*y))
                    );
                }
                if !d.is_empty() {
                    let _ = writeln!(
                        s,
                        "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{dash}/>",
                        series.color
                    );
                }
            }
            Shape::LineWithPoints(points) => {
                self.draw_series(
                    s,
                    &Series {
                        shape: Shape::Line(points.clone()),
                        ..series.clone()
                    },
                );
                for (x, y) in points {
                    let _ = writeln!(
                        s,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"2.6\" fill=\"{}\"/>",
                        c(self.px(*x)),
                        c(self.py(*y)),
                        series.color
                    );
                }
            }
            Shape::Steps(points) => {
                for (i, (x, y)) in points.iter().enumerate() {
                    let (px, py) = (c(self.px(*x)), c(self.py(*y)));
                    if i == 0 {
                        let _ = write!(d, "M{px} {py}");
                    } else {
                        let _ = write!(d, " H{px} V{py}");
                    }
                }
                if !d.is_empty() {
                    let _ = writeln!(
                        s,
                        "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{dash}/>",
                        series.color
                    );
                }
            }
            Shape::Bins(bins) => {
                let base = c(self.py(self.y.min));
                let mut previous_end: Option<String> = None;
                for (low, high, y) in bins {
                    let (a, b, h) = (c(self.px(*low)), c(self.px(*high)), c(self.py(*y)));
                    match &previous_end {
                        Some(end) if *end == a => {
                            let _ = write!(d, " V{h} H{b}");
                        }
                        Some(_) => {
                            let _ = write!(d, " V{base} M{a} {base} V{h} H{b}");
                        }
                        None => {
                            let _ = write!(d, "M{a} {base} V{h} H{b}");
                        }
                    }
                    previous_end = Some(b);
                }
                if !d.is_empty() {
                    let _ = write!(d, " V{base}");
                    let _ = writeln!(
                        s,
                        "<path d=\"{d}\" fill=\"{0}\" fill-opacity=\"0.22\" stroke=\"{0}\" stroke-width=\"1.3\"{dash}/>",
                        series.color
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_spans_whole_decades_and_ticks_each() {
        let axis = Axis::log(3.2, 4_100.0, "us");
        assert_eq!((axis.min, axis.max), (1.0, 10_000.0));
        let labels: Vec<String> = axis.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10k"]);
        assert!((axis.fraction(100.0) - 0.5).abs() < 1e-12);
        assert_eq!(axis.fraction(0.0), 0.0);
    }

    #[test]
    fn linear_ticks_are_round_numbers() {
        let axis = Axis::linear(-60.0, 60.0, "us");
        let labels: Vec<String> = axis.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["-60", "-40", "-20", "0", "20", "40", "60"]);
        let share = Axis::log(1e-4, 1.0, "share").with_format(Format::Percent);
        let labels: Vec<String> = share.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.01%", "0.1%", "1%", "10%", "100%"]);
    }

    /// Seen on the generic vs PREEMPT_RT comparison of four runs: maxima
    /// of 12.1, 12.4, 11.9 and 36 ms drew three labels over each other.
    #[test]
    fn marker_labels_close_together_each_get_a_row() {
        let mut plot = Plot::new(
            "m",
            "markers",
            Axis::log(10.0, 100_000.0, "us"),
            Axis::linear(0.0, 1.0, "y"),
        );
        for (i, x) in [12_100.0, 12_400.0, 11_900.0, 12_000.0]
            .into_iter()
            .enumerate()
        {
            plot.markers.push(Marker {
                x,
                label: format!("max {i} ms"),
                color: "#000".into(),
            });
        }
        let svg = plot.to_svg();
        let mut ys: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<text") && l.contains(">max "))
            .filter_map(|l| l.split("y=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(ys.len(), 4, "{svg}");
        ys.sort_unstable();
        ys.dedup();
        assert_eq!(ys.len(), 4, "labels share a row: {ys:?}");
    }

    #[test]
    fn text_is_escaped() {
        let plot = Plot::new(
            "t",
            "a<b & \"c\"",
            Axis::linear(0.0, 1.0, "x"),
            Axis::linear(0.0, 1.0, "y"),
        );
        let svg = plot.to_svg();
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot;"));
        assert!(!svg.contains("a<b"));
    }
}
