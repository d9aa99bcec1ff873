//! Finding (or mounting) tracefs.

use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, TracefsError};

/// The standard tracefs mount point.
pub const DEFAULT_MOUNT: &str = "/sys/kernel/tracing";

/// A mounted tracefs.
#[derive(Debug, Clone)]
pub struct Tracefs {
    root: PathBuf,
    mounted_now: bool,
}

impl Tracefs {
    /// Finds tracefs: `/sys/kernel/tracing` if populated, else a tracefs (or
    /// debugfs `tracing/`) mount listed in `/proc/mounts`; mounts tracefs at
    /// `/sys/kernel/tracing` when none is found (see [`Tracefs::mounted_now`]).
    /// The mount is left in place when latlab exits: other tools (and other
    /// latlab processes) may be using it, and it costs nothing.
    pub fn discover() -> Result<Self> {
        if let Some(root) = find_mounted() {
            return Ok(Tracefs {
                root,
                mounted_now: false,
            });
        }
        let target = PathBuf::from(DEFAULT_MOUNT);
        mount_tracefs(&target)?;
        Ok(Tracefs {
            root: target,
            mounted_now: true,
        })
    }

    /// Uses tracefs at `root` without checking /proc/mounts.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Tracefs {
            root: root.into(),
            mounted_now: false,
        }
    }

    /// The tracefs root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when [`Tracefs::discover`] had to mount tracefs itself.
    pub fn mounted_now(&self) -> bool {
        self.mounted_now
    }

    /// A path below the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Reads a file below the root.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>> {
        read_file(&self.path(rel))
    }
}

fn is_populated(dir: &Path) -> bool {
    dir.join("trace").exists() || dir.join("instances").exists()
}

/// Looks for an existing tracefs in the usual place and in /proc/mounts.
fn find_mounted() -> Option<PathBuf> {
    let default = Path::new(DEFAULT_MOUNT);
    if is_populated(default) {
        return Some(default.to_path_buf());
    }
    let mounts = fs::read_to_string("/proc/mounts").ok()?;
    let mut debugfs = None;
    for line in mounts.lines() {
        let mut parts = line.split_whitespace();
        let (_dev, Some(dir), Some(kind)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let dir = unescape_mount_path(dir);
        match kind {
            "tracefs" if is_populated(Path::new(&dir)) => return Some(PathBuf::from(dir)),
            "debugfs" => {
                let tracing = Path::new(&dir).join("tracing");
                if is_populated(&tracing) {
                    debugfs = Some(tracing);
                }
            }
            _ => {}
        }
    }
    debugfs
}

/// /proc/mounts escapes space, tab, newline and backslash as octal.
fn unescape_mount_path(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && s.is_char_boundary(i + 4) {
            let oct = &s[i + 1..i + 4];
            if let Ok(v) = u8::from_str_radix(oct, 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn mount_tracefs(target: &Path) -> Result<()> {
    let src = CString::new("nodev").expect("no NUL");
    let fstype = CString::new("tracefs").expect("no NUL");
    let dir = CString::new(target.as_os_str().as_encoded_bytes()).map_err(|_| {
        TracefsError::NotMounted {
            path: target.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        }
    })?;
    // SAFETY: all pointers are valid NUL-terminated strings; data is NULL.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            dir.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let source = std::io::Error::last_os_error();
        if matches!(
            source.raw_os_error(),
            Some(libc::EPERM) | Some(libc::EACCES)
        ) {
            return Err(TracefsError::PermissionDenied {
                path: target.to_path_buf(),
            });
        }
        return Err(TracefsError::NotMounted {
            path: target.to_path_buf(),
            source,
        });
    }
    Ok(())
}

/// Reads a whole (pseudo-)file with large read(2) calls. Some tracefs files
/// (`events/header_page` on Linux 6.x) return only the first chunk when read
/// in small pieces, as `std::fs::read` does for files reporting size 0.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    const CHUNK: usize = 64 * 1024;
    let mut f = fs::File::open(path).map_err(|e| TracefsError::io("open", path, e))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TracefsError::io("read", path, e)),
        }
    }
}

/// Reads a pseudo-file as text.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    Ok(String::from_utf8_lossy(&read_file(path)?).into_owned())
}

/// Writes a control file (one write(2), as tracefs expects).
pub(crate) fn write_file(path: &Path, value: &str) -> Result<()> {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| TracefsError::io("open for writing", path, e))?;
    f.write_all(value.as_bytes())
        .map_err(|e| TracefsError::io("write", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths_unescape() {
        assert_eq!(unescape_mount_path("/a\\040b"), "/a b");
        assert_eq!(unescape_mount_path("/plain"), "/plain");
        assert_eq!(unescape_mount_path("/end\\"), "/end\\");
    }
}
