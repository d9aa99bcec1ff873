//! What a simulation measured: one run, and the two runs compared.

use latlab_measure::stats::Summary;
use serde::Serialize;

use super::SimConfig;

/// The results of one simulated run.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SimRun {
    /// Whether delayed locking was on.
    pub delayed: bool,
    /// OS latency of the real-time task (release to scheduled), ns.
    pub latency: Summary,
    /// Simulated time measured, seconds.
    pub measured_s: f64,
    /// Kilobytes the sender got acknowledged in the measured time.
    pub sent_kb: u64,
    /// Sender throughput, KB/s.
    pub kb_per_s: f64,
    /// Mean time per kilobyte (the paper's Figure 13 metric), µs.
    pub us_per_kb: f64,
    /// Section entries the admission rule allowed.
    pub admissions: u64,
    /// Times a section entry was refused.
    pub refusals: u64,
    /// Entries forced after `max_refusals` refusals.
    pub forced_entries: u64,
    /// Admitted sections that were still running at the release they were checked against.
    pub mispredictions: u64,
    /// Fraction of the measured time the CPU was idle.
    pub idle_fraction: f64,
    /// Wall-clock hold time of each lock, interrupts included (what the paper's Table 3
    /// measured), ns.
    pub holds: [Summary; 3],
}

/// Both runs and the comparison, the simulated counterpart of the paper's Table 4.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SimComparison {
    /// The parameters.
    pub config: SimConfig,
    /// Without delayed locking.
    pub without: SimRun,
    /// With delayed locking.
    pub with: SimRun,
}

impl SimComparison {
    /// Worst-case latency with delayed locking over without.
    pub fn worst_ratio(&self) -> f64 {
        self.with.latency.max as f64 / self.without.latency.max.max(1) as f64
    }

    /// Mean latency with delayed locking over without.
    pub fn mean_ratio(&self) -> f64 {
        self.with.latency.mean / self.without.latency.mean.max(1.0)
    }

    /// Sender throughput lost to delayed locking, as a fraction of the throughput
    /// without it.
    pub fn sender_cost(&self) -> f64 {
        1.0 - self.with.kb_per_s / self.without.kb_per_s.max(f64::MIN_POSITIVE)
    }
}
