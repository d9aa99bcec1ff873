//! Scheduling of load workers: always SCHED_OTHER, nice >= 0, chosen CPUs.

use latlab_rt::cpuset::CpuSet;

use crate::LoadError;

/// Puts the calling thread (or, after fork, process) under SCHED_OTHER with
/// nice `nice` (0..=19) and checks that it worked. Threads inherit the policy
/// of the thread that creates them, so a load started from a SCHED_FIFO
/// thread would otherwise run real-time.
pub(crate) fn make_background(kind: &'static str, nice: i32) -> Result<(), LoadError> {
    let param = latlab_rt::sched::param(0);
    // SAFETY: plain syscalls on the calling thread with a valid parameter block.
    unsafe {
        if latlab_rt::sched::setscheduler(0, libc::SCHED_OTHER, &param) != 0 {
            return Err(LoadError::sys(kind, "sched_setscheduler(SCHED_OTHER)"));
        }
        if latlab_rt::sched::getscheduler(0) != libc::SCHED_OTHER {
            return Err(LoadError::sys(kind, "sched_getscheduler"));
        }
        let tid = libc::gettid() as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, tid, nice) != 0 {
            // Lowering nice needs CAP_SYS_NICE; keeping a higher nice is fine:
            // the rule is only "never more important than nice 0".
            *libc::__errno_location() = 0;
            let current = libc::getpriority(libc::PRIO_PROCESS, tid);
            if *libc::__errno_location() != 0 || current < 0 {
                return Err(LoadError::Sys {
                    kind,
                    call: "setpriority",
                    source: std::io::Error::last_os_error(),
                    hint: "; the load must run at nice 0 or higher: start latlab from a shell with nice >= 0",
                });
            }
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpus` (an empty list leaves the affinity alone).
pub(crate) fn set_affinity(kind: &'static str, cpus: &[usize]) -> Result<(), LoadError> {
    if cpus.is_empty() {
        return Ok(());
    }
    let set = CpuSet::from_cpus(cpus).map_err(|e| LoadError::BadOption {
        option: "cpus",
        reason: e.to_string(),
    })?;
    set.apply_to_current_thread()
        .map_err(|source| LoadError::Sys {
            kind,
            call: "sched_setaffinity",
            source,
            hint:
                "; check the CPU list against /sys/devices/system/cpu/online and the cgroup cpuset",
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_thread_started_from_a_fifo_thread_ends_up_sched_other() {
        // Raise this test thread to SCHED_FIFO if we may; the worker must drop it.
        let param = latlab_rt::sched::param(1);
        let fifo = latlab_rt::sched::setscheduler(0, libc::SCHED_FIFO, &param) == 0;
        if !fifo {
            assert!(
                !latlab_testkit::require_privilege(),
                "SCHED_FIFO refused: run as root or grant CAP_SYS_NICE"
            );
            eprintln!("note: SCHED_FIFO refused (run as root or grant CAP_SYS_NICE); testing from SCHED_OTHER only");
        }
        let policy = std::thread::spawn(|| {
            make_background("cpu", 0).unwrap();
            // SAFETY: plain syscall.
            (latlab_rt::sched::getscheduler(0), unsafe {
                libc::getpriority(libc::PRIO_PROCESS, 0)
            })
        })
        .join()
        .unwrap();
        let back = latlab_rt::sched::param(0);
        latlab_rt::sched::setscheduler(0, libc::SCHED_OTHER, &back);
        assert_eq!(
            policy.0,
            libc::SCHED_OTHER,
            "worker policy (started from FIFO: {fifo})"
        );
        assert!(policy.1 >= 0);
    }
}
