//! The pages of `latlab serve`'s dashboard: the fleet, one board, and
//! regressions against a baseline. Server-rendered HTML with the report's
//! own style and SVG plots; no script, font or image from anywhere, so it
//! works offline. Every text from a result or a board name is escaped;
//! links carry percent-encoded names.
//!
//! Every figure that sets results against each other — the baseline, the
//! regressions, the trend, "the latest" and the long-term plot's lines —
//! is taken per [`Series`]: the results of one comparable group
//! ([`latlab_history::Group`]: the same board, kind, variant, kernel,
//! preemption model and load), never across kinds.
//!
//! ```
//! use latlab_history::Entry;
//! use latlab_report::dashboard::fleet_page;
//! let row = Entry { id: 1, uid: "u".into(), board: Some("<b>".into()), schema: "latlab.run".into(),
//!     started_at: "2026-11-24T10:00:00Z".into(), host: None, arch: None, kernel: None,
//!     preemption: None, load: None, variant: None, max_ns: Some(41_000), p999_ns: Some(30_000),
//!     verdict: Some("pass".into()) };
//! let page = fleet_page(&[("<b>".to_string(), vec![row])], 0.5);
//! assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
//! ```

use std::fmt::Write;

pub use latlab_history::{Entry, Group, Series};

use crate::html::svg::{escape, Axis, Plot, Series as Line, Shape};

/// How many of a series' first results make its baseline.
pub const BASELINE_RUNS: usize = 5;

/// A result flagged as a regression.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The result's row id.
    pub id: i64,
    /// The baseline's worst latency, ns.
    pub baseline_ns: u64,
    /// The result's worst latency, ns.
    pub max_ns: u64,
}

