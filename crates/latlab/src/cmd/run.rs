//! `latlab run`: periodic wake-up latency and period accuracy.
//!
//! Lifecycle (as in rtla): parse arguments, resolve them into a
//! configuration, check privileges, apply the real-time environment,
//! measure with a live view, print the summary, write the outputs.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{bail, Context};

use latlab_document::run::FlightRecorderStop;
use latlab_document::RunDocument;
use latlab_measure::engine::{self, LateHook, LateSample, MeasureConfig, Progress};
use latlab_measure::requirements::{self, Requirement};
use latlab_measure::result::{RunContext, RunResult, RunSettings, Verdict};
use latlab_measure::timer::TimerKind;
use latlab_measure::units::format_ns;
use latlab_report::formats::{CyclictestText, RtTestsJson, TerminalText};
use latlab_report::{rt_tests, run_summary};
use latlab_rt::clock;
use latlab_rt::duration;
use latlab_rt::sched::{self, Policy};
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_rt::sysinfo::SystemInfo;
use latlab_tracefs::{Capture, CaptureOptions, CaptureReport};

use super::background::{BackgroundLoad, LiveUpdate, LoadFlags, LoadMonitor};
use super::measuring::{write_file, FarmFlags, OutputFiles, RequirementFlags, SaveFlags};
use super::notes::{self, Verbosity};
use super::split::{Split, SplitMode, SplitMonitor};
use super::status::{bar, count_and_eta, StatusLine};
use super::{EXIT_REQUIREMENT_FAILED, EXIT_SUSPECT};

/// Arguments of `latlab run`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 all requirements met (or none given), 1 error, \
                        2 a requirement was violated."
)]
pub struct RunArgs {
    /// CPUs to measure on, one thread each (e.g. `0`, `0-3`, `1,3`) [default: every usable CPU]
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Scheduling policy of the measurement threads.
    #[arg(long, default_value = "fifo", value_parser = ["fifo", "rr", "other"])]
    pub policy: String,
    /// Real-time priority (1-99) for fifo/rr.
    #[arg(long, default_value_t = 95, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub priority: i32,
    /// Period of the measurement threads (e.g. `1ms`, `100us`).
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = duration::period)]
    pub interval: u64,
    /// Add this much to the period of each further thread (cyclictest's -d) [default: 0, all alike]
    #[arg(long, value_name = "DURATION", value_parser = duration::latency)]
    pub interval_step: Option<u64>,
    /// How long to measure (e.g. `30s`, `10m`) [default: 30s unless --loops is given]
    #[arg(long, value_name = "DURATION", value_parser = duration::length_ns)]
    pub duration: Option<u64>,
    /// Stop after this many activations per thread.
    #[arg(long)]
    pub loops: Option<u64>,
    /// Wake-up source: clock-nanosleep, nanosleep, itimer, posix-timer, timerfd, rtc.
    #[arg(long, default_value = "clock-nanosleep")]
    pub timer: TimerKind,
    /// RTC device for --timer rtc.
    #[arg(long, default_value = "/dev/rtc0")]
    pub rtc_device: PathBuf,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run (lets CPUs enter deep idle states).
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Accepted period deviation, e.g. `5%`; giving it makes it a requirement (all periods,
    /// or `5%@99.9` for 99.9 % of them). [default: 5%, reported only]
    #[arg(long, value_name = "PERCENT[@SHARE]")]
    pub period_tolerance: Option<String>,
    /// Requirements.
    #[command(flatten)]
    pub requirement: RequirementFlags,
    /// Log every sample (16 bytes each) to FILE for offline analysis.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Also write the result JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a histogram in cyclictest's -h text format to FILE.
    #[arg(long, value_name = "FILE")]
    pub histogram_text: Option<PathBuf>,
    /// Write the result in rt-tests' JSON format to FILE.
    #[arg(long, value_name = "FILE")]
    pub rt_tests_json: Option<PathBuf>,
    /// Where the result is saved.
    #[command(flatten)]
    pub save: SaveFlags,
    #[command(flatten)]
    pub farm: FarmFlags,
    /// Measure even without real-time priority or memory locking (the result is marked).
    #[arg(long)]
    pub allow_unprivileged: bool,
    /// Print only the verdict, what makes the result questionable, where it went and errors:
    /// no live view, no notes about the machine, no tables (the result file has them all).
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every table (per CPU, the split, the periods, the load, the trace analysis'
    /// tables and worst windows) and the whole text of every note about the machine.
    #[arg(long, short)]
    pub verbose: bool,
    /// Background load.
    #[command(flatten)]
    pub load: LoadFlags,
    /// Record kernel events while measuring into this trace-cmd .dat file (as root);
    /// measurement threads mark every sample over --trace-threshold in the trace.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Samples at or over this latency get a trace_marker line (cycle, intended and
    /// actual wake-up) [default: --max-latency if given, else 100us].
    #[arg(long, value_name = "DURATION", value_parser = duration::latency)]
    pub trace_threshold: Option<u64>,
    /// Events to record with --trace (e.g. `sched`, `+syscalls`, `-kmem`) [default: latlab's
    /// latency set: sched, irq, timer, irq_vectors, nmi, workqueue, kmem page allocation on the
    /// measured CPUs].
    #[arg(long, value_name = "EVENTS", value_delimiter = ',')]
    pub trace_events: Vec<String>,
    /// With --trace: keep events only in the ring buffer and stop tracing at the first
    /// sample over --trace-threshold (like cyclictest's breaktrace); the buffer, i.e.
    /// what led up to it, is saved at the end. Costs nothing on disk until then.
    #[arg(long, requires = "trace")]
    pub flight_recorder: bool,
    /// Record kernel events while measuring (into --trace FILE, or a temporary file) and
    /// explain the late wake-ups at the end (the KTAS analysis of `latlab explain`, with
    /// --trace-threshold as the lateness threshold).
    #[arg(long)]
    pub explain: bool,
    /// Ring-buffer size per CPU in KiB for --trace.
    #[arg(long, value_name = "KB")]
    pub trace_buffer_kb: Option<u32>,
    /// Split each timer-driven wake-up's latency, measured in the kernel (BPF, as root), into
    /// interrupt latency (expiry to the timer interrupt) and preemption latency (the
    /// interrupt to the thread running): a table in the summary, `split` in the JSON. auto:
    /// when BPF is available, else a note says why not; on: fail without it; off: never.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        value_name = "WHEN",
        hide_possible_values = true
    )]
    pub split: SplitMode,
}

