//! The kernel trace `latlab run` records beside its measurement (`--trace`,
//! `--flight-recorder`, `--explain`): started with hooks into the
//! measurement threads, stopped, explained and compared with the samples.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use latlab_document::run::FlightRecorderStop;
use latlab_measure::engine::{self, LateHook, LateSample, MeasureConfig};
use latlab_tracefs::{Capture, CaptureOptions, CaptureReport, LateMark, LateMarks};

/// The trace a run records, resolved from its flags.
#[derive(Debug, Clone)]
pub struct TracePlan {
    /// `--trace FILE`, or for `--explain` alone a temporary file.
    pub path: Option<PathBuf>,
    /// The temporary trace of `--explain` without `--trace`, removed after.
    pub temporary_trace: Option<PathBuf>,
    /// The temporary sample log of `--explain` without `--samples` (it
    /// compares every sample with the trace), removed after.
    pub temporary_samples: Option<PathBuf>,
    /// `--trace-events`.
    pub events: Vec<String>,
    /// `--trace-buffer-kb`.
    pub buffer_kb: Option<u32>,
    /// `--flight-recorder`.
    pub flight_recorder: bool,
    /// `--explain`.
    pub explain: bool,
    /// The latency at or over which a sample is marked in the trace and
    /// counts as late, ns.
    pub threshold_ns: u64,
}

impl TracePlan {
    /// Starts the trace, if one was asked for, hooked into `measure`.
    pub fn start(&self, measure: &mut MeasureConfig) -> anyhow::Result<Option<TraceSession>> {
        match &self.path {
            Some(path) => TraceSession::start(self, path, measure).map(Some),
            None => Ok(None),
        }
    }

    /// With `--explain`: the KTAS analysis of the trace `report` wrote
    /// (the measurement threads `tids`) and its agreement with every sample
    /// of the log at `samples`; then the temporary files are removed.
    pub fn analyse(
        &self,
        report: Option<&CaptureReport>,
        tids: &[i32],
        steal_ns: &[(usize, u64)],
        samples: Option<&Path>,
        output: &engine::MeasureOutput,
    ) -> (
        Option<latlab_explain::Report>,
        Option<latlab_explain::agreement::Agreement>,
    ) {
        let explained = match (report, self.explain) {
            (Some(report), true) => explain_trace(self.threshold_ns, &report.path, tids, steal_ns),
            _ => None,
        };
        if let Some(path) = &self.temporary_trace {
            let _ = std::fs::remove_file(path);
        }
        let agreement = explained
            .as_ref()
            .and_then(|report| trace_agreement(report, samples, output));
        if let Some(path) = &self.temporary_samples {
            let _ = std::fs::remove_file(path);
        }
        (explained, agreement)
    }
}

/// A kernel trace recorded alongside the measurement.
pub struct TraceSession {
    capture: Capture,
    path: PathBuf,
    /// The late samples' marks (and the flight recorder's stop).
    marks: Arc<LateMarks>,
}

impl TraceSession {
    /// Starts the capture and hooks the measurement threads to it: a
    /// trace_marker line for every sample over the threshold and, in
    /// flight-recorder mode, a freeze at the first one, named by a marker
    /// line of its own and kept for the result.
    fn start(plan: &TracePlan, path: &Path, measure: &mut MeasureConfig) -> anyhow::Result<Self> {
        let options = CaptureOptions {
            events: plan.events.clone(),
            buffer_size_kb: plan.buffer_kb,
            flight_recorder: plan.flight_recorder,
            measured_cpus: measure.cpus.clone(),
            ..CaptureOptions::default()
        };
        let capture = Capture::start(&options).context("starting the kernel trace (--trace)")?;
        for note in capture.notes() {
            eprintln!("latlab: trace: {note}");
        }
        let marks = Arc::new(LateMarks::new(
            &capture,
            plan.threshold_ns,
            plan.flight_recorder,
        ));
        let hook_marks = Arc::clone(&marks);
        let hook: LateHook = Arc::new(move |sample: &LateSample| {
            hook_marks.mark(LateMark {
                cpu: sample.cpu,
                cycle: sample.cycle,
                intended_ns: sample.intended_ns,
                actual_ns: sample.actual_ns,
            })
        });
        measure.late_hook = Some((plan.threshold_ns, hook));
        Ok(TraceSession {
            capture,
            path: path.to_path_buf(),
            marks,
        })
    }

    /// The sample that stopped the flight recorder, if one did; `start_ns`
    /// is the measurement's first period.
    pub fn stopped_by(&self, start_ns: u64) -> Option<FlightRecorderStop> {
        self.marks.stopped_by().map(|s| FlightRecorderStop {
            cpu: s.cpu,
            cycle: s.cycle,
            latency_ns: s.actual_ns.saturating_sub(s.intended_ns),
            intended_ns: s.intended_ns,
            at_s: s.intended_ns.saturating_sub(start_ns) as f64 / 1e9,
            threshold_ns: self.marks.threshold_ns(),
        })
    }

    /// Stops the capture and writes the trace.
    pub fn stop(self) -> anyhow::Result<CaptureReport> {
        if let (Some((failed, error)), false) =
            (self.marks.failures(), self.capture.is_flight_recorder())
        {
            eprintln!(
                "latlab: warning: {failed} trace marker line(s) could not be written ({error}); the trace lacks those late samples' marks"
            );
        }
        self.capture
            .stop(&self.path)
            .with_context(|| format!("writing the trace to {}", self.path.display()))
    }
}

/// Runs the KTAS analysis on the run's own trace: its measurement threads
/// (by thread id: a latlab running beside it has threads of the same names),
/// late meaning at or over the marker threshold. A failure is a warning: the
/// measurement stands without it.
fn explain_trace(
    threshold_ns: u64,
    trace: &Path,
    tids: &[i32],
    steal_ns: &[(usize, u64)],
) -> Option<latlab_explain::Report> {
    let options = latlab_explain::Options {
        pids: tids.to_vec(),
        comms: if tids.is_empty() {
            vec!["latlab-cpu*".into()]
        } else {
            Vec::new()
        },
        threshold: latlab_explain::Threshold::Ns(threshold_ns.saturating_sub(1)),
        steal_ns: steal_ns.to_vec(),
        ..latlab_explain::Options::default()
    };
    match latlab_explain::explain_file(trace, &options) {
        Ok(report) => Some(report),
        Err(err) => {
            eprintln!("latlab: warning: --explain could not analyse the trace: {err}");
            None
        }
    }
}

/// Every sample of the run (from its sample log) matched to the trace's
/// period of the same expiry; `None` (with a warning) when the log cannot
/// be read whole.
fn trace_agreement(
    report: &latlab_explain::Report,
    samples: Option<&Path>,
    output: &engine::MeasureOutput,
) -> Option<latlab_explain::agreement::Agreement> {
    use latlab_explain::agreement::{agreement, MeasuredSample};
    if output.samples_error.is_some() {
        return None;
    }
    let records = match latlab_measure::samples::read_samples(samples?) {
        Ok(records) => records,
        Err(err) => {
            eprintln!("latlab: warning: cannot compare the samples with the trace: {err}");
            return None;
        }
    };
    let samples = MeasuredSample::from_log(&records);
    Some(agreement(&samples, &report.table1))
}
