//! Result files written so that a full disk or a crash never leaves a
//! half-written one where a complete one was expected, and never replaces
//! someone else's file.

use std::io::{Error, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` via a temporary sibling (`*.tmp-latlab`), synced,
/// then renamed over `path`; the sibling is removed when a step fails.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp-latlab");
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates `<base>/<stamp>`, or `<stamp>-2`, `-3`... when taken (`base`
/// must exist); the error names the directory it could not create.
pub fn create_unique_dir(base: &Path, stamp: &str) -> std::io::Result<PathBuf> {
    for n in 1.. {
        let name = if n == 1 {
            stamp.to_string()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(naming(e, "cannot create", &dir)),
        }
    }
    unreachable!("the loop only ends by returning")
}

/// Writes `bytes` to a new file `latlab-<pid>-<n>-<file_name>` in the
/// temporary directory, never following or replacing an existing file (a
/// shared /tmp may hold someone else's link of that name); its path, or an
/// error naming the file.
pub fn write_new_in_temp_dir(file_name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir();
    for n in 1..100 {
        let path = dir.join(format!("latlab-{}-{n}-{file_name}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path);
        match file {
            Ok(mut file) => {
                return file
                    .write_all(bytes)
                    .and_then(|()| file.sync_all())
                    .map(|()| path.clone())
                    .map_err(|e| naming(e, "cannot write", &path));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(naming(e, "cannot create", &path)),
        }
    }
    Err(Error::new(
        ErrorKind::AlreadyExists,
        format!("no free file name in {}", dir.display()),
    ))
}

/// `error`, its message prefixed with `what` and `path`.
fn naming(error: Error, what: &str, path: &Path) -> Error {
    Error::new(error.kind(), format!("{what} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_stamp_gets_the_next_number() {
        let base = std::env::temp_dir().join(format!("latlab-files-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let first = create_unique_dir(&base, "stamp").unwrap();
        let second = create_unique_dir(&base, "stamp").unwrap();
        assert_eq!(first, base.join("stamp"));
        assert_eq!(second, base.join("stamp-2"));
        write_atomically(&first.join("r.json"), b"{}").unwrap();
        assert_eq!(std::fs::read(first.join("r.json")).unwrap(), b"{}");
        assert!(!first.join("r.tmp-latlab").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn errors_name_the_file() {
        let err = create_unique_dir(Path::new("/proc/no-such-dir"), "stamp").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot create /proc/no-such-dir/stamp: "),
            "{err}"
        );
    }
}
