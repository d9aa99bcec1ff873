//! Skip or fail: a test that needs something this machine lacks.

use std::process::{Command, Stdio};

/// The environment variable that turns every skip into a failure.
pub const REQUIRE_PRIVILEGE: &str = "LATLAB_REQUIRE_PRIVILEGE";

/// True when `LATLAB_REQUIRE_PRIVILEGE=1`: a missing privilege or tool fails
/// the test instead of skipping it.
pub fn require_privilege() -> bool {
    std::env::var(REQUIRE_PRIVILEGE).as_deref() == Ok("1")
}

/// True when `ok`; otherwise skips (prints `SKIP: {what} missing: {fix}` on
/// stderr and returns false) or, under `LATLAB_REQUIRE_PRIVILEGE=1`, fails.
pub fn require(what: &str, ok: bool, fix: &str) -> bool {
    if ok {
        return true;
    }
    if require_privilege() {
        panic!("{what} is required (LATLAB_REQUIRE_PRIVILEGE=1 makes a skip a failure): {fix}");
    }
    eprintln!("SKIP: {what} missing: {fix}");
    false
}

/// True when running as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// True when running as root (SCHED_FIFO, mlock, tracefs); see [`require`].
pub fn root(test: &str) -> bool {
    require(
        &format!("{test}: root (SCHED_FIFO, mlock, tracefs)"),
        is_root(),
        "run the tests as root (`sudo -E cargo test`), or grant CAP_SYS_NICE and CAP_IPC_LOCK",
    )
}

/// True when `tool --version` runs; otherwise skips or fails (see
/// [`require`]) naming the Debian package to install.
pub fn have_tool(tool: &str, package: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    require(tool, ok, &format!("apt-get install {package}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_things_are_never_skipped() {
        assert!(require("nothing", true, "no fix needed"));
        assert!(have_tool("sh", "dash") || !std::path::Path::new("/bin/sh").exists());
    }

    #[test]
    fn a_missing_thing_skips_or_fails_as_the_environment_says() {
        let outcome = std::panic::catch_unwind(|| require("a unicorn", false, "breed one"));
        if require_privilege() {
            let message = outcome.unwrap_err();
            let message = message.downcast_ref::<String>().unwrap();
            assert!(message.contains("a unicorn is required"), "{message}");
            assert!(message.contains("breed one"), "{message}");
        } else {
            assert_eq!(outcome.ok(), Some(false));
        }
    }
}
