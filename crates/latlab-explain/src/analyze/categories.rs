//! Cause categories summed over all their causes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::decompose::Part;
use crate::separate::Window;

/// A cause category summed over all its causes.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CategoryRow {
    /// Category name (`Cause::category`).
    pub category: String,
    /// Late windows where it appears.
    pub late_windows: u64,
    /// Normal windows where it appears.
    pub normal_windows: u64,
    /// Latency it accounts for in late windows (ns).
    pub late_ns: u64,
    /// Mean per normal window (ns).
    pub mean_normal_ns: u64,
    /// Share of all late-window latency (0-1).
    pub share: f64,
}

/// Causes summed by category, largest share of late latency first.
pub fn categories(windows: &[Window], parts: &[Vec<Part>]) -> Vec<CategoryRow> {
    let n_norm = windows.iter().filter(|w| !w.late).count() as u64;
    let mut agg: BTreeMap<&'static str, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut total = 0u64;
    for (w, ps) in windows.iter().zip(parts) {
        let mut seen: Vec<&'static str> = Vec::new();
        for p in ps {
            let c = p.cause.category();
            let a = agg.entry(c).or_default();
            if w.late {
                a.2 += p.ns;
                total += p.ns;
            } else {
                a.3 += p.ns;
            }
            if !seen.contains(&c) {
                seen.push(c);
                if w.late {
                    a.0 += 1;
                } else {
                    a.1 += 1;
                }
            }
        }
    }
    let mut rows: Vec<CategoryRow> = agg
        .into_iter()
        .filter(|(_, a)| a.0 > 0)
        .map(|(c, (lw, nw, lns, nns))| CategoryRow {
            category: c.to_string(),
            late_windows: lw,
            normal_windows: nw,
            late_ns: lns,
            mean_normal_ns: nns.checked_div(n_norm).unwrap_or(0),
            share: if total > 0 {
                lns as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    rows.sort_by(|a, b| b.late_ns.cmp(&a.late_ns).then(a.category.cmp(&b.category)));
    rows
}
