use std::path::PathBuf;

/// Errors of the real-time environment; each names the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RtError {
    /// The kernel refused a real-time scheduling policy.
    #[error(
        "{policy} priority {priority} refused ({source}): run as root, or grant CAP_SYS_NICE \
         (sudo setcap cap_sys_nice,cap_ipc_lock+ep $(which latlab)), or raise RLIMIT_RTPRIO \
         (`ulimit -r {priority}` / rtprio in /etc/security/limits.conf); \
         or pass --allow-unprivileged to measure without real-time priority"
    )]
    RealtimeRefused {
        /// Policy name.
        policy: &'static str,
        /// Requested priority.
        priority: i32,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel refused the real-time policy of a command that cannot
    /// measure without it.
    #[error(
        "{policy} priority {priority} refused ({source}): run as root, or grant CAP_SYS_NICE \
         (sudo setcap cap_sys_nice,cap_ipc_lock+ep $(which latlab)), or raise RLIMIT_RTPRIO \
         (`ulimit -r {priority}` / rtprio in /etc/security/limits.conf); {why}"
    )]
    RealtimeRequired {
        /// Policy name.
        policy: &'static str,
        /// Requested priority.
        priority: i32,
        /// Why this command cannot go on without it.
        why: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// mlockall failed.
    #[error(
        "mlockall refused ({source}): run as root, or grant CAP_IPC_LOCK, or raise \
         RLIMIT_MEMLOCK (`ulimit -l unlimited` / memlock in /etc/security/limits.conf); \
         or pass --allow-unprivileged (page faults will then show up as latency)"
    )]
    MlockRefused {
        /// The OS error.
        source: std::io::Error,
    },
    /// Pinning a thread to a CPU failed.
    #[error("cannot pin to CPU {cpu} ({source}): is the CPU online and in this process's cpuset? (see `taskset -p $$`)")]
    Affinity {
        /// The CPU.
        cpu: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// A CPU list could not be parsed.
    #[error("invalid CPU list {text:?}: {reason} (expected e.g. `0`, `0-3`, `0,2,4-7`)")]
    CpuList {
        /// The text given.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A file of the kernel could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Running in a scheduler autogroup of our own is not possible.
    #[error("cannot run in an autogroup of its own: {reason}")]
    Autogroup {
        /// Why, and the fix.
        reason: String,
    },
    /// Installing a signal handler failed.
    #[error("cannot install signal handler: {0}")]
    Signal(std::io::Error),
}
