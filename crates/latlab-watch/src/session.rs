//! A running watch: a kernel side ([`KernelSide`]: BPF, or tracefs with
//! `--tracefs`) started, the tasks chosen, windows turned
//! into explanations as they arrive, a snapshot every interval, and the
//! final [`WatchDocument`]. Memory is bounded however long it runs: the
//! kernel's histograms are sparse (at most 65 536 buckets), the windows kept
//! for the ranked analysis are the [`KEEP_WORST`] worst and the
//! [`KEEP_RECENT`] latest, cause totals are capped at [`MAX_CAUSES`], and
//! snapshots are merged pairwise past [`MAX_SNAPSHOTS`]; threads that ended
//! give their buckets back to the kernel, and past [`KEEP_ENDED`] of them
//! the oldest are folded into one task ([`ENDED_TID`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use latlab_explain::model::Names;
use latlab_explain::{CategoryRow, CauseRow, WindowReport};
use latlab_measure::histogram::Histogram;
use latlab_rt::sysinfo::SystemInfo;

use crate::document::*;
use crate::error::Result;
use crate::histograms::{self, Counts, LatencyKind};
use crate::irqnames::IrqNames;
use crate::loader::{BpfSide, Counters, Settings};
use crate::records::{comm_str, RawWindow};
use crate::select::{self, Selection, Started};
use crate::side::KernelSide;
use crate::tracefs::TracefsSide;
use crate::window::{to_window, CommCache};

/// Late windows kept for the ranked analysis: the worst ones...
pub const KEEP_WORST: usize = 50;
/// ... and the latest ones.
pub const KEEP_RECENT: usize = 150;
/// Baseline (normal) windows kept.
pub const KEEP_BASELINE: usize = 100;
/// Distinct causes summed over the watch at most (more are counted as
/// "other causes").
pub const MAX_CAUSES: usize = 512;
/// Snapshots kept in the result at most (a week at one a minute); past it,
/// neighbours are merged.
pub const MAX_SNAPSHOTS: usize = 10_080;
/// How often the selection is scanned again.
pub const RESCAN: Duration = Duration::from_secs(1);
/// Threads that ended whose counts stay apart in the result (a task each),
/// at most; the counts of older ones are folded into one task,
/// [`ENDED_TID`], so that a watch of days over threads that come and go
/// stays bounded.
pub const KEEP_ENDED: usize = 1024;
/// The task the folded ended threads are counted as (thread id 0 is the
/// idle task, never watched).
pub const ENDED_TID: i32 = 0;
/// Its name in the result.
pub const ENDED_NAME: &str = "(ended threads)";

/// How to watch.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Which tasks.
    pub selection: Selection,
    /// Late above this (ns).
    pub threshold_ns: u64,
    /// Snapshot interval.
    pub interval: Duration,
    /// Windows per second and CPU at most.
    pub max_windows_per_sec: u32,
    /// One normal wake-up in this many sends a baseline window.
    pub baseline_every: u32,
    /// The kernel side that measures.
    pub backend: Backend,
}

#[derive(Debug, Clone)]
struct Kept {
    raw: RawWindow,
    at_ns: u64,
}

#[derive(Debug, Clone, Default)]
struct TaskLive {
    late: u64,
    worst: Option<(u64, u64)>,
}

/// A task as the live view shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTask {
    /// Thread id.
    pub tid: i32,
    /// Name.
    pub comm: String,
    /// Wake-ups measured so far.
    pub samples: u64,
    /// Latest interval's worst (ns), thread or wake-up latency.
    pub current_ns: u64,
    /// Its 99th percentile over the whole watch (ns).
    pub p99_ns: u64,
    /// Worst so far (ns).
    pub worst_ns: u64,
    /// Timer-interrupt part: worst irq latency (ns), if timer-driven.
    pub irq_worst_ns: Option<u64>,
    /// Late windows.
    pub late: u64,
}

