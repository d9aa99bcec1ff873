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

/// The formats write the same figure the same way: each test renders one
/// result in the terminal and in HTML and compares the figure's text.
#[cfg(test)]
mod tests {
    use latlab_document::{LoadDocument, RunDocument};

    use super::{HtmlSection, TerminalText};

    /// The HTML section of a document.
    fn html(document: &dyn HtmlSection) -> String {
        let mut h = String::new();
        document.html_section(&mut h, "doc1", "label");
        h
    }

    /// The text between `before` and the next `after` in `text`.
    fn between<'a>(text: &'a str, before: &str, after: &str) -> &'a str {
        let start = text
            .find(before)
            .unwrap_or_else(|| panic!("no {before:?} in {text}"));
        let rest = &text[start + before.len()..];
        &rest[..rest
            .find(after)
            .unwrap_or_else(|| panic!("no {after:?} in {rest}"))]
    }

    /// The terminal said `1024.0 MB/s` where the HTML said `1.02 GB/s`.
    #[test]
    fn a_load_rate_reads_the_same_in_the_terminal_and_in_html() {
        let document = LoadDocument::new(
            latlab_document::Envelope::without_machine(vec!["latlab".into(), "load".into()]),
            latlab_load::fixtures::sample_report(),
        );
        let text = document.terminal_text();
        let net_row = text.lines().find(|l| l.starts_with("net ")).unwrap();
        let cells: Vec<&str> = net_row.split("  ").filter(|c| !c.is_empty()).collect();
        let terminal = cells[3].trim();
        let html = html(&document);
        let html = between(&html, "<td class=\"l\">net</td><td>1</td><td>", "</td>");
        assert_eq!(terminal, html, "{text}");
        assert_eq!(terminal, "1.02 GB/s");
    }

    /// The terminal said `1500.0 us` where the HTML said `1.50 ms`.
    #[test]
    fn a_latency_reads_the_same_in_the_terminal_and_in_html() {
        let run = RunDocument::new(crate::fixture::sample_result_with_early(2, 1_500_000));
        let text = run.terminal_text();
        let html = html(&run);
        let early = |t| between(t, "up to ", " before the intended time").to_owned();
        assert_eq!(early(&text), early(&html));
        assert_eq!(early(&text), "1.50 ms");
        let worst_terminal = between(&text, "   1. CPU1 ", "  cycle").trim().to_owned();
        assert_eq!(worst_terminal, between(&html, "Worst sample: ", " on CPU1"));
        assert_eq!(worst_terminal, "3.42 ms");
    }
}
