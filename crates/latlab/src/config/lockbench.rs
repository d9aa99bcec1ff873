//! `latlab lockbench`'s arguments resolved into the benchmark's or the
//! simulation's configuration.

use anyhow::Context;

use latlab_lock::bench::{BenchConfig, BenchVariant};
use latlab_lock::shape::HoldShape;
use latlab_lock::sim::SimConfig;
use latlab_rt::sched;

use crate::cmd::lockbench::LockbenchArgs;

/// `--site`: a critical section's hold-time shape.
pub fn parse_shape(text: &str) -> Result<HoldShape, String> {
    text.parse()
        .map_err(|e: latlab_lock::LockError| e.to_string())
}

/// Validates `args` into the benchmark's configuration and its variants
/// (each once, in the order given).
pub fn resolve(args: &LockbenchArgs) -> anyhow::Result<(BenchConfig, Vec<BenchVariant>)> {
    let variants = BenchVariant::parse_list(&args.variants)?;
    let usable = sched::usable_cpus();
    let cpu = match args.cpu.as_deref() {
        Some("none") => None,
        Some(text) => {
            let cpu: usize = text
                .trim()
                .parse()
                .with_context(|| format!("--cpu {text:?}: expected a CPU number or `none`"))?;
            super::check_usable(cpu, &usable, "--cpu")?;
            Some(cpu)
        }
        None => usable.last().copied(),
    };
    let defaults = BenchConfig::default();
    let cfg = BenchConfig {
        period_ns: args.period,
        rt_priority: args.priority,
        rt_hold_ns: args.rt_hold,
        cpu,
        background_threads: usize::from(args.threads),
        sites: if args.sites.is_empty() {
            defaults.sites.clone()
        } else {
            args.sites.clone()
        },
        site_choice: args.site_choice.parse()?,
        outside_work_ns: args.outside_work,
        duration_ns: args.duration,
        rounds: args.rounds,
        warmup_ns: args.warmup,
        sample_interval_ns: args.sample_interval,
        delayed: latlab_lock::DelayedConfig {
            margin_ns: args.margin.unwrap_or(defaults.delayed.margin_ns),
            max_refusals: args.max_refusals,
            ..defaults.delayed
        },
        quantile: defaults.quantile,
        seed: args.seed,
        idle_spinner: !args.no_idle_spinner,
    };
    cfg.validate()?;
    Ok((cfg, variants))
}

/// Validates `args` into the configuration of `--simulate`.
pub fn resolve_simulation(args: &LockbenchArgs) -> anyhow::Result<SimConfig> {
    let cfg = SimConfig {
        seed: args.seed,
        periods: args.periods,
        rt_period_ns: args.period,
        margin_ns: args.margin.unwrap_or(0),
        max_refusals: args.max_refusals,
        ..SimConfig::default()
    };
    Ok(cfg
        .with_sites(&args.sites)?
        .with_prediction(args.predictor.parse()?))
}
