//! A `latlab watch` result: its terminal text, its HTML section and plots
//! (the long-term plot of the worst latency per interval over the whole
//! watch, as OSADL's long-term plots, the histograms per task, and the
//! shares of cause categories over time).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use latlab_document::WatchDocument;
use latlab_measure::histogram::Histogram;
use latlab_measure::units::format_ns;

use crate::html::plots::{color, histogram_plot};
use crate::html::svg::{escape, Axis, Plot, Series, Shape};

fn hms(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The text `latlab watch` prints at the end and `latlab report` shows.
pub fn text(d: &WatchDocument) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "latlab watch: {} for {} ({}), threshold {}, stopped by {}",
        d.settings.selection,
        hms(d.duration_ns),
        d.settings.backend,
        format_ns(d.settings.threshold_ns),
        d.stopped_by
    );
    let _ = writeln!(
        s,
        "\n{:<16} {:>8} {:<9} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "task", "tid", "policy", "kind", "wake-ups", "p50", "p99", "p99.9", "max", "late"
    );
    for t in &d.tasks {
        for (kind, k) in [
            ("thread", &t.thread),
            ("irq", &t.irq),
            ("wakeup", &t.wakeup),
        ] {
            let Some(k) = k else { continue };
            let m = &k.summary;
            let flag = |p: f64, v: u64| {
                let needed = (10.0 / (1.0 - p / 100.0)).ceil() as u64;
                if m.count < needed {
                    format!("{}?", format_ns(v))
                } else {
                    format_ns(v)
                }
            };
            let policy = t
                .policy
                .map_or_else(|| "-".to_string(), |p| p.label(t.rt_priority.unwrap_or(0)));
            let _ = writeln!(
                s,
                "{:<16} {:>8} {:<9} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6}",
                t.comm.chars().take(16).collect::<String>(),
                t.tid,
                policy,
                kind,
                m.count,
                format_ns(m.p50),
                flag(99.0, m.p99),
                flag(99.9, m.p99_9),
                format_ns(m.max),
                if kind == "irq" {
                    String::new()
                } else {
                    t.late_windows.to_string()
                }
            );
        }
    }
    let sp = &d.spikes;
    let _ = writeln!(
        s,
        "\nspikes over {}: {} ({:.1}/h, 95 % CI {:.1}-{:.1}/h); worst {} at {}",
        format_ns(sp.threshold_ns),
        sp.count,
        sp.per_hour,
        sp.per_hour_low,
        sp.per_hour_high,
        format_ns(sp.worst_ns),
        hms(sp.worst_at_ns)
    );
    let w = &d.windows_seen;
    let _ = writeln!(
        s,
        "late windows explained: {} (+{} baseline), {} throttled, {} lost, {} cut short",
        w.late, w.baseline, w.throttled, w.lost, w.truncated
    );
    if !d.causes.is_empty() {
        let _ = writeln!(
            s,
            "\ncauses, ranked (explain's analysis of {} windows):",
            w.analysed
        );
        for (i, c) in d.causes.iter().take(8).enumerate() {
            let _ = writeln!(
                s,
                "{:>2}. {:>5.1} %  {} (in {} late windows)\n           {}",
                i + 1,
                c.share * 100.0,
                c.description,
                c.late_windows,
                c.recommendation
            );
        }
    }
    if !d.cause_totals.is_empty() {
        let _ = writeln!(s, "\nover the whole watch (every late window):");
        for c in d.cause_totals.iter().take(6) {
            let _ = writeln!(
                s,
                "  {:>10}  {:>5} windows  {}",
                format_ns(c.late_ns),
                c.late_windows,
                c.description
            );
        }
    }
    let o = &d.overhead;
    let _ = writeln!(
        s,
        "\nwatch's own cost: process {} CPU, BPF programs {} ({} runs), {} CPU per hour; peak memory {} KiB",
        format_ns(o.process_cpu_ns),
        format_ns(o.bpf_ns),
        o.bpf_runs,
        format_ns(o.cpu_ns_per_hour),
        o.max_rss_kib
    );
    for n in &d.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The long-term plot: the worst latency of each interval over the watch
/// (log scale), with the threshold.
pub fn long_term_plot(id: &str, d: &WatchDocument) -> Option<Plot> {
    if d.snapshots.is_empty() {
        return None;
    }
    let hours = d.duration_ns as f64 / 3.6e12;
    let (unit, scale) = if hours >= 2.0 {
        ("hours", 3.6e12)
    } else {
        ("minutes", 6e10)
    };
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
    let end = d
        .snapshots
        .last()
        .map_or(1.0, |s| s.at_ns as f64 / scale)
        .max(1e-3);
    let mut plot = Plot::new(
        id,
        "Worst latency per interval over the whole watch",
        Axis::linear(0.0, end, &format!("time ({unit})")),
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
    let scale = if d.duration_ns as f64 >= 7.2e12 {
        3.6e12
    } else {
        6e10
    };
    let unit = if scale > 1e12 { "hours" } else { "minutes" };
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
    let end = d
        .snapshots
        .last()
        .map_or(1.0, |s| s.at_ns as f64 / scale)
        .max(1e-3);
    let mut plot = Plot::new(
        id,
        "Late windows per interval by cause category (stacked)",
        Axis::linear(0.0, end, &format!("time ({unit})")),
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
