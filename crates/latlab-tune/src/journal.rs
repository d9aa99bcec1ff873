//! The restore file: every knob tune changes is recorded with its old
//! value *before* it is written, so that every exit path can put it back:
//! [`Journal::restore`] at the end, on an error, on Ctrl-C or SIGTERM (and
//! when a [`Journal`] is dropped unrestored, e.g. by a panic); after
//! SIGKILL or a power cut, `latlab tune --restore` ([`restore_file`]).
//!
//! The file is JSON, rewritten atomically (temp file, fsync, rename)
//! before every change: the owner's pid and name, the boot it belongs to,
//! when it started, and the entries `{knob, old}` in the order applied.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use latlab_fix::Knob;

use crate::knobs::{self, KnobError};
use crate::partition;

mod kept;
mod stale;

pub use kept::{kept_path, notice as kept_notice};
pub use stale::{boot_id, check_stale, notice, restore_file, JournalError, Stale};

/// Where the restore file lives: `$LATLAB_TUNE_JOURNAL`, else
/// `/var/lib/latlab/tune-restore.json`.
pub fn default_path() -> PathBuf {
    std::env::var_os("LATLAB_TUNE_JOURNAL")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/lib/latlab/tune-restore.json"))
}

/// The restore file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalFile {
    /// The process that changes the knobs.
    pub owner_pid: u32,
    /// Its command name, to tell a reused pid.
    pub owner_comm: String,
    /// `/proc/sys/kernel/random/boot_id` when it started.
    pub boot_id: String,
    /// When it started, UTC.
    pub started: String,
    /// The knobs changed, in order, with their old values.
    pub entries: Vec<Entry>,
}

/// One knob changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The knob.
    pub knob: Knob,
    /// Its value before.
    pub old: String,
    /// For the cpuset partition: what its release puts back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<partition::Saved>,
}

/// One change [`Journal::apply`] made (or found already made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The knob.
    pub knob: Knob,
    /// Its value before.
    pub old: String,
    /// Its value now.
    pub new: String,
    /// It already had the value: nothing written, nothing recorded.
    pub unchanged: bool,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestoreReport {
    /// Knobs put back: (knob, the old value written).
    pub restored: Vec<(Knob, String)>,
    /// Knobs that could not be put back: (knob, old value, error). The
    /// restore file keeps them.
    pub failed: Vec<(Knob, String, String)>,
    /// Knobs not restored on purpose: (knob, why), e.g. a runtime change
    /// of an earlier boot.
    pub dropped: Vec<(Knob, String)>,
}

/// The restore file of a running tune, and the knobs it changed.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: JournalFile,
    finished: bool,
}

