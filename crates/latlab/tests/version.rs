//! `latlab --version`: a binary copied to a board says what it is.

mod common;
use common::latlab;

/// Checks one line of `latlab ... --version` or `-V` output:
/// `latlab <version> (<target triple>, commit <git commit or unknown>)`.
fn assert_version_line(stdout: &[u8]) {
    let text = String::from_utf8(stdout.to_vec()).expect("utf-8 version");
    let line = text.trim_end();
    assert!(!line.contains('\n'), "one line: {text:?}");
    let rest = line
        .strip_prefix(&format!("latlab {} (", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("starts with the package version: {line:?}"));
    let inner = rest
        .strip_suffix(')')
        .unwrap_or_else(|| panic!("ends with ')': {line:?}"));
    let (target, commit) = inner
        .split_once(", commit ")
        .unwrap_or_else(|| panic!("names the target and the commit: {line:?}"));
    let parts: Vec<&str> = target.split('-').collect();
    assert!(
        parts.len() >= 3 && parts.iter().all(|p| !p.is_empty()),
        "a target triple: {target:?}"
    );
    assert!(target.contains("-linux-"), "a Linux target: {target:?}");
    assert!(
        commit == "unknown" || (commit.len() >= 4 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "a short git commit or \"unknown\": {commit:?}"
    );
}

#[test]
fn version_names_the_package_version_target_and_commit() {
    for flag in ["--version", "-V"] {
        let output = latlab().arg(flag).output().expect("latlab runs");
        assert!(output.status.success(), "{flag}: {output:?}");
        assert_version_line(&output.stdout);
    }
}

#[test]
fn subcommands_print_the_same_version() {
    let top = latlab().arg("--version").output().expect("latlab runs");
    let sub = latlab()
        .args(["run", "--version"])
        .output()
        .expect("latlab runs");
    assert!(sub.status.success(), "{sub:?}");
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    let sub = String::from_utf8_lossy(&sub.stdout).into_owned();
    // clap names the subcommand: "latlab-run 0.1.0 (...)".
    assert_eq!(
        sub.split_once(' ').map(|s| s.1),
        top.split_once(' ').map(|s| s.1),
        "run --version: {sub:?}"
    );
}

#[test]
fn version_names_the_target_this_test_was_built_for() {
    let output = latlab().arg("--version").output().expect("latlab runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let arch = std::env::consts::ARCH;
    assert!(
        text.contains(&format!("({arch}")),
        "the triple starts with this machine's arch {arch}: {text:?}"
    );
}
