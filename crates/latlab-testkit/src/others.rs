//! A program another user can execute. A test that drops root to run a
//! binary as `nobody` needs the binary and every directory above it to let
//! others through; a clone under `/root` (mode 0700 on Debian, where a
//! newcomer working as root clones) does not, and the exec fails with
//! EACCES. There the binary is copied into a temporary directory that does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `exe`, or a copy of it that any user can execute (removed when dropped).
pub struct ExecutableByOthers {
    path: PathBuf,
    _copy: Option<tempfile::TempDir>,
}

impl ExecutableByOthers {
    /// `exe` itself when others can execute it where it is (see
    /// [`others_can_execute`]), else a copy in a new temporary directory of
    /// mode 0755. Panics when the copy cannot be made (a test's setup).
    pub fn new(exe: &Path) -> ExecutableByOthers {
        if others_can_execute(exe) {
            return ExecutableByOthers {
                path: exe.to_owned(),
                _copy: None,
            };
        }
        let dir = tempfile::Builder::new()
            .prefix("latlab-exe")
            .tempdir()
            .expect("a temporary directory for a copy of the binary");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod 0755 the copy's directory");
        let path = dir
            .path()
            .join(exe.file_name().expect("a binary's file name"));
        std::fs::copy(exe, &path)
            .unwrap_or_else(|e| panic!("copying {} for another user: {e}", exe.display()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("chmod 0755 the copy");
        ExecutableByOthers {
            path,
            _copy: Some(dir),
        }
    }

    /// The path to run.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// True when a user other than the owner (and not in its group) can execute
/// `path`: the file has the others' execute bit, and so has every directory
/// above it (the search permission a path lookup needs).
pub fn others_can_execute(path: &Path) -> bool {
    let Ok(path) = path.canonicalize() else {
        return false;
    };
    let searchable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
    searchable(&path) && path.ancestors().skip(1).all(searchable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_under_a_private_directory_is_copied_where_others_reach_it() {
        let private = tempfile::tempdir().unwrap();
        std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let exe = private.path().join("tool");
        std::fs::write(&exe, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!others_can_execute(&exe));

        let copy = ExecutableByOthers::new(&exe);
        assert_ne!(copy.path(), exe);
        assert!(others_can_execute(copy.path()), "{}", copy.path().display());
        assert_eq!(std::fs::read(copy.path()).unwrap(), b"#!/bin/sh\n");
        let dir = copy.path().parent().unwrap().to_owned();
        drop(copy);
        assert!(!dir.exists(), "the copy is removed when dropped");

        std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            ExecutableByOthers::new(&exe).path(),
            exe,
            "no copy when not needed"
        );
    }
}
