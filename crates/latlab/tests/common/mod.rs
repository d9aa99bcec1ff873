//! Shared by the integration tests: the binary, and the skip-or-fail rule
//! for tests that need a privilege or a tool.
//!
//! A test that needs root (SCHED_FIFO, mlock, tracefs) or a tool
//! (trace-cmd, chromium) skips with the reason and the fix when it is
//! missing, unless `LATLAB_REQUIRE_PRIVILEGE=1` (set in CI) turns the skip
//! into a failure, so a green CI proves every such test ran.
#![allow(dead_code)] // each test binary uses its own part

use std::process::Command;

/// The latlab binary under test. Its default history database lives in the
/// test's target directory, never in the user's data directory.
pub fn latlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_latlab"));
    command.env(
        "XDG_DATA_HOME",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"),
    );
    command
}

/// True when `ok`; otherwise skips (prints what is missing and the fix) or,
/// under `LATLAB_REQUIRE_PRIVILEGE=1`, fails.
pub fn require(what: &str, ok: bool, fix: &str) -> bool {
    if ok {
        return true;
    }
    if std::env::var("LATLAB_REQUIRE_PRIVILEGE").as_deref() == Ok("1") {
        panic!("{what} is required (LATLAB_REQUIRE_PRIVILEGE=1 makes a skip a failure): {fix}");
    }
    eprintln!("SKIP: {what} missing: {fix}");
    false
}

/// True when running as root (SCHED_FIFO, mlock, tracefs); see [`require`].
pub fn root(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    require(
        &format!("{test}: root (SCHED_FIFO, mlock, tracefs)"),
        is_root,
        "run the tests as root (`sudo -E cargo test`), or grant CAP_SYS_NICE and CAP_IPC_LOCK",
    )
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
pub fn wait_until_catches(pid: u32, signal: libc::c_int, settle: std::time::Duration) {
    let start = std::time::Instant::now();
    while !catches(pid, signal) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "process {pid} never installed its handler for signal {signal}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
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

/// The file a command's output names as where its result went instead
/// ("... it was written to PATH instead"), when the asked-for place was full.
pub fn fallback_named(stdout: &str) -> std::path::PathBuf {
    stdout
        .lines()
        .find_map(|l| {
            l.split_once("it was written to ")?
                .1
                .strip_suffix(" instead")
        })
        .unwrap_or_else(|| panic!("no fallback named: {stdout}"))
        .into()
}

/// A tmpfs of 64 KiB, full but for `free_pages` pages of 4 KiB, unmounted
/// when dropped.
pub struct FullDisk {
    dir: tempfile::TempDir,
}

impl FullDisk {
    /// Mounts it (as root).
    pub fn mount(free_pages: usize) -> FullDisk {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount tmpfs");
        // Fill it: writing stops at ENOSPC.
        let fill = (64 << 10) - free_pages * 4096;
        let _ = std::fs::write(dir.path().join("fill"), vec![0u8; fill]);
        FullDisk { dir }
    }

    /// `name` inside it.
    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        // Lazily: a process still holding a file there must not keep it mounted.
        let done = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
        if !done.is_ok_and(|s| s.success()) {
            eprintln!(
                "could not unmount the test tmpfs {}",
                self.dir.path().display()
            );
        }
    }
}

/// Kills processes (continued first, with their process groups) when
/// dropped: a test that fails midway leaves nothing running or stopped.
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
