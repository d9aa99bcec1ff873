//! The end of `latlab scenario characterize`: the answer from the two
//! steps' result documents ([`Characterization`], built and rendered by
//! latlab-report), printed and kept as `summary.txt` beside the report.

use std::path::Path;

use anyhow::Context;
use latlab_report::characterize::Characterization;
use latlab_report::formats::TerminalText;
use latlab_report::html::Document;

/// The answer, when both steps (idle, then loaded) wrote a run document.
pub fn of(documents: &[Document]) -> anyhow::Result<Option<Characterization>> {
    Ok(match documents {
        [Document::Run(idle), Document::Run(loaded)] => Some(Characterization::of(idle, loaded)?),
        _ => None,
    })
}

/// Prints the summary and writes it to `dir/summary.txt`; `report` is the
/// HTML report it points to.
pub fn print_summary(answer: &Characterization, dir: &Path, report: &Path) -> anyhow::Result<()> {
    let text = answer.terminal_text();
    print!("{text}");
    let summary = dir.join("summary.txt");
    std::fs::write(&summary, &text)
        .with_context(|| format!("writing the summary to {}", summary.display()))?;
    println!(
        "\nreport: {} (opens offline in any browser); this summary: {}",
        report.display(),
        summary.display()
    );
    Ok(())
}
