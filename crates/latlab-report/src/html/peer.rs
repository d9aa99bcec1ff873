//! A peer tool's result in the report: where it comes from, a table and
//! plots per measurement (as a run's: histogram per column, the pooled
//! distribution's tail), what the file does not say, its notes, and the
//! fields latlab kept without decoding.

use std::fmt::Write;

use latlab_document::PeerDocument;
use latlab_measure::histogram::Histogram;
use latlab_measure::units::format_ns;
use latlab_peers::{Column, Measurement};

use super::list::list;
use super::page::figures;
use super::plots;
use super::svg::{Marker, Plot};
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::text::peer::{figure, provenance};
use crate::units::{count_or_unknown, mean_or_unknown, micros, UNKNOWN};

/// The plot id of measurement `index` (`doc2-m0-histogram`, ...).
fn prefix(id: &str, index: usize) -> String {
    format!("{id}-m{index}")
}

/// A measurement's pooled histogram for plots (`None` when a column has
/// no histogram); with `overflows_at_max` its overflows at its max, for a
/// tail plot that is an upper bound ([`Column::plot_histogram`]).
pub fn pooled_histogram(m: &Measurement, overflows_at_max: bool) -> Option<Histogram> {
    m.pooled()
        .plot_histogram(m.bucket_ns.unwrap_or(1000), m.rounding, overflows_at_max)
}

/// The markers of a column's p99, p99.9 and max, where known.
pub fn markers(column: &Column, color: &str, prefix: &str) -> Vec<Marker> {
    let l = &column.latency;
    [("p99", l.p99), ("p99.9", l.p99_9), ("max", l.max)]
        .into_iter()
        .filter_map(|(name, ns)| {
            Some(Marker {
                x: micros(ns?),
                label: format!("{prefix}{name} {}", format_ns(ns?)),
                color: color.to_string(),
            })
        })
        .collect()
}

