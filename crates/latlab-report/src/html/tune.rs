//! A `latlab tune` result in the report: the before/after figures (a table
//! and their tail plot), each measured fix's effect with its interval (a
//! forest plot per metric: one row per fix, the interval bar with its
//! estimate, the noise band around no change, a dashed line at no change), the plan and the boot
//! command line as tables, and how tune left the system.

use std::fmt::Write;

use latlab_tune::result::{Figures, Outcome, TuneResult};
use latlab_tune::verify::Metric;

use super::delta::delta_cell;
use super::list::list;
use super::page::figures;
use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::text::tune::{
    cost_name, current_to_proposed, effect_of, ending_lines, outcome_name, takes_name,
};
use crate::units::{format_ns, us};

mod plots;
pub use plots::{before_after_plot, effect_plot};

impl HtmlSection for TuneResult {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        let mut out = vec![before_after_plot(&format!("{id}-before-after"), self)];
        out.extend(Metric::ALL.into_iter().filter_map(|m| {
            let name = m.name().replace('.', "");
            effect_plot(&format!("{id}-effect-{name}"), self, m)
        }));
        out
    }
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
    let measured = r.fixes.iter().any(|f| effect_of(f).is_some());
    h.push_str("<h3>Each fix, applied and undone in alternating rounds</h3>");
    if measured {
        h.push_str(
            "<table class=\"tune-effects\"><tr><th>#</th><th class=\"l\">knob</th>\
             <th class=\"l\">verdict</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
             <th>noise µs</th><th>confidence</th><th>rounds</th></tr>\n",
        );
    } else {
        h.push_str("<p>No fix was measured.</p>\n");
    }
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
             <td>{}</td><td>{:.1} %</td><td>{} + {}</td></tr>\n\
             <tr class=\"why\"><td></td><td class=\"l wrap\" colspan=\"8\"><i>{}</i></td></tr>",
            i + 1,
            escape(&f.fix.knob.to_string()),
            outcome_badge(&f.outcome),
            interval(Metric::P99),
            interval(Metric::P999),
            interval(Metric::Max),
            us(e.change(e.decided_by).noise_ns),
            e.change(e.decided_by).confidence * 100.0,
            e.applied,
            e.undone,
            escape(&e.why)
        );
    }
    if measured {
        h.push_str("</table>\n");
    }
    plan_table(h, r);
    boot_table(h, r);
    h.push_str("<h3>How tune left the system</h3>");
    for line in ending_lines(r) {
        let _ = writeln!(h, "<p>{}</p>", escape(&line));
    }
    list(h, "warn", &r.warnings);
    h.push_str("</section>\n");
}

/// The plan: each fix with its knob, values, when it takes effect, its
/// cost, why, and what became of it.
fn plan_table(h: &mut String, r: &TuneResult) {
    h.push_str(
        "<h3>Plan</h3><table class=\"tune-plan\"><tr><th>#</th>\
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
}

/// The kernel command line: each parameter and why, GRUB's and U-Boot's line.
fn boot_table(h: &mut String, r: &TuneResult) {
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
}

#[cfg(test)]
mod tests;
