//! A plot drawn as SVG into the fixed view box.

use std::fmt::Write;

use super::plot::{Plot, Series, Shape};
use super::{BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH};
use crate::markup::escape;

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
    use super::super::axis::Axis;
    use super::super::plot::Marker;
    use super::*;

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
