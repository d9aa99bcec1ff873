//! Background-load flags shared by the commands that measure under load
//! (`run`, and any other measuring command that flattens [`LoadFlags`]).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use latlab_load::{LoadError, LoadOptions, LoadProcess, LoadReport, LoadSpec, RunningLoad};

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
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = super::load::parse_size)]
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
    /// The load asked for, `None` when there is none.
    pub fn spec(&self) -> Option<LoadSpec> {
        let mut spec = self.load.clone().unwrap_or_else(LoadSpec::none);
        if let Some(cmd) = &self.load_cmd {
            spec = spec.with_command(cmd.clone());
        }
        (!spec.is_empty()).then_some(spec)
    }

    /// Starts the load (after the measurement threads are ready): in a child
    /// process (latlab's own binary, `load --serve`) at SCHED_OTHER, not
    /// memory-locked, in its own address space; or, with the hidden
    /// `--load-in-process`, as threads of latlab.
    pub fn start(&self, spec: &LoadSpec) -> anyhow::Result<StartedLoad> {
        let defaults = LoadOptions::default();
        let options = LoadOptions {
            disk_cap_bytes: self.load_disk_cap,
            temp_root: self.load_temp_dir.clone().unwrap_or(defaults.temp_root),
            ..defaults
        };
        let started = if self.load_in_process {
            RunningLoad::start(spec, &options).map(|l| StartedLoad::Threads(Box::new(l)))
        } else {
            let mut program = Command::new(own_binary());
            program.arg0("latlab").args(["load", "--serve"]);
            LoadProcess::start(program, spec, &options).map(StartedLoad::Process)
        };
        started.context("starting the background load")
    }
}

/// latlab's own binary: /proc/self/exe, the binary that runs now even if
/// the file was replaced or deleted since (a rebuild during a long run);
/// without /proc, the name latlab was started by.
fn own_binary() -> PathBuf {
    let exe = Path::new("/proc/self/exe");
    if exe.exists() {
        return exe.to_owned();
    }
    std::env::args_os()
        .next()
        .map_or_else(|| PathBuf::from("latlab"), PathBuf::from)
}

/// A background load that runs: in its own process (the default) or in
/// latlab's threads (`--load-in-process`).
#[derive(Debug)]
pub enum StartedLoad {
    /// In a child process.
    Process(LoadProcess),
    /// In threads of latlab.
    Threads(Box<RunningLoad>),
}

impl StartedLoad {
    /// Fails when the load died (the measurement would mean nothing).
    pub fn check(&self) -> Result<(), LoadError> {
        match self {
            StartedLoad::Process(load) => load.check(),
            StartedLoad::Threads(load) => load.check(),
        }
    }

    /// Stops the load and returns its report.
    pub fn stop(self) -> Result<LoadReport, LoadError> {
        match self {
            StartedLoad::Process(load) => load.stop(),
            StartedLoad::Threads(load) => load.stop(),
        }
    }
}

/// Stops a load and returns its report (or the error that killed it).
pub fn stop(load: StartedLoad) -> anyhow::Result<LoadReport> {
    load.stop().context("the background load failed")
}

/// How long a background load runs before the first period or event is
/// measured: its start-up (threads, files, sockets, first mappings) is not
/// steady state.
pub const LOAD_SETTLE: Duration = Duration::from_secs(1);

/// The background load of a measuring command, over its lifecycle: started
/// when the measurement is ready, checked while it runs, stopped before the
/// summary. Measuring commands' monitors hold one.
pub struct BackgroundLoad<'a> {
    flags: &'a LoadFlags,
    spec: Option<LoadSpec>,
    running: Option<StartedLoad>,
}

impl<'a> BackgroundLoad<'a> {
    /// The load `flags` ask for (none started yet).
    pub fn new(flags: &'a LoadFlags) -> Self {
        BackgroundLoad {
            flags,
            spec: flags.spec(),
            running: None,
        }
    }

    /// Starts the load, if one was asked for; returns how long to let it settle.
    pub fn start(&mut self) -> Result<Duration, String> {
        match &self.spec {
            Some(spec) => {
                self.running = Some(self.flags.start(spec).map_err(|e| format!("{e:#}"))?);
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

/// A live view of a measurement's progress `P` on the terminal.
pub trait LiveUpdate<P> {
    /// Draws `progress`.
    fn update(&mut self, progress: &P);
    /// Ends the live view once the measurement is over.
    fn finish(&mut self);
}

/// The monitor of a measuring command (`run`, `respond`): starts the
/// background load once the real-time threads are ready, then prints the
/// notes about the machine (so that no error about the arguments, the
/// threads or the load comes after them), checks the load while measuring
/// and draws the live view.
pub struct LoadMonitor<'a, V> {
    /// The live view.
    pub live: V,
    /// The background load.
    pub load: BackgroundLoad<'a>,
    /// Lines for stderr once the measurement is set up
    /// ([`super::notes::before_measuring`]).
    pub notes: Vec<String>,
    /// The measurement threads' kernel thread ids, once they exist: what a
    /// run's own trace analysis looks at (another latlab's threads have the
    /// same names).
    pub measured_tids: Vec<i32>,
}

impl<P, V: LiveUpdate<P>> latlab_rt::monitor::Monitor<P> for LoadMonitor<'_, V> {
    fn threads(&mut self, tids: &[i32]) -> Result<(), String> {
        self.measured_tids = tids.to_vec();
        Ok(())
    }

    fn ready(&mut self) -> Result<Duration, String> {
        let settle = self.load.start()?;
        for line in self.notes.drain(..) {
            eprintln!("{line}");
        }
        Ok(settle)
    }

    fn progress(&mut self, progress: &P) -> Result<(), String> {
        self.load.check()?;
        self.live.update(progress);
        Ok(())
    }
}