/// The live figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    /// Time watched.
    pub elapsed: Duration,
    /// Per task, worst first.
    pub tasks: Vec<LiveTask>,
    /// Spikes per hour with the 95 % interval.
    pub spikes: Spikes,
    /// Time since the worst spike, if any.
    pub since_worst: Option<Duration>,
    /// Top causes over the watch (description, late windows, share of late ns).
    pub top_causes: Vec<(String, u64, f64)>,
    /// The kernel's counters.
    pub counters: Counters,
}

/// A running watch.
pub struct Session {
    side: Box<dyn KernelSide>,
    opts: SessionOptions,
    started: Instant,
    start_mono_ns: u64,
    started_at: String,
    system: SystemInfo,
    rt_kernel: bool,
    command: Option<Started>,
    own_pid: i32,
    names: BTreeMap<i32, String>,
    last_scan: Instant,
    at_last_snapshot: Counts,
    late_at_last_snapshot: u64,
    last_snapshot: Instant,
    latest: Counts,
    /// The histogram counts of threads that ended, taken out of the
    /// kernel side (its map is bounded) by [`Session::rescan`].
    ended_counts: Vec<(u32, u32, u32, u64)>,
    /// Those threads, oldest first.
    ended: VecDeque<u32>,
    /// The counts of ended threads folded together ([`ENDED_TID`]): kind
    /// and bucket to count.
    folded: BTreeMap<(u32, u32), u64>,
    kept_worst: Vec<Kept>,
    kept_recent: std::collections::VecDeque<Kept>,
    kept_baseline: std::collections::VecDeque<Kept>,
    cause_totals: BTreeMap<(String, String), (u64, u64)>,
    other_causes: (u64, u64),
    tasks: BTreeMap<i32, TaskLive>,
    snapshots: Vec<Snapshot>,
    interval_categories: BTreeMap<String, u64>,
    counts: WindowCounts,
    irqs: IrqNames,
    comms: CommCache,
    notes: BTreeSet<String>,
    worst: Option<(u64, u64)>,
}

fn monotonic_ns() -> u64 {
    latlab_rt::clock::monotonic_ns()
}

/// CPU time (user + system) and peak RSS (KiB) of this process.
pub fn own_usage() -> (Duration, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime) + tv(u.ru_stime), u.ru_maxrss as u64)
}

