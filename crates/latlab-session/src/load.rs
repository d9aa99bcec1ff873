//! The background load of a measuring command: what its flags (`--load`,
//! `--load-cmd`, ...) resolve to, and the load over the measurement's
//! lifecycle (started when the measurement is ready, checked while it
//! runs, stopped before the summary); and `latlab load`'s load, run alone
//! ([`run_for`]).

use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use latlab_load::{LoadOptions, LoadReport, LoadSpec, RunningLoad, StartedLoad, LOAD_SETTLE};
use latlab_report::text::live::bar;

use crate::live::StatusLine;

/// The background load a command asks for (its `--load` flags, resolved):
/// the load (`None` when there is none) and its options.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// The load asked for, `None` when there is none.
    pub spec: Option<LoadSpec>,
    /// Its disk cap and scratch directory.
    pub options: LoadOptions,
    /// Run the loads as threads of latlab (the hidden `--load-in-process`).
    pub in_process: bool,
}

impl LoadPlan {
    /// Starts `spec` (after the measurement threads are ready): in a child
    /// process (latlab's own binary, `load --serve`) at SCHED_OTHER, not
    /// memory-locked, in its own address space; or, with the hidden
    /// `--load-in-process`, as threads of latlab.
    pub fn start(&self, spec: &LoadSpec) -> anyhow::Result<StartedLoad> {
        let started = if self.in_process {
            StartedLoad::in_threads(spec, &self.options)
        } else {
            let mut program = Command::new(latlab_load::own_binary("latlab"));
            program.arg0("latlab").args(["load", "--serve"]);
            StartedLoad::in_child(program, spec, &self.options)
        };
        started.context("starting the background load")
    }
}

/// Stops a load and returns its report (or the error that killed it).
pub fn stop(load: StartedLoad) -> anyhow::Result<LoadReport> {
    load.stop().context("the background load failed")
}

/// The background load of a measuring command, over its lifecycle: started
/// when the measurement is ready, checked while it runs, stopped before the
/// summary. Measuring commands' monitors hold one.
pub struct BackgroundLoad<'a> {
    plan: &'a LoadPlan,
    running: Option<StartedLoad>,
}

impl<'a> BackgroundLoad<'a> {
    /// The load `plan` asks for (none started yet).
    pub fn new(plan: &'a LoadPlan) -> Self {
        BackgroundLoad {
            plan,
            running: None,
        }
    }

    /// Starts the load, if one was asked for; returns how long to let it settle.
    pub fn start(&mut self) -> Result<Duration, String> {
        match &self.plan.spec {
            Some(spec) => {
                self.running = Some(self.plan.start(spec).map_err(|e| format!("{e:#}"))?);
                Ok(LOAD_SETTLE)
            }
            None => Ok(Duration::ZERO),
        }
    }

    /// Fails when the load died (the measurement would mean nothing).
    pub fn check(&self) -> Result<(), String> {
        match &self.running {
            Some(load) => load
                .check()
                .map_err(|e| format!("the background load failed while measuring: {e}")),
            None => Ok(()),
        }
    }

    /// Stops the load; its report, or `None` when none ran.
    pub fn stop(&mut self) -> anyhow::Result<Option<LoadReport>> {
        self.running.take().map(stop).transpose()
    }
}

/// `latlab load`: runs `spec` for `total` (or until Ctrl-C/SIGTERM) with a
/// status line on a terminal; its report, and whether it was interrupted.
pub fn run_for(
    spec: &LoadSpec,
    options: &LoadOptions,
    total: Duration,
) -> anyhow::Result<(LoadReport, bool)> {
    let load = RunningLoad::start(spec, options).context("starting the load")?;
    let mut line = StatusLine::new(std::io::stderr().is_terminal());
    let mut shown = 0u64;
    while load.elapsed() < total && !latlab_rt::stop::requested() {
        if let Err(err) = load.check() {
            drop(load);
            return Err(err).context("the load failed while running");
        }
        let secs = load.elapsed().as_secs();
        if line.enabled() && secs > shown {
            shown = secs;
            line.draw(&format!(
                "{} {secs}/{} s  {}",
                bar(load.elapsed().as_secs_f64() / total.as_secs_f64()),
                total.as_secs_f64().ceil(),
                load.progress_line()
            ));
        }
        // Ends at once on Ctrl-C or SIGTERM.
        latlab_rt::stop::sleep(
            total
                .saturating_sub(load.elapsed())
                .min(Duration::from_millis(100)),
        );
    }
    line.finish();
    let interrupted = latlab_rt::stop::requested();
    let report = load.stop().context("the load failed while running")?;
    Ok((report, interrupted))
}
