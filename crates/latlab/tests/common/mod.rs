//! Shared by the binary's integration tests: the binary, a full disk, and
//! (from `latlab-testkit`) the skip-or-fail rule and the process checks.
//!
//! A test that needs root (SCHED_FIFO, mlock, tracefs) or a tool
//! (trace-cmd, chromium) skips with the reason and the fix when it is
//! missing, unless `LATLAB_REQUIRE_PRIVILEGE=1` (set in CI) turns the skip
//! into a failure, so a green CI proves every such test ran.
#![allow(dead_code, unused_imports)] // each test binary uses its own part

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

pub use latlab_testkit::process::{catches, first_child, state, wait_until_catches, KillOnDrop};
pub use latlab_testkit::{require, root};

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
