//! A report's plots as SVG and PNG files (`latlab report --png DIR`): the
//! PNGs are drawn by a headless Chromium that talks to no network. The one
//! part of this crate that runs a program and writes files.

use latlab_rt::scratch::ScratchDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::html::svg::{Plot, HEIGHT, WIDTH};

/// Browsers drawing at once (each with its own profile): most of the time
/// of one is its start-up.
const WORKERS: usize = 3;

/// The PNGs are drawn at this multiple of the plots' size, for print.
const SCALE: u32 = 2;

/// Why the plots could not be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum PngError {
    /// A file or directory could not be written or read.
    Io {
        /// What was being done, with the path: `creating the --png directory /x`.
        doing: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The browser did not write a PNG.
    Browser {
        /// The browser.
        browser: PathBuf,
        /// The PNG it was to write.
        png: PathBuf,
        /// The last line of its error output.
        message: String,
    },
}

impl std::fmt::Display for PngError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PngError::Io { doing, .. } => f.write_str(doing),
            PngError::Browser {
                browser,
                png,
                message,
            } => write!(
                f,
                "{} did not write {}: {message}",
                browser.display(),
                png.display()
            ),
        }
    }
}

impl std::error::Error for PngError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PngError::Io { source, .. } => Some(source),
            PngError::Browser { .. } => None,
        }
    }
}

fn io(doing: impl FnOnce() -> String) -> impl FnOnce(std::io::Error) -> PngError {
    move |source| PngError::Io {
        doing: doing(),
        source,
    }
}

/// A Chromium to draw with: $LATLAB_CHROMIUM, else chromium or
/// chromium-browser or google-chrome on the PATH.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("LATLAB_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Writes every plot as `dir/<plot>.svg` and `dir/<plot>.png` (the
/// directory created if need be), the PNGs drawn by `browser`.
pub fn write_plots(plots: &[Plot], dir: &Path, browser: &Path) -> Result<(), PngError> {
    std::fs::create_dir_all(dir).map_err(io(|| {
        format!("creating the --png directory {}", dir.display())
    }))?;
    let dir = dir
        .canonicalize()
        .map_err(io(|| format!("resolving {}", dir.display())))?;
    let profile = BrowserProfile::create()?;
    let mut jobs = Vec::new();
    for plot in plots {
        let svg = dir.join(format!("{}.svg", plot.id));
        std::fs::write(&svg, plot.to_svg()).map_err(io(|| format!("writing {}", svg.display())))?;
        jobs.push((svg, dir.join(format!("{}.png", plot.id))));
    }
    let size = (WIDTH as u32, HEIGHT as u32);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                let jobs = &jobs;
                let profile = profile.0.path().join(format!("worker{w}"));
                scope.spawn(move || -> Result<(), PngError> {
                    for (svg, png) in jobs.iter().skip(w).step_by(WORKERS) {
                        screenshot(browser, &profile, svg, png, size, SCALE)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a screenshot worker panicked"))
    })
}

/// The browsers' scratch profile directory (latlab-rt's pid-tagged
/// [`ScratchDir`]: removed on drop, and by a later run if this one is killed).
struct BrowserProfile(ScratchDir);

impl BrowserProfile {
    fn create() -> Result<BrowserProfile, PngError> {
        ScratchDir::create("latlab-chromium-", None)
            .map(BrowserProfile)
            .map_err(|e| {
                io(|| format!("creating the browser profile {}", e.path.display()))(e.source)
            })
    }
}

/// Draws `page` (a local file) into `png` with a headless Chromium that
/// talks to no network and keeps its profile in `profile`.
fn screenshot(
    browser: &Path,
    profile: &Path,
    page: &Path,
    png: &Path,
    (width, height): (u32, u32),
    scale: u32,
) -> Result<(), PngError> {
    let _ = std::fs::remove_file(png);
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--force-device-scale-factor={scale}"))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(io(|| format!("starting {}", browser.display())))?;
    if !png.is_file() {
        return Err(PngError::Browser {
            browser: browser.to_path_buf(),
            png: png.to_path_buf(),
            message: String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("no message")
                .to_string(),
        });
    }
    Ok(())
}
