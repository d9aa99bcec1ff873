//! The delayed-locking simulation (`latlab lockbench --simulate --json`,
//! schema `latlab.lockbench-simulation`) in a report: the paper's Table 4
//! with the simulated figures next to the paper's.

use std::fmt::Write;

use latlab_lock::document::SimReport;

use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::units::whole_us;

/// The section of one simulation document.
pub fn render(h: &mut String, id: &str, label: &str, simulation: &SimReport) {
    let paper = &simulation.paper;
    let c = &simulation.comparison;
    let config = &c.config;
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>The delayed-locking paper's kernel \
         experiment, simulated: a uniprocessor kernel with non-preemptible sections, a real-time \
         task every {} µs and a TCP sender, {} periods (seed {}), without and with delayed \
         locking. The paper's Table 4 is next to it.</p>",
        escape(label),
        config.rt_period_ns / 1000,
        config.periods,
        config.seed,
    );
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"l\">OS latency of the real-time task</th>\
         <th>simulated</th><th>paper</th></tr>\n",
    );
    let pick = |pair: (f64, f64), i: usize| if i == 0 { pair.0 } else { pair.1 };
    for (name, figure) in [("minimum", 0), ("worst case", 1), ("average", 2)] {
        for (i, (run_name, run)) in [("without", &c.without), ("with", &c.with)]
            .into_iter()
            .enumerate()
        {
            let (simulated, paper_us) = match figure {
                0 => (run.latency.min as f64, pick(paper.min_us, i)),
                1 => (run.latency.max as f64, pick(paper.max_us, i)),
                _ => (run.latency.mean, pick(paper.avg_us, i)),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{name}, {run_name} delayed locking</td><td>{}</td><td>{paper_us} µs</td></tr>",
                whole_us(simulated),
            );
        }
    }
    let ratio = c.with.latency.max as f64 / (c.without.latency.max as f64).max(1.0);
    let cost = 1.0 - c.with.kb_per_s / c.without.kb_per_s.max(f64::MIN_POSITIVE);
    let paper_ratio = paper.max_us.1 / paper.max_us.0;
    let _ = writeln!(
        h,
        "<tr><td class=\"l\">worst case with / without</td><td>{:.0} %</td><td>{:.0} %</td></tr>\
         <tr><td class=\"l\">sender slowdown</td><td>{:.0} %</td><td>{:.0} %</td></tr>\
         <tr><td class=\"l\">refusals / forced entries (with)</td><td>{} / {}</td><td></td></tr>\
         </table></section>",
        ratio * 100.0,
        paper_ratio * 100.0,
        cost * 100.0,
        paper.sender_cost * 100.0,
        c.with.refusals,
        c.with.forced_entries,
    );
}

impl HtmlSection for latlab_document::SimReport {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render(h, id, label, self);
    }

    fn html_plots(&self, _id: &str) -> Vec<Plot> {
        Vec::new()
    }
}
