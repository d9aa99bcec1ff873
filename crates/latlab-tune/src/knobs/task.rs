//! Facts about one thread read from `/proc`, and its affinity and
//! scheduling policy through the system calls.

use std::io;

use latlab_rt::sched::parse_cpu_list;

/// PF_KTHREAD in `/proc/PID/stat`'s flags: a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;
/// PF_NO_SETAFFINITY: the kernel does not let anyone move this thread
/// (a per-CPU kernel thread).
pub const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// A thread's command name, `/proc/PID/comm` (trimmed).
pub fn comm(pid: i32) -> io::Result<String> {
    Ok(std::fs::read_to_string(format!("/proc/{pid}/comm"))?
        .trim_end_matches('\n')
        .to_string())
}

/// A thread's flags, field 9 of `/proc/PID/stat`.
pub fn flags(pid: i32) -> io::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The comm field may hold spaces and parentheses: split after the last ')'.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "stat without ')'"))?;
    // rest: " S ppid pgrp session tty_nr tpgid flags ..."; flags is the 7th.
    rest.split_whitespace()
        .nth(6)
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "stat without flags"))
}

/// Whether `pid` is a kernel thread (PF_KTHREAD, or kthreadd itself).
pub fn is_kernel_thread(pid: i32) -> bool {
    pid == 2 || flags(pid).is_ok_and(|f| f & PF_KTHREAD != 0)
}

/// Every thread id on the system (`/proc/*/task/*`), sorted.
pub fn all_threads() -> Vec<i32> {
    let mut tids: Vec<i32> = latlab_rt::process::ids_in("/proc")
        .into_iter()
        .flat_map(|pid| latlab_rt::process::ids_in(&format!("/proc/{pid}/task")))
        .collect();
    tids.sort_unstable();
    tids.dedup();
    tids
}

/// The CPUs `pid` may run on, sched_getaffinity(2).
pub fn affinity(pid: i32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroes are the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel fills in at most size_of::<cpu_set_t>() bytes.
    let rc = unsafe { libc::sched_getaffinity(pid, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads the set within its bounds (cpu < capacity).
    Ok((0..capacity)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Sets the CPUs `pid` may run on, sched_setaffinity(2).
pub fn set_affinity(pid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as in `affinity`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu >= capacity {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: cpu < capacity.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: a valid set of the size passed.
    let rc = unsafe { libc::sched_setaffinity(pid, std::mem::size_of_val(&set), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A thread's policy and priority as `fifo:50`, `other:0`.
pub fn priority(pid: i32) -> io::Result<String> {
    // SAFETY: plain system calls on a pid.
    let raw = unsafe { libc::sched_getscheduler(pid) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut param = latlab_rt::sched::param(0);
    // SAFETY: the kernel fills in `param`.
    if unsafe { libc::sched_getparam(pid, &mut param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let name = match raw & !libc::SCHED_RESET_ON_FORK {
        libc::SCHED_OTHER => "other",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        6 => "deadline",
        _ => "unknown",
    };
    Ok(format!("{name}:{}", param.sched_priority))
}

/// Parses `fifo:50` into the kernel's policy and priority.
pub fn parse_priority(value: &str) -> Result<(libc::c_int, i32), String> {
    let (name, prio) = value.trim().split_once(':').unwrap_or((value.trim(), "0"));
    let policy = match name.to_ascii_lowercase().as_str() {
        "other" | "normal" => libc::SCHED_OTHER,
        "fifo" => libc::SCHED_FIFO,
        "rr" => libc::SCHED_RR,
        "batch" => libc::SCHED_BATCH,
        "idle" => libc::SCHED_IDLE,
        _ => return Err(format!("{name:?} is not fifo, rr, other, batch or idle")),
    };
    let prio: i32 = prio
        .parse()
        .map_err(|_| format!("{prio:?} is not a priority"))?;
    let realtime = policy == libc::SCHED_FIFO || policy == libc::SCHED_RR;
    if realtime && !(1..=99).contains(&prio) || !realtime && prio != 0 {
        return Err(format!(
            "priority {prio}: fifo and rr take 1-99, the others 0"
        ));
    }
    Ok((policy, prio))
}

/// Sets a thread's policy and priority, sched_setscheduler(2).
pub fn set_priority(pid: i32, policy: libc::c_int, prio: i32) -> io::Result<()> {
    // musl's sched_param has more fields than glibc's: latlab-rt zeroes them.
    let param = latlab_rt::sched::param(prio);
    // SAFETY: a valid param for a pid.
    if unsafe { libc::sched_setscheduler(pid, policy, &param) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `/proc/PID/status`'s `Cpus_allowed_list`, parsed.
pub fn allowed_cpus(pid: i32) -> io::Result<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Cpus_allowed_list"))?;
    parse_cpu_list(line.trim()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
