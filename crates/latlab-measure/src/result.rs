//! The measurement part of `latlab run`'s result: this struct *is* the
//! documented JSON schema of it (`latlab-results/<timestamp>/result.json`,
//! `--json FILE`). The whole document adds the load, trace and explanation
//! parts other crates own: `latlab_document::RunDocument`, whose JSON is this
//! struct's fields followed by those.
//!
//! Schema name `latlab.run`, version [`SCHEMA_VERSION`]; a field is only ever
//! added in a minor change, and renaming or removing one bumps the version.
//!
//! Histograms are stored once, per thread: `overall` holds the figures of
//! all threads together but not their histograms, which are the merge of
//! the threads' and are merged again when a result is read (files of
//! version 1 hold them; they read the same).

use serde::{Deserialize, Serialize};

use latlab_envelope::{Envelope, Kind};
use latlab_rt::sched::Policy;

use crate::engine::{MeasureConfig, MeasureOutput, ThreadOutput};
use crate::histogram::Histogram;
use crate::period::{PeriodSummary, PeriodTracker};
use crate::requirements::RequirementOutcome;
use crate::series::SeriesPoint;
use crate::stats::{Stats, Summary};
use crate::timer::TimerKind;
use crate::worst::{WorstSample, WorstSamples};

/// Version of the `latlab.run` JSON schema: 2 since histograms are runs of
/// buckets and `overall` holds none (see [`Histogram`]); latlab reads 1 too.
pub const SCHEMA_VERSION: u32 = 2;

/// The `latlab.run` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSchema {}

impl Kind for RunSchema {
    const SCHEMA: &'static str = "latlab.run";
    const VERSION: u32 = SCHEMA_VERSION;
}

/// A complete measurement result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// The derived (de)serializers are inherent functions, wrapped below: reading
// merges the overall histograms from the threads'.
#[serde(remote = "Self")]
#[schemars(rename = "RunResult")]
pub struct RunResult {
    /// `schema` (`"latlab.run"`), `schema_version` ([`SCHEMA_VERSION`]),
    /// `id`, `latlab_version`, `command_line`, `started_at` (the
    /// measurement's start), `system` (the machine) and `warnings` (printed
    /// before the run: pitfalls, missing privileges).
    #[serde(flatten)]
    pub envelope: Envelope<RunSchema>,
    /// Measured time, seconds (first period to stop).
    pub elapsed_s: f64,
    /// True when stopped early by Ctrl-C or SIGTERM; the figures cover what ran.
    pub interrupted: bool,
    /// The settings asked for.
    pub settings: RunSettings,
    /// One entry per measurement thread.
    pub threads: Vec<ThreadResult>,
    /// All threads together.
    pub overall: Totals,
    /// Each requirement and whether it held.
    pub requirements: Vec<RequirementOutcome>,
    /// `pass`, `fail`, `none` when no requirement was given, or `suspect`
    /// when wake-ups came before their intended time.
    pub verdict: Verdict,
}

/// A RunResult reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for RunResult {
    type Target = Envelope<RunSchema>;

    fn deref(&self) -> &Envelope<RunSchema> {
        &self.envelope
    }
}

