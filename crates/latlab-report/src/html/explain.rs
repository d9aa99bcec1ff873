//! The explanation of late wake-ups (`latlab explain`, `latlab run
//! --explain`): what their latency was made of, the causes ranked with
//! their advice.

use std::fmt::Write;

use latlab_explain::{CauseRow, Report as Explanation};
use latlab_measure::units::format_ns;

use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;

impl HtmlSection for latlab_document::ExplainDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        let _ = writeln!(
            h,
            "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Trace <code>{}</code> ({}).</p>",
            escape(label),
            escape(&self.report.trace),
            escape(&self.report.format)
        );
        render_explain(h, &self.report);
        h.push_str("</section>\n");
    }

    fn html_plots(&self, _id: &str) -> Vec<Plot> {
        Vec::new()
    }
}

/// The `latlab run --explain` results: what the latency of the late
/// windows was made of (bars), and the causes ranked with their advice.
pub(crate) fn render_explain(h: &mut String, explain: &Explanation) {
    let _ = writeln!(
        h,
        "<h3>Why wake-ups were late (latlab explain)</h3><p>{} late of {} periods \
         (late: over {}).</p>",
        explain.late,
        explain.periods,
        format_ns(explain.threshold_ns)
    );
    h.push_str("<table class=\"explain\"><tr><th class=\"l\">latency of late windows</th><th>share</th><th class=\"l\"></th></tr>\n");
    for c in &explain.categories {
        let share = c.share * 100.0;
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{share:.1} %</td><td class=\"l\">\
             <div class=\"bar\" style=\"width:{:.1}px\"></div></td></tr>",
            escape(&c.category),
            share * 3.0
        );
    }
    h.push_str("</table>\n");
    h.push_str("<ol class=\"causes\">\n");
    for c in explain.causes.iter().take(10) {
        let _ = writeln!(
            h,
            "<li><b>{}</b><br>in {} late and {} normal windows; {} in late windows \
             ({:.0} % of their latency){}<br><i>{}</i></li>",
            escape(&c.description),
            c.late_windows,
            c.normal_windows,
            format_ns(c.late_ns),
            c.share * 100.0,
            pid_line(c),
            escape(&c.recommendation)
        );
    }
    h.push_str("</ol>\n");
}

/// For a cause made of several processes of one command (each `dd` of a disk
/// load): `<br>N pids, most first: pid late, ...` (the five with the most late
/// latency); empty for one pid.
fn pid_line(cause: &CauseRow) -> String {
    let pids = &cause.pids;
    if pids.len() <= 1 {
        return String::new();
    }
    let top: Vec<String> = pids
        .iter()
        .take(5)
        .map(|p| format!("{} {}", p.pid, format_ns(p.late_ns)))
        .collect();
    let more = if pids.len() > 5 { ", ..." } else { "" };
    format!(
        "<br>{} pids, most first: {}{more}",
        pids.len(),
        top.join(", ")
    )
}
