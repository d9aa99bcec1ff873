//! Puts what `latlab --version` prints into `LATLAB_VERSION`: the package
//! version, the target triple the binary was built for, and the git commit
//! (`git rev-parse --short HEAD`, or `LATLAB_GIT_COMMIT` when set, e.g. for a
//! build from a source tarball; "unknown" when neither is there).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rerun-if-env-changed=LATLAB_GIT_COMMIT");
    let commit = match std::env::var("LATLAB_GIT_COMMIT") {
        Ok(commit) if !commit.trim().is_empty() => commit.trim().to_string(),
        _ => {
            watch_git_head();
            git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=LATLAB_VERSION={version} ({target}, commit {commit})");
}

/// Runs git in the package directory; its trimmed output when it succeeded.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}

/// Re-runs this script when HEAD moves: a commit, a checkout or a pack of the
/// refs. Only paths that exist are named (cargo re-runs a build script on
/// every build for a missing one).
fn watch_git_head() {
    let mut paths = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for path in paths {
        if let Some(file) = git(&["rev-parse", "--git-path", &path]).map(PathBuf::from) {
            if Path::new(&file).exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
}
