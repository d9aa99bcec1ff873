//! The goal of issue 6, checked on the results.

use serde::Serialize;

use super::VariantResult;

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

/// The variants the goal compares (plain, pi, delayed-quantile) that
/// `variants` lacks: `--require-goal` needs all three.
pub fn goal_variants_missing(variants: &[super::BenchVariant]) -> Vec<super::BenchVariant> {
    use super::BenchVariant::{DelayedQuantile, Pi, Plain};
    [Plain, Pi, DelayedQuantile]
        .into_iter()
        .filter(|needed| !variants.contains(needed))
        .collect()
}

/// True when delayed-quantile met the goal against both plain and pi.
pub fn goal_met(results: &[VariantResult]) -> bool {
    goal_checks(results).iter().any(|c| {
        c.variant == super::BenchVariant::DelayedQuantile.name() && c.met && c.worst_vs_pi.is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::super::BenchVariant::{DelayedQuantile, Pi, Plain};
    use super::*;

    #[test]
    fn the_goal_needs_plain_pi_and_delayed_quantile() {
        assert_eq!(goal_variants_missing(&[Plain, Pi, DelayedQuantile]), vec![]);
        assert_eq!(goal_variants_missing(&[DelayedQuantile]), vec![Plain, Pi]);
        assert!(!goal_met(&[]));
    }
}
