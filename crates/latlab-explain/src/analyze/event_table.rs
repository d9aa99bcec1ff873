//! The paper's Table 2: events per window, normal vs late.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::Names;
use crate::separate::Window;

/// One row of the paper's Table 2.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EventRow {
    /// Event name.
    pub event: String,
    /// Occurrences in normal windows.
    pub normal: u64,
    /// Occurrences in late windows.
    pub late: u64,
    /// Per normal window.
    pub normal_per_window: f64,
    /// Per late window.
    pub late_per_window: f64,
}

/// The paper's Table 2: event counts in normal vs late windows, normalised
/// per window, most over-represented in late windows first.
pub fn event_table(windows: &[Window], names: &Names) -> Vec<EventRow> {
    let n_late = windows.iter().filter(|w| w.late).count().max(1) as f64;
    let n_norm = windows.iter().filter(|w| !w.late).count().max(1) as f64;
    let mut counts: HashMap<u32, (u64, u64)> = HashMap::new();
    for w in windows {
        for r in &w.events {
            let c = counts.entry(r.name).or_default();
            if w.late {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
    }
    let mut rows: Vec<EventRow> = counts
        .into_iter()
        .map(|(n, (a, b))| EventRow {
            event: names.get(n).to_string(),
            normal: a,
            late: b,
            normal_per_window: a as f64 / n_norm,
            late_per_window: b as f64 / n_late,
        })
        .collect();
    rows.sort_by(|a, b| {
        let da = a.late_per_window - a.normal_per_window;
        let db = b.late_per_window - b.normal_per_window;
        db.total_cmp(&da).then(a.event.cmp(&b.event))
    });
    rows
}
