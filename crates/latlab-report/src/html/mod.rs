//! The HTML report: one self-contained file (inline CSS and SVG, one small
//! inline script, no network) showing one result or comparing several.
//!
//! Inputs are typed [`Document`]s (latlab-document), read by the `schema`
//! field of the JSON; a kind the report does not know is shown as its JSON.
//!
//! ```
//! use latlab_report::html::{render, Document, Entry};
//! let text = r#"{"schema": "latlab.example", "answer": 42}"#;
//! let entry = Entry { label: "example".into(), document: Document::parse(text).unwrap() };
//! let html = render(&[entry], "latlab report");
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! assert!(html.contains("latlab.example"));
//! ```

pub mod comparison;
pub mod lockbench;
pub mod peer;
pub mod plots;
pub mod respond;
pub mod simulation;
pub mod svg;

use std::fmt::Write;

pub use latlab_document::Document;
use latlab_document::{PeerDocument, RunDocument};
use latlab_explain::{CauseRow, Report as Explanation};
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;
use latlab_measure::units::format_ns;

use crate::formats::HtmlSection;
use plots::{load_kinds, percentile_markers};
use svg::{escape, Plot};

/// One result with the name it has in the report.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Short name (legend, table rows): `no load`, `6.18.0-rt`, ...
    pub label: String,
    /// The result.
    pub document: Document,
}