/// A run, fully resolved.
struct Resolved {
    measure: MeasureConfig,
    requirements: Vec<Requirement>,
    settings: RunSettings,
}

fn resolve(args: &RunArgs) -> anyhow::Result<Resolved> {
    let cpus = match &args.cpus {
        Some(list) => {
            let cpus = sched::parse_cpu_list(list)?;
            let usable = sched::usable_cpus();
            if let Some(bad) = cpus.iter().find(|c| !usable.contains(c)) {
                bail!(
                    "CPU {bad} is not usable (online and allowed CPUs: {}); see --cpus",
                    usable
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
            cpus
        }
        None => sched::usable_cpus(),
    };
    let policy: Policy = args.policy.parse().map_err(anyhow::Error::msg)?;
    let mut requirements = args.requirement.requirements();
    let mut tolerance = requirements
        .iter()
        .find_map(|r| match r {
            Requirement::PeriodTolerance { tolerance, .. } => Some(*tolerance),
            _ => None,
        })
        .unwrap_or(0.05);
    if let Some(text) = &args.period_tolerance {
        let (t, min_share) =
            requirements::parse_period_tolerance(text).map_err(anyhow::Error::msg)?;
        tolerance = t;
        requirements.retain(|r| !matches!(r, Requirement::PeriodTolerance { .. }));
        requirements.push(Requirement::PeriodTolerance {
            tolerance,
            min_share,
        });
    }
    let duration_ns = match (args.duration, args.loops) {
        (None, None) => Some(30_000_000_000),
        (d, _) => d,
    };
    let measure = MeasureConfig {
        cpus: cpus.clone(),
        interval_ns: args.interval,
        interval_step_ns: args.interval_step.unwrap_or(0),
        timer: args.timer,
        policy,
        priority: args.priority,
        duration_ns,
        loops: args.loops,
        period_tolerance: tolerance,
        rtc_device: args.rtc_device.clone(),
        samples: args.samples.clone(),
        late_hook: None,
    };
    engine::validate(&measure)?;
    let settings = RunSettings {
        cpus,
        interval_ns: measure.interval_ns,
        interval_step_ns: measure.interval_step_ns,
        timer: measure.timer,
        policy,
        priority: args.priority,
        duration_s: duration_ns.map(|d| d as f64 / 1e9),
        loops: args.loops,
        period_tolerance: tolerance,
        cpu_dma_latency_us: None,
        mlocked: false,
        unprivileged: false,
        steal_ns: Vec::new(),
    };
    Ok(Resolved {
        measure,
        requirements,
        settings,
    })
}

/// Runs the measurement.
pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut run = resolve(&args)?;
    if run.measure.timer == TimerKind::Itimer {
        // SIGALRM is process-directed: block it before any thread (trace
        // readers, loads) exists, so only the measurement thread takes it.
        latlab_measure::timer::block_signal(libc::SIGALRM);
    }
    let system = SystemInfo::gather();
    // Privileges: refused ones are errors naming the fix, unless told to go on without.
    let mut session = RtSession::enter(&SessionOptions {
        allow_unprivileged: args.allow_unprivileged,
        hold_dma_latency: !args.no_dma_latency,
        ..SessionOptions::measurement(run.measure.policy, run.measure.priority)
    })?;
    run.measure.policy = session.policy();
    run.settings.unprivileged = session.unprivileged();
    run.settings.mlocked = session.mlocked();
    run.settings.cpu_dma_latency_us = session.dma_latency_us();
    let mut warnings = system.pitfalls();
    warnings.extend_from_slice(session.warnings());
    let verbosity = Verbosity::from_flags(args.quiet, args.verbose);

    // The split's BPF side first: `--split on` without BPF fails before a
    // trace is started.
    let mut split = Split::start(args.split)?;

    // --explain without --trace records into a temporary file, removed after.
    let temporary_trace = (args.explain && args.trace.is_none())
        .then(|| std::env::temp_dir().join(format!("latlab-run-{}.dat", std::process::id())));
    // --explain compares every sample with the trace: without --samples they
    // go to a temporary log, removed after.
    let temporary_samples = (args.explain && args.samples.is_none())
        .then(|| std::env::temp_dir().join(format!("latlab-run-{}.samples", std::process::id())));
    if let Some(path) = &temporary_samples {
        run.measure.samples = Some(path.clone());
    }
    let trace_path = args.trace.clone().or_else(|| temporary_trace.clone());
    let trace = match &trace_path {
        Some(path) => Some(TraceSession::start(&args, path, &mut run.measure)?),
        None => None,
    };

    let started = clock::unix_time_s();
    session.measurement_starts();
    let mut monitor = SplitMonitor {
        inner: LoadMonitor {
            live: LiveView::new(!args.quiet && std::io::stderr().is_terminal(), &run.measure),
            load: BackgroundLoad::new(&args.load),
            // Once, when everything was accepted and set up: what the user
            // should know about this machine and session.
            notes: notes::before_measuring(
                &system.pitfall_list(),
                session.warnings(),
                verbosity,
                "--verbose: why, and the fix",
            ),
            measured_tids: Vec::new(),
        },
        split: split.as_mut(),
    };
    let measured = engine::measure(&run.measure, &mut monitor);
    monitor.inner.live.finish();
    // Stop the load and the trace before the summary, whatever happened to
    // the measurement.
    let load_report = monitor.inner.load.stop();
    let measured_tids = std::mem::take(&mut monitor.inner.measured_tids);
    let flight_recorder_stop = match (&trace, &measured) {
        (Some(trace), Ok(output)) => trace.stopped_by(output.start_ns),
        _ => None,
    };
    let trace_report = trace.map(TraceSession::stop).transpose();
    let output = measured?;
    // A load or trace that failed (a full disk under --trace) costs its own
    // part of the result, not the measurement: reported with the outputs.
    let mut failures = Vec::new();
    let load_report = load_report.unwrap_or_else(|e| {
        failures.push(e);
        None
    });
    let trace_report = trace_report.unwrap_or_else(|e| {
        failures.push(e.context("recording the kernel trace (--trace)"));
        None
    });
    run.settings.steal_ns = session.steal_ns(&run.settings.cpus);
    session.unlock_memory();

    let context = RunContext {
        envelope: latlab_document::Envelope::at(std::env::args().collect(), started, system)
            .with_warnings(warnings),
        settings: run.settings,
    };
    let mut result = RunDocument::new(RunResult::assemble(&output, context, &run.requirements));
    if let Some(split) = split {
        split.finish(&mut result.result);
    }
    if let Some(report) = &load_report {
        result.load = Some(report.clone());
    }
    if let Some(report) = &trace_report {
        result.trace = Some(report.clone());
    }
    result.flight_recorder_stop = flight_recorder_stop;
    let explained = match (&trace_report, args.explain) {
        (Some(report), true) => explain_trace(
            &args,
            &report.path,
            &measured_tids,
            &result.settings.steal_ns,
        ),
        _ => None,
    };
    if let Some(path) = &temporary_trace {
        let _ = std::fs::remove_file(path);
    }
    if let Some(report) = &explained {
        result.explain = Some(report.clone());
    }
    let agreement = explained
        .as_ref()
        .and_then(|report| trace_agreement(report, run.measure.samples.as_deref(), &output));
    if let Some(path) = &temporary_samples {
        let _ = std::fs::remove_file(path);
    }
    if let Some(agreement) = &agreement {
        result.trace_agreement = Some(agreement.clone());
    }
    let exit = match result.verdict {
        Verdict::Fail => EXIT_REQUIREMENT_FAILED,
        Verdict::Suspect => EXIT_SUSPECT,
        Verdict::Pass | Verdict::None => 0,
    };
    print!(
        "{}",
        match verbosity {
            Verbosity::Quiet => run_summary::verdict_text(&result),
            Verbosity::Normal => run_summary::short_text(&result),
            Verbosity::Verbose => result.terminal_text(),
        }
    );
    if let (Some(report), None) = (&trace_report, &temporary_trace) {
        print!(
            "{}",
            run_summary::trace_line(report, result.flight_recorder_stop.as_ref())
        );
    }
    if verbosity == Verbosity::Verbose {
        // The short summary and --quiet say it under the verdict.
        if let Some(advice) = trace_report
            .as_ref()
            .and_then(|r| r.loss_advice("--trace-buffer-kb", "--trace-events"))
        {
            eprintln!("latlab: warning: {advice}");
        }
    }
    if let (Some(count), None) = (output.samples_written, &temporary_samples) {
        println!(
            "{count} samples logged to {}{}",
            display(args.samples.as_deref()),
            if output.samples_error.is_some() {
                " (incomplete, see below)"
            } else {
                ""
            }
        );
    }
    if let (Some(e), None) = (&output.samples_error, &temporary_samples) {
        failures.push(anyhow::anyhow!(
            "the sample log is incomplete ({e}): it holds the first {} samples",
            output.samples_written.unwrap_or(0)
        ));
    }
    write_outputs(&args, &result, started, exit, failures)?;
    Ok(ExitCode::from(exit))
}

fn display(path: Option<&Path>) -> String {
    path.map_or_else(String::new, |p| p.display().to_string())
}

/// Writes every output asked for (see [`OutputFiles`]); `also_failed` are
/// failures met before (the load, the trace, the sample log), reported with
/// the others.
fn write_outputs(
    args: &RunArgs,
    result: &RunDocument,
    started: f64,
    exit: u8,
    also_failed: Vec<anyhow::Error>,
) -> anyhow::Result<()> {
    let stamp = clock::format_stamp(started);
    let mut files = OutputFiles::with_result(
        result,
        Some((&args.save, &stamp)),
        "result.json",
        args.json.as_deref(),
    )?;
    if let Some(path) = &args.histogram_text {
        files.other(write_file(path, result.cyclictest_text().as_bytes()));
    }
    if let Some(path) = &args.rt_tests_json {
        let text = result.rt_tests_json(
            &rt_tests::rfc2822(started),
            &rt_tests::rfc2822(clock::unix_time_s()),
            i32::from(exit),
        );
        files.other(write_file(path, text.as_bytes()));
    }
    for failure in also_failed {
        files.other(Err(failure));
    }
    args.farm.emit(result, &mut files)?;
    files.finish()
}

/// A kernel trace recorded alongside the measurement.
struct TraceSession {
    capture: Capture,
    path: PathBuf,
    /// Marker lines the kernel refused, and the last error number.
    marker_failures: Arc<(AtomicU64, AtomicI32)>,
    /// In flight-recorder mode, the sample that stopped the recording.
    stopped_by: Arc<OnceLock<LateSample>>,
    /// The latency at or over which a sample is marked (and stops a flight recorder), ns.
    threshold_ns: u64,
}

impl TraceSession {
    /// Starts the capture and hooks the measurement threads to it: a
    /// trace_marker line for every sample over the threshold and, in
    /// flight-recorder mode, a freeze at the first one, named by a marker
    /// line of its own and kept for the result.
    fn start(args: &RunArgs, path: &Path, measure: &mut MeasureConfig) -> anyhow::Result<Self> {
        let options = CaptureOptions {
            events: args.trace_events.clone(),
            buffer_size_kb: args.trace_buffer_kb,
            flight_recorder: args.flight_recorder,
            measured_cpus: measure.cpus.clone(),
            ..CaptureOptions::default()
        };
        let capture = Capture::start(&options).context("starting the kernel trace (--trace)")?;
        for note in capture.notes() {
            eprintln!("latlab: trace: {note}");
        }
        let threshold = trace_threshold(args);
        let marker = capture.marker();
        let freezer = args.flight_recorder.then(|| capture.freezer());
        let stopped_by = Arc::new(OnceLock::new());
        let stop = Arc::clone(&stopped_by);
        let marker_failures = Arc::new((AtomicU64::new(0), AtomicI32::new(0)));
        let failures = Arc::clone(&marker_failures);
        let hook: LateHook = Arc::new(move |sample: &LateSample| {
            // Counted, not fatal: the measurement goes on; the run reports them.
            if let Err(err) =
                marker.write_sample(sample.cycle, sample.intended_ns, sample.actual_ns)
            {
                failures.0.fetch_add(1, Ordering::Relaxed);
                failures
                    .1
                    .store(err.raw_os_error().unwrap_or(0), Ordering::Relaxed);
            }
            // The first sample over the threshold stops a flight recorder
            // (a race between two CPUs has one winner: the one set here).
            if let Some(freezer) = &freezer {
                if stop.set(*sample).is_ok() {
                    let _ = marker.write_stop(
                        sample.cpu as u64,
                        sample.cycle,
                        sample.actual_ns.saturating_sub(sample.intended_ns),
                        threshold,
                    );
                    let _ = freezer.freeze();
                }
            }
        });
        measure.late_hook = Some((threshold, hook));
        Ok(TraceSession {
            capture,
            path: path.to_path_buf(),
            marker_failures,
            stopped_by,
            threshold_ns: threshold,
        })
    }

    /// The sample that stopped the flight recorder, if one did; `start_ns`
    /// is the measurement's first period.
    fn stopped_by(&self, start_ns: u64) -> Option<FlightRecorderStop> {
        self.stopped_by.get().map(|s| FlightRecorderStop {
            cpu: s.cpu,
            cycle: s.cycle,
            latency_ns: s.actual_ns.saturating_sub(s.intended_ns),
            intended_ns: s.intended_ns,
            at_s: s.intended_ns.saturating_sub(start_ns) as f64 / 1e9,
            threshold_ns: self.threshold_ns,
        })
    }

    fn stop(self) -> anyhow::Result<CaptureReport> {
        let failed = self.marker_failures.0.load(Ordering::Relaxed);
        if failed > 0 && !self.capture.is_flight_recorder() {
            let errno = self.marker_failures.1.load(Ordering::Relaxed);
            eprintln!(
                "latlab: warning: {failed} trace marker line(s) could not be written ({}); the trace lacks those late samples' marks",
                std::io::Error::from_raw_os_error(errno)
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
    args: &RunArgs,
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
        threshold: latlab_explain::Threshold::Ns(trace_threshold(args).saturating_sub(1)),
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
    use latlab_measure::samples::{read_samples, SampleRecord};
    if output.samples_error.is_some() {
        return None;
    }
    let records = match read_samples(samples?) {
        Ok(records) => records,
        Err(err) => {
            eprintln!("latlab: warning: cannot compare the samples with the trace: {err}");
            return None;
        }
    };
    let samples: Vec<MeasuredSample> = records
        .iter()
        // An early wake-up's latency field says how early: it has no latency.
        .filter(|r| r.flags & SampleRecord::EARLY == 0)
        .map(|r| MeasuredSample {
            cpu: u32::from(r.cpu),
            intended_ns: r.intended_ns,
            latency_ns: u64::from(r.latency_ns),
            uncertain: r.flags & SampleRecord::UNCERTAIN != 0,
        })
        .collect();
    Some(agreement(&samples, &report.table1))
}

/// The latency at or over which a sample is marked in the trace and counts as late.
fn trace_threshold(args: &RunArgs) -> u64 {
    args.trace_threshold
        .or(args.requirement.max_latency)
        .unwrap_or(DEFAULT_TRACE_THRESHOLD)
}

/// Marker threshold for --trace without --trace-threshold or --max-latency.
const DEFAULT_TRACE_THRESHOLD: u64 = 100_000;

/// The progress line on a terminal: bar, elapsed/remaining, max per CPU.
struct LiveView {
    line: StatusLine,
    total_s: Option<f64>,
    loops: Option<u64>,
}

impl LiveView {
    fn new(enabled: bool, config: &MeasureConfig) -> Self {
        LiveView {
            line: StatusLine::new(enabled),
            total_s: config.duration_ns.map(|d| d as f64 / 1e9),
            loops: config.loops,
        }
    }
}

impl LiveUpdate<Progress> for LiveView {
    fn update(&mut self, progress: &Progress) {
        if !self.line.enabled() {
            return;
        }
        let done = progress.threads.iter().map(|t| t.1).min().unwrap_or(0);
        let (fraction, time) = match (self.total_s, self.loops) {
            (Some(total), _) => (
                progress.elapsed_s / total,
                format!(
                    "{:.0}/{:.0} s, {:.0} s left",
                    progress.elapsed_s,
                    total,
                    (total - progress.elapsed_s).max(0.0)
                ),
            ),
            (None, Some(loops)) => (
                done as f64 / loops as f64,
                count_and_eta(done, loops, "loops", progress.elapsed_s),
            ),
            _ => (0.0, format!("{:.0} s", progress.elapsed_s)),
        };
        let maxima: Vec<String> = progress
            .threads
            .iter()
            .take(8)
            .map(|&(cpu, _, max)| format!("CPU{cpu} max {}", format_ns(max)))
            .collect();
        let more = if progress.threads.len() > 8 {
            " ..."
        } else {
            ""
        };
        self.line.draw(&format!(
            "{} {time}  {}{more}",
            bar(fraction),
            maxima.join("  ")
        ));
    }

    fn finish(&mut self) {
        self.line.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> RunArgs {
        let mut full = vec!["latlab", "run"];
        full.extend_from_slice(args);
        match crate::cli::Cli::parse_from(full).command {
            crate::cli::Command::Run(a) => a,
            #[allow(unreachable_patterns)]
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let r = resolve(&parse(&[])).unwrap();
        assert_eq!(r.measure.interval_ns, 1_000_000);
        assert_eq!(r.measure.priority, 95);
        assert_eq!(r.measure.policy, Policy::Fifo);
        assert_eq!(r.measure.timer, TimerKind::ClockNanosleep);
        assert_eq!(r.measure.duration_ns, Some(30_000_000_000));
        assert_eq!(r.measure.cpus, sched::usable_cpus());
        assert!(r.requirements.is_empty());
    }

    #[test]
    fn profile_and_period_tolerance_resolve_to_requirements() {
        let r = resolve(&parse(&[
            "--profile",
            "moblin-ivi",
            "--period-tolerance",
            "2%@99.9",
        ]))
        .unwrap();
        assert!(r
            .requirements
            .contains(&Requirement::MaxLatency { limit_ns: 40_000 }));
        assert!(r.requirements.iter().any(|req| matches!(req,
            Requirement::PeriodTolerance { tolerance, min_share }
                if (tolerance - 0.02).abs() < 1e-12 && (min_share - 0.999).abs() < 1e-12)));
        assert_eq!(
            r.requirements
                .iter()
                .filter(|req| matches!(req, Requirement::PeriodTolerance { .. }))
                .count(),
            1,
            "--period-tolerance replaces the profile's"
        );
        assert_eq!(r.measure.period_tolerance, 0.02);
    }

    #[test]
    fn loops_alone_means_no_duration() {
        let r = resolve(&parse(&["--loops", "100"])).unwrap();
        assert_eq!((r.measure.duration_ns, r.measure.loops), (None, Some(100)));
    }

    #[test]
    fn an_interval_longer_than_the_duration_is_refused() {
        let err = resolve(&parse(&["--interval", "1000s", "--duration", "1s"]))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("1000 s (--interval) is longer than --duration 1.00 s"),
            "{err}"
        );
        assert!(resolve(&parse(&["--interval", "1s", "--duration", "1s"])).is_ok());
    }

    #[test]
    fn unusable_cpu_is_rejected_with_the_list() {
        let err = resolve(&parse(&["--cpus", "4000"]))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("CPU 4000 is not usable"), "{err}");
    }
}
