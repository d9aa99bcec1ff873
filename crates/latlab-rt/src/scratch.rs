//! A private scratch directory tagged with our pid, removed on drop, and the
//! clean-up of those left behind by processes that were killed.
//!
//! A directory is named `<prefix><pid>-<n>`: the pid says whose it is, so a
//! later run removes the ones whose process no longer exists (killed with
//! SIGKILL before its drop could run) and never touches a live one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::process::pid_alive;

/// A directory `<prefix><pid>-<n>` (mode 0700), removed with its contents on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

/// A scratch directory could not be created or removed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct ScratchError {
    /// The directory.
    pub path: PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

impl ScratchDir {
    /// Creates a fresh scratch directory named `<prefix><pid>-<n>` under
    /// `base` (the system temp dir when `None`), first removing those that
    /// processes no longer alive left there.
    pub fn create(prefix: &str, base: Option<&Path>) -> Result<ScratchDir, ScratchError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        remove_stale(&base, prefix);
        let pid = std::process::id();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{prefix}{pid}-{n}"));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(ScratchError { path, source }),
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory now, reporting a failure (one already gone is fine).
    pub fn remove(self) -> Result<(), ScratchError> {
        let path = self.path.clone();
        std::mem::forget(self);
        match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ScratchError { path, source }),
        }
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The pid in a scratch directory's name `<prefix><pid>-<n>`, if it is one.
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix(prefix)?.split_once('-')?;
    let numbered = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    numbered.then(|| pid.parse().ok()).flatten()
}

/// Removes the scratch directories under `base` whose name says `owned`.
fn remove_where(base: &Path, prefix: &str, owned: impl Fn(u32) -> bool) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| owner(n, prefix)) else {
            continue;
        };
        if owned(pid) && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes the `<prefix><pid>-<n>` directories under `base` whose process
/// is gone; this process's and live processes' are left alone.
pub fn remove_stale(base: &Path, prefix: &str) {
    let me = std::process::id();
    remove_where(base, prefix, |pid| pid != me && !pid_alive(pid));
}

/// Removes the `<prefix><pid>-<n>` directories of process `pid` under
/// `base`: for a child that was killed before it could (call it only once
/// that child is reaped).
pub fn remove_left_by(base: &Path, prefix: &str, pid: u32) {
    remove_where(base, prefix, |owner| owner == pid);
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "latlab-test-";

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn removed_on_drop_and_leftovers_of_dead_processes_are_cleaned() {
        let base = tempfile::tempdir().unwrap();
        // pid 0 is never a user process: this looks like a SIGKILLed run's leftover.
        let stale = base.path().join(format!("{PREFIX}0-7"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("file"), b"x").unwrap();
        let dir = ScratchDir::create(PREFIX, Some(base.path())).unwrap();
        assert!(
            !stale.exists(),
            "stale dir of a dead process must be removed"
        );
        let name = dir.path().file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.starts_with(&format!("{PREFIX}{}-", std::process::id())),
            "{name}"
        );
        std::fs::write(dir.path().join("f"), b"data").unwrap();
        let path = dir.path().to_owned();
        drop(dir);
        assert!(!path.exists());
        assert!(names(base.path()).is_empty());
    }

    #[test]
    fn live_processes_other_prefixes_and_plain_files_are_left_alone() {
        let base = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let keep = [
            format!("{PREFIX}{me}-99"),
            format!("{PREFIX}1-0"),
            "other-0-1".to_owned(),
            format!("{PREFIX}0-x"),
        ];
        for name in &keep {
            std::fs::create_dir(base.path().join(name)).unwrap();
        }
        std::fs::write(base.path().join(format!("{PREFIX}0-3")), b"a file").unwrap();
        let dir = ScratchDir::create(PREFIX, Some(base.path())).unwrap();
        let mut expected: Vec<String> = keep.to_vec();
        expected.push(format!("{PREFIX}0-3"));
        expected.push(dir.path().file_name().unwrap().to_str().unwrap().to_owned());
        expected.sort();
        assert_eq!(names(base.path()), expected);
    }

    #[test]
    fn two_directories_of_one_process_differ_and_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let a = ScratchDir::create(PREFIX, Some(base.path())).unwrap();
        let b = ScratchDir::create(PREFIX, Some(base.path())).unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        b.remove().unwrap();
        assert_eq!(names(base.path()).len(), 1);
    }

    #[test]
    fn the_directories_of_one_reaped_child_are_removed() {
        let base = tempfile::tempdir().unwrap();
        for name in ["42-0", "42-1", "421-0"] {
            std::fs::create_dir(base.path().join(format!("{PREFIX}{name}"))).unwrap();
        }
        remove_left_by(base.path(), PREFIX, 42);
        assert_eq!(names(base.path()), vec![format!("{PREFIX}421-0")]);
    }

    #[test]
    fn a_base_that_is_not_a_directory_is_an_error_naming_the_path() {
        let base = tempfile::NamedTempFile::new().unwrap();
        let err = ScratchDir::create(PREFIX, Some(base.path())).unwrap_err();
        assert!(err.path.starts_with(base.path()), "{err}");
        assert!(err.to_string().contains(&base.path().display().to_string()));
    }
}
