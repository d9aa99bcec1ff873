//! The comparison at the top of a report of several results: per quantity
//! measured ([`Quantity`](latlab_document::comparable::Quantity): timer
//! wake-up latency, wake-up latency, response latency, and the peer tools'
//! quantities), the distributions of every
//! result that holds one, set against the first (the baseline), in a table
//! of changes and two overlaid plots. A run and a watch of the same thread
//! are compared (both hold a timer wake-up latency), and so are a run and a
//! cyclictest file; a peer file's figures it does not give are shown as
//! unknown, a percentile among its histogram's overflows as a bound. A
//! result that holds nothing another result holds is named, with what it
//! holds, instead of being left out silently.

mod overlay;
mod plan;

use std::fmt::Write;

pub use overlay::plots;
use overlay::{prefix, quantity_plots};
pub use plan::{plan, Member, Plan};

use super::badge::verdict_badge;
use super::delta::{change, delta_cell};
use super::entry::Entry;
use super::page::figures;
use super::plots::load_kinds;
use crate::markup::escape;
use crate::units::{self, count_or_unknown, rate};

/// The comparison section of a report: the results left out named first,
/// then per quantity compared its table and plots (under a heading when
/// there is more than one, or a result is left out). Nothing for a report
/// of one result.
pub fn render(h: &mut String, entries: &[Entry]) {
    if entries.len() < 2 {
        return;
    }
    let plan = plan(entries);
    // One line per result left out, each named with what it holds.
    let left_out: String = plan
        .left_out
        .iter()
        .map(|(i, why)| {
            format!(
                "<p class=\"warn\">Not compared: <b>{}</b>: {}.</p>",
                escape(&entries[*i].label),
                escape(why)
            )
        })
        .collect();
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
        peer_note(h, members);
        table(h, members);
        figures(h, &quantity_plots(&prefix(n), *quantity, members));
    }
    h.push_str("</section>\n");
}

