//! A `latlab watch` result in the report: its text, the long-term plot of
//! the worst latency per interval over the whole watch (as OSADL's
//! long-term plots), the histograms per task, and the shares of cause
//! categories over time.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use latlab_document::WatchDocument;
use latlab_measure::histogram::Histogram;
use latlab_measure::units::format_ns;

use super::page::figures;
use super::plots::{color, histogram_plot};
use super::svg::{Axis, Plot, Series, Shape};
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::text::watch::text;
use crate::units::hms;

/// The time axis of a watch's plots, in hours for a watch of two hours or
/// more, else in minutes, up to its last snapshot; and the nanoseconds per
/// unit of that axis.
fn time_axis(d: &WatchDocument) -> (Axis, f64) {
    let (unit, scale) = if d.duration_ns as f64 >= 7.2e12 {
        ("hours", 3.6e12)
    } else {
        ("minutes", 6e10)
    };
    let end = d
        .snapshots
        .last()
        .map_or(1.0, |s| s.at_ns as f64 / scale)
        .max(1e-3);
    (Axis::linear(0.0, end, &format!("time ({unit})")), scale)
}

/// The long-term plot: the worst latency of each interval over the watch
/// (log scale), with the threshold.
pub fn long_term_plot(id: &str, d: &WatchDocument) -> Option<Plot> {
    if d.snapshots.is_empty() {
        return None;
    }
    let (time, scale) = time_axis(d);
    let worst = d
        .snapshots
        .iter()
        .map(|s| s.worst_ns)
        .max()
        .unwrap_or(1)
        .max(1);
    let low = d
        .snapshots
        .iter()
        .map(|s| s.p99_ns)
        .filter(|&v| v > 0)
        .min()
        .unwrap_or(1)
        .max(1);
    let end = time.max;
    let mut plot = Plot::new(
        id,
        "Worst latency per interval over the whole watch",
        time,
        Axis::log(
            (low as f64 / 1e3 / 2.0).max(0.1),
            (worst.max(d.settings.threshold_ns) as f64 / 1e3) * 2.0,
            "latency (µs, log)",
        ),
    );
    let points = |f: &dyn Fn(&latlab_watch::document::Snapshot) -> u64| -> Vec<(f64, f64)> {
        d.snapshots
            .iter()
            .filter(|s| s.samples > 0)
            .map(|s| (s.at_ns as f64 / scale, (f(s) as f64 / 1e3).max(0.1)))
            .collect()
    };
    plot.series.push(Series {
        name: "worst per interval".into(),
        color: color(0),
        shape: Shape::Line(points(&|s| s.worst_ns)),
        dashed: false,
    });
    plot.series.push(Series {
        name: "p99 per interval".into(),
        color: color(1),
        shape: Shape::Line(points(&|s| s.p99_ns)),
        dashed: true,
    });
    plot.series.push(Series {
        name: "threshold".into(),
        color: "#888".into(),
        shape: Shape::Line(vec![
            (0.0, d.settings.threshold_ns as f64 / 1e3),
            (end, d.settings.threshold_ns as f64 / 1e3),
        ]),
        dashed: true,
    });
    Some(plot)
}

/// Late windows per interval by the category of their largest cause.
pub fn cause_share_plot(id: &str, d: &WatchDocument) -> Option<Plot> {
    let mut by_cat: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    let any = d.snapshots.iter().any(|s| !s.by_category.is_empty());
    if !any {
        return None;
    }
    let (time, scale) = time_axis(d);
    let mut top = 1.0f64;
    for s in &d.snapshots {
        let total: u64 = s.by_category.iter().map(|c| c.1).sum();
        top = top.max(total as f64);
    }
    let cats: Vec<&str> = {
        let mut c: Vec<&str> = d
            .snapshots
            .iter()
            .flat_map(|s| s.by_category.iter().map(|c| c.0.as_str()))
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    // Stacked: each category's line is the sum of it and those before it.
    for s in &d.snapshots {
        let x = s.at_ns as f64 / scale;
        let mut acc = 0.0;
        for cat in &cats {
            acc += s
                .by_category
                .iter()
                .find(|c| c.0 == *cat)
                .map_or(0, |c| c.1) as f64;
            by_cat.entry(cat).or_default().push((x, acc));
        }
    }
    let mut plot = Plot::new(
        id,
        "Late windows per interval by cause category (stacked)",
        time,
        Axis::linear(0.0, top * 1.1, "late windows"),
    );
    for (i, cat) in cats.iter().enumerate() {
        plot.series.push(Series {
            name: cat.to_string(),
            color: color(i),
            shape: Shape::Steps(by_cat.remove(cat).unwrap_or_default()),
            dashed: false,
        });
    }
    Some(plot)
}

/// Every plot of a watch result.
pub fn plots(id: &str, d: &WatchDocument) -> Vec<Plot> {
    let mut out: Vec<Plot> = Vec::new();
    out.extend(long_term_plot(&format!("{id}-longterm"), d));
    let hists: Vec<(String, Histogram)> = d
        .tasks
        .iter()
        .flat_map(|t| {
            [
                ("thread", &t.thread),
                ("irq", &t.irq),
                ("wakeup", &t.wakeup),
            ]
            .into_iter()
            .filter_map(move |(k, r)| {
                r.as_ref().filter(|r| r.summary.count > 0).map(|r| {
                    (
                        format!("{}:{} {k}", t.comm, t.tid),
                        r.histogram.to_histogram(),
                    )
                })
            })
        })
        .take(8)
        .collect();
    if !hists.is_empty() {
        let hists: Vec<(String, &Histogram)> = hists.iter().map(|(n, h)| (n.clone(), h)).collect();
        out.push(histogram_plot(
            &format!("{id}-hist"),
            "Latency histograms (kernel-side, latlab run's buckets)",
            &hists,
        ));
    }
    out.extend(cause_share_plot(&format!("{id}-causes"), d));
    out
}

/// The HTML section (without the plots, which the caller appends).
pub fn section(h: &mut String, id: &str, label: &str, d: &WatchDocument) {
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p><code>latlab watch</code> of {} for {} \
         (threshold {}, started {}).</p>",
        escape(label),
        escape(&d.settings.selection),
        hms(d.duration_ns),
        format_ns(d.settings.threshold_ns),
        escape(d.started_at.as_deref().unwrap_or_default())
    );
    h.push_str("<pre>");
    h.push_str(&escape(&text(d)));
    h.push_str("</pre>\n");
}

impl HtmlSection for latlab_document::WatchDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        section(h, id, label, self);
        figures(h, &self.html_plots(id));
        h.push_str("</section>\n");
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        plots(id, self)
    }
}