/// Names for documents that tell them apart: the facts that differ between
/// the runs (host, kernel, preemption model, load), else their start times.
pub fn auto_labels(documents: &[Document]) -> Vec<String> {
    let facts = |run: &RunDocument| -> [String; 4] {
        [
            run.system.hostname.clone(),
            run.system.kernel_release.clone(),
            format!(
                "preempt {}",
                run.system.preemption_model.as_deref().unwrap_or("?")
            ),
            run.load_name(),
        ]
    };
    let runs: Vec<Option<[String; 4]>> = documents.iter().map(|d| d.as_run().map(facts)).collect();
    let with_peers = documents.iter().any(|d| matches!(d, Document::Peer(_)));
    let known: Vec<&[String; 4]> = runs.iter().flatten().collect();
    let differing: Vec<usize> = (0..4)
        .filter(|&i| known.iter().any(|f| f[i] != known[0][i]))
        .collect();
    let mut labels: Vec<String> = documents
        .iter()
        .zip(&runs)
        .map(|(d, facts)| match (d, facts) {
            (Document::Run(run), Some(facts)) => {
                let differs = differing
                    .iter()
                    .map(|&i| facts[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                // Next to another tool's results a run is named by its tool.
                match (with_peers, differing.is_empty()) {
                    (true, true) => "latlab run".into(),
                    (true, false) => format!("latlab run, {differs}"),
                    (false, true) => run.started_at.clone().unwrap_or_default(),
                    (false, false) => differs,
                }
            }
            (Document::Peer(peer), _) => peer.tool_name(),
            (Document::Lockbench(_), _) => "lockbench".into(),
            (Document::Simulation(_), _) => "simulation".into(),
            (Document::Respond(respond), _) => format!("respond {}", respond.settings.channel),
            (Document::Explain(_), _) => "explain".into(),
            (Document::Load(load), _) => format!("load {}", load.report.name()),
            (Document::Watch(w), _) => format!("watch {}", w.settings.selection),
            (Document::Other { schema, .. }, _) => schema.clone(),
            _ => String::new(),
        })
        .collect();
    // Still equal: number them.
    let copy = labels.clone();
    for (i, label) in labels.iter_mut().enumerate() {
        if copy.iter().filter(|l| *l == label).count() > 1 {
            let _ = write!(label, " #{}", i + 1);
        }
    }
    labels
}

/// `no load`, the load spec (`full`, `io:2`), or the load command.
pub fn load_name(run: &RunDocument) -> String {
    run.load_name()
}

/// Every plot of the report, in page order (comparison first), with unique ids.
pub fn plots(entries: &[Entry]) -> Vec<Plot> {
    let mut out = comparison::plots(entries);
    for (i, entry) in entries.iter().enumerate() {
        if let Some(section) = section_of(&entry.document) {
            out.extend(section.html_plots(&section_id(&entry.document, i)));
        }
    }
    out
}

fn run_plots(prefix: &str, run: &RunDocument) -> Vec<Plot> {
    let per_cpu: Vec<(String, &latlab_measure::histogram::Histogram)> = run
        .threads
        .iter()
        .map(|t| (format!("CPU{}", t.cpu), &t.histogram))
        .collect();
    let mut out = vec![
        plots::histogram_plot(
            &format!("{prefix}-histogram"),
            "Latency histogram per CPU",
            &per_cpu,
        ),
        plots::tail_plot(
            &format!("{prefix}-tail"),
            "Cumulative distribution: share of samples above each latency",
            &[("all CPUs".to_string(), &run.overall.histogram)],
            percentile_markers(run, "#b02a1a", ""),
        ),
    ];
    out.extend(plots::series_plot(&format!("{prefix}-time"), run));
    out.extend(plots::period_plot(&format!("{prefix}-period"), run));
    if let Some(load) = &run.load {
        out.extend(plots::load_plot(&format!("{prefix}-load"), load));
    }
    out
}

pub(crate) const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d232a;font-size:14px}
header{background:#1d2b3a;color:#fff;padding:14px 28px}
header h1{margin:0;font-size:21px}
header p{margin:4px 0 0;color:#c5d0db}
main{max-width:1500px;margin:0 auto;padding:10px 28px 40px}
section.run,section.compare,section.other{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:4px 20px 16px;margin:18px 0}
h2{font-size:18px;margin:14px 0 8px}
h3{font-size:15px;margin:16px 0 6px;color:#33414f}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #e6e9ed;text-align:right;white-space:nowrap}
td.wrap{white-space:normal}
th{background:#f0f2f5;font-weight:600}
td.l,th.l{text-align:left}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:700;color:#fff}
.pass{background:#2a9d4a}.fail{background:#d3452c}.none{background:#7a8793}
.better{color:#1d7a38}.worse{color:#b02a1a}td.unknown{color:#8a96a3;font-style:italic}
table.deltas th:last-child{white-space:normal}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}
figure{margin:0;border:1px solid #e6e9ed;border-radius:4px;background:#fff}
svg.plot{width:100%;height:auto;display:block}
dl.sys{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}
dl.sys dt{color:#5b6b7a}dl.sys dd{margin:0;overflow-wrap:anywhere}
ul.warn li,p.warn{color:#8a5a00}
pre{background:#f6f8fa;padding:10px;overflow:auto;max-height:420px}
code{font-size:13px}
footer{color:#5b6b7a;font-size:12px;margin-top:20px}
div.bar{height:11px;background:#d3452c;border-radius:2px}
";

/// Marks the page as rendered (a headless browser test reads this marker)
/// and lets a click on a plot open it full size.
const SCRIPT: &str = "
(function(){
  var plots=document.querySelectorAll('svg.plot');
  document.body.setAttribute('data-latlab-ready', String(plots.length));
  plots.forEach(function(p){p.addEventListener('click',function(){p.parentNode.classList.toggle('wide');});});
})();
";

/// The complete report page.
pub fn render(entries: &[Entry], title: &str) -> String {
    render_with_intro(entries, title, &[])
}

/// The complete report page with paragraphs of plain text (escaped here)
/// before the results, e.g. what a scenario reproduces and where the
/// paper's own figures are.
pub fn render_with_intro(entries: &[Entry], title: &str, intro: &[String]) -> String {
    render_with_opening(entries, title, &Opening::paragraphs(intro))
}

/// What a report opens with before the results: a table (e.g. `scenario
/// characterize`'s requirement classes met or missed, as the terminal shows
/// them), then paragraphs of plain text (escaped when rendered).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Opening {
    /// The heading of the opening section (none: no heading).
    pub heading: Option<String>,
    /// The table's column headers (empty: no table).
    pub columns: Vec<String>,
    /// The table's rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// Paragraphs after the table.
    pub paragraphs: Vec<String>,
}

/// One cell of an [`Opening`]'s table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Plain text.
    Text(String),
    /// A requirement met (`true`) or missed, shown as a coloured badge.
    Met(bool),
}

impl Opening {
    /// An opening of paragraphs only.
    pub fn paragraphs(paragraphs: &[String]) -> Opening {
        Opening {
            paragraphs: paragraphs.to_vec(),
            ..Opening::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.heading.is_none() && self.columns.is_empty() && self.paragraphs.is_empty()
    }

    fn render(&self, h: &mut String) {
        if self.is_empty() {
            return;
        }
        h.push_str("<section class=\"compare\" id=\"intro\">");
        if let Some(heading) = &self.heading {
            let _ = write!(h, "<h2>{}</h2>", escape(heading));
        }
        if !self.columns.is_empty() {
            h.push_str("<table class=\"opening\"><tr>");
            for (i, column) in self.columns.iter().enumerate() {
                let class = if i == 0 { " class=\"l\"" } else { "" };
                let _ = write!(h, "<th{class}>{}</th>", escape(column));
            }
            h.push_str("</tr>\n");
            for row in &self.rows {
                h.push_str("<tr>");
                for (i, cell) in row.iter().enumerate() {
                    // The first column names the row; a last one of text may be long.
                    let class = match (i, cell) {
                        (0, _) => " class=\"l\"",
                        (i, Cell::Text(_)) if i + 1 == row.len() => " class=\"l wrap\"",
                        _ => "",
                    };
                    match cell {
                        Cell::Text(text) => {
                            let _ = write!(h, "<td{class}>{}</td>", escape(text));
                        }
                        Cell::Met(true) => {
                            let _ =
                                write!(h, "<td{class}><span class=\"badge pass\">met</span></td>");
                        }
                        Cell::Met(false) => {
                            let _ = write!(
                                h,
                                "<td{class}><span class=\"badge fail\">MISSED</span></td>"
                            );
                        }
                    }
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
        for paragraph in &self.paragraphs {
            let _ = write!(h, "<p>{}</p>", escape(paragraph));
        }
        h.push_str("</section>\n");
    }
}

/// The complete report page, opening with `opening` before the results.
pub fn render_with_opening(entries: &[Entry], title: &str, opening: &Opening) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}figure.wide{{grid-column:1/-1}}</style>\n</head>\n<body>\n",
        escape(title)
    );
    let _ = writeln!(
        h,
        "<header><h1>{}</h1><p>{} result{}: {}</p></header>\n<main>",
        escape(title),
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
        entries
            .iter()
            .map(|e| escape(&e.label))
            .collect::<Vec<_>>()
            .join(" · ")
    );
    opening.render(&mut h);
    comparison::render(&mut h, entries);
    for (i, entry) in entries.iter().enumerate() {
        if let Some(section) = section_of(&entry.document) {
            section.html_section(&mut h, &section_id(&entry.document, i), &entry.label);
            continue;
        }
        if let Document::Other { schema, value } = &entry.document {
            let _ = writeln!(
                h,
                "<section class=\"other\" id=\"doc{}\"><h2>{}</h2>\
                 <p>A <code>{}</code> result: this report does not draw this kind yet; its JSON follows.</p>\
                 <details open><summary>JSON</summary><pre>{}</pre></details></section>",
                i + 1,
                escape(&entry.label),
                escape(schema),
                escape(&serde_json::to_string_pretty(value).unwrap_or_default())
            );
        }
    }
    let _ = writeln!(
        h,
        "<footer>Written by latlab {}. Self-contained: no network, no external files. \
         Click a plot to widen it.</footer>\n</main>\n<script>{SCRIPT}</script>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    h
}

/// The section renderer of a document, for every kind but an unknown one.
fn section_of(document: &Document) -> Option<&dyn HtmlSection> {
    match document {
        Document::Run(d) => Some(d.as_ref()),
        Document::Respond(d) => Some(d.as_ref()),
        Document::Lockbench(d) => Some(d.as_ref()),
        Document::Simulation(d) => Some(d.as_ref()),
        Document::Explain(d) => Some(d.as_ref()),
        Document::Load(d) => Some(d.as_ref()),
        Document::Watch(d) => Some(d.as_ref()),
        Document::Peer(d) => Some(d.as_ref()),
        Document::Other { .. } => None,
    }
}

/// The id of entry `index`'s section: `run1` for a run, `doc2` otherwise.
fn section_id(document: &Document, index: usize) -> String {
    match document {
        Document::Run(_) => format!("run{}", index + 1),
        _ => format!("doc{}", index + 1),
    }
}

impl HtmlSection for RunDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        render_run(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        run_plots(id, self)
    }
}

impl HtmlSection for latlab_document::RespondResult {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        respond::render(h, id, label, self);
        figures(h, &respond::plots(id, self));
        h.push_str("</section>\n");
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        respond::plots(id, self)
    }
}

impl HtmlSection for latlab_document::BenchReport {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        lockbench::render(h, id, label, self, figures);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        lockbench::throughput_plot(&format!("{id}-throughput"), self)
            .into_iter()
            .collect()
    }
}

impl HtmlSection for latlab_document::SimReport {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        simulation::render(h, id, label, self);
    }

    fn html_plots(&self, _id: &str) -> Vec<Plot> {
        Vec::new()
    }
}

impl HtmlSection for latlab_document::ExplainDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        let _ = writeln!(
            h,
            "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Trace <code>{}</code> ({}).</p>",
            escape(label),
            escape(&self.report.trace),
            escape(&self.report.format)
        );
        render_explain(h, &self.report);
        h.push_str("</section>\n");
    }

    fn html_plots(&self, _id: &str) -> Vec<Plot> {
        Vec::new()
    }
}

impl HtmlSection for latlab_document::LoadDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        let _ = writeln!(
            h,
            "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Background load alone \
             (<code>latlab load</code>) for {:.1} s.</p>",
            escape(label),
            self.report.duration_s
        );
        render_load(h, &self.report, &load_name_of(&self.report));
        figures(h, &self.html_plots(id));
        h.push_str("</section>\n");
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        plots::load_plot(&format!("{id}-load"), &self.report)
            .into_iter()
            .collect()
    }
}

impl HtmlSection for PeerDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        peer::section(h, id, label, self);
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        peer::peer_plots(id, self)
    }
}

impl HtmlSection for latlab_document::WatchDocument {
    fn html_section(&self, h: &mut String, id: &str, label: &str) {
        crate::watch::section(h, id, label, self);
        figures(h, &self.html_plots(id));
        h.push_str("</section>\n");
    }

    fn html_plots(&self, id: &str) -> Vec<Plot> {
        crate::watch::plots(id, self)
    }
}

fn figures(h: &mut String, plots: &[Plot]) {
    h.push_str("<div class=\"plots\">\n");
    for plot in plots {
        let _ = write!(
            h,
            "<figure id=\"{}\">\n{}</figure>\n",
            plot.id,
            plot.to_svg()
        );
    }
    h.push_str("</div>\n");
}

fn verdict_badge(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "<span class=\"badge pass\">PASS</span>",
        Verdict::Fail => "<span class=\"badge fail\">FAIL</span>",
        Verdict::None => "<span class=\"badge none\">no requirement</span>",
        Verdict::Suspect => "<span class=\"badge fail\">SUSPECT: early wake-ups</span>",
    }
}

/// Relative change in percent, signed, or `-` when the baseline is zero.
fn change(base: f64, value: f64) -> Option<f64> {
    (base > 0.0).then(|| (value - base) / base * 100.0)
}

/// A delta cell; `lower_is_better` decides the colour.
fn delta_cell(base: f64, value: f64, lower_is_better: bool) -> String {
    match change(base, value) {
        None => "<td>–</td>".into(),
        Some(pct) => {
            let class = if pct.abs() < 5.0 {
                ""
            } else if (pct < 0.0) == lower_is_better {
                " class=\"better\""
            } else {
                " class=\"worse\""
            };
            format!("<td{class}>{pct:+.1} %</td>")
        }
    }
}

/// A rate with an SI prefix: `210 Mops/s`, `285 MB/s` (bytes as B).
pub fn rate(per_second: f64, unit: &str) -> String {
    let unit = match unit {
        "bytes" => "B",
        other => other,
    };
    let (v, prefix) = if per_second >= 1e9 {
        (per_second / 1e9, "G")
    } else if per_second >= 1e6 {
        (per_second / 1e6, "M")
    } else if per_second >= 1e3 {
        (per_second / 1e3, "k")
    } else {
        (per_second, "")
    };
    if unit == "CPUs busy" {
        return format!("{per_second:.2} CPUs busy");
    }
    format!("{} {prefix}{unit}/s", svg::short_number(v))
}

fn summary_row(h: &mut String, name: &str, cycles: u64, missed: u64, s: &Summary) {
    let _ = writeln!(
        h,
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        escape(name),
        cycles,
        format_ns(s.min),
        format_ns(s.mean.round() as u64),
        format_ns(s.p50),
        format_ns(s.p99),
        format_ns(s.p99_9),
        format_ns(s.p99_99),
        format_ns(s.max),
        missed
    );
}

/// The `latlab run --explain` results: what the latency of the late
/// windows was made of (bars), and the causes ranked with their advice.
fn render_explain(h: &mut String, explain: &Explanation) {
    let _ = writeln!(
        h,
        "<h3>Why wake-ups were late (latlab explain)</h3><p>{} late of {} periods \
         (late: over {}).</p>",
        explain.late,
        explain.periods,
        format_ns(explain.threshold_ns)
    );
    h.push_str("<table class=\"explain\"><tr><th class=\"l\">latency of late windows</th><th>share</th><th class=\"l\"></th></tr>\n");
    for c in &explain.categories {
        let share = c.share * 100.0;
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{share:.1} %</td><td class=\"l\">\
             <div class=\"bar\" style=\"width:{:.1}px\"></div></td></tr>",
            escape(&c.category),
            share * 3.0
        );
    }
    h.push_str("</table>\n");
    h.push_str("<ol class=\"causes\">\n");
    for c in explain.causes.iter().take(10) {
        let _ = writeln!(
            h,
            "<li><b>{}</b><br>in {} late and {} normal windows; {} in late windows \
             ({:.0} % of their latency){}<br><i>{}</i></li>",
            escape(&c.description),
            c.late_windows,
            c.normal_windows,
            format_ns(c.late_ns),
            c.share * 100.0,
            pid_line(c),
            escape(&c.recommendation)
        );
    }
    h.push_str("</ol>\n");
}

