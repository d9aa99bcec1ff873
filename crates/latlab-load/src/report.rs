//! What a load got done: the report [`crate::RunningLoad::stop`] returns.
//!
//! The structs here *are* the JSON schema; see [`LoadReport`].

use serde::{Deserialize, Serialize};

/// Throughput of every load that ran, over the whole run and per interval.
///
/// The structs of this module *are* the JSON schema (`serde_json::to_string(&report)`);
/// each field's doc comment says what it holds. Example (values abridged):
///
/// ```json
/// {
///   "spec": "cpu:2,net:1",
///   "command": null,
///   "duration_s": 10.0,
///   "interval_s": 1.0,
///   "kinds": [
///     { "kind": "cpu", "workers": 2, "unit": "ops", "total": 9100000000,
///       "per_second": 910000000.0, "series": [905000000.0, 912000000.0],
///       "us_per_kib": null },
///     { "kind": "net", "workers": 1, "unit": "bytes", "total": 21000000000,
///       "per_second": 2100000000.0, "series": [2090000000.0, 2110000000.0],
///       "us_per_kib": [0.49, 0.485] }
///   ],
///   "external": null,
///   "warnings": []
/// }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LoadReport {
    /// The load spec that ran, in the form `LoadSpec` parses (`"none"` if only a command ran).
    pub spec: String,
    /// The external command, if one ran (`--load-cmd`).
    pub command: Option<String>,
    /// Seconds from "all workers running" to "stop requested"; totals count this span.
    pub duration_s: f64,
    /// Length of one interval of the `series` fields, in seconds.
    pub interval_s: f64,
    /// One entry per built-in load kind, in a fixed order (cpu, io, net, udp, mem, syscall, ipc).
    pub kinds: Vec<KindReport>,
    /// What the external command used, if one ran.
    pub external: Option<CommandReport>,
    /// Things that make the numbers mean less than they seem (e.g. the io
    /// load ran on a RAM file system), one sentence each.
    pub warnings: Vec<String>,
}

/// One built-in load kind's work.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct KindReport {
    /// The kind's name (`"cpu"`, `"io"`, `"net"`, `"udp"`, `"mem"`, `"syscall"`, `"ipc"`).
    pub kind: String,
    /// Number of workers (net, udp: sender/receiver pairs; ipc: groups).
    pub workers: usize,
    /// Unit of `total` (`"ops"`, `"bytes"`, `"pages"`, `"calls"`, `"msgs"`).
    pub unit: String,
    /// Work done in `duration_s`, summed over the workers.
    pub total: u64,
    /// `total / duration_s`: units per second.
    pub per_second: f64,
    /// Units per second in each interval of `interval_s` seconds, in order. A
    /// last interval cut short by the stop is included if it lasted at least
    /// 90% of `interval_s` (its rate uses its real length); a shorter one is
    /// left out of the series but counts in `total`.
    pub series: Vec<f64>,
    /// net and udp only: microseconds to move 1 KiB (1024 bytes) in each
    /// interval, the delayed-locking paper's "transfer time per 1 KB"
    /// (Figure 13); `null` for an interval that moved nothing. Absent
    /// (`null`) for the other kinds.
    pub us_per_kib: Option<Vec<Option<f64>>>,
}

/// What an external load command used.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CommandReport {
    /// The command line.
    pub command: String,
    /// CPU time (user + system) its process group used, in seconds, as read from /proc.
    pub cpu_seconds: f64,
    /// `cpu_seconds / duration_s`: how many CPUs it kept busy on average.
    pub cpus_busy: f64,
    /// CPUs kept busy in each complete interval.
    pub series: Vec<f64>,
    /// Set if the command ended on its own before the stop: how ("exited with status 0").
    pub ended: Option<String>,
    /// Seconds after the start when it was seen to have ended, if it did.
    pub ended_after_s: Option<f64>,
}

impl LoadReport {
    /// The report of one kind, by name.
    pub fn kind(&self, name: &str) -> Option<&KindReport> {
        self.kinds.iter().find(|k| k.kind == name)
    }

    /// One line for a summary that is about something else (e.g. a latency
    /// run): `load full: cpu 2x 210.0 Mops/s, io 285.0 MB/s, net 562.5 MB/s
    /// (1.820 µs/KiB), mem 54.127 kpages/s`.
    pub fn summary_line(&self) -> String {
        let mut parts: Vec<String> = self
            .kinds
            .iter()
            .map(|k| {
                let workers = if k.workers > 1 {
                    format!("{}x ", k.workers)
                } else {
                    String::new()
                };
                let mut part = format!("{} {workers}{}", k.kind, rate(k.per_second, &k.unit));
                if k.us_per_kib.is_some() && k.total > 0 {
                    part.push_str(&format!(" ({:.3} µs/KiB)", 1024.0 * 1e6 / k.per_second));
                }
                part
            })
            .collect();
        if let Some(c) = &self.external {
            parts.push(format!("command {:.2} CPUs busy", c.cpus_busy));
        }
        if parts.is_empty() {
            parts.push("nothing ran".to_owned());
        }
        format!("load {}: {}", self.spec, parts.join(", "))
    }

