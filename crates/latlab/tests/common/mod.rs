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