/// For a cause made of several processes of one command (each `dd` of a disk
/// load): `<br>N pids, most first: pid late, ...` (the five with the most late
/// latency); empty for one pid.
fn pid_line(cause: &CauseRow) -> String {
    let pids = &cause.pids;
    if pids.len() <= 1 {
        return String::new();
    }
    let top: Vec<String> = pids
        .iter()
        .take(5)
        .map(|p| format!("{} {}", p.pid, format_ns(p.late_ns)))
        .collect();
    let more = if pids.len() > 5 { ", ..." } else { "" };
    format!(
        "<br>{} pids, most first: {}{more}",
        pids.len(),
        top.join(", ")
    )
}

/// The load's name for a report of `latlab load` alone.
fn load_name_of(load: &latlab_load::LoadReport) -> String {
    latlab_document::run::load_name(Some(load))
}

/// The table of a background load's throughput and its warnings.
fn render_load(h: &mut String, load: &latlab_load::LoadReport, name: &str) {
    let (kinds, _) = load_kinds(load);
    let _ = writeln!(
        h,
        "<h3>Background load: {}</h3><table class=\"load\"><tr><th class=\"l\">kind</th>\
         <th>workers</th><th>throughput</th></tr>",
        escape(name)
    );
    for k in &kinds {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&k.kind),
            k.workers,
            escape(&rate(k.per_second, &k.unit))
        );
    }
    h.push_str("</table>\n");
    if !load.warnings.is_empty() {
        h.push_str("<ul class=\"warn\">");
        for w in &load.warnings {
            let _ = write!(h, "<li>{}</li>", escape(w));
        }
        h.push_str("</ul>\n");
    }
}

