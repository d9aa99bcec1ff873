//! The result of `latlab respond`: this struct *is* the documented JSON
//! schema (`latlab-results/<timestamp>/respond.json`, `--json FILE`).
//!
//! Schema name `latlab.respond`, version [`SCHEMA_VERSION`]; a field is only
//! ever added in a minor change, and renaming or removing one bumps the version.

use serde::{Deserialize, Serialize};

use latlab_envelope::{Envelope, Kind};
use latlab_measure::histogram::Histogram;
use latlab_measure::requirements::{self, Requirement, RequirementOutcome, Subject};
use latlab_measure::result::Verdict;
use latlab_measure::series::SeriesPoint;
use latlab_measure::stats::Summary;
use latlab_measure::worst::WorstSample;
use latlab_rt::sched::Policy;

use crate::measure::{Gap, GpioEdges, LatencyOutput, Placement, RespondOutput};

/// Version of the `latlab.respond` JSON schema: 2 since histograms are runs
/// of buckets (see [`Histogram`]); latlab reads 1 too.
pub const SCHEMA_VERSION: u32 = 2;

/// The `latlab.respond` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespondSchema {}

impl Kind for RespondSchema {
    const SCHEMA: &'static str = "latlab.respond";
    const VERSION: u32 = SCHEMA_VERSION;
}

/// A complete response-latency result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RespondResult {
    /// `schema` (`"latlab.respond"`), `schema_version` ([`SCHEMA_VERSION`]),
    /// `id`, `latlab_version`, `command_line`, `started_at` (the first
    /// event's), `system` (the machine) and `warnings` (printed before the
    /// run: pitfalls, missing privileges, a shared CPU).
    #[serde(flatten)]
    pub envelope: Envelope<RespondSchema>,
    /// Measured time, seconds (first event to stop).
    pub elapsed_s: f64,
    /// True when stopped early by Ctrl-C or SIGTERM; the figures cover what ran.
    pub interrupted: bool,
    /// The settings asked for.
    pub settings: RespondSettings,
    /// Where the responder ran and the policy it really had.
    pub responder: Placement,
    /// Where the stimulus ran and the policy it really had.
    pub stimulus: Placement,
    /// Events sent.
    pub events_sent: u64,
    /// Events answered within the timeout.
    pub events_answered: u64,
    /// Events not answered within the timeout (not in the statistics).
    pub events_lost: u64,
    /// Stimulus send to responder wake-up (the responder's CLOCK_MONOTONIC
    /// time stored in a shared page minus the stimulus's, just before sending).
    pub one_way: LatencyResult,
    /// Stimulus send to answer received: what the paper's measurement board
    /// timed (send to GPIO edge). With `--gpio` it ends at the kernel's edge timestamp.
    pub round_trip: LatencyResult,
    /// With `--gpio`: the kernel's edge timestamps against the stimulus's
    /// clock (how many ended a round trip, how long before the read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpio_edges: Option<GpioEdges>,
    /// Which latency the requirements were checked on: `one-way`, `round-trip` or `both`.
    pub requirements_on: String,
    /// Each requirement and whether it held.
    pub requirements: Vec<RequirementOutcome>,
    /// `pass`, `fail`, or `none` when no requirement was given.
    pub verdict: Verdict,
    /// Background load report (`--load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<latlab_load::LoadReport>,
}

/// A RespondResult reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for RespondResult {
    type Target = Envelope<RespondSchema>;

    fn deref(&self) -> &Envelope<RespondSchema> {
        &self.envelope
    }
}

impl std::ops::DerefMut for RespondResult {
    fn deref_mut(&mut self) -> &mut Envelope<RespondSchema> {
        &mut self.envelope
    }
}

/// The settings of a response measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RespondSettings {
    /// Channel name: pty, pipe, eventfd, unix, udp, signal or serial.
    pub channel: String,
    /// The channel in words (device paths for real hardware).
    pub channel_description: String,
    /// The GPIO answer wiring `OUT,IN`, when the answer is a real GPIO toggle.
    pub gpio: Option<String>,
    /// Requested events.
    pub count: Option<u64>,
    /// Requested duration, seconds.
    pub duration_s: Option<f64>,
    /// Gap between events (fixed, or random within a range).
    pub gap: Gap,
    /// The responder's policy, as it read it back once set up: the one
    /// asked for unless it was refused under `--allow-unprivileged` (then
    /// `other`, with `unprivileged` set; a policy latlab does not know
    /// counts as `other`).
    pub policy: Policy,
    /// The responder's real-time priority, as it read it back (0 for
    /// `other`; the stimulus runs one below).
    pub priority: i32,
    /// An event unanswered after this long is counted lost, ns.
    pub timeout_ns: u64,
    /// /dev/cpu_dma_latency value held during the run (µs), if held.
    pub cpu_dma_latency_us: Option<i32>,
    /// True when `--allow-unprivileged` let the run go on without RT priority or mlock.
    pub unprivileged: bool,
    /// Steal time per CPU (stimulus and responder) during the run, ns: time the
    /// hypervisor ran something else.
    #[serde(default)]
    pub steal_ns: Vec<(usize, u64)>,
}

