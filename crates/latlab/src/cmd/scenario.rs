//! `latlab scenario NAME`: the papers' experiments as one command each,
//! ending in a comparison report. Each step is this same binary run with the
//! step's arguments, so a scenario is exactly the commands it prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use latlab_report::html::{Document, Opening};

use crate::cmd::characterize;
use crate::cmd::report::{read_document, write_report_opening, OutputArgs};

use latlab_scenario::{run_steps, Options, Plan, StepCodes};

/// The experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Name {
    /// Start here: does this machine meet a deadline, and if not why? Idle and under every
    /// load, the loaded wake-ups explained, the papers' requirement classes met or missed.
    Characterize,
    /// Emblix: 1 ms periodic SCHED_FIFO task, disk load vs none.
    Emblix,
    /// Moblin: 2 ms periodic-task accuracy, light vs full load.
    Moblin,
    /// MontaVista: a long run, share of samples under 10 µs and the worst case, idle vs loaded.
    Montavista,
    /// KTAS: 100 µs itimer task, 10,000 periods, heavy network and I/O load vs none.
    Ktas,
    /// Delayed locking: lockbench on this machine plus the simulator.
    DelayedLocking,
}

/// Arguments of `latlab scenario`.
#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// Which experiment.
    #[arg(value_enum)]
    pub name: Name,
    /// A smoke run: a few seconds per step instead of the paper's lengths.
    #[arg(long)]
    pub quick: bool,
    /// Directory for the steps' JSON results and the report
    /// [default: latlab-scenarios/<name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// CPUs to measure on (passed to `latlab run --cpus`).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Length of each measurement step (e.g. `30s`, `10m`) [default: characterize 30s,
    /// emblix and moblin 60s, montavista 10m; ktas counts periods and delayed-locking
    /// has its own lengths, so neither takes it].
    #[arg(long, value_name = "DURATION", conflicts_with = "quick",
          value_parser = latlab_rt::duration::length_ns)]
    pub duration: Option<u64>,
    /// characterize: print each step's whole output (every table, the trace analysis) instead
    /// of its verdict line.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs the steps, then writes the comparison report.
pub fn execute(args: ScenarioArgs) -> anyhow::Result<ExitCode> {
    let name = clap::ValueEnum::to_possible_value(&args.name)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let plan = Plan::of(
        &name,
        Options {
            quick: args.quick,
            cpus: args.cpus.as_deref(),
            duration: args.duration,
            verbose: args.verbose,
        },
    );
    if args.duration.is_some() && plan.scenario.length.is_none() {
        bail!(
            "--duration does not apply to scenario {name}: ktas runs a count of periods \
             (10,000) and delayed-locking its own benchmark lengths; use --quick for a short run"
        );
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("latlab-scenarios").join(&name));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the scenario directory {}", dir.display()))?;
    // Ctrl-C or SIGTERM stops the step running (it writes what it measured)
    // and the scenario after it, with the report of the steps so far.
    latlab_rt::stop::install_with(latlab_rt::stop::Signals::AlwaysCleanUp)?;
    let exe = std::env::current_exe().context("finding the latlab binary to run the steps")?;
    let codes = StepCodes {
        requirement_missed: i32::from(crate::cmd::EXIT_REQUIREMENT_FAILED),
        suspect: i32::from(crate::cmd::EXIT_SUSPECT),
    };
    let outcome = run_steps(&exe, &name, &plan, &dir, codes)?;
    let documents = outcome
        .results
        .iter()
        .map(|path| read_document(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if plan.scenario.share_under_10us {
        for (step, doc) in plan.steps.iter().zip(&documents) {
            if let Document::Run(run) = doc {
                eprint!("{}", latlab_report::montavista::figures(step.label, run));
            }
        }
    }
    let out = OutputArgs {
        output: dir.join("report.html"),
        labels: plan
            .steps
            .iter()
            .take(documents.len())
            .map(|s| s.label.to_string())
            .collect(),
        title: format!("latlab scenario {name}: {}", plan.scenario.title),
        png: None,
    };
    let answer = match args.name {
        Name::Characterize => characterize::of(&documents)?,
        _ => None,
    };
    let mut opening = match &answer {
        Some(c) => c.opening(),
        None => Opening::paragraphs(
            &plan
                .scenario
                .intro
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
        ),
    };
    if args.quick {
        opening.paragraphs.push(
            "Quick smoke run (--quick): a few seconds per step, not the paper's lengths.".into(),
        );
    }
    write_report_opening(documents, &out, &opening)?;
    if let Some(c) = &answer {
        characterize::print_summary(c, &dir, &out.output)?;
    }
    if outcome.suspect {
        eprintln!(
            "a step's measurement is suspect: wake-ups came before their intended time (exit code 3)"
        );
        return Ok(ExitCode::from(crate::cmd::EXIT_SUSPECT));
    }
    if outcome.exceeded {
        eprintln!("a requirement of the scenario was not met (exit code 2)");
        return Ok(ExitCode::from(crate::cmd::EXIT_REQUIREMENT_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_scenario::SCENARIOS;

    #[test]
    fn every_scenario_name_has_a_table_entry() {
        for name in <Name as clap::ValueEnum>::value_variants() {
            let value = clap::ValueEnum::to_possible_value(name).expect("not skipped");
            let entries = SCENARIOS.iter().filter(|s| s.name == value.get_name());
            assert_eq!(entries.count(), 1, "{name:?}");
        }
        assert_eq!(
            SCENARIOS.len(),
            <Name as clap::ValueEnum>::value_variants().len()
        );
    }
}