fn render_run(h: &mut String, id: &str, label: &str, run: &RunDocument) {
    let s = &run.settings;
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{} {}</h2>\
         <p>Started {} · {:.1} s measured{} · {} timer, {} period, {}, CPUs {} · {}</p>",
        escape(label),
        verdict_badge(run.verdict),
        escape(run.started_at.as_deref().unwrap_or_default()),
        run.elapsed_s,
        if run.interrupted {
            " (interrupted)"
        } else {
            ""
        },
        s.timer,
        format_ns(s.interval_ns),
        escape(&crate::table::scheduling(s)),
        s.cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        escape(&load_name(run))
    );
    if !run.requirements.is_empty() {
        h.push_str("<ul class=\"req\">");
        for outcome in &run.requirements {
            let _ = write!(
                h,
                "<li>{} {}{}</li>",
                if outcome.passed { "✔" } else { "✘" },
                escape(&requirement_text(&outcome.requirement)),
                if outcome.details.is_empty() {
                    String::new()
                } else {
                    format!(": {}", escape(&outcome.details.join("; ")))
                }
            );
        }
        h.push_str("</ul>\n");
    }
    if !run.warnings.is_empty() {
        h.push_str("<ul class=\"warn\">");
        for w in &run.warnings {
            let _ = write!(h, "<li>{}</li>", escape(w));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<h3>Wake-up latency</h3><table class=\"summary\"><tr><th class=\"l\">CPU</th><th>samples</th>\
         <th>min</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th>\
         <th>missed periods</th></tr>\n",
    );
    for t in &run.threads {
        summary_row(
            h,
            &format!("CPU{}", t.cpu),
            t.cycles,
            t.missed_periods,
            &t.latency,
        );
    }
    if run.threads.len() > 1 {
        summary_row(
            h,
            "all",
            run.overall.cycles,
            run.overall.missed_periods,
            &run.overall.latency,
        );
    }
    h.push_str("</table>\n");
    render_split(h, run);
    for t in run.threads.iter().filter(|t| t.early_wakeups > 0) {
        let _ = writeln!(
            h,
            "<p class=\"warn\">Early wake-ups: {} on CPU{}, up to {} before the intended time. \
             That cannot happen (a latlab bug or a clock problem), so this measurement is suspect; \
             they are not in the figures above.</p>",
            t.early_wakeups,
            t.cpu,
            format_ns(t.max_early_ns)
        );
    }
    if let Some(worst) = run.overall.worst.first() {
        let _ = writeln!(
            h,
            "<p>Worst sample: {} on CPU{} at {:.3} s (cycle {}).</p>",
            format_ns(worst.latency_ns),
            worst.cpu,
            worst.offset_s,
            worst.cycle
        );
    }
    figures(h, &run_plots(id, run));
    if let Some(load) = &run.load {
        render_load(h, load, &run.load_name());
    }
    if let Some(explain) = &run.explain {
        render_explain(h, explain);
    }
    render_system(h, run);
    if let Some(trace) = &run.trace {
        let _ = writeln!(
            h,
            "<details><summary>Kernel trace recorded alongside</summary><pre>{}</pre></details>",
            // Through a JSON value, so the keys stay in the order earlier
            // versions showed them (alphabetical).
            escape(
                &serde_json::to_value(trace)
                    .and_then(|v| serde_json::to_string_pretty(&v))
                    .unwrap_or_default()
            )
        );
    }
    h.push_str("</section>\n");
}

