//! The comparison at the top of a report of several results: per quantity
//! measured ([`Quantity`]: timer wake-up latency, wake-up latency, response
//! latency), the distributions of every result that holds one, set against
//! the first (the baseline), in a table of changes and two overlaid plots.
//! A run and a watch of the same thread are compared (both hold a timer
//! wake-up latency); a result that holds nothing another result holds is
//! named, with what it holds, instead of being left out silently.

use std::fmt::Write;

use latlab_document::comparable::{Distribution, Quantity};
use latlab_measure::units::format_ns;

use super::plots::{self, color, load_kinds};
use super::svg::{escape, Marker, Plot};
use super::{delta_cell, figures, rate, verdict_badge, Entry};

/// One distribution in a comparison, with the name it has there.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// Which entry of the report holds it (0-based).
    pub entry: usize,
    /// Its name: the entry's label, and the part (`watch comm x: thread
    /// cyclictest 4242`).
    pub label: String,
    /// The distribution.
    pub distribution: Distribution<'a>,
}

/// What a report of several results compares.
#[derive(Debug, Clone, Default)]
pub struct Plan<'a> {
    /// Per quantity that two results or more hold, its members (the
    /// baseline first), in the order the quantities first appear.
    pub compared: Vec<(Quantity, Vec<Member<'a>>)>,
    /// The entries compared in none of them (0-based), with why.
    pub left_out: Vec<(usize, String)>,
}

/// The comparison of `entries`: every quantity that two or more of them
/// hold, and the entries left out with what they hold.
pub fn plan(entries: &[Entry]) -> Plan<'_> {
    let mut all: Vec<(Quantity, Vec<Member<'_>>)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        for distribution in entry.document.distributions() {
            let label = match (distribution.part, distribution.tid) {
                (Some(_), Some(0)) => format!("{}: ended threads", entry.label),
                (Some(part), Some(tid)) => format!("{}: thread {part} {tid}", entry.label),
                (Some(part), None) => format!("{}: {part}", entry.label),
                (None, _) => entry.label.clone(),
            };
            let member = Member {
                entry: i,
                label,
                distribution,
            };
            match all.iter_mut().find(|(q, _)| *q == distribution.quantity) {
                Some((_, members)) => members.push(member),
                None => all.push((distribution.quantity, vec![member])),
            }
        }
    }
    // A quantity is compared when two entries hold it (the threads of one
    // watch alone are its own section's business).
    all.retain(|(_, members)| members.iter().any(|m| m.entry != members[0].entry));
    let left_out = (0..entries.len())
        .filter(|&i| !all.iter().any(|(_, m)| m.iter().any(|m| m.entry == i)))
        .map(|i| {
            let document = &entries[i].document;
            let why = if document.distributions().is_empty() {
                format!("it holds {}", document.holds())
            } else {
                format!("no other result holds its {}", document.holds())
            };
            (i, why)
        })
        .collect();
    Plan {
        compared: all,
        left_out,
    }
}

impl Plan<'_> {
    /// The plan in sentences, one per line, for a terminal: what is
    /// compared with what, and what is not and why.
    pub fn describe(&self, entries: &[Entry]) -> Vec<String> {
        let mut lines: Vec<String> = self
            .compared
            .iter()
            .map(|(quantity, members)| {
                format!(
                    "compared, {} (the first is the baseline): {}",
                    quantity.name(),
                    members
                        .iter()
                        .map(|m| m.label.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            })
            .collect();
        lines.extend(
            self.left_out
                .iter()
                .map(|(i, why)| format!("not compared: {}: {why}", entries[*i].label)),
        );
        lines
    }
}

/// The plot ids of comparison `n` (0-based): `compare` for the first.
fn prefix(n: usize) -> String {
    if n == 0 {
        "compare".into()
    } else {
        format!("compare{}", n + 1)
    }
}

/// The overlaid histograms and tail distributions of each comparison.
pub fn plots(entries: &[Entry]) -> Vec<Plot> {
    plan(entries)
        .compared
        .iter()
        .enumerate()
        .flat_map(|(n, (quantity, members))| quantity_plots(&prefix(n), *quantity, members))
        .collect()
}

fn quantity_plots(prefix: &str, quantity: Quantity, members: &[Member<'_>]) -> Vec<Plot> {
    let series: Vec<(String, &latlab_measure::histogram::Histogram)> = members
        .iter()
        .map(|m| (m.label.clone(), m.distribution.histogram))
        .collect();
    let markers = members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let max = m.distribution.summary.max;
            Marker {
                x: max as f64 / 1e3,
                label: format!("max {}", format_ns(max)),
                color: color(i),
            }
        })
        .collect();
    let (histogram, tail) = match quantity {
        Quantity::TimerWakeUp => (
            "Latency histograms, all CPUs".to_string(),
            "Cumulative distribution: share of samples above each latency".to_string(),
        ),
        other => (
            format!("Histograms of the {}", other.name()),
            format!("Share of samples above each {}", other.name()),
        ),
    };
    vec![
        plots::histogram_plot(&format!("{prefix}-histogram"), &histogram, &series),
        plots::tail_plot(&format!("{prefix}-tail"), &tail, &series, markers),
    ]
}

