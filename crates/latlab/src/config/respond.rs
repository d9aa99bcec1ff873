//! `latlab respond`'s arguments resolved into the configuration the libraries take.

use anyhow::Context;

use latlab_measure::requirements::Requirement;
use latlab_respond::channel::Channel;
use latlab_respond::measure::RespondConfig;
use latlab_respond::result::CheckOn;
use latlab_rt::sched::{self, Policy};

use crate::cmd::respond::RespondArgs;
use crate::lifecycle::MeasuringConfig;

/// The paper's sample count.
const DEFAULT_COUNT: u64 = 1_000_000;

/// A response measurement, fully resolved.
#[derive(Debug)]
pub struct RespondRun {
    /// The measurement.
    pub config: RespondConfig,
    /// The requirements the result is checked against.
    pub requirements: Vec<Requirement>,
    /// Which latency they are checked on.
    pub check_on: CheckOn,
    /// What the set-up could not do as well as asked (e.g. one CPU for both sides).
    pub warnings: Vec<String>,
    /// The flags every measuring command shares.
    pub measuring: MeasuringConfig,
    /// Hold /dev/cpu_dma_latency at 0.
    pub hold_dma_latency: bool,
}

/// Validates `args` into a [`RespondRun`].
pub fn resolve(args: &RespondArgs) -> anyhow::Result<RespondRun> {
    let usable = sched::usable_cpus();
    let check_cpu = |cpu: usize, flag: &str| -> anyhow::Result<usize> {
        super::check_usable(cpu, &usable, flag).map(|()| cpu)
    };
    let first = *usable.first().context("no usable CPU")?;
    let last = *usable.last().context("no usable CPU")?;
    let responder_cpu = check_cpu(args.responder_cpu.unwrap_or(last), "--responder-cpu")?;
    let stimulus_cpu = match args.stimulus_cpu {
        Some(cpu) => check_cpu(cpu, "--stimulus-cpu")?,
        None if first == responder_cpu => last,
        None => first,
    };
    let channel = match &args.serial {
        Some(spec) => Channel::serial(spec, args.baud),
        None => args.channel.clone(),
    };
    let policy: Policy = args.policy.parse().map_err(anyhow::Error::msg)?;
    let mut requirements = args.requirement.requirements();
    requirements.retain(|r| !matches!(r, Requirement::PeriodTolerance { .. }));
    let count = match (args.count, args.duration) {
        (None, None) => Some(DEFAULT_COUNT),
        (count, _) => count,
    };
    let config = RespondConfig {
        channel,
        gpio: args.gpio.clone(),
        count,
        duration_ns: args.duration,
        gap: args.gap,
        policy,
        priority: args.priority,
        responder_cpu,
        stimulus_cpu,
        lock_memory: true,
        timeout_ns: args.timeout,
    };
    config.validate()?;
    Ok(RespondRun {
        warnings: config.warnings(),
        config,
        requirements,
        check_on: args.check_on,
        measuring: args.measuring.resolve(false),
        hold_dma_latency: !args.no_dma_latency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use latlab_respond::measure::Gap;

    fn parse(args: &[&str]) -> RespondArgs {
        let mut full = vec!["latlab", "respond"];
        full.extend_from_slice(args);
        match crate::cli::Cli::parse_from(full).command {
            crate::cli::Command::Respond(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_are_the_papers_test() {
        let r = resolve(&parse(&[])).unwrap();
        assert_eq!(r.config.count, Some(1_000_000));
        assert_eq!(r.config.channel, Channel::Pty);
        assert_eq!(r.config.policy, Policy::Fifo);
        assert_eq!(r.config.priority, 95);
        assert!(matches!(r.config.gap, Gap::Random { .. }));
        let usable = sched::usable_cpus();
        assert_eq!(r.config.responder_cpu, *usable.last().unwrap());
        if usable.len() > 1 {
            assert_ne!(r.config.stimulus_cpu, r.config.responder_cpu);
        }
    }

    #[test]
    fn moblin_profile_is_the_40us_reference_without_period() {
        let r = resolve(&parse(&["--profile", "moblin-ivi"])).unwrap();
        assert_eq!(
            r.requirements,
            vec![Requirement::MaxLatency { limit_ns: 40_000 }]
        );
    }

    #[test]
    fn duration_alone_means_no_count() {
        let r = resolve(&parse(&["--duration", "5s"])).unwrap();
        assert_eq!(r.config.count, None);
        assert_eq!(r.config.duration_ns, Some(5_000_000_000));
    }

    #[test]
    fn serial_pair_resolves_to_tx_and_rx() {
        let r = resolve(&parse(&["--serial", "/dev/ttyS0,/dev/ttyS1"])).unwrap();
        assert_eq!(
            r.config.channel,
            Channel::Serial {
                tx: "/dev/ttyS0".into(),
                rx: "/dev/ttyS1".into(),
                baud: 115_200
            }
        );
    }
}
