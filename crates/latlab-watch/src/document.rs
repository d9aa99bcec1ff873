//! The result of a watch, schema `latlab.watch`, and the snapshot stored in
//! the history every interval, schema `latlab.watch-snapshot`. These
//! structs *are* the JSON schemas (docs/schema/ is generated from them).

use latlab_envelope::{Envelope, Kind};
use latlab_explain::{CategoryRow, CauseRow, WindowReport};
use latlab_measure::stats::Summary;
use latlab_rt::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};

use crate::histograms::SparseHistogram;
use crate::select::Policy;

/// Version of the `latlab.watch` layout: 2 since histograms are runs of
/// buckets (see [`latlab_measure::histogram::Histogram`]); latlab reads 1 too.
pub const SCHEMA_VERSION: u32 = 2;
/// The `schema` of a watch result.
pub const SCHEMA: &str = "latlab.watch";
/// The `schema` of a snapshot in the history.
pub const SNAPSHOT_SCHEMA: &str = "latlab.watch-snapshot";

/// The `latlab.watch` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchSchema {}

impl Kind for WatchSchema {
    const SCHEMA: &'static str = SCHEMA;
    const VERSION: u32 = SCHEMA_VERSION;
}
fn snapshot_schema() -> String {
    SNAPSHOT_SCHEMA.into()
}
/// A count added to the layout later: absent when zero, so that results
/// written before it read and write back the same.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `latlab watch` saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WatchDocument {
    /// `schema` (`"latlab.watch"`), `schema_version` ([`SCHEMA_VERSION`]),
    /// `id`, `latlab_version`, `command_line` (`[]` in files from before it
    /// was recorded), `started_at` (when the watch started, once its
    /// selection matched), `system` (the machine) and `warnings` (`[]`: the
    /// watch's remarks are its `notes`).
    #[serde(flatten)]
    pub envelope: Envelope<WatchSchema>,
    /// How long it watched (ns).
    pub duration_ns: u64,
    /// Whether it ran to its end (`false`: stopped by Ctrl-C or SIGTERM, or
    /// the watched command ended).
    pub stopped_by: String,
    /// How it watched.
    pub settings: WatchSettings,
    /// The latency of every watched wake-up together (timer-driven: thread
    /// latency; others: wake-up latency).
    pub overall: Overall,
    /// Per watched task.
    pub tasks: Vec<TaskResult>,
    /// Wake-ups over the threshold.
    pub spikes: Spikes,
    /// The late windows the kernel sent, and what happened to the rest.
    pub windows_seen: WindowCounts,
    /// Causes ranked by explain's analysis over the late windows kept (the
    /// worst and the latest ones; see `windows_seen.analysed`): of the
    /// real-time threads when the watch saw one (the others' late windows
    /// are counted in `windows_seen.not_real_time`, not ranked), else of
    /// every watched thread. watch's own process is never a cause: its
    /// part is in `overhead.own_late_ns`.
    pub causes: Vec<CauseRow>,
    /// Those causes by category.
    pub categories: Vec<CategoryRow>,
    /// Every late window's decomposition summed over the whole watch, by
    /// cause (grouped by command name, as explain ranks them).
    pub cause_totals: Vec<CauseTotal>,
    /// The worst late windows, worst first.
    pub worst_windows: Vec<WatchedWindow>,
    /// One per interval, oldest first (merged pairwise past
    /// 10 080 (`MAX_SNAPSHOTS`), `interval_ns` doubling).
    pub snapshots: Vec<Snapshot>,
    /// What watching cost.
    pub overhead: Overhead,
    /// Remarks: percentile claims the samples cannot support, windows cut
    /// short, limits reached.
    pub notes: Vec<String>,
}

/// A WatchDocument reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for WatchDocument {
    type Target = Envelope<WatchSchema>;

    fn deref(&self) -> &Envelope<WatchSchema> {
        &self.envelope
    }
}

impl std::ops::DerefMut for WatchDocument {
    fn deref_mut(&mut self) -> &mut Envelope<WatchSchema> {
        &mut self.envelope
    }
}

