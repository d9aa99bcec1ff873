//! `latlab explain`: the KTAS analysis (Kwon, Sugaya, Nakajima 2010) on
//! today's kernels, made statistical. Given a kernel event trace in which a
//! periodic task wakes on a timer, it finds the late periods, cuts out what
//! happened inside each, compares late periods with normal ones and names
//! the causes.
//!
//! Three layers, each producing data, not text:
//! - [`detect`]: the task's periods from hrtimer, wake-up and switch events
//!   (clock_nanosleep, timerfd, itimer) or latlab's `trace_marker` lines;
//!   the paper's Table 1.
//! - [`separate`]: the events of each late window and of a sample of normal
//!   windows (the baseline).
//! - [`analyze`]: the paper's Table 2, a per-window decomposition of the
//!   latency that adds up to the nanosecond, and causes ranked across all
//!   late windows with recommendations.
//!
//! [`explain`] runs all three on any [`Source`]; [`explain_file`] opens any
//! trace latlab reads. The [`Report`] is data (its terminal text and HTML
//! are rendered by latlab-report).
//!
//! # Example
//!
//! A task (pid 42) sleeping on an hrtimer every 1 ms; in its second period a
//! NET_RX softirq runs between the wake-up and the switch:
//!
//! ```
//! use latlab_explain::model::{Kind, Names, Rec};
//! use latlab_explain::{explain, Options, Records, Threshold};
//!
//! let mut names = Names::new();
//! let ev = |names: &mut Names, ts, kind, n: &str| Rec { ts, cpu: 0, pid: -1, name: names.intern(n), kind };
//! let (me, other) = (names.intern("rt"), names.intern("bash"));
//! let mut recs = vec![ev(&mut names, 0, Kind::Switch { prev_pid: 42, prev_runnable: false, next_pid: 7,
//!     next_prio: 120, next_comm: other, prev_comm: me }, "sched_switch")];
//! for (k, extra) in [(1u64, 0u64), (2, 50_000)] {
//!     let t = k * 1_000_000;
//!     recs.push(ev(&mut names, t - 900_000, Kind::HrtimerStart { timer: 1, soft: t, expires: t }, "hrtimer_start"));
//!     recs.push(ev(&mut names, t + 1_000, Kind::HrtimerExpireEntry { timer: 1, now: Some(t + 1_000) }, "hrtimer_expire_entry"));
//!     recs.push(ev(&mut names, t + 2_000, Kind::Wake { pid: 42, target_cpu: 0, waking: true }, "sched_waking"));
//!     recs.push(ev(&mut names, t + 3_000, Kind::HrtimerExpireExit { timer: 1 }, "hrtimer_expire_exit"));
//!     if extra > 0 {
//!         recs.push(ev(&mut names, t + 4_000, Kind::SoftirqEntry { vec: 3 }, "softirq_entry"));
//!         recs.push(ev(&mut names, t + 4_000 + extra, Kind::SoftirqExit { vec: 3 }, "softirq_exit"));
//!     }
//!     recs.push(ev(&mut names, t + 5_000 + extra, Kind::Switch { prev_pid: 7, prev_runnable: true,
//!         next_pid: 42, next_prio: 9, next_comm: me, prev_comm: other }, "sched_switch"));
//!     recs.push(ev(&mut names, t + 6_000 + extra, Kind::Switch { prev_pid: 42, prev_runnable: false,
//!         next_pid: 7, next_prio: 120, next_comm: other, prev_comm: me }, "sched_switch"));
//! }
//! let opts = Options { threshold: Threshold::Ns(20_000), ..Options::default() };
//! let report = explain(&Records::from(recs), names, &opts)?;
//! assert_eq!(report.late, 1);
//! assert_eq!(report.causes[0].cause.category(), "softirq");
//! assert!(report.causes[0].description.contains("NET_RX"));
//! # Ok::<(), latlab_explain::ExplainError>(())
//! ```
#![warn(missing_docs)]

pub mod agreement;
pub mod analyze;
pub mod callbacks;
pub mod detect;
mod error;
pub mod model;
mod report;
pub mod separate;
pub mod source;
mod timer_work;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use analyze::{CategoryRow, Cause, CauseRow, EventRow, Part, PidRow, Silence, TimerKind};
pub use detect::{Period, PeriodSource, TaskSummary};
pub use error::{ExplainError, Result};
pub use report::{ExplainDocument, ExplainSchema, Kernel, PeriodRow, Report, WindowReport};
pub use source::{Lost, Records, Source, Trace, WalkFn};

