//! The whole `latlab run` document: the measurement (latlab-measure's
//! [`RunResult`]) and the parts other crates own, the background load
//! (latlab-load), the kernel trace (latlab-tracefs), and the explanation of
//! the late wake-ups with its agreement check (latlab-explain).
//!
//! It lives here and not in latlab-measure because latlab-explain depends on
//! latlab-measure (for its statistics): a run result in latlab-measure
//! could not hold an explanation without a dependency cycle.

use serde::{Deserialize, Serialize};

use latlab_explain::agreement::Agreement;
use latlab_explain::Report as Explanation;
use latlab_load::LoadReport;
use latlab_measure::result::RunResult;
use latlab_tracefs::CaptureReport;

/// A complete `latlab run` result (schema `latlab.run`): in JSON the
/// measurement's fields, then `load`, `trace`, `explain` and
/// `trace_agreement` where the run had them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunDocument {
    /// The measurement: settings, system, per-thread and overall figures,
    /// requirements and verdict.
    #[serde(flatten)]
    pub result: RunResult,
    /// Background load report (`--load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadReport>,
    /// Kernel trace recorded alongside (`--trace`, `--explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<CaptureReport>,
    /// The explanation of the late wake-ups (`--explain`), as
    /// `latlab explain --json` writes it (without its schema fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explanation>,
    /// With `--explain`: every sample matched to the trace's period of the
    /// same expiry, and latlab's latency compared with the trace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_agreement: Option<Agreement>,
    /// With `--flight-recorder`: the sample that stopped the recording (the
    /// first at or over the trace threshold); absent when none reached it
    /// (the trace then holds the ring buffer's last events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flight_recorder_stop: Option<FlightRecorderStop>,
}

/// The sample that stopped a flight recorder (`latlab run
/// --flight-recorder`), as cyclictest's `-b` names its break thread and
/// value. The trace holds its marker lines too: `latlab: cycle=...` and
/// `latlab: flight recorder stopped: cpu=... cycle=...`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlightRecorderStop {
    /// The CPU of the measurement thread.
    pub cpu: usize,
    /// Its cycle (activation number, from 0), as the worst samples count them.
    pub cycle: u64,
    /// Its wake-up latency, ns.
    pub latency_ns: u64,
    /// Its intended wake-up, CLOCK_MONOTONIC ns (the sample log's
    /// `intended_ns`, the trace's clock).
    pub intended_ns: u64,
    /// Its intended wake-up, seconds after the measurement's first period.
    pub at_s: f64,
    /// The threshold it reached (`--trace-threshold`), ns.
    pub threshold_ns: u64,
}

impl RunDocument {
    /// The document of a measurement alone (no load, trace or explanation).
    pub fn new(result: RunResult) -> RunDocument {
        RunDocument {
            result,
            load: None,
            trace: None,
            explain: None,
            trace_agreement: None,
            flight_recorder_stop: None,
        }
    }

    /// `no load`, the load spec (`full`, `io:2`), or the load command.
    pub fn load_name(&self) -> String {
        load_name(self.load.as_ref())
    }
}

/// `no load`, the load spec (`full`, `io:2`), or the load command, of an
/// optional load report.
pub fn load_name(load: Option<&LoadReport>) -> String {
    match load {
        None => "no load".into(),
        Some(load) => format!("load {}", load.name()),
    }
}

impl std::ops::Deref for RunDocument {
    type Target = RunResult;

    fn deref(&self) -> &RunResult {
        &self.result
    }
}

impl From<RunResult> for RunDocument {
    fn from(result: RunResult) -> RunDocument {
        RunDocument::new(result)
    }
}
