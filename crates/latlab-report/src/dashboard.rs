//! The pages of `latlab serve`'s dashboard: the fleet, one board, and
//! regressions against a board's baseline per kernel. Server-rendered HTML
//! with the report's own style and SVG plots; no script, font or image from
//! anywhere, so it works offline. Every text from a result or a board name
//! is escaped; links carry percent-encoded names.
//!
//! ```
//! use latlab_report::dashboard::{fleet_page, RunRow};
//! let row = RunRow { id: 1, board: "<b>".into(), started_at: "2026-11-24T10:00:00Z".into(),
//!     max_ns: Some(41_000), p999_ns: Some(30_000), verdict: Some("pass".into()), ..RunRow::default() };
//! let page = fleet_page(&[("<b>".to_string(), vec![row])], 0.5);
//! assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
//! ```

use std::fmt::Write;

use crate::html::svg::{escape, Axis, Plot, Series, Shape};

/// One stored result, as the dashboard lists it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRow {
    /// Row id in the store (for the comparison page).
    pub id: i64,
    /// The board that pushed it.
    pub board: String,
    /// The result's schema (`latlab.run`, ...).
    pub schema: String,
    /// Start, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
    /// Host name.
    pub host: Option<String>,
    /// Architecture.
    pub arch: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Preemption model.
    pub preemption: Option<String>,
    /// Background load (`None`: no load).
    pub load: Option<String>,
    /// `pass`, `fail`, `suspect`, `none`.
    pub verdict: Option<String>,
    /// Worst latency, ns.
    pub max_ns: Option<u64>,
    /// 99.9th percentile, ns.
    pub p999_ns: Option<u64>,
}

/// How many of a board's first runs on a kernel make its baseline.
pub const BASELINE_RUNS: usize = 5;

/// A run flagged as a regression.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The run's row id.
    pub id: i64,
    /// The kernel it ran.
    pub kernel: String,
    /// The baseline's worst latency on that kernel, ns.
    pub baseline_ns: u64,
    /// The run's worst latency, ns.
    pub max_ns: u64,
}

