//! A background load (`latlab load`, and the load of a run): its
//! throughput per kind, its warnings, its throughput over time.

use std::fmt::Write;

use super::list::list;
use super::page::figures;
use super::plots::{self, load_kinds};
use super::svg::Plot;
use crate::formats::HtmlSection;
use crate::markup::escape;
use crate::units::rate;

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

/// The load's name for a report of `latlab load` alone.
fn load_name_of(load: &latlab_load::LoadReport) -> String {
    latlab_document::run::load_name(Some(load))
}

/// The table of a background load's throughput and its warnings.
pub(crate) fn render_load(h: &mut String, load: &latlab_load::LoadReport, name: &str) {
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
    list(h, "warn", &load.warnings);
}