use crate::model::Names;

/// Events a recording needs for `explain` (tracefs `system:event` names).
pub const RECOMMENDED_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "timer:timer_expire_entry",
    "timer:timer_expire_exit",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq_vectors:local_timer_entry",
    "irq_vectors:local_timer_exit",
    "ipi:ipi_send_cpu",
    "kmem:mm_page_alloc",
];

/// Which periods count as late.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Latency above this many ns.
    Ns(u64),
    /// Latency above this percentile (0-100) of the task's periods.
    Percentile(f64),
}

impl Threshold {
    /// Parses a duration with its unit (`100us`, `1.5ms`, `80000ns`, `2s`:
    /// [`latlab_rt::duration`]'s rule, so a bare number is an error) or a
    /// percentile (`p99`).
    pub fn parse(s: &str) -> Result<Threshold> {
        let bad = |reason: &str| ExplainError::BadThreshold {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if let Some(p) = t.strip_prefix('p').or_else(|| t.strip_prefix('P')) {
            let v: f64 = p.parse().map_err(|_| bad("not a percentile"))?;
            if !(v > 0.0 && v < 100.0) {
                return Err(bad("percentile must be between 0 and 100"));
            }
            return Ok(Threshold::Percentile(v));
        }
        latlab_rt::duration::latency(t)
            .map(Threshold::Ns)
            .map_err(|e| bad(e.as_str()))
    }
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Threshold::Ns(n) => write!(f, "{}", report::fmt_ns(*n)),
            Threshold::Percentile(p) => write!(f, "p{p}"),
        }
    }
}

/// What to analyse and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Analyse these tasks (empty: choose automatically).
    pub pids: Vec<i32>,
    /// Analyse tasks with these names (`latlab-cpu*` style prefix globs allowed).
    pub comms: Vec<String>,
    /// Which periods are late.
    pub threshold: Threshold,
    /// Normal windows to sample as the baseline.
    pub baseline: usize,
    /// Write each late window's events as text into this directory.
    pub dump_windows: Option<PathBuf>,
    /// Steal time per CPU during the recording (ns), e.g. from a `latlab
    /// run` result's `settings.steal_ns`: evidence for hypervisor gaps.
    pub steal_ns: Vec<(usize, u64)>,
    /// Late windows to keep in the report in full (the rest are counted).
    pub max_windows: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pids: Vec::new(),
            comms: Vec::new(),
            threshold: Threshold::Percentile(99.0),
            baseline: 200,
            dump_windows: None,
            steal_ns: Vec::new(),
            max_windows: 50,
        }
    }
}

fn comm_matches(pattern: &str, comm: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => comm.starts_with(prefix),
        None => pattern == comm,
    }
}

/// A note when `--comm` chose tasks whose periods differ (cyclictest's
/// measuring thread and its main thread): they are analysed together, which
/// mixes their statistics, so the note names each and points to `--pid`.
fn mixed_periods_note(tasks: &[detect::TaskSummary], selected: &[i32]) -> Option<String> {
    let chosen: Vec<&detect::TaskSummary> = tasks
        .iter()
        .filter(|t| selected.contains(&t.pid) && t.median_interval_ns > 0)
        .collect();
    let shortest = chosen.iter().map(|t| t.median_interval_ns).min()?;
    let longest = chosen.iter().map(|t| t.median_interval_ns).max()?;
    if longest < shortest + shortest / 2 {
        return None;
    }
    let list: Vec<String> = chosen
        .iter()
        .map(|t| {
            format!(
                "{}:{} every {}",
                t.comm,
                t.pid,
                latlab_measure::units::format_ns(t.median_interval_ns)
            )
        })
        .collect();
    Some(format!(
        "--comm chose tasks with different periods ({}), analysed together: choose one with --pid",
        list.join(", ")
    ))
}

