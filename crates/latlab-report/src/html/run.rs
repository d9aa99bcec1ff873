//! A run's section: its settings and verdict, the requirements, the
//! latency table, the plots, the load, the explanation, the system.

use std::fmt::Write;

use latlab_document::RunDocument;
use latlab_measure::stats::Summary;
use latlab_measure::units::format_ns;

use super::badge::verdict_badge;
use super::explain::render_explain;
use super::list::list;
use super::load::render_load;
use super::page::figures;
use super::plots::{self, percentile_markers};
use super::split::render_split;
use super::svg::Plot;
use super::system::render_system;
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::units::short_number;

impl HtmlSection for RunDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render_run(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        run_plots(id, self)
    }
}

/// Every plot of a run's section, with ids starting with `prefix`.
fn run_plots(prefix: &str, run: &RunDocument) -> Vec<Plot> {
    let per_cpu: Vec<(String, &latlab_measure::histogram::Histogram)> = run
        .threads
        .iter()
        .map(|t| (format!("CPU{}", t.cpu), &t.histogram))
        .collect();
    let mut out = vec![
        plots::histogram_plot(
            &format!("{prefix}-histogram"),
            "Latency histogram per CPU",
            &per_cpu,
        ),
        plots::tail_plot(
            &format!("{prefix}-tail"),
            "Cumulative distribution: share of samples above each latency",
            &[("all CPUs".to_string(), &run.overall.histogram)],
            percentile_markers(run, "#b02a1a", ""),
        ),
    ];
    out.extend(plots::series_plot(&format!("{prefix}-time"), run));
    out.extend(plots::period_plot(&format!("{prefix}-period"), run));
    if let Some(load) = &run.load {
        out.extend(plots::load_plot(&format!("{prefix}-load"), load));
    }
    out
}

fn render_run(h: &mut String, id: &str, label: &str, run: &RunDocument) {
    let s = &run.settings;
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{} {}</h2>\
         <p>Started {} · {:.1} s measured{} · {} timer, {} period, {}, CPUs {} · {}</p>",
        escape(label),
        verdict_badge(run.verdict),
        escape(run.started_at.as_deref().unwrap_or_default()),
        run.elapsed_s,
        if run.interrupted {
            " (interrupted)"
        } else {
            ""
        },
        s.timer,
        format_ns(s.interval_ns),
        escape(&crate::text::run::scheduling(s)),
        s.cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        escape(&run.load_name())
    );
    if !run.requirements.is_empty() {
        h.push_str("<ul class=\"req\">");
        for outcome in &run.requirements {
            let _ = write!(
                h,
                "<li>{} {}{}</li>",
                if outcome.passed { "✔" } else { "✘" },
                escape(&requirement_text(&outcome.requirement)),
                if outcome.details.is_empty() {
                    String::new()
                } else {
                    format!(": {}", escape(&outcome.details.join("; ")))
                }
            );
        }
        h.push_str("</ul>\n");
    }
    list(h, "warn", &run.warnings);
    h.push_str(
        "<h3>Wake-up latency</h3><table class=\"summary\"><tr><th class=\"l\">CPU</th><th>samples</th>\
         <th>min</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th>\
         <th>missed periods</th></tr>\n",
    );
    for t in &run.threads {
        summary_row(
            h,
            &format!("CPU{}", t.cpu),
            t.cycles,
            t.missed_periods,
            &t.latency,
        );
    }
    if run.threads.len() > 1 {
        summary_row(
            h,
            "all",
            run.overall.cycles,
            run.overall.missed_periods,
            &run.overall.latency,
        );
    }
    h.push_str("</table>\n");
    render_split(h, run);
    for t in run.threads.iter().filter(|t| t.early_wakeups > 0) {
        let _ = writeln!(
            h,
            "<p class=\"warn\">Early wake-ups: {} on CPU{}, up to {} before the intended time. \
             That cannot happen (a latlab bug or a clock problem), so this measurement is suspect; \
             they are not in the figures above.</p>",
            t.early_wakeups,
            t.cpu,
            format_ns(t.max_early_ns)
        );
    }
    if let Some(worst) = run.overall.worst.first() {
        let _ = writeln!(
            h,
            "<p>Worst sample: {} on CPU{} at {:.3} s (cycle {}).</p>",
            format_ns(worst.latency_ns),
            worst.cpu,
            worst.offset_s,
            worst.cycle
        );
    }
    figures(h, &run_plots(id, run));
    if let Some(load) = &run.load {
        render_load(h, load, &run.load_name());
    }
    if let Some(explain) = &run.explain {
        render_explain(h, explain);
    }
    render_system(h, run);
    if let Some(trace) = &run.trace {
        let _ = writeln!(
            h,
            "<details><summary>Kernel trace recorded alongside</summary><pre>{}</pre></details>",
            // Through a JSON value, so the keys stay in the order earlier
            // versions showed them (alphabetical).
            escape(
                &serde_json::to_value(trace)
                    .and_then(|v| serde_json::to_string_pretty(&v))
                    .unwrap_or_default()
            )
        );
    }
    h.push_str("</section>\n");
}

/// A row of the latency table.
fn summary_row(h: &mut String, name: &str, cycles: u64, missed: u64, s: &Summary) {
    let _ = writeln!(
        h,
        "<tr><td class=\"l\">{}</td><td>{}</td>{}<td>{}</td></tr>",
        escape(name),
        cycles,
        latency_cells(s),
        missed
    );
}

/// The cells of a latency table's figures: min, mean, p50, p99, p99.9,
/// p99.99, max.
pub(crate) fn latency_cells(s: &Summary) -> String {
    [
        s.min,
        s.mean.round() as u64,
        s.p50,
        s.p99,
        s.p99_9,
        s.p99_99,
        s.max,
    ]
    .map(|ns| format!("<td>{}</td>", format_ns(ns)))
    .concat()
}

/// A requirement in words: `max latency ≤ 1.00 ms`.
fn requirement_text(r: &latlab_measure::requirements::Requirement) -> String {
    use latlab_measure::requirements::Requirement;
    match r {
        Requirement::MaxLatency { limit_ns } => format!("max latency ≤ {}", format_ns(*limit_ns)),
        Requirement::Percentile {
            percentile,
            limit_ns,
        } => format!("p{percentile} ≤ {}", format_ns(*limit_ns)),
        Requirement::PeriodTolerance {
            tolerance,
            min_share,
        } => format!(
            "{} % of periods within ±{} %",
            short_number(min_share * 100.0),
            short_number(tolerance * 100.0)
        ),
    }
}