/// The results of one series whose worst latency exceeds the series'
/// baseline by more than `threshold` (0.5: 50 %). The baseline is the
/// median worst latency of the series' first [`BASELINE_RUNS`] results
/// that have one; those are not flagged. A series is one comparable group,
/// so a new kernel, load or kind starts a new baseline.
pub fn regressions(series: &Series, threshold: f64) -> Vec<Regression> {
    let measured: Vec<(i64, u64)> = series
        .entries
        .iter()
        .filter_map(|e| Some((e.id, e.max_ns?)))
        .collect();
    let mut first: Vec<u64> = measured
        .iter()
        .take(BASELINE_RUNS)
        .map(|&(_, max)| max)
        .collect();
    if first.is_empty() {
        return Vec::new();
    }
    first.sort_unstable();
    let baseline = first[first.len() / 2];
    measured
        .iter()
        .skip(BASELINE_RUNS)
        .filter(|&&(_, max)| max as f64 > baseline as f64 * (1.0 + threshold))
        .map(|&(id, max_ns)| Regression {
            id,
            baseline_ns: baseline,
            max_ns,
        })
        .collect()
}

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
fn when(started_at: &str) -> String {
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

/// Days since 1970-01-01 of a `YYYY-MM-DDTHH:MM:SSZ` time (fractional).
pub fn days_since_epoch(time: &str) -> Option<f64> {
    Some(seconds_since_epoch(time)? as f64 / 86_400.0)
}

/// Seconds since 1970-01-01 of a `YYYY-MM-DDTHH:MM:SSZ` time.
fn seconds_since_epoch(time: &str) -> Option<i64> {
    let b = time.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| time.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
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
fn trend_words(values: &[u64]) -> String {
    let Some((&last, before)) = values.split_last() else {
        return String::new();
    };
    let mut prior: Vec<u64> = before.iter().rev().take(10).copied().collect();
    if prior.is_empty() {
        return "first".into();
    }
    prior.sort_unstable();
    let median = prior[prior.len() / 2].max(1) as f64;
    let change = (last as f64 / median - 1.0) * 100.0;
    let class = if change > 10.0 {
        "worse"
    } else if change < -10.0 {
        "better"
    } else {
        ""
    };
    format!("<span class=\"{class}\">{change:+.0} %</span>")
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
/// `boards` holds each board's results (in any order).
pub fn fleet_page(boards: &[(String, Vec<Entry>)], threshold: f64) -> String {
    let mut b = String::new();
    b.push_str(
        "<section class=\"compare\"><h2>Boards</h2><table class=\"fleet\"><tr><th class=\"l\">board</th>\
         <th class=\"l\">kind</th><th class=\"l\">kernel</th><th class=\"l\">load</th><th>results</th>\
         <th class=\"l\">latest (UTC)</th><th>verdict</th><th>worst (µs)</th><th>p99.9 (µs)</th>\
         <th class=\"l\">trend (worst; latest vs median)</th><th>regressions</th></tr>\n",
    );
    let mut total_results = 0;
    let mut total_regressions = 0;
    for (board, entries) in boards {
        total_results += entries.len();
        let series = Series::split(entries);
        let first = entries.first();
        let board_cell = format!(
            "<td class=\"l board\" rowspan=\"{}\"><a href=\"/board/{}\">{}</a>{}</td>",
            series.len().max(1),
            url_encode(board),
            escape(board),
            first.map_or(String::new(), |e| format!(
                "<br><small>{} · {}</small>",
                escape(or(&e.host, "?")),
                escape(or(&e.arch, "?"))
            ))
        );
        if series.is_empty() {
            let _ = writeln!(
                b,
                "<tr>{board_cell}<td class=\"l\" colspan=\"10\">no results yet</td></tr>"
            );
            continue;
        }
        for (i, s) in series.iter().enumerate() {
            let latest = s.latest().expect("a series has a result");
            let worst: Vec<u64> = s
                .entries
                .iter()
                .rev()
                .take(30)
                .rev()
                .filter_map(|r| r.max_ns)
                .collect();
            let flagged = regressions(s, threshold);
            total_regressions += flagged.len();
            let _ = writeln!(
                b,
                "<tr>{}<td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l trend\">{} {}</td><td>{}</td></tr>",
                if i == 0 { board_cell.as_str() } else { "" },
                kind_cell(&s.group),
                kernel_cell(&s.group),
                escape(or(&s.group.load, "none")),
                s.entries.len(),
                when(&latest.started_at),
                badge(latest.verdict.as_deref()),
                us(latest.max_ns),
                us(latest.p999_ns),
                sparkline(&worst),
                if worst.is_empty() { String::new() } else { trend_words(&worst) },
                if flagged.is_empty() {
                    "0".to_string()
                } else {
                    format!("<span class=\"worse\">{}</span>", flagged.len())
                }
            );
        }
    }
    b.push_str("</table></section>\n");
    page(
        "latlab fleet",
        &format!(
            "{} board{}, {total_results} results, {total_regressions} regression{} \
             (worst latency more than {:.0} % above the baseline of its series: {SERIES_WORDS})",
            boards.len(),
            if boards.len() == 1 { "" } else { "s" },
            if total_regressions == 1 { "" } else { "s" },
            threshold * 100.0
        ),
        &b,
    )
}

/// Short names for groups that tell them apart: the kind, and the facts
/// in which the groups of the same kind differ (variant, kernel, load,
/// ...); each at most `width` characters (cut with `…`).
fn group_labels(groups: &[&Group], width: usize) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            let differing: Vec<&str> = groups
                .iter()
                .filter(|o| o.kind == g.kind)
                .flat_map(|o| g.differences(o))
                .collect();
            let facts = [
                ("variant", g.variant.clone()),
                ("kernel", g.kernel.clone()),
                ("preemption", g.preemption.clone()),
                (
                    "load",
                    Some(g.load.clone().unwrap_or_else(|| "no load".into())),
                ),
                ("origin", Some(g.origin.clone())),
            ];
            let mut shown = vec![g.kind.clone()];
            shown.extend(
                facts
                    .into_iter()
                    .filter(|(name, _)| differing.contains(name))
                    .filter_map(|(_, v)| v),
            );
            let label = shown.join(", ");
            if label.chars().count() > width {
                let cut: String = label.chars().take(width.saturating_sub(1)).collect();
                format!("{cut}…")
            } else {
                label
            }
        })
        .collect()
}

/// At most this many series are drawn in the long-term plot (the ones with
/// the most results); the filters narrow to the others.
pub const LONG_TERM_SERIES: usize = 4;

