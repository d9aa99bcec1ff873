//! What the benchmark measured: one variant's figures.

use latlab_measure::stats::Summary;
use serde::Serialize;

use crate::lock::LockCounters;
use crate::monitor::SiteStats;

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
