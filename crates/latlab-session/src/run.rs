//! `latlab run`'s document, assembled from the measurement and the
//! lifecycle, and the summary it prints.

use std::path::Path;

use latlab_document::RunDocument;
use latlab_measure::engine::MeasureOutput;
use latlab_measure::requirements::Requirement;
use latlab_measure::result::{RunContext, RunResult, RunSettings};
use latlab_report::formats::TerminalText;
use latlab_report::run_summary;

use crate::trace::TracePlan;
use crate::{Lifecycle, Verbosity};

/// The run's document: the measurement, its context and the verdict on
/// the requirements (the split, load, trace and analysis join it after).
pub fn assemble_document(
    life: &Lifecycle,
    settings: &RunSettings,
    requirements: &[Requirement],
    output: &MeasureOutput,
) -> RunDocument {
    let context = RunContext {
        envelope: latlab_document::Envelope::at(
            std::env::args().collect(),
            life.started(),
            life.system.clone(),
        )
        .with_warnings(life.warnings()),
        settings: settings.clone(),
    };
    RunDocument::new(RunResult::assemble(output, context, requirements))
}

/// Prints the summary as verbose as asked (`verbosity`), where the trace
/// and the sample log (`samples`) went; a sample log that is incomplete joins `failures`.
pub fn print_summary(
    trace: &TracePlan,
    samples: Option<&Path>,
    verbosity: Verbosity,
    result: &RunDocument,
    trace_report: Option<&latlab_tracefs::CaptureReport>,
    output: &MeasureOutput,
    failures: &mut Vec<anyhow::Error>,
) {
    print!(
        "{}",
        match verbosity {
            Verbosity::Quiet => run_summary::verdict_text(result),
            Verbosity::Normal => run_summary::short_text(result),
            Verbosity::Verbose => result.terminal_text(),
        }
    );
    if let (Some(report), None) = (trace_report, &trace.temporary_trace) {
        print!(
            "{}",
            run_summary::trace_line(report, result.flight_recorder_stop.as_ref())
        );
    }
    if verbosity == Verbosity::Verbose {
        // The short summary and --quiet say it under the verdict.
        if let Some(advice) =
            trace_report.and_then(|r| r.loss_advice("--trace-buffer-kb", "--trace-events"))
        {
            eprintln!("latlab: warning: {advice}");
        }
    }
    let logged = trace.temporary_samples.is_none();
    if let (Some(count), true) = (output.samples_written, logged) {
        println!(
            "{count} samples logged to {}{}",
            display(samples),
            if output.samples_error.is_some() {
                " (incomplete, see below)"
            } else {
                ""
            }
        );
    }
    if let (Some(e), true) = (&output.samples_error, logged) {
        failures.push(anyhow::anyhow!(
            "the sample log is incomplete ({e}): it holds the first {} samples",
            output.samples_written.unwrap_or(0)
        ));
    }
}

fn display(path: Option<&Path>) -> String {
    path.map_or_else(String::new, |p| p.display().to_string())
}