/// The long-term plot of a board: the worst latency per result over time,
/// one line per series (with the p99.9 dashed when there is one series),
/// log latency axis, a dot per result. The time axis spans the results
/// shown (and 2 % more either side), in minutes, hours or days as their
/// span needs. `None`: no result with a latency.
pub fn long_term_plot(series: &[Series]) -> Option<Plot> {
    let mut drawn: Vec<&Series> = series
        .iter()
        .filter(|s| s.entries.iter().any(|e| e.max_ns.is_some()))
        .collect();
    drawn.sort_by_key(|s| std::cmp::Reverse(s.entries.len()));
    drawn.truncate(LONG_TERM_SERIES);
    drawn.sort_by(|a, b| a.group.cmp(&b.group));
    let points: Vec<(i64, &Entry)> = drawn
        .iter()
        .flat_map(|s| s.entries.iter())
        .filter(|e| e.max_ns.is_some())
        .filter_map(|e| Some((seconds_since_epoch(&e.started_at)?, e)))
        .collect();
    let first = points.iter().map(|p| p.0).min()?;
    let span = points.iter().map(|p| p.0).max()? - first;
    let (unit, seconds) = if span >= 2 * 86_400 {
        ("days", 86_400.0)
    } else if span >= 2 * 3600 {
        ("hours", 3600.0)
    } else {
        ("minutes", 60.0)
    };
    let start = points
        .iter()
        .find(|p| p.0 == first)
        .map_or(String::new(), |p| when(&p.1.started_at));
    let lo = points
        .iter()
        .filter_map(|(_, e)| e.p999_ns.or(e.max_ns))
        .min()
        .unwrap_or(1_000);
    let hi = points
        .iter()
        .filter_map(|(_, e)| e.max_ns)
        .max()
        .unwrap_or(1_000);
    let one = drawn.len() == 1;
    let mut plot = Plot::new(
        "longterm",
        if one {
            "Worst latency (solid) and p99.9 (dashed) per result"
        } else {
            "Worst latency per result, one line per series"
        },
        // A margin of 2 % either side, so that the first and last dots show whole.
        Axis::linear(
            -0.02 * span as f64 / seconds,
            1.02 * span as f64 / seconds,
            &format!("{unit} since {start} UTC (the first result shown)"),
        ),
        Axis::log(
            lo.max(1) as f64 / 1000.0,
            hi.max(1) as f64 / 1000.0,
            "latency (µs, log)",
        ),
    );
    // The legend is one line over the plot (about 7.4 px a character and
    // 30 px a line sample): the labels share what fits.
    let width = ((crate::html::svg::WIDTH - 20.0 - 30.0 * drawn.len() as f64)
        / 7.4
        / drawn.len() as f64) as usize;
    let labels = group_labels(
        &drawn.iter().map(|s| &s.group).collect::<Vec<_>>(),
        width.max(8),
    );
    for (i, (s, label)) in drawn.iter().zip(labels).enumerate() {
        let line = |f: fn(&Entry) -> Option<u64>| -> Vec<(f64, f64)> {
            s.entries
                .iter()
                .filter_map(|e| {
                    let at = seconds_since_epoch(&e.started_at)?;
                    Some(((at - first) as f64 / seconds, f(e)? as f64 / 1000.0))
                })
                .collect()
        };
        plot.series.push(Line {
            name: if one { "worst".into() } else { label },
            color: crate::html::plots::color(i),
            shape: Shape::LineWithPoints(line(|e| e.max_ns)),
            dashed: false,
        });
        if one {
            plot.series.push(Line {
                name: "p99.9".into(),
                color: crate::html::plots::color(1),
                shape: Shape::Line(line(|e| e.p999_ns)),
                dashed: true,
            });
        }
    }
    Some(plot)
}

/// The choices of a board page's filters: every kind, kernel and load the
/// board has (`none`: no load), and the ones chosen (`None`: any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoardFilters {
    /// Every kind the board has, sorted.
    pub kinds: Vec<String>,
    /// Every kernel release, sorted.
    pub kernels: Vec<String>,
    /// Every load, sorted (`none`: the results without load).
    pub loads: Vec<String>,
    /// The kind chosen.
    pub kind: Option<String>,
    /// The kernel chosen.
    pub kernel: Option<String>,
    /// The load chosen (`none`: without load).
    pub load: Option<String>,
}

