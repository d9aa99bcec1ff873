//! The `latlab.peer` document: a peer tool's result file as latlab reads it.
//! These structs *are* its JSON schema (`docs/schema/latlab.peer.json`).
//!
//! Every figure a peer file does not give is `None` (`null` in JSON) and
//! named in [`PeerDocument::unknown`], never set to 0. Latencies are in
//! nanoseconds, as in every latlab document; a peer's whole-microsecond
//! figures are multiplied by 1000, so they keep the tool's rounding
//! ([`Rounding`]).

use std::collections::BTreeMap;

use latlab_envelope::{Envelope, Kind};
use latlab_measure::histogram::{Bucket, Histogram};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `schema` field of a peer document.
pub const SCHEMA: &str = "latlab.peer";
/// Version of the `latlab.peer` JSON schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The `latlab.peer` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerSchema {}

impl Kind for PeerSchema {
    const SCHEMA: &'static str = SCHEMA;
    const VERSION: u32 = SCHEMA_VERSION;
}

/// A result file of a peer tool (cyclictest, oslat, the other rt-tests,
/// rtla timerlat or osnoise), read into latlab's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerDocument {
    /// `schema` (`"latlab.peer"`), `schema_version` ([`SCHEMA_VERSION`] of
    /// the reader), `id` (`sha256-` and 32 hex digits of the SHA-256 of the
    /// file's bytes: the same file has the same id on every machine, so a
    /// store keeps it once), `latlab_version` (the latlab that read the
    /// file: this document is its reading), `command_line` (`[]`: the tool's
    /// own is `source.command_line`), `started_at` (UTC, when the file says:
    /// rt-tests JSON), `system` (when the file says: rt-tests JSON's
    /// `sysinfo`) and `warnings` (`[]`: the tool's are in `notes`).
    #[serde(flatten)]
    pub envelope: Envelope<PeerSchema, Option<PeerSystem>>,
    /// Which tool wrote the file, in which format, and how it was run.
    pub source: Source,
    /// End, UTC, when the file says (rt-tests JSON).
    pub ended_at: Option<String>,
    /// Measured time, seconds, when the file says (rtla's `# Duration:`,
    /// oslat's per-thread duration, rt-tests' start and end times).
    pub duration_s: Option<f64>,
    /// The settings the file states (its command line, cyclictest's status
    /// lines); each `None` where it does not.
    pub settings: PeerSettings,
    /// What was measured, one entry per quantity (rtla timerlat writes
    /// three: IRQ, thread and user latency); empty for an rt-tests file of
    /// a tool that writes no latency figures (its fields are in `extra`).
    pub measurements: Vec<Measurement>,
    /// The first measurement's figures over all its columns, as every
    /// latlab result has them (`overall.latency`), so listings read them the
    /// same way; `None` without a measurement.
    pub overall: Option<Overall>,
    /// What the format does not say, in words (shown as "unknown" in
    /// reports, never as 0).
    pub unknown: Vec<String>,
    /// Lines and facts of the file that are not figures: warnings the tool
    /// printed (rtla's missed events), status lines, anything latlab did not
    /// decode, kept word for word.
    pub notes: Vec<String>,
    /// Fields of an rt-tests JSON file latlab did not decode, as they were
    /// (another tool's per-thread fields, newer keys).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

/// A PeerDocument reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for PeerDocument {
    type Target = Envelope<PeerSchema, Option<PeerSystem>>;

    fn deref(&self) -> &Envelope<PeerSchema, Option<PeerSystem>> {
        &self.envelope
    }
}

impl std::ops::DerefMut for PeerDocument {
    fn deref_mut(&mut self) -> &mut Envelope<PeerSchema, Option<PeerSystem>> {
        &mut self.envelope
    }
}

/// Which tool wrote a file, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    /// The tool: `cyclictest`, `oslat`, `signaltest`, ..., `rtla timerlat`,
    /// `rtla osnoise`, or `latlab` for a file latlab wrote in a peer format.
    pub tool: String,
    /// Its version (`2.40`), when the file says.
    pub version: Option<String>,
    /// The file's format.
    pub format: PeerFormat,
    /// The command line, when the file says (rt-tests JSON).
    pub command_line: Option<String>,
    /// The tool's exit code, when the file says (rt-tests JSON).
    pub return_code: Option<i64>,
}

