//! A board's page: filters, the long-term plot, its results.

use std::fmt::Write;

use crate::html::svg::escape;

use super::{badge, kernel_cell, kind_cell, long_term_plot, or, page, us, when};
use super::{BoardFilters, BoardView, BASELINE_RUNS, LONG_TERM_SERIES, SERIES_WORDS};

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