impl Journal {
    /// Starts a restore file at `path`. Refuses when one exists (a running
    /// tune's, or one left by a tune that ended without restoring).
    pub fn begin(path: &Path) -> Result<Journal, JournalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| JournalError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        // Created exclusively (O_EXCL): of two tunes started at once, one
        // gets the file and the other is refused.
        if let Err(source) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            if source.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(JournalError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
            let message = match check_stale(path) {
                Some(stale) => stale.message,
                None => match stale::load(path) {
                    Ok(f) => format!(
                        "latlab tune (pid {}, started {}) is running",
                        f.owner_pid, f.started
                    ),
                    Err(e) => e.to_string(),
                },
            };
            return Err(JournalError::Exists {
                path: path.to_path_buf(),
                message,
            });
        }
        let journal = Journal {
            path: path.to_path_buf(),
            file: JournalFile {
                owner_pid: std::process::id(),
                owner_comm: knobs::task::comm(std::process::id() as i32).unwrap_or_default(),
                boot_id: stale::boot_id(),
                started: latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()),
                entries: vec![],
            },
            finished: false,
        };
        if let Err(e) = stale::store(&journal.path, &journal.file) {
            let _ = stale::remove(&journal.path);
            return Err(e);
        }
        Ok(journal)
    }

    /// The restore file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The knobs changed so far, with their old values.
    pub fn entries(&self) -> &[Entry] {
        &self.file.entries
    }

    /// Sets `knob` to `value`: reads the old value, records it (the file
    /// is written), then writes. A refused write drops the entry again and
    /// returns the error: nothing changed. A knob already at the value is
    /// left alone and not recorded.
    pub fn apply(&mut self, knob: &Knob, value: &str) -> Result<Change, KnobError> {
        if let Knob::BootParameter { .. } = knob {
            return Err(KnobError::TakesReboot {
                knob: knob.to_string(),
            });
        }
        let old = knobs::read(knob)?;
        let new = knobs::normalize(knob, value);
        let change = |unchanged| Change {
            knob: knob.clone(),
            old: old.clone(),
            new: new.clone(),
            unchanged,
        };
        if knobs::normalize(knob, &old) == new {
            return Ok(change(true));
        }
        let recorded = self.file.entries.iter().any(|e| &e.knob == knob);
        let saved = match knob {
            Knob::CpusetPartition if !old.is_empty() => {
                return Err(KnobError::Partition(format!(
                    "a partition of CPUs {old} is already in place: restore it first"
                )))
            }
            Knob::CpusetPartition => {
                let rt =
                    latlab_rt::sched::parse_cpu_list(value).map_err(|e| KnobError::Invalid {
                        knob: knob.to_string(),
                        value: value.to_string(),
                        reason: e.to_string(),
                    })?;
                Some(partition::prepare(&rt).map_err(KnobError::Partition)?)
            }
            _ => None,
        };
        if !recorded {
            self.file.entries.push(Entry {
                knob: knob.clone(),
                old: old.clone(),
                partition: saved.clone(),
            });
            if let Err(e) = self.store() {
                self.file.entries.pop();
                return Err(e);
            }
        }
        let written = match &saved {
            Some(saved) => partition::isolate(saved)
                .map(|_| ())
                .map_err(KnobError::Partition),
            None => knobs::write(knob, value),
        };
        if let Err(e) = written {
            // A partition that failed half-way may have left cgroup dirs,
            // moved tasks or flags: its entry stays unless releasing it
            // again (idempotent) leaves nothing, so the restore (or
            // `--restore`) tries again.
            let undone = match &saved {
                Some(saved) => partition::release(saved).is_ok(),
                None => true,
            };
            if !recorded && undone {
                self.file.entries.pop();
                let _ = self.store();
            }
            return Err(e);
        }
        Ok(change(false))
    }

    /// Puts one knob back (a fix measured and dropped) and forgets it.
    /// A knob not recorded is left alone.
    pub fn undo(&mut self, knob: &Knob) -> Result<(), KnobError> {
        let Some(i) = self.file.entries.iter().position(|e| &e.knob == knob) else {
            return Ok(());
        };
        put_back(&self.file.entries[i])?;
        self.file.entries.remove(i);
        self.store()
    }

    /// Puts every knob back, last changed first. When all went back the
    /// file is removed; else it keeps the ones that failed.
    pub fn restore(mut self) -> RestoreReport {
        self.finished = true;
        self.restore_all()
    }

    /// Leaves the knobs as they are (`--keep`): their entries move to the
    /// kept file ([`kept_path`]), which `latlab tune --restore` undoes, and
    /// the restore file is removed. Returns the entries kept. On an error
    /// the knobs stay and so does the restore file.
    pub fn keep(mut self) -> Result<Vec<Entry>, JournalError> {
        self.finished = true;
        kept::add(&kept_path(&self.path), &self.file)?;
        stale::remove(&self.path)?;
        Ok(std::mem::take(&mut self.file.entries))
    }

    fn restore_all(&mut self) -> RestoreReport {
        let mut report = RestoreReport::default();
        let mut kept = Vec::new();
        for entry in self.file.entries.drain(..).rev() {
            kept.extend(report.put_back(entry));
        }
        kept.reverse();
        self.file.entries = kept;
        let _ = if self.file.entries.is_empty() {
            stale::remove(&self.path)
        } else {
            stale::store(&self.path, &self.file)
        };
        report
    }

    fn store(&self) -> Result<(), KnobError> {
        stale::store(&self.path, &self.file).map_err(|e| KnobError::Journal {
            path: self.path.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }
}

/// A journal dropped without [`Journal::restore`] or [`Journal::keep`]
/// (an early return, a panic) restores its knobs.
impl Drop for Journal {
    fn drop(&mut self) {
        if !self.finished {
            let report = self.restore_all();
            for (knob, old, error) in &report.failed {
                eprintln!("latlab tune: could not restore {knob} to {old:?}: {error}");
            }
        }
    }
}

impl RestoreReport {
    /// Puts `entry`'s knob back and says so in the report; the entry again
    /// when it could not be restored (it stays in the restore file).
    pub(crate) fn put_back(&mut self, entry: Entry) -> Option<Entry> {
        match put_back(&entry) {
            Ok(None) => self.restored.push((entry.knob, entry.old)),
            Ok(Some(why)) => self.dropped.push((entry.knob, why)),
            Err(e) => {
                self.failed
                    .push((entry.knob.clone(), entry.old.clone(), e.to_string()));
                return Some(entry);
            }
        }
        None
    }
}

/// Writes an entry's old value back; `Some(why)` when there was nothing
/// to put back (the thread has ended).
pub(crate) fn put_back(entry: &Entry) -> Result<Option<String>, KnobError> {
    let knob = &entry.knob;
    if let (Knob::CpusetPartition, Some(saved)) = (knob, &entry.partition) {
        return partition::release(saved)
            .map(|()| None)
            .map_err(KnobError::Partition);
    }
    if let Knob::TaskAffinity { pid, comm } | Knob::TaskPriority { pid, comm } = knob {
        let now = knobs::task::comm(*pid).unwrap_or_default();
        if &now != comm {
            return Ok(Some(format!("thread {comm}:{pid} has ended")));
        }
    }
    let same = |now: &str| knobs::normalize(knob, now) == knobs::normalize(knob, &entry.old);
    if knobs::read(knob).is_ok_and(|now| same(&now)) {
        return Ok(None);
    }
    knobs::write(knob, &entry.old).map(|()| None)
}
