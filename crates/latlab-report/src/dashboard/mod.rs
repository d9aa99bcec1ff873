//! The pages of `latlab serve`'s dashboard: the fleet, one board, and a
//! message. Server-rendered HTML with the report's own style and SVG
//! plots; no script, font or image from anywhere, so it works offline.
//! Every text from a result or a board name is escaped; links carry
//! percent-encoded names.
//!
//! The pages render a [`model`] they are given: the series, baselines,
//! regressions and trends are computed by the fleet (`latlab-fleet`), per
//! [`Series`] (the results of one comparable group, never across kinds).
//!
//! ```
//! use latlab_report::dashboard::{fleet_page, BoardSummary, FleetView};
//! let view = FleetView {
//!     boards: vec![BoardSummary { name: "<b>".into(), host: None, arch: None, series: vec![] }],
//!     results: 0,
//!     regressions: 0,
//!     threshold: 0.5,
//! };
//! let page = fleet_page(&view);
//! assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
//! ```

use std::fmt::Write;

mod board;
mod fleet;
mod long_term;
pub mod model;

pub use board::board_page;
pub use fleet::fleet_page;
pub use long_term::{days_since_epoch, long_term_plot, LONG_TERM_SERIES};
pub use model::{
    BoardFilters, BoardSummary, BoardView, Entry, FleetView, Group, Regression, ResultRow, Series,
    SeriesSummary, Trend,
};

use crate::html::svg::escape;

/// How many of a series' first results make its baseline (the fleet
/// computes it; the board page says it).
pub const BASELINE_RUNS: usize = 5;

/// Characters left as they are in a URL path segment or query value.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `text` percent-encoded for a URL path segment or query value.
pub fn url_encode(text: &str) -> String {
    let mut out = String::new();
    for &b in text.as_bytes() {
        if unreserved(b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

pub(crate) fn us(ns: Option<u64>) -> String {
    ns.map_or("-".into(), crate::units::us)
}

pub(crate) fn or<'a>(v: &'a Option<String>, none: &'a str) -> &'a str {
    v.as_deref().unwrap_or(none)
}

pub(crate) fn badge(verdict: Option<&str>) -> String {
    let v = verdict.unwrap_or("none");
    let class = match v {
        "pass" => "pass",
        "fail" | "suspect" => "fail",
        _ => "none",
    };
    format!("<span class=\"badge {class}\">{}</span>", escape(v))
}

/// A start time as shown: `2026-11-27 10:05` (UTC, to the minute).
pub(crate) fn when(started_at: &str) -> String {
    let shown: String = started_at.replace('T', " ").chars().take(16).collect();
    escape(&shown)
}

/// The kind of a group and, smaller below it, its variant.
pub(crate) fn kind_cell(group: &Group) -> String {
    match &group.variant {
        Some(variant) => format!(
            "{}<br><small>{}</small>",
            escape(&group.kind),
            escape(variant)
        ),
        None => escape(&group.kind),
    }
}

/// The kernel of a group and, smaller below it, its preemption model.
pub(crate) fn kernel_cell(group: &Group) -> String {
    format!(
        "{}<br><small>{}</small>",
        escape(or(&group.kernel, "?")),
        escape(or(&group.preemption, "?"))
    )
}

/// A small inline trend line of the worst latencies (oldest to newest).
pub(crate) fn sparkline(values: &[u64]) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let (w, h) = (90.0, 22.0);
    let lo = values.iter().copied().min().unwrap_or(0) as f64;
    let hi = values.iter().copied().max().unwrap_or(1) as f64;
    let span = (hi - lo).max(1.0);
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let x = i as f64 * w / (values.len() - 1) as f64;
            let y = h - 2.0 - (v as f64 - lo) / span * (h - 4.0);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    format!(
        "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"trend of the worst latency\">\
         <polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"{}\"/></svg>",
        points.join(" ")
    )
}

/// The trend in words: the latest worst latency against the median of
/// the ones before it (up to ten).
pub(crate) fn trend_words(trend: Option<Trend>) -> String {
    match trend {
        None => String::new(),
        Some(Trend::First) => "first".into(),
        Some(Trend::Change(change)) => {
            let class = if change > 10.0 {
                "worse"
            } else if change < -10.0 {
                "better"
            } else {
                ""
            };
            format!("<span class=\"{class}\">{change:+.0} %</span>")
        }
    }
}

/// The dashboard's own style on top of the report's: long names and
/// settings wrap inside their cells, so the tables fit a 1280 px window.
const DASHBOARD_STYLE: &str = "svg.spark{vertical-align:middle}a{color:#1a5fb4}\
    tr.regressed td{background:#fdecea}form.filters{margin:10px 0}\
    form.filters select,form.filters button{margin:0 8px 4px 0;max-width:100%}\
    table.fleet,table.runs{width:100%}table.fleet th,table.runs th{white-space:normal}\
    table.fleet td.l,table.runs td.l{white-space:normal;overflow-wrap:anywhere;min-width:7em}\
    td small{color:#5b6b7a}td.board{vertical-align:top;border-right:1px solid #e6e9ed}\
    table.fleet td.trend{white-space:nowrap}";

pub(crate) fn page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t}</title>\n<style>{style}{DASHBOARD_STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{t}</h1><p>{s}</p></header>\n<main>\n{body}\
         <footer>latlab serve {v}. Server-rendered, no scripts, fonts or images from the network.</footer>\n\
         </main>\n</body>\n</html>\n",
        t = escape(title),
        s = subtitle,
        style = crate::html::STYLE,
        body = body,
        v = env!("CARGO_PKG_VERSION"),
    )
}

/// What a series is, for the pages: the facts a regression is judged within.
pub(crate) const SERIES_WORDS: &str = "the same kind and setup, kernel, preemption model and load";

/// A page saying what went wrong (an unknown board, a missing run).
pub fn message_page(title: &str, message: &str) -> String {
    page(
        title,
        "<a href=\"/\" style=\"color:#c5d0db\">← the fleet</a>",
        &format!(
            "<section class=\"compare\"><p>{}</p></section>\n",
            escape(message)
        ),
    )
}
