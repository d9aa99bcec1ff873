//! The document of `latlab tune --json` (schema `latlab.tune`): the
//! baseline, the plan, each fix's side-by-side rounds and verdict, the boot
//! command line, the before/after figures and what was restored. This
//! struct *is* the JSON schema (`docs/schema/latlab.tune.json`).

use serde::{Deserialize, Serialize};

use latlab_envelope::{Envelope, Kind};
use latlab_fix::{Cost, Fix, Takes};

use crate::verify::Effect;

/// Schema name of a tune document.
pub const TUNE_SCHEMA: &str = "latlab.tune";
/// Version of the `latlab.tune` JSON schema.
pub const TUNE_SCHEMA_VERSION: u32 = 1;

/// The `latlab.tune` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneSchema {}

impl Kind for TuneSchema {
    const SCHEMA: &'static str = TUNE_SCHEMA;
    const VERSION: u32 = TUNE_SCHEMA_VERSION;
}

/// A `latlab tune` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneResult {
    /// `schema` (`"latlab.tune"`), `schema_version`, `id`, `latlab_version`,
    /// `command_line`, `started_at`, `system` and `warnings`.
    #[serde(flatten)]
    pub envelope: Envelope<TuneSchema>,
    /// What was asked.
    pub settings: TuneSettings,
    /// The baseline run, as measured before anything changed.
    pub baseline: Figures,
    /// The causes the baseline's trace named, largest first, each with the
    /// fixes it calls for.
    pub causes: Vec<CauseFixes>,
    /// Every fix considered, in the order tried: runtime ones measured,
    /// boot-time ones proposed.
    pub fixes: Vec<PlannedFix>,
    /// The kernel command line for the real-time CPUs (boot-time fixes).
    pub boot: BootLine,
    /// The final run with every kept fix applied, under the same load (absent
    /// with `--plan`, or when nothing was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Figures>,
    /// How the isolated partition was made, when one was (`cgroup v2
    /// cpuset.cpus.partition=isolated`, `cgroup v1 exclusive cpuset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// How tune ended for the system: every change restored, or kept
    /// (`--keep`), and any knob that could not be restored.
    pub ending: Ending,
}

/// A TuneResult reads as its envelope too.
impl std::ops::Deref for TuneResult {
    type Target = Envelope<TuneSchema>;

    fn deref(&self) -> &Envelope<TuneSchema> {
        &self.envelope
    }
}

impl std::ops::DerefMut for TuneResult {
    fn deref_mut(&mut self) -> &mut Envelope<TuneSchema> {
        &mut self.envelope
    }
}

/// The settings of a tune.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TuneSettings {
    /// The real-time CPUs.
    pub cpus: Vec<usize>,
    /// The housekeeping CPUs (every other online CPU).
    pub housekeeping: Vec<usize>,
    /// The background load of every run (`full`, `none`, ...).
    pub load: String,
    /// The deadline, ns, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ns: Option<u64>,
    /// The length of one verification round, ns.
    pub round_ns: u64,
    /// Rounds per fix, applied and undone alternating.
    pub rounds: u32,
    /// `--isolate`: the standard isolation set was added to the plan.
    pub isolate: bool,
    /// `--plan`: nothing was changed.
    pub plan_only: bool,
    /// `--keep`: kept fixes stay applied at the end.
    pub keep: bool,
}

/// Latency figures of one run or round (wake-up latency, ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figures {
    /// Samples measured.
    pub samples: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// Periods missed.
    pub missed: u64,
}

/// One cause of the baseline's late wake-ups and the fixes it calls for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CauseFixes {
    /// The cause, as explain describes it.
    pub cause: String,
    /// Its share of the late latency (0-1).
    pub share: f64,
    /// The fixes it calls for (each also in [`TuneResult::fixes`]).
    pub fixes: Vec<Fix>,
}

/// A fix of the plan, with what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedFix {
    /// The fix (knob, value, why, refused).
    pub fix: Fix,
    /// The group it was verified in (`IRQ affinity off the RT CPUs`): the
    /// fixes of a group are applied and undone together, one effect for all.
    #[serde(default)]
    pub group: String,
    /// The knob's value before tune (absent where it could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The value tune wrote (the fix's value resolved for the CPUs).
    pub proposed: String,
    /// When it takes effect.
    pub takes: Takes,
    /// What it costs.
    pub cost: Cost,
    /// What happened to it.
    pub outcome: Outcome,
}

/// What became of a fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// `--plan`, or a boot-time fix: proposed, not applied.
    Proposed,
    /// Already at the proposed value: nothing to do.
    AlreadySet,
    /// The kernel refused it, or cannot take it; nothing changed.
    Skipped {
        /// Why.
        reason: String,
    },
    /// Measured side by side, and helped by more than the noise.
    Kept {
        /// The measured effect.
        effect: Effect,
    },
    /// Measured side by side, and did not help by more than the noise.
    Dropped {
        /// The measured effect.
        effect: Effect,
    },
    /// Tune stopped (Ctrl-C, SIGTERM) before it was measured.
    NotMeasured,
}

/// The kernel command line the measured causes call for.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BootLine {
    /// Each parameter, with the cause or rule that asked for it.
    pub parameters: Vec<BootParameter>,
    /// The line for GRUB (`GRUB_CMDLINE_LINUX_DEFAULT` in /etc/default/grub).
    pub grub: String,
    /// The line for U-Boot (`setenv bootargs ...`) and extlinux (`APPEND`).
    pub uboot: String,
}

/// One kernel boot parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BootParameter {
    /// `nohz_full=1`.
    pub text: String,
    /// Why (the cause, or the isolation rule).
    pub why: String,
    /// The kernel already boots with it.
    pub already: bool,
}

/// How tune left the system.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ending {
    /// Knobs restored to their old value.
    pub restored: u32,
    /// Knobs left changed on purpose (`--keep`).
    pub kept: u32,
    /// Knobs that could not be restored: knob, old value, error.
    pub failed: Vec<(String, String, String)>,
    /// Tune was stopped (Ctrl-C, SIGTERM) before the end.
    pub stopped: bool,
}
