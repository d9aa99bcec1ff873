//! The lock benchmark behind `latlab lockbench`: a periodic `SCHED_FIFO` task takes a
//! shared lock every period while `SCHED_OTHER` background threads on the same CPU run
//! critical sections shaped like the paper's Table 3, plus work outside the lock.
//!
//! For each [`BenchVariant`] it measures the real-time task's wake-up latency (release
//! to running) and lock latency (release to lock acquired), overruns, the background's
//! throughput (overall and over time, the paper's Figure 13) and the lock's counters.
//!
//! - The real-time task sleeps with `clock_nanosleep(TIMER_ABSTIME)` every period, takes
//!   the lock, holds it for `rt_hold_ns` (busy), releases it and publishes its next
//!   release on the [`ReleaseTimer`].
//! - A background iteration: `outside_work_ns` of CPU work (thread CPU time) outside the
//!   lock, then one critical section at a call site drawn at random; inside the lock it
//!   spins until `CLOCK_MONOTONIC` has advanced by a hold time drawn from the site's
//!   [`HoldShape`]. Each site is a distinct `lock()` call, so the lock monitor predicts
//!   each separately.
//! - The first `warmup_ns` are not measured: the predictors learn the hold times.
//! - The measured window opens and closes at releases of the real-time task, which
//!   counts every release inside it exactly once, as a period or as an overrun, however
//!   late any thread runs.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, OnceLock};

use latlab_measure::stats::{Stats, Summary};
use serde::Serialize;

use crate::lock::{DelayedConfig, Lock, LockCounters, Variant};
use crate::monitor::SiteStats;
use crate::predict::PredictorKind;
use crate::shape::{HoldShape, Rng};
use crate::sys::{self, SchedParams};
use crate::timer::ReleaseTimer;
use crate::LockError;

const MS: u64 = 1_000_000;

/// The lock variants the benchmark compares.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum BenchVariant {
    /// Plain futex mutex.
    Plain,
    /// Priority-inheritance futex.
    Pi,
    /// Priority ceiling at the real-time task's priority.
    Ceiling,
    /// Delayed locking, maximum predictor.
    DelayedMax,
    /// Delayed locking, exponential-average predictor.
    DelayedEwma,
    /// Delayed locking, windowed-quantile predictor (the default).
    DelayedQuantile,
    /// Delayed locking (windowed quantile) on the priority-inheritance futex: not in the
    /// default set; shows what inheritance adds when admitted holders get preempted.
    DelayedPi,
}

impl BenchVariant {
    /// Every variant, in table order.
    pub const ALL: [BenchVariant; 7] = [
        Self::Plain,
        Self::Pi,
        Self::Ceiling,
        Self::DelayedMax,
        Self::DelayedEwma,
        Self::DelayedQuantile,
        Self::DelayedPi,
    ];

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Pi => "pi",
            Self::Ceiling => "ceiling",
            Self::DelayedMax => "delayed-max",
            Self::DelayedEwma => "delayed-ewma",
            Self::DelayedQuantile => "delayed-quantile",
            Self::DelayedPi => "delayed-pi",
        }
    }

    fn lock_variant(self, cfg: &BenchConfig, timer: &ReleaseTimer) -> Variant {
        let delayed = |predictor, inherit| Variant::Delayed {
            timer: timer.clone(),
            config: DelayedConfig {
                predictor,
                inherit,
                ..cfg.delayed
            },
        };
        match self {
            Self::Plain => Variant::Plain,
            Self::Pi => Variant::PriorityInheritance,
            Self::Ceiling => Variant::PriorityCeiling {
                priority: cfg.rt_priority,
            },
            Self::DelayedMax => delayed(PredictorKind::Max, false),
            Self::DelayedEwma => delayed(PredictorKind::EWMA, false),
            Self::DelayedQuantile => delayed(cfg.quantile, false),
            Self::DelayedPi => delayed(cfg.quantile, true),
        }
    }
}

impl FromStr for BenchVariant {
    type Err = LockError;
    fn from_str(text: &str) -> Result<Self, LockError> {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|v| v.name() == text)
            .or(match text {
                "delayed" => Some(Self::DelayedQuantile),
                _ => None,
            })
            .ok_or_else(|| {
                LockError::InvalidConfig(format!(
                    "unknown variant {text:?}; choose from {}",
                    Self::ALL.map(|v| v.name()).join(", ")
                ))
            })
    }
}

/// Settings of the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct BenchConfig {
    /// Period of the real-time task, ns (default 4 ms, the paper's).
    pub period_ns: u64,
    /// `SCHED_FIFO` priority of the real-time task (default 80); also the ceiling.
    pub rt_priority: u8,
    /// Busy time the real-time task holds the lock each period, ns (default 20 µs).
    pub rt_hold_ns: u64,
    /// CPU every thread is pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Number of `SCHED_OTHER` background threads (default 3, one per default site).
    pub background_threads: usize,
    /// The background's critical sections, one call site each (default: Table 3).
    pub sites: Vec<HoldShape>,
    /// How background threads pick their critical section (default: one site per
    /// thread, like the paper's sender and soft-IRQ paths).
    pub site_choice: SiteChoice,
    /// CPU work outside the lock per background iteration, ns (default 200 µs).
    pub outside_work_ns: u64,
    /// Measured time per variant, ns.
    pub duration_ns: u64,
    /// Slices each variant's time is split into, taking turns with the other variants
    /// (default 5).
    pub rounds: u32,
    /// Unmeasured time at the start of each variant, ns (default 1 s).
    pub warmup_ns: u64,
    /// Width of the background-throughput series points, ns (default 100 ms).
    pub sample_interval_ns: u64,
    /// Settings of the delayed variants (the predictor is set per variant).
    pub delayed: DelayedConfig,
    /// The predictor of `delayed-quantile`.
    pub quantile: PredictorKind,
    /// Seed of the background threads' random choices.
    pub seed: u64,
    /// Keep the CPU from going idle with a `SCHED_IDLE` spinning thread (default on).
    /// On a VM an idle virtual CPU halts, and the host may take milliseconds to resume
    /// it at the next timer interrupt; delayed locking, which leaves the CPU idle while
    /// every background thread waits, would pay for that hypervisor artefact. The
    /// spinner only runs when nothing else on the CPU can.
    pub idle_spinner: bool,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            period_ns: 4 * MS,
            rt_priority: 80,
            rt_hold_ns: 20_000,
            cpu: None,
            background_threads: 3,
            sites: HoldShape::table3().to_vec(),
            site_choice: SiteChoice::PerThread,
            outside_work_ns: 200_000,
            duration_ns: 10_000 * MS,
            rounds: 5,
            warmup_ns: 1_000 * MS,
            sample_interval_ns: 100 * MS,
            delayed: DelayedConfig::default(),
            quantile: PredictorKind::default(),
            seed: 1,
            idle_spinner: true,
        }
    }
}

