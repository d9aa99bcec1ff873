//! The fleet page: per board, one row per series.

use std::fmt::Write;

use crate::html::svg::escape;

use super::{
    badge, kernel_cell, kind_cell, or, page, sparkline, trend_words, url_encode, us, when,
};
use super::{FleetView, SERIES_WORDS};

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
