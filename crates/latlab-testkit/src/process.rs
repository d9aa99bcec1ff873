//! The processes a test starts: how far along they are, and killing them
//! when the test ends, also when it fails.

use std::time::{Duration, Instant};

/// The processes whose command line contains `marker`, as `<pid>: <command line>`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) {
                out.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    out
}

/// True when process `pid` has a handler for `signal` (its SigCgt mask in
/// /proc), i.e. it is far enough along to stop cleanly on it.
pub fn catches(pid: u32, signal: libc::c_int) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Waits (up to 30 s, for a slow VM) until `pid` catches `signal`, then
/// `settle` more so that it has done some work; a test can then send the
/// signal knowing it stops the process cleanly rather than killing it.
pub fn wait_until_catches(pid: u32, signal: libc::c_int, settle: Duration) {
    let start = Instant::now();
    while !catches(pid, signal) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "process {pid} never installed its handler for signal {signal}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(settle);
}

/// The first child process of `pid` (any of its threads' children), once
/// there is one.
pub fn first_child(pid: u32) -> Option<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .find_map(|c| c.split_whitespace().next()?.parse().ok())
}

/// The state letter of `pid` in /proc (R, S, T, Z, ...), while it exists.
pub fn state(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .next()?
            .to_owned(),
    )
}

/// Kills processes (continued first, with their process groups) when
/// dropped: a test that fails midway leaves nothing running or stopped.
#[derive(Debug)]
pub struct KillOnDrop(pub Vec<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: signalling processes this test started (ESRCH once gone).
            unsafe {
                libc::kill(pid as i32, libc::SIGCONT);
                libc::kill(-(pid as i32), libc::SIGCONT);
                libc::kill(-(pid as i32), libc::SIGKILL);
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that start children one at a time: each looks at this
    /// process's children.
    static CHILDREN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_process_is_found_by_a_marker_in_its_command_line() {
        let _one = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
        let marker = format!("31.{}", std::process::id());
        assert!(processes_with(&marker).is_empty());
        let mut child = std::process::Command::new("sleep")
            .arg(&marker)
            .spawn()
            .unwrap();
        // The child's command line is the exec'd one only once exec is
        // done, which a loaded machine can put off past spawn's return.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut found = processes_with(&marker);
        while found.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = processes_with(&marker);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, vec![format!("{}: sleep {marker} ", child.id())]);
    }

    #[test]
    fn a_sleeping_child_is_seen_and_killed_on_drop() {
        let _one = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
        let child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert_eq!(first_child(std::process::id()), Some(pid));
        assert!(matches!(state(pid).as_deref(), Some("S" | "R")));
        assert!(!catches(pid, libc::SIGUSR1));
        drop(KillOnDrop(vec![pid]));
        let mut child = child;
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert_eq!(state(pid), None);
    }
}
