//! The restore file on disk: stored, loaded, found stale, and restored by
//! `latlab tune --restore`.

use std::path::{Path, PathBuf};

use super::{JournalFile, RestoreReport};

/// The restore file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// A restore file is there already.
    #[error("a restore file exists: {path}: {message}")]
    Exists {
        /// The file.
        path: PathBuf,
        /// Whose it is and what to do (`latlab tune --restore`).
        message: String,
    },
    /// The tune that owns it is still running.
    #[error("{path} belongs to latlab tune pid {pid}, which is still running: stop it (Ctrl-C) and it restores its knobs")]
    Live {
        /// The file.
        path: PathBuf,
        /// The owner.
        pid: u32,
    },
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a restore file.
    #[error("{path} is not a latlab tune restore file: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
}

/// A restore file whose tune has ended without restoring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// The file.
    pub path: PathBuf,
    /// The tune that wrote it.
    pub owner_pid: u32,
    /// When it started.
    pub started: String,
    /// Knobs recorded.
    pub entries: usize,
    /// It belongs to this boot (else its runtime changes are gone).
    pub same_boot: bool,
    /// What happened and what to do.
    pub message: String,
}

/// This boot's id, `/proc/sys/kernel/random/boot_id`.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|t| t.trim().to_string())
        .unwrap_or_default()
}

/// Writes the file atomically: temp file, fsync, rename.
pub(crate) fn store(path: &Path, file: &JournalFile) -> Result<(), JournalError> {
    let bytes = serde_json::to_vec_pretty(file).expect("a journal serializes");
    latlab_rt::files::write_atomically(path, &bytes).map_err(|source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads the file.
pub(crate) fn load(path: &Path) -> Result<JournalFile, JournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| JournalError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Removes the file (gone already is fine).
pub(crate) fn remove(path: &Path) -> Result<(), JournalError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(JournalError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

fn owner_alive(file: &JournalFile) -> bool {
    file.boot_id == boot_id()
        && latlab_rt::process::pid_alive(file.owner_pid)
        && crate::knobs::task::comm(file.owner_pid as i32).is_ok_and(|c| c == file.owner_comm)
}

/// What a measuring command (`latlab run`) should say before it measures
/// about the restore file at `path`: a stale one ([`check_stale`]'s
/// message), or a tune running now that is not this process's parent (a
/// tune's own runs are its children), whose changes the measurement sees.
pub fn notice(path: &Path) -> Option<String> {
    if let Some(stale) = check_stale(path) {
        return Some(stale.message);
    }
    let file = load(path).ok()?;
    // SAFETY: getppid(2) takes no arguments and cannot fail.
    let parent = unsafe { libc::getppid() } as u32;
    (file.owner_pid != parent).then(|| {
        format!(
            "latlab tune (pid {}) is changing system settings now ({} recorded in {}): this \
             measurement sees them",
            file.owner_pid,
            file.entries.len(),
            path.display()
        )
    })
}

/// A restore file at `path` whose owner is no longer running, with what to
/// do about it; `None` when there is none or its tune is running. (An
/// unreadable file is reported as stale too.)
pub fn check_stale(path: &Path) -> Option<Stale> {
    if !path.exists() {
        return None;
    }
    let file = match load(path) {
        Ok(file) => file,
        Err(e) => {
            return Some(Stale {
                path: path.to_path_buf(),
                owner_pid: 0,
                started: String::new(),
                entries: 0,
                same_boot: false,
                message: format!("{e}: remove it by hand once you have checked it"),
            })
        }
    };
    if owner_alive(&file) {
        return None;
    }
    let same_boot = file.boot_id == boot_id();
    let k = file.entries.len();
    let head = format!(
        "latlab tune (pid {}, started {}) ended without restoring {k} knob{}",
        file.owner_pid,
        file.started,
        if k == 1 { "" } else { "s" }
    );
    let message = if same_boot {
        format!("{head}: run `latlab tune --restore` ({})", path.display())
    } else {
        format!(
            "{head}, from an earlier boot: its runtime changes did not survive the reboot; \
             `latlab tune --restore` removes the file ({})",
            path.display()
        )
    };
    Some(Stale {
        path: path.to_path_buf(),
        owner_pid: file.owner_pid,
        started: file.started,
        entries: k,
        same_boot,
        message,
    })
}

/// `latlab tune --restore`: puts back every knob of a restore file left by
/// a tune that ended (or of the kept file `--keep` wrote), last first, and
/// removes the file when all went back (else it keeps the failed ones). A
/// file from an earlier boot is only removed: no runtime change survives a
/// reboot (sysctls, /proc and /sys values, and cgroupfs, where a partition
/// lives, all start afresh), and a partition found now is this boot's.
pub fn restore_file(path: &Path) -> Result<RestoreReport, JournalError> {
    let mut file = load(path)?;
    if file.owner_pid != std::process::id() && owner_alive(&file) {
        return Err(JournalError::Live {
            path: path.to_path_buf(),
            pid: file.owner_pid,
        });
    }
    let same_boot = file.boot_id == boot_id();
    let mut report = RestoreReport::default();
    let mut kept = Vec::new();
    for entry in file.entries.drain(..).rev() {
        if !same_boot {
            report
                .dropped
                .push((entry.knob, "a runtime change of an earlier boot".into()));
            continue;
        }
        kept.extend(report.put_back(entry));
    }
    if kept.is_empty() {
        remove(path)?;
    } else {
        kept.reverse();
        file.entries = kept;
        store(path, &file)?;
    }
    Ok(report)
}