impl BoardFilters {
    /// The choices `entries` offer, with the chosen `kind`, `kernel` and
    /// `load` (empty values: any).
    pub fn new(
        entries: &[Entry],
        kind: Option<&str>,
        kernel: Option<&str>,
        load: Option<&str>,
    ) -> BoardFilters {
        let values = |f: &dyn Fn(&Entry) -> Option<String>| {
            let mut v: Vec<String> = entries.iter().filter_map(f).collect();
            v.sort();
            v.dedup();
            v
        };
        let chosen = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_string);
        BoardFilters {
            kinds: values(&|e| Some(e.kind().to_string())),
            kernels: values(&|e| e.kernel.clone()),
            loads: values(&|e| Some(e.load.clone().unwrap_or_else(|| "none".into()))),
            kind: chosen(kind),
            kernel: chosen(kernel),
            load: chosen(load),
        }
    }

    /// Whether a result passes the chosen filters.
    pub fn keeps(&self, entry: &Entry) -> bool {
        self.kind.as_deref().is_none_or(|k| entry.kind() == k)
            && self
                .kernel
                .as_deref()
                .is_none_or(|k| entry.kernel.as_deref() == Some(k))
            && self
                .load
                .as_deref()
                .is_none_or(|l| entry.load.as_deref().unwrap_or("none") == l)
    }

    fn form(&self) -> String {
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
            select("kind", &self.kinds, self.kind.as_deref()),
            select("kernel", &self.kernels, self.kernel.as_deref()),
            select("load", &self.loads, self.load.as_deref()),
        )
    }
}

