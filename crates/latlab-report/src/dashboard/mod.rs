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

mod long_term;
pub mod model;

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

fn us(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v as f64 / 1000.0))
}

fn or<'a>(v: &'a Option<String>, none: &'a str) -> &'a str {
    v.as_deref().unwrap_or(none)
}

fn badge(verdict: Option<&str>) -> String {
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
fn kind_cell(group: &Group) -> String {
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
fn kernel_cell(group: &Group) -> String {
    format!(
        "{}<br><small>{}</small>",
        escape(or(&group.kernel, "?")),
        escape(or(&group.preemption, "?"))
    )
}

/// A small inline trend line of the worst latencies (oldest to newest).
fn sparkline(values: &[u64]) -> String {
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
fn trend_words(trend: Option<Trend>) -> String {
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

fn page(title: &str, subtitle: &str, body: &str) -> String {
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
const SERIES_WORDS: &str = "the same kind and setup, kernel, preemption model and load";

/// The fleet: per board, one row per series (its kind and setup, kernel
/// and preemption model, load) with its latest result's verdict, worst
/// latency and p99.9, a trend of its worst latencies and its regressions.
pub fn fleet_page(view: &FleetView) -> String {
    let mut b = String::new();
    b.push_str(
        "<section class=\"compare\"><h2>Boards</h2><table class=\"fleet\"><tr><th class=\"l\">board</th>\
         <th class=\"l\">kind</th><th class=\"l\">kernel</th><th class=\"l\">load</th><th>results</th>\
         <th class=\"l\">latest (UTC)</th><th>verdict</th><th>worst (µs)</th><th>p99.9 (µs)</th>\
         <th class=\"l\">trend (worst; latest vs median)</th><th>regressions</th></tr>\n",
    );
    for board in &view.boards {
        let board_cell = format!(
            "<td class=\"l board\" rowspan=\"{}\"><a href=\"/board/{}\">{}</a>{}</td>",
            board.series.len().max(1),
            url_encode(&board.name),
            escape(&board.name),
            if board.series.is_empty() {
                String::new()
            } else {
                format!(
                    "<br><small>{} · {}</small>",
                    escape(or(&board.host, "?")),
                    escape(or(&board.arch, "?"))
                )
            }
        );
        if board.series.is_empty() {
            let _ = writeln!(
                b,
                "<tr>{board_cell}<td class=\"l\" colspan=\"10\">no results yet</td></tr>"
            );
            continue;
        }
        for (i, s) in board.series.iter().enumerate() {
            let latest = &s.latest;
            let _ = writeln!(
                b,
                "<tr>{}<td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l trend\">{} {}</td><td>{}</td></tr>",
                if i == 0 { board_cell.as_str() } else { "" },
                kind_cell(&s.group),
                kernel_cell(&s.group),
                escape(or(&s.group.load, "none")),
                s.results,
                when(&latest.started_at),
                badge(latest.verdict.as_deref()),
                us(latest.max_ns),
                us(latest.p999_ns),
                sparkline(&s.worst),
                trend_words(s.trend),
                if s.regressions == 0 {
                    "0".to_string()
                } else {
                    format!("<span class=\"worse\">{}</span>", s.regressions)
                }
            );
        }
    }
    b.push_str("</table></section>\n");
    page(
        "latlab fleet",
        &format!(
            "{} board{}, {} results, {} regression{} \
             (worst latency more than {:.0} % above the baseline of its series: {SERIES_WORDS})",
            view.boards.len(),
            if view.boards.len() == 1 { "" } else { "s" },
            view.results,
            view.regressions,
            if view.regressions == 1 { "" } else { "s" },
            view.threshold * 100.0
        ),
        &b,
    )
}

/// The filters as a plain GET form.
fn filter_form(filters: &BoardFilters) -> String {
    let select = |name: &str, values: &[String], chosen: Option<&str>| {
        let mut s =
            format!("<label>{name} <select name=\"{name}\"><option value=\"\">any</option>");
        for v in values {
            let shown = if name == "load" && v == "none" {
                "no load"
            } else {
                v.as_str()
            };
            let _ = write!(
                s,
                "<option value=\"{}\"{}>{}</option>",
                escape(v),
                if chosen == Some(v.as_str()) {
                    " selected"
                } else {
                    ""
                },
                escape(shown)
            );
        }
        s.push_str("</select></label> ");
        s
    };
    format!(
        "<form class=\"filters\" method=\"get\">{}{}{}<button type=\"submit\">show</button></form>",
        select("kind", &filters.kinds, filters.kind.as_deref()),
        select("kernel", &filters.kernels, filters.kernel.as_deref()),
        select("load", &filters.loads, filters.load.as_deref()),
    )
}

/// A board's page: filters by kind, kernel and load (a plain GET form),
/// the long-term plot, and its results, newest first, regressions marked,
/// each with a link comparing it with the one before it in its series
/// (`/compare?a=ID&b=ID`).
pub fn board_page(view: &BoardView) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<section class=\"compare\"><h2>Filters</h2>{}</section>",
        filter_form(&view.filters)
    );
    let series = &view.series;
    if let Some(plot) = long_term_plot(series) {
        let drawn = series
            .iter()
            .filter(|s| s.entries.iter().any(|e| e.max_ns.is_some()))
            .count();
        let more = drawn.saturating_sub(LONG_TERM_SERIES);
        let _ = writeln!(
            b,
            "<section class=\"compare\"><h2>Long-term</h2><figure>{}</figure>{}</section>",
            plot.to_svg(),
            if more > 0 {
                format!(
                    "<p>The {LONG_TERM_SERIES} series with the most results are drawn, {more} more \
                     are not: choose a kind, kernel or load above.</p>"
                )
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(
        b,
        "<section class=\"compare\"><h2>Results</h2><p>{} result{} in {} series; {} regression{} \
         (worst more than {:.0} % above the median of the first {BASELINE_RUNS} results of its series: \
         {SERIES_WORDS}). Compare any two: <code>/compare?a=ID&amp;b=ID</code>, or the link to the \
         result before in the same series.</p><table class=\"runs\"><tr><th>id</th>\
         <th class=\"l\">when (UTC)</th><th class=\"l\">kind</th><th class=\"l\">kernel</th><th class=\"l\">load</th>\
         <th>verdict</th><th>worst (µs)</th><th>p99.9 (µs)</th><th class=\"l\">regression</th><th class=\"l\">compare</th></tr>",
        view.results.len(),
        if view.results.len() == 1 { "" } else { "s" },
        series.len(),
        view.regressions,
        if view.regressions == 1 { "" } else { "s" },
        view.threshold * 100.0
    );
    for row in &view.results {
        let run = &row.entry;
        let group = run.group();
        let regression = row.regression.as_ref();
        let _ = writeln!(
            b,
            "<tr{}><td><a href=\"/api/v1/results/{id}\">{id}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td></tr>",
            if regression.is_some() { " class=\"regressed\"" } else { "" },
            when(&run.started_at),
            kind_cell(&group),
            kernel_cell(&group),
            escape(or(&run.load, "none")),
            badge(run.verdict.as_deref()),
            us(run.max_ns),
            us(run.p999_ns),
            regression.map_or(String::new(), |r| format!(
                "<span class=\"worse\">{:.1}× baseline {} µs</span>",
                r.max_ns as f64 / r.baseline_ns.max(1) as f64,
                us(Some(r.baseline_ns))
            )),
            row.previous.map_or(String::new(), |p| format!(
                "<a href=\"/compare?a={p}&amp;b={}\">vs {p}</a>",
                run.id
            )),
            id = run.id,
        );
    }
    b.push_str("</table></section>\n");
    page(
        &format!("latlab board {}", view.name),
        "<a href=\"/\" style=\"color:#c5d0db\">← the fleet</a>",
        &b,
    )
}

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
