//! One small trait per output format, implemented for the document kinds
//! where that format makes sense:
//!
//! | format | trait | kinds |
//! |---|---|---|
//! | terminal text | [`TerminalText`] | every kind (a peer tool's result too) |
//! | cyclictest `-h` text | [`CyclictestText`] | run, respond |
//! | rt-tests `--json` | [`RtTestsJson`] | run |
//! | HTML | [`HtmlSection`] | every kind, a peer tool's result too (a page of several: [`crate::html::render`]) |
//! | JUnit XML | [`JunitXml`] | run, respond, lockbench |
//! | LAVA `lava-test-case` lines | [`LavaTestCases`] | run, respond, lockbench |

use latlab_document::{
    BenchReport, Document, ExplainDocument, LoadDocument, RespondResult, RunDocument, SimReport,
};
use latlab_measure::result::RunResult;

use crate::html::svg::Plot;

/// What a command prints at its end: the summary table or text.
pub trait TerminalText {
    /// The text, ending in a newline.
    fn terminal_text(&self) -> String;
}

/// cyclictest's `-h` histogram text, for tools that plot it.
pub trait CyclictestText {
    /// The histogram text.
    fn cyclictest_text(&self) -> String;
}

/// rt-tests' `--json` document.
pub trait RtTestsJson {
    /// The JSON text; `start` and `end` are RFC 2822 times
    /// ([`crate::rt_tests::rfc2822`]), `exit_code` the command's.
    fn rt_tests_json(&self, start: &str, end: &str, exit_code: i32) -> String;
}

/// A document's section of the HTML report.
pub trait HtmlSection {
    /// Appends the section (`<section id="{id}">...</section>`, plots
    /// included) to `h`; `label` is its heading.
    fn html_section(&self, h: &mut String, id: &str, label: &str);
    /// The section's plots, with ids starting with `id`.
    fn html_plots(&self, id: &str) -> Vec<Plot>;
}

/// JUnit XML, one test case per requirement ([`crate::farm`]).
pub trait JunitXml {
    /// The XML file's text.
    fn junit_xml(&self) -> String;
}

/// LAVA's `lava-test-case` lines, one per requirement ([`crate::farm`]).
pub trait LavaTestCases {
    /// The lines, each ending in a newline.
    fn lava_test_cases(&self) -> String;
}

impl JunitXml for RunDocument {
    fn junit_xml(&self) -> String {
        crate::farm::junit_xml(&crate::farm::run_suite(self))
    }
}

impl JunitXml for RespondResult {
    fn junit_xml(&self) -> String {
        crate::farm::junit_xml(&crate::farm::respond_suite(self))
    }
}

impl JunitXml for BenchReport {
    fn junit_xml(&self) -> String {
        crate::farm::junit_xml(&crate::farm::lockbench_suite(self))
    }
}

impl LavaTestCases for RunDocument {
    fn lava_test_cases(&self) -> String {
        crate::farm::lava_lines(&crate::farm::run_suite(self))
    }
}

impl LavaTestCases for RespondResult {
    fn lava_test_cases(&self) -> String {
        crate::farm::lava_lines(&crate::farm::respond_suite(self))
    }
}

impl LavaTestCases for BenchReport {
    fn lava_test_cases(&self) -> String {
        crate::farm::lava_lines(&crate::farm::lockbench_suite(self))
    }
}

/// The background load section under a summary table (empty without a load).
fn background_load(load: Option<&latlab_load::LoadReport>) -> String {
    load.map(|load| {
        format!(
            "\nBackground load ({})\n{}",
            load.name(),
            crate::load::table(load)
        )
    })
    .unwrap_or_default()
}

impl TerminalText for RunDocument {
    fn terminal_text(&self) -> String {
        let mut out = crate::table::summary_table(&self.result);
        out.push_str(&background_load(self.load.as_ref()));
        if let Some(explain) = &self.explain {
            out.push('\n');
            out.push_str(&crate::explain::text(explain));
        }
        if let Some(agreement) = &self.trace_agreement {
            out.push('\n');
            out.push_str(&crate::explain::agreement_text(agreement));
        }
        out
    }
}

impl TerminalText for RespondResult {
    fn terminal_text(&self) -> String {
        let mut out = crate::respond::summary_table(self);
        out.push_str(&background_load(self.load.as_ref()));
        out
    }
}

impl TerminalText for BenchReport {
    fn terminal_text(&self) -> String {
        let mut out = crate::lockbench::table(&self.config, &self.results);
        out.push_str(&background_load(self.load.as_ref()));
        out
    }
}

impl TerminalText for SimReport {
    fn terminal_text(&self) -> String {
        crate::simulation::table(&self.comparison)
    }
}

impl TerminalText for ExplainDocument {
    fn terminal_text(&self) -> String {
        crate::explain::text(&self.report)
    }
}

impl TerminalText for LoadDocument {
    fn terminal_text(&self) -> String {
        crate::load::table(&self.report)
    }
}

impl TerminalText for latlab_document::WatchDocument {
    fn terminal_text(&self) -> String {
        crate::watch::text(self)
    }
}

impl TerminalText for latlab_document::PeerDocument {
    fn terminal_text(&self) -> String {
        crate::peer::text(self)
    }
}

impl TerminalText for Document {
    /// The kind's text; a kind latlab does not know, as pretty JSON.
    fn terminal_text(&self) -> String {
        match self {
            Document::Run(d) => d.terminal_text(),
            Document::Respond(d) => d.terminal_text(),
            Document::Lockbench(d) => d.terminal_text(),
            Document::Simulation(d) => d.terminal_text(),
            Document::Explain(d) => d.terminal_text(),
            Document::Load(d) => d.terminal_text(),
            Document::Watch(d) => d.terminal_text(),
            Document::Peer(d) => d.terminal_text(),
            Document::Other { value, .. } => {
                serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
            }
        }
    }
}

impl CyclictestText for RunResult {
    fn cyclictest_text(&self) -> String {
        crate::cyclictest::histogram_text(self)
    }
}

impl CyclictestText for RunDocument {
    fn cyclictest_text(&self) -> String {
        crate::cyclictest::histogram_text(&self.result)
    }
}

impl CyclictestText for RespondResult {
    /// Column 1 one-way, column 2 round-trip.
    fn cyclictest_text(&self) -> String {
        crate::respond::histogram_text(self)
    }
}

impl RtTestsJson for RunResult {
    fn rt_tests_json(&self, start: &str, end: &str, exit_code: i32) -> String {
        crate::rt_tests::rt_tests_json(self, start, end, exit_code)
    }
}

impl RtTestsJson for RunDocument {
    fn rt_tests_json(&self, start: &str, end: &str, exit_code: i32) -> String {
        crate::rt_tests::rt_tests_json(&self.result, start, end, exit_code)
    }
}
