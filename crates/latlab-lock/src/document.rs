//! The result documents of `latlab lockbench`: these structs *are* their JSON
//! schemas (`docs/schema/latlab.lockbench.json`,
//! `docs/schema/latlab.lockbench-simulation.json`).
//!
//! A field is only ever added in a minor change; renaming or removing one
//! bumps the schema's version.

use serde::{Deserialize, Serialize};

use latlab_envelope::{Envelope, Kind};
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

/// The `latlab.lockbench` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchSchema {}

impl Kind for BenchSchema {
    const SCHEMA: &'static str = BENCH_SCHEMA;
    const VERSION: u32 = BENCH_SCHEMA_VERSION;
}

/// The `latlab.lockbench-simulation` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimSchema {}

impl Kind for SimSchema {
    const SCHEMA: &'static str = SIM_SCHEMA;
    const VERSION: u32 = SIM_SCHEMA_VERSION;
}

/// The document of a real-thread run (`latlab lockbench --json`, schema
/// `latlab.lockbench`): every variant's figures and the goal check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BenchReport {
    /// `schema` (`"latlab.lockbench"`; absent in files written before the
    /// field existed), `schema_version` ([`BENCH_SCHEMA_VERSION`]), `id`,
    /// `latlab_version` (`null` in files written before it was recorded),
    /// `command_line`, `started_at` (the benchmark's start), `system` (the
    /// machine) and `warnings` (printed before the benchmark: pitfalls,
    /// missing privileges; `[]` in files from before they were recorded).
    #[serde(flatten)]
    pub envelope: Envelope<BenchSchema>,
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

/// A BenchReport reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for BenchReport {
    type Target = Envelope<BenchSchema>;

    fn deref(&self) -> &Envelope<BenchSchema> {
        &self.envelope
    }
}

impl std::ops::DerefMut for BenchReport {
    fn deref_mut(&mut self) -> &mut Envelope<BenchSchema> {
        &mut self.envelope
    }
}

/// The document of `latlab lockbench --simulate --json` (schema
/// `latlab.lockbench-simulation`): the comparison's fields next to the
/// schema's and the paper's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimReport {
    /// `schema` (`"latlab.lockbench-simulation"`), `schema_version`
    /// ([`SIM_SCHEMA_VERSION`]), `id`, `latlab_version`, `command_line`,
    /// `started_at` (when the simulation ran), `system` (always `null`: a
    /// simulation measures no machine) and `warnings` (the settings'
    /// warnings); `null` or `[]` in files written before they were recorded.
    #[serde(flatten)]
    pub envelope: Envelope<SimSchema, Option<SystemInfo>>,
    /// The paper's Table 4, for readers of the JSON (the report prints it
    /// next to the simulation).
    pub paper: PaperFigures,
    /// The simulation without and with delayed locking.
    #[serde(flatten)]
    pub comparison: SimComparison,
}

/// A SimReport reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for SimReport {
    type Target = Envelope<SimSchema, Option<SystemInfo>>;

    fn deref(&self) -> &Envelope<SimSchema, Option<SystemInfo>> {
        &self.envelope
    }
}

impl std::ops::DerefMut for SimReport {
    fn deref_mut(&mut self) -> &mut Envelope<SimSchema, Option<SystemInfo>> {
        &mut self.envelope
    }
}

impl SimReport {
    /// The document of a simulation, with the paper's figures.
    pub fn new(
        envelope: Envelope<SimSchema, Option<SystemInfo>>,
        comparison: SimComparison,
    ) -> SimReport {
        SimReport {
            envelope,
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
