//! `latlab report`: results to one self-contained HTML file (and, with
//! `--png`, each plot as SVG and PNG). A result is latlab's JSON or a peer
//! tool's file (cyclictest's `-h` text, rt-tests' `--json`, rtla hist
//! output), read by [`read_document`], which `history --add` and `push`
//! use too.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use latlab_report::html::{self, Document, Entry};
use latlab_report::png;

/// Arguments of `latlab report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Result files: latlab's (`result.json`, or the
    /// `latlab-results/<timestamp>` directory holding one), or a peer
    /// tool's: cyclictest's -h histogram output, an rt-tests --json file
    /// (cyclictest, oslat, ...), rtla timerlat/osnoise hist output. Several
    /// are compared; the first is the baseline.
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where and how a report is written (shared with `latlab compare`).
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Names of the results, in order (default: what differs between them,
    /// e.g. kernel or load).
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Title of the page.
    #[arg(long, default_value = "latlab report")]
    pub title: String,
    /// Also write every plot as DIR/<plot>.svg and DIR/<plot>.png (the PNGs
    /// are drawn by a headless Chromium, at twice the size for print).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

/// Reads the results and writes the report.
pub fn execute(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let documents = args
        .results
        .iter()
        .map(|path| read_document(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    write_report(documents, &args.output, &[])?;
    Ok(ExitCode::SUCCESS)
}

/// Reads one result file (or the `result.json` in a directory): latlab's
/// JSON or a peer tool's file, found by its content. Anything else is an
/// error that names what latlab reads; a damaged or cut file one with the
/// line and byte.
pub fn read_document(path: &Path) -> anyhow::Result<Document> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).with_context(|| {
        format!(
            "reading {} (give a result.json written by latlab, or its directory, or a \
             cyclictest, rt-tests or rtla result file)",
            file.display()
        )
    })?;
    Document::read(&bytes).with_context(|| format!("{}", file.display()))
}

/// A result file as the JSON document a store keeps: latlab's as it is, a
/// peer tool's as its `latlab.peer` document ([`read_document`]).
pub fn read_result_value(path: &Path) -> anyhow::Result<serde_json::Value> {
    let document = read_document(path)?;
    document
        .to_value()
        .with_context(|| format!("{}: writing it as JSON", path.display()))
}

/// Labels the documents, renders the page (with `intro` paragraphs first)
/// and writes it (and the plots).
pub fn write_report(
    documents: Vec<Document>,
    out: &OutputArgs,
    intro: &[String],
) -> anyhow::Result<()> {
    write_report_opening(documents, out, &html::Opening::paragraphs(intro))
}

/// [`write_report`], the page opening with `opening` (a table, then
/// paragraphs).
pub fn write_report_opening(
    documents: Vec<Document>,
    out: &OutputArgs,
    opening: &html::Opening,
) -> anyhow::Result<()> {
    if !out.labels.is_empty() && out.labels.len() != documents.len() {
        bail!(
            "{} --label given for {} results: give one per result, in order, or none",
            out.labels.len(),
            documents.len()
        );
    }
    let labels = if out.labels.is_empty() {
        html::auto_labels(&documents)
    } else {
        out.labels.clone()
    };
    let entries: Vec<Entry> = documents
        .into_iter()
        .zip(labels)
        .map(|(document, label)| Entry { label, document })
        .collect();
    // Check the PNG tool before writing anything.
    let browser = match &out.png {
        Some(_) => Some(png::find_chromium().context(
            "--png draws the plots with a headless Chromium, and none was found: \
             install it (apt-get install chromium) or set LATLAB_CHROMIUM to its path",
        )?),
        None => None,
    };
    let page = html::render_with_opening(&entries, &out.title, opening);
    std::fs::write(&out.output, page)
        .with_context(|| format!("writing the report to {}", out.output.display()))?;
    eprintln!("report written to {}", out.output.display());
    if let (Some(dir), Some(browser)) = (&out.png, browser) {
        let plots = html::plots(&entries);
        png::write_plots(&plots, dir, &browser)?;
        eprintln!(
            "{} plots written to {} (.svg and .png)",
            plots.len(),
            dir.canonicalize().unwrap_or_else(|_| dir.clone()).display()
        );
    }
    Ok(())
}