/// How the watch was set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WatchSettings {
    /// Which tasks (`pid 812`, `comm cyclictest`, `command ...`, `--rt`).
    pub selection: String,
    /// Which kernel side measured: `bpf` (in-kernel) or `tracefs`
    /// (streamed events, `--tracefs`).
    pub backend: Backend,
    /// A wake-up later than this is late (ns).
    pub threshold_ns: u64,
    /// Snapshot interval (ns).
    pub interval_ns: u64,
    /// Windows sent per second and CPU at most.
    pub max_windows_per_sec: u32,
    /// One normal wake-up in this many is sent as a baseline window.
    pub baseline_every: u32,
    /// How the BPF side read the kernel memory on a wake-up's path (absent
    /// for tracefs, and in documents from before it was recorded); the
    /// notes say why when it is `probe_reads`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_reads: Option<PathReads>,
}

/// How the BPF programs read the two values on a timer wake-up's path that
/// lie behind kernel pointers (docs/watch.md, "How it is built").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathReads {
    /// Plain loads through the kfunc `bpf_rdonly_cast()` (kernels 6.2+).
    PlainLoads,
    /// `bpf_probe_read_kernel()` calls: a kernel without the kfunc, or one
    /// whose verifier refused the plain loads.
    ProbeReads,
}

/// The kernel side that measured a watch.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// BPF programs on the tracepoints measure in the kernel and send only
    /// late windows (the default).
    #[default]
    Bpf,
    /// The same tracepoints streamed through a private tracefs instance and
    /// measured in user space (`latlab watch --tracefs`): more CPU.
    Tracefs,
}

impl Backend {
    /// Its name in the document and the text.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Bpf => "bpf",
            Backend::Tracefs => "tracefs",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// All tasks together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Overall {
    /// Summary of every watched wake-up's latency (ns).
    pub latency: Summary,
}

/// One kind of latency of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindResult {
    /// Summary figures (latlab run's statistics; the mean from bucket
    /// midpoints, within 0.2 %).
    pub summary: Summary,
    /// The histogram (latlab run's buckets).
    pub histogram: SparseHistogram,
    /// Percentiles the sample count cannot support.
    pub unsupported_percentiles: Vec<String>,
}

/// One watched task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskResult {
    /// Thread id; 0: the threads that ended (or left the selection)
    /// longest ago, folded together (`(ended threads)`; the latest 64 keep
    /// a row each).
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// Its scheduling policy as last seen (absent when it was never seen
    /// alive, for the folded row, and in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// Its real-time priority (1-99) with `policy` `fifo` or `rr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_priority: Option<u32>,
    /// Timer-driven wake-ups: soft expiry to running (rtla's thread
    /// latency, the MontaVista paper's interrupt + preemption latency).
    pub thread: Option<KindResult>,
    /// Timer-driven wake-ups: soft expiry to the timer interrupt's clock
    /// read for the callback (`now` of `hrtimer_expire_entry`; the
    /// timer-interrupt latency).
    pub irq: Option<KindResult>,
    /// Other wake-ups: sched_waking to running.
    pub wakeup: Option<KindResult>,
    /// Wake-ups over the threshold whose window arrived.
    pub late_windows: u64,
    /// The worst latency a window showed (exact, ns), if one was late.
    pub worst_ns: Option<u64>,
    /// When (ns since the start).
    pub worst_at_ns: Option<u64>,
}

/// Wake-ups over the threshold, as a rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spikes {
    /// The threshold (ns).
    pub threshold_ns: u64,
    /// Wake-ups over it (counted in the kernel).
    pub count: u64,
    /// Per hour.
    pub per_hour: f64,
    /// 95 % confidence interval of the rate (Poisson, exact), per hour.
    pub per_hour_low: f64,
    /// Upper end of that interval.
    pub per_hour_high: f64,
    /// The worst latency seen (ns) and when (ns since the start).
    pub worst_ns: u64,
    /// When the worst happened (ns since the start).
    pub worst_at_ns: u64,
}