/// The latency split at the timer interrupt (`latlab run --split`), if the
/// run has one: per thread and overall, p50/p99/max of each part.
fn render_split(h: &mut String, run: &RunDocument) {
    use latlab_measure::result::LatencySplit;
    let Some(overall) = &run.overall.split else {
        return;
    };
    h.push_str(
        "<h3>Latency split at the timer interrupt (measured in the kernel)</h3>\
         <table class=\"summary\"><tr><th class=\"l\" rowspan=\"2\">CPU</th>\
         <th rowspan=\"2\">timer wake-ups</th><th colspan=\"3\">interrupt latency</th>\
         <th colspan=\"3\">preemption latency</th><th colspan=\"3\">thread latency</th></tr>\
         <tr><th>p50</th><th>p99</th><th>max</th><th>p50</th><th>p99</th><th>max</th>\
         <th>p50</th><th>p99</th><th>max</th></tr>\n",
    );
    let row = |h: &mut String, label: &str, split: &LatencySplit| {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            escape(label),
            split.timer_wakeups
        );
        for part in [
            &split.interrupt_latency,
            &split.preemption_latency,
            &split.thread_latency,
        ] {
            let l = &part.summary;
            let _ = write!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td>",
                format_ns(l.p50),
                format_ns(l.p99),
                format_ns(l.max)
            );
        }
        h.push_str("</tr>\n");
    };
    for t in &run.threads {
        if let Some(split) = &t.split {
            row(h, &format!("CPU{}", t.cpu), split);
        }
    }
    if run.threads.len() > 1 {
        row(h, "all", overall);
    }
    let _ = writeln!(
        h,
        "</table>\n<p>{}.</p>",
        escape(&crate::table::SPLIT_LEGEND.join("; "))
    );
}

