//! A `latlab tune` result in the report: the before/after figures (a table
//! and their tail plot), each measured fix's effect with its interval (a
//! forest plot per metric: one row per fix, the interval bar with its
//! estimate, the noise band around no change), the plan and the boot
//! command line as tables, and how tune left the system.

use std::fmt::Write;

use latlab_tune::result::{Figures, Outcome, TuneResult};
use latlab_tune::verify::Metric;

use super::delta::delta_cell;
use super::list::list;
use super::page::figures;
use super::svg::{Axis, Band, Format, Marker, Plot, Series, Shape};
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::text::tune::{
    cost_name, current_to_proposed, effect_of, ending_lines, outcome_name, takes_name,
};
use crate::units::{format_ns, us};

/// The colour of a kept fix's row in the forest plots, and of a dropped one's.
const KEPT: &str = "#2a9d4a";
const DROPPED: &str = "#d3452c";

impl HtmlSection for TuneResult {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        let mut out = vec![before_after_plot(&format!("{id}-before-after"), self)];
        out.extend(
            Metric::ALL
                .into_iter()
                .filter_map(|m| effect_plot(&format!("{id}-effect-{}", m.name()), self, m)),
        );
        out
    }
}

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
            color: super::plots::color(i),
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
    let measured: Vec<(usize, &latlab_tune::verify::Effect)> = r
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
            hi + pad,
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
        label: "no change".into(),
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

/// A badge of what became of a fix.
fn outcome_badge(outcome: &Outcome) -> String {
    let class = match outcome {
        Outcome::Kept { .. } => "pass",
        Outcome::Dropped { .. } => "fail",
        _ => "none",
    };
    format!(
        "<span class=\"badge {class}\">{}</span>",
        outcome_name(outcome)
    )
}

/// The figures as table cells (µs).
fn figure_cells(f: &Figures) -> String {
    let mut h = format!("<td>{}</td>", f.samples);
    for ns in [f.p50_ns, f.p99_ns, f.p999_ns, f.max_ns] {
        let _ = write!(h, "<td>{}</td>", us(ns));
    }
    let _ = write!(h, "<td>{}</td>", f.missed);
    h
}

fn render(h: &mut String, id: &str, label: &str, r: &TuneResult) {
    let s = &r.settings;
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>latlab tune: real-time CPUs \
         <b>{}</b>, housekeeping {}, load <code>{}</code>{}; rounds of {}, {} per fix.</p>",
        escape(label),
        latlab_fix::cpu_list(&s.cpus),
        latlab_fix::cpu_list(&s.housekeeping),
        escape(&s.load),
        s.deadline_ns
            .map(|d| format!(", deadline {}", format_ns(d)))
            .unwrap_or_default(),
        format_ns(s.round_ns),
        s.rounds
    );
    h.push_str(
        "<h3>Before and after</h3><table class=\"tune-figures\"><tr><th class=\"l\"></th>\
         <th>samples</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
         <th>missed</th></tr>\n",
    );
    let b = &r.baseline;
    let _ = writeln!(h, "<tr><td class=\"l\">before</td>{}</tr>", figure_cells(b));
    if let Some(a) = &r.after {
        let _ = writeln!(h, "<tr><td class=\"l\">after</td>{}</tr>", figure_cells(a));
        h.push_str("<tr><td class=\"l\">change</td><td></td>");
        for (x, y) in [
            (b.p50_ns, a.p50_ns),
            (b.p99_ns, a.p99_ns),
            (b.p999_ns, a.p999_ns),
            (b.max_ns, a.max_ns),
            (b.missed, a.missed),
        ] {
            h.push_str(&delta_cell(x as f64, y as f64, true));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    figures(h, &r.html_plots(id));
    h.push_str(
        "<h3>Each fix, applied and undone in alternating rounds</h3><table class=\"tune-effects\">\
         <tr><th>#</th><th class=\"l\">knob</th><th class=\"l\">verdict</th><th>p99 µs</th>\
         <th>p99.9 µs</th><th>max µs</th><th>noise (p99)</th><th>confidence</th><th>rounds</th>\
         <th class=\"l\">why</th></tr>\n",
    );
    for (i, f) in r.fixes.iter().enumerate() {
        let Some(e) = effect_of(f) else { continue };
        let interval = |m: Metric| {
            let c = e.change(m);
            let v = |ns: i64| ns as f64 / 1e3;
            format!(
                "<td>{:+.1} [{:.1}, {:.1}]</td>",
                v(c.shift_ns),
                v(c.low_ns),
                v(c.high_ns)
            )
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td>{}{}{}\
             <td>{}</td><td>{:.1} %</td><td>{} + {}</td><td class=\"l wrap\">{}</td></tr>",
            i + 1,
            escape(&f.fix.knob.to_string()),
            outcome_badge(&f.outcome),
            interval(Metric::P99),
            interval(Metric::P999),
            interval(Metric::Max),
            us(e.p99.noise_ns),
            e.change(e.decided_by).confidence * 100.0,
            e.applied,
            e.undone,
            escape(&e.why)
        );
    }
    h.push_str(
        "</table>\n<h3>Plan</h3><table class=\"tune-plan\"><tr><th>#</th>\
        <th class=\"l\">knob</th><th class=\"l\">current → proposed</th><th class=\"l\">takes</th>\
        <th class=\"l\">cost</th><th class=\"l\">why</th><th class=\"l\">outcome</th></tr>\n",
    );
    for (i, f) in r.fixes.iter().enumerate() {
        let detail = match (&f.fix.refused, &f.outcome) {
            (Some(why), _) => format!(" refused: {why}"),
            (None, Outcome::Skipped { reason }) => format!(" {reason}"),
            _ => String::new(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"l\"><code>{}</code></td><td class=\"l\"><code>{}</code></td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l wrap\">{}</td>\
             <td class=\"l wrap\">{}{}</td></tr>",
            i + 1,
            escape(&f.fix.knob.to_string()),
            escape(&current_to_proposed(f)),
            takes_name(f.takes),
            cost_name(f.cost),
            escape(&f.fix.why),
            outcome_badge(&f.outcome),
            escape(&detail)
        );
    }
    h.push_str("</table>\n");
    if !r.boot.parameters.is_empty() {
        h.push_str(
            "<h3>Kernel command line (takes effect at the next boot)</h3>\
            <table class=\"tune-boot\"><tr><th class=\"l\">parameter</th><th class=\"l\">why</th>\
            <th class=\"l\">already booted with it</th></tr>\n",
        );
        for p in &r.boot.parameters {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\"><code>{}</code></td><td class=\"l wrap\">{}</td><td class=\"l\">{}</td></tr>",
                escape(&p.text),
                escape(&p.why),
                if p.already { "yes" } else { "no" }
            );
        }
        let _ = writeln!(
            h,
            "</table>\n<p>GRUB:</p><pre><code>{}</code></pre><p>U-Boot / extlinux:</p><pre><code>{}</code></pre>",
            escape(&r.boot.grub),
            escape(&r.boot.uboot)
        );
    }
    h.push_str("<h3>How tune left the system</h3>");
    for line in ending_lines(r) {
        let _ = writeln!(h, "<p>{}</p>", escape(&line));
    }
    list(h, "warn", &r.warnings);
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests;