/// What happened to the windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowCounts {
    /// Late windows received.
    pub late: u64,
    /// Baseline (normal) windows received.
    pub baseline: u64,
    /// Late wake-ups over the per-second limit (counted, not sent).
    pub throttled: u64,
    /// Windows the ring buffer had no room for.
    pub lost: u64,
    /// Trace events the kernel's ring buffers lost (`--tracefs`: user space
    /// fell behind; their wake-ups may be missing or, rarely, mismeasured);
    /// always 0 with BPF.
    #[serde(default)]
    pub events_lost: u64,
    /// Windows whose ring did not reach back to the due time (the CPU
    /// logged more events than a ring holds): explained from what remained.
    pub truncated: u64,
    /// Windows in the ranked analysis (`causes`).
    pub analysed: u64,
    /// Late windows of threads that were not real-time (SCHED_OTHER,
    /// SCHED_BATCH, SCHED_IDLE when they woke), left out of the causes
    /// because the watch saw real-time threads: advice drawn from a thread
    /// that waits behind every real-time task by design would be about that
    /// thread, not about the real-time ones.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_real_time: u64,
}

/// One cause summed over every late window of the watch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CauseTotal {
    /// Its category.
    pub category: String,
    /// Its description.
    pub description: String,
    /// Late windows it took part in.
    pub late_windows: u64,
    /// Latency it accounts for (ns).
    pub late_ns: u64,
}

/// A late window kept in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WatchedWindow {
    /// When (ns since the start of the watch).
    pub at_ns: u64,
    /// Whether the rings reached back to the due time.
    pub complete: bool,
    /// The window, decomposed by explain; watch's own process is left out
    /// of its parts (they add up to `latency_ns` minus `watch_ns`).
    pub window: WindowReport,
    /// The latency watch's own process accounts for in it (ns).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub watch_ns: u64,
}

/// One interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    /// End of the interval (ns since the start).
    pub at_ns: u64,
    /// Its length (ns).
    pub interval_ns: u64,
    /// Wake-ups measured in it (all tasks).
    pub samples: u64,
    /// The worst latency in it (ns; bucket upper bound, within 0.2 %).
    pub worst_ns: u64,
    /// Its 99th percentile (ns).
    pub p99_ns: u64,
    /// Wake-ups over the threshold in it.
    pub late: u64,
    /// Late windows in it by the category of their largest cause.
    pub by_category: Vec<(String, u64)>,
}

/// The snapshot document stored in the history every interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotDocument {
    /// Always `latlab.watch-snapshot`.
    #[serde(default = "snapshot_schema")]
    pub schema: String,
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The result's unique id (a random UUID given when it is written), by
    /// which a store keeps it once; absent in files written before the field
    /// existed (their id is derived from their content, see
    /// `latlab_document::Document::id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// When the interval ended, UTC (RFC 3339).
    pub started_at: String,
    /// When the watch started, UTC.
    pub watch_started_at: String,
    /// Which tasks.
    pub selection: String,
    /// The machine.
    pub system: SystemInfo,
    /// The interval's worst as `overall.latency` (so the history lists it).
    pub overall: Overall,
    /// The interval.
    pub snapshot: Snapshot,
}

/// What watching cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Overhead {
    /// CPU time of latlab watch's process, user + system (ns).
    pub process_cpu_ns: u64,
    /// Time the kernel spent in watch's BPF programs (ns; BPF run-time
    /// statistics).
    pub bpf_ns: u64,
    /// Times those programs ran.
    pub bpf_runs: u64,
    /// Both, per hour of watching (ns of CPU per hour).
    pub cpu_ns_per_hour: u64,
    /// Peak resident memory of the process (KiB).
    pub max_rss_kib: u64,
    /// Late windows of the ranked threads in which watch's own process
    /// (its threads, and a latlab it started) held a watched thread's CPU:
    /// watch's cost, never one of the causes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub own_late_windows: u64,
    /// The latency it accounts for in them (ns).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub own_late_ns: u64,
}
