//! The report page: its head and style, the opening, the comparison, one
//! section per result, the footer.

use std::fmt::Write;

use latlab_document::Document;

use super::comparison;
use super::entry::Entry;
use super::opening::Opening;
use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;

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
        Document::Tune(d) => Some(d.as_ref()),
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

/// Appends the plots of a section, in a grid.
pub(crate) fn figures(h: &mut String, plots: &[Plot]) {
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
