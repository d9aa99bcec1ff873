//! The lock benchmark (`latlab lockbench --json`, schema `latlab.lockbench`) in a report: per variant
//! the wake-up, lock and lock-wait figures with bars, the background work,
//! and the background throughput over time.

use std::fmt::Write;

use latlab_lock::document::BenchReport;
use latlab_measure::units::format_ns;

use super::page::figures;
use super::plots::color;
use super::svg::{Axis, Plot, Series, Shape};
use crate::formats::HtmlSection;
use crate::markup::escape;

/// The throughput plot: background critical sections per second over time.
pub fn throughput_plot(id: &str, bench: &BenchReport) -> Option<Plot> {
    let series: Vec<(String, Vec<(f64, f64)>)> = bench
        .results
        .iter()
        .map(|r| {
            let points = r
                .throughput
                .iter()
                .map(|p| (p.t_s, p.sections_per_s))
                .collect();
            (r.variant.clone(), points)
        })
        .filter(|(_, p): &(String, Vec<(f64, f64)>)| !p.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let end = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .fold(0.1, f64::max);
    let top = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .fold(1.0, f64::max)
        * 1.05;
    let mut plot = Plot::new(
        id,
        "Background critical sections per second, by lock variant",
        Axis::linear(0.0, end, "time (s)"),
        Axis::linear(0.0, top, "sections per second"),
    );
    for (i, (name, points)) in series.into_iter().enumerate() {
        plot.series.push(Series {
            name,
            color: color(i),
            shape: Shape::Line(points),
            dashed: false,
        });
    }
    Some(plot)
}

/// The section of one lockbench document.
pub fn render(
    h: &mut String,
    id: &str,
    label: &str,
    bench: &BenchReport,
    figures: impl Fn(&mut String, &[Plot]),
) {
    let results = &bench.results;
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Lock benchmark: a SCHED_FIFO \
         periodic task and background threads sharing locks; one row per lock variant.</p>",
        escape(label)
    );
    let worst = results.iter().map(|r| r.lock.max).max().unwrap_or(1).max(1);
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"l\">variant</th><th>periods</th><th>overruns</th>\
         <th>wake p99</th><th>wake max</th><th>lock p99</th><th>lock max</th>\
         <th class=\"l\">lock max (bar)</th><th>lock wait p99</th>\
         <th>bg sections/s</th></tr>\n",
    );
    for r in results {
        let max = r.lock.max;
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"l\"><div class=\"bar\" style=\"width:{:.0}px\"></div></td><td>{}</td><td>{:.0}</td></tr>",
            escape(&r.variant),
            r.periods,
            r.overruns,
            format_ns(r.wake.p99),
            format_ns(r.wake.max),
            format_ns(r.lock.p99),
            format_ns(max),
            (max as f64 / worst as f64 * 160.0).max(1.0),
            format_ns(r.lock_wait.p99),
            r.bg_sections_per_s,
        );
    }
    h.push_str("</table>\n");
    if !bench.goal.is_empty() {
        h.push_str("<ul class=\"req\">");
        for g in &bench.goal {
            let _ = write!(
                h,
                "<li>{} {}: worst lock latency {:.0} % of plain's, {}, background work {:+.1} %</li>",
                if g.met { "✔" } else { "✘" },
                escape(&g.variant),
                g.worst_vs_plain * 100.0,
                g.worst_vs_pi
                    .map_or("no PI variant to compare with".into(), |v| format!(
                        "{:.0} % of PI's",
                        v * 100.0
                    )),
                -g.throughput_loss * 100.0,
            );
        }
        h.push_str("</ul>\n");
    }
    figures(
        h,
        &throughput_plot(&format!("{id}-throughput"), bench)
            .into_iter()
            .collect::<Vec<_>>(),
    );
    h.push_str("</section>\n");
}

impl HtmlSection for latlab_document::BenchReport {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render(h, id, label, self, figures);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        throughput_plot(&format!("{id}-throughput"), self)
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_lock::bench::{GoalCheck, ThroughputPoint};

    /// The lockbench fixture with two variants set to known figures.
    fn doc() -> BenchReport {
        let text = include_str!("../../../latlab/tests/fixtures/results/lockbench.json");
        let mut bench: BenchReport = serde_json::from_str(text).unwrap();
        bench.results.truncate(2);
        let set = |r: &mut latlab_lock::bench::VariantResult, name: &str, lock_max: u64| {
            r.variant = name.into();
            r.lock.max = lock_max;
        };
        set(&mut bench.results[0], "plain", 2_000_000);
        set(&mut bench.results[1], "delayed-quantile", 500_000);
        bench.results[0].throughput = vec![
            ThroughputPoint {
                t_s: 0.0,
                sections_per_s: 900.0,
                work_ms_per_s: 1.0,
            },
            ThroughputPoint {
                t_s: 0.1,
                sections_per_s: 1000.0,
                work_ms_per_s: 1.0,
            },
        ];
        bench.results[1].throughput.clear();
        bench.goal = vec![GoalCheck {
            variant: "delayed-quantile".into(),
            worst_vs_plain: 0.25,
            worst_vs_pi: Some(0.9),
            throughput_loss: 0.082,
            met: true,
            wait_vs_plain: 0.01,
            wakeup_dominated: false,
        }];
        bench
    }

    #[test]
    fn lockbench_documents_are_drawn() {
        let bench = doc();
        let mut h = String::new();
        render(&mut h, "doc1", "bench", &bench, |h, plots| {
            for p in plots {
                h.push_str(&p.to_svg())
            }
        });
        // The worst variant's bar is full length, the other in proportion.
        assert!(
            h.contains("<td>2.00 ms</td><td class=\"l\"><div class=\"bar\" style=\"width:160px\">")
        );
        assert!(
            h.contains("<td>500 us</td><td class=\"l\"><div class=\"bar\" style=\"width:40px\">")
        );
        assert!(h.contains("✔ delayed-quantile: worst lock latency 25 % of plain's, 90 % of PI's, background work -8.2 %"));
        // Only the variant with a throughput series is plotted.
        let plot = throughput_plot("t", &bench).unwrap();
        assert_eq!(plot.series.len(), 1);
        assert!(h.contains("aria-label=\"Background critical sections per second"));
        let value = serde_json::to_value(&bench).unwrap();
        let document = super::super::Document::from_value(value).unwrap();
        assert!(matches!(document, super::super::Document::Lockbench(_)));
    }
}