impl std::ops::DerefMut for RunResult {
    fn deref_mut(&mut self) -> &mut Envelope<RunSchema> {
        &mut self.envelope
    }
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunSettings {
    /// CPUs measured.
    pub cpus: Vec<usize>,
    /// Period of the first thread, ns.
    pub interval_ns: u64,
    /// Period increment per further thread, ns.
    pub interval_step_ns: u64,
    /// Wake-up source.
    pub timer: TimerKind,
    /// The policy the measurement threads ran at, as each read it back from
    /// the kernel (`sched_getscheduler`) once it was set up; the weakest of
    /// them should they differ (a policy latlab does not know counts as
    /// `other`). The one asked for (`--policy`) unless it was refused under
    /// `--allow-unprivileged`: then `other`, with `unprivileged` set and the
    /// reason in `warnings` (the request itself is in `command_line`).
    pub policy: Policy,
    /// The real-time priority they ran at (`sched_getparam`; 0 for `other`).
    pub priority: i32,
    /// Requested duration, seconds.
    pub duration_s: Option<f64>,
    /// Requested activations per thread.
    pub loops: Option<u64>,
    /// Accepted period deviation, fraction of the period.
    pub period_tolerance: f64,
    /// /dev/cpu_dma_latency value held during the run (µs), if held.
    pub cpu_dma_latency_us: Option<i32>,
    /// Memory locked with mlockall.
    pub mlocked: bool,
    /// True when `--allow-unprivileged` let the run go on without RT priority or mlock.
    pub unprivileged: bool,
    /// Steal time per CPU during the run (ns): time the hypervisor ran something else.
    #[serde(default)]
    pub steal_ns: Vec<(usize, u64)>,
}

impl RunSettings {
    /// The settings `measure` asks for. What the session got (the policy
    /// the threads run at, the memory lock, /dev/cpu_dma_latency, the steal
    /// time) is filled in once it is known.
    pub fn requested(measure: &MeasureConfig) -> RunSettings {
        RunSettings {
            cpus: measure.cpus.clone(),
            interval_ns: measure.interval_ns,
            interval_step_ns: measure.interval_step_ns,
            timer: measure.timer,
            policy: measure.policy,
            priority: measure.priority,
            duration_s: measure.duration_ns.map(|d| d as f64 / 1e9),
            loops: measure.loops,
            period_tolerance: measure.period_tolerance,
            cpu_dma_latency_us: None,
            mlocked: false,
            unprivileged: false,
            steal_ns: Vec::new(),
        }
    }
}

/// What one measurement thread measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadResult {
    /// CPU the thread was pinned to.
    pub cpu: usize,
    /// Its period, ns.
    pub interval_ns: u64,
    /// Policy it really got (`null` if unknown).
    pub policy: Option<Policy>,
    /// Priority it really got.
    pub priority: i32,
    /// CPUs it was allowed on.
    pub affinity: Vec<usize>,
    /// Activations.
    pub cycles: u64,
    /// Whole periods skipped (woke after the next period began).
    pub missed_periods: u64,
    /// Activations that came before their intended time, which cannot
    /// happen (a bug or a clock problem): not part of `latency`, and any
    /// makes the verdict `suspect`.
    pub early_wakeups: u64,
    /// The most any early wake-up came early by, ns (0 without any).
    #[serde(default)]
    pub max_early_ns: u64,
    /// Activations whose expiry the kernel did not tell (`itimer` only, when
    /// the thread was held about two intervals around SIGALRM's dequeue):
    /// measured against the earliest expiry they can answer, so their
    /// latency may be overstated by whole intervals, never understated.
    #[serde(default)]
    pub uncertain_expiries: u64,
    /// Wake-up latency (actual minus intended), ns, of the activations that
    /// were not early.
    pub latency: Summary,
    /// Latency histogram, ns (see [`Histogram`]).
    pub histogram: Histogram,
    /// The worst samples, largest first.
    pub worst: Vec<WorstSample>,
    /// Per-second max and p99.
    pub series: Vec<SeriesPoint>,
    /// Period accuracy.
    pub period: PeriodSummary,
    /// The same thread's timer-driven wake-ups measured in the kernel and
    /// split at the timer interrupt (`--split`, with BPF); absent when the
    /// run had no split (and in results written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<LatencySplit>,
}

/// The wake-up latency of timer-driven wake-ups split at the timer
/// interrupt, measured in the kernel by latlab watch's BPF side (`latlab
/// run --split`): the two parts the MontaVista paper names, *interrupt
/// latency* (the expiry to the timer interrupt) and *preemption latency*
/// (the timer interrupt to the thread running), and their sum, what rtla
/// timerlat calls *thread latency*. Per wake-up, `thread_latency` =
/// `interrupt_latency` + `preemption_latency` exactly; latlab's own
/// `latency` adds the return to user space and the clock read after the
/// thread runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySplit {
    /// Timer-driven wake-ups the kernel measured (its hrtimer callback
    /// woke the thread): about the thread's `cycles`. One more when the
    /// run ends by `--duration` (the kernel also sees the wake-up past the
    /// end, which latlab does not count); fewer by a wake-up whose timer
    /// fired before the thread got to sleep (it never left the CPU), and
    /// by any the kernel did not run the BPF programs for (seen on a VM:
    /// up to 0.7 %, docs/results/2026-11-24-run-split.md).
    pub timer_wakeups: u64,
    /// Other wake-ups of the thread (no timer callback woke it, e.g. the
    /// start of the run): not in the figures.
    pub other_wakeups: u64,
    /// Interrupt latency: the timer's expiry (its soft expiry, the intended
    /// wake-up) to the timer interrupt reading the clock to run the expired
    /// timers (`now` of the kernel's `hrtimer_expire_entry` event).
    /// MontaVista's "interrupt latency", rtla timerlat's "IRQ latency".
    pub interrupt_latency: LatencyPart,
    /// Preemption latency: that timer interrupt to the thread running (the
    /// kernel's switch to it). MontaVista's "preemption latency": what the
    /// scheduler, other tasks and interrupts, and sections with preemption
    /// off add after the interrupt.
    pub preemption_latency: LatencyPart,
    /// Thread latency: the expiry to the thread running, the sum of the two
    /// above; rtla timerlat's "thread latency".
    pub thread_latency: LatencyPart,
}

