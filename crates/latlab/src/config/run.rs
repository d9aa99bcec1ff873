//! `latlab run`'s arguments resolved into the configuration the libraries take.

use latlab_measure::engine::{self, MeasureConfig};
use latlab_measure::requirements::{self, Requirement};
use latlab_measure::result::RunSettings;
use latlab_rt::sched::{self, Policy};
use latlab_session::trace::TracePlan;

use crate::cmd::run::RunArgs;
use crate::lifecycle::MeasuringConfig;

/// A run, fully resolved.
pub struct RunConfig {
    /// The measurement (its trace hook and sample log set here too).
    pub measure: MeasureConfig,
    /// The requirements the result is checked against.
    pub requirements: Vec<Requirement>,
    /// The settings the result records (the session's part filled in later).
    pub settings: RunSettings,
    /// The flags every measuring command shares.
    pub measuring: MeasuringConfig,
    /// The kernel trace recorded beside the measurement.
    pub trace: TracePlan,
    /// `--split`.
    pub split: SplitMode,
    /// Hold /dev/cpu_dma_latency at 0.
    pub hold_dma_latency: bool,
}

/// Validates `args` into a [`RunConfig`].
pub fn resolve(args: &RunArgs) -> anyhow::Result<RunConfig> {
    let cpus = match &args.cpus {
        Some(list) => {
            let cpus = sched::parse_cpu_list(list)?;
            let usable = sched::usable_cpus();
            for &cpu in &cpus {
                super::check_usable(cpu, &usable, "--cpus")?;
            }
            cpus
        }
        None => sched::usable_cpus(),
    };
    let policy: Policy = args.policy.parse().map_err(anyhow::Error::msg)?;
    let mut requirements = args.requirement.requirements();
    let tolerance =
        requirements::with_period_tolerance(&mut requirements, args.period_tolerance.as_deref())
            .map_err(anyhow::Error::msg)?;
    let duration_ns = match (args.duration, args.loops) {
        (None, None) => Some(30_000_000_000),
        (d, _) => d,
    };
    let mut measure = MeasureConfig {
        cpus,
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
    let settings = RunSettings::requested(&measure);
    let trace = trace_plan(args);
    if let Some(path) = &trace.temporary_samples {
        measure.samples = Some(path.clone());
    }
    Ok(RunConfig {
        measure,
        requirements,
        settings,
        measuring: args.measuring.resolve(args.verbose),
        trace,
        split: args.split,
        hold_dma_latency: !args.no_dma_latency,
    })
}

/// The trace `--trace`, `--explain` and their settings ask for: `--explain`
/// without `--trace` records into a temporary file, and without `--samples`
/// logs the samples into another (both removed after).
fn trace_plan(args: &RunArgs) -> TracePlan {
    let temporary = |extension: &str| {
        std::env::temp_dir().join(format!("latlab-run-{}.{extension}", std::process::id()))
    };
    let temporary_trace = (args.explain && args.trace.is_none()).then(|| temporary("dat"));
    TracePlan {
        path: args.trace.clone().or_else(|| temporary_trace.clone()),
        temporary_trace,
        temporary_samples: (args.explain && args.samples.is_none()).then(|| temporary("samples")),
        events: args.trace_events.clone(),
        buffer_kb: args.trace_buffer_kb,
        flight_recorder: args.flight_recorder,
        explain: args.explain,
        threshold_ns: args
            .trace_threshold
            .or(args.requirement.max_latency)
            .unwrap_or(DEFAULT_TRACE_THRESHOLD),
    }
}

/// Marker threshold for --trace without --trace-threshold or --max-latency.
const DEFAULT_TRACE_THRESHOLD: u64 = 100_000;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use latlab_measure::timer::TimerKind;

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

/// Whether `latlab run` splits its latency at the timer interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SplitMode {
    /// When BPF is available; otherwise a one-line note says why not.
    Auto,
    /// Always; a run without BPF fails, naming what is missing.
    On,
    /// Never.
    Off,
}
