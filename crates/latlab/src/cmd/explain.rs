//! `latlab explain`: find the late wake-ups of a periodic timer task in a
//! kernel trace and name their causes (the KTAS analysis).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use latlab_explain::Threshold;

use crate::config::explain::{resolve, ExplainRun};

/// Arguments of `latlab explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Trace to explain: a trace-cmd .dat (e.g. from `latlab record`), ftrace
    /// text, or an LTTng CTF directory.
    pub trace: PathBuf,
    /// Analyse this task (repeatable). Default: latlab's measurement threads,
    /// else the most periodic timer task. A pid or name that matches no
    /// periodic timer task of the trace is an error listing those it has.
    #[arg(long, value_name = "PID")]
    pub pid: Vec<i32>,
    /// Analyse tasks with this name (repeatable; `name*` matches a prefix).
    #[arg(long, value_name = "NAME")]
    pub comm: Vec<String>,
    /// Late means latency above this: a duration with its unit (`100us`, `1ms`) or a
    /// percentile (`p99`).
    #[arg(long, default_value = "p99", value_name = "DURATION|pNN", value_parser = Threshold::parse)]
    pub threshold: Threshold,
    /// Normal periods to sample as the baseline.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub baseline: usize,
    /// Write the full report as JSON to this file (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write each late window's events as text into this directory.
    #[arg(long, value_name = "DIR")]
    pub dump_windows: Option<PathBuf>,
    /// A `latlab run --json` result recorded with the trace: its steal time
    /// is shown as evidence for hypervisor gaps.
    #[arg(long, value_name = "RUN.json")]
    pub run_result: Option<PathBuf>,
    /// Late windows shown in full in the report.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub max_windows: usize,
}

/// Runs `latlab explain`.
pub fn execute(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let ExplainRun {
        trace,
        options,
        json,
    } = resolve(&args)?;
    let report = latlab_explain::explain_file(&trace, &options)
        .with_context(|| format!("explaining {}", trace.display()))?;
    let to_stdout_json = json.as_deref() == Some(std::path::Path::new("-"));
    if let Some(path) = &json {
        let envelope = latlab_document::Envelope::without_machine(std::env::args().collect());
        let document = latlab_explain::ExplainDocument::new(envelope, report.clone());
        let text = serde_json::to_string_pretty(&document)?;
        if to_stdout_json {
            print(&text);
        } else {
            std::fs::write(path, text + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    if !to_stdout_json {
        print(&latlab_report::explain::text_with_next_step(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
fn print(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}