/// One part of a [`LatencySplit`]: its statistics (the mean and deviation
/// from bucket midpoints, within 0.2 %) and its histogram, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyPart {
    /// Statistics, ns.
    pub summary: Summary,
    /// Histogram, ns (see [`Histogram`]); not written when empty, nor in
    /// `overall` (the threads' merged).
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub histogram: Histogram,
}

impl LatencyPart {
    /// Adds the histogram of `other` (another thread's same part) to this one.
    fn merge_histogram(&mut self, other: &LatencyPart) {
        self.histogram.merge(&other.histogram);
    }
}

/// All threads together: the figures, without the histograms, which are
/// the merge of the threads' (not stored, merged again when read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    /// Activations.
    pub cycles: u64,
    /// Whole periods skipped.
    pub missed_periods: u64,
    /// Activations before their intended time (see [`ThreadResult::early_wakeups`]).
    #[serde(default)]
    pub early_wakeups: u64,
    /// Wake-up latency, ns.
    pub latency: Summary,
    /// Latency histogram: the threads' merged. Not written (files of schema
    /// version 1 have it).
    #[serde(default, skip_serializing)]
    pub histogram: Histogram,
    /// The worst samples of any thread.
    pub worst: Vec<WorstSample>,
    /// Period accuracy over all threads (deviation from each thread's own
    /// period); its histograms are the threads' merged, not written.
    #[serde(serialize_with = "figures_of_period")]
    pub period: PeriodSummary,
    /// Every thread's [`LatencySplit`] together (`--split`); absent without
    /// one. Its histograms are the threads' merged, not written.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "figures_of_split"
    )]
    pub split: Option<LatencySplit>,
}

/// `period` without its histograms.
fn figures_of_period<S: serde::Serializer>(
    period: &PeriodSummary,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    period.without_histograms().serialize(serializer)
}

/// `split` without its histograms.
fn figures_of_split<S: serde::Serializer>(
    split: &Option<LatencySplit>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let figures = split.as_ref().map(|s| {
        let part = |p: &LatencyPart| LatencyPart {
            summary: p.summary,
            histogram: Histogram::new(),
        };
        LatencySplit {
            interrupt_latency: part(&s.interrupt_latency),
            preemption_latency: part(&s.preemption_latency),
            thread_latency: part(&s.thread_latency),
            ..*s
        }
    });
    figures.serialize(serializer)
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every requirement held.
    Pass,
    /// At least one requirement was violated.
    Fail,
    /// No requirement was given.
    None,
    /// The measurement itself is wrong somewhere: some wake-ups came before
    /// their intended time (a bug or a clock problem), so its figures can
    /// prove nothing, whatever the requirements say.
    Suspect,
}

/// What a result records besides the measurement itself.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The command line, the start of the measurement, the machine and the
    /// warnings shown before the run ([`Envelope::at`]).
    pub envelope: Envelope<RunSchema>,
    /// Settings of the run, the policy and priority as asked for:
    /// [`RunResult::assemble`] records what the threads obtained instead.
    pub settings: RunSettings,
}

impl Serialize for RunResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RunResult::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for RunResult {
    /// Reads a result and merges the overall histograms from the threads'
    /// where the file has none (every file since schema version 2).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut result = RunResult::deserialize(deserializer)?;
        result.merge_overall_histograms();
        Ok(result)
    }
}