impl BenchConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), LockError> {
        if !(1..=99).contains(&self.rt_priority) {
            return Err(LockError::InvalidPriority {
                priority: i32::from(self.rt_priority),
            });
        }
        if self.period_ns < 100_000 {
            return Err(LockError::InvalidConfig(
                "a period below 100 µs leaves no room for the background; use e.g. 4ms".into(),
            ));
        }
        if self.rt_hold_ns * 2 > self.period_ns {
            return Err(LockError::InvalidConfig(
                "the real-time task's hold must be under half its period".into(),
            ));
        }
        if self.sites.is_empty() || self.sites.len() > MAX_BENCH_SITES {
            return Err(LockError::InvalidConfig(format!(
                "between 1 and {MAX_BENCH_SITES} critical-section sites are supported"
            )));
        }
        for site in &self.sites {
            site.validate()?;
        }
        if self.rounds == 0 {
            return Err(LockError::InvalidConfig("rounds must be at least 1".into()));
        }
        if self.sample_interval_ns == 0 || self.duration_ns == 0 {
            return Err(LockError::InvalidConfig(
                "duration and sample interval must be above 0".into(),
            ));
        }
        self.delayed.validate()?;
        self.quantile.validate()
    }
}

/// How background threads choose the critical section of each iteration.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SiteChoice {
    /// Thread `i` always uses site `i mod sites` (as in the paper, where the TCP sender
    /// runs `tcp_sendmsg` and the soft-IRQ paths run `do_softirq` and `net_rx`).
    PerThread,
    /// Every iteration picks a site at random (uniformly).
    Random,
}

impl FromStr for SiteChoice {
    type Err = LockError;
    fn from_str(text: &str) -> Result<Self, LockError> {
        match text.trim() {
            "per-thread" => Ok(Self::PerThread),
            "random" => Ok(Self::Random),
            other => Err(LockError::InvalidConfig(format!(
                "unknown site choice {other:?}; use per-thread or random"
            ))),
        }
    }
}

/// How many distinct background call sites the benchmark has.
pub const MAX_BENCH_SITES: usize = 8;

/// One point of the background-throughput series (Figure 13).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ThroughputPoint {
    /// Start of the point, seconds after the measurement began.
    pub t_s: f64,
    /// Background critical sections per second.
    pub sections_per_s: f64,
    /// Background work (hold plus outside work) completed, milliseconds per second.
    pub work_ms_per_s: f64,
}

/// The results of one variant.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct VariantResult {
    /// The variant's name.
    pub variant: String,
    /// Measured time, seconds: a whole number of periods, from the release of the
    /// real-time task that opened the measurement to the one that closed it. Every release
    /// in it is counted once, in `periods` or in `overruns`.
    pub measured_s: f64,
    /// Ctrl-C ended the variant early.
    pub interrupted: bool,
    /// Measured periods of the real-time task.
    pub periods: u64,
    /// Releases the real-time task missed (it was still busy with an earlier period).
    pub overruns: u64,
    /// Wake-up latency: release to running, ns.
    pub wake: Summary,
    /// Lock latency: release to lock acquired, ns.
    pub lock: Summary,
    /// Lock wait: woken to lock acquired (the lock latency without the wake-up), ns.
    pub lock_wait: Summary,
    /// Background critical sections completed.
    pub bg_sections: u64,
    /// Background critical sections per second.
    pub bg_sections_per_s: f64,
    /// Background critical sections per second at each site (in `BenchConfig::sites`
    /// order): the thread on the long site pays most of delayed locking's cost.
    pub bg_sections_per_s_by_site: Vec<f64>,
    /// Background work completed (hold plus outside work), milliseconds per second.
    pub bg_work_ms_per_s: f64,
    /// The lock's counters over the measured time.
    pub counters: LockCounters,
    /// The lock monitor's view of each call site (whole run, warm-up included).
    pub sites: Vec<SiteStats>,
    /// Background throughput over time.
    pub throughput: Vec<ThroughputPoint>,
}

struct Shared {
    lock: Lock<u64>,
    timer: ReleaseTimer,
    stop: AtomicBool,
    sections: AtomicU64,
    work_ns: AtomicU64,
    /// Sections completed per site.
    site_sections: Vec<AtomicU64>,
}

impl Shared {
    /// What the lock and the background have done so far, at the real-time task's
    /// release `release_ns`. `site_sections` comes allocated (the real-time task does
    /// not allocate in its loop).
    fn snapshot(&self, release_ns: u64, mut site_sections: Vec<u64>) -> Snapshot {
        site_sections.clear();
        site_sections.extend(self.site_sections.iter().map(|c| c.load(Ordering::SeqCst)));
        Snapshot {
            release_ns,
            taken_ns: sys::monotonic_ns(),
            sections: self.sections.load(Ordering::SeqCst),
            work_ns: self.work_ns.load(Ordering::SeqCst),
            site_sections,
            counters: self.lock.counters(),
        }
    }
}

/// The counts at one end of a measured window.
#[derive(Debug, Clone)]
struct Snapshot {
    /// The release of the real-time task the window opens or closes at.
    release_ns: u64,
    /// When the counts were read: once the real-time task had woken up for that release,
    /// before it took the lock.
    taken_ns: u64,
    sections: u64,
    work_ns: u64,
    site_sections: Vec<u64>,
    counters: LockCounters,
}

/// [`Window::request`]: still warming up.
const WARM_UP: u8 = 0;
/// [`Window::request`]: open the window at the next release.
const OPEN: u8 = 1;
/// [`Window::request`]: close the window at the first release from
/// [`Window::close_asked_ns`] on.
const CLOSE: u8 = 2;

/// The measured window of one slice. The main thread asks for it to open and to close;
/// the real-time task opens it at the next release it handles, and closes it at the first
/// release from the time of the close request on, so its window is a whole number of
/// periods and every release in it is counted once: as a period it ran (the counters are
/// read on the same side of its lock at both ends) or as an overrun. A window cut by the
/// main thread's clock instead would, when a thread is stalled across its start or end (a
/// VM's host can stop a vCPU for tens of milliseconds), count missed releases from
/// outside it as overruns or lose those from inside it.
struct Window {
    /// [`WARM_UP`], [`OPEN`] or [`CLOSE`], set by the main thread.
    request: AtomicU8,
    /// When the main thread asked to close the window (set before [`CLOSE`]). A real-time
    /// task that notices the request late, stalled, still counts the releases it missed
    /// until then: a stall at the end of the window is measured, not cut off.
    close_asked_ns: AtomicU64,
    /// Set by the real-time task when it opens the window.
    opened: OnceLock<Snapshot>,
    /// Set by the real-time task when it closes the window.
    closed: OnceLock<Snapshot>,
}