/// Reads `settings.steal_ns` from a `latlab run --json` result.
pub fn steal_from_run_result(path: &Path) -> Result<Vec<(usize, u64)>> {
    let text = std::fs::read_to_string(path).map_err(|source| ExplainError::Io {
        what: "cannot read run result",
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ExplainError::RunResult {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let steal = v
        .get("settings")
        .and_then(|s| s.get("steal_ns"))
        .ok_or_else(|| ExplainError::RunResult {
            path: path.to_path_buf(),
            reason: "no settings.steal_ns".into(),
        })?;
    serde_json::from_value(steal.clone()).map_err(|e| ExplainError::RunResult {
        path: path.to_path_buf(),
        reason: format!("settings.steal_ns: {e}"),
    })
}

/// Opens any trace latlab reads and explains it.
pub fn explain_file(path: &Path, opts: &Options) -> Result<Report> {
    let trace = Trace::open(path)?;
    let mut report = explain(&trace, Names::new(), opts)?;
    report.trace = path.display().to_string();
    Ok(report)
}

/// The analysis of windows cut elsewhere (`latlab watch` gets them from
/// the kernel, already cut): each window's decomposition, the causes
/// ranked across the late ones against the normal ones, the categories, and
/// a report of each late window, exactly as [`explain`] makes them.
#[derive(Debug, Clone)]
pub struct WindowsAnalysis {
    /// `parts[i]` decomposes `windows[i]`.
    pub parts: Vec<Vec<Part>>,
    /// Causes ranked across the late windows.
    pub causes: Vec<CauseRow>,
    /// Causes summed by category.
    pub categories: Vec<CategoryRow>,
    /// A report of every late window, in the order of `windows`.
    pub windows: Vec<WindowReport>,
}

/// Decomposes `windows` and ranks their causes (`rt`: a PREEMPT_RT kernel).
pub fn analyze_windows(windows: &[separate::Window], names: &Names, rt: bool) -> WindowsAnalysis {
    let ctx = analyze::Context::new(rt, windows, names);
    let parts: Vec<Vec<Part>> = windows
        .iter()
        .map(|w| analyze::decompose(w, names, &ctx))
        .collect();
    let causes = analyze::rank_causes(windows, &parts, names, &ctx);
    let categories = analyze::categories(windows, &parts);
    let reports = windows
        .iter()
        .zip(&parts)
        .filter(|(w, _)| w.late)
        .map(|(w, ps)| WindowReport::new(w, ps, names))
        .collect();
    WindowsAnalysis {
        parts,
        causes,
        categories,
        windows: reports,
    }
}

/// Runs detection, separation and analysis over `source`, in one pass over
/// its events (see [`separate`] for when a second one is needed).
pub fn explain(source: &dyn Source, names: Names, opts: &Options) -> Result<Report> {
    explain_with(source, names, opts, true)
}

/// Events between two trims of the one-pass history.
const TRIM_EVERY: u64 = 8192;

/// [`explain`]; `one_pass` false always cuts windows in a second pass (the
/// reference the one-pass result must equal).
fn explain_with(
    source: &dyn Source,
    mut names: Names,
    opts: &Options,
    one_pass: bool,
) -> Result<Report> {
    // Detection, and (one pass) the window of every period as it ends.
    let one_pass = one_pass && opts.dump_windows.is_none();
    let mut det = detect::Detector::new();
    let mut col = separate::Collector::new();
    // Whose windows the one pass cuts: the tasks the options name, else
    // latlab's measurement threads once one is seen (they will be chosen),
    // else every task's. This only saves memory: a chosen window that was
    // not cut sends explain to a second pass.
    let named = !opts.pids.is_empty() || !opts.comms.is_empty();
    let is_latlab = |comm: &str| comm.starts_with("latlab-cpu");
    let mut latlab_seen = false;
    let lost = source.walk(&mut names, &mut |r, names, _| {
        if !one_pass {
            det.push(r);
            return;
        }
        col.push(r);
        let found = det.periods.len();
        det.push(r);
        for k in found..det.periods.len() {
            let p = det.periods[k];
            let comm = names.comm(p.pid);
            let want = if named {
                opts.pids.contains(&p.pid) || opts.comms.iter().any(|c| comm_matches(c, comm))
            } else if is_latlab(comm) {
                if !latlab_seen {
                    latlab_seen = true;
                    col.retain(|q| is_latlab(names.comm(q.pid)));
                }
                true
            } else {
                !latlab_seen
            };
            if want {
                col.ended(k, p);
            }
        }
        if det.events % TRIM_EVERY == 0 {
            col.trim(det.oldest_open());
        }
    })?;
    col.finish();
    let all_periods = std::mem::take(&mut det.periods);
    let tasks_found = detect::summarize_tasks(&all_periods, |p| names.comm(p).to_string());

    // Choose the tasks; a selector that matches no periodic timer task is
    // an error naming those the trace has.
    if tasks_found.is_empty() {
        return Err(ExplainError::NoPeriodicTask { events: det.events });
    }
    let unmatched: Vec<String> = opts
        .pids
        .iter()
        .filter(|&&pid| !tasks_found.iter().any(|t| t.pid == pid))
        .map(|pid| format!("--pid {pid}"))
        .chain(
            opts.comms
                .iter()
                .filter(|c| !tasks_found.iter().any(|t| comm_matches(c, &t.comm)))
                .map(|c| format!("--comm {c}")),
        )
        .collect();
    if !unmatched.is_empty() {
        return Err(ExplainError::NoSuchTask {
            asked: unmatched.join(", "),
            found: tasks_found,
        });
    }
    let (selected, selection): (Vec<i32>, String) =
        if !opts.pids.is_empty() || !opts.comms.is_empty() {
            let mut v: Vec<i32> = opts.pids.clone();
            for (pid, comm) in names.pids() {
                if opts.comms.iter().any(|c| comm_matches(c, comm)) {
                    v.push(pid);
                }
            }
            v.sort_unstable();
            v.dedup();
            (v, "chosen with --pid/--comm".into())
        } else {
            let latlab: Vec<i32> = tasks_found
                .iter()
                .filter(|t| t.comm.starts_with("latlab-cpu"))
                .map(|t| t.pid)
                .collect();
            if !latlab.is_empty() {
                (latlab, "latlab measurement threads (latlab-cpu*)".into())
            } else {
                let best = tasks_found
                    .iter()
                    .find(|t| t.periods >= 10 && t.regularity >= 0.5)
                    .unwrap_or(&tasks_found[0]);
                (
                    vec![best.pid],
                    "the most periodic timer task (use --pid/--comm to choose)".into(),
                )
            }
        };
    // A task with hrtimer periods ignores its marker periods (they duplicate late samples).
    let mut has_hr: HashMap<i32, bool> = HashMap::new();
    for p in &all_periods {
        if p.source == PeriodSource::Hrtimer {
            has_hr.insert(p.pid, true);
        }
    }
    // `periods[i]` is `all_periods[found_as[i]]`.
    let found_as: Vec<usize> = (0..all_periods.len())
        .filter(|&i| {
            let p = &all_periods[i];
            selected.contains(&p.pid)
                && (p.source == PeriodSource::Hrtimer || !has_hr.contains_key(&p.pid))
        })
        .collect();
    let periods: Vec<Period> = found_as.iter().map(|&i| all_periods[i]).collect();

    let stats = detect::latency_summary(&periods);
    let mut lat: Vec<u64> = periods.iter().map(|p| p.latency()).collect();
    lat.sort_unstable();
    let threshold_ns = match opts.threshold {
        Threshold::Ns(n) => n,
        // The value just below the top (100 - p) % of periods, so that a
        // short trace still has its worst period(s) late.
        Threshold::Percentile(p) if !lat.is_empty() => {
            let idx = ((p / 100.0 * lat.len() as f64).floor() as usize)
                .saturating_sub(1)
                .min(lat.len() - 1);
            lat[idx]
        }
        Threshold::Percentile(_) => 0,
    };
    // Table 1.
    let mut table1 = Vec::with_capacity(periods.len());
    let mut late_idx = Vec::new();
    let mut per_task_index: HashMap<i32, u64> = HashMap::new();
    let mut late_count = 0u64;
    for (i, p) in periods.iter().enumerate() {
        let idx = per_task_index.entry(p.pid).or_default();
        *idx += 1;
        let late = p.latency() > threshold_ns;
        if late {
            late_count += 1;
            late_idx.push(i);
        }
        table1.push(PeriodRow {
            index: *idx,
            pid: p.pid,
            latency_ns: p.latency(),
            late_count: late.then_some(late_count),
            intended_ns: p.intended,
            expiry_ns: p.expiry,
            cpu: p.cpu,
            position: p.position,
            soft: p.soft,
        });
    }
    // Baseline: normal periods spread evenly over the trace.
    let normal: Vec<usize> = (0..periods.len())
        .filter(|&i| periods[i].latency() <= threshold_ns)
        .collect();
    let take = opts.baseline.min(normal.len());
    let mut chosen: Vec<(usize, bool)> = late_idx.iter().map(|&i| (i, true)).collect();
    for k in 0..take {
        chosen.push((normal[k * normal.len() / take], false));
    }

    // Separation: the chosen windows the one pass cut, else a second pass.
    let cut: Option<Vec<separate::Window>> = if one_pass {
        chosen
            .iter()
            .map(|&(i, late)| {
                let mut w = col.windows.get_mut(found_as[i])?.take()?;
                w.period = i;
                w.late = late;
                Some(w)
            })
            .collect()
    } else {
        None
    };
    drop(col);
    let windows = match cut {
        Some(mut windows) => {
            windows.sort_by_key(|w| (w.p.intended, w.period));
            windows
        }
        None => {
            let mut sep = separate::Separator::new(&periods, &chosen, opts.dump_windows.is_some());
            if !chosen.is_empty() {
                source.walk(&mut names, &mut |r, _, line| sep.push(r, line))?;
            }
            sep.windows
        }
    };

    // Analysis.
    let kernel = Kernel::of(source.uname(), &names);
    let ctx = analyze::Context::new(kernel.preempt_rt, &windows, &names);
    let parts: Vec<Vec<Part>> = windows
        .iter()
        .map(|w| analyze::decompose(w, &names, &ctx))
        .collect();
    let table2 = analyze::event_table(&windows, &names);
    let causes = analyze::rank_causes(&windows, &parts, &names, &ctx);
    let categories = analyze::categories(&windows, &parts);
    let mut causes = causes;
    // Steal time is the evidence that a silent gap was the hypervisor.
    let cpus: Vec<u32> = periods.iter().map(|p| p.timer_cpu).collect();
    let steal: Vec<String> = opts
        .steal_ns
        .iter()
        .filter(|(c, n)| *n > 0 && cpus.contains(&(*c as u32)))
        .map(|(c, n)| format!("cpu{c} {}", report::fmt_ns(*n)))
        .collect();
    if !steal.is_empty() {
        for c in causes
            .iter_mut()
            .filter(|c| matches!(c.cause, Cause::SilentGap { .. } | Cause::IdleExit))
        {
            c.recommendation.push_str(&format!(
                "; evidence: the hypervisor stole {} during the run",
                steal.join(", ")
            ));
        }
    }

    if let Some(dir) = &opts.dump_windows {
        report::dump_windows(dir, &windows, &parts, &names)?;
    }
    let mut win_reports: Vec<WindowReport> = windows
        .iter()
        .zip(&parts)
        .filter(|(w, _)| w.late)
        .map(|(w, ps)| {
            let mut r = WindowReport::new(w, ps, &names);
            r.late_index = table1[w.period].late_count.unwrap_or(0);
            r
        })
        .collect();
    win_reports.sort_by_key(|w| w.late_index);
    let windows_total = win_reports.len() as u64;
    win_reports.sort_by_key(|w| std::cmp::Reverse(w.latency_ns));
    win_reports.truncate(opts.max_windows);

    let mut notes = Vec::new();
    if !opts.comms.is_empty() && opts.pids.is_empty() {
        notes.extend(mixed_periods_note(&tasks_found, &selected));
    }
    if lost.counted > 0 || lost.uncounted_pages > 0 {
        notes.push(format!(
            "events were lost while recording ({} counted, {} page(s) with an unknown number): windows near the losses may be incomplete; record with a larger ring buffer (latlab record --buffer-size, latlab run --trace-buffer-kb) or fewer events",
            lost.counted, lost.uncounted_pages
        ));
    }
    let selected_tasks = tasks_found
        .iter()
        .filter(|t| selected.contains(&t.pid))
        .cloned()
        .collect();
    let soft = periods.iter().filter(|p| p.soft).count();
    if soft > 0 {
        let thread = if kernel.preempt_rt {
            "the softirq thread (ktimers/N)"
        } else {
            "the HRTIMER softirq"
        };
        notes.push(format!(
            "{soft} of {} periods were soft hrtimer expiries: the callback ran in {thread}, not in the timer interrupt, so the wake-up waited for it to run{}",
            periods.len(),
            if kernel.preempt_rt {
                "; on PREEMPT_RT a SCHED_FIFO/RR task sleeping in clock_nanosleep gets a hard hrtimer instead (posix timers, itimer and timerfd stay soft)"
            } else {
                ""
            }
        ));
    }
    Ok(Report {
        trace: String::new(),
        format: source.format(),
        kernel,
        events: det.events,
        lost_events: lost.counted,
        lost_pages: lost.uncounted_pages,
        span_ns: det.span.map(|(a, b)| b - a).unwrap_or(0),
        tasks_found,
        selected: selected_tasks,
        selection,
        threshold: opts.threshold.to_string(),
        threshold_ns,
        periods: periods.len() as u64,
        late: late_count,
        latency: stats,
        baseline_windows: take as u64,
        late_windows: windows_total,
        table1,
        table2,
        categories,
        causes,
        windows: win_reports,
        steal_ns: opts.steal_ns.clone(),
        notes,
    })
}

#[cfg(test)]
mod preempt_rt_tests;
#[cfg(test)]
mod tests;
