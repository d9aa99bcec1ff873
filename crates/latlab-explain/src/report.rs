//! The report: the result of the three layers, serialisable as JSON, and its
//! terminal rendering.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::analyze::{CategoryRow, CauseRow, EventRow, Part};
use crate::detect::TaskSummary;
use crate::error::{ExplainError, Result};
use crate::model::Names;
use crate::separate::Window;
use latlab_envelope::{Envelope, Kind};
use latlab_measure::stats::Summary;
use latlab_rt::sysinfo::SystemInfo;

/// One row of the paper's Table 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PeriodRow {
    /// Period index of its task (1-based).
    pub index: u64,
    /// The task.
    pub pid: i32,
    /// Latency (ns).
    pub latency_ns: u64,
    /// Running count of late periods, for late ones.
    pub late_count: Option<u64>,
    /// Intended wake-up (trace clock ns).
    pub intended_ns: u64,
    /// The expiry the kernel armed, on the timer's own clock (ns), where the
    /// period came from timer events.
    pub expiry_ns: Option<u64>,
    /// CPU it ran on.
    pub cpu: u32,
    /// Index of the event that ended the period (position in the trace).
    pub position: u64,
    /// The timer expired in softirq context (a soft hrtimer, see
    /// [`crate::Period::soft`]).
    pub soft: bool,
}

/// A late window and its decomposition.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WindowReport {
    /// Running count of late periods (matches Table 1's `late_count`).
    pub late_index: u64,
    /// The task.
    pub pid: i32,
    /// `comm:pid`.
    pub task: String,
    /// CPU the task ran on.
    pub cpu: u32,
    /// CPU the timer fired on.
    pub timer_cpu: u32,
    /// Intended wake-up (trace clock ns).
    pub start_ns: u64,
    /// When the task ran.
    pub end_ns: u64,
    /// Total latency (ns) = sum of `parts`.
    pub latency_ns: u64,
    /// Timer interrupt delay: expiry to hrtimer_expire_entry (ns).
    pub timer_irq_delay_ns: Option<u64>,
    /// Events in the window.
    pub events: u64,
    /// Events left out (window too large).
    pub dropped_events: u64,
    /// The decomposition, largest first.
    pub parts: Vec<Part>,
}

impl WindowReport {
    pub(crate) fn new(w: &Window, parts: &[Part], names: &Names) -> Self {
        WindowReport {
            late_index: 0,
            pid: w.p.pid,
            task: format!("{}:{}", names.comm(w.p.pid), w.p.pid),
            cpu: w.p.cpu,
            timer_cpu: w.p.timer_cpu,
            start_ns: w.p.intended,
            end_ns: w.p.run,
            latency_ns: w.p.latency(),
            timer_irq_delay_ns: w.p.expire.map(|x| x.saturating_sub(w.p.intended)),
            events: w.events.len() as u64,
            dropped_events: w.dropped,
            parts: parts.to_vec(),
        }
    }
}

/// What the trace says of the kernel that was traced.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Kernel {
    /// The traced machine's `uname` (system, node, release, version), when
    /// the trace carries it.
    pub uname: Option<String>,
    /// A PREEMPT_RT kernel (softirqs in threads, interrupts in `irq/NN`
    /// threads, sleeping spinlocks): the analysis gives softirq time to the
    /// thread that ran it, and its advice fits that kernel.
    pub preempt_rt: bool,
    /// How that was found.
    pub evidence: String,
}

impl Kernel {
    /// The kernel of a trace: PREEMPT_RT when its `uname` says so; without
    /// a `uname`, when the trace has the threads only PREEMPT_RT (or a
    /// kernel booted with `threadirqs`, which runs softirqs the same way)
    /// has: `ktimers/N`.
    pub fn of(uname: Option<String>, names: &Names) -> Kernel {
        if let Some(u) = uname {
            let rt = u.split_whitespace().any(|w| w == "PREEMPT_RT");
            return Kernel {
                evidence: format!(
                    "{} (the trace's uname)",
                    if rt { "PREEMPT_RT" } else { "not PREEMPT_RT" }
                ),
                uname: Some(u),
                preempt_rt: rt,
            };
        }
        let ktimers = names.pids().any(|(_, comm)| comm.starts_with("ktimers/"));
        Kernel {
            uname: None,
            preempt_rt: ktimers,
            evidence: if ktimers {
                "PREEMPT_RT or threadirqs: the trace has ktimers/N threads (no uname in it)".into()
            } else {
                "no PREEMPT_RT threads (ktimers/N) in the trace, and no uname".into()
            },
        }
    }
}

