//! A peer tool's result (`latlab.peer`: cyclictest, rt-tests, rtla) as
//! text: the tool and how it ran, then per measurement a table of its
//! columns, with every figure the file does not give shown as `unknown`
//! and a percentile past the histogram's last bucket as `≥` that bucket.

use std::fmt::Write;

use latlab_document::comparable::Figure;
use latlab_document::PeerDocument;
use latlab_measure::units::format_ns;
use latlab_peers::{Column, Measurement};

use crate::units::{self, count_or_unknown, mean_or_unknown, UNKNOWN};

/// A latency figure of `column`: the value, `≥ X` for a percentile that
/// falls among the overflows (X: the first value past the histogram, in
/// the tool's labels), or [`UNKNOWN`] ([`Figure::of_peer`], written by
/// [`units::figure`]).
pub fn figure(value: Option<u64>, column: &Column, measurement: &Measurement) -> String {
    units::figure(Figure::of_peer(value, column, measurement))
}

/// The lines that say where a peer result comes from: tool, format,
/// command, machine, times, settings.
pub fn provenance(doc: &PeerDocument) -> Vec<String> {
    let mut out = vec![format!(
        "{}, read from its {} file{}",
        doc.tool_name(),
        doc.source.format.name(),
        doc.source
            .return_code
            .map(|rc| format!(" (exit code {rc})"))
            .unwrap_or_default()
    )];
    if let Some(cmd) = &doc.source.command_line {
        out.push(format!("command: {cmd}"));
    }
    if let Some(sys) = &doc.system {
        let or = |v: &Option<String>| v.clone().unwrap_or_else(|| UNKNOWN.into());
        out.push(format!(
            "machine: {} ({}), kernel {} {}, preemption {}",
            or(&sys.hostname),
            or(&sys.machine),
            or(&sys.kernel_release),
            or(&sys.kernel_version),
            or(&sys.preemption_model)
        ));
    }
    let mut when = Vec::new();
    if let Some(start) = &doc.started_at {
        when.push(format!("started {start}"));
    }
    if let Some(d) = doc.duration_s {
        when.push(format!("{d:.1} s measured"));
    }
    if !when.is_empty() {
        out.push(when.join(", "));
    }
    let s = &doc.settings;
    let mut settings = Vec::new();
    if let Some(i) = s.interval_ns {
        settings.push(format!("interval {}", format_ns(i)));
    }
    match (&s.policy, s.priority) {
        (Some(p), Some(prio)) => settings.push(format!("{p} priority {prio}")),
        (Some(p), None) => settings.push(format!("policy {p}")),
        (None, Some(prio)) => settings.push(format!("priority {prio}")),
        (None, None) => {}
    }
    if s.mlocked == Some(true) {
        settings.push("memory locked".into());
    }
    if let Some(d) = s.duration_s {
        settings.push(format!("duration {d} s asked"));
    }
    if !settings.is_empty() {
        out.push(format!(
            "settings ({}): {}",
            s.from.as_deref().unwrap_or("the file"),
            settings.join(", ")
        ));
    }
    out
}

