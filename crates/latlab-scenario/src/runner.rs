//! Runs a plan's steps: each is the latlab binary run with the step's
//! arguments and `--json DIR/<file>.json`, one after the other, so a
//! scenario is exactly the commands it prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use crate::Plan;

/// The exit codes of latlab that end a step without ending the scenario.
#[derive(Debug, Clone, Copy)]
pub struct StepCodes {
    /// A requirement was missed: the scenario goes on and says so at the end.
    pub requirement_missed: i32,
    /// The measurement is suspect: likewise.
    pub suspect: i32,
}

/// How the steps ended: the result files they wrote, in step order, and
/// whether one missed a requirement or measured suspect figures.
#[derive(Debug, Default)]
pub struct StepsRun {
    /// One result file per step run (fewer than the plan's steps after a stop).
    pub results: Vec<PathBuf>,
    /// A step missed a requirement.
    pub exceeded: bool,
    /// A step's measurement was suspect.
    pub suspect: bool,
}

/// Runs each step of `plan` as `exe`, until the last or until Ctrl-C or
/// SIGTERM (`latlab_rt::stop`), which the running step is given to end on.
pub fn run_steps(
    exe: &Path,
    name: &str,
    plan: &Plan,
    dir: &Path,
    codes: StepCodes,
) -> anyhow::Result<StepsRun> {
    let mut run = StepsRun::default();
    for (i, step) in plan.steps.iter().enumerate() {
        let json = dir.join(format!("{}.json", step.file));
        let _ = std::fs::remove_file(&json);
        eprintln!(
            "\n== scenario {name}, step {}/{}: {}\n== latlab {} --json {}",
            i + 1,
            plan.steps.len(),
            step.label,
            step.args.join(" "),
            json.display()
        );
        let mut child = Command::new(exe)
            .args(&step.args)
            .arg("--json")
            .arg(&json)
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let status =
            latlab_rt::process::wait_passing_stop(&mut child).context("waiting for the step")?;
        match status.code() {
            Some(0) => {}
            Some(code) if code == codes.requirement_missed => run.exceeded = true,
            Some(code) if code == codes.suspect => run.suspect = true,
            _ => bail!(
                "scenario {name}: step {} ({}) failed ({status}); its message is above. \
                 Results so far are in {}",
                i + 1,
                step.label,
                dir.display()
            ),
        }
        run.results.push(json);
        if latlab_rt::stop::requested() {
            eprintln!(
                "\n== scenario {name} stopped ({}) in step {}/{}: the report has the steps so far",
                match latlab_rt::stop::signal() {
                    Some(libc::SIGTERM) => "SIGTERM",
                    _ => "Ctrl-C",
                },
                i + 1,
                plan.steps.len()
            );
            break;
        }
    }
    Ok(run)
}
