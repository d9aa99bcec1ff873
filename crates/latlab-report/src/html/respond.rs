//! `latlab respond` results (schema `latlab.respond`): event-response
//! latency, one-way and round-trip, drawn like a run's latency.
//!
//! latlab-report cannot depend on latlab-respond (which renders its terminal
//! summary with this crate), so the result is read from its JSON; the parts
//! that are latlab-measure types (Summary, Histogram) are decoded as such.

use std::fmt::Write;

use serde_json::Value;

use latlab_measure::histogram::Histogram;
use latlab_measure::stats::Summary;
use latlab_measure::units::format_ns;

use super::plots as draw;
use super::svg::escape;
use super::svg::Plot;

/// True for a `latlab respond` result.
pub fn is_respond(value: &Value) -> bool {
    value["schema"] == "latlab.respond"
}

/// One direction's figures: `one_way` or `round_trip`.
fn direction(value: &Value, key: &str) -> Option<(Summary, Histogram)> {
    let part = &value[key];
    let summary = serde_json::from_value(part["latency"].clone()).ok()?;
    let histogram = serde_json::from_value(part["histogram"].clone()).ok()?;
    Some((summary, histogram))
}

const DIRECTIONS: [(&str, &str); 2] = [("one_way", "one-way"), ("round_trip", "round-trip")];

/// The plots of a respond result: both directions' histograms and tails.
pub fn plots(prefix: &str, value: &Value) -> Vec<Plot> {
    let parts: Vec<(String, Histogram)> = DIRECTIONS
        .iter()
        .filter_map(|(key, name)| direction(value, key).map(|(_, h)| (name.to_string(), h)))
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    let series: Vec<(String, &Histogram)> = parts.iter().map(|(n, h)| (n.clone(), h)).collect();
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
pub fn render(h: &mut String, id: &str, label: &str, value: &Value) {
    let settings = &value["settings"];
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Response to an external event \
         (<code>latlab respond</code>): {}; {} events sent, {} answered, {} lost; verdict \
         <b>{}</b>.</p>",
        escape(label),
        escape(settings["channel_description"].as_str().unwrap_or("?")),
        value["events_sent"].as_u64().unwrap_or(0),
        value["events_answered"].as_u64().unwrap_or(0),
        value["events_lost"].as_u64().unwrap_or(0),
        escape(value["verdict"].as_str().unwrap_or("none")),
    );
    if let Some(requirements) = value["requirements"].as_array() {
        h.push_str("<ul class=\"req\">");
        for detail in requirements
            .iter()
            .filter_map(|r| r["details"].as_array())
            .flatten()
        {
            let _ = write!(h, "<li>{}</li>", escape(detail.as_str().unwrap_or("")));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<table class=\"lat\"><tr><th class=\"l\">latency</th><th>events</th><th>min</th>\
         <th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>\n",
    );
    for (key, name) in DIRECTIONS {
        if let Some((s, _)) = direction(value, key) {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{name}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                s.count,
                format_ns(s.min),
                format_ns(s.mean.round() as u64),
                format_ns(s.p50),
                format_ns(s.p99),
                format_ns(s.p99_9),
                format_ns(s.p99_99),
                format_ns(s.max),
            );
        }
    }
    h.push_str("</table>\n");
}
