//! The board's spool: every result is first written here (one file per
//! result, named by its id, written to a temporary name, synced and
//! renamed, so a crash or a full disk never leaves a torn file), and
//! removed once a server has it. Results that wait go with the next push.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{FleetError, Result};

/// The default spool: `$XDG_DATA_HOME/latlab/spool`, else
/// `~/.local/share/latlab/spool` (beside the default history).
pub fn default_dir() -> Result<PathBuf> {
    let data = latlab_history::default_path()?;
    Ok(data.with_file_name("spool"))
}

/// The file name of a result in the spool: its id, made safe.
fn spool_name(document: &Value) -> String {
    let id: String = latlab_document::document_id(document)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{id}.json")
}

fn spool_error(
    action: &'static str,
    path: &Path,
    hint: &'static str,
) -> impl FnOnce(std::io::Error) -> FleetError {
    let path = path.to_path_buf();
    move |error| FleetError::Spool {
        action,
        path,
        hint,
        error,
    }
}

/// Writes `document` into the spool `dir` (temporary name, sync, rename);
/// a result already spooled is left as it is. Returns its file.
pub fn spool(dir: &Path, document: &Value) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(spool_error("creating the spool", dir, ""))?;
    let path = dir.join(spool_name(document));
    if path.exists() {
        return Ok(path);
    }
    let text = serde_json::to_string(document).map_err(FleetError::Json)?;
    let tmp = dir.join(format!(".{}.tmp", spool_name(document)));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes()).and_then(|()| f.sync_all())
        })
        .and_then(|()| std::fs::rename(&tmp, &path))
        .and_then(|()| std::fs::File::open(dir).and_then(|d| d.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(spool_error(
            "writing",
            &path,
            " into the spool (is the disk full? the spool keeps what it holds)",
        )(e));
    }
    Ok(path)
}

/// The spooled results, oldest first (none when there is no spool yet).
pub fn spooled(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(spool_error("reading the spool", dir, "")(e)),
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".json") && !name.starts_with('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Moves a result the server refused as malformed to `rejected/` in the
/// spool, so that it cannot block the others; returns where it went.
pub fn reject(dir: &Path, path: &Path) -> PathBuf {
    let rejected = dir.join("rejected");
    let _ = std::fs::create_dir_all(&rejected);
    let target = rejected.join(path.file_name().unwrap_or_default());
    let _ = std::fs::rename(path, &target);
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_spooled_once_under_a_safe_name() {
        let dir = tempfile::tempdir().unwrap();
        let doc = serde_json::json!({"schema": "latlab.run", "id": "../x y"});
        let path = spool(dir.path(), &doc).unwrap();
        assert_eq!(path, dir.path().join("___x_y.json"));
        assert_eq!(spool(dir.path(), &doc).unwrap(), path);
        assert_eq!(spooled(dir.path()).unwrap(), std::slice::from_ref(&path));
        let moved = reject(dir.path(), &path);
        assert_eq!(moved, dir.path().join("rejected/___x_y.json"));
        assert!(spooled(dir.path()).unwrap().is_empty());
        assert!(spooled(&dir.path().join("none")).unwrap().is_empty());
    }
}