/// The terminal text of a peer result.
pub fn text(doc: &PeerDocument) -> String {
    let mut out = String::new();
    for line in provenance(doc) {
        let _ = writeln!(out, "{line}");
    }
    for m in &doc.measurements {
        let _ = writeln!(out, "\n{}", m.quantity.name());
        let header = [
            "column",
            "CPU",
            "samples",
            "min",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "overflows",
        ];
        let mut rows: Vec<Vec<String>> = Vec::new();
        let pooled = (m.columns.len() > 1).then(|| m.pooled());
        for c in m.columns.iter().chain(pooled.iter()) {
            let l = &c.latency;
            rows.push(vec![
                c.name.clone(),
                c.cpu.map_or_else(|| "?".into(), |cpu| cpu.to_string()),
                count_or_unknown(l.count),
                figure(l.min, c, m),
                mean_or_unknown(l.mean),
                figure(l.p50, c, m),
                figure(l.p99, c, m),
                figure(l.p99_9, c, m),
                figure(l.max, c, m),
                count_or_unknown(c.overflows),
            ]);
        }
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut line = |cells: Vec<&str>| {
            let mut text = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                let pad = w - cell.chars().count();
                if i == 0 {
                    let _ = write!(text, "{cell}{}  ", " ".repeat(pad));
                } else {
                    let _ = write!(text, "{}{cell}  ", " ".repeat(pad));
                }
            }
            let _ = writeln!(out, "{}", text.trim_end());
        };
        line(header.to_vec());
        for row in &rows {
            line(row.iter().map(String::as_str).collect());
        }
    }
    if doc.measurements.is_empty() {
        let _ = writeln!(out, "\nno latency figures latlab reads in this file");
    }
    if !doc.unknown.is_empty() {
        let _ = writeln!(out, "\nnot in the file: {}", doc.unknown.join("; "));
    }
    for note in &doc.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cyclictest::{histogram_text, per_microsecond, MAX_ROWS};
    use crate::fixture::{sample_result, sample_result_with_overflow};
    use crate::rt_tests::{rfc2822, rt_tests_json};
    use latlab_measure::result::RunResult;
    use latlab_peers::{PeerFormat, Quantity};

    /// A decoded column's per-microsecond counts, `rows` long, and the
    /// samples past them.
    fn per_us(column: &Column, rows: usize) -> (Vec<u64>, u64) {
        let mut counts = vec![0; rows];
        let mut past = column.overflows.unwrap_or(0);
        for b in column.histogram.as_ref().expect("a histogram") {
            match counts.get_mut((b.low / 1000) as usize) {
                Some(c) => *c += b.count,
                None => past += b.count,
            }
        }
        (counts, past)
    }

    /// What latlab wrote per thread, read back, is what the run measured
    /// at the format's 1 µs resolution.
    fn assert_same_histograms(run: &RunResult, doc: &PeerDocument, rows: usize) {
        let m = &doc.measurements[0];
        assert_eq!(m.quantity, Quantity::WakeUpLatency);
        assert_eq!(m.columns.len(), run.threads.len());
        for (thread, column) in run.threads.iter().zip(&m.columns) {
            assert_eq!(
                per_us(column, rows),
                per_microsecond(&thread.histogram, rows)
            );
            assert_eq!(column.latency.count, Some(thread.latency.count));
            assert_eq!(column.latency.min, Some(thread.latency.min / 1000 * 1000));
            assert_eq!(column.latency.max, Some(thread.latency.max / 1000 * 1000));
        }
    }

    #[test]
    fn histogram_text_read_back_gives_the_same_histograms() {
        for run in [sample_result(), sample_result_with_overflow()] {
            let text = histogram_text(&run);
            let doc = latlab_peers::decode(text.as_bytes()).unwrap();
            assert_eq!(doc.source.format, PeerFormat::CyclictestHistogram);
            let rows = text.lines().filter(|l| !l.starts_with('#')).count();
            assert_same_histograms(&run, &doc, rows);
            let mean = doc.measurements[0].columns[0].latency.mean.unwrap();
            assert_eq!(
                mean,
                (run.threads[0].latency.mean / 1000.0).trunc() * 1000.0
            );
        }
        // The 250 ms spike is past the text's 100 ms: an overflow, with its cycle.
        let run = sample_result_with_overflow();
        let doc = latlab_peers::decode(histogram_text(&run).as_bytes()).unwrap();
        let cpu1 = &doc.measurements[0].columns[1];
        assert_eq!(cpu1.overflows, Some(1));
        assert_eq!(cpu1.overflow_cycles, [8123]);
        assert_eq!(cpu1.latency.max, Some(250_000_000));
    }

    #[test]
    fn rt_tests_json_read_back_gives_the_same_histograms_and_provenance() {
        for run in [sample_result(), sample_result_with_overflow()] {
            let start = rfc2822(1_795_312_479.0);
            let json = rt_tests_json(&run, &start, &rfc2822(1_795_312_489.0), 2);
            let doc = latlab_peers::decode(json.as_bytes()).unwrap();
            assert_eq!(doc.source.format, PeerFormat::RtTestsJson);
            assert_eq!(doc.source.tool, "latlab");
            assert_eq!(doc.source.version.as_deref(), run.latlab_version.as_deref());
            assert_eq!(doc.source.command_line, Some(run.command_line.join(" ")));
            assert_eq!(doc.source.return_code, Some(2));
            assert_eq!(doc.started_at.as_deref(), run.started_at.as_deref());
            assert_eq!(doc.duration_s, Some(10.0));
            let system = doc.system.as_ref().unwrap();
            assert_eq!(system.hostname.as_deref(), Some("board"));
            assert_eq!(system.kernel_release.as_deref(), Some("6.18.0-test"));
            assert_same_histograms(&run, &doc, MAX_ROWS);
            let cpus: Vec<Option<usize>> =
                doc.measurements[0].columns.iter().map(|c| c.cpu).collect();
            assert_eq!(cpus, [Some(0), Some(1)]);
        }
    }

    #[test]
    fn unknown_figures_are_words_and_overflowing_percentiles_are_bounds() {
        let run = sample_result_with_overflow();
        let doc = latlab_peers::decode(histogram_text(&run).as_bytes()).unwrap();
        let text = text(&doc);
        assert!(
            text.contains("cyclictest, read from its cyclictest histogram file"),
            "{text}"
        );
        assert!(
            text.contains("not in the file: the tool's version and command line"),
            "{text}"
        );
        let cpu_column: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("thread"))
            .map(|l| l.split_whitespace().nth(2).unwrap())
            .collect();
        assert_eq!(cpu_column, ["?", "?"], "the CPU is not in the text");
        let m = &doc.measurements[0];
        let c = &m.columns[1];
        // One overflow in 10000: only the max is past the histogram.
        assert_eq!(
            figure(c.latency.p99_99, c, m),
            "39.0 us",
            "samples of 2 to 40 us"
        );
        let mut all_over = c.clone();
        all_over.latency.p50 = None;
        assert_eq!(figure(all_over.latency.p50, &all_over, m), "≥ 100 ms");
        all_over.histogram = None;
        assert_eq!(figure(None, &all_over, m), UNKNOWN);
    }
}
