//! A skipped test is listed, not hidden: cargo shows no stderr of a test that
//! passes, and a skipped test passes, so every skip appends its test and
//! reason to the file `LATLAB_SKIP_LOG` names, and `make test`'s summary
//! (scripts/test-summary.sh) lists it and counts it as skipped, not passed.
//! The test binary runs itself for the skipping test: a real libtest run,
//! its real output read by the real summary script.

use std::path::Path;
use std::process::{Command, Output};

/// Set only in the child run: there `a_test_that_lacks_a_unicorn` skips.
const CHILD: &str = "LATLAB_TESTKIT_SKIP_LOG_CHILD";
/// The file every skip is appended to (`latlab_testkit::skip::SKIP_LOG`).
const SKIP_LOG: &str = "LATLAB_SKIP_LOG";
/// CI's rule: every skip is a failure.
const REQUIRE_PRIVILEGE: &str = "LATLAB_REQUIRE_PRIVILEGE";

#[test]
fn a_test_that_lacks_a_unicorn() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    if !latlab_testkit::require("a unicorn", false, "breed one") {
        return;
    }
    unreachable!("require returned true for something missing");
}

/// This binary running only `a_test_that_lacks_a_unicorn`, as the child.
fn run_the_skipping_test(skip_log: &Path, require_privilege: bool) -> Output {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "a_test_that_lacks_a_unicorn", "--test-threads=1"])
        .env(CHILD, "1")
        .env(SKIP_LOG, skip_log)
        .env_remove(REQUIRE_PRIVILEGE);
    if require_privilege {
        child.env(REQUIRE_PRIVILEGE, "1");
    }
    child.output().unwrap()
}

#[test]
fn a_skip_is_logged_and_the_summary_lists_and_counts_it() {
    let logs = tempfile::tempdir().unwrap();
    let skip_log = logs.path().join("skips-unit");
    let out = run_the_skipping_test(&skip_log, false);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("1 passed"),
        "cargo counts a skip as passed: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&skip_log).unwrap(),
        "latlab-testkit skip_log::a_test_that_lacks_a_unicorn\ta unicorn missing: breed one\n"
    );

    // make test's summary of a run whose cargo step was this one.
    std::fs::write(logs.path().join("unit.log"), &out.stdout).unwrap();
    std::fs::write(logs.path().join("steps"), "unit\t0\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test-summary.sh");
    let summary = Command::new("bash")
        .arg(script)
        .arg(logs.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(summary.status.success(), "{text}");
    assert!(
        text.contains(
            "\n  latlab-testkit skip_log::a_test_that_lacks_a_unicorn: a unicorn missing: breed one\n"
        ),
        "{text}"
    );
    assert_eq!(
        text.lines().last(),
        Some("tests: 0 passed, 0 failed, 1 skipped"),
        "{text}"
    );
}

#[test]
fn under_require_privilege_the_skip_fails_and_is_not_logged() {
    let logs = tempfile::tempdir().unwrap();
    let skip_log = logs.path().join("skips-unit");
    let out = run_the_skipping_test(&skip_log, true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("1 failed"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("a unicorn is required") && said.contains("breed one"),
        "the failure names what is missing and the fix: {said}"
    );
    assert!(!skip_log.exists(), "a failure is not a skip");
}
