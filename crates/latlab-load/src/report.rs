//! What a load got done: the report [`crate::RunningLoad::stop`] returns.
//!
//! The structs here *are* the JSON schema; see [`LoadReport`].

use latlab_envelope::{Envelope, Kind};
use latlab_rt::sysinfo::SystemInfo;
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

impl LoadReport {
    /// What ran, in words: the spec (`full`, `cpu:2,net:1`), the command
    /// in backquotes (`` `stress-ng --cpu 2` ``), or both (`` full + `make
    /// -j4` ``). The one way a report names a load: a load that was only a
    /// command is that command, never `none`.
    pub fn name(&self) -> String {
        match &self.command {
            Some(command) if self.spec == "none" => format!("`{command}`"),
            Some(command) => format!("{} + `{command}`", self.spec),
            None => self.spec.clone(),
        }
    }
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
}

/// A rate with an SI prefix and three significant digits: `1.02 GB/s`,
/// `210 Mops/s`, `54.1 kpages/s` (1 MB = 10^6 bytes). The one way latlab
/// writes a load's rate: the progress line, the terminal table and the HTML
/// report (latlab-report's `units::rate`) all use it.
pub fn rate(value: f64, unit: &str) -> String {
    let (scaled, prefix) = si(value);
    format!("{} {prefix}{}/s", short_number(scaled), symbol(unit))
}

/// An amount with an SI prefix and three significant digits: `2.05 GB`,
/// `3 Gops`.
pub fn amount(value: f64, unit: &str) -> String {
    let (scaled, prefix) = si(value);
    format!("{} {prefix}{}", short_number(scaled), symbol(unit))
}

/// A number with three significant digits, trailing zeros dropped: `1.02`,
/// `210`, `0.5`.
pub fn short_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - 1 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The symbol of a load's unit: `B` for bytes, the unit itself otherwise
/// (`ops`, `pages`).
fn symbol(unit: &str) -> &str {
    match unit {
        "bytes" => "B",
        other => other,
    }
}

/// `value` scaled to an SI prefix: (1.5, "G") for 1.5e9.
pub fn si(value: f64) -> (f64, &'static str) {
    for (factor, prefix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if value.abs() >= factor {
            return (value / factor, prefix);
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use crate::fixtures::sample_report;

    /// `latlab load`'s progress line said `1024.0 MB/s` where its table and
    /// the HTML report said `1.02 GB/s`: one formula now.
    #[test]
    fn a_rate_has_an_si_prefix_and_three_significant_digits() {
        assert_eq!(super::rate(1.024e9, "bytes"), "1.02 GB/s");
        assert_eq!(super::rate(2.1e8, "ops"), "210 Mops/s");
        assert_eq!(super::rate(54_100.0, "pages"), "54.1 kpages/s");
        assert_eq!(super::amount(2.048e9, "bytes"), "2.05 GB");
        assert_eq!(super::rate(0.0, "bytes"), "0 B/s");
    }

    #[test]
    fn json_has_the_documented_fields() {
        let json = serde_json::to_value(sample_report()).unwrap();
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

/// The `latlab.load` kind of document, for its [`Envelope`]: its warnings
/// are the load report's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSchema {}

impl Kind for LoadSchema {
    const SCHEMA: &'static str = SCHEMA;
    const VERSION: u32 = SCHEMA_VERSION;
    const WARNINGS_IN_BODY: bool = true;
}

/// The document `latlab load --json` writes (schema `latlab.load`): the
/// envelope's fields, then the [`LoadReport`]'s (whose `warnings` are the
/// envelope's). Files written before the envelope read with `null` where
/// they did not record a field. (Inside a run, respond or lockbench
/// document the load is a plain [`LoadReport`].)
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LoadDocument {
    /// `schema` (`"latlab.load"`), `schema_version` ([`SCHEMA_VERSION`]),
    /// `id`, `latlab_version`, `command_line`, `started_at` (when the load
    /// started), `system` (the machine; `null` in files from before it was
    /// recorded); `warnings` are the report's.
    #[serde(flatten)]
    pub envelope: Envelope<LoadSchema, Option<SystemInfo>>,
    /// What the load got done.
    #[serde(flatten)]
    pub report: LoadReport,
}

/// A LoadDocument reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for LoadDocument {
    type Target = Envelope<LoadSchema, Option<SystemInfo>>;

    fn deref(&self) -> &Envelope<LoadSchema, Option<SystemInfo>> {
        &self.envelope
    }
}

impl std::ops::DerefMut for LoadDocument {
    fn deref_mut(&mut self) -> &mut Envelope<LoadSchema, Option<SystemInfo>> {
        &mut self.envelope
    }
}

impl LoadDocument {
    /// The document of a report: the envelope's warnings become the report's.
    pub fn new(
        envelope: Envelope<LoadSchema, Option<SystemInfo>>,
        report: LoadReport,
    ) -> LoadDocument {
        LoadDocument {
            envelope: envelope.with_warnings(report.warnings.clone()),
            report,
        }
    }
}

impl<'de> Deserialize<'de> for LoadDocument {
    /// Reads the envelope and the report from the same keys (`warnings`
    /// belongs to both).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let envelope = Envelope::deserialize(&value).map_err(D::Error::custom)?;
        let report = LoadReport::deserialize(&value).map_err(D::Error::custom)?;
        Ok(LoadDocument::new(envelope, report))
    }
}
