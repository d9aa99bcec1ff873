//! Scheduling policy, priority and CPU affinity of the calling thread.

use serde::{Deserialize, Serialize};

use crate::cpuset::CpuSet;
use crate::RtError;

/// A Linux scheduling policy latlab can put a thread in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_FIFO: real-time, runs until it blocks or a higher priority arrives.
    Fifo,
    /// SCHED_RR: real-time with a time slice among equal priorities.
    Rr,
    /// SCHED_OTHER: the normal time-sharing policy.
    Other,
}

impl Policy {
    /// The kernel's constant for this policy.
    pub fn as_raw(self) -> libc::c_int {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
        }
    }

    /// The policy for a kernel constant, `None` for policies latlab does not use.
    pub fn from_raw(raw: libc::c_int) -> Option<Policy> {
        match raw & !libc::SCHED_RESET_ON_FORK {
            libc::SCHED_FIFO => Some(Policy::Fifo),
            libc::SCHED_RR => Some(Policy::Rr),
            libc::SCHED_OTHER => Some(Policy::Other),
            _ => None,
        }
    }

    /// The name the kernel documentation uses.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Other => "SCHED_OTHER",
        }
    }

    /// True for SCHED_FIFO and SCHED_RR.
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fifo" | "sched_fifo" => Ok(Policy::Fifo),
            "rr" | "sched_rr" => Ok(Policy::Rr),
            "other" | "normal" | "sched_other" => Ok(Policy::Other),
            _ => Err(format!("unknown policy {s:?} (expected fifo, rr or other)")),
        }
    }
}

/// A `sched_param` with `priority` and every other field zero.
///
/// musl's `sched_param` has more fields than glibc's (the unused
/// SCHED_SPORADIC ones), so a struct literal naming only `sched_priority`
/// compiles for one C library and not the other.
pub fn param(priority: i32) -> libc::sched_param {
    // SAFETY: sched_param is plain integers; all zeroes is a valid value.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    param
}

/// The `sched_setscheduler` system call on thread `tid` (0: the calling
/// thread). Returns 0, or -1 with errno set, like the C function.
///
/// musl's `sched_setscheduler`, `sched_getscheduler` and `sched_getparam`
/// return ENOSYS on purpose (POSIX means a process, Linux changes one
/// thread), so latlab makes the system calls itself, on every C library.
/// Async-signal-safe: usable between fork and exec.
pub fn setscheduler(tid: libc::pid_t, policy: libc::c_int, param: &libc::sched_param) -> i32 {
    // SAFETY: param points to a valid sched_param the kernel only reads.
    unsafe { libc::syscall(libc::SYS_sched_setscheduler, tid, policy, param) as i32 }
}

/// The `sched_getscheduler` system call on thread `tid` (0: the calling
/// thread): the policy, or -1 with errno set. See [`setscheduler`].
pub fn getscheduler(tid: libc::pid_t) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { libc::syscall(libc::SYS_sched_getscheduler, tid) as i32 }
}

/// The `sched_getparam` system call on thread `tid` (0: the calling thread):
/// 0, or -1 with errno set. See [`setscheduler`].
pub fn getparam(tid: libc::pid_t, param: &mut libc::sched_param) -> i32 {
    // SAFETY: param points to a writable sched_param.
    unsafe {
        libc::syscall(
            libc::SYS_sched_getparam,
            tid,
            param as *mut libc::sched_param,
        ) as i32
    }
}

/// Puts the calling thread into `policy` at `priority` (ignored for SCHED_OTHER).
pub fn set_current_thread(policy: Policy, priority: i32) -> Result<(), RtError> {
    let param = param(if policy.is_realtime() { priority } else { 0 });
    let rc = setscheduler(0, policy.as_raw(), &param);
    if rc == 0 {
        Ok(())
    } else {
        Err(RtError::RealtimeRefused {
            policy: policy.kernel_name(),
            priority,
            source: std::io::Error::last_os_error(),
        })
    }
}

/// The policy and priority the calling thread really has.
pub fn current_thread() -> (Option<Policy>, i32) {
    let raw = getscheduler(0);
    let mut param = param(0);
    getparam(0, &mut param);
    (Policy::from_raw(raw), param.sched_priority)
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<(), RtError> {
    let set = CpuSet::single(cpu).map_err(|_| RtError::Affinity {
        cpu,
        source: std::io::Error::from_raw_os_error(libc::EINVAL),
    })?;
    set.apply_to_current_thread()
        .map_err(|source| RtError::Affinity { cpu, source })
}

/// The CPUs the calling thread may run on.
pub fn current_affinity() -> Vec<usize> {
    CpuSet::of_current_thread()
        .map(|set| set.cpus())
        .unwrap_or_default()
}

/// The CPUs that are online and that this process may use: those of its
/// affinity, and the CPUs the kernel isolated at boot (`isolcpus=`), which
/// no task gets by default but any may be pinned to (a real-time CPU set
/// apart as `latlab tune`'s boot line says).
pub fn usable_cpus() -> Vec<usize> {
    usable_of(current_affinity(), &isolated_cpus(), kernel_online_cpus())
}

/// [`usable_cpus`] from its parts: `allowed` and `isolated` CPUs, kept
/// where `online` (when known) has them.
fn usable_of(allowed: Vec<usize>, isolated: &[usize], online: Option<Vec<usize>>) -> Vec<usize> {
    let mut cpus = allowed;
    cpus.extend_from_slice(isolated);
    cpus.sort_unstable();
    cpus.dedup();
    match online {
        Some(online) => cpus.into_iter().filter(|c| online.contains(c)).collect(),
        None => cpus,
    }
}

/// The CPUs the kernel isolated at boot (`isolcpus=`,
/// `/sys/devices/system/cpu/isolated`); none when the file is empty or absent.
pub fn isolated_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/isolated")
        .ok()
        .and_then(|text| parse_cpu_list(text.trim()).ok())
        .unwrap_or_default()
}

