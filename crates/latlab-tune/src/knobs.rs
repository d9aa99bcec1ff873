//! Read and write each [`Knob`] on the live system, and list what this
//! machine has ([`inventory()`]).
//!
//! Values are text as the report shows them: CPU lists for affinities and
//! the workqueue cpumask (whose file is a hex mask: converted here),
//! `fifo:50` for priorities, the bracketed word of transparent hugepages,
//! the file's text for the rest.

use std::io;

use latlab_fix::{cpu_list, Knob};
use latlab_rt::sched::parse_cpu_list;

pub mod inventory;
pub mod task;
mod text;

pub use inventory::{inventory, Inventory};
use text::bracketed;
pub use text::{boot_parameter, cmdline, list_to_mask, mask_to_list};

/// A knob could not be read or written; each names the file or system
/// call, the kernel's error and, where known, what it means.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KnobError {
    /// A file or system call failed.
    #[error("{op} {target}: {source}{}", hint.map(|h| format!(": {h}")).unwrap_or_default())]
    Os {
        /// `writing`, `reading`, `sched_setaffinity on`.
        op: &'static str,
        /// The file or the thread.
        target: String,
        /// The kernel's error.
        source: io::Error,
        /// What the error means for this knob, where known.
        hint: Option<&'static str>,
    },
    /// The value is not one this knob takes; nothing was written.
    #[error("{knob}: {value:?} is not a valid value ({reason})")]
    Invalid {
        /// The knob.
        knob: String,
        /// The value given.
        value: String,
        /// Why.
        reason: String,
    },
    /// The thread ended and its pid now names another: nothing written.
    #[error("{knob}: pid {pid} is now {found:?}, not {expected:?} (the thread ended and its pid was reused); nothing written")]
    PidReused {
        /// The knob.
        knob: String,
        /// The pid.
        pid: i32,
        /// The comm the knob names.
        expected: String,
        /// The comm the pid has now (empty: no such pid).
        found: String,
    },
    /// A boot parameter: it takes a reboot.
    #[error("{knob} takes a reboot: put it on the kernel command line (tune prints the line for GRUB and U-Boot)")]
    TakesReboot {
        /// The knob.
        knob: String,
    },
    /// The cpuset partition could not be made or undone.
    #[error("{0}")]
    Partition(String),
    /// The restore file could not be written first, so the knob was not touched.
    #[error("writing the restore file {path}: {source}; nothing changed")]
    Journal {
        /// The restore file.
        path: std::path::PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl KnobError {
    /// The errno behind the error, when the kernel refused.
    pub fn errno(&self) -> Option<i32> {
        match self {
            KnobError::Os { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

/// Why an interrupt's affinity cannot be set.
pub const MANAGED_IRQ: &str =
    "a managed IRQ (the kernel places it; keep the I/O that raises it off the RT CPUs)";

/// What an errno means when `knob` refuses it.
pub fn hint(knob: &Knob, errno: Option<i32>) -> Option<&'static str> {
    let read_only = || {
        knob.path()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o222 == 0)
    };
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    match (knob, errno?) {
        (_, libc::EACCES) if read_only() => {
            Some("read-only on this kernel (it lacks what the knob controls)")
        }
        // The kernel answers root's write to a managed IRQ with EPERM, and
        // EIO or EINVAL where its chip cannot move it.
        (Knob::IrqAffinity { .. }, libc::EIO | libc::EINVAL) => Some(MANAGED_IRQ),
        (Knob::IrqAffinity { .. }, libc::EPERM) if root => Some(MANAGED_IRQ),
        (_, libc::EACCES | libc::EPERM) => Some("needs root (CAP_SYS_ADMIN / CAP_SYS_NICE)"),
        (_, libc::ENOENT) => Some("this kernel has no such knob"),
        (Knob::ThreadedNapi { .. }, libc::EOPNOTSUPP) => {
            Some("the device has no NAPI to thread (a virtual device, or its driver)")
        }
        (Knob::TaskAffinity { .. }, libc::EINVAL) => Some("a per-CPU kernel thread"),
        (Knob::IrqAffinity { .. }, libc::ERANGE) => Some("a CPU this machine does not have"),
        (_, libc::ESRCH) => Some("the thread has ended"),
        _ => None,
    }
}

fn os(knob: &Knob, op: &'static str, target: String, source: io::Error) -> KnobError {
    let hint = hint(knob, source.raw_os_error());
    KnobError::Os {
        op,
        target,
        source,
        hint,
    }
}

fn invalid(knob: &Knob, value: &str, reason: impl Into<String>) -> KnobError {
    KnobError::Invalid {
        knob: knob.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// The knob's current value, trimmed.
pub fn read(knob: &Knob) -> Result<String, KnobError> {
    match knob {
        Knob::TaskAffinity { pid, .. } => task::affinity(*pid)
            .map(|cpus| cpu_list(&cpus))
            .map_err(|e| os(knob, "sched_getaffinity on", knob.to_string(), e)),
        Knob::TaskPriority { pid, .. } => {
            task::priority(*pid).map_err(|e| os(knob, "sched_getscheduler on", knob.to_string(), e))
        }
        Knob::CpusetPartition => crate::partition::current().map_err(KnobError::Partition),
        Knob::BootParameter { name } => Ok(boot_parameter(&cmdline(), name).unwrap_or_default()),
        _ => {
            let path = knob.path().expect("every other knob has a file");
            let text = std::fs::read_to_string(&path).map_err(|e| os(knob, "reading", path, e))?;
            let text = text.trim();
            Ok(match knob {
                Knob::WorkqueueCpumask => mask_to_list(text).unwrap_or_else(|| text.to_string()),
                Knob::TransparentHugepages => bracketed(text),
                _ => text.to_string(),
            })
        }
    }
}

/// Writes `value` to the knob. A task knob first checks the pid still
/// names the same thread.
pub fn write(knob: &Knob, value: &str) -> Result<(), KnobError> {
    let value = value.trim();
    match knob {
        Knob::TaskAffinity { pid, comm } => {
            let cpus = parse_cpu_list(value).map_err(|e| invalid(knob, value, e.to_string()))?;
            if cpus.is_empty() {
                return Err(invalid(knob, value, "an empty CPU list"));
            }
            same_thread(knob, *pid, comm)?;
            task::set_affinity(*pid, &cpus)
                .map_err(|e| os(knob, "sched_setaffinity on", knob.to_string(), e))
        }
        Knob::TaskPriority { pid, comm } => {
            let (policy, prio) =
                task::parse_priority(value).map_err(|reason| invalid(knob, value, reason))?;
            same_thread(knob, *pid, comm)?;
            task::set_priority(*pid, policy, prio)
                .map_err(|e| os(knob, "sched_setscheduler on", knob.to_string(), e))
        }
        Knob::CpusetPartition => crate::partition::write(value).map_err(KnobError::Partition),
        Knob::BootParameter { .. } => Err(KnobError::TakesReboot {
            knob: knob.to_string(),
        }),
        _ => {
            let path = knob.path().expect("every other knob has a file");
            let text = file_value(knob, value)?;
            std::fs::write(&path, text).map_err(|e| os(knob, "writing", path, e))
        }
    }
}

/// The text to write to a knob's file for `value`, checked first.
fn file_value(knob: &Knob, value: &str) -> Result<String, KnobError> {
    let one_of = |allowed: &[&str]| {
        if allowed.contains(&value) {
            Ok(value.to_string())
        } else {
            Err(invalid(
                knob,
                value,
                format!("expected one of {}", allowed.join(", ")),
            ))
        }
    };
    match knob {
        Knob::IrqAffinity { .. } | Knob::WorkqueueCpumask => {
            let cpus = parse_cpu_list(value).map_err(|e| invalid(knob, value, e.to_string()))?;
            if cpus.is_empty() {
                return Err(invalid(knob, value, "an empty CPU list"));
            }
            Ok(match knob {
                Knob::WorkqueueCpumask => list_to_mask(&cpus),
                _ => cpu_list(&cpus),
            })
        }
        Knob::IdleState { .. } | Knob::ThreadedNapi { .. } => one_of(&["0", "1"]),
        Knob::Ksm => one_of(&["0", "1", "2"]),
        Knob::TransparentHugepages => one_of(&["always", "madvise", "never"]),
        _ if value.is_empty() => Err(invalid(knob, value, "an empty value")),
        _ => Ok(value.to_string()),
    }
}

/// The value as [`read`] would show it after writing it: CPU lists in
/// the kernel's form, the rest trimmed. Two values that normalize alike
/// are the same setting.
pub fn normalize(knob: &Knob, value: &str) -> String {
    let value = value.trim();
    match knob {
        Knob::IrqAffinity { .. }
        | Knob::WorkqueueCpumask
        | Knob::TaskAffinity { .. }
        | Knob::CpusetPartition => parse_cpu_list(value)
            .map(|cpus| cpu_list(&cpus))
            .unwrap_or_else(|_| value.to_string()),
        Knob::TaskPriority { .. } if !value.contains(':') => format!("{value}:0"),
        _ => value.to_string(),
    }
}

fn same_thread(knob: &Knob, pid: i32, expected: &str) -> Result<(), KnobError> {
    let found = task::comm(pid).unwrap_or_default();
    if found == expected {
        Ok(())
    } else {
        Err(KnobError::PidReused {
            knob: knob.to_string(),
            pid,
            expected: expected.to_string(),
            found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_normalize_as_the_kernel_reads_them_back() {
        assert_eq!(normalize(&Knob::WorkqueueCpumask, " 1,0 "), "0-1");
        assert_eq!(normalize(&Knob::IrqAffinity { irq: 1 }, "0,1,2,5"), "0-2,5");
        let prio = Knob::TaskPriority {
            pid: 1,
            comm: "x".into(),
        };
        assert_eq!(normalize(&prio, "other"), "other:0");
        assert_eq!(normalize(&Knob::Ksm, "1\n"), "1");
    }

    #[test]
    fn each_errno_names_what_it_means_for_its_knob() {
        let irq = Knob::IrqAffinity { irq: 36 };
        let thread = Knob::TaskAffinity {
            pid: 22,
            comm: "ksoftirqd/1".into(),
        };
        assert_eq!(hint(&irq, Some(libc::EIO)), Some(MANAGED_IRQ));
        assert_eq!(
            hint(&thread, Some(libc::EINVAL)),
            Some("a per-CPU kernel thread")
        );
        let missing = Knob::Sysctl {
            name: "kernel.no_such".into(),
        };
        assert_eq!(
            hint(&missing, Some(libc::ENOENT)),
            Some("this kernel has no such knob")
        );
        assert_eq!(hint(&Knob::Ksm, None), None);
    }

    #[test]
    fn priorities_parse_with_their_ranges() {
        assert_eq!(task::parse_priority("fifo:50"), Ok((libc::SCHED_FIFO, 50)));
        assert_eq!(task::parse_priority("other"), Ok((libc::SCHED_OTHER, 0)));
        assert_eq!(task::parse_priority("batch:0"), Ok((libc::SCHED_BATCH, 0)));
        assert!(task::parse_priority("fifo:0").is_err());
        assert!(task::parse_priority("other:5").is_err());
        assert!(task::parse_priority("deadline:1").is_err());
    }
}