/// The comparison section of a report: the results left out named first,
/// then per quantity compared its table and plots (under a heading when
/// there is more than one, or a result is left out). Nothing for a report
/// of one result.
pub fn render(h: &mut String, entries: &[Entry]) {
    if entries.len() < 2 {
        return;
    }
    let plan = plan(entries);
    let left_out = if plan.left_out.is_empty() {
        String::new()
    } else {
        format!(
            "<p class=\"warn\">Not compared: {}.</p>",
            plan.left_out
                .iter()
                .map(|(i, why)| format!("<b>{}</b>: {}", escape(&entries[*i].label), escape(why)))
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    if plan.compared.is_empty() {
        let _ = writeln!(
            h,
            "<section class=\"compare\" id=\"compare\"><h2>Comparison</h2>\
             <p>No two of these results hold the same latency distribution: nothing is compared, \
             each is shown on its own.</p>{left_out}</section>"
        );
        return;
    }
    // One quantity and every result in it: the plain comparison; else a
    // heading per quantity, and the results left out named first.
    let single = plan.compared.len() == 1 && plan.left_out.is_empty();
    h.push_str("<section class=\"compare\" id=\"compare\"><h2>Comparison</h2>");
    h.push_str(&left_out);
    for (n, (quantity, members)) in plan.compared.iter().enumerate() {
        if !single {
            let _ = write!(h, "<h3>{}</h3>", capitalized(quantity.name()));
        }
        let _ = writeln!(
            h,
            "<p>Baseline: <b>{}</b> (the first result). Changes are relative to it; \
             for latency lower is better, for background throughput higher is.</p>",
            escape(&members[0].label),
        );
        table(h, members);
        figures(h, &quantity_plots(&prefix(n), *quantity, members));
    }
    h.push_str("</section>\n");
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

/// The table of changes against the baseline (the first member).
fn table(h: &mut String, members: &[Member<'_>]) {
    h.push_str(
        "<table class=\"deltas\"><tr><th class=\"l\">result</th><th>verdict</th><th>samples</th>\
         <th>missed</th><th>p50</th><th>Δ</th><th>p99</th><th>Δ</th><th>p99.9</th><th>Δ</th><th>max</th><th>Δ</th>\
         <th class=\"l\">background throughput (Δ)</th></tr>\n",
    );
    let base = &members[0].distribution;
    let base_load = base.load.map(load_kinds).unwrap_or_default().0;
    for member in members {
        let d = &member.distribution;
        let s = d.summary;
        let b = base.summary;
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td{}>{}</td>",
            escape(&member.label),
            d.verdict.map_or("–", verdict_badge),
            s.count,
            // Missed periods hide behind a short sample count (an
            // overloaded run has fewer samples, not worse ones).
            if d.missed.unwrap_or(0) > 0 {
                " class=\"worse\""
            } else {
                ""
            },
            d.missed.map_or("–".to_string(), |m| m.to_string())
        );
        for (value, base_value) in [
            (s.p50, b.p50),
            (s.p99, b.p99),
            (s.p99_9, b.p99_9),
            (s.max, b.max),
        ] {
            let _ = write!(
                h,
                "<td>{}</td>{}",
                format_ns(value),
                delta_cell(base_value as f64, value as f64, true)
            );
        }
        let kinds = d.load.map(load_kinds).unwrap_or_default().0;
        let load = if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds
                .iter()
                .map(|k| {
                    let delta = base_load
                        .iter()
                        .find(|b| b.kind == k.kind)
                        .and_then(|b| super::change(b.per_second, k.per_second))
                        .map(|pct| format!(" ({pct:+.1} %)"))
                        .unwrap_or_default();
                    format!(
                        "{} {}{}",
                        escape(&k.kind),
                        escape(&rate(k.per_second, &k.unit)),
                        delta
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(h, "<td class=\"l wrap\">{load}</td></tr>");
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sample_result;
    use latlab_document::{Document, RunDocument};

    fn entry(label: &str, document: Document) -> Entry {
        Entry {
            label: label.into(),
            document,
        }
    }

    fn run(label: &str) -> Entry {
        entry(
            label,
            Document::Run(Box::new(RunDocument::new(sample_result()))),
        )
    }

    fn other() -> Entry {
        entry(
            "acme",
            Document::parse(r#"{"schema": "acme.report"}"#).unwrap(),
        )
    }

    #[test]
    fn results_that_hold_the_same_quantity_are_compared_and_the_rest_named() {
        let entries = [run("a"), other(), run("b")];
        let plan = plan(&entries);
        assert_eq!(plan.compared.len(), 1);
        let (quantity, members) = &plan.compared[0];
        assert_eq!(*quantity, Quantity::TimerWakeUp);
        let labels: Vec<&str> = members.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["a", "b"]);
        assert_eq!(plan.left_out.len(), 1);
        assert_eq!(plan.left_out[0].0, 1);
        assert_eq!(
            plan.describe(&entries),
            [
                "compared, timer wake-up latency (the first is the baseline): a; b",
                "not compared: acme: it holds a `acme.report` result, shown as its JSON"
            ]
        );
        let mut h = String::new();
        render(&mut h, &entries);
        assert!(h.contains("<h3>Timer wake-up latency</h3>"), "{h}");
        assert!(h.contains("Not compared: <b>acme</b>"));
        assert_eq!(plots(&entries).len(), 2);
    }

    #[test]
    fn nothing_in_common_is_said_not_left_blank() {
        let entries = [run("a"), other()];
        let plan = plan(&entries);
        assert!(plan.compared.is_empty());
        assert_eq!(plan.left_out.len(), 2);
        assert!(plan.describe(&entries)[0]
            .starts_with("not compared: a: no other result holds its timer wake-up latency"));
        let mut h = String::new();
        render(&mut h, &entries);
        assert!(h.contains("nothing is compared"), "{h}");
        assert!(plots(&entries).is_empty());
        let mut one = String::new();
        render(&mut one, &entries[..1]);
        assert!(one.is_empty(), "no comparison of one result");
    }
}
