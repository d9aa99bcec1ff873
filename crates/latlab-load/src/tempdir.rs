//! The private scratch directory of a running load, removed on drop.

use std::path::Path;

use latlab_rt::scratch::ScratchDir;

use crate::LoadError;

/// Name prefix of every scratch directory; followed by `<pid>-<n>`.
const PREFIX: &str = "latlab-load-";

/// The private scratch directory of a running load: `latlab-load-<pid>-<n>`
/// under the temp root, removed with its contents on drop.
#[derive(Debug)]
pub(crate) struct TempDir(ScratchDir);

impl TempDir {
    /// Creates a fresh scratch directory under `root` (mode 0700), first removing
    /// leftovers of latlab processes that no longer exist (killed with SIGKILL).
    pub(crate) fn create(root: &Path) -> Result<TempDir, LoadError> {
        ScratchDir::create(PREFIX, Some(root))
            .map(TempDir)
            .map_err(|e| LoadError::Io {
                action: "create the load's temp dir (choose another with the temp dir option)",
                path: e.path,
                source: e.source,
            })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    /// Removes the directory now, reporting a failure.
    pub(crate) fn remove(self) -> Result<(), LoadError> {
        self.0.remove().map_err(|e| LoadError::Io {
            action: "remove the load's temp dir",
            path: e.path,
            source: e.source,
        })
    }
}

/// Removes the scratch directories `latlab-load-<pid>-*` of process `pid`
/// under `root`: for a load process that was killed before it could (call
/// it only once that process is reaped).
pub(crate) fn remove_of(root: &Path, pid: u32) {
    latlab_rt::scratch::remove_left_by(root, PREFIX, pid);
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
