//! `latlab respond`: response latency to an external event (the Moblin
//! paper's first test), emulated on any Linux machine or on real serial and
//! GPIO hardware.
//!
//! Lifecycle as `latlab run`: parse, resolve, check privileges, apply the
//! real-time environment, measure with a live view, summary, outputs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};

use latlab_measure::requirements::Requirement;
use latlab_measure::result::Verdict;
use latlab_measure::units::format_ns;
use latlab_report::formats::{CyclictestText, TerminalText};
use latlab_respond::channel::Channel;
use latlab_respond::gpio::GpioWiring;
use latlab_respond::measure::{self, Gap, Progress, RespondConfig};
use latlab_respond::result::{CheckOn, RespondContext, RespondResult, RespondSettings};
use latlab_rt::clock;
use latlab_rt::duration;
use latlab_rt::sched::{self, Policy};
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_rt::sysinfo::SystemInfo;

use super::background::{BackgroundLoad, LiveUpdate, LoadFlags, LoadMonitor};
use super::measuring::{write_file, FarmFlags, OutputFiles, RequirementFlags, SaveFlags};
use super::notes::{self, Verbosity};
use super::status::{bar, count_and_eta, StatusLine};
use super::EXIT_REQUIREMENT_FAILED;

/// Arguments of `latlab respond`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A stimulus process (the paper's measurement board) sends an event; a \
    responder process (SCHED_FIFO, pinned, mlocked) blocked on it wakes and answers on the \
    reverse channel (the paper's GPIO toggle). One-way = send to wake-up, round-trip = send to \
    answer received.\n\nExit status: 0 all requirements met (or none given), 1 error, \
    2 a requirement was violated."
)]
pub struct RespondArgs {
    /// Emulated channel: pty (raw pseudo-terminal: the kernel tty path, serial emulation),
    /// pipe, eventfd, unix, udp, signal.
    #[arg(long, default_value = "pty", conflicts_with = "serial")]
    pub channel: Channel,
    /// Real serial port(s): `TX` (loopback plug, needs --gpio for the answer) or `TX,RX`
    /// (two ports joined by a null-modem cable).
    #[arg(long, value_name = "DEV[,DEV]")]
    pub serial: Option<String>,
    /// Serial line speed.
    #[arg(long, default_value_t = 115_200)]
    pub baud: u32,
    /// Answer with a real GPIO toggle: the responder drives OUT, wired to IN, whose edge
    /// the stimulus times with the kernel's timestamp (e.g. gpiochip0:17,gpiochip0:27).
    #[arg(long, value_name = "OUT,IN")]
    pub gpio: Option<GpioWiring>,
    /// Events to send [default: 1000000, the paper's count, unless --duration is given].
    #[arg(long)]
    pub count: Option<u64>,
    /// Send events for this long instead of a count (e.g. `60s`).
    #[arg(long, value_name = "DURATION", value_parser = duration::length_ns)]
    pub duration: Option<u64>,
    /// Gap between events: fixed (`1ms`) or uniformly random (`500us..1500us`), so the event
    /// is not phase-locked to the timer tick. Use the real event rate: a short gap keeps the
    /// responder's caches warm and lowers the latency.
    #[arg(
        long,
        value_name = "DURATION[..DURATION]",
        default_value = "500us..1500us"
    )]
    pub gap: Gap,
    /// An event unanswered after this long is counted lost.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration::length_ns)]
    pub timeout: u64,
    /// Scheduling policy of the responder (the stimulus gets the same, one priority lower).
    #[arg(long, default_value = "fifo", value_parser = ["fifo", "rr", "other"])]
    pub policy: String,
    /// Real-time priority (1-99) of the responder.
    #[arg(long, default_value_t = 95, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub priority: i32,
    /// CPU of the responder [default: the last usable CPU].
    #[arg(long, value_name = "CPU")]
    pub responder_cpu: Option<usize>,
    /// CPU of the stimulus [default: the first usable CPU].
    #[arg(long, value_name = "CPU")]
    pub stimulus_cpu: Option<usize>,
    /// Do not hold /dev/cpu_dma_latency at 0 (lets CPUs enter deep idle states, as the
    /// paper's Atom did).
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Requirements (period requirements of a profile do not apply to events).
    #[command(flatten)]
    pub requirement: RequirementFlags,
    /// Which latency the requirements are checked on: round-trip (what the paper's
    /// board timed), one-way, or both.
    #[arg(long, default_value = "round-trip", value_name = "WHICH")]
    pub check_on: CheckOn,
    /// Also write the result JSON (schema latlab.respond) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a histogram in cyclictest's -h text format to FILE (column 1 one-way,
    /// column 2 round-trip).
    #[arg(long, value_name = "FILE")]
    pub histogram_text: Option<PathBuf>,
    /// Where the result is saved.
    #[command(flatten)]
    pub save: SaveFlags,
    #[command(flatten)]
    pub farm: FarmFlags,
    /// Measure even without real-time priority or memory locking (the result is marked).
    #[arg(long)]
    pub allow_unprivileged: bool,
    /// No live view.
    #[arg(long, short)]
    pub quiet: bool,
    /// Background load.
    #[command(flatten)]
    pub load: LoadFlags,
}