/// The plots of a peer result: per measurement with a histogram, the
/// histogram per column and the pooled tail.
pub fn peer_plots(id: &str, doc: &PeerDocument) -> Vec<Plot> {
    let mut out = Vec::new();
    for (i, m) in doc.measurements.iter().enumerate() {
        let width = m.bucket_ns.unwrap_or(1000);
        let per_column: Vec<(String, Histogram)> = m
            .columns
            .iter()
            .filter_map(|c| Some((column_name(c), c.plot_histogram(width, m.rounding, false)?)))
            .collect();
        if per_column.is_empty() {
            continue;
        }
        let series: Vec<(String, &Histogram)> =
            per_column.iter().map(|(n, h)| (n.clone(), h)).collect();
        let p = prefix(id, i);
        out.push(plots::histogram_plot(
            &format!("{p}-histogram"),
            &format!(
                "{} histogram per column ({})",
                capital(m.quantity.name()),
                doc.source.tool
            ),
            &series,
        ));
        if let Some(pooled) = pooled_histogram(m, true) {
            out.push(plots::tail_plot(
                &format!("{p}-tail"),
                "Cumulative distribution: share of samples above each latency",
                &[("all columns".to_string(), &pooled)],
                markers(&m.pooled(), "#b02a1a", ""),
            ));
        }
    }
    out
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

/// `thread 0 (CPU1)`, or the name alone when the CPU is not known.
fn column_name(c: &Column) -> String {
    match c.cpu {
        Some(cpu) if !c.name.contains(&format!("{cpu:03}")) => format!("{} (CPU{cpu})", c.name),
        _ => c.name.clone(),
    }
}

/// The CPUs of a measurement's columns (`0,1`), or `unknown`.
fn cpus(m: &Measurement) -> String {
    m.columns
        .iter()
        .map(|c| c.cpu.map(|cpu| cpu.to_string()))
        .collect::<Option<Vec<String>>>()
        .map_or_else(|| "unknown".into(), |c| c.join(","))
}

fn cell(text: &str) -> String {
    if text == UNKNOWN {
        "<td class=\"unknown\">unknown</td>".into()
    } else {
        format!("<td>{}</td>", escape(text))
    }
}

/// The section of a peer result.
pub fn section(h: &mut String, id: &str, label: &str, doc: &PeerDocument) {
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{} <span class=\"badge none\">{}</span></h2>",
        escape(label),
        escape(doc.source.format.name())
    );
    let lines = provenance(doc);
    let _ = writeln!(
        h,
        "<p class=\"peer\">{}</p>",
        lines
            .iter()
            .map(|l| escape(l))
            .collect::<Vec<_>>()
            .join("<br>")
    );
    for (i, m) in doc.measurements.iter().enumerate() {
        let _ = writeln!(
            h,
            "<h3>{}</h3><table class=\"summary peer\"><tr><th class=\"l\">column</th><th>CPU</th>\
             <th>samples</th><th>min</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th>\
             <th>p99.99</th><th>max</th><th>overflows</th></tr>",
            escape(&capital(m.quantity.name()))
        );
        let pooled = (m.columns.len() > 1).then(|| m.pooled());
        let rows = m.columns.iter().map(|c| (c, false));
        for (c, is_pooled) in rows.chain(pooled.iter().map(|c| (c, true))) {
            let l = &c.latency;
            // The pooled row's CPUs are its columns'.
            let cpu = match (is_pooled, c.cpu) {
                (true, _) => cpus(m),
                (false, Some(cpu)) => cpu.to_string(),
                (false, None) => "unknown".into(),
            };
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td>{}",
                escape(&c.name),
                cell(&cpu)
            );
            for text in [
                count_or_unknown(l.count),
                figure(l.min, c, m),
                mean_or_unknown(l.mean),
                figure(l.p50, c, m),
                figure(l.p99, c, m),
                figure(l.p99_9, c, m),
                figure(l.p99_99, c, m),
                figure(l.max, c, m),
                count_or_unknown(c.overflows),
            ] {
                h.push_str(&cell(&text));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        let bucket = m
            .bucket_ns
            .map(|b| format!("{} buckets", format_ns(b)))
            .unwrap_or_else(|| "no histogram".into());
        let _ = writeln!(
            h,
            "<p>{bucket}; {}</p>",
            match m.rounding {
                latlab_peers::Rounding::Down => {
                    "figures as the tool truncates them: a bucket is labelled with its lower bound"
                }
                latlab_peers::Rounding::Up => {
                    "figures as the tool rounds them up: a bucket is labelled with its upper bound"
                }
            }
        );
        let p = prefix(id, i);
        let plots: Vec<Plot> = peer_plots(id, doc)
            .into_iter()
            .filter(|plot| plot.id.starts_with(&format!("{p}-")))
            .collect();
        figures(h, &plots);
    }
    if doc.measurements.is_empty() {
        h.push_str("<p>This file has no latency figures latlab reads.</p>\n");
    }
    if !doc.unknown.is_empty() {
        h.push_str("<h3>Not in the file (shown as unknown)</h3>");
        list(h, "unknown", &doc.unknown);
    }
    if !doc.notes.is_empty() {
        h.push_str("<details class=\"notes\"><summary>Notes from the file</summary><ul>");
        for n in &doc.notes {
            let _ = write!(h, "<li>{}</li>", escape(n));
        }
        h.push_str("</ul></details>\n");
    }
    if !doc.extra.is_empty() {
        let _ = writeln!(
            h,
            "<details><summary>Fields of the file latlab did not decode</summary><pre>{}</pre></details>",
            escape(&serde_json::to_string_pretty(&doc.extra).unwrap_or_default())
        );
    }
    h.push_str("</section>\n");
}

impl HtmlSection for PeerDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        section(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        peer_plots(id, self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{auto_labels, render, Document, Entry};
    use crate::cyclictest::histogram_text;
    use crate::fixture::{sample_result, sample_result_with_overflow};

    fn entries(documents: Vec<Document>) -> Vec<Entry> {
        let labels = auto_labels(&documents);
        documents
            .into_iter()
            .zip(labels)
            .map(|(document, label)| Entry { label, document })
            .collect()
    }

    fn cyclictest() -> Document {
        let text = histogram_text(&sample_result_with_overflow());
        Document::read(text.as_bytes()).unwrap()
    }

    #[test]
    fn a_peer_result_and_a_run_are_compared_in_one_report() {
        let run = Document::Run(Box::new(sample_result().into()));
        let entries = entries(vec![cyclictest(), run]);
        assert_eq!(entries[0].label, "cyclictest");
        assert_eq!(entries[1].label, "latlab run");
        let html = render(&entries, "t");
        assert!(html.contains("<h2>Comparison</h2>"));
        assert!(html.contains("Baseline: <b>cyclictest</b>"));
        // Both rows, the peer's with what it lacks as unknown.
        assert!(html.contains("<td class=\"l\">cyclictest</td><td>–</td><td>20000</td><td class=\"unknown\">unknown</td>"), "{html}");
        assert!(html.contains("<td class=\"l\">latlab run</td>"));
        assert!(html.contains("title=\"not in a cyclictest file\">unknown</td>"));
        // Both overlaid in the comparison's plots, and the peer's own section.
        let plots = super::super::plots(&entries);
        let compare = plots.iter().find(|p| p.id == "compare-histogram").unwrap();
        let names: Vec<&str> = compare.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cyclictest", "latlab run"]);
        assert!(plots.iter().any(|p| p.id == "doc1-m0-histogram"));
        assert!(html.contains("Not in the file (shown as unknown)"));
        assert!(html.contains("<li>the CPU each thread ran on</li>"));
        assert!(!html.contains("its JSON follows"));
    }

    #[test]
    fn results_of_another_quantity_are_named_not_compared() {
        let oslat = br#"{"file_version": 1, "cmdline:": "oslat --cpu-list 1 -D 5", "rt_test_version:": "2.40",
            "thread": {"0": {"cpu": 1, "freq": 2597, "min": 1, "avg": 1.04, "max": 73,
                             "duration": 4.9, "histogram": {"1": 900, "2": 90, "32": 10}}}}"#;
        let oslat = Document::read(oslat).unwrap();
        let run = Document::Run(Box::new(sample_result().into()));
        let html = render(&entries(vec![run, oslat]), "t");
        // Each named with what it holds, nothing compared.
        assert!(
            html.contains(
                "Not compared: <b>oslat 2.40</b>: no other result holds its busy-loop latency."
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "Not compared: <b>latlab run</b>: no other result holds its timer wake-up latency."
            ),
            "{html}"
        );
        assert!(html.contains("nothing is compared"), "{html}");
        // Its own section still shows it, its overflow bucket a bound.
        assert!(html.contains("Busy-loop latency"));
        assert!(
            html.contains("≥ 32.0 us"),
            "p99.9 among bucket 32's overflows"
        );
    }
}
