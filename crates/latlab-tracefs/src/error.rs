//! The crate's error type.

use std::path::PathBuf;

/// How to get permission to use tracefs; appended to permission errors.
pub(crate) const PERMISSION_FIX: &str = "run as root (sudo), or grant the capabilities \
tracefs needs: `setcap cap_dac_override,cap_sys_admin+ep $(which latlab)` (DAC override to \
write root-owned tracefs files, SYS_ADMIN to mount tracefs); a `gid=` tracefs mount option \
gives a group read access only, not the write access capture needs";

/// Everything that can go wrong while capturing kernel events.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TracefsError {
    /// tracefs is not mounted and could not be mounted.
    #[error(
        "tracefs is not mounted and mounting it at {path} failed: {source}; mount it with \
         `mount -t tracefs nodev /sys/kernel/tracing` (the kernel needs CONFIG_FTRACE and \
         CONFIG_EVENT_TRACING)"
    )]
    NotMounted {
        /// Where the mount was tried.
        path: PathBuf,
        /// The error of mount(2).
        source: std::io::Error,
    },
    /// A tracefs file or directory refused access.
    #[error("permission denied on {path}: {fix}", fix = PERMISSION_FIX)]
    PermissionDenied {
        /// The file or directory.
        path: PathBuf,
    },
    /// The kernel has no tracing instances (`instances/` is missing).
    #[error(
        "{path} does not exist: this kernel has no tracing instances (needs Linux 3.10 or \
         newer with CONFIG_TRACING)"
    )]
    NoInstances {
        /// The missing `instances` directory.
        path: PathBuf,
    },
    /// An I/O operation on a file failed.
    #[error("{op} {path}: {source}{}", disk_full_hint(.source))]
    Io {
        /// What was being done ("read", "write", "create", ...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The instance could not be removed.
    #[error(
        "could not remove tracing instance {path}: {source}; a process still holds one of its \
         files open (drop every TraceMarker first), remove it later with `rmdir {path}`"
    )]
    InstanceRemove {
        /// The instance directory.
        path: PathBuf,
        /// The error of rmdir(2).
        source: std::io::Error,
    },
    /// An event specification could not be understood.
    #[error(
        "bad event specification `{spec}`: {reason}; use a set name (sched, irq, timer, \
         irq_vectors, nmi, workqueue, kmem, syscalls, block, net, lock, default), \
         `system:event`, `system:*`, and `+`/`-` to add to or remove from the defaults"
    )]
    BadEventSpec {
        /// The specification as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// None of the requested events exists on this kernel.
    #[error(
        "none of the requested events exists on this kernel (missing: {missing}); list the \
         available ones with `cat {available}`"
    )]
    NoEvents {
        /// The events that were asked for, comma-separated.
        missing: String,
        /// The `available_events` file to look at.
        available: PathBuf,
    },
    /// A per-CPU reader failed.
    #[error(
        "copying the ring buffer of CPU {cpu} from {path} into the trace file: {source}{}",
        disk_full_hint(.source)
    )]
    Reader {
        /// The CPU.
        cpu: usize,
        /// The `trace_pipe_raw` file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A per-CPU reader thread panicked.
    #[error("the reader thread of CPU {cpu} panicked; the data of that CPU is incomplete")]
    ReaderPanicked {
        /// The CPU.
        cpu: usize,
    },
    /// The operation does not fit the capture mode.
    #[error("{0}")]
    WrongMode(&'static str),
}

impl TracefsError {
    /// Wraps an I/O error on `path`, turning EACCES/EPERM into [`TracefsError::PermissionDenied`].
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => TracefsError::PermissionDenied { path },
            _ => TracefsError::Io { op, path, source },
        }
    }
}

/// The crate's result type.
pub type Result<T, E = TracefsError> = std::result::Result<T, E>;

/// The fix for a full disk, when that is what `error` says.
fn disk_full_hint(error: &std::io::Error) -> &'static str {
    if error.raw_os_error() == Some(libc::ENOSPC) {
        " (the disk is full: record to another file system, or fewer events)"
    } else {
        ""
    }
}
