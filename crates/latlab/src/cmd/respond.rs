//! `latlab respond`: response latency to an external event (the Moblin
//! paper's first test), emulated on any Linux machine or on real serial and
//! GPIO hardware.
//!
//! Parse ([`RespondArgs`]), resolve ([`crate::config::respond`]), then the
//! measuring commands' lifecycle ([`crate::lifecycle`]) around
//! latlab-respond's measurement.

use std::io::IsTerminal;
use std::process::ExitCode;

use latlab_measure::result::Verdict;
use latlab_report::formats::TerminalText;
use latlab_respond::channel::Channel;
use latlab_respond::gpio::GpioWiring;
use latlab_respond::measure::{self, Gap};
use latlab_respond::result::CheckOn;
use latlab_rt::duration;
use latlab_rt::session::SessionOptions;

use super::EXIT_REQUIREMENT_FAILED;
use latlab_session::respond::assemble_document;

use crate::config::respond::resolve;
use crate::lifecycle::{Lifecycle, MeasuringFlags, RequirementFlags, Verbosity};

/// Arguments of `latlab respond`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A stimulus process (the paper's measurement board) sends an event; a \
    responder process (SCHED_FIFO, pinned, mlocked) blocked on it wakes and answers on the \
    reverse channel (the paper's GPIO toggle). One-way = send to wake-up, round-trip = send to \
    answer received.\n\nExit status: 0 all requirements met (or none given), 1 error, \
    2 a requirement was violated.",
    mut_arg("json", |arg| arg.help("Also write the result JSON (schema latlab.respond) to FILE")),
    mut_arg("histogram_text", |arg| arg.help(
        "Write a histogram in cyclictest's -h text format to FILE (column 1 one-way, column 2 round-trip)"
    )),
    mut_arg("quiet", |arg| arg.help("No live view")),
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
    /// The result's outputs, --quiet, the background load, --allow-unprivileged.
    #[command(flatten)]
    pub measuring: MeasuringFlags,
}

/// Runs the measurement.
pub fn execute(args: RespondArgs) -> anyhow::Result<ExitCode> {
    let mut run = resolve(&args)?;
    let mut life = Lifecycle::enter(
        SessionOptions {
            allow_unprivileged: run.measuring.allow_unprivileged,
            hold_dma_latency: run.hold_dma_latency,
            realtime_fallback: Some("responder and stimulus run SCHED_OTHER"),
            ..SessionOptions::measurement(run.config.policy, run.config.priority)
        },
        std::mem::take(&mut run.warnings),
        run.measuring.verbosity,
        &run.measuring.load,
    )?;
    run.config.policy = life.session.policy();
    run.config.lock_memory = life.session.mlocked();

    life.begin();
    let live = latlab_session::live::RespondLiveView::new(
        run.measuring.verbosity != Verbosity::Quiet && std::io::stderr().is_terminal(),
        run.config.count,
    );
    let mut monitor = life.monitor(live, "the result's warnings: why, and the fix");
    let measured = measure::measure(&run.config, &mut monitor);
    let steal_ns = life
        .session
        .steal_ns(&[run.config.stimulus_cpu, run.config.responder_cpu]);
    let load_report = monitor.finish();
    let output = measured?;
    let load_report = load_report?;
    life.end();

    let mut result = assemble_document(
        &life,
        &run.config,
        &run.requirements,
        run.check_on,
        &output,
        steal_ns,
    );
    result.load = load_report;
    let exit = if result.verdict == Verdict::Fail {
        EXIT_REQUIREMENT_FAILED
    } else {
        0
    };
    print!("{}", result.terminal_text());
    life.write_outputs(
        &run.measuring.outputs,
        &result,
        "respond.json",
        Vec::new(),
        Vec::new(),
    )?;
    Ok(ExitCode::from(exit))
}