/// The formats latlab reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PeerFormat {
    /// cyclictest's `-h`/`-H` histogram text (also `--histfile`, and
    /// `latlab run --histogram-text`).
    CyclictestHistogram,
    /// rt-tests' `--json` file (cyclictest, oslat, cyclicdeadline,
    /// signaltest, pmqtest, ptsematest, sigwaittest, svsematest, and the
    /// others that write it; `latlab run --rt-tests-json`).
    RtTestsJson,
    /// `rtla timerlat hist` or `rtla osnoise hist` output.
    RtlaHist,
}

impl PeerFormat {
    /// How the format is named in messages.
    pub fn name(self) -> &'static str {
        match self {
            PeerFormat::CyclictestHistogram => "cyclictest histogram",
            PeerFormat::RtTestsJson => "rt-tests JSON",
            PeerFormat::RtlaHist => "rtla hist",
        }
    }
}

/// The machine a peer file says it ran on (rt-tests' `sysinfo`, which is
/// `uname`): the fields latlab's own results name the same way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerSystem {
    /// Host name (`nodename`).
    pub hostname: Option<String>,
    /// `uname -r` (`release`).
    pub kernel_release: Option<String>,
    /// `uname -v` (`version`).
    pub kernel_version: Option<String>,
    /// `uname -m` (`machine`).
    pub machine: Option<String>,
    /// `rt` for a PREEMPT_RT kernel, `dynamic` for PREEMPT_DYNAMIC (its
    /// active mode is not in the file), `full` for PREEMPT; from `uname -v`
    /// and rt-tests' `realtime` flag, `None` when neither says.
    pub preemption_model: Option<String>,
}

/// Settings a peer file states; `None` where it does not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerSettings {
    /// Period of the first thread, ns (cyclictest `-i`, rtla `-p`, the
    /// `I:` of cyclictest's status line).
    pub interval_ns: Option<u64>,
    /// Real-time priority (cyclictest `-p`, the `P:` of its status line).
    pub priority: Option<i32>,
    /// Scheduling policy (`fifo`, `rr`, `other`, `deadline`).
    pub policy: Option<String>,
    /// Memory locked (cyclictest `-m`).
    pub mlocked: Option<bool>,
    /// Requested duration, seconds (`-D`, rtla `-d`).
    pub duration_s: Option<f64>,
    /// Where these settings come from (`the command line`, `the status
    /// lines`).
    pub from: Option<String>,
}

/// What was measured: a quantity, per column (a thread or a CPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// The quantity.
    pub quantity: Quantity,
    /// Width of a histogram bucket, ns (1000 for a 1 µs row); `None`
    /// without a histogram.
    pub bucket_ns: Option<u64>,
    /// How the tool puts a sample into a bucket, and so what its figures
    /// (min, max, percentiles) mean.
    pub rounding: Rounding,
    /// One column per thread or CPU, in the file's order.
    pub columns: Vec<Column>,
}

/// What a measurement measures: latlab compares two results only when
/// they measure the same quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Quantity {
    /// A periodic thread's wake-up latency from its timer's expiry to it
    /// running in user space (cyclictest, cyclicdeadline, `latlab run`).
    WakeUpLatency,
    /// rtla timerlat's IRQ latency: the timer's expiry to its interrupt
    /// handler (`latlab run --split`'s interrupt latency).
    TimerIrqLatency,
    /// rtla timerlat's thread latency: the expiry to the timerlat thread
    /// running in the kernel (`latlab run --split`'s thread latency).
    TimerThreadLatency,
    /// rtla timerlat's user latency (`-u`/`-U`): the expiry to its
    /// user-space thread returning from the kernel.
    TimerUserLatency,
    /// oslat: the gaps a busy loop sees between two reads of the clock.
    BusyLoopLatency,
    /// rtla osnoise: the duration of each interruption of its busy thread.
    OsNoise,
    /// signaltest: a signal's latency from sender to receiver.
    SignalLatency,
    /// pmqtest, ptsematest, sigwaittest, svsematest: the latency from a
    /// sender's message, semaphore or signal to the receiver running.
    IpcLatency,
    /// Another rt-tests tool's min/avg/max.
    Other,
}

impl Quantity {
    /// A short name for tables and messages.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::WakeUpLatency => "wake-up latency",
            Quantity::TimerIrqLatency => "timer IRQ latency",
            Quantity::TimerThreadLatency => "timer thread latency",
            Quantity::TimerUserLatency => "timer user-space latency",
            Quantity::BusyLoopLatency => "busy-loop latency",
            Quantity::OsNoise => "OS noise",
            Quantity::SignalLatency => "signal latency",
            Quantity::IpcLatency => "IPC latency",
            Quantity::Other => "latency",
        }
    }
}

