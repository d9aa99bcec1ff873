//! Private tracing instances (`instances/latlab-<pid>`), removed on drop.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::error::{Result, TracefsError};
use crate::tracefs::{read_text, write_file, Tracefs};

/// Prefix of every instance latlab creates.
pub const INSTANCE_PREFIX: &str = "latlab-";

static NEXT_SUFFIX: AtomicU32 = AtomicU32::new(0);

/// A tracing instance this process created; removed (after tracing is
/// switched off in it) when dropped.
#[derive(Debug)]
pub struct Instance {
    tracefs: Tracefs,
    name: String,
    dir: PathBuf,
    removed: bool,
}

/// What [`remove_stale_instances`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StaleCleanup {
    /// Instances of dead latlab processes that were removed.
    pub removed: Vec<String>,
    /// Instances of dead processes that could not be removed (still busy).
    pub busy: Vec<String>,
}

/// Parses the pid out of `latlab-<pid>` or `latlab-<pid>-<n>`.
pub fn instance_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(INSTANCE_PREFIX)?;
    let pid = rest.split('-').next()?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process exists (re-exported here for the capture's clean-up).
pub(crate) use latlab_rt::process::pid_alive;

/// Removes `latlab-<pid>` instances whose process is gone. Instances of live
/// processes (and of this process) are never touched, and an instance that
/// still has open files (rmdir fails with EBUSY) is left alone and reported.
pub fn remove_stale_instances(tracefs: &Tracefs) -> Result<StaleCleanup> {
    let dir = tracefs.path("instances");
    let mut out = StaleCleanup::default();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TracefsError::NoInstances { path: dir })
        }
        Err(e) => return Err(TracefsError::io("list", &dir, e)),
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = instance_owner(&name) else {
            continue;
        };
        if pid == me || pid_alive(pid) {
            continue;
        }
        match fs::remove_dir(entry.path()) {
            Ok(()) => out.removed.push(name),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => out.busy.push(name),
        }
    }
    Ok(out)
}

/// Lists the names of all `latlab-*` instances currently present.
pub fn latlab_instances(tracefs: &Tracefs) -> Result<Vec<String>> {
    let dir = tracefs.path("instances");
    let entries = fs::read_dir(&dir).map_err(|e| TracefsError::io("list", &dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(INSTANCE_PREFIX))
        .collect();
    names.sort();
    Ok(names)
}

impl Instance {
    /// Creates `instances/latlab-<pid>` (or `latlab-<pid>-<n>` when this
    /// process already has one), with tracing switched off in it.
    pub fn create(tracefs: &Tracefs) -> Result<Self> {
        let base = tracefs.path("instances");
        if !base.is_dir() {
            return Err(TracefsError::NoInstances { path: base });
        }
        let pid = std::process::id();
        loop {
            let n = NEXT_SUFFIX.fetch_add(1, Ordering::Relaxed);
            let name = if n == 0 {
                format!("{INSTANCE_PREFIX}{pid}")
            } else {
                format!("{INSTANCE_PREFIX}{pid}-{n}")
            };
            let dir = base.join(&name);
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let inst = Instance {
                        tracefs: tracefs.clone(),
                        name,
                        dir,
                        removed: false,
                    };
                    inst.write("tracing_on", "0")?;
                    return Ok(inst);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(TracefsError::io("create instance", dir, e)),
            }
        }
    }

    /// The instance name (`latlab-<pid>...`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instance directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tracefs this instance lives in.
    pub fn tracefs(&self) -> &Tracefs {
        &self.tracefs
    }

    /// A path inside the instance.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes a control file of the instance.
    pub fn write(&self, rel: &str, value: &str) -> Result<()> {
        write_file(&self.path(rel), value)
    }

    /// Reads a file of the instance as text.
    pub fn read(&self, rel: &str) -> Result<String> {
        read_text(&self.path(rel))
    }

    /// Switches tracing off and removes the instance. Retries for up to a
    /// second while files of the instance are still being closed.
    pub fn remove(mut self) -> Result<()> {
        self.remove_inner()
    }

    fn remove_inner(&mut self) -> Result<()> {
        if self.removed {
            return Ok(());
        }
        let _ = self.write("tracing_on", "0");
        let _ = self.write("events/enable", "0");
        let mut last = None;
        for _ in 0..50 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    last = Some(e);
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        Err(TracefsError::InstanceRemove {
            path: self.dir.clone(),
            source: last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::Other)),
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.remove_inner() {
            // Drop cannot return the error; leave a trace of it for the user.
            eprintln!("latlab-tracefs: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_parsing() {
        assert_eq!(instance_owner("latlab-123"), Some(123));
        assert_eq!(instance_owner("latlab-123-4"), Some(123));
        assert_eq!(instance_owner("latlab-"), None);
        assert_eq!(instance_owner("latlab-x1"), None);
        assert_eq!(instance_owner("other-123"), None);
    }

    #[test]
    fn dead_and_live_pids() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
    }
}