/// One latency (one-way or round trip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyResult {
    /// Summary figures, ns.
    pub latency: Summary,
    /// Histogram, ns (see [`Histogram`]).
    pub histogram: Histogram,
    /// The worst samples, largest first (`cycle` is the event number,
    /// `intended_ns` the send time, `cpu` the responder's CPU).
    pub worst: Vec<WorstSample>,
    /// Per-second max and p99.
    pub series: Vec<SeriesPoint>,
}

impl LatencyResult {
    /// Converts a raw latency.
    pub fn from_output(output: &LatencyOutput) -> Self {
        LatencyResult {
            latency: output.stats.summary(),
            histogram: output.stats.histogram().clone(),
            worst: output.worst.as_slice().to_vec(),
            series: output.series.clone(),
        }
    }

    /// This latency as a requirement subject named `label`.
    pub fn subject<'a>(&'a self, label: &'a str) -> Subject<'a> {
        Subject {
            label,
            latency: &self.latency,
            histogram: &self.histogram,
            worst: &self.worst,
            index_name: "event",
            period: None,
        }
    }
}

/// Which latency the requirements apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOn {
    /// Send to wake-up.
    OneWay,
    /// Send to answer (the paper's measurement).
    RoundTrip,
    /// Both.
    Both,
}

impl std::str::FromStr for CheckOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "one-way" => Ok(CheckOn::OneWay),
            "round-trip" => Ok(CheckOn::RoundTrip),
            "both" => Ok(CheckOn::Both),
            _ => Err(format!(
                "unknown {s:?} (expected one-way, round-trip or both)"
            )),
        }
    }
}

impl CheckOn {
    /// Name as in `--check-on`.
    pub fn name(self) -> &'static str {
        match self {
            CheckOn::OneWay => "one-way",
            CheckOn::RoundTrip => "round-trip",
            CheckOn::Both => "both",
        }
    }
}

/// What a result records besides the measurement itself.
#[derive(Debug, Clone)]
pub struct RespondContext {
    /// The command line, the start, the machine and the warnings shown
    /// before the run ([`Envelope::at`]).
    pub envelope: Envelope<RespondSchema>,
    /// The settings.
    pub settings: RespondSettings,
}

impl RespondResult {
    /// Builds the result and checks the requirements (period requirements
    /// do not apply to events and are skipped).
    pub fn assemble(
        output: &RespondOutput,
        context: RespondContext,
        requirements: &[Requirement],
        check_on: CheckOn,
    ) -> RespondResult {
        let one_way = LatencyResult::from_output(&output.one_way);
        let round_trip = LatencyResult::from_output(&output.round_trip);
        let latency_requirements: Vec<Requirement> = requirements
            .iter()
            .filter(|r| !matches!(r, Requirement::PeriodTolerance { .. }))
            .cloned()
            .collect();
        let subjects = match check_on {
            CheckOn::OneWay => vec![one_way.subject("one-way")],
            CheckOn::RoundTrip => vec![round_trip.subject("round-trip")],
            CheckOn::Both => vec![one_way.subject("one-way"), round_trip.subject("round-trip")],
        };
        let outcomes = requirements::evaluate_subjects(&latency_requirements, &subjects);
        RespondResult {
            envelope: context.envelope,
            elapsed_s: output.end_ns.saturating_sub(output.start_ns) as f64 / 1e9,
            interrupted: output.interrupted,
            settings: context.settings,
            responder: output.responder.clone(),
            stimulus: output.stimulus.clone(),
            events_sent: output.sent,
            events_answered: output.answered,
            events_lost: output.lost,
            requirements_on: check_on.name().into(),
            verdict: requirements::verdict(&outcomes),
            requirements: outcomes,
            one_way,
            round_trip,
            gpio_edges: output.gpio_edges,
            load: None,
        }
    }
}
