//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong while parsing, starting, running or stopping a load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The load specification could not be parsed.
    #[error("bad load spec {spec:?}: {reason} (expected none, light, full, or a list like cpu:2,io:1,net:1; kinds: cpu, io, net, udp, mem, syscall, ipc)")]
    BadSpec {
        /// The text that was given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An option has a value the loads cannot work with.
    #[error("bad load option {option}: {reason}")]
    BadOption {
        /// The option's name.
        option: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A file or directory operation of the `io` load or the temp dir failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("write", "create temp dir in", ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A socket operation of a network or ipc load failed.
    #[error("{kind} load: {action}: {source}")]
    Socket {
        /// The load kind ("net", "udp", "ipc").
        kind: &'static str,
        /// What was being done.
        action: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A system call a worker needs failed (sched_setscheduler, mmap, ...).
    #[error("{kind} load: {call} failed: {source}{hint}")]
    Sys {
        /// The load kind, or "supervisor" for the thread that samples and runs the command.
        kind: &'static str,
        /// The system call.
        call: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
        /// How to fix it, with a leading separator, or empty.
        hint: &'static str,
    },
    /// The load as a whole could not be started.
    #[error("the load could not start: {reason}")]
    Start {
        /// Why, and what to do.
        reason: String,
    },
    /// A worker thread could not be started or did not become ready in time.
    #[error("{kind} load worker {index} could not start: {reason}")]
    WorkerStart {
        /// The load kind.
        kind: &'static str,
        /// The worker's index within its kind.
        index: usize,
        /// Why.
        reason: String,
    },
    /// A worker failed while the load was running.
    #[error("{what}")]
    WorkerDied {
        /// Which worker and what went wrong.
        what: String,
    },
    /// The load's child process failed: it reported an error (the message is
    /// the child's error, e.g. a worker that died), or it ended, or stopped
    /// answering, while the load should have been running.
    #[error("{message}")]
    Process {
        /// What went wrong, naming the process and the cause.
        message: String,
    },
    /// A worker thread panicked (a bug in latlab).
    #[error("{kind} load worker {index} panicked (a latlab bug, please report it)")]
    WorkerPanicked {
        /// The load kind.
        kind: &'static str,
        /// The worker's index within its kind.
        index: usize,
    },
    /// The external load command could not be started.
    #[error(
        "could not start load command {command:?} via sh -c: {source} (is /bin/sh installed?)"
    )]
    CommandSpawn {
        /// The command line.
        command: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The external load command exited with a failure while it should have been running.
    #[error("load command {command:?} {status} after {after_s:.1} s; it must keep running for the whole load{hint}{output}")]
    CommandFailed {
        /// The command line.
        command: String,
        /// How it ended ("exited with status 127", "was killed by signal 9").
        status: String,
        /// Seconds between start and the failure being seen.
        after_s: f64,
        /// A likely fix, with a leading separator, or empty.
        hint: &'static str,
        /// The last lines of its output, with a leading separator, or empty.
        output: String,
    },
}

impl LoadError {
    /// Builds a [`LoadError::Sys`] from `errno`.
    pub(crate) fn sys(kind: &'static str, call: &'static str) -> Self {
        LoadError::Sys {
            kind,
            call,
            source: std::io::Error::last_os_error(),
            hint: "",
        }
    }

    /// Builds a [`LoadError::Socket`].
    pub(crate) fn socket(
        kind: &'static str,
        action: impl Into<String>,
        source: std::io::Error,
    ) -> Self {
        LoadError::Socket {
            kind,
            action: action.into(),
            source,
        }
    }
}