/// The online CPUs the kernel did not isolate at boot: where work that is
/// not real-time belongs (a background load's default).
pub fn housekeeping_cpus() -> Vec<usize> {
    let isolated = isolated_cpus();
    let cpus: Vec<usize> = online_cpus()
        .into_iter()
        .filter(|c| !isolated.contains(c))
        .collect();
    if cpus.is_empty() {
        online_cpus()
    } else {
        cpus
    }
}

/// Every online CPU (`/sys/devices/system/cpu/online`), whatever this
/// process's affinity; the CPUs this process may use when that file cannot
/// be read.
pub fn online_cpus() -> Vec<usize> {
    kernel_online_cpus().unwrap_or_else(usable_cpus)
}

fn kernel_online_cpus() -> Option<Vec<usize>> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|text| parse_cpu_list(text.trim()).ok())
}

/// The highest CPU number a CPU list may name.
pub const MAX_CPU: usize = 4095;

/// Parses a kernel-style CPU list such as `0-3,6,8-9` into sorted, distinct
/// CPUs. An entry that is not a CPU or a `low-high` range is an error that
/// names it.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, RtError> {
    let bad = |reason: String| RtError::CpuList {
        text: text.trim().to_string(),
        reason,
    };
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let number = |n: &str| -> Result<usize, RtError> {
            n.parse()
                .map_err(|_| bad(format!("{part:?} is not a CPU number or a low-high range")))
        };
        let (first, last) = (number(first)?, number(last)?);
        if last < first {
            return Err(bad(format!("range {part:?} goes backwards")));
        }
        if last > MAX_CPU {
            return Err(bad(format!("{part:?}: CPU numbers go up to {MAX_CPU}")));
        }
        cpus.extend(first..=last);
    }
    if cpus.is_empty() {
        return Err(bad("no CPU given".into()));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(
            parse_cpu_list("0-3,6,8-9").unwrap(),
            vec![0, 1, 2, 3, 6, 8, 9]
        );
        assert_eq!(parse_cpu_list("2,1,2").unwrap(), vec![1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
        assert_eq!(parse_cpu_list("0-1\n").unwrap(), vec![0, 1]);
        assert!(parse_cpu_list("4096").is_err());
    }

    #[test]
    fn an_isolated_cpu_is_usable_though_no_task_has_it_by_default() {
        // Booted with isolcpus=1: the process's affinity is CPU 0 alone.
        assert_eq!(usable_of(vec![0], &[1], Some(vec![0, 1])), vec![0, 1]);
        assert_eq!(usable_of(vec![0, 1], &[], Some(vec![0, 1])), vec![0, 1]);
        // Offline CPUs stay out, isolated or not.
        assert_eq!(usable_of(vec![0, 1], &[3], Some(vec![0, 1, 2])), vec![0, 1]);
        assert_eq!(usable_of(vec![2, 0], &[1], None), vec![0, 1, 2]);
    }

    #[test]
    fn a_bad_cpu_list_entry_is_named_in_the_error() {
        let err = parse_cpu_list("0,2,x,4").unwrap_err().to_string();
        assert!(err.contains("\"x\" is not a CPU number"), "{err}");
        let err = parse_cpu_list("0,5-3").unwrap_err().to_string();
        assert!(err.contains("\"5-3\" goes backwards"), "{err}");
        let err = parse_cpu_list("1-a").unwrap_err().to_string();
        assert!(err.contains("\"1-a\""), "{err}");
    }

    #[test]
    fn online_cpus_cover_the_usable_ones() {
        let online = online_cpus();
        assert!(!online.is_empty());
        for cpu in usable_cpus() {
            assert!(online.contains(&cpu), "CPU {cpu} usable but not online");
        }
    }

    #[test]
    fn policy_names_round_trip() {
        for p in [Policy::Fifo, Policy::Rr, Policy::Other] {
            assert_eq!(Policy::from_raw(p.as_raw()), Some(p));
            assert_eq!(p.kernel_name().parse::<Policy>().unwrap(), p);
        }
    }

    #[test]
    fn usable_cpus_include_the_current_one() {
        // SAFETY: sched_getcpu has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        assert!(usable_cpus().contains(&(cpu as usize)));
    }
}