impl Window {
    fn new() -> Self {
        Self {
            request: AtomicU8::new(WARM_UP),
            close_asked_ns: AtomicU64::new(0),
            opened: OnceLock::new(),
            closed: OnceLock::new(),
        }
    }

    /// Waits (polling, the real-time task must not block on us) until `end` is set or the
    /// real-time thread has ended.
    fn wait<'a, T>(
        end: &'a OnceLock<Snapshot>,
        rt: &std::thread::JoinHandle<T>,
    ) -> Option<&'a Snapshot> {
        loop {
            if let Some(snapshot) = end.get() {
                return Some(snapshot);
            }
            if rt.is_finished() {
                return end.get();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

#[derive(Default)]
struct RtOutcome {
    wake: Stats,
    lock: Stats,
    wait: Stats,
    periods: u64,
    /// Periods run outside the measured window.
    unmeasured: u64,
    overruns: u64,
}

/// One variant's lock and everything measured for it so far, over all its slices.
struct Accumulated {
    variant: BenchVariant,
    shared: Arc<Shared>,
    wake: Stats,
    lock: Stats,
    wait: Stats,
    periods: u64,
    overruns: u64,
    /// Measured time by the real-time task's releases (a whole number of periods).
    measured_ns: u64,
    /// Measured time by the instants the background's counts were read.
    bg_ns: u64,
    sections: u64,
    site_sections: Vec<u64>,
    work_ns: u64,
    counters: LockCounters,
    throughput: Vec<ThroughputPoint>,
    interrupted: bool,
    /// Every critical section ever run on the lock (warm-up included), for the
    /// lost-section check.
    sections_total: u64,
}

impl Accumulated {
    fn new(cfg: &BenchConfig, variant: BenchVariant) -> Result<Self, LockError> {
        let timer = ReleaseTimer::new();
        let shared = Arc::new(Shared {
            lock: Lock::new(0, variant.lock_variant(cfg, &timer))?,
            timer,
            stop: AtomicBool::new(false),
            sections: AtomicU64::new(0),
            work_ns: AtomicU64::new(0),
            site_sections: cfg.sites.iter().map(|_| AtomicU64::new(0)).collect(),
        });
        Ok(Self {
            variant,
            shared,
            wake: Stats::new(),
            lock: Stats::new(),
            wait: Stats::new(),
            periods: 0,
            overruns: 0,
            measured_ns: 0,
            bg_ns: 0,
            sections: 0,
            site_sections: vec![0; cfg.sites.len()],
            work_ns: 0,
            counters: LockCounters::default(),
            throughput: Vec::new(),
            interrupted: false,
            sections_total: 0,
        })
    }

    fn result(&self) -> VariantResult {
        let measured_s = self.measured_ns as f64 / 1e9;
        let bg_s = self.bg_ns as f64 / 1e9;
        let per_s = |x: f64| if bg_s > 0.0 { x / bg_s } else { 0.0 };
        VariantResult {
            variant: self.variant.name().to_string(),
            measured_s,
            interrupted: self.interrupted,
            periods: self.periods,
            overruns: self.overruns,
            wake: self.wake.summary(),
            lock: self.lock.summary(),
            lock_wait: self.wait.summary(),
            bg_sections: self.sections,
            bg_sections_per_s: per_s(self.sections as f64),
            bg_sections_per_s_by_site: self
                .site_sections
                .iter()
                .map(|&n| per_s(n as f64))
                .collect(),
            bg_work_ms_per_s: per_s(self.work_ns as f64 / 1e6),
            counters: self.counters,
            sites: self.shared.lock.site_stats(),
            throughput: self.throughput.clone(),
        }
    }
}

/// Runs one variant for `cfg.warmup_ns + cfg.duration_ns`, or until `stop()` says so
/// (an error if that was before anything was measured).
pub fn run_variant(
    cfg: &BenchConfig,
    variant: BenchVariant,
    stop: &dyn Fn() -> bool,
) -> Result<VariantResult, LockError> {
    let cfg = BenchConfig {
        rounds: 1,
        ..cfg.clone()
    };
    run(&cfg, &[variant], stop, &mut |_| {})?
        .pop()
        .ok_or_else(|| LockError::NothingMeasured {
            variant: variant.name().to_string(),
        })
}

/// Runs every variant for `cfg.duration_ns` of measurement, split into `cfg.rounds` slices
/// that take turns (variant 1, 2, ..., then 1, 2, ... again), so that a disturbance of
/// the machine (another program's burst of work) spreads over all variants instead of
/// spoiling one. Each variant keeps its lock, and so its predictors, across its slices;
/// only its first slice has the warm-up. `progress` is told what starts.
///
/// Stops early when `stop()` says so and returns what was measured, the interrupted
/// variants marked; variants that measured nothing are left out.
pub fn run(
    cfg: &BenchConfig,
    variants: &[BenchVariant],
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<VariantResult>, LockError> {
    cfg.validate()?;
    let rounds = cfg.rounds;
    let mut all = variants
        .iter()
        .map(|&v| Accumulated::new(cfg, v))
        .collect::<Result<Vec<_>, _>>()?;
    let slice_ns = (cfg.duration_ns / u64::from(rounds)).max(1);
    'rounds: for round in 0..rounds {
        for acc in &mut all {
            if stop() {
                break 'rounds;
            }
            progress(&format!(
                "{} (round {}/{rounds}, {:.1} s{})",
                acc.variant.name(),
                round + 1,
                slice_ns as f64 / 1e9,
                if round == 0 && cfg.warmup_ns > 0 {
                    format!(" + {:.1} s warm-up", cfg.warmup_ns as f64 / 1e9)
                } else {
                    String::new()
                }
            ));
            let warmup = if round == 0 { cfg.warmup_ns } else { 0 };
            run_slice(cfg, acc, warmup, slice_ns, stop)?;
            if acc.interrupted {
                break 'rounds;
            }
        }
    }
    Ok(all
        .iter()
        .filter(|acc| acc.measured_ns > 0)
        .map(Accumulated::result)
        .collect())
}

/// Runs the threads of one variant for one slice and adds what they measured.
fn run_slice(
    cfg: &BenchConfig,
    acc: &mut Accumulated,
    warmup_ns: u64,
    slice_ns: u64,
    stop: &dyn Fn() -> bool,
) -> Result<(), LockError> {
    let shared = acc.shared.clone();
    shared.stop.store(false, Ordering::SeqCst);
    let window = Arc::new(Window::new());

    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LockError>>();
    let rt = {
        let (shared, window, cfg, ready) = (
            shared.clone(),
            window.clone(),
            cfg.clone(),
            ready_tx.clone(),
        );
        spawn("lockbench-rt", move || {
            rt_thread(&cfg, &shared, &window, ready)
        })?
    };
    let mut background = Vec::new();
    for index in 0..cfg.background_threads {
        let (mine, cfg, ready) = (shared.clone(), cfg.clone(), ready_tx.clone());
        let name = format!("lockbench-bg{index}");
        match spawn(&name, move || background_thread(&cfg, &mine, index, ready)) {
            Ok(handle) => background.push(handle),
            Err(err) => {
                shared.stop.store(true, Ordering::SeqCst);
                return Err(err);
            }
        }
    }
    let spinner = if cfg.idle_spinner {
        let (mine, cfg, ready) = (shared.clone(), cfg.clone(), ready_tx.clone());
        match spawn("lockbench-idle", move || idle_spinner(&cfg, &mine, ready)) {
            Ok(handle) => Some(handle),
            Err(err) => {
                shared.stop.store(true, Ordering::SeqCst);
                return Err(err);
            }
        }
    } else {
        None
    };
    drop(ready_tx);
    let mut setup_error = None;
    for _ in 0..=cfg.background_threads + usize::from(spinner.is_some()) {
        if let Ok(Err(err)) = ready_rx.recv() {
            setup_error.get_or_insert(err);
        }
    }

    // Warm-up, then the measurement, sampling the background's progress.
    let offset_s = acc.bg_ns as f64 / 1e9;
    let mut point_start = 0;
    let mut last = (0, 0);
    let mut push_point =
        |now: u64, point_start: u64, origin: u64, last: &mut (u64, u64), current: (u64, u64)| {
            let width_s = (now - point_start) as f64 / 1e9;
            acc.throughput.push(ThroughputPoint {
                t_s: offset_s + (point_start - origin) as f64 / 1e9,
                sections_per_s: (current.0 - last.0) as f64 / width_s,
                work_ms_per_s: (current.1 - last.1) as f64 / 1e6 / width_s,
            });
            *last = current;
        };
    if setup_error.is_none() {
        let warm_end = sys::monotonic_ns() + warmup_ns;
        while sys::monotonic_ns() < warm_end && !stop() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        window.request.store(OPEN, Ordering::SeqCst);
        let opened = Window::wait(&window.opened, &rt);
        let mut interrupted = false;
        if let Some(open) = opened {
            point_start = open.taken_ns;
            last = (open.sections, open.work_ns);
            // From when the counts were read: the real-time task may have noticed the
            // request long after the release it opened the window at, and the background
            // is measured from the counts on.
            let end = open.taken_ns + slice_ns;
            loop {
                if stop() {
                    interrupted = true;
                    break;
                }
                let now = sys::monotonic_ns();
                if now >= end {
                    break;
                }
                let point_end = (point_start + cfg.sample_interval_ns).min(end);
                if now < point_end {
                    std::thread::sleep(std::time::Duration::from_nanos(
                        (point_end - now).min(10 * MS),
                    ));
                    continue;
                }
                let current = (
                    shared.sections.load(Ordering::SeqCst),
                    shared.work_ns.load(Ordering::SeqCst),
                );
                push_point(now, point_start, open.taken_ns, &mut last, current);
                point_start = now;
            }
        }
        window
            .close_asked_ns
            .store(sys::monotonic_ns(), Ordering::SeqCst);
        window.request.store(CLOSE, Ordering::SeqCst);
        if opened.is_some() {
            Window::wait(&window.closed, &rt);
        }
        acc.interrupted = interrupted;
    }
    shared.stop.store(true, Ordering::SeqCst);

    let outcome = rt.join().map_err(|_| LockError::ThreadPanicked {
        thread: "lockbench-rt".into(),
    })?;
    for (index, handle) in background.into_iter().enumerate() {
        acc.sections_total += handle.join().map_err(|_| LockError::ThreadPanicked {
            thread: format!("lockbench-bg{index}"),
        })?;
    }
    if let Some(handle) = spinner {
        handle.join().map_err(|_| LockError::ThreadPanicked {
            thread: "lockbench-idle".into(),
        })?;
    }
    acc.sections_total += outcome.periods + outcome.unmeasured;
    if let Some(err) = setup_error {
        return Err(err);
    }
    // Every critical section incremented the protected counter exactly once.
    let counted = *shared.lock.lock();
    if counted != acc.sections_total {
        return Err(LockError::LostSections {
            variant: acc.variant.name().to_string(),
            ran: acc.sections_total,
            counted,
        });
    }

    // The real-time task closes the window it opened, at the latest when it stops.
    let (Some(open), Some(close)) = (window.opened.get(), window.closed.get()) else {
        return Ok(());
    };
    // The rest of the slice, when it is not a sliver.
    if close.taken_ns > point_start + cfg.sample_interval_ns / 10 {
        push_point(
            close.taken_ns,
            point_start,
            open.taken_ns,
            &mut last,
            (close.sections, close.work_ns),
        );
    }
    acc.wake.merge(&outcome.wake);
    acc.lock.merge(&outcome.lock);
    acc.wait.merge(&outcome.wait);
    for (total, (end, start)) in acc
        .site_sections
        .iter_mut()
        .zip(close.site_sections.iter().zip(&open.site_sections))
    {
        *total += end - start;
    }
    acc.periods += outcome.periods;
    acc.overruns += outcome.overruns;
    acc.measured_ns += close.release_ns - open.release_ns;
    acc.bg_ns += close.taken_ns - open.taken_ns;
    acc.sections += close.sections - open.sections;
    acc.work_ns += close.work_ns - open.work_ns;
    acc.counters = counters_sum(
        &acc.counters,
        &counters_delta(&close.counters, &open.counters),
    );
    Ok(())
}

fn counters_sum(a: &LockCounters, b: &LockCounters) -> LockCounters {
    LockCounters {
        acquisitions: a.acquisitions + b.acquisitions,
        admissions: a.admissions + b.admissions,
        refusals: a.refusals + b.refusals,
        forced_entries: a.forced_entries + b.forced_entries,
        mispredictions: a.mispredictions + b.mispredictions,
        rt_acquisitions: a.rt_acquisitions + b.rt_acquisitions,
        ceiling_boost_failures: a.ceiling_boost_failures + b.ceiling_boost_failures,
    }
}

fn counters_delta(end: &LockCounters, start: &LockCounters) -> LockCounters {
    LockCounters {
        acquisitions: end.acquisitions - start.acquisitions,
        admissions: end.admissions - start.admissions,
        refusals: end.refusals - start.refusals,
        forced_entries: end.forced_entries - start.forced_entries,
        mispredictions: end.mispredictions - start.mispredictions,
        rt_acquisitions: end.rt_acquisitions - start.rt_acquisitions,
        ceiling_boost_failures: end.ceiling_boost_failures - start.ceiling_boost_failures,
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>, LockError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(body)
        .map_err(|source| LockError::Spawn {
            thread: name.to_string(),
            source,
        })
}

fn pin(cfg: &BenchConfig, thread: &str) -> Result<(), LockError> {
    match cfg.cpu {
        None => Ok(()),
        Some(cpu) => sys::pin_to_cpu(cpu).map_err(|errno| LockError::Affinity {
            thread: thread.to_string(),
            cpu,
            source: std::io::Error::from_raw_os_error(errno),
        }),
    }
}

fn rt_thread(
    cfg: &BenchConfig,
    shared: &Shared,
    window: &Window,
    ready: mpsc::Sender<Result<(), LockError>>,
) -> RtOutcome {
    let priority = i32::from(cfg.rt_priority);
    let setup = pin(cfg, "real-time").and_then(|()| {
        sys::set_sched(SchedParams {
            policy: libc::SCHED_FIFO,
            priority,
        })
        .map_err(|errno| LockError::SchedFifo {
            thread: "real-time".into(),
            priority,
            source: std::io::Error::from_raw_os_error(errno),
        })
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    let mut out = RtOutcome::default();
    if failed {
        return out;
    }
    shared.timer.register_current_thread();
    let period = cfg.period_ns;
    let mut release = sys::monotonic_ns() + period;
    let mut measuring = false;
    // The release the window closes at, when that is after this period's.
    let mut close_at = None;
    let sites = shared.site_sections.len();
    let (mut open_sites, mut close_sites) = (Vec::with_capacity(sites), Vec::with_capacity(sites));
    while !shared.stop.load(Ordering::Relaxed) {
        // The period's work is done: publish the next release, then sleep until it.
        shared.timer.publish(release);
        sys::sleep_until(release);
        let woke = sys::monotonic_ns();
        // The window opens at this release, and closes at it unless the close was asked
        // for after it (woken late): then at the first release from the request on, after
        // this period.
        match window.request.load(Ordering::SeqCst) {
            OPEN if !measuring && window.opened.get().is_none() => {
                let _ = window
                    .opened
                    .set(shared.snapshot(release, std::mem::take(&mut open_sites)));
                measuring = true;
            }
            CLOSE if measuring => {
                let asked = window.close_asked_ns.load(Ordering::SeqCst);
                if release >= asked {
                    let _ = window
                        .closed
                        .set(shared.snapshot(release, std::mem::take(&mut close_sites)));
                    measuring = false;
                } else {
                    close_at = Some(release + (asked - release).div_ceil(period) * period);
                }
            }
            _ => {}
        }
        let locked = {
            let mut guard = shared.lock.lock();
            let locked = sys::monotonic_ns();
            *guard += 1;
            sys::busy_wall(cfg.rt_hold_ns);
            locked
        };
        if measuring {
            out.wake.record(woke.saturating_sub(release));
            out.lock.record(locked.saturating_sub(release));
            out.wait.record(locked.saturating_sub(woke));
            out.periods += 1;
        } else {
            out.unmeasured += 1;
        }
        release += period;
        let now = sys::monotonic_ns();
        if now > release {
            // Still busy when the next release came: skip the releases that were missed.
            let missed = (now - release) / period + 1;
            if measuring {
                out.overruns += match close_at {
                    // Only those before the window's end.
                    Some(end) => missed.min((end - release) / period),
                    None => missed,
                };
            }
            release += missed * period;
        }
        if let Some(end) = close_at.take() {
            // `release` is past `end` now: the request came before the clock was read.
            let _ = window
                .closed
                .set(shared.snapshot(end, std::mem::take(&mut close_sites)));
            measuring = false;
        }
    }
    if measuring {
        // Stopped with the window open: every release before `release` is counted.
        let _ = window
            .closed
            .set(shared.snapshot(release, std::mem::take(&mut close_sites)));
    }
    shared.timer.retire();
    out
}

fn background_thread(
    cfg: &BenchConfig,
    shared: &Shared,
    index: usize,
    ready: mpsc::Sender<Result<(), LockError>>,
) -> u64 {
    let name = format!("background {index}");
    // SCHED_OTHER explicitly, whatever the parent runs at.
    let setup = pin(cfg, &name).map(|()| {
        let _ = sys::set_sched(SchedParams {
            policy: libc::SCHED_OTHER,
            priority: 0,
        });
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    if failed {
        return 0;
    }
    let mut rng = Rng::new(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut sections = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        sys::busy_cpu(cfg.outside_work_ns);
        let site = match cfg.site_choice {
            SiteChoice::PerThread => index % cfg.sites.len(),
            SiteChoice::Random => rng.range(0, cfg.sites.len() as u64 - 1) as usize,
        };
        let hold = cfg.sites[site].sample(&mut rng);
        critical_section(&shared.lock, site, hold);
        sections += 1;
        shared.sections.fetch_add(1, Ordering::Relaxed);
        shared.site_sections[site].fetch_add(1, Ordering::Relaxed);
        shared
            .work_ns
            .fetch_add(hold + cfg.outside_work_ns, Ordering::Relaxed);
    }
    sections
}

/// Yields in a loop at `SCHED_IDLE` until the slice ends, so that the CPU never idles.
fn idle_spinner(cfg: &BenchConfig, shared: &Shared, ready: mpsc::Sender<Result<(), LockError>>) {
    let setup = pin(cfg, "idle spinner").map(|()| {
        let _ = sys::set_sched(SchedParams {
            policy: libc::SCHED_IDLE,
            priority: 0,
        });
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    if failed {
        return;
    }
    // Yield rather than spin: a SCHED_IDLE task still gets picked now and then (its
    // tiny weight gives it a fair share of about 0.3 %), and when it is it would keep
    // the CPU until the next tick (4 ms at HZ=250) while a background thread, maybe the
    // lock holder, waits. Yielding hands the CPU back at once to anything runnable and
    // otherwise returns at once, so the CPU never halts.
    while !shared.stop.load(Ordering::Relaxed) {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
}

/// One background critical section at call site `site`: each site is its own `lock()`
/// call, so the lock monitor keeps (and predicts) each separately.
fn critical_section(lock: &Lock<u64>, site: usize, hold_ns: u64) {
    let mut guard = match site {
        0 => lock.lock(),
        1 => lock.lock(),
        2 => lock.lock(),
        3 => lock.lock(),
        4 => lock.lock(),
        5 => lock.lock(),
        6 => lock.lock(),
        _ => lock.lock(),
    };
    *guard += 1;
    sys::busy_wall(hold_ns);
}

/// Whether the measured results meet the goal of issue 6: the delayed variant's worst
/// RT lock latency at most 25 % of the plain mutex's and below the PI mutex's, with at
/// most 20 % less background work than with the plain mutex.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct GoalCheck {
    /// The delayed variant checked.
    pub variant: String,
    /// Its worst lock latency over the plain mutex's.
    pub worst_vs_plain: f64,
    /// Its worst lock latency over the PI mutex's (if PI ran).
    pub worst_vs_pi: Option<f64>,
    /// Background work lost compared with the plain mutex (negative: gained).
    pub throughput_loss: f64,
    /// All three conditions hold.
    pub met: bool,
    /// Its worst wait for the lock after waking up, over the plain mutex's: the lock's
    /// own share of the lock latency, without the wake-up.
    pub wait_vs_plain: f64,
    /// A wake-up alone (before the lock was even tried) took longer than the plain
    /// mutex's worst lock wait, in this variant or in plain: the worst lock latencies are
    /// then set by the machine (a VM's host, an interrupt storm), not by the lock.
    pub wakeup_dominated: bool,
}

/// Checks the goal for every delayed variant in `results` (needs the plain variant).
pub fn goal_checks(results: &[VariantResult]) -> Vec<GoalCheck> {
    let find = |name: &str| results.iter().find(|r| r.variant == name);
    let Some(plain) = find("plain") else {
        return Vec::new();
    };
    let pi = find("pi");
    results
        .iter()
        .filter(|r| r.variant.starts_with("delayed"))
        .map(|r| {
            let worst_vs_plain = r.lock.max as f64 / plain.lock.max.max(1) as f64;
            let worst_vs_pi = pi.map(|pi| r.lock.max as f64 / pi.lock.max.max(1) as f64);
            let throughput_loss = 1.0 - r.bg_work_ms_per_s / plain.bg_work_ms_per_s.max(1e-9);
            let wait_vs_plain = r.lock_wait.max as f64 / plain.lock_wait.max.max(1) as f64;
            let wakeup_dominated = r.wake.max.max(plain.wake.max) > plain.lock_wait.max;
            GoalCheck {
                wait_vs_plain,
                wakeup_dominated,
                variant: r.variant.clone(),
                worst_vs_plain,
                worst_vs_pi,
                throughput_loss,
                met: worst_vs_plain <= 0.25
                    && worst_vs_pi.is_none_or(|x| x < 1.0)
                    && throughput_loss <= 0.20,
            }
        })
        .collect()
}

/// Renders the results in the shape of the paper's Table 4: one column per variant.
pub fn render_table(cfg: &BenchConfig, results: &[VariantResult]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "latlab lockbench: RT task SCHED_FIFO {} every {} µs (holds {} µs), {} SCHED_OTHER background thread{}, {}, {:.1} s per variant in {} round{}",
        cfg.rt_priority,
        cfg.period_ns / 1_000,
        cfg.rt_hold_ns / 1_000,
        cfg.background_threads,
        if cfg.background_threads == 1 { "" } else { "s" },
        cfg.cpu.map_or("not pinned".to_string(), |c| format!("all on CPU {c}")),
        cfg.duration_ns as f64 / 1e9,
        cfg.rounds,
        if cfg.rounds == 1 { "" } else { "s" },
    );
    let sites: Vec<String> = cfg
        .sites
        .iter()
        .map(|s| {
            format!(
                "{} (mean {:.0} µs, max {} µs)",
                s.name,
                s.mean_ns() / 1e3,
                s.max_ns() / 1_000
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "background: {} µs of work outside the lock, then {}: {}{}",
        cfg.outside_work_ns / 1_000,
        match cfg.site_choice {
            SiteChoice::PerThread => "thread i's own site i",
            SiteChoice::Random => "a random one of",
        },
        sites.join(", "),
        if cfg.idle_spinner {
            "; a SCHED_IDLE spinner keeps the CPU from idling"
        } else {
            ""
        }
    );
    let width = results
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(8)
        .max(9)
        + 2;
    let row = |out: &mut String, name: &str, cells: Vec<String>| {
        let _ = write!(out, "{name:<28}");
        for cell in cells {
            let _ = write!(out, "{cell:>width$}");
        }
        out.push('\n');
    };
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
    row(
        &mut out,
        "",
        results.iter().map(|r| r.variant.clone()).collect(),
    );
    for (title, pick) in [
        ("RT lock latency (µs)", 0),
        ("RT wake-up latency (µs)", 1),
        ("RT lock wait after wake-up (µs)", 2),
    ] {
        let _ = writeln!(out, "{title}");
        let summary = |r: &VariantResult| match pick {
            0 => r.lock,
            1 => r.wake,
            _ => r.lock_wait,
        };
        row(
            &mut out,
            "  min",
            results.iter().map(|r| us(summary(r).min)).collect(),
        );
        row(
            &mut out,
            "  mean",
            results
                .iter()
                .map(|r| format!("{:.1}", summary(r).mean / 1e3))
                .collect(),
        );
        row(
            &mut out,
            "  p99",
            results.iter().map(|r| us(summary(r).p99)).collect(),
        );
        row(
            &mut out,
            "  p99.9",
            results.iter().map(|r| us(summary(r).p99_9)).collect(),
        );
        row(
            &mut out,
            "  max",
            results.iter().map(|r| us(summary(r).max)).collect(),
        );
    }
    row(
        &mut out,
        "RT periods",
        results.iter().map(|r| r.periods.to_string()).collect(),
    );
    row(
        &mut out,
        "RT overruns",
        results.iter().map(|r| r.overruns.to_string()).collect(),
    );
    row(
        &mut out,
        "background sections/s",
        results
            .iter()
            .map(|r| format!("{:.0}", r.bg_sections_per_s))
            .collect(),
    );
    for (index, site) in cfg.sites.iter().enumerate() {
        row(
            &mut out,
            &format!("  {}/s", site.name),
            results
                .iter()
                .map(|r| {
                    r.bg_sections_per_s_by_site
                        .get(index)
                        .map_or("-".into(), |x| format!("{x:.0}"))
                })
                .collect(),
        );
    }
    row(
        &mut out,
        "background work (ms/s)",
        results
            .iter()
            .map(|r| format!("{:.0}", r.bg_work_ms_per_s))
            .collect(),
    );
    if let Some(plain) = results.iter().find(|r| r.variant == "plain") {
        row(
            &mut out,
            "  vs plain",
            results
                .iter()
                .map(|r| {
                    format!(
                        "{:+.1} %",
                        100.0 * (r.bg_work_ms_per_s / plain.bg_work_ms_per_s.max(1e-9) - 1.0)
                    )
                })
                .collect(),
        );
        row(
            &mut out,
            "worst lock latency vs plain",
            results
                .iter()
                .map(|r| {
                    format!(
                        "{:.0} %",
                        100.0 * r.lock.max as f64 / plain.lock.max.max(1) as f64
                    )
                })
                .collect(),
        );
    }
    row(
        &mut out,
        "refusals",
        results
            .iter()
            .map(|r| r.counters.refusals.to_string())
            .collect(),
    );
    row(
        &mut out,
        "forced entries",
        results
            .iter()
            .map(|r| r.counters.forced_entries.to_string())
            .collect(),
    );
    row(
        &mut out,
        "mispredictions",
        results
            .iter()
            .map(|r| r.counters.mispredictions.to_string())
            .collect(),
    );
    if results
        .iter()
        .any(|r| r.counters.ceiling_boost_failures > 0)
    {
        row(
            &mut out,
            "ceiling boost failures",
            results
                .iter()
                .map(|r| r.counters.ceiling_boost_failures.to_string())
                .collect(),
        );
    }
    if results.iter().any(|r| r.interrupted) {
        let measured: Vec<String> = results
            .iter()
            .map(|r| format!("{} {:.1} s", r.variant, r.measured_s))
            .collect();
        let _ = writeln!(out, "(interrupted; measured: {})", measured.join(", "));
    }
    for check in goal_checks(results) {
        let _ = writeln!(
            out,
            "goal {}: worst lock latency {:.0} % of plain (<= 25 %), {} PI's, background work {:+.1} % vs plain (loss <= 20 %): {}",
            check.variant,
            100.0 * check.worst_vs_plain,
            match check.worst_vs_pi {
                Some(x) if x < 1.0 => format!("below ({:.0} % of)", 100.0 * x),
                Some(x) => format!("NOT below ({:.0} % of)", 100.0 * x),
                None => "no run to compare with".to_string(),
            },
            -100.0 * check.throughput_loss,
            if check.met { "met" } else { "NOT met" }
        );
    }
    let plain = results.iter().find(|r| r.variant == "plain");
    let dominated: Vec<GoalCheck> = goal_checks(results)
        .into_iter()
        .filter(|c| c.wakeup_dominated && !c.met)
        .collect();
    if let (Some(plain), false) = (plain, dominated.is_empty()) {
        let waits: Vec<String> = dominated
            .iter()
            .map(|c| format!("{} {:.0} %", c.variant, 100.0 * c.wait_vs_plain))
            .collect();
        let worst_wake = results.iter().map(|r| r.wake.max).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "note: wake-ups alone took up to {:.1} ms, longer than plain's worst lock wait ({:.1} ms): \
             the worst lock latencies above are set by the machine, not the lock. Worst lock wait \
             after the wake-up vs plain: {}. Run on a quieter machine (a VM's host stops vCPUs), \
             or longer with more --rounds.",
            worst_wake as f64 / 1e6,
            plain.lock_wait.max as f64 / 1e6,
            waits.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark tests run a real-time task and busy background threads (pinned to
    /// CPU 0 by default); running two at once would measure each other.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn privileged() -> Option<std::sync::MutexGuard<'static, ()>> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
        }
        crate::test_support::skip_or_fail("the lock benchmark's SCHED_FIFO task");
        None
    }

    fn short() -> BenchConfig {
        BenchConfig {
            duration_ns: 400 * MS,
            warmup_ns: 200 * MS,
            sample_interval_ns: 100 * MS,
            cpu: Some(0),
            ..BenchConfig::default()
        }
    }

    fn fake(variant: &str, worst_ns: u64, work: f64) -> VariantResult {
        let lock = Summary {
            count: 10,
            max: worst_ns,
            ..Summary::default()
        };
        VariantResult {
            variant: variant.into(),
            measured_s: 1.0,
            interrupted: false,
            periods: 10,
            overruns: 0,
            wake: Summary::default(),
            lock,
            lock_wait: Summary::default(),
            bg_sections: 100,
            bg_sections_per_s: 100.0,
            bg_sections_per_s_by_site: vec![40.0, 30.0, 30.0],
            bg_work_ms_per_s: work,
            counters: LockCounters::default(),
            sites: Vec::new(),
            throughput: Vec::new(),
        }
    }

    #[test]
    fn a_goal_missed_because_of_slow_wake_ups_says_so() {
        // A VM's host stopped the vCPU for 7 ms in plain and 3 ms in delayed-quantile: the
        // worst lock latencies are wake-ups, while the lock's own wait fell to 5 %.
        let with_wake = |variant: &str, wake_ms: f64, wait_ms: f64| {
            let ns = |ms: f64| (ms * 1e6) as u64;
            let mut r = fake(variant, ns(wake_ms).max(ns(wait_ms)), 600.0);
            r.wake.max = ns(wake_ms);
            r.lock_wait.max = ns(wait_ms);
            r
        };
        let results = [
            with_wake("plain", 7.0, 2.0),
            with_wake("pi", 8.0, 2.0),
            with_wake("delayed-quantile", 3.0, 0.1),
        ];
        let check = &goal_checks(&results)[0];
        assert!(!check.met && check.wakeup_dominated, "{check:?}");
        assert!((check.wait_vs_plain - 0.05).abs() < 1e-9, "{check:?}");
        let table = render_table(&BenchConfig::default(), &results);
        assert!(
            table.contains("wake-ups alone took up to 8.0 ms")
                && table.contains("delayed-quantile 5 %"),
            "{table}"
        );
        // Quick wake-ups: the lock decided the worst case, no note.
        let quiet = [
            with_wake("plain", 0.05, 2.0),
            with_wake("delayed-quantile", 0.05, 1.0),
        ];
        assert!(!goal_checks(&quiet)[0].wakeup_dominated);
        assert!(!render_table(&BenchConfig::default(), &quiet).contains("note:"));
    }

    #[test]
    fn goal_needs_a_quarter_of_plain_below_pi_and_at_most_a_fifth_less_work() {
        let results = [
            fake("plain", 2_000_000, 600.0),
            fake("pi", 1_000_000, 600.0),
            fake("delayed-max", 400_000, 500.0),
            fake("delayed-ewma", 600_000, 600.0),
            fake("delayed-quantile", 300_000, 420.0),
        ];
        let checks = goal_checks(&results);
        let met: Vec<_> = checks.iter().map(|c| (c.variant.as_str(), c.met)).collect();
        assert_eq!(
            met,
            [
                ("delayed-max", true),
                ("delayed-ewma", false),
                ("delayed-quantile", false)
            ]
        );
        assert!((checks[0].worst_vs_plain - 0.2).abs() < 1e-9);
        assert!((checks[2].throughput_loss - 0.3).abs() < 1e-9);
        let table = render_table(&BenchConfig::default(), &results);
        insta::assert_snapshot!(table);
        for name in [
            "plain",
            "pi",
            "delayed-max",
            "delayed-ewma",
            "delayed-quantile",
        ] {
            assert!(table.contains(name), "{table}");
        }
        assert!(
            table.contains("goal delayed-max") && table.contains(": met"),
            "{table}"
        );
        assert!(goal_checks(&results[1..]).is_empty(), "no plain, no goal");
    }

    #[test]
    fn stopping_before_the_measurement_is_an_error_not_a_panic() {
        let err = run_variant(&short(), BenchVariant::Plain, &|| true).unwrap_err();
        assert!(matches!(err, LockError::NothingMeasured { .. }), "{err}");
    }

    #[test]
    fn variant_names_round_trip_and_unknown_ones_list_the_choices() {
        for v in BenchVariant::ALL {
            assert_eq!(v.name().parse::<BenchVariant>().unwrap(), v);
        }
        let err = "fancy".parse::<BenchVariant>().unwrap_err().to_string();
        assert!(err.contains("delayed-quantile"), "{err}");
    }

    #[test]
    fn invalid_settings_are_rejected() {
        let cfg = BenchConfig {
            rt_priority: 0,
            ..BenchConfig::default()
        };
        assert!(cfg.validate().is_err());
        let mut cfg = BenchConfig::default();
        cfg.sites.clear();
        assert!(cfg.validate().is_err());
        let cfg = BenchConfig {
            period_ns: 10_000,
            ..BenchConfig::default()
        };
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn benchmark_runs_every_variant_and_counts_consistently() {
        let Some(_serial) = privileged() else {
            return;
        };
        // Not pinned: the background's progress below needs CPU time within a 400 ms
        // window. Pinned to CPU 0 on the shared VM under stress-ng, it once completed no
        // section in a whole window while the RT task ran normally (CPU 0 was taken by
        // other work); free to use either CPU, one busy CPU cannot starve it.
        let cfg = BenchConfig {
            cpu: None,
            ..short()
        };
        for variant in [
            BenchVariant::Plain,
            BenchVariant::Pi,
            BenchVariant::Ceiling,
            BenchVariant::DelayedQuantile,
        ] {
            let r = run_variant(&cfg, variant, &|| false).unwrap();
            assert_eq!(r.variant, variant.name());
            // The window opens and closes at releases, one every 4 ms: each release in
            // it ran as a period or was missed (an overrun), however late a thread ran.
            // It closes at the first release from the end of the slice on, so a stall
            // across the end is measured, not cut off.
            assert!(r.measured_s >= 0.4, "{r:?}");
            let releases = r.measured_s / 0.004;
            assert!(
                (releases - releases.round()).abs() < 1e-6,
                "a whole number of periods: {r:?}"
            );
            assert_eq!(
                r.periods + r.overruns,
                releases.round() as u64,
                "{releases}: {r:?}"
            );
            assert_eq!(r.lock.count, r.periods);
            assert!(
                r.lock.min >= r.wake.min,
                "the lock is taken after waking: {r:?}"
            );
            assert!(r.bg_sections > 0 && r.bg_work_ms_per_s > 0.0, "{r:?}");
            assert!(
                !r.throughput.is_empty() && r.throughput.len() <= 5,
                "{:?}",
                r.throughput
            );
            let sites = r
                .sites
                .iter()
                .filter(|s| s.location.contains("bench.rs"))
                .count();
            // Three background sites, the RT task's and the final count check.
            assert_eq!(sites, 5, "{:?}", r.sites);
            if variant == BenchVariant::DelayedQuantile {
                // The counters are read at the window's releases, before the RT task's lock.
                assert_eq!(r.counters.rt_acquisitions, r.periods, "{r:?}");
                assert!(r.counters.admissions > 0);
            } else {
                assert_eq!(r.counters.refusals, 0);
            }
        }
    }

    #[test]
    fn a_stop_request_ends_the_variant_early_with_what_was_measured() {
        let Some(_serial) = privileged() else {
            return;
        };
        let mut cfg = short();
        cfg.duration_ns = 60_000 * MS;
        cfg.warmup_ns = 0;
        // The first poll comes before the threads start, the second once they are up and
        // the measurement has begun (starting them can take a while on a busy machine):
        // stop 300 ms after that.
        let polls = std::cell::Cell::new(0u32);
        let measuring_since = std::cell::Cell::new(None::<std::time::Instant>);
        let r = run_variant(&cfg, BenchVariant::DelayedMax, &|| {
            polls.set(polls.get() + 1);
            if polls.get() == 2 {
                measuring_since.set(Some(std::time::Instant::now()));
            }
            measuring_since
                .get()
                .is_some_and(|t| t.elapsed() > std::time::Duration::from_millis(300))
        })
        .unwrap();
        assert!(r.interrupted);
        assert!(r.measured_s < 5.0, "{}", r.measured_s);
        // The window closes at the first release from the stop on, at least 300 ms after
        // it opened, and accounts for each release, even if the RT task was stalled
        // through most of them (overruns then; it ran at least the opening period).
        let releases = r.measured_s / 0.004;
        assert!(releases >= 75.0, "{r:?}");
        assert_eq!(
            r.periods + r.overruns,
            releases.round() as u64,
            "{releases}: {r:?}"
        );
        assert!(r.periods > 0, "{r:?}");
    }
}
