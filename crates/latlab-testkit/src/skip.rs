//! Skip or fail: a test that needs something this machine lacks.
//!
//! Every skip goes through [`skip`]: it prints `SKIP: {reason}` on stderr and,
//! when `LATLAB_SKIP_LOG` names a file, appends one line to it (the test and
//! the reason), so that `make test` can list what did not run and why; cargo
//! hides a passing test's stderr, and a skipped test passes.

use std::io::Write;
use std::process::{Command, Stdio};

/// The environment variable that turns every skip into a failure.
pub const REQUIRE_PRIVILEGE: &str = "LATLAB_REQUIRE_PRIVILEGE";

/// The environment variable that makes a test that does not find tracefs
/// fail instead of skipping: set where tracefs is known to be there
/// (`scripts/test-debugfs-tracing.sh`, which checked it is under debugfs),
/// so that a discovery that misses it is a failure, whatever else may skip.
pub const REQUIRE_TRACEFS: &str = "LATLAB_REQUIRE_TRACEFS";

/// The environment variable naming the file every skip appends a line to:
/// `{test}\t{reason}\n` (see [`skip`]). `make test` sets it and lists the
/// lines at its end.
pub const SKIP_LOG: &str = "LATLAB_SKIP_LOG";

/// True when `LATLAB_REQUIRE_PRIVILEGE=1`: a missing privilege or tool fails
/// the test instead of skipping it.
pub fn require_privilege() -> bool {
    std::env::var(REQUIRE_PRIVILEGE).as_deref() == Ok("1")
}

/// True when `LATLAB_REQUIRE_TRACEFS=1` (or `LATLAB_REQUIRE_PRIVILEGE=1`): a
/// test that does not find tracefs fails instead of skipping.
pub fn require_tracefs_present() -> bool {
    require_privilege() || std::env::var(REQUIRE_TRACEFS).as_deref() == Ok("1")
}

/// True when `ok`; otherwise skips (see [`skip`]: `SKIP: {what} missing:
/// {fix}`) and returns false or, under `LATLAB_REQUIRE_PRIVILEGE=1`, fails.
pub fn require(what: &str, ok: bool, fix: &str) -> bool {
    require_if(require_privilege(), what, ok, fix)
}

/// [`require`] with the rule given: true when `ok`; otherwise fails when
/// `strict`, else skips and returns false.
pub fn require_if(strict: bool, what: &str, ok: bool, fix: &str) -> bool {
    if ok {
        return true;
    }
    if strict {
        panic!(
            "{what} is required (LATLAB_REQUIRE_PRIVILEGE=1, or for tracefs \
             LATLAB_REQUIRE_TRACEFS=1, makes a skip a failure): {fix}"
        );
    }
    skip(&format!("{what} missing: {fix}"));
    false
}

/// Skips (part of) the running test, whatever `LATLAB_REQUIRE_PRIVILEGE`
/// says: prints `SKIP: {reason}` on stderr and appends `{test}\t{reason}` to
/// the file `LATLAB_SKIP_LOG` names, if any. For what no installation or
/// privilege provides (more CPUs, the project's shared traces beside its
/// own checkouts); use [`require`] for what CI must have. The caller
/// returns from the test (or leaves out the part) after it.
pub fn skip(reason: &str) {
    eprintln!("SKIP: {reason}");
    let Some(path) = std::env::var_os(SKIP_LOG) else {
        return;
    };
    // One write of one line, appended: the test threads and binaries that
    // skip at once do not interleave their lines.
    let line = format!("{}\t{}\n", current_test(), one_line(reason));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(err) = written {
        eprintln!(
            "SKIP log {}: {err} (the skip is not listed)",
            std::path::Path::new(&path).display()
        );
    }
}

/// The running test as `{package} {target}::{test}` (`{package} {test}` for
/// a crate's own unit tests): the package from cargo's `CARGO_PKG_NAME`, the
/// target from the test binary's name (`record-0123abcd` is `record`), the
/// test from the thread libtest runs it on (`?` in a thread of the test's own).
pub fn current_test() -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "?".into());
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let stem = exe.file_stem()?.to_str()?.to_owned();
            Some(match stem.rsplit_once('-') {
                Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.into(),
                _ => stem,
            })
        })
        .unwrap_or_else(|| "?".into());
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("?");
    if target == package.replace('-', "_") {
        format!("{package} {test}")
    } else {
        format!("{package} {target}::{test}")
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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

    // A missing thing skips (and is logged) or fails: tests/skip_log.rs,
    // in a child run, so that no skip of this run is a deliberate one.

    #[test]
    fn the_running_test_is_named_by_package_and_test() {
        let name = current_test();
        assert_eq!(
            name,
            "latlab-testkit skip::tests::the_running_test_is_named_by_package_and_test"
        );
    }
}
