//! Example results and configurations shared by this crate's tests and the
//! renderers' tests (latlab-report), so both check the same data.

use crate::bench::VariantResult;
use crate::sim::SimConfig;
use crate::LockCounters;
use latlab_measure::stats::Summary;

/// A benchmark result for `variant` whose worst lock latency is `worst_ns` and
/// whose background threads did `work` ms of work per second.
pub fn variant_result(variant: &str, worst_ns: u64, work: f64) -> VariantResult {
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

/// A result whose worst wake-up took `wake_ms` and worst lock wait `wait_ms`
/// (the worst lock latency is the larger of the two).
pub fn variant_with_wake(variant: &str, wake_ms: f64, wait_ms: f64) -> VariantResult {
    let ns = |ms: f64| (ms * 1e6) as u64;
    let mut r = variant_result(variant, ns(wake_ms).max(ns(wait_ms)), 600.0);
    r.wake.max = ns(wake_ms);
    r.lock_wait.max = ns(wait_ms);
    r
}

/// A VM's host stopped the vCPU for 7 ms in plain and 3 ms in
/// delayed-quantile: the worst lock latencies are wake-ups, while the lock's
/// own wait fell to 5 %.
pub fn slow_wake_ups() -> [VariantResult; 3] {
    [
        variant_with_wake("plain", 7.0, 2.0),
        variant_with_wake("pi", 8.0, 2.0),
        variant_with_wake("delayed-quantile", 3.0, 0.1),
    ]
}

/// Quick wake-ups: the lock decided the worst case.
pub fn quick_wake_ups() -> [VariantResult; 2] {
    [
        variant_with_wake("plain", 0.05, 2.0),
        variant_with_wake("delayed-quantile", 0.05, 1.0),
    ]
}

/// The five variants of a run where delayed-max alone meets the goal.
pub fn five_variants() -> [VariantResult; 5] {
    [
        variant_result("plain", 2_000_000, 600.0),
        variant_result("pi", 1_000_000, 600.0),
        variant_result("delayed-max", 400_000, 500.0),
        variant_result("delayed-ewma", 600_000, 600.0),
        variant_result("delayed-quantile", 300_000, 420.0),
    ]
}

/// A short seeded simulation (1 500 periods after 100 of warm-up).
pub fn short_sim(seed: u64) -> SimConfig {
    SimConfig {
        seed,
        periods: 1_500,
        warmup_periods: 100,
        ..SimConfig::default()
    }
}
