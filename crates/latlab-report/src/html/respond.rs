//! `latlab respond` results (schema `latlab.respond`): event-response
//! latency, one-way and round-trip, drawn like a run's latency.

use std::fmt::Write;

use latlab_measure::histogram::Histogram;
use latlab_respond::result::{LatencyResult, RespondResult};

use super::page::figures;
use super::plots as draw;
use super::run::latency_cells;
use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::verdict;

/// Both directions with their names: one-way, then round-trip.
fn directions(result: &RespondResult) -> [(&'static str, &LatencyResult); 2] {
    [
        ("one-way", &result.one_way),
        ("round-trip", &result.round_trip),
    ]
}

/// The plots of a respond result: both directions' histograms and tails.
pub fn plots(prefix: &str, result: &RespondResult) -> Vec<Plot> {
    let series: Vec<(String, &Histogram)> = directions(result)
        .into_iter()
        .map(|(name, l)| (name.to_string(), &l.histogram))
        .collect();
    vec![
        draw::histogram_plot(
            &format!("{prefix}-histogram"),
            "Response latency histogram",
            &series,
        ),
        draw::tail_plot(
            &format!("{prefix}-tail"),
            "Cumulative distribution: share of events above each latency",
            &series,
            Vec::new(),
        ),
    ]
}

/// The section of a respond result (its figures are drawn by the caller).
pub fn render(h: &mut String, id: &str, label: &str, result: &RespondResult) {
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Response to an external event \
         (<code>latlab respond</code>): {}; {} events sent, {} answered, {} lost; verdict \
         <b>{}</b>.</p>",
        escape(label),
        escape(&result.settings.channel_description),
        result.events_sent,
        result.events_answered,
        result.events_lost,
        verdict::name(result.verdict),
    );
    h.push_str("<ul class=\"req\">");
    for detail in result.requirements.iter().flat_map(|r| &r.details) {
        let _ = write!(h, "<li>{}</li>", escape(detail));
    }
    h.push_str("</ul>\n");
    h.push_str(
        "<table class=\"lat\"><tr><th class=\"l\">latency</th><th>events</th><th>min</th>\
         <th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>\n",
    );
    for (name, latency) in directions(result) {
        let s = &latency.latency;
        {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{name}</td><td>{}</td>{}</tr>",
                s.count,
                latency_cells(s)
            );
        }
    }
    h.push_str("</table>\n");
}

impl HtmlSection for latlab_document::RespondResult {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render(h, id, label, self);
        figures(h, &plots(id, self));
        h.push_str("</section>\n");
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        plots(id, self)
    }
}
