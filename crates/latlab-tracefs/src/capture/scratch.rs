//! The capture's scratch directory for per-CPU page files: pid-tagged,
//! removed on drop, stale ones of dead processes cleaned up.

use std::fs::{self};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Result, TracefsError};

pub(super) static NEXT_TEMP: AtomicU32 = AtomicU32::new(0);

/// A temporary directory removed on drop.
#[derive(Debug)]
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(base: Option<&Path>) -> Result<Self> {
        let base = base
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        remove_stale_temp_dirs(&base);
        loop {
            let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!(".latlab-capture-{}-{n}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(TracefsError::io("create temp dir", dir, e)),
            }
        }
    }
}

/// Removes `.latlab-capture-<pid>-<n>` directories of processes that died
/// (killed with SIGKILL mid-recording); nothing else is touched.
pub(super) fn remove_stale_temp_dirs(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(".latlab-capture-") else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (pid.parse::<u32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        if pid != std::process::id() && !crate::instance::pid_alive(pid) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
