//! The private scratch directory of a running load, removed on drop.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::LoadError;

/// Name prefix of every scratch directory; followed by `<pid>-<n>`.
const PREFIX: &str = "latlab-load-";

/// A directory `latlab-load-<pid>-<n>` under a root, removed with its contents on drop.
#[derive(Debug)]
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates a fresh scratch directory under `root` (mode 0700), first removing
    /// leftovers of latlab processes that no longer exist (killed with SIGKILL).
    pub(crate) fn create(root: &Path) -> Result<TempDir, LoadError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        remove_stale(root);
        let pid = std::process::id();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = root.join(format!("{PREFIX}{pid}-{n}"));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(LoadError::Io {
                        action:
                            "create the load's temp dir (choose another with the temp dir option)",
                        path,
                        source,
                    })
                }
            }
        }
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory now, reporting a failure.
    pub(crate) fn remove(self) -> Result<(), LoadError> {
        let path = self.path.clone();
        std::mem::forget(self);
        match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(LoadError::Io {
                action: "remove the load's temp dir",
                path,
                source,
            }),
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the scratch directories `latlab-load-<pid>-*` of process `pid`
/// under `root`: for a load process that was killed before it could (call
/// it only once that process is reaped).
pub(crate) fn remove_of(root: &Path, pid: u32) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let prefix = format!("{PREFIX}{pid}-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name.to_str().is_some_and(|n| n.starts_with(&prefix));
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes `latlab-load-<pid>-*` directories under `root` whose process is gone.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_on_drop_and_leftovers_of_dead_processes_are_cleaned() {
        let root = tempfile::tempdir().unwrap();
        // pid 0 is never a user process: this looks like a SIGKILLed run's leftover.
        let stale = root.path().join(format!("{PREFIX}0-7"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("file"), b"x").unwrap();
        let dir = TempDir::create(root.path()).unwrap();
        assert!(
            !stale.exists(),
            "stale dir of a dead process must be removed"
        );
        std::fs::write(dir.path().join("f"), b"data").unwrap();
        let path = dir.path().to_owned();
        drop(dir);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_root_that_is_not_a_directory_is_a_clear_error() {
        let root = tempfile::NamedTempFile::new().unwrap();
        let err = TempDir::create(root.path()).unwrap_err().to_string();
        assert!(err.contains("temp dir"), "{err}");
        assert!(err.contains(&root.path().display().to_string()), "{err}");
    }
}