impl RunResult {
    /// Fills the overall histograms (latency, period, split) with the merge
    /// of the threads' where they are empty: as written they are left out.
    fn merge_overall_histograms(&mut self) {
        let overall = &mut self.overall;
        if overall.histogram.is_empty() {
            for t in &self.threads {
                overall.histogram.merge(&t.histogram);
            }
        }
        let period = &mut overall.period;
        if period.early_histogram.is_empty() && period.late_histogram.is_empty() {
            for t in &self.threads {
                period.early_histogram.merge(&t.period.early_histogram);
                period.late_histogram.merge(&t.period.late_histogram);
            }
        }
        if let Some(split) = &mut overall.split {
            let stored = [
                &split.interrupt_latency,
                &split.preemption_latency,
                &split.thread_latency,
            ]
            .iter()
            .any(|p| !p.histogram.is_empty());
            if !stored {
                for t in self.threads.iter().filter_map(|t| t.split.as_ref()) {
                    split
                        .interrupt_latency
                        .merge_histogram(&t.interrupt_latency);
                    split
                        .preemption_latency
                        .merge_histogram(&t.preemption_latency);
                    split.thread_latency.merge_histogram(&t.thread_latency);
                }
            }
        }
    }

    /// Builds the result of a measurement and checks the requirements.
    pub fn assemble(
        output: &MeasureOutput,
        context: RunContext,
        requirements: &[crate::requirements::Requirement],
    ) -> RunResult {
        let threads: Vec<ThreadResult> = output
            .threads
            .iter()
            .map(ThreadResult::from_output)
            .collect();
        let outcomes = crate::requirements::evaluate(requirements, &threads);
        let early: u64 = threads.iter().map(|t| t.early_wakeups).sum();
        let mut settings = context.settings;
        if let Some((policy, priority)) = obtained_scheduling(&threads) {
            settings.policy = policy;
            settings.priority = priority;
        }
        let verdict = if early > 0 {
            Verdict::Suspect
        } else {
            crate::requirements::verdict(&outcomes)
        };
        RunResult {
            envelope: context.envelope,
            elapsed_s: output.end_ns.saturating_sub(output.start_ns) as f64 / 1e9,
            interrupted: output.interrupted,
            settings,
            overall: Totals::from_output(output),
            verdict,
            requirements: outcomes,
            threads,
        }
    }
}

/// The policy and priority the threads ran at, as each read them back once
/// set up: the weakest of them (SCHED_OTHER below any real-time policy, then
/// the lowest priority); a policy latlab does not know counts as SCHED_OTHER.
/// `None` without threads.
fn obtained_scheduling(threads: &[ThreadResult]) -> Option<(Policy, i32)> {
    threads
        .iter()
        .map(|t| match t.policy {
            Some(policy) if policy.is_realtime() => (policy, t.priority),
            _ => (Policy::Other, 0),
        })
        .min_by_key(|&(policy, priority)| (policy.is_realtime(), priority))
}

impl ThreadResult {
    /// Converts a thread's raw output.
    pub fn from_output(output: &ThreadOutput) -> Self {
        ThreadResult {
            cpu: output.cpu,
            interval_ns: output.interval_ns,
            policy: output.policy,
            priority: output.priority,
            affinity: output.affinity.clone(),
            cycles: output.cycles,
            missed_periods: output.missed_periods,
            early_wakeups: output.early_wakeups,
            max_early_ns: output.max_early_ns,
            uncertain_expiries: output.uncertain_expiries,
            latency: output.stats.summary(),
            histogram: output.stats.histogram().clone(),
            worst: output.worst.as_slice().to_vec(),
            series: output.series.clone(),
            period: output.period.summary(),
            split: None,
        }
    }
}

impl Totals {
    /// Combines the threads of a measurement.
    pub fn from_output(output: &MeasureOutput) -> Self {
        let mut stats = Stats::new();
        let mut worst = WorstSamples::new(crate::engine::WORST_KEPT);
        let mut period: Option<PeriodTracker> = None;
        for thread in &output.threads {
            stats.merge(&thread.stats);
            worst.merge(&thread.worst);
            match &mut period {
                Some(p) => p.merge(&thread.period),
                None => period = Some(thread.period.clone()),
            }
        }
        Totals {
            cycles: output.threads.iter().map(|t| t.cycles).sum(),
            missed_periods: output.threads.iter().map(|t| t.missed_periods).sum(),
            early_wakeups: output.threads.iter().map(|t| t.early_wakeups).sum(),
            latency: stats.summary(),
            histogram: stats.histogram().clone(),
            worst: worst.as_slice().to_vec(),
            period: period.unwrap_or_else(|| PeriodTracker::new(0, 0)).summary(),
            split: None,
        }
    }
}
