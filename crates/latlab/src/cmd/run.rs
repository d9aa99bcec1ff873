//! `latlab run`: periodic wake-up latency and period accuracy.
//!
//! Parse ([`RunArgs`]), resolve ([`crate::config::run`]), then the
//! measuring commands' lifecycle ([`crate::lifecycle`]) around
//! latlab-measure's engine, with the run's own kernel side (the split, the
//! trace: latlab-session's `split` and `trace`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use latlab_measure::engine;
use latlab_measure::result::Verdict;
use latlab_measure::timer::TimerKind;
use latlab_report::formats::RtTestsJson;
use latlab_report::rt_tests;
use latlab_rt::clock;
use latlab_rt::duration;
use latlab_rt::session::SessionOptions;

use super::{EXIT_REQUIREMENT_FAILED, EXIT_SUSPECT};
use crate::config::run::resolve;
use latlab_session::run::{assemble_document, print_summary};
use latlab_session::split::{self, SplitMonitor};

use crate::config::run::SplitMode;
use crate::lifecycle::{Lifecycle, MeasuringFlags, RequirementFlags, Verbosity};

/// Arguments of `latlab run`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 all requirements met (or none given), 1 error (a usage \
                  error included), 2 a requirement was violated, 3 the measurement is suspect \
                  (wake-ups before their intended time)."
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
    /// The result's outputs, --quiet, the background load, --allow-unprivileged.
    #[command(flatten)]
    pub measuring: MeasuringFlags,
    /// Write the result in rt-tests' JSON format to FILE.
    #[arg(long, value_name = "FILE")]
    pub rt_tests_json: Option<PathBuf>,
    /// Print every table (per CPU, the split, the periods, the load, the trace analysis'
    /// tables and worst windows) and the whole text of every note about the machine.
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,
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

/// Runs the measurement.
pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut run = resolve(&args)?;
    if run.measure.timer == TimerKind::Itimer {
        // SIGALRM is process-directed: block it before any thread (trace
        // readers, loads) exists, so only the measurement thread takes it.
        latlab_measure::timer::block_signal(libc::SIGALRM);
    }
    let mut life = Lifecycle::enter(
        SessionOptions {
            allow_unprivileged: run.measuring.allow_unprivileged,
            hold_dma_latency: run.hold_dma_latency,
            ..SessionOptions::measurement(run.measure.policy, run.measure.priority)
        },
        Vec::new(),
        run.measuring.verbosity,
        &run.measuring.load,
    )?;
    run.measure.policy = life.session.policy();
    run.settings.unprivileged = life.session.unprivileged();
    run.settings.mlocked = life.session.mlocked();
    run.settings.cpu_dma_latency_us = life.session.dma_latency_us();
    let verbosity = run.measuring.verbosity;

    // The split's BPF side first: `--split on` without BPF fails before a
    // trace is started.
    let mut split = match run.split {
        SplitMode::Off => None,
        mode => split::start(mode == SplitMode::On)?,
    };
    let trace = run.trace.start(&mut run.measure)?;

    life.begin();
    let live = latlab_session::live::RunLiveView::new(
        verbosity != Verbosity::Quiet && std::io::stderr().is_terminal(),
        &run.measure,
    );
    let mut monitor = SplitMonitor {
        inner: life.monitor(live, "--verbose: why, and the fix"),
        split: split.as_mut(),
    };
    let measured = engine::measure(&run.measure, &mut monitor);
    // Stop the load and the trace before the summary, whatever happened to
    // the measurement.
    let load_report = monitor.inner.finish();
    let measured_tids = std::mem::take(&mut monitor.inner.measured_tids);
    let flight_recorder_stop = match (&trace, &measured) {
        (Some(trace), Ok(output)) => trace.stopped_by(output.start_ns),
        _ => None,
    };
    let trace_report = trace.map(|trace| trace.stop()).transpose();
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
    run.settings.steal_ns = life.session.steal_ns(&run.settings.cpus);
    life.end();

    let mut result = assemble_document(&life, &run.settings, &run.requirements, &output);
    if let Some(split) = split {
        split::finish(split, &mut result.result);
    }
    result.load = load_report;
    result.trace = trace_report.clone();
    result.flight_recorder_stop = flight_recorder_stop;
    (result.explain, result.trace_agreement) = run.trace.analyse(
        trace_report.as_ref(),
        &measured_tids,
        &result.settings.steal_ns,
        run.measure.samples.as_deref(),
        &output,
    );
    let exit = match result.verdict {
        Verdict::Fail => EXIT_REQUIREMENT_FAILED,
        Verdict::Suspect => EXIT_SUSPECT,
        Verdict::Pass | Verdict::None => 0,
    };
    print_summary(
        &run.trace,
        run.measure.samples.as_deref(),
        verbosity,
        &result,
        trace_report.as_ref(),
        &output,
        &mut failures,
    );
    let rt_tests = args.rt_tests_json.as_ref().map(|path| {
        let text = result.rt_tests_json(
            &rt_tests::rfc2822(life.started()),
            &rt_tests::rfc2822(clock::unix_time_s()),
            i32::from(exit),
        );
        (path.clone(), text)
    });
    life.write_outputs(
        &run.measuring.outputs,
        &result,
        "result.json",
        rt_tests.into_iter().collect(),
        failures,
    )?;
    Ok(ExitCode::from(exit))
}
