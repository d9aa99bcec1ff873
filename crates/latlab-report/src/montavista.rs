//! MontaVista's figures of a run ("Embedded Linux is Ready for Real-Time",
//! 2002): the share of samples at or below 10 µs and the worst case, and the
//! paper's split of the latency into interrupt and preemption latency (what
//! `latlab scenario montavista` prints at its end).

use latlab_measure::result::{LatencyPart, LatencySplit, RunResult};
use latlab_measure::units::format_ns;

/// MontaVista's preemption-latency figures (300 MHz Celeron, RTC at 2
/// kHz, 730 M samples, Lmbench and Netperf as the load): (share of samples
/// under 10 µs, worst case ns), unloaded and loaded.
pub const PAPER: [(f64, u64); 2] = [(0.9947, 84_000), (0.9084, 14_600_000)];

/// MontaVista's threshold: samples at or below it count, ns.
pub const THRESHOLD_NS: u64 = 10_000;

/// The share (0-1) of the run's samples at or below 10 µs.
pub fn share_under_10us(run: &RunResult) -> f64 {
    let h = &run.overall.histogram;
    h.count_at_or_below(THRESHOLD_NS) as f64 / h.count().max(1) as f64
}

/// The run's figures in two lines: `label: 99.470 % of N samples at or
/// below 10 µs, worst 84.0 us`, then the split ([`split_line`]) indented.
pub fn figures(label: &str, run: &RunResult) -> String {
    format!(
        "{label}: {:.3} % of {} samples at or below 10 µs, worst {}\n  {}\n",
        share_under_10us(run) * 100.0,
        run.overall.histogram.count(),
        format_ns(run.overall.latency.max),
        split_line(run.overall.split.as_ref())
    )
}

/// A run's interrupt and preemption latency in one line (p50, p99, max),
/// or why it has none.
pub fn split_line(split: Option<&LatencySplit>) -> String {
    let Some(split) = split else {
        return "no interrupt/preemption split (the run had no BPF; its note says why)".into();
    };
    let part = |name: &str, p: &LatencyPart| {
        format!(
            "{name} p50 {}, p99 {}, max {}",
            format_ns(p.summary.p50),
            format_ns(p.summary.p99),
            format_ns(p.summary.max)
        )
    };
    format!(
        "{}; {} ({} timer wake-ups)",
        part("interrupt latency", &split.interrupt_latency),
        part("preemption latency", &split.preemption_latency),
        split.timer_wakeups
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_a_split_says_why() {
        assert!(split_line(None).starts_with("no interrupt/preemption split"));
    }
}