/// The paper's sample count.
const DEFAULT_COUNT: u64 = 1_000_000;

/// A measurement, fully resolved.
struct Resolved {
    config: RespondConfig,
    requirements: Vec<Requirement>,
    warnings: Vec<String>,
}

fn resolve(args: &RespondArgs) -> anyhow::Result<Resolved> {
    let usable = sched::usable_cpus();
    let check_cpu = |cpu: usize, flag: &str| -> anyhow::Result<usize> {
        if !usable.contains(&cpu) {
            bail!(
                "CPU {cpu} is not usable (online and allowed CPUs: {}); see {flag}",
                usable
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        Ok(cpu)
    };
    let first = *usable.first().context("no usable CPU")?;
    let last = *usable.last().context("no usable CPU")?;
    let responder_cpu = check_cpu(args.responder_cpu.unwrap_or(last), "--responder-cpu")?;
    let stimulus_cpu = match args.stimulus_cpu {
        Some(cpu) => check_cpu(cpu, "--stimulus-cpu")?,
        None if first == responder_cpu => last,
        None => first,
    };
    let mut warnings = Vec::new();
    if responder_cpu == stimulus_cpu {
        warnings.push(format!(
            "stimulus and responder share CPU {responder_cpu}: the responder preempts the \
             stimulus at each event (a separate CPU is closer to an external board)"
        ));
    }
    let channel = match &args.serial {
        Some(spec) => {
            let (tx, rx) = spec.split_once(',').unwrap_or((spec, spec));
            Channel::Serial {
                tx: PathBuf::from(tx.trim()),
                rx: PathBuf::from(rx.trim()),
                baud: args.baud,
            }
        }
        None => args.channel.clone(),
    };
    let policy: Policy = args.policy.parse().map_err(anyhow::Error::msg)?;
    let mut requirements = args.requirement.requirements();
    requirements.retain(|r| !matches!(r, Requirement::PeriodTolerance { .. }));
    let count = match (args.count, args.duration) {
        (None, None) => Some(DEFAULT_COUNT),
        (count, _) => count,
    };
    if let Some(duration) = args.duration.filter(|&d| args.gap.min_ns() > d) {
        bail!(
            "--gap {} is longer than --duration {}: the run would end before its second event; \
             shorten the gap or lengthen the duration",
            args.gap,
            format_ns(duration)
        );
    }
    Ok(Resolved {
        config: RespondConfig {
            channel,
            gpio: args.gpio.clone(),
            count,
            duration_ns: args.duration,
            gap: args.gap,
            policy,
            priority: args.priority,
            responder_cpu,
            stimulus_cpu,
            lock_memory: true,
            timeout_ns: args.timeout,
        },
        requirements,
        warnings,
    })
}

/// Runs the measurement.
pub fn execute(args: RespondArgs) -> anyhow::Result<ExitCode> {
    let mut run = resolve(&args)?;
    let system = SystemInfo::gather();
    let mut session = RtSession::enter(&SessionOptions {
        allow_unprivileged: args.allow_unprivileged,
        hold_dma_latency: !args.no_dma_latency,
        realtime_fallback: Some("responder and stimulus run SCHED_OTHER"),
        ..SessionOptions::measurement(run.config.policy, run.config.priority)
    })?;
    run.config.policy = session.policy();
    run.config.lock_memory = session.mlocked();
    let mut warnings = system.pitfalls();
    let mut setup = std::mem::take(&mut run.warnings);
    setup.extend_from_slice(session.warnings());
    warnings.extend_from_slice(&setup);

    let started = clock::unix_time_s();
    let mut monitor = LoadMonitor {
        live: LiveView {
            line: StatusLine::new(!args.quiet && std::io::stderr().is_terminal()),
            count: run.config.count,
        },
        load: BackgroundLoad::new(&args.load),
        notes: notes::before_measuring(
            &system.pitfall_list(),
            &setup,
            Verbosity::from_flags(args.quiet, false),
            "the result's warnings: why, and the fix",
        ),
        measured_tids: Vec::new(),
    };
    session.measurement_starts();
    let measured = measure::measure(&run.config, &mut monitor);
    let steal_ns = session.steal_ns(&[run.config.stimulus_cpu, run.config.responder_cpu]);
    monitor.live.finish();
    let load_report = monitor.load.stop();
    let output = measured?;
    let load_report = load_report?;
    session.unlock_memory();

    let settings = RespondSettings {
        channel: run.config.channel.name().into(),
        channel_description: run.config.channel.describe(),
        gpio: args
            .gpio
            .as_ref()
            .map(|g| format!("{},{}", g.output, g.input)),
        count: run.config.count,
        duration_s: run.config.duration_ns.map(|d| d as f64 / 1e9),
        gap: run.config.gap,
        // What the responder obtained, as it read it back (the request
        // unless refused under --allow-unprivileged).
        policy: output.responder.policy.unwrap_or(Policy::Other),
        priority: output.responder.priority,
        timeout_ns: run.config.timeout_ns,
        cpu_dma_latency_us: session.dma_latency_us(),
        unprivileged: session.unprivileged(),
        steal_ns,
    };
    let context = RespondContext {
        envelope: latlab_document::Envelope::at(std::env::args().collect(), started, system)
            .with_warnings(warnings),
        settings,
    };
    let mut result = RespondResult::assemble(&output, context, &run.requirements, args.check_on);
    if let Some(report) = &load_report {
        result.load = Some(report.clone());
    }
    let exit = if result.verdict == Verdict::Fail {
        EXIT_REQUIREMENT_FAILED
    } else {
        0
    };
    print!("{}", result.terminal_text());
    write_outputs(&args, &result, started)?;
    Ok(ExitCode::from(exit))
}

fn write_outputs(args: &RespondArgs, result: &RespondResult, started: f64) -> anyhow::Result<()> {
    let stamp = clock::format_stamp(started);
    let mut files = OutputFiles::with_result(
        result,
        Some((&args.save, &stamp)),
        "respond.json",
        args.json.as_deref(),
    )?;
    if let Some(path) = &args.histogram_text {
        files.other(write_file(path, result.cyclictest_text().as_bytes()));
    }
    args.farm.emit(result, &mut files)?;
    files.finish()
}

/// The live status of a response measurement: events done (with a bar and the
/// time left when the count is known), maxima so far and losses.
struct LiveView {
    line: StatusLine,
    count: Option<u64>,
}

impl LiveView {}

impl LiveUpdate<Progress> for LiveView {
    fn update(&mut self, p: &Progress) {
        if !self.line.enabled() {
            return;
        }
        let done = p.answered + p.lost;
        let progress = match self.count {
            Some(count) => format!(
                "{} {}",
                bar(done as f64 / count.max(1) as f64),
                count_and_eta(done, count, "events", p.elapsed_s)
            ),
            None => format!("{done} events, {:.0} s", p.elapsed_s),
        };
        self.line.draw(&format!(
            "{progress}  one-way max {}  round-trip max {}  lost {}",
            format_ns(p.max_one_way_ns),
            format_ns(p.max_round_trip_ns),
            p.lost
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

    fn parse(args: &[&str]) -> RespondArgs {
        let mut full = vec!["latlab", "respond"];
        full.extend_from_slice(args);
        match crate::cli::Cli::parse_from(full).command {
            crate::cli::Command::Respond(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_are_the_papers_test() {
        let r = resolve(&parse(&[])).unwrap();
        assert_eq!(r.config.count, Some(1_000_000));
        assert_eq!(r.config.channel, Channel::Pty);
        assert_eq!(r.config.policy, Policy::Fifo);
        assert_eq!(r.config.priority, 95);
        assert!(matches!(r.config.gap, Gap::Random { .. }));
        let usable = sched::usable_cpus();
        assert_eq!(r.config.responder_cpu, *usable.last().unwrap());
        if usable.len() > 1 {
            assert_ne!(r.config.stimulus_cpu, r.config.responder_cpu);
        }
    }

    #[test]
    fn moblin_profile_is_the_40us_reference_without_period() {
        let r = resolve(&parse(&["--profile", "moblin-ivi"])).unwrap();
        assert_eq!(
            r.requirements,
            vec![Requirement::MaxLatency { limit_ns: 40_000 }]
        );
    }

    #[test]
    fn duration_alone_means_no_count() {
        let r = resolve(&parse(&["--duration", "5s"])).unwrap();
        assert_eq!(r.config.count, None);
        assert_eq!(r.config.duration_ns, Some(5_000_000_000));
    }

    #[test]
    fn serial_pair_resolves_to_tx_and_rx() {
        let r = resolve(&parse(&["--serial", "/dev/ttyS0,/dev/ttyS1"])).unwrap();
        assert_eq!(
            r.config.channel,
            Channel::Serial {
                tx: "/dev/ttyS0".into(),
                rx: "/dev/ttyS1".into(),
                baud: 115_200
            }
        );
    }
}
