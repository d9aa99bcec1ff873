//! Facts about other processes, and waiting for a child that must be
//! given the chance to stop cleanly.

use std::process::{Child, ExitStatus};
use std::time::Duration;

/// Whether process `pid` exists (it may belong to another user). Pid 0 and
/// numbers beyond `pid_t` name no process.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if raw == 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::kill(raw, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The ids in a /proc directory: the processes of `/proc`, the threads of
/// `/proc/PID/task` (its numbered entries, unsorted; none when it cannot
/// be read, e.g. the process ended).
pub fn ids_in(dir: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// True once our child `pid` has exited, without reaping it (waitid(2)
/// with WNOWAIT: whoever waits for it still can); also true when there is
/// no such child left to wait for.
pub fn child_exited(pid: u32) -> bool {
    // SAFETY: siginfo_t is plain data filled in by waitid; WNOHANG: no
    // blocking.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        // rc 0 with si_pid 0: still running; an error: nothing left to wait for.
        rc != 0 || info.si_pid() != 0
    }
}

/// Waits for `child` to end. On Ctrl-C or SIGTERM ([`crate::stop`]) it is
/// sent SIGTERM, once: a terminal's Ctrl-C reached it too, and a second
/// SIGINT would kill it before it wrote what it measured; SIGTERM only asks
/// it to stop.
pub fn wait_passing_stop(child: &mut Child) -> std::io::Result<ExitStatus> {
    let mut passed_on = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if crate::stop::requested() && !passed_on {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            passed_on = true;
        }
        if passed_on {
            std::thread::sleep(Duration::from_millis(5));
        } else {
            // Ends at once on Ctrl-C or SIGTERM.
            crate::stop::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_proc_name_this_process_and_its_threads() {
        let me = std::process::id() as i32;
        assert!(ids_in("/proc").contains(&me));
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        assert!(ids_in(&format!("/proc/{me}/task")).contains(&tid));
        assert!(ids_in("/proc/no-such-directory").is_empty());
    }

    #[test]
    fn this_process_is_alive_and_pid_0_and_huge_pids_are_not() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
    }

    #[test]
    fn a_reaped_child_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_alive(pid));
    }
}
