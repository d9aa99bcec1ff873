//! The latency split at the timer interrupt in a run's section.

use std::fmt::Write;

use latlab_document::RunDocument;
use latlab_measure::units::format_ns;

use crate::markup::escape;

/// The latency split at the timer interrupt (`latlab run --split`), if the
/// run has one: per thread and overall, p50/p99/max of each part.
pub(crate) fn render_split(h: &mut String, run: &RunDocument) {
    use latlab_measure::result::LatencySplit;
    let Some(overall) = &run.overall.split else {
        return;
    };
    h.push_str(
        "<h3>Latency split at the timer interrupt (measured in the kernel)</h3>\
         <table class=\"summary\"><tr><th class=\"l\" rowspan=\"2\">CPU</th>\
         <th rowspan=\"2\">timer wake-ups</th><th colspan=\"3\">interrupt latency</th>\
         <th colspan=\"3\">preemption latency</th><th colspan=\"3\">thread latency</th></tr>\
         <tr><th>p50</th><th>p99</th><th>max</th><th>p50</th><th>p99</th><th>max</th>\
         <th>p50</th><th>p99</th><th>max</th></tr>\n",
    );
    let row = |h: &mut String, label: &str, split: &LatencySplit| {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            escape(label),
            split.timer_wakeups
        );
        for part in [
            &split.interrupt_latency,
            &split.preemption_latency,
            &split.thread_latency,
        ] {
            let l = &part.summary;
            let _ = write!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td>",
                format_ns(l.p50),
                format_ns(l.p99),
                format_ns(l.max)
            );
        }
        h.push_str("</tr>\n");
    };
    for t in &run.threads {
        if let Some(split) = &t.split {
            row(h, &format!("CPU{}", t.cpu), split);
        }
    }
    if run.threads.len() > 1 {
        row(h, "all", overall);
    }
    let _ = writeln!(
        h,
        "</table>\n<p>{}.</p>",
        escape(&crate::text::run::SPLIT_LEGEND.join("; "))
    );
}
