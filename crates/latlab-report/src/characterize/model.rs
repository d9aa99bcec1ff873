//! The characterization as data: the classes met idle and loaded, the two
//! runs' figures, the loaded run's causes and what else stands in the way.

use latlab_document::RunDocument;
use latlab_explain::CauseRow;
use latlab_measure::classes::{self, ClassOutcome};
use latlab_measure::requirements::PROFILES;
use latlab_measure::result::RunResult;
use latlab_measure::units::format_ns;
use latlab_rt::sysinfo::Pitfall;

/// Late means at or over this in the loaded run's explanation: the
/// strictest class checked (Moblin's 40 µs), so every wake-up that stands in
/// the way of any class is explained.
pub const EXPLAIN_THRESHOLD: &str = "40us";

/// The load of the loaded step: every kind latlab has (all run at
/// SCHED_OTHER, write only under temporary directories, talk only over
/// loopback): cpu per CPU, io, net, mem (`full`), and udp, syscall, ipc.
pub const FULL_LOAD: &str = "full,udp,syscall,ipc";

/// Why two runs give no characterization.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CharacterizeError {
    /// A step measured no thread.
    NoThread,
    /// A class of [`PROFILES`] is not a profile latlab-measure knows.
    Profile(String),
}

impl std::fmt::Display for CharacterizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CharacterizeError::NoThread => {
                f.write_str("a characterization step measured no thread (see its output above)")
            }
            CharacterizeError::Profile(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for CharacterizeError {}

/// One requirement class, idle and loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRow {
    /// The profile name (`emblix-class2`), usable as `--profile`.
    pub profile: &'static str,
    /// What it asks for, in words (from [`PROFILES`]).
    pub description: &'static str,
    /// Met in the idle run, and the verdict line.
    pub idle: ClassOutcome,
    /// Met in the loaded run, and the verdict line.
    pub loaded: ClassOutcome,
}

impl ClassRow {
    /// `Emblix class 2 (< 1 ms)`: the class and its limit.
    pub fn title(&self) -> &'static str {
        classes::title(self.profile)
    }
}

/// The figures of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// `idle`, `loaded`.
    pub label: &'static str,
    /// Samples over every CPU.
    pub samples: u64,
    /// Median, ns.
    pub p50: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.99th percentile, ns.
    pub p99_99: u64,
    /// Worst case, ns.
    pub max: u64,
    /// The CPU that saw it.
    pub max_cpu: usize,
    /// Share of samples at or below 10 µs (MontaVista's figure).
    pub share_10us: f64,
}

impl RunFigures {
    /// The figures of `run`, labelled.
    pub fn of(label: &'static str, run: &RunResult) -> RunFigures {
        let latency = &run.overall.latency;
        RunFigures {
            label,
            samples: latency.count,
            p50: latency.p50,
            p99: latency.p99,
            p99_99: latency.p99_99,
            max: latency.max,
            max_cpu: run
                .threads
                .iter()
                .max_by_key(|t| t.latency.max)
                .map_or(0, |t| t.cpu),
            share_10us: crate::montavista::share_under_10us(run),
        }
    }
}

/// The part of the loaded run's explanation the answer uses (the run
/// document holds `latlab explain --json`'s report).
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    /// Periods of the measurement threads in the trace.
    pub periods: u64,
    /// Those at or over the threshold.
    pub late: u64,
    /// The threshold, ns.
    pub threshold_ns: u64,
    /// Causes, ranked, as the explanation has them.
    pub causes: Vec<CauseRow>,
    /// Warnings about the trace (lost events, ...).
    pub notes: Vec<String>,
    /// The loaded run's CPUs and load, for the `latlab tune` line.
    pub tune_target: (Vec<usize>, String),
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Characterization {
    /// Host, machine, CPU, kernel, preemption model.
    pub machine: String,
    /// What was measured, in words.
    pub setup: String,
    /// Idle, then loaded.
    pub runs: [RunFigures; 2],
    /// The classes, loosest first.
    pub classes: Vec<ClassRow>,
    /// The loaded run's explanation (`None` when the trace could not be
    /// explained: the run's warnings say why).
    pub explained: Option<Explained>,
    /// What else stands in the way: the machine's pitfalls and the runs'
    /// other warnings, the preemption model, steal time, the trace's notes.
    pub pitfalls: Vec<Pitfall>,
}