/// Everything `latlab explain` found. This is the `--json` schema.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// The trace analysed.
    pub trace: String,
    /// Its format.
    pub format: String,
    /// The kernel that was traced.
    pub kernel: Kernel,
    /// Events in the trace.
    pub events: u64,
    /// Events lost while recording (counted).
    pub lost_events: u64,
    /// Pages flagged as having lost an unknown number of events.
    pub lost_pages: u64,
    /// Time span of the trace (ns).
    pub span_ns: u64,
    /// Every task that woke from a timer, most periodic first.
    pub tasks_found: Vec<TaskSummary>,
    /// The tasks analysed.
    pub selected: Vec<TaskSummary>,
    /// How they were chosen.
    pub selection: String,
    /// The threshold as given (`p99`, `100 us`).
    pub threshold: String,
    /// The threshold in ns.
    pub threshold_ns: u64,
    /// Periods of the selected tasks.
    pub periods: u64,
    /// Late periods (latency above the threshold).
    pub late: u64,
    /// Latency statistics over all periods of the selected tasks.
    pub latency: Summary,
    /// Normal windows analysed as the baseline.
    pub baseline_windows: u64,
    /// Late windows analysed.
    pub late_windows: u64,
    /// The paper's Table 1: every period, late ones with a running count.
    pub table1: Vec<PeriodRow>,
    /// The paper's Table 2: events per window, normal vs late.
    pub table2: Vec<EventRow>,
    /// Late-window latency by cause category, largest first.
    pub categories: Vec<CategoryRow>,
    /// Causes ranked by the latency they add beyond their normal share.
    pub causes: Vec<CauseRow>,
    /// The worst late windows with their decomposition.
    pub windows: Vec<WindowReport>,
    /// Steal time per CPU given as evidence (ns).
    pub steal_ns: Vec<(usize, u64)>,
    /// Warnings about the trace.
    pub notes: Vec<String>,
}

/// `12.3 us` style.
pub(crate) use latlab_measure::units::format_ns as fmt_ns;

fn secs(ns: u64) -> String {
    let us = ns.saturating_add(500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// Writes each late window's events as text, with its decomposition on top.
pub(crate) fn dump_windows(
    dir: &Path,
    windows: &[Window],
    parts: &[Vec<Part>],
    names: &Names,
) -> Result<()> {
    let io = |source| ExplainError::Io {
        what: "cannot write window dump in",
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut k = 0;
    let mut order: Vec<usize> = (0..windows.len()).filter(|&i| windows[i].late).collect();
    order.sort_by_key(|&i| windows[i].p.intended);
    for i in order {
        k += 1;
        let w = &windows[i];
        let mut head = format!(
            "# late window {k}: {}:{} on CPU {} (timer CPU {}), intended {} s, ran {} s, latency {} ns\n",
            names.comm(w.p.pid),
            w.p.pid,
            w.p.cpu,
            w.p.timer_cpu,
            secs(w.p.intended),
            secs(w.p.run),
            w.p.latency()
        );
        for p in &parts[i] {
            let _ = writeln!(head, "#   {:>12} ns  {}", p.ns, p.cause.describe());
        }
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&w.text);
        let path = dir.join(format!("window-{k:05}.txt"));
        std::fs::write(&path, bytes).map_err(|source| ExplainError::Io {
            what: "cannot write window dump",
            path,
            source,
        })?;
    }
    Ok(())
}

/// Schema name of `latlab explain --json`.
pub const SCHEMA: &str = "latlab.explain";
/// Version of the `latlab.explain` JSON schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The `latlab.explain` kind of document, for its [`Envelope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainSchema {}

impl Kind for ExplainSchema {
    const SCHEMA: &'static str = SCHEMA;
    const VERSION: u32 = SCHEMA_VERSION;
}

/// The document `latlab explain --json` writes (schema `latlab.explain`):
/// the envelope's fields, then the [`Report`]'s. Files written before the
/// envelope read with `null` (or `[]`) where they did not record a field.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ExplainDocument {
    /// `schema` (`"latlab.explain"`), `schema_version` ([`SCHEMA_VERSION`]),
    /// `id`, `latlab_version`, `command_line`, `started_at` (when the
    /// explanation ran), `system` (always `null`: a trace file does not say
    /// which machine recorded it; its kernel is in `kernel`) and `warnings`.
    #[serde(flatten)]
    pub envelope: Envelope<ExplainSchema, Option<SystemInfo>>,
    /// The explanation.
    #[serde(flatten)]
    pub report: Report,
}

/// A ExplainDocument reads as its envelope too (`result.system`, `result.started_at`).
impl std::ops::Deref for ExplainDocument {
    type Target = Envelope<ExplainSchema, Option<SystemInfo>>;

    fn deref(&self) -> &Envelope<ExplainSchema, Option<SystemInfo>> {
        &self.envelope
    }
}

impl std::ops::DerefMut for ExplainDocument {
    fn deref_mut(&mut self) -> &mut Envelope<ExplainSchema, Option<SystemInfo>> {
        &mut self.envelope
    }
}

impl ExplainDocument {
    /// The document of a report, at this version of the schema.
    pub fn new(
        envelope: Envelope<ExplainSchema, Option<SystemInfo>>,
        report: Report,
    ) -> ExplainDocument {
        ExplainDocument { envelope, report }
    }
}
