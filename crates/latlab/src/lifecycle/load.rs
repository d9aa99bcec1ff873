//! The background load of a measuring command: its flags (`--load`,
//! `--load-cmd`, ...), what they resolve to, and the load over the
//! measurement's lifecycle (started when the measurement is ready, checked
//! while it runs, stopped before the summary).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use latlab_load::{LoadOptions, LoadReport, LoadSpec, StartedLoad, LOAD_SETTLE};

/// `--load`, `--load-cmd` and their settings.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadFlags {
    /// Background load while measuring: none, light (= none, the Moblin "light" case),
    /// full (cpu+io+net+mem on every CPU), or kinds such as `cpu:2,io:1,net:1`
    /// (kinds: cpu, io, net, udp, mem, syscall, ipc).
    #[arg(long, value_name = "SPEC")]
    pub load: Option<LoadSpec>,
    /// Run this shell command as (part of) the load, e.g. "stress-ng --cpu 2";
    /// it is stopped with its whole process group at the end.
    #[arg(long, value_name = "COMMAND")]
    pub load_cmd: Option<String>,
    /// Most disk space the io load may use.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = crate::config::load::parse_size)]
    pub load_disk_cap: u64,
    /// Directory for the io load's temporary files [default: the system temp dir].
    #[arg(long, value_name = "DIR")]
    pub load_temp_dir: Option<PathBuf>,
    /// Run the built-in loads as threads of latlab itself instead of a child
    /// process (hidden: only to compare the two, see bench/load-vs-none.sh).
    #[arg(long, hide = true)]
    pub load_in_process: bool,
}

impl LoadFlags {
    /// The load these flags ask for, and how it is to run.
    pub fn resolve(&self) -> LoadPlan {
        let mut spec = self.load.clone().unwrap_or_else(LoadSpec::none);
        if let Some(cmd) = &self.load_cmd {
            spec = spec.with_command(cmd.clone());
        }
        let defaults = LoadOptions::default();
        LoadPlan {
            spec: (!spec.is_empty()).then_some(spec),
            options: LoadOptions {
                disk_cap_bytes: self.load_disk_cap,
                temp_root: self.load_temp_dir.clone().unwrap_or(defaults.temp_root),
                ..defaults
            },
            in_process: self.load_in_process,
        }
    }
}

/// [`LoadFlags`], resolved: the load (`None` when there is none) and its options.
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
