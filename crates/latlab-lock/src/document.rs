//! The result documents of `latlab lockbench`: these structs *are* their JSON
//! schemas (`docs/schema/latlab.lockbench.json`,
//! `docs/schema/latlab.lockbench-simulation.json`).
//!
//! A field is only ever added in a minor change; renaming or removing one
//! bumps the schema's version.

use serde::{Deserialize, Serialize};

use latlab_load::LoadReport;
use latlab_rt::autogroup::Autogroup;
use latlab_rt::sysinfo::SystemInfo;

use crate::bench::{BenchConfig, GoalCheck, VariantResult};
use crate::sim::{self, SimComparison};

/// Schema name of a real-thread benchmark document.
pub const BENCH_SCHEMA: &str = "latlab.lockbench";
/// Version of the `latlab.lockbench` JSON schema.
pub const BENCH_SCHEMA_VERSION: u32 = 1;
/// Schema name of a simulation document.
pub const SIM_SCHEMA: &str = "latlab.lockbench-simulation";
/// Version of the `latlab.lockbench-simulation` JSON schema.
pub const SIM_SCHEMA_VERSION: u32 = 1;

/// The document of a real-thread run (`latlab lockbench --json`, schema
/// `latlab.lockbench`): every variant's figures and the goal check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BenchReport {
    /// Always `"latlab.lockbench"` (absent in files written before the field existed).
    #[serde(default = "bench_schema")]
    pub schema: String,
    /// [`BENCH_SCHEMA_VERSION`] of the writer.
    #[serde(default = "version_one")]
    pub schema_version: u32,
    /// The result's unique id (a random UUID given when it is written), by
    /// which a store keeps it once; absent in files written before the field
    /// existed (their id is derived from their content, see
    /// `latlab_document::Document::id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Start, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
    /// The machine.
    pub system: SystemInfo,
    /// The command line, one argument per element.
    pub command_line: Vec<String>,
    /// The scheduler autogroup the benchmark ran in (`--autogroup-nice`),
    /// where the kernel has autogroups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autogroup: Option<Autogroup>,
    /// The settings.
    pub config: BenchConfig,
    /// One entry per variant, in the order run.
    pub results: Vec<VariantResult>,
    /// The goal, per delayed variant.
    pub goal: Vec<GoalCheck>,
    /// The background load's report (`--load`), when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadReport>,
}

fn bench_schema() -> String {
    BENCH_SCHEMA.into()
}

fn sim_schema() -> String {
    SIM_SCHEMA.into()
}

fn version_one() -> u32 {
    1
}

/// The document of `latlab lockbench --simulate --json` (schema
/// `latlab.lockbench-simulation`): the comparison's fields next to the
/// schema's and the paper's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimReport {
    /// Always `"latlab.lockbench-simulation"`.
    #[serde(default = "sim_schema")]
    pub schema: String,
    /// [`SIM_SCHEMA_VERSION`] of the writer.
    #[serde(default = "version_one")]
    pub schema_version: u32,
    /// The result's unique id (a random UUID given when it is written), by
    /// which a store keeps it once; absent in files written before the field
    /// existed (their id is derived from their content, see
    /// `latlab_document::Document::id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The paper's Table 4, for readers of the JSON (the report prints it
    /// next to the simulation).
    pub paper: PaperFigures,
    /// The simulation without and with delayed locking.
    #[serde(flatten)]
    pub comparison: SimComparison,
}

impl SimReport {
    /// The document of a simulation, with the paper's figures.
    pub fn new(comparison: SimComparison) -> SimReport {
        SimReport {
            schema: SIM_SCHEMA.into(),
            schema_version: SIM_SCHEMA_VERSION,
            id: None,
            paper: PaperFigures::table4(),
            comparison,
        }
    }
}

/// The paper's Table 4: (without, with) delayed locking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaperFigures {
    /// Minimum OS latency, µs.
    pub min_us: (f64, f64),
    /// Maximum OS latency, µs.
    pub max_us: (f64, f64),
    /// Average OS latency, µs.
    pub avg_us: (f64, f64),
    /// The TCP sender's slowdown with delayed locking (0.20 = 20 %).
    pub sender_cost: f64,
}

impl PaperFigures {
    /// The figures of the paper ([`sim::paper`]).
    pub fn table4() -> PaperFigures {
        PaperFigures {
            min_us: sim::paper::MIN_US,
            max_us: sim::paper::MAX_US,
            avg_us: sim::paper::AVG_US,
            sender_cost: sim::paper::SENDER_COST,
        }
    }
}
