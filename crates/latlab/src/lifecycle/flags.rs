//! The flags the measuring commands (`run`, `respond`) share, as one clap
//! group (with the background load's), and what they resolve to.

use std::path::PathBuf;

use latlab_load::{LoadOptions, LoadSpec};
use latlab_measure::requirements::{self, Requirement};
use latlab_rt::duration;
use latlab_session::{LoadPlan, Verbosity};

use super::outputs::{FarmFlags, SaveFlags};

/// Where a measuring command's result goes, how much it prints, its
/// background load, and whether it may measure without privileges.
#[derive(Debug, Clone, clap::Args)]
pub struct MeasuringFlags {
    /// Also write the result JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a histogram in cyclictest's -h text format to FILE.
    #[arg(long, value_name = "FILE")]
    pub histogram_text: Option<PathBuf>,
    /// Where the result is saved.
    #[command(flatten)]
    pub save: SaveFlags,
    /// JUnit, LAVA and pushing to a `latlab serve`.
    #[command(flatten)]
    pub farm: FarmFlags,
    /// Measure even without real-time priority or memory locking (the result is marked).
    #[arg(long)]
    pub allow_unprivileged: bool,
    /// Print only the verdict, what makes the result questionable, where it went and errors:
    /// no live view, no notes about the machine, no tables (the result file has them all).
    #[arg(long, short)]
    pub quiet: bool,
    /// Background load.
    #[command(flatten)]
    pub load: LoadFlags,
}

impl MeasuringFlags {
    /// The configuration these flags ask for; `verbose` is the command's own
    /// `--verbose` (false for a command without one).
    pub fn resolve(&self, verbose: bool) -> MeasuringConfig {
        MeasuringConfig {
            outputs: Outputs {
                json: self.json.clone(),
                histogram_text: self.histogram_text.clone(),
                save: self.save.clone(),
                farm: self.farm.clone(),
            },
            verbosity: Verbosity::from_flags(self.quiet, verbose),
            allow_unprivileged: self.allow_unprivileged,
            load: self.load.resolve(),
        }
    }
}

/// [`MeasuringFlags`], resolved.
#[derive(Debug, Clone)]
pub struct MeasuringConfig {
    /// The files and services the result goes to.
    pub outputs: Outputs,
    /// How much is printed.
    pub verbosity: Verbosity,
    /// Measure even when real-time priority or memory locking is refused.
    pub allow_unprivileged: bool,
    /// The background load.
    pub load: LoadPlan,
}

/// The outputs of a measuring command's result.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--histogram-text FILE`.
    pub histogram_text: Option<PathBuf>,
    /// The saved copy and the history.
    pub save: SaveFlags,
    /// JUnit, LAVA, push.
    pub farm: FarmFlags,
}

/// `--max-latency`, `--percentile`, `--profile`.
#[derive(Debug, Clone, clap::Args)]
pub struct RequirementFlags {
    /// Requirement: no sample above this latency (e.g. `1ms`, `40us`).
    #[arg(long, value_name = "DURATION", value_parser = duration::latency)]
    pub max_latency: Option<u64>,
    /// Requirement: a percentile at or below a limit, e.g. `99.9:40us` (repeatable).
    #[arg(long, value_name = "P:DURATION", value_parser = requirements::parse_percentile)]
    pub percentile: Vec<Requirement>,
    /// Requirements from a paper: emblix-class1 (< 100 ms), emblix-class2 (< 1 ms),
    /// emblix-class3 (< 100 us),
    /// moblin-ivi (40 us; and every period within +-5 % where there are periods).
    #[arg(long, value_name = "NAME", value_parser = requirements::profile)]
    pub profile: Vec<Vec<Requirement>>,
}

impl RequirementFlags {
    /// The profiles' requirements, then --max-latency, then each --percentile.
    pub fn requirements(&self) -> Vec<Requirement> {
        requirements::combine(&self.profile, self.max_latency, &self.percentile)
    }
}

/// `--load`, `--load-cmd` and their settings.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadFlags {
    /// Background load while measuring: none, light (= none, the Moblin "light" case),
    /// full (cpu+io+net+mem on every CPU), or kinds such as `cpu:2,io:1,net:1`
    /// (kinds: cpu, io, net, udp, mem, syscall, ipc).
    #[arg(long, value_name = "SPEC")]
    pub load: Option<LoadSpec>,
    /// Run this shell command as (part of) the load, e.g. "stress-ng --cpu 2";
    /// it is stopped with its whole process group at the end.
    #[arg(long, value_name = "COMMAND")]
    pub load_cmd: Option<String>,
    /// Most disk space the io load may use.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = latlab_load::parse_size)]
    pub load_disk_cap: u64,
    /// Directory for the io load's temporary files [default: the system temp dir].
    #[arg(long, value_name = "DIR")]
    pub load_temp_dir: Option<PathBuf>,
    /// Run the built-in loads as threads of latlab itself instead of a child
    /// process (hidden: only to compare the two, see bench/load-vs-none.sh).
    #[arg(long, hide = true)]
    pub load_in_process: bool,
}

impl LoadFlags {
    /// The load these flags ask for, and how it is to run.
    pub fn resolve(&self) -> LoadPlan {
        let mut spec = self.load.clone().unwrap_or_else(LoadSpec::none);
        if let Some(cmd) = &self.load_cmd {
            spec = spec.with_command(cmd.clone());
        }
        let defaults = LoadOptions::default();
        LoadPlan {
            spec: (!spec.is_empty()).then_some(spec),
            options: LoadOptions {
                disk_cap_bytes: self.load_disk_cap,
                temp_root: self.load_temp_dir.clone().unwrap_or(defaults.temp_root),
                ..defaults
            },
            in_process: self.load_in_process,
        }
    }
}
