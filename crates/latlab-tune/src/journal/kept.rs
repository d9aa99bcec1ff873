//! What `--keep` left applied. A tune that keeps its fixes moves their
//! entries from the restore file to `<name>.kept.json` beside it
//! ([`kept_path`]): `latlab tune --restore` undoes them later, as it undoes
//! an interrupted tune's, and a later tune says they are in place. A
//! second `--keep` adds its entries after the first's, so a restore (last
//! first) ends at the values from before either.

use std::path::{Path, PathBuf};

use super::stale::{self, JournalError};
use super::JournalFile;

/// The kept file beside the restore file at `restore`:
/// `/var/lib/latlab/tune-restore.kept.json` for the default.
pub fn kept_path(restore: &Path) -> PathBuf {
    restore.with_extension("kept.json")
}

/// Adds `file`'s entries to the kept file at `path` (after those of an
/// earlier `--keep` of this boot; one of an earlier boot is replaced: its
/// changes are gone). A kept file that cannot be read is an error, never
/// overwritten: it holds the values from before the first tune.
pub(crate) fn add(path: &Path, file: &JournalFile) -> Result<(), JournalError> {
    let mut merged = file.clone();
    if path.exists() {
        let earlier = stale::load(path)?;
        if earlier.boot_id == file.boot_id {
            merged.started = earlier.started;
            merged.entries = earlier.entries;
            merged.entries.extend(file.entries.iter().cloned());
        }
    }
    stale::store(path, &merged)
}

/// What a tune about to start should say about the kept file at `path`:
/// the changes an earlier `--keep` of this boot left applied (the tune
/// measures from them). A kept file of an earlier boot is removed (its
/// runtime changes did not survive the reboot) and said so.
pub fn notice(path: &Path) -> Option<String> {
    if !path.exists() {
        return None;
    }
    let file = match stale::load(path) {
        Ok(file) => file,
        Err(e) => return Some(format!("{e}: remove it by hand once you have checked it")),
    };
    if file.boot_id != stale::boot_id() {
        let removed = stale::remove(path);
        return Some(match removed {
            Ok(()) => format!(
                "removed {}: the changes `latlab tune --keep` kept on an earlier boot did not \
                 survive the reboot",
                path.display()
            ),
            Err(e) => e.to_string(),
        });
    }
    let k = file.entries.len();
    Some(format!(
        "{k} change{} `latlab tune --keep` kept (started {}) {} applied: this tune measures \
         from them; `latlab tune --restore` undoes them ({})",
        if k == 1 { "" } else { "s" },
        file.started,
        if k == 1 { "is" } else { "are" },
        path.display()
    ))
}