impl Characterization {
    /// The answer from the idle and the loaded run.
    pub fn of(
        idle: &RunDocument,
        loaded: &RunDocument,
    ) -> Result<Characterization, CharacterizeError> {
        if idle.threads.is_empty() || loaded.threads.is_empty() {
            return Err(CharacterizeError::NoThread);
        }
        let classes = PROFILES
            .iter()
            .map(|&(profile, description)| {
                let check = |run: &RunResult| {
                    ClassOutcome::check(profile, &run.threads).map_err(CharacterizeError::Profile)
                };
                Ok(ClassRow {
                    profile,
                    description,
                    idle: check(idle)?,
                    loaded: check(loaded)?,
                })
            })
            .collect::<Result<Vec<_>, CharacterizeError>>()?;
        let explained = loaded.explain.as_ref().map(|report| Explained {
            periods: report.periods,
            late: report.late,
            threshold_ns: report.threshold_ns,
            causes: report.causes.clone(),
            notes: report.notes.clone(),
            tune_target: (
                loaded.settings.cpus.clone(),
                loaded
                    .load
                    .as_ref()
                    .map_or("none".into(), |l| l.spec.clone()),
            ),
        });
        let system = &loaded.system;
        let preemption = system.preemption_model.as_deref().unwrap_or("unknown");
        let machine = format!(
            "{} ({}, {}{} CPUs{}), kernel {} (preemption: {preemption})",
            system.hostname,
            system.machine,
            system
                .cpu_model
                .as_deref()
                .map(|m| format!("{m}, "))
                .unwrap_or_default(),
            system.online_cpus,
            system
                .virtualization
                .as_deref()
                .map(|v| format!(", virtual machine: {v}"))
                .unwrap_or_default(),
            system.kernel_release,
        );
        let s = &loaded.settings;
        let setup = format!(
            "one {} thread per CPU ({}), woken by {} every {}; {:.0} s idle, then {:.0} s \
             under load {}, kernel-traced, the wake-ups of {} or more explained",
            crate::table::scheduling(s),
            s.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
            s.timer,
            format_ns(s.interval_ns),
            idle.elapsed_s,
            loaded.elapsed_s,
            loaded
                .load
                .as_ref()
                .map_or_else(|| "none".to_string(), |l| l.name()),
            explained
                .as_ref()
                .map_or_else(|| EXPLAIN_THRESHOLD.into(), |e| format_ns(e.threshold_ns)),
        );
        let pitfalls = pitfalls(idle, loaded, preemption, explained.as_ref());
        Ok(Characterization {
            machine,
            setup,
            runs: [
                RunFigures::of("idle", idle),
                RunFigures::of("loaded", loaded),
            ],
            classes,
            explained,
            pitfalls,
        })
    }
}

/// What else stands in the way: the machine's pitfalls from the results'
/// own system records, then the runs' other warnings (what their sessions
/// could not set up), the preemption model first, steal time and the
/// trace's notes last.
fn pitfalls(
    idle: &RunDocument,
    loaded: &RunDocument,
    preemption: &str,
    explained: Option<&Explained>,
) -> Vec<Pitfall> {
    let mut pitfalls: Vec<Pitfall> = Vec::new();
    let known: Vec<Pitfall> = idle
        .system
        .pitfall_list()
        .into_iter()
        .chain(loaded.system.pitfall_list())
        .collect();
    let others = idle
        .warnings
        .iter()
        .chain(&loaded.warnings)
        .filter(|w| !known.iter().any(|p| p.text() == **w))
        .map(|w| Pitfall {
            summary: w.clone(),
            detail: String::new(),
        })
        .collect::<Vec<_>>();
    for pitfall in known.into_iter().chain(others) {
        if !pitfalls.contains(&pitfall) {
            pitfalls.push(pitfall);
        }
    }
    if matches!(preemption, "none" | "voluntary") {
        pitfalls.insert(
            0,
            Pitfall {
                summary: format!("the kernel runs preemption model {preemption:?}"),
                detail: "kernel code runs to its next preemption point while a real-time \
                         task waits; boot with preempt=full (PREEMPT_DYNAMIC kernels) or use \
                         a PREEMPT_RT kernel"
                    .into(),
            },
        );
    }
    let steal: Vec<String> = loaded
        .settings
        .steal_ns
        .iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(cpu, ns)| format!("cpu{cpu} {}", format_ns(*ns)))
        .collect();
    if !steal.is_empty() {
        pitfalls.push(Pitfall {
            summary: format!(
                "the hypervisor stole time from the vCPUs during the loaded run ({})",
                steal.join(", ")
            ),
            detail: "no kernel setting can remove that".into(),
        });
    }
    if let Some(e) = explained {
        pitfalls.extend(e.notes.iter().map(|n| Pitfall {
            summary: format!("trace: {n}"),
            detail: String::new(),
        }));
    }
    pitfalls
}
