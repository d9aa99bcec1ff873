//! One small trait per output format, implemented in that format's module
//! for the document kinds where the format makes sense. The crate is laid
//! out by format: each module below renders every kind it takes, and the
//! pieces a format shares (its table layout, its CSS and SVG) stay inside it.
//!
//! | format | trait | module | kinds |
//! |---|---|---|---|
//! | terminal text | [`TerminalText`] | [`crate::text`] | every kind (a peer tool's result too) |
//! | cyclictest `-h` text | [`CyclictestText`] | [`crate::cyclictest`] | run, respond |
//! | rt-tests `--json` | [`RtTestsJson`] | [`crate::rt_tests`] | run |
//! | HTML | [`HtmlSection`] | [`crate::html`] | every kind, a peer tool's result too (a page of several: [`crate::html::render`]) |
//! | JUnit XML | [`JunitXml`] | [`crate::junit_lava`] | run, respond, lockbench |
//! | LAVA `lava-test-case` lines | [`LavaTestCases`] | [`crate::junit_lava`] | run, respond, lockbench |
//!
//! Every format writes a quantity through [`crate::units`], escapes markup
//! through [`crate::markup`] and names a verdict through [`crate::verdict`].

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

/// JUnit XML, one test case per requirement ([`crate::junit_lava`]).
pub trait JunitXml {
    /// The XML file's text.
    fn junit_xml(&self) -> String;
}

/// LAVA's `lava-test-case` lines, one per requirement ([`crate::junit_lava`]).
pub trait LavaTestCases {
    /// The lines, each ending in a newline.
    fn lava_test_cases(&self) -> String;
}