/// How a tool puts a sample into a whole-unit bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// Truncated (cyclictest, rtla): bucket `k` holds `k` to just under
    /// `k + 1` units, and its figures are the lower bound.
    Down,
    /// Rounded up (oslat): bucket `k` holds just over `k - 1` to `k` units,
    /// and its figures are the upper bound.
    Up,
}

/// One column of a peer file: a thread (cyclictest) or a CPU (rtla).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Column {
    /// Its name in the file: `thread 0`, `IRQ-001`, `CPU-003`.
    pub name: String,
    /// The CPU it ran on, when the file says.
    pub cpu: Option<usize>,
    /// Its priority, when the file says (cyclictest's status line, the
    /// receiver of pmqtest and its kind).
    pub priority: Option<i32>,
    /// Its period, ns, when the file says (cyclictest's status line).
    pub interval_ns: Option<u64>,
    /// The figures: the tool's own min, mean and max, and the percentiles
    /// of the histogram (`None` past its last bucket, or without one).
    pub latency: PeerSummary,
    /// The histogram's non-empty buckets, ns, lowest first (`low` is the
    /// value the tool labels the bucket with: see [`Measurement::rounding`]);
    /// `None` when the file has none.
    pub histogram: Option<Vec<Bucket>>,
    /// Samples past the histogram's last bucket (cyclictest's overflows,
    /// rtla's `over:`); `None` when the file does not count them.
    pub overflows: Option<u64>,
    /// The smallest value an overflow can have, ns (the end of the last
    /// bucket), when the file says.
    pub overflow_from_ns: Option<u64>,
    /// The cycle numbers of overflows cyclictest lists (up to as many as
    /// its histogram has rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow_cycles: Vec<u64>,
}

/// Summary figures of a column, ns; `None` where the file does not give
/// them and they cannot be derived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerSummary {
    /// Samples (histogram and overflows, or the tool's cycle count).
    pub count: Option<u64>,
    /// Smallest sample, as the tool gives it.
    pub min: Option<u64>,
    /// Mean, as the tool gives it (cyclictest's text: whole µs, truncated).
    pub mean: Option<f64>,
    /// Median, from the histogram (nearest rank, the bucket's label).
    pub p50: Option<u64>,
    /// 90th percentile, from the histogram.
    pub p90: Option<u64>,
    /// 99th percentile, from the histogram.
    pub p99: Option<u64>,
    /// 99.9th percentile, from the histogram.
    pub p99_9: Option<u64>,
    /// 99.99th percentile, from the histogram.
    pub p99_99: Option<u64>,
    /// Largest sample, as the tool gives it.
    pub max: Option<u64>,
}

/// The first measurement's figures over all columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Overall {
    /// What they measure.
    pub quantity: Quantity,
    /// The figures, ns.
    pub latency: PeerSummary,
}

impl PeerDocument {
    /// The tool and its version: `cyclictest 2.40`, `rtla timerlat`.
    pub fn tool_name(&self) -> String {
        match &self.source.version {
            Some(version) => format!("{} {version}", self.source.tool),
            None => self.source.tool.clone(),
        }
    }

    /// The measurement of `quantity`, if the file has one.
    pub fn measurement(&self, quantity: Quantity) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.quantity == quantity)
    }
}

impl Measurement {
    /// Every column pooled: counts and buckets added, the smallest min,
    /// the largest max, the mean weighted by counts, the percentiles of
    /// the pooled buckets (`None` where a column lacks what they need).
    pub fn pooled(&self) -> Column {
        crate::stats::pool(self)
    }
}

impl Column {
    /// The histogram as latlab's [`Histogram`], for plots: each bucket's
    /// samples at the middle of the range the tool put them in (see
    /// [`Rounding`]). With `overflows_at_max`, the overflows are added at
    /// the column's max, so a tail plot is an upper bound; without, they
    /// are left out (their values are not known), as in a histogram plot.
    /// `None` without a histogram.
    pub fn plot_histogram(
        &self,
        bucket_ns: u64,
        rounding: Rounding,
        overflows_at_max: bool,
    ) -> Option<Histogram> {
        let buckets = self.histogram.as_ref()?;
        let mut histogram = Histogram::new();
        let half = bucket_ns / 2;
        for b in buckets {
            let middle = match rounding {
                Rounding::Down => b.low.saturating_add(half),
                Rounding::Up => b.low.saturating_sub(half),
            };
            histogram.record_n(middle, b.count);
        }
        if let (true, Some(n), Some(max)) = (overflows_at_max, self.overflows, self.latency.max) {
            histogram.record_n(max, n);
        }
        Some(histogram)
    }
}
