//! Deleting results and giving their space back, with what it freed (what
//! `latlab history --delete` reports).

use crate::{History, Result};

/// What [`History::delete_and_reclaim`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deletion {
    /// The ids deleted, sorted, each once.
    pub ids: Vec<i64>,
    /// The database, for messages ([`History::display`]).
    pub location: String,
    /// The bytes the SQLite history took before ([`History::size_on_disk`];
    /// `None` for PostgreSQL).
    pub size_before: Option<u64>,
    /// The bytes it takes after.
    pub size_after: Option<u64>,
}

impl History {
    /// Deletes the results with these ids, all or none
    /// ([`History::delete`]), then gives their space back
    /// ([`History::reclaim`]); says what was deleted and what it freed.
    pub fn delete_and_reclaim(&mut self, ids: &[i64]) -> Result<Deletion> {
        let size_before = self.size_on_disk();
        self.delete(ids)?;
        self.reclaim()?;
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        Ok(Deletion {
            ids,
            location: self.display().to_string(),
            size_before,
            size_after: self.size_on_disk(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HistoryError;

    #[test]
    fn a_deletion_names_each_id_once_and_the_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("h.sqlite")).unwrap();
        let ids: Vec<i64> = (0..3)
            .map(|i| {
                h.insert_document(
                    &serde_json::json!({"schema": "latlab.run", "id": format!("r{i}")}),
                )
                .unwrap()
            })
            .collect();
        let deletion = h.delete_and_reclaim(&[ids[2], ids[0], ids[2]]).unwrap();
        assert_eq!(deletion.ids, [ids[0], ids[2]]);
        assert_eq!(deletion.location, h.display());
        assert!(deletion.size_before.is_some() && deletion.size_after.is_some());
        assert_eq!(h.count().unwrap(), 1);
        assert!(matches!(
            h.delete_and_reclaim(&[ids[1], 99]),
            Err(HistoryError::NotStored { .. })
        ));
        assert_eq!(h.count().unwrap(), 1, "all or none");
    }
}
