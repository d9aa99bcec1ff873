//! What can go wrong, each error naming what fixes it.

use std::path::PathBuf;

/// Errors of `latlab watch`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The kernel has no BTF, which CO-RE programs on `tp_btf` need.
    #[error("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): latlab watch's BPF side needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (and CONFIG_BPF_SYSCALL=y); without them, watch with `latlab watch --tracefs` (streams the same events through a private tracefs instance, at a higher CPU cost)")]
    NoBtf,
    /// This latlab was built without the BPF loader (a 32-bit target).
    #[error("this latlab has no BPF side: it was built for a 32-bit target, where the BPF loader (aya) is not built and BPF programs cannot read the kernel's 32-bit pointers; watch with `latlab watch --tracefs` (streams the same events through a private tracefs instance, at a higher CPU cost)")]
    NotBuilt,
    /// The `bpf()` system call does not exist.
    #[error("this kernel has no bpf() system call: latlab watch's BPF side needs CONFIG_BPF_SYSCALL=y (and CONFIG_DEBUG_INFO_BTF=y); without it, watch with `latlab watch --tracefs` (streams the same events through a private tracefs instance, at a higher CPU cost)")]
    NoBpfSyscall,
    /// The user may not load tracing BPF programs.
    #[error("loading BPF programs needs root, or CAP_BPF and CAP_PERFMON (e.g. `sudo setcap cap_bpf,cap_perfmon+ep $(which latlab)`); {detail}; where BPF cannot be had, `latlab watch --tracefs` watches through tracefs instead (needs write access to tracefs, e.g. root; costs more CPU)")]
    NoPrivilege {
        /// What was found.
        detail: String,
    },
    /// The kernel refused the object or a program.
    #[error("the kernel refused latlab watch's BPF {what}: {reason} (`latlab watch --tracefs` watches without BPF)")]
    Load {
        /// Which part (`object`, `program on_switch`, ...).
        what: String,
        /// The loader's message, its causes included.
        reason: String,
    },
    /// A required tracepoint is missing.
    #[error("this kernel has no tracepoint {tracepoint} (latlab watch needs it; CONFIG_TRACEPOINTS and the scheduler/timer/irq events): {reason}")]
    NoTracepoint {
        /// The tracepoint.
        tracepoint: String,
        /// The loader's message.
        reason: String,
    },
    /// The tracefs side (`--tracefs`) could not start or read.
    #[error("latlab watch --tracefs: {0}")]
    Tracefs(String),
    /// No task matches the selection (yet).
    #[error("{0}")]
    Selection(String),
    /// A command to watch could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A file could not be read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The metrics endpoint could not be opened.
    #[error("--metrics {addr}: {source} (choose another address, e.g. 127.0.0.1:9465)")]
    Metrics {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The ring buffer delivered something that is not a window.
    #[error(transparent)]
    Record(#[from] crate::records::BadRecord),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, WatchError>;

/// An error and its causes on one line (the loader's messages).
#[cfg(all(feature = "bpf", target_pointer_width = "64"))]
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}
