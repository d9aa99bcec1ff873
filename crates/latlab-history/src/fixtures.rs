//! Example entries shared by the dashboards' tests (latlab-report,
//! latlab-fleet), so both check the same data.

use crate::Entry;

/// A listing entry of board `b`: result `id` of kind `schema` on `kernel`,
/// whose worst latency is `max_us` µs (99.9th percentile half of it), started
/// `id` days into November 2026 (modulo 28).
pub fn entry(id: i64, schema: &str, kernel: &str, max_us: Option<u64>) -> Entry {
    Entry {
        id,
        uid: format!("u{id}"),
        board: Some("b".into()),
        schema: schema.into(),
        started_at: format!("2026-11-{:02}T10:00:00Z", 1 + id % 28),
        host: None,
        arch: None,
        kernel: Some(kernel.into()),
        preemption: None,
        load: None,
        variant: None,
        max_ns: max_us.map(|v| v * 1000),
        p999_ns: max_us.map(|v| v * 500),
        verdict: None,
    }
}

/// A `latlab.run` entry (see [`entry`]).
pub fn run_entry(id: i64, kernel: &str, max_us: u64) -> Entry {
    entry(id, "latlab.run", kernel, Some(max_us))
}