/// The runs of one board (oldest first) whose worst latency exceeds the
/// board's baseline on the same kernel by more than `threshold` (0.5: 50 %).
/// The baseline is the median worst latency of the board's first
/// [`BASELINE_RUNS`] runs on that kernel; those runs are not flagged.
pub fn regressions(runs: &[RunRow], threshold: f64) -> Vec<Regression> {
    let mut kernels: Vec<&str> = runs
        .iter()
        .map(|r| r.kernel.as_deref().unwrap_or("?"))
        .collect();
    kernels.sort();
    kernels.dedup();
    let mut flagged = Vec::new();
    for kernel in kernels {
        let on: Vec<&RunRow> = runs
            .iter()
            .filter(|r| r.kernel.as_deref().unwrap_or("?") == kernel && r.max_ns.is_some())
            .collect();
        let mut first: Vec<u64> = on
            .iter()
            .take(BASELINE_RUNS)
            .filter_map(|r| r.max_ns)
            .collect();
        if first.is_empty() {
            continue;
        }
        first.sort_unstable();
        let baseline = first[first.len() / 2];
        for run in on.iter().skip(BASELINE_RUNS) {
            let max = run.max_ns.unwrap_or(0);
            if max as f64 > baseline as f64 * (1.0 + threshold) {
                flagged.push(Regression {
                    id: run.id,
                    kernel: kernel.to_string(),
                    baseline_ns: baseline,
                    max_ns: max,
                });
            }
        }
    }
    flagged.sort_by_key(|r| r.id);
    flagged
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

/// Days since 1970-01-01 of a `YYYY-MM-DDTHH:MM:SSZ` time (fractional).
pub fn days_since_epoch(time: &str) -> Option<f64> {
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
    Some(days as f64 + (hh * 3600 + mm * 60 + ss) as f64 / 86_400.0)
}

/// A small inline trend line of the worst latencies (oldest to newest).
fn sparkline(values: &[u64]) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let (w, h) = (100.0, 22.0);
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
        return "first run".into();
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

fn page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t}</title>\n<style>{style}svg.spark{{vertical-align:middle}}\
         a{{color:#1a5fb4}}tr.regressed td{{background:#fdecea}}form.filters{{margin:10px 0}}\
         form.filters select,form.filters button{{margin-right:8px}}</style>\n</head>\n<body>\n\
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

/// The fleet: one row per board (its latest run's host, architecture,
/// kernel, preemption model, verdict, worst latency and p99.9), a trend of
/// its worst latencies and its regressions. `boards` holds each board's
/// runs, oldest first.
pub fn fleet_page(boards: &[(String, Vec<RunRow>)], threshold: f64) -> String {
    let mut b = String::new();
    b.push_str(
        "<section class=\"compare\"><h2>Boards</h2><table><tr><th class=\"l\">board</th>\
         <th class=\"l\">host</th><th class=\"l\">arch</th><th class=\"l\">kernel</th>\
         <th class=\"l\">preemption</th><th>runs</th><th class=\"l\">latest</th><th>verdict</th>\
         <th>worst (µs)</th><th>p99.9 (µs)</th><th class=\"l\">trend (worst; latest vs median)</th><th>regressions</th></tr>\n",
    );
    let mut total_runs = 0;
    let mut total_regressions = 0;
    for (board, runs) in boards {
        total_runs += runs.len();
        let link = format!(
            "<a href=\"/board/{}\">{}</a>",
            url_encode(board),
            escape(board)
        );
        let Some(latest) = runs.last() else {
            let _ = writeln!(
                b,
                "<tr><td class=\"l\">{link}</td><td class=\"l\" colspan=\"11\">no results yet</td></tr>"
            );
            continue;
        };
        let worst: Vec<u64> = runs
            .iter()
            .rev()
            .take(30)
            .rev()
            .filter_map(|r| r.max_ns)
            .collect();
        let flagged = regressions(runs, threshold);
        total_regressions += flagged.len();
        let _ = writeln!(
            b,
            "<tr><td class=\"l\">{link}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{} {}</td><td>{}</td></tr>",
            escape(or(&latest.host, "?")),
            escape(or(&latest.arch, "?")),
            escape(or(&latest.kernel, "?")),
            escape(or(&latest.preemption, "?")),
            runs.len(),
            escape(&latest.started_at.replace('T', " ").replace('Z', "")),
            badge(latest.verdict.as_deref()),
            us(latest.max_ns),
            us(latest.p999_ns),
            sparkline(&worst),
            trend_words(&worst),
            if flagged.is_empty() {
                "0".to_string()
            } else {
                format!("<span class=\"worse\">{}</span>", flagged.len())
            }
        );
    }
    b.push_str("</table></section>\n");
    page(
        "latlab fleet",
        &format!(
            "{} board{}, {total_runs} results, {total_regressions} regression{} \
             (worst latency more than {:.0} % above the board's baseline on the same kernel)",
            boards.len(),
            if boards.len() == 1 { "" } else { "s" },
            if total_regressions == 1 { "" } else { "s" },
            threshold * 100.0
        ),
        &b,
    )
}

/// The long-term plot of a board: worst latency and p99.9 per run over
/// time (days since its first run shown), log latency axis.
pub fn long_term_plot(runs: &[RunRow]) -> Option<Plot> {
    let points: Vec<(f64, &RunRow)> = runs
        .iter()
        .filter_map(|r| Some((days_since_epoch(&r.started_at)?, r)))
        .collect();
    let first = points.first()?.0;
    let last = points.last()?.0;
    let lo = runs
        .iter()
        .filter_map(|r| r.p999_ns.or(r.max_ns))
        .min()
        .unwrap_or(1_000);
    let hi = runs.iter().filter_map(|r| r.max_ns).max().unwrap_or(1_000);
    let mut plot = Plot::new(
        "longterm",
        "Worst latency (solid) and p99.9 (dashed) per run",
        Axis::linear(
            0.0,
            (last - first).max(1.0),
            "days since the first run shown",
        ),
        Axis::log(
            lo.max(1) as f64 / 1000.0,
            hi.max(1) as f64 / 1000.0,
            "latency (µs, log)",
        ),
    );
    let series = |f: fn(&RunRow) -> Option<u64>| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter_map(|(d, r)| Some((d - first, f(r)? as f64 / 1000.0)))
            .collect()
    };
    plot.series.push(Series {
        name: "worst".into(),
        color: crate::html::plots::color(0),
        shape: Shape::Line(series(|r| r.max_ns)),
        dashed: false,
    });
    plot.series.push(Series {
        name: "p99.9".into(),
        color: crate::html::plots::color(1),
        shape: Shape::Line(series(|r| r.p999_ns)),
        dashed: true,
    });
    Some(plot)
}

/// A board's page: the long-term plot, filters by kernel and load (a plain
/// GET form), and its runs, newest first, regressions marked; two runs are
/// compared through `/compare?a=ID&b=ID`. `runs` are the filtered runs,
/// oldest first; `kernels` and `loads` every value the board has (`none`: no load).
pub fn board_page(
    board: &str,
    runs: &[RunRow],
    kernels: &[String],
    loads: &[String],
    selected: (Option<&str>, Option<&str>),
    threshold: f64,
) -> String {
    let mut b = String::new();
    b.push_str(
        "<section class=\"compare\"><h2>Filters</h2><form class=\"filters\" method=\"get\">",
    );
    let select = |name: &str, label: &str, values: &[String], chosen: Option<&str>| {
        let mut s =
            format!("<label>{label} <select name=\"{name}\"><option value=\"\">any</option>");
        for v in values {
            let shown = if v == "none" { "no load" } else { v.as_str() };
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
        s.push_str("</select></label>");
        s
    };
    b.push_str(&select("kernel", "kernel", kernels, selected.0));
    b.push_str(&select("load", "load", loads, selected.1));
    b.push_str("<button type=\"submit\">show</button></form></section>\n");
    if let Some(plot) = long_term_plot(runs) {
        let _ = writeln!(
            b,
            "<section class=\"compare\"><h2>Long-term</h2><figure>{}</figure></section>",
            plot.to_svg()
        );
    }
    let flagged = regressions(runs, threshold);
    let _ = writeln!(
        b,
        "<section class=\"compare\"><h2>Runs</h2><p>{} run{}; {} regression{} (worst more than {:.0} % above \
         the median of the first {BASELINE_RUNS} runs on the same kernel). Compare any two: \
         <code>/compare?a=ID&amp;b=ID</code>, or the link to the previous run.</p><table><tr><th>id</th>\
         <th class=\"l\">when (UTC)</th><th class=\"l\">kind</th><th class=\"l\">kernel</th><th class=\"l\">load</th>\
         <th>verdict</th><th>worst (µs)</th><th>p99.9 (µs)</th><th class=\"l\">regression</th><th class=\"l\">compare</th></tr>",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        flagged.len(),
        if flagged.len() == 1 { "" } else { "s" },
        threshold * 100.0
    );
    for (i, run) in runs.iter().enumerate().rev() {
        let regression = flagged.iter().find(|f| f.id == run.id);
        let previous = i.checked_sub(1).map(|p| runs[p].id);
        let _ = writeln!(
            b,
            "<tr{}><td><a href=\"/api/v1/results/{id}\">{id}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td></tr>",
            if regression.is_some() { " class=\"regressed\"" } else { "" },
            escape(&run.started_at.replace('T', " ").replace('Z', "")),
            escape(run.schema.trim_start_matches("latlab.")),
            escape(or(&run.kernel, "?")),
            escape(or(&run.load, "none")),
            badge(run.verdict.as_deref()),
            us(run.max_ns),
            us(run.p999_ns),
            regression.map_or(String::new(), |r| format!(
                "<span class=\"worse\">{:.1}× baseline {} µs</span>",
                r.max_ns as f64 / r.baseline_ns.max(1) as f64,
                us(Some(r.baseline_ns))
            )),
            previous.map_or(String::new(), |p| format!(
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

    fn run(id: i64, kernel: &str, max_us: u64) -> RunRow {
        RunRow {
            id,
            board: "b".into(),
            schema: "latlab.run".into(),
            started_at: format!("2026-11-{:02}T10:00:00Z", 1 + id % 28),
            kernel: Some(kernel.into()),
            max_ns: Some(max_us * 1000),
            p999_ns: Some(max_us * 500),
            ..RunRow::default()
        }
    }

    #[test]
    fn regressions_are_judged_per_kernel_against_its_first_runs() {
        let mut runs: Vec<RunRow> = (1..=5).map(|i| run(i, "6.1", 40 + i as u64)).collect();
        runs.extend((6..=10).map(|i| run(i, "6.6", 200)));
        runs.push(run(11, "6.1", 60)); // 43 baseline: +40 %, under 50 %
        runs.push(run(12, "6.1", 70)); // +63 %: flagged
        runs.push(run(13, "6.6", 250)); // +25 % on its own kernel: not flagged
        runs.push(run(14, "6.6", 400)); // 2x: flagged
        let flagged = regressions(&runs, 0.5);
        let ids: Vec<i64> = flagged.iter().map(|r| r.id).collect();
        assert_eq!(ids, [12, 14]);
        assert_eq!(flagged[0].baseline_ns, 43_000);
        assert_eq!(flagged[1].baseline_ns, 200_000);
    }

    #[test]
    fn pages_escape_names_and_link_encoded() {
        let name = "x'); DROP TABLE results; --<script>&\"";
        let mut r = run(1, "6.6<i>", 50);
        r.board = name.into();
        let fleet = fleet_page(&[(name.to_string(), vec![r.clone()])], 0.5);
        assert!(!fleet.contains("<script>") && !fleet.contains("<i>"));
        assert!(fleet.contains("x&#39;); DROP TABLE results; --&lt;script&gt;&amp;&quot;"));
        assert!(
            fleet.contains("/board/x%27%29%3B%20DROP%20TABLE%20results%3B%20--%3Cscript%3E%26%22")
        );
        let board = board_page(name, &[r], &["6.6<i>".into()], &[], (None, None), 0.5);
        assert!(!board.contains("<i>") && !board.contains("<script>"));
        assert!(board.contains("<svg"), "the long-term plot");
    }

    #[test]
    fn dates_count_days() {
        assert_eq!(days_since_epoch("1970-01-02T00:00:00Z"), Some(1.0));
        assert_eq!(days_since_epoch("2000-03-01T12:00:00Z"), Some(11_017.5));
        assert_eq!(days_since_epoch("garbage"), None);
    }
}