/// What the figures of the peer files among `members` are (nothing when
/// there are none): their rounding, their unknowns, their overflows.
fn peer_note(h: &mut String, members: &[Member<'_>]) {
    let mut tools: Vec<String> = members
        .iter()
        .filter_map(|m| m.distribution.peer)
        .map(|doc| escape(&doc.tool_name()))
        .collect();
    tools.dedup();
    if tools.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<p>Read from another tool's file: {}. What such a file does not give is shown as \
         <i>unknown</i>; its latencies are whole microseconds as the tool rounds them (latlab's \
         percentiles are the upper bounds of buckets at most 0.2 % wide), and a percentile among \
         its histogram's overflows is shown as <i>≥</i> the histogram's end. Its overflows are \
         left out of the histogram plot and drawn at its max in the cumulative distribution \
         (an upper bound).</p>",
        tools.join(", ")
    );
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
    let unknown = "<td class=\"unknown\">unknown</td>";
    for member in members {
        let d = &member.distribution;
        let (f, b) = (&d.figures, &base.figures);
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td>",
            escape(&member.label),
            d.verdict.map_or_else(|| "–".into(), verdict_badge),
            count_or_unknown(d.figures.count),
        );
        match (d.missed, d.peer) {
            // A peer file does not say how many periods its tool missed.
            (_, Some(_)) => h.push_str(unknown),
            // Missed periods hide behind a short sample count (an
            // overloaded run has fewer samples, not worse ones).
            (Some(m), None) if m > 0 => {
                let _ = write!(h, "<td class=\"worse\">{m}</td>");
            }
            (missed, None) => {
                let _ = write!(
                    h,
                    "<td>{}</td>",
                    missed.map_or("–".to_string(), |m| m.to_string())
                );
            }
        }
        for (value, base_value) in [
            (f.p50, b.p50),
            (f.p99, b.p99),
            (f.p99_9, b.p99_9),
            (f.max, b.max),
        ] {
            let delta = match (value.known(), base_value.known()) {
                (Some(v), Some(b)) => delta_cell(b as f64, v as f64, true),
                _ => "<td>–</td>".into(),
            };
            let _ = write!(h, "<td>{}</td>{delta}", escape(&units::figure(value)));
        }
        if let Some(doc) = d.peer {
            let _ = writeln!(
                h,
                "<td class=\"l unknown\" title=\"not in a {} file\">unknown</td></tr>",
                escape(&doc.source.tool)
            );
            continue;
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
                        .and_then(|b| change(b.per_second, k.per_second))
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
    use latlab_document::comparable::Quantity;
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

    fn peer(label: &str, bytes: &[u8]) -> Entry {
        entry(label, Document::read(bytes).unwrap())
    }

    /// A cyclictest `-h` text: 4 samples of 1 and 2 µs and one overflow
    /// past its 3 µs histogram, the max 9 µs.
    const CYCLICTEST: &str = "# Histogram\n000000 000000\n000001 000003\n000002 000001\n\
        # Total: 000000004\n# Min Latencies: 00001\n# Avg Latencies: 00002\n\
        # Max Latencies: 00009\n# Histogram Overflows: 00001\n\
        # Histogram Overflow at cycle number:\n# Thread 0: 4\n";

    const TIMERLAT: &str =
        include_str!("../../../../latlab-peers/tests/fixtures/rtla-timerlat-hist.txt");

    #[test]
    fn peer_files_join_the_comparison_of_their_quantity() {
        let oslat = br#"{"file_version": 1, "cmdline:": "oslat --cpu-list 1 -D 5", "rt_test_version:": "2.40",
            "thread": {"0": {"cpu": 1, "freq": 2597, "min": 1, "avg": 1.04, "max": 73,
                             "duration": 4.9, "histogram": {"1": 900, "2": 90, "32": 10}}}}"#;
        let entries = [
            run("a"),
            peer("cyclictest", CYCLICTEST.as_bytes()),
            peer("timerlat 1", TIMERLAT.as_bytes()),
            peer("oslat", oslat),
            peer("timerlat 2", TIMERLAT.as_bytes()),
        ];
        let plan = plan(&entries);
        let sections: Vec<(Quantity, Vec<&str>)> = plan
            .compared
            .iter()
            .map(|(q, m)| (*q, m.iter().map(|m| m.label.as_str()).collect()))
            .collect();
        // The run and cyclictest measure one quantity; rtla timerlat's three
        // are their own, compared between the two timerlat files.
        assert_eq!(
            sections,
            [
                (Quantity::TimerWakeUp, vec!["a", "cyclictest"]),
                (Quantity::TimerIrq, vec!["timerlat 1", "timerlat 2"]),
                (Quantity::TimerThread, vec!["timerlat 1", "timerlat 2"]),
                (Quantity::TimerUser, vec!["timerlat 1", "timerlat 2"]),
            ]
        );
        assert_eq!(
            plan.left_out,
            [(3, "no other result holds its busy-loop latency".to_string())]
        );
        let mut h = String::new();
        render(&mut h, &entries);
        assert!(h.contains("<h3>Timer IRQ latency (expiry to the interrupt handler)</h3>"));
        assert!(
            h.contains("Read from another tool's file: cyclictest."),
            "{h}"
        );
        assert!(
            h.contains("Read from another tool's file: rtla timerlat."),
            "{h}"
        );
        // cyclictest's row: what its file does not give unknown, p99 (the
        // overflow) a bound past the histogram, no change computed from it.
        let row = &h[h.find("<td class=\"l\">cyclictest</td>").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        let base = sample_result().overall.latency;
        assert_eq!(
            row,
            format!(
                "<td class=\"l\">cyclictest</td><td>–</td><td>5</td><td class=\"unknown\">unknown</td>\
                 <td>1.00 us</td>{}<td>≥ 3.00 us</td><td>–</td><td>≥ 3.00 us</td><td>–</td>\
                 <td>9.00 us</td>{}\
                 <td class=\"l unknown\" title=\"not in a cyclictest file\">unknown</td>",
                delta_cell(base.p50 as f64, 1000.0, true),
                delta_cell(base.max as f64, 9000.0, true),
            )
        );
        // Overlaid: the histogram plot without the overflow, the tail with it at the max.
        let plots = plots(&entries);
        let ids: Vec<&str> = plots.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids.len(), 8, "two plots per quantity: {ids:?}");
        let tail = plots.iter().find(|p| p.id == "compare-tail").unwrap();
        let names: Vec<&str> = tail.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "cyclictest"]);
        assert!(tail.markers.iter().any(|m| m.label == "max 9.00 us"));
    }
}
