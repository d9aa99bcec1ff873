//! Headless Chromium, for the tests that open a report or the dashboard.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The first Chromium on the PATH.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, or a skip with the reason (a failure when CI demands it).
pub fn or_skip(test: &str) -> Option<PathBuf> {
    let found = find();
    latlab_testkit::require(
        &format!("{test}: chromium on the PATH"),
        found.is_some(),
        "apt-get install -y chromium",
    );
    found
}

/// Headless Chromium with a fresh profile (emptied first) and every
/// proxied (non-loopback) request sent to an address nothing listens on:
/// the page can fetch nothing from the network.
pub fn headless(browser: &Path, profile: &Path, args: &[String]) -> Output {
    let _ = std::fs::remove_dir_all(profile);
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-quic",
            "--disable-sync",
            "--proxy-server=http://127.0.0.1:9",
        ])
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium starts")
}