impl Session {
    /// Starts the kernel side (`opts.backend`), the command (if any) and
    /// watches the selected tasks.
    pub fn start(opts: SessionOptions) -> Result<Session> {
        select::validate(&opts.selection)?;
        let settings = Settings {
            threshold_ns: opts.threshold_ns,
            follow_forks: opts.selection.follows_forks(),
            max_windows_per_sec: opts.max_windows_per_sec,
            baseline_every: opts.baseline_every,
            probe_reads: false,
        };
        let side: Box<dyn KernelSide> = match opts.backend {
            Backend::Bpf => Box::new(BpfSide::load(&settings)?),
            Backend::Tracefs => Box::new(TracefsSide::start(&settings)?),
        };
        let system = SystemInfo::gather();
        let rt_kernel = system.preemption_model.as_deref() == Some("rt")
            || system.kernel_version.contains("PREEMPT_RT");
        let mut session = Session {
            side,
            started: Instant::now(),
            start_mono_ns: monotonic_ns(),
            started_at: latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()),
            system,
            rt_kernel,
            command: None,
            own_pid: std::process::id() as i32,
            names: BTreeMap::new(),
            last_scan: Instant::now(),
            at_last_snapshot: Counts::new(),
            late_at_last_snapshot: 0,
            last_snapshot: Instant::now(),
            latest: Counts::new(),
            ended_counts: Vec::new(),
            ended: VecDeque::new(),
            folded: BTreeMap::new(),
            kept_worst: Vec::new(),
            kept_recent: Default::default(),
            kept_baseline: Default::default(),
            cause_totals: BTreeMap::new(),
            other_causes: (0, 0),
            tasks: BTreeMap::new(),
            snapshots: Vec::new(),
            interval_categories: BTreeMap::new(),
            counts: WindowCounts::default(),
            irqs: IrqNames::read(),
            comms: CommCache::default(),
            notes: BTreeSet::new(),
            worst: None,
            opts,
        };
        if let Selection::Command(argv) = &session.opts.selection {
            let mut started = select::spawn_gated(argv)?;
            session.side.watch(started.child.id())?;
            started.release();
            session.command = Some(started);
        }
        session.rescan()?;
        Ok(session)
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.opts
    }

    /// Time watched so far.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The threads watched now, with their names.
    pub fn watched(&self) -> BTreeMap<i32, String> {
        self.side
            .watched()
            .into_iter()
            .map(|t| {
                let t = t as i32;
                (
                    t,
                    self.names
                        .get(&t)
                        .cloned()
                        .unwrap_or_else(|| format!("{t}")),
                )
            })
            .collect()
    }

    /// Adds the tasks that match now, forgets the ones that ended (or, for
    /// `--comm`/`--rt`, no longer match).
    pub fn rescan(&mut self) -> Result<()> {
        self.last_scan = Instant::now();
        let command = self.command.as_ref().map(|c| c.child.id() as i32);
        let now = select::scan(&self.opts.selection, self.own_pid, command);
        let listed = self.side.watched();
        self.side.resync(&listed);
        let watched: BTreeSet<u32> = listed.into_iter().collect();
        for (&tid, comm) in &now {
            self.names.insert(tid, comm.clone());
            if !watched.contains(&(tid as u32)) {
                self.side.watch(tid as u32)?;
            }
        }
        let strict = matches!(self.opts.selection, Selection::Comms(_) | Selection::Rt);
        let mut ended = Vec::new();
        for tid in watched {
            let t = tid as i32;
            let alive = std::path::Path::new(&format!("/proc/{t}")).exists();
            if !alive {
                self.side.unwatch(tid);
                ended.push(tid);
            } else if strict && !now.contains_key(&t) {
                self.side.unwatch(tid);
            } else if !self.names.contains_key(&t) {
                if let Some(c) = self.comms.get(t) {
                    self.names.insert(t, c);
                }
            }
        }
        // The kernel's histogram map is bounded: threads that ended give
        // their buckets back, and their counts live on here.
        let taken = self.side.take_histograms(&ended);
        let had: BTreeSet<u32> = taken.iter().map(|r| r.0).collect();
        self.ended
            .extend(ended.into_iter().filter(|t| had.contains(t)));
        self.ended_counts.extend(taken);
        while self.ended.len() > KEEP_ENDED {
            if let Some(oldest) = self.ended.pop_front() {
                self.fold_ended(oldest);
            }
        }
        Ok(())
    }

    /// Folds the counts, late windows and worst of `tid` (a thread that
    /// ended) into [`ENDED_TID`].
    fn fold_ended(&mut self, tid: u32) {
        let folded = &mut self.folded;
        self.ended_counts.retain(|&(pid, kind, bucket, n)| {
            if pid != tid {
                return true;
            }
            *folded.entry((kind, bucket)).or_default() += n;
            false
        });
        let t = tid as i32;
        histograms::fold(&mut self.latest, t, ENDED_TID);
        histograms::fold(&mut self.at_last_snapshot, t, ENDED_TID);
        if let Some(live) = self.tasks.remove(&t) {
            let into = self.tasks.entry(ENDED_TID).or_default();
            into.late += live.late;
            if live
                .worst
                .is_some_and(|(w, _)| into.worst.is_none_or(|(i, _)| w > i))
            {
                into.worst = live.worst;
            }
        }
        self.names.remove(&t);
        self.names.insert(ENDED_TID, ENDED_NAME.to_string());
    }

    /// The watched command's exit, once it ended.
    pub fn command_exit(&mut self) -> Option<std::process::ExitStatus> {
        self.command.as_mut()?.child.try_wait().ok().flatten()
    }

    /// Ends the command latlab started, if it still runs: SIGTERM, then
    /// SIGKILL after two seconds.
    pub fn stop_command(&mut self) {
        let Some(c) = self.command.as_mut() else {
            return;
        };
        if c.child.try_wait().ok().flatten().is_some() {
            return;
        }
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(c.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if c.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.child.kill();
        let _ = c.child.wait();
    }

    /// Detaches the kernel side from the events (`false`) or attaches it
    /// again (`true`), only the programs named in `only` when it is not
    /// empty; the BPF side only. Wake-ups while detached are not
    /// measured: for measuring watch's own cost in one run
    /// (bench/watch-interleaved.py --toggle), not for a watch whose figures
    /// count.
    pub fn set_attached(&mut self, on: bool, only: &[String]) -> Result<()> {
        self.side.set_attached(on, only)
    }

    /// Waits up to `timeout` for windows, handles those that came, rescans
    /// the selection when due. Returns the windows handled.
    pub fn poll(&mut self, timeout: Duration) -> Result<usize> {
        let n = self.take_what_came(timeout)?;
        if self.last_scan.elapsed() >= RESCAN {
            self.rescan()?;
        }
        Ok(n)
    }

    /// Waits up to `timeout`, then handles the windows that came (the
    /// tracefs side first reads and feeds every event up to now).
    fn take_what_came(&mut self, timeout: Duration) -> Result<usize> {
        self.side.wait(timeout)?;
        let mut n = 0;
        while let Some(w) = self.side.next_window() {
            self.take_window(w?);
            n += 1;
        }
        Ok(n)
    }

    fn since_start(&self, mono_ns: u64) -> u64 {
        mono_ns.saturating_sub(self.start_mono_ns)
    }

    fn take_window(&mut self, raw: RawWindow) {
        let at_ns = self.since_start(raw.head.switch_at);
        let h = raw.head;
        self.names.entry(h.pid).or_insert_with(|| comm_str(&h.comm));
        let mut names = Names::new();
        let (window, truncated) = to_window(&raw, &mut names, &self.irqs, &mut self.comms);
        if truncated {
            self.counts.truncated += 1;
        }
        if !h.late {
            self.counts.baseline += 1;
            self.kept_baseline.push_back(Kept { raw, at_ns });
            if self.kept_baseline.len() > KEEP_BASELINE {
                self.kept_baseline.pop_front();
            }
            return;
        }
        self.counts.late += 1;
        let lat = h.latency();
        let task = self.tasks.entry(h.pid).or_default();
        task.late += 1;
        if task.worst.is_none_or(|(w, _)| lat > w) {
            task.worst = Some((lat, at_ns));
        }
        if self.worst.is_none_or(|(w, _)| lat > w) {
            self.worst = Some((lat, at_ns));
        }
        // This window's causes, by explain's analysis of it alone.
        let a =
            latlab_explain::analyze_windows(std::slice::from_ref(&window), &names, self.rt_kernel);
        if let Some(top) = a.causes.first() {
            *self
                .interval_categories
                .entry(top.cause.category().to_string())
                .or_default() += 1;
        }
        for c in &a.causes {
            // The ranked cause names a task by its command (grouped), so
            // the totals do not grow with every short-lived pid.
            let key = (c.cause.category().to_string(), c.cause.describe());
            if self.cause_totals.len() >= MAX_CAUSES && !self.cause_totals.contains_key(&key) {
                self.other_causes.0 += 1;
                self.other_causes.1 += c.late_ns;
                continue;
            }
            let t = self.cause_totals.entry(key).or_default();
            t.0 += 1;
            t.1 += c.late_ns;
        }
        let kept = Kept { raw, at_ns };
        self.kept_recent.push_back(kept.clone());
        if self.kept_recent.len() > KEEP_RECENT {
            self.kept_recent.pop_front();
        }
        self.kept_worst.push(kept);
        if self.kept_worst.len() > KEEP_WORST * 2 {
            self.kept_worst
                .sort_by_key(|k| std::cmp::Reverse(k.raw.head.latency()));
            self.kept_worst.truncate(KEEP_WORST);
        }
    }

    /// Explain's ranked analysis of the windows kept: causes, categories,
    /// and the reports of the worst windows (with when they happened).
    pub fn analysis(&mut self) -> (Vec<CauseRow>, Vec<CategoryRow>, Vec<WatchedWindow>, u64) {
        let mut chosen: Vec<&Kept> = Vec::new();
        let mut seen = BTreeSet::new();
        for k in self
            .kept_worst
            .iter()
            .chain(self.kept_recent.iter())
            .chain(self.kept_baseline.iter())
        {
            if seen.insert((k.raw.head.pid, k.raw.head.switch_at)) {
                chosen.push(k);
            }
        }
        let mut names = Names::new();
        let mut windows = Vec::with_capacity(chosen.len());
        let mut complete = Vec::with_capacity(chosen.len());
        for k in &chosen {
            let (w, cut) = to_window(&k.raw, &mut names, &self.irqs, &mut self.comms);
            windows.push(w);
            complete.push(!cut);
        }
        let a = latlab_explain::analyze_windows(&windows, &names, self.rt_kernel);
        // a.windows holds the late ones in the order of `windows`.
        let late_at: Vec<(u64, bool)> = chosen
            .iter()
            .zip(&complete)
            .filter(|(k, _)| k.raw.head.late)
            .map(|(k, &c)| (k.at_ns, c))
            .collect();
        let mut reports: Vec<WatchedWindow> = a
            .windows
            .into_iter()
            .zip(late_at)
            .map(|(window, (at_ns, complete))| WatchedWindow {
                at_ns,
                complete,
                window,
            })
            .collect();
        reports.sort_by_key(|w| std::cmp::Reverse(w.window.latency_ns));
        reports.truncate(KEEP_WORST);
        (a.causes, a.categories, reports, windows.len() as u64)
    }

    /// Reads the kernel's histograms now.
    fn read_counts(&mut self) -> &Counts {
        let mut rows = self.side.histogram_counts();
        rows.extend_from_slice(&self.ended_counts);
        rows.extend(
            self.folded
                .iter()
                .map(|(&(kind, bucket), &n)| (ENDED_TID as u32, kind, bucket, n)),
        );
        self.latest = histograms::group(&rows);
        &self.latest
    }

    /// Whether an interval has passed since the last snapshot.
    pub fn snapshot_due(&self) -> bool {
        self.last_snapshot.elapsed() >= self.opts.interval
    }

    /// Ends the current interval: its snapshot (also kept in the result).
    pub fn snapshot(&mut self) -> Snapshot {
        let interval = self.last_snapshot.elapsed();
        self.last_snapshot = Instant::now();
        self.read_counts();
        let d = histograms::delta(&self.latest, &self.at_last_snapshot);
        let mut all = Histogram::new();
        for ((_, kind), b) in &d {
            if *kind != LatencyKind::Irq {
                all.merge(&histograms::histogram(b));
            }
        }
        let late_total = self.side.counters().late;
        let snap = Snapshot {
            at_ns: self.started.elapsed().as_nanos() as u64,
            interval_ns: interval.as_nanos() as u64,
            samples: all.count(),
            worst_ns: all.max().unwrap_or(0),
            p99_ns: all.value_at_percentile(99.0).unwrap_or(0),
            late: late_total.saturating_sub(self.late_at_last_snapshot),
            by_category: std::mem::take(&mut self.interval_categories)
                .into_iter()
                .collect(),
        };
        self.late_at_last_snapshot = late_total;
        self.at_last_snapshot = self.latest.clone();
        self.snapshots.push(snap.clone());
        if self.snapshots.len() > MAX_SNAPSHOTS {
            self.snapshots = merge_pairs(&self.snapshots);
        }
        snap
    }

    /// Snapshots taken so far (each interval, and the last one `finish` takes).
    pub fn snapshots_taken(&self) -> usize {
        self.snapshots.len()
    }

    /// The history document of a snapshot.
    pub fn snapshot_document(&self, snap: &Snapshot) -> SnapshotDocument {
        SnapshotDocument {
            schema: SNAPSHOT_SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            id: None,
            started_at: latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()),
            watch_started_at: self.started_at.clone(),
            selection: self.opts.selection.describe(),
            system: self.system.clone(),
            overall: Overall {
                latency: latlab_measure::stats::Summary {
                    count: snap.samples,
                    max: snap.worst_ns,
                    p99: snap.p99_ns,
                    ..Default::default()
                },
            },
            snapshot: snap.clone(),
        }
    }

    fn spikes(&self) -> Spikes {
        let count = self.side.counters().late;
        let (per_hour, lo, hi) =
            crate::stats::rate_per_hour(count, self.started.elapsed().as_nanos() as u64);
        let (worst_ns, worst_at_ns) = self.worst.unwrap_or((0, 0));
        Spikes {
            threshold_ns: self.opts.threshold_ns,
            count,
            per_hour,
            per_hour_low: lo,
            per_hour_high: hi,
            worst_ns,
            worst_at_ns,
        }
    }

    /// Cause totals, most late latency first.
    fn totals(&self) -> Vec<CauseTotal> {
        let mut v: Vec<CauseTotal> = self
            .cause_totals
            .iter()
            .map(|((category, description), &(n, ns))| CauseTotal {
                category: category.clone(),
                description: description.clone(),
                late_windows: n,
                late_ns: ns,
            })
            .collect();
        if self.other_causes.0 > 0 {
            v.push(CauseTotal {
                category: "other".into(),
                description: format!("causes past the first {MAX_CAUSES}"),
                late_windows: self.other_causes.0,
                late_ns: self.other_causes.1,
            });
        }
        v.sort_by(|a, b| {
            b.late_ns
                .cmp(&a.late_ns)
                .then(a.description.cmp(&b.description))
        });
        v
    }

    /// The live figures (reads the kernel's histograms).
    pub fn live(&mut self) -> Live {
        self.read_counts();
        let latest_interval = histograms::delta(&self.latest, &self.at_last_snapshot);
        let mut tasks: BTreeMap<i32, LiveTask> = BTreeMap::new();
        for ((tid, kind), b) in &self.latest {
            let h = histograms::histogram(b);
            let t = tasks.entry(*tid).or_insert_with(|| LiveTask {
                tid: *tid,
                comm: self
                    .names
                    .get(tid)
                    .cloned()
                    .unwrap_or_else(|| tid.to_string()),
                samples: 0,
                current_ns: 0,
                p99_ns: 0,
                worst_ns: 0,
                irq_worst_ns: None,
                late: self.tasks.get(tid).map_or(0, |t| t.late),
            });
            if *kind == LatencyKind::Irq {
                t.irq_worst_ns = h.max();
                continue;
            }
            t.samples += h.count();
            t.p99_ns = t.p99_ns.max(h.value_at_percentile(99.0).unwrap_or(0));
            let exact = self.tasks.get(tid).and_then(|t| t.worst).map_or(0, |w| w.0);
            t.worst_ns = t.worst_ns.max(h.max().unwrap_or(0)).max(exact);
            if let Some(cur) = latest_interval.get(&(*tid, *kind)) {
                t.current_ns = t
                    .current_ns
                    .max(histograms::histogram(cur).max().unwrap_or(0));
            }
        }
        let mut tasks: Vec<LiveTask> = tasks.into_values().collect();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.worst_ns));
        let totals = self.totals();
        let all_ns: u64 = totals.iter().map(|t| t.late_ns).sum();
        let top_causes = totals
            .iter()
            .take(3)
            .map(|t| {
                (
                    t.description.clone(),
                    t.late_windows,
                    if all_ns > 0 {
                        t.late_ns as f64 / all_ns as f64
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        let elapsed = self.started.elapsed();
        Live {
            elapsed,
            tasks,
            spikes: self.spikes(),
            since_worst: self
                .worst
                .map(|(_, at)| elapsed.saturating_sub(Duration::from_nanos(at))),
            top_causes,
            counters: self.side.counters(),
        }
    }

    /// What watching cost so far.
    pub fn overhead(&self) -> Overhead {
        let (cpu, rss) = own_usage();
        let (bpf, runs) = self.side.kernel_time();
        let hours = self.started.elapsed().as_secs_f64() / 3600.0;
        let total = cpu + bpf;
        Overhead {
            process_cpu_ns: cpu.as_nanos() as u64,
            bpf_ns: bpf.as_nanos() as u64,
            bpf_runs: runs,
            cpu_ns_per_hour: if hours > 0.0 {
                (total.as_nanos() as f64 / hours) as u64
            } else {
                0
            },
            max_rss_kib: rss,
        }
    }

    /// The per-task histograms so far, by kind.
    pub fn task_histograms(&mut self) -> Vec<(i32, String, LatencyKind, Histogram)> {
        self.read_counts();
        self.latest
            .iter()
            .map(|((tid, kind), b)| {
                (
                    *tid,
                    self.names
                        .get(tid)
                        .cloned()
                        .unwrap_or_else(|| tid.to_string()),
                    *kind,
                    histograms::histogram(b),
                )
            })
            .collect()
    }

    /// The result: reads what is left, ends the current interval (a last
    /// snapshot, joined to the one before when under half a second) and
    /// gathers everything.
    pub fn finish(&mut self, stopped_by: &str) -> WatchDocument {
        // What came since the last poll (for the tracefs side, the events
        // it has not read yet: the command's last ~100 ms), then the last
        // interval, joined to the one before when shorter than half a
        // second (no sliver in the long-term plot; its counts are kept).
        if let Err(e) = self.take_what_came(Duration::ZERO) {
            self.notes
                .insert(format!("the last events could not be read at the end: {e}"));
        }
        let short = self.last_snapshot.elapsed() < Duration::from_millis(500);
        self.snapshot();
        let n = self.snapshots.len();
        if short && n >= 2 {
            let joined = merge_pairs(&self.snapshots[n - 2..]);
            self.snapshots.truncate(n - 2);
            self.snapshots.extend(joined);
        }
        let latest = self.latest.clone();
        let mut overall = Histogram::new();
        let mut tasks: BTreeMap<i32, TaskResult> = BTreeMap::new();
        for ((tid, kind), b) in &latest {
            let h = histograms::histogram(b);
            if *kind != LatencyKind::Irq {
                overall.merge(&h);
            }
            let live = self.tasks.get(tid).cloned().unwrap_or_default();
            let t = tasks.entry(*tid).or_insert_with(|| TaskResult {
                tid: *tid,
                comm: self
                    .names
                    .get(tid)
                    .cloned()
                    .unwrap_or_else(|| tid.to_string()),
                thread: None,
                irq: None,
                wakeup: None,
                late_windows: live.late,
                worst_ns: live.worst.map(|w| w.0),
                worst_at_ns: live.worst.map(|w| w.1),
            });
            let result = KindResult {
                summary: histograms::summary(&h),
                unsupported_percentiles: crate::stats::unsupported(h.count()),
                histogram: h,
            };
            match kind {
                LatencyKind::Thread => t.thread = Some(result),
                LatencyKind::Irq => t.irq = Some(result),
                LatencyKind::Wakeup => t.wakeup = Some(result),
            }
        }
        let counters = self.side.counters();
        self.counts.throttled = counters.throttled;
        self.counts.lost = counters.lost;
        self.counts.events_lost = counters.events_lost;
        let (causes, categories, worst_windows, analysed) = self.analysis();
        self.counts.analysed = analysed;
        let mut notes: Vec<String> = self.notes.iter().cloned().collect();
        notes.extend(self.side.notes());
        if counters.events_lost > 0 {
            notes.push(format!(
                "{} trace events were lost (the tracefs ring buffers overran: the machine was too busy for watch's reader); wake-ups around them may be missing",
                counters.events_lost
            ));
        }
        if counters.hist_full > 0 {
            notes.push(format!(
                "{} samples were not counted: the kernel's histogram map was full (65536 buckets)",
                counters.hist_full
            ));
        }
        if counters.shared > 0 {
            notes.push(format!(
                "{} wake-ups were not measured: another watched thread whose id is equal modulo 65536 was woken at the same time (they share a slot of the kernel's pending table)",
                counters.shared
            ));
        }
        if counters.throttled > 0 {
            notes.push(format!(
                "{} late wake-ups were counted but their windows not sent (over {} per second and CPU); the causes are ranked from the ones sent",
                counters.throttled, self.opts.max_windows_per_sec
            ));
        }
        if counters.lost > 0 {
            notes.push(format!(
                "{} windows did not fit into the ring buffer (user space fell behind)",
                counters.lost
            ));
        }
        if self.counts.truncated > 0 {
            notes.push(format!(
                "{} windows began before their CPU's ring of 512 events reached back: explained from the events that remained",
                self.counts.truncated
            ));
        }
        let n = overall.count();
        for claim in crate::stats::unsupported(n) {
            notes.push(format!(
                "overall: {claim}: that percentile is not a measured figure"
            ));
        }
        if n == 0 {
            notes.push(
                "no wake-up of a watched task was seen: check the selection (`latlab watch --pid`, `--comm`, `--rt`)"
                    .into(),
            );
        }
        let spikes = self.spikes();
        WatchDocument {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            id: None,
            latlab_version: env!("CARGO_PKG_VERSION").into(),
            started_at: self.started_at.clone(),
            duration_ns: self.started.elapsed().as_nanos() as u64,
            stopped_by: stopped_by.to_string(),
            system: self.system.clone(),
            settings: WatchSettings {
                selection: self.opts.selection.describe(),
                backend: self.side.backend(),
                threshold_ns: self.opts.threshold_ns,
                interval_ns: self.opts.interval.as_nanos() as u64,
                max_windows_per_sec: self.opts.max_windows_per_sec,
                baseline_every: self.opts.baseline_every,
                path_reads: self.side.path_reads(),
            },
            overall: Overall {
                latency: histograms::summary(&overall),
            },
            tasks: tasks.into_values().collect(),
            spikes,
            windows_seen: self.counts.clone(),
            causes,
            categories,
            cause_totals: self.totals(),
            worst_windows,
            snapshots: self.snapshots.clone(),
            overhead: self.overhead(),
            notes,
        }
    }

    /// The kernel side's counters.
    pub fn counters(&self) -> Counters {
        self.side.counters()
    }

    /// Cause totals so far (for metrics).
    pub fn cause_totals(&self) -> Vec<CauseTotal> {
        self.totals()
    }

    /// Reports of windows: re-exported for the live view.
    pub fn worst_reports(&mut self) -> Vec<WindowReport> {
        self.analysis().2.into_iter().map(|w| w.window).collect()
    }
}

/// Neighbouring snapshots merged: half as many, each twice as long.
pub fn merge_pairs(s: &[Snapshot]) -> Vec<Snapshot> {
    s.chunks(2)
        .map(|c| {
            let mut m = c[0].clone();
            if let Some(b) = c.get(1) {
                m.at_ns = b.at_ns;
                m.interval_ns += b.interval_ns;
                m.samples += b.samples;
                m.worst_ns = m.worst_ns.max(b.worst_ns);
                m.p99_ns = m.p99_ns.max(b.p99_ns);
                m.late += b.late;
                let mut cats: BTreeMap<String, u64> = m.by_category.into_iter().collect();
                for (k, v) in &b.by_category {
                    *cats.entry(k.clone()).or_default() += v;
                }
                m.by_category = cats.into_iter().collect();
            }
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_snapshots_keep_the_worst_and_the_sums() {
        let s = |at, worst, late| Snapshot {
            at_ns: at,
            interval_ns: 60,
            samples: 10,
            worst_ns: worst,
            p99_ns: worst / 2,
            late,
            by_category: vec![("softirq".into(), late)],
        };
        let m = merge_pairs(&[s(60, 5, 1), s(120, 9, 2), s(180, 3, 0)]);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].at_ns, m[0].interval_ns, m[0].worst_ns, m[0].late),
            (120, 120, 9, 3)
        );
        assert_eq!(m[0].by_category, vec![("softirq".to_string(), 3)]);
        assert_eq!(m[1].at_ns, 180);
    }
}
