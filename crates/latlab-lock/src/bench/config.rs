//! What the benchmark runs: the lock variants and the settings.

use std::str::FromStr;

use serde::Serialize;

use crate::lock::{DelayedConfig, Variant};
use crate::predict::PredictorKind;
use crate::shape::HoldShape;
use crate::timer::ReleaseTimer;
use crate::LockError;

pub(crate) const MS: u64 = 1_000_000;

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

    /// The variants `names` name (as [`FromStr`] reads them), each once, in
    /// the order given.
    pub fn parse_list(names: &[String]) -> Result<Vec<BenchVariant>, LockError> {
        let mut variants = Vec::new();
        for name in names {
            let variant: BenchVariant = name.parse()?;
            if !variants.contains(&variant) {
                variants.push(variant);
            }
        }
        Ok(variants)
    }

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

    pub(crate) fn lock_variant(self, cfg: &BenchConfig, timer: &ReleaseTimer) -> Variant {
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
        let round_ns = self.duration_ns / u64::from(self.rounds);
        if self.period_ns > round_ns {
            return Err(LockError::InvalidConfig(format!(
                "the period ({}) is longer than a round ({}: the duration split into {} \
                 rounds): a round would end before its first period; shorten --period, or \
                 lengthen --duration or lower --rounds",
                latlab_measure::units::format_ns(self.period_ns),
                latlab_measure::units::format_ns(round_ns),
                self.rounds
            )));
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