fn requirement_text(r: &latlab_measure::requirements::Requirement) -> String {
    use latlab_measure::requirements::Requirement;
    match r {
        Requirement::MaxLatency { limit_ns } => format!("max latency ≤ {}", format_ns(*limit_ns)),
        Requirement::Percentile {
            percentile,
            limit_ns,
        } => format!("p{percentile} ≤ {}", format_ns(*limit_ns)),
        Requirement::PeriodTolerance {
            tolerance,
            min_share,
        } => format!(
            "{} % of periods within ±{} %",
            svg::short_number(min_share * 100.0),
            svg::short_number(tolerance * 100.0)
        ),
    }
}

fn render_system(h: &mut String, run: &RunDocument) {
    let sys = &run.system;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let s = &run.settings;
    let rows: Vec<(&str, String)> = vec![
        ("host", sys.hostname.clone()),
        (
            "kernel",
            format!("{} {}", sys.kernel_release, sys.kernel_version),
        ),
        ("machine", sys.machine.clone()),
        ("CPU model", opt(&sys.cpu_model)),
        ("online CPUs", sys.online_cpus.to_string()),
        (
            "preemption",
            match &sys.preemption_source {
                Some(src) => format!("{} ({src})", opt(&sys.preemption_model)),
                None => opt(&sys.preemption_model),
            },
        ),
        ("HZ", sys.hz.map_or("unknown".into(), |v| v.to_string())),
        (
            "high-resolution timers",
            if sys.high_res_timers { "yes" } else { "no" }.into(),
        ),
        ("clocksource", opt(&sys.clocksource)),
        (
            "virtualization",
            sys.virtualization
                .clone()
                .unwrap_or_else(|| "none (bare metal)".into()),
        ),
        (
            "isolcpus / nohz_full",
            format!(
                "{} / {}",
                sys.isolcpus.as_deref().unwrap_or("none"),
                sys.nohz_full.as_deref().unwrap_or("none")
            ),
        ),
        (
            "cpufreq governors",
            if sys.cpufreq_governors.is_empty() {
                "none".into()
            } else {
                sys.cpufreq_governors.join(", ")
            },
        ),
        (
            "idle states",
            if sys.idle_states.is_empty() {
                "none".into()
            } else {
                sys.idle_states.join(", ")
            },
        ),
        (
            "RT throttling",
            match (sys.rt_runtime_us, sys.rt_period_us) {
                (Some(-1), _) => "off".into(),
                (Some(r), Some(p)) => format!("{r} µs per {p} µs"),
                _ => "unknown".into(),
            },
        ),
        (
            "mlockall / cpu_dma_latency",
            format!(
                "{} / {}",
                if s.mlocked { "yes" } else { "no" },
                s.cpu_dma_latency_us
                    .map_or("not held".into(), |v| format!("{v} µs"))
            ),
        ),
        ("command", run.command_line.join(" ")),
        ("latlab", run.latlab_version.clone().unwrap_or_default()),
    ];
    h.push_str("<details class=\"system\" open><summary><b>System</b></summary><dl class=\"sys\">");
    for (k, v) in rows {
        let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    h.push_str("</dl></details>\n");
}

#[cfg(test)]
mod tests;