/// A board's page: filters by kind, kernel and load (a plain GET form),
/// the long-term plot, and its results, newest first, regressions marked,
/// each with a link comparing it with the one before it in its series
/// (`/compare?a=ID&b=ID`). `entries` are the results the filters keep.
pub fn board_page(
    board: &str,
    entries: &[Entry],
    filters: &BoardFilters,
    threshold: f64,
) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<section class=\"compare\"><h2>Filters</h2>{}</section>",
        filters.form()
    );
    let series = Series::split(entries);
    if let Some(plot) = long_term_plot(&series) {
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
    // Per result: its regression and the result before it in its series.
    let mut flagged = Vec::new();
    let mut previous = std::collections::HashMap::new();
    for s in &series {
        flagged.extend(regressions(s, threshold));
        for pair in s.entries.windows(2) {
            previous.insert(pair[1].id, pair[0].id);
        }
    }
    let mut newest_first: Vec<&Entry> = entries.iter().collect();
    newest_first.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.id.cmp(&a.id)));
    let _ = writeln!(
        b,
        "<section class=\"compare\"><h2>Results</h2><p>{} result{} in {} series; {} regression{} \
         (worst more than {:.0} % above the median of the first {BASELINE_RUNS} results of its series: \
         {SERIES_WORDS}). Compare any two: <code>/compare?a=ID&amp;b=ID</code>, or the link to the \
         result before in the same series.</p><table class=\"runs\"><tr><th>id</th>\
         <th class=\"l\">when (UTC)</th><th class=\"l\">kind</th><th class=\"l\">kernel</th><th class=\"l\">load</th>\
         <th>verdict</th><th>worst (µs)</th><th>p99.9 (µs)</th><th class=\"l\">regression</th><th class=\"l\">compare</th></tr>",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
        series.len(),
        flagged.len(),
        if flagged.len() == 1 { "" } else { "s" },
        threshold * 100.0
    );
    for run in newest_first {
        let group = run.group();
        let regression = flagged.iter().find(|f| f.id == run.id);
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
            previous.get(&run.id).map_or(String::new(), |p| format!(
                "<a href=\"/compare?a={p}&amp;b={}\">vs {p}</a>",
                run.id
            )),
            id = run.id,
        );
    }
    b.push_str("</table></section>\n");
    page(
        &format!("latlab board {board}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: i64, schema: &str, kernel: &str, max_us: Option<u64>) -> Entry {
        Entry {
            id,
            uid: format!("u{id}"),
            board: Some("b".into()),
            schema: schema.into(),
            started_at: format!("2026-11-{:02}T10:00:00Z", 1 + id % 28),
            host: None,
            arch: None,
            kernel: Some(kernel.into()),
            preemption: None,
            load: None,
            variant: None,
            max_ns: max_us.map(|v| v * 1000),
            p999_ns: max_us.map(|v| v * 500),
            verdict: None,
        }
    }

    fn run(id: i64, kernel: &str, max_us: u64) -> Entry {
        result(id, "latlab.run", kernel, Some(max_us))
    }

    fn flagged(entries: &[Entry]) -> Vec<Regression> {
        Series::split(entries)
            .iter()
            .flat_map(|s| regressions(s, 0.5))
            .collect()
    }

    #[test]
    fn regressions_are_judged_per_kernel_against_its_first_runs() {
        let mut runs: Vec<Entry> = (1..=5).map(|i| run(i, "6.1", 40 + i as u64)).collect();
        runs.extend((6..=10).map(|i| run(i, "6.6", 200)));
        runs.push(run(11, "6.1", 60)); // 43 baseline: +40 %, under 50 %
        runs.push(run(12, "6.1", 70)); // +63 %: flagged
        runs.push(run(13, "6.6", 250)); // +25 % on its own kernel: not flagged
        runs.push(run(14, "6.6", 400)); // 2x: flagged
        let found = flagged(&runs);
        let ids: Vec<i64> = found.iter().map(|r| r.id).collect();
        assert_eq!(ids, [12, 14]);
        assert_eq!(found[0].baseline_ns, 43_000);
        assert_eq!(found[1].baseline_ns, 200_000);
    }

    #[test]
    fn other_kinds_are_never_judged_against_a_run_baseline() {
        let mut results: Vec<Entry> = (1..=6).map(|i| run(i, "6.6", 40)).collect();
        results.push(result(7, "latlab.respond", "6.6", Some(580)));
        results.push(result(8, "latlab.watch", "6.6", Some(500)));
        results.push(result(9, "latlab.lockbench", "6.6", None));
        assert!(flagged(&results).is_empty());
        let page = fleet_page(&[("b".to_string(), results)], 0.5);
        assert!(page.contains("0 regressions"), "{page}");
        // One row per kind, each with its own latest.
        for (kind, worst) in [("run", "40.0"), ("respond", "580.0"), ("watch", "500.0")] {
            let row = page
                .lines()
                .find(|l| l.contains(&format!("<td class=\"l\">{kind}</td>")))
                .unwrap_or_else(|| panic!("a {kind} row: {page}"));
            assert!(row.contains(&format!("<td>{worst}</td>")), "{row}");
        }
    }

    #[test]
    fn pages_escape_names_and_link_encoded() {
        let name = "x'); DROP TABLE results; --<script>&\"";
        let mut r = run(1, "6.6<i>", 50);
        r.board = Some(name.into());
        let fleet = fleet_page(&[(name.to_string(), vec![r.clone()])], 0.5);
        assert!(!fleet.contains("<script>") && !fleet.contains("<i>"));
        assert!(fleet.contains("x&#39;); DROP TABLE results; --&lt;script&gt;&amp;&quot;"));
        assert!(
            fleet.contains("/board/x%27%29%3B%20DROP%20TABLE%20results%3B%20--%3Cscript%3E%26%22")
        );
        let filters = BoardFilters::new(std::slice::from_ref(&r), None, None, None);
        let board = board_page(name, &[r], &filters, 0.5);
        assert!(!board.contains("<i>") && !board.contains("<script>"));
        assert!(board.contains("<svg"), "the long-term plot");
    }

    #[test]
    fn the_long_term_axis_spans_the_results_shown() {
        // Six results a quarter of an hour apart: 75 minutes.
        let results: Vec<Entry> = (0..6)
            .map(|i| {
                let mut r = run(i, "6.6", 40);
                r.started_at = format!("2026-11-27T09:{:02}:00Z", i * 15);
                r
            })
            .collect();
        let plot = long_term_plot(&Series::split(&results)).unwrap();
        assert_eq!((plot.x.min, plot.x.max), (-1.5, 76.5));
        assert!(
            plot.x.label.starts_with("minutes since 2026-11-27 09:00"),
            "{}",
            plot.x.label
        );
        let week: Vec<Entry> = (0..8).map(|i| run(i, "6.6", 40)).collect();
        let plot = long_term_plot(&Series::split(&week)).unwrap();
        assert!((plot.x.min + 0.14).abs() < 1e-9 && (plot.x.max - 7.14).abs() < 1e-9);
        assert!(plot.x.label.starts_with("days"));
    }

    #[test]
    fn filters_keep_the_chosen_kind_kernel_and_load() {
        let results = [
            run(1, "6.6", 40),
            result(2, "latlab.watch", "6.6", Some(50)),
            run(3, "6.12", 40),
        ];
        let filters = BoardFilters::new(&results, Some("run"), Some(""), Some("none"));
        assert_eq!(filters.kinds, ["run", "watch"]);
        assert_eq!(filters.kernel, None);
        let kept: Vec<i64> = results
            .iter()
            .filter(|r| filters.keeps(r))
            .map(|r| r.id)
            .collect();
        assert_eq!(kept, [1, 3]);
    }

    #[test]
    fn dates_count_days() {
        assert_eq!(days_since_epoch("1970-01-02T00:00:00Z"), Some(1.0));
        assert_eq!(days_since_epoch("2000-03-01T12:00:00Z"), Some(11_017.5));
        assert_eq!(days_since_epoch("garbage"), None);
    }
}
