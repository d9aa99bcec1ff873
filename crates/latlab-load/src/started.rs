//! A background load started for a measurement, wherever it runs: in a
//! child process ([`LoadProcess`], the default of a real-time measuring
//! process) or in threads of the caller ([`RunningLoad`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{LoadError, LoadOptions, LoadProcess, LoadReport, LoadSpec, RunningLoad};

/// How long a background load runs before the first period or event is
/// measured: its start-up (threads, files, sockets, first mappings) is not
/// steady state.
pub const LOAD_SETTLE: Duration = Duration::from_secs(1);

/// A background load that runs: in its own process or in the caller's
/// threads.
#[derive(Debug)]
pub enum StartedLoad {
    /// In a child process.
    Process(LoadProcess),
    /// In threads of the caller.
    Threads(Box<RunningLoad>),
}

impl StartedLoad {
    /// Starts `spec` in a child process: `program` is a command that runs
    /// [`crate::serve_stdio`] (latlab's own binary with `load --serve`).
    pub fn in_child(
        program: Command,
        spec: &LoadSpec,
        options: &LoadOptions,
    ) -> Result<StartedLoad, LoadError> {
        LoadProcess::start(program, spec, options).map(StartedLoad::Process)
    }

    /// Starts `spec` as threads of the calling process.
    pub fn in_threads(spec: &LoadSpec, options: &LoadOptions) -> Result<StartedLoad, LoadError> {
        RunningLoad::start(spec, options).map(|load| StartedLoad::Threads(Box::new(load)))
    }

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

/// The running program's own binary: /proc/self/exe, the binary that runs
/// now even if the file was replaced or deleted since (a rebuild during a
/// long run); without /proc, the name the program was started by (or
/// `fallback`).
pub fn own_binary(fallback: &str) -> PathBuf {
    let exe = Path::new("/proc/self/exe");
    if exe.exists() {
        return exe.to_owned();
    }
    std::env::args_os()
        .next()
        .map_or_else(|| PathBuf::from(fallback), PathBuf::from)
}