    /// A plain-text table: one line per kind (and the command), with
    /// human units (MB/s for bytes, where 1 MB = 10^6 bytes).
    pub fn table(&self) -> String {
        let mut rows = vec![[
            "load".to_owned(),
            "workers".to_owned(),
            "total".to_owned(),
            "per second".to_owned(),
            "min..max per interval".to_owned(),
            "µs per KiB".to_owned(),
        ]];
        for k in &self.kinds {
            let range = match (min(&k.series), max(&k.series)) {
                (Some(lo), Some(hi)) => {
                    format!("{}..{}", rate(lo, &k.unit), rate(hi, &k.unit))
                }
                _ => "-".to_owned(),
            };
            let per_kib = match &k.us_per_kib {
                Some(_) if k.total > 0 => {
                    format!("{:.3}", self.duration_s * 1e6 / (k.total as f64 / 1024.0))
                }
                _ => "-".to_owned(),
            };
            rows.push([
                k.kind.clone(),
                k.workers.to_string(),
                amount(k.total as f64, &k.unit),
                rate(k.per_second, &k.unit),
                range,
                per_kib,
            ]);
        }
        if let Some(c) = &self.external {
            let range = match (min(&c.series), max(&c.series)) {
                (Some(lo), Some(hi)) => format!("{lo:.2}..{hi:.2} CPUs"),
                _ => "-".to_owned(),
            };
            rows.push([
                "command".to_owned(),
                "1".to_owned(),
                format!("{:.1} CPU-s", c.cpu_seconds),
                format!("{:.2} CPUs busy", c.cpus_busy),
                range,
                "-".to_owned(),
            ]);
        }
        let mut widths = [0usize; 6];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = format!(
            "load {} for {:.1} s (intervals of {} s)\n",
            self.spec, self.duration_s, self.interval_s
        );
        if let Some(cmd) = &self.command {
            out.push_str(&format!("command: {cmd}\n"));
        }
        for row in rows {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    let pad = w - cell.chars().count();
                    if i == 0 {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        for warning in &self.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        out
    }
}

fn min(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::min)
}

fn max(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::max)
}

/// A count with an SI prefix: "1.23 G ops", "456 MB".
fn amount(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        return format!("{:.1} MB", value / 1e6);
    }
    let (scaled, prefix) = si(value);
    format!("{scaled:.3} {prefix}{unit}")
}

/// A rate: "123.4 MB/s", "1.234 Gops/s".
pub(crate) fn rate(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        return format!("{:.1} MB/s", value / 1e6);
    }
    let (scaled, prefix) = si(value);
    format!("{scaled:.3} {prefix}{unit}/s")
}

fn si(value: f64) -> (f64, &'static str) {
    for (factor, prefix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if value.abs() >= factor {
            return (value / factor, prefix);
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LoadReport {
        LoadReport {
            spec: "cpu:1,net:1".into(),
            command: None,
            duration_s: 2.0,
            interval_s: 1.0,
            kinds: vec![
                KindReport {
                    kind: "cpu".into(),
                    workers: 1,
                    unit: "ops".into(),
                    total: 3_000_000_000,
                    per_second: 1.5e9,
                    series: vec![1.4e9, 1.6e9],
                    us_per_kib: None,
                },
                KindReport {
                    kind: "net".into(),
                    workers: 1,
                    unit: "bytes".into(),
                    total: 2_048_000_000,
                    per_second: 1.024e9,
                    series: vec![1.0e9, 1.048e9],
                    us_per_kib: Some(vec![Some(1.024), Some(0.977)]),
                },
            ],
            external: None,
            warnings: vec!["io ran on a tmpfs".into()],
        }
    }

    #[test]
    fn table_uses_human_units_and_transfer_time_per_kib() {
        let table = sample().table();
        assert!(table.contains("1.500 Gops/s"), "{table}");
        assert!(table.contains("1.400 Gops/s..1.600 Gops/s"), "{table}");
        assert!(table.contains("1024.0 MB/s"), "{table}");
        // 2 s to move 2_000_000 KiB = 1 µs per KiB.
        assert!(table.contains("1.000"), "{table}");
        assert!(table.contains("warning: io ran on a tmpfs"), "{table}");
    }

    #[test]
    fn summary_line_names_every_kind_with_its_rate() {
        let line = sample().summary_line();
        assert_eq!(
            line,
            "load cpu:1,net:1: cpu 1.500 Gops/s, net 1024.0 MB/s (1.000 µs/KiB)"
        );
    }

    #[test]
    fn json_has_the_documented_fields() {
        let json = serde_json::to_value(sample()).unwrap();
        assert_eq!(json["kinds"][0]["kind"], "cpu");
        assert_eq!(json["kinds"][0]["us_per_kib"], serde_json::Value::Null);
        assert_eq!(json["kinds"][1]["us_per_kib"][0], 1.024);
        assert_eq!(json["kinds"][1]["total"], 2_048_000_000u64);
        assert_eq!(json["interval_s"], 1.0);
        assert!(json["external"].is_null());
    }
}

/// Schema name of `latlab load --json`.
pub const SCHEMA: &str = "latlab.load";
/// Version of the `latlab.load` JSON schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The document `latlab load --json` writes (schema `latlab.load`): the
/// [`LoadReport`]'s fields after `schema` and `schema_version`. Files
/// written before those two fields existed read as version 1. (Inside a
/// run, respond or lockbench document the load is a plain [`LoadReport`].)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadDocument {
    /// Always `"latlab.load"`.
    #[serde(default = "load_schema")]
    pub schema: String,
    /// [`SCHEMA_VERSION`] of the writer.
    #[serde(default = "version_one")]
    pub schema_version: u32,
    /// What the load got done.
    #[serde(flatten)]
    pub report: LoadReport,
}

fn load_schema() -> String {
    SCHEMA.into()
}

fn version_one() -> u32 {
    1
}

impl LoadDocument {
    /// The document of a report, at this version of the schema.
    pub fn new(report: LoadReport) -> LoadDocument {
        LoadDocument {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            report,
        }
    }
}
