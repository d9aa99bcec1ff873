//! A running watch: a kernel side ([`KernelSide`]: BPF, or tracefs with
//! `--tracefs`) started, the tasks chosen, windows turned
//! into explanations as they arrive, a snapshot every interval, and the
//! final [`WatchDocument`]. Memory is bounded by the threads alive, not by
//! the threads seen, however long it runs: histograms are sparse (the
//! buckets in use, [`SparseHistogram`]; the kernel's map holds at most
//! 65 536), the kernel's set of watched threads loses a thread when it ends,
//! and at every rescan the buckets of threads it no longer watches come to
//! user space, where the latest [`KEEP_ENDED`] keep a row each and older
//! ones are folded into one task ([`ENDED_TID`]) whose size does not grow
//! with their number; what is known per thread is kept for the threads
//! alive. The windows kept for the ranked analysis are the [`KEEP_WORST`]
//! worst and the [`KEEP_RECENT`] latest, cause totals are capped at
//! [`MAX_CAUSES`], and snapshots are merged pairwise past [`MAX_SNAPSHOTS`].
//!
//! Whose latency is ranked: a late window of a thread below the real-time
//! priorities is left out of the causes once the watch has seen a
//! real-time thread (counted, [`WindowCounts::not_real_time`]), and the
//! part of latlab's own threads in a window is watch's cost, never a cause
//! ([`crate::own`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use latlab_explain::model::Names;
use latlab_explain::{CategoryRow, Cause, CauseRow, WindowReport};
use latlab_rt::sysinfo::SystemInfo;

use crate::document::*;
use crate::error::Result;
use crate::functions::FunctionNames;
use crate::histograms::{self, Counts, LatencyKind, SparseHistogram};
use crate::irqnames::IrqNames;
use crate::loader::{BpfSide, Counters, Settings};
use crate::own::{self, OwnThreads};
use crate::records::{comm_str, RawWindow};
use crate::select::{self, Policy, Selection, Started, Tasks};
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
/// How often while threads end fast: when a rescan took more than
/// [`BUSY_ROWS`] buckets of ended threads out of the kernel's map (65 536
/// at most), the next comes after this, before the map fills.
pub const RESCAN_BUSY: Duration = Duration::from_millis(200);
/// See [`RESCAN_BUSY`].
pub const BUSY_ROWS: usize = 8192;
/// How long one [`Session::poll`] handles windows at most.
pub const WINDOWS_BUDGET: Duration = Duration::from_millis(250);
/// Threads that ended (or left the selection) whose counts stay apart in
/// the result (a task each), at most; the counts of older ones are folded
/// into one task, [`ENDED_TID`], so that a watch of days over threads that
/// come and go stays bounded by the threads alive.
pub const KEEP_ENDED: usize = 64;
/// A kernel priority below this is a real-time one (SCHED_FIFO/RR: 0-98,
/// SCHED_DEADLINE: -1).
pub const REAL_TIME_PRIO: i32 = 100;
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

/// What is known of a thread: its name and, once seen alive, its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its name.
    pub comm: String,
    /// Its scheduling policy as last seen (`None`: never seen alive).
    pub policy: Option<Policy>,
    /// Its real-time priority (1-99 for SCHED_FIFO/RR).
    pub rt_priority: u32,
}

impl ThreadInfo {
    fn of(t: &select::Thread) -> ThreadInfo {
        ThreadInfo {
            comm: t.comm.clone(),
            policy: t.policy(),
            rt_priority: t.rt_priority,
        }
    }

    /// `FIFO 95`, `OTHER`, or `-` when unknown.
    pub fn policy_label(&self) -> String {
        self.policy
            .map_or_else(|| "-".into(), |p| p.label(self.rt_priority))
    }
}

/// A thread that ended (or left the selection): its counts, taken out of
/// the kernel side, and what was known of it.
#[derive(Debug, Clone)]
struct Ended {
    tid: u32,
    info: Option<ThreadInfo>,
    /// `(kind, bucket, count)`.
    rows: Vec<(u32, u32, u64)>,
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
    /// Its policy and real-time priority (`FIFO 95`, `OTHER`; `-` unknown).
    pub policy: String,
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
    started_unix_s: f64,
    system: SystemInfo,
    rt_kernel: bool,
    command: Option<Started>,
    own_pid: i32,
    /// latlab's own threads: never a cause.
    own: OwnThreads,
    /// The threads alive the kernel side watches (or counts for).
    threads: BTreeMap<i32, ThreadInfo>,
    last_scan: Instant,
    /// When the next rescan is due after the last ([`RESCAN`], or
    /// [`RESCAN_BUSY`] while threads end fast).
    rescan_every: Duration,
    at_last_snapshot: Counts,
    late_at_last_snapshot: u64,
    last_snapshot: Instant,
    latest: Counts,
    /// The latest [`KEEP_ENDED`] threads that ended, oldest first, with
    /// their counts taken out of the kernel side (its map is bounded) by
    /// [`Session::rescan`].
    ended: VecDeque<Ended>,
    /// The counts of older ended threads folded together ([`ENDED_TID`]):
    /// kind and bucket to count.
    folded: BTreeMap<(u32, u32), u64>,
    /// A real-time thread was watched (or sent a window): from then on the
    /// late windows of the other threads are not ranked.
    real_time_seen: bool,
    kept_worst: Vec<Kept>,
    kept_recent: std::collections::VecDeque<Kept>,
    kept_baseline: std::collections::VecDeque<Kept>,
    cause_totals: BTreeMap<(String, String), (u64, u64)>,
    other_causes: (u64, u64),
    /// Late windows of the ranked threads in which latlab's own threads
    /// took part, and their latency there (ns).
    own_late: (u64, u64),
    tasks: BTreeMap<i32, TaskLive>,
    snapshots: Vec<Snapshot>,
    interval_categories: BTreeMap<String, u64>,
    counts: WindowCounts,
    irqs: IrqNames,
    comms: CommCache,
    functions: FunctionNames,
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
            rt_only: opts.selection.kernel_filters_real_time(),
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
            started_unix_s: latlab_rt::clock::unix_time_s(),
            system,
            rt_kernel,
            command: None,
            own_pid: std::process::id() as i32,
            own: OwnThreads::default(),
            threads: BTreeMap::new(),
            last_scan: Instant::now(),
            rescan_every: RESCAN,
            at_last_snapshot: Counts::new(),
            late_at_last_snapshot: 0,
            last_snapshot: Instant::now(),
            latest: Counts::new(),
            ended: VecDeque::new(),
            folded: BTreeMap::new(),
            real_time_seen: false,
            kept_worst: Vec::new(),
            kept_recent: Default::default(),
            kept_baseline: Default::default(),
            cause_totals: BTreeMap::new(),
            other_causes: (0, 0),
            own_late: (0, 0),
            tasks: BTreeMap::new(),
            snapshots: Vec::new(),
            interval_categories: BTreeMap::new(),
            counts: WindowCounts::default(),
            irqs: IrqNames::read(),
            comms: CommCache::default(),
            functions: FunctionNames::new(),
            notes: BTreeSet::new(),
            worst: None,
            opts,
        };
        if let Tasks::Command(argv) = &session.opts.selection.tasks {
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
                    self.threads
                        .get(&t)
                        .map_or_else(|| format!("{t}"), |i| i.comm.clone()),
                )
            })
            .collect()
    }

    /// What is known of the threads alive the kernel side watches.
    pub fn threads(&self) -> &BTreeMap<i32, ThreadInfo> {
        &self.threads
    }

    /// Threads watched now that the selection counts: with `--rt`, those
    /// at a real-time policy as last seen. Zero: nothing matched (yet).
    pub fn matched(&self) -> usize {
        let watched: BTreeSet<i32> = self.side.watched().into_iter().map(|t| t as i32).collect();
        self.threads
            .iter()
            .filter(|(t, _)| watched.contains(t))
            .filter(|(_, i)| {
                !self.opts.selection.real_time || i.policy.is_some_and(Policy::real_time)
            })
            .count()
    }

    /// Starts the watch's clock afresh (after [`Session::matched`] was
    /// waited for): its duration, snapshots and times count from now.
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
        self.start_mono_ns = monotonic_ns();
        self.started_unix_s = latlab_rt::clock::unix_time_s();
        self.last_snapshot = Instant::now();
    }

    /// Adds the tasks that match now, forgets the ones that ended (or, for
    /// `--comm`/`--rt` alone, no longer match), and takes the counts of
    /// every thread the kernel side no longer watches out of it.
    pub fn rescan(&mut self) -> Result<()> {
        self.last_scan = Instant::now();
        let command = self.command.as_ref().map(|c| c.child.id() as i32);
        self.own.refresh(self.own_pid, command);
        let selected = select::scan(&self.opts.selection, self.own_pid, command);
        let listed = self.side.watched();
        self.side.resync(&listed);
        let listed: BTreeSet<u32> = listed.into_iter().collect();
        for (&tid, t) in &selected {
            if !listed.contains(&(tid as u32)) {
                // A thread id given again: the last thread that had it is gone.
                self.fold_ended_tid(tid as u32);
                self.side.watch(tid as u32)?;
            }
            self.threads.insert(tid, ThreadInfo::of(t));
        }
        let strict = self.opts.selection.strict();
        for &tid in &listed {
            let t = tid as i32;
            if selected.contains_key(&t) {
                continue;
            }
            match select::thread_by_id(t) {
                // Ended, its end not seen by the kernel side (or the thread
                // left the selection): let it go.
                None => self.side.unwatch(tid),
                Some(_) if strict => self.side.unwatch(tid),
                // A thread the kernel added on fork: known from now on.
                Some(found) => {
                    if !self.threads.contains_key(&t) {
                        self.fold_ended_tid(tid);
                    }
                    self.threads.insert(t, ThreadInfo::of(&found));
                }
            }
        }
        // The kernel side's buckets of threads it no longer watches (they
        // ended, or left the selection) come here: its map holds the
        // threads alive. Read the watched set after the buckets: a thread
        // with buckets then was watched before they were read.
        let rows = self.side.histogram_counts();
        let still: BTreeSet<u32> = self.side.watched().into_iter().collect();
        let gone_rows: Vec<(u32, u32, u32, u64)> = rows
            .iter()
            .filter(|r| !still.contains(&r.0))
            .copied()
            .collect();
        self.rescan_every = if gone_rows.len() > BUSY_ROWS {
            RESCAN_BUSY
        } else {
            RESCAN
        };
        if !gone_rows.is_empty() {
            let mut by_tid: BTreeMap<u32, Vec<(u32, u32, u64)>> = BTreeMap::new();
            for (pid, kind, bucket, n) in self.side.take_rows(&gone_rows) {
                by_tid.entry(pid).or_default().push((kind, bucket, n));
            }
            for (tid, rows) in by_tid {
                // A thread measured though not in the set (a bit left over
                // by a race with user space's update of its word) is let
                // go too.
                self.side.unwatch(tid);
                self.fold_ended_tid(tid);
                let info = self.threads.remove(&(tid as i32));
                self.ended.push_back(Ended { tid, info, rows });
            }
        }
        self.threads.retain(|t, _| still.contains(&(*t as u32)));
        if !self.real_time_seen
            && self
                .threads
                .values()
                .any(|i| i.policy.is_some_and(Policy::real_time))
        {
            self.now_real_time();
        }
        while self.ended.len() > KEEP_ENDED {
            if let Some(oldest) = self.ended.pop_front() {
                self.fold_ended(oldest);
            }
        }
        Ok(())
    }

    /// Folds the thread that ended with id `tid`, if one is kept apart.
    fn fold_ended_tid(&mut self, tid: u32) {
        if let Some(i) = self.ended.iter().position(|e| e.tid == tid) {
            if let Some(e) = self.ended.remove(i) {
                self.fold_ended(e);
            }
        }
    }

    /// Folds the counts, late windows and worst of a thread that ended into
    /// [`ENDED_TID`].
    fn fold_ended(&mut self, e: Ended) {
        let t = e.tid as i32;
        for &(kind, bucket, n) in &e.rows {
            *self.folded.entry((kind, bucket)).or_default() += n;
            // What of it the last snapshot had counted moves with it, so
            // that the interval neither loses nor counts it twice.
            let Some(k) = LatencyKind::of(kind) else {
                continue;
            };
            let before = self
                .at_last_snapshot
                .get_mut(&(t, k))
                .and_then(|b| b.get_mut(&bucket))
                .map_or(0, |c| {
                    let moved = (*c).min(n);
                    *c -= moved;
                    moved
                });
            if before > 0 {
                *self
                    .at_last_snapshot
                    .entry((ENDED_TID, k))
                    .or_default()
                    .entry(bucket)
                    .or_default() += before;
            }
        }
        for kind in [LatencyKind::Thread, LatencyKind::Irq, LatencyKind::Wakeup] {
            if let Some(b) = self.at_last_snapshot.get_mut(&(t, kind)) {
                b.retain(|_, n| *n > 0);
                if b.is_empty() {
                    self.at_last_snapshot.remove(&(t, kind));
                }
            }
        }
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
        let n = self.take_what_came(timeout, Some(WINDOWS_BUDGET))?;
        if self.last_scan.elapsed() >= self.rescan_every {
            self.rescan()?;
        }
        Ok(n)
    }

    /// Waits up to `timeout`, then handles the windows that came (the
    /// tracefs side first reads and feeds every event up to now), for at
    /// most `budget`: windows that keep coming must not hold off the
    /// rescans, snapshots and the live view (those left wait in the ring
    /// buffer; when it is full, the kernel counts them as lost).
    fn take_what_came(&mut self, timeout: Duration, budget: Option<Duration>) -> Result<usize> {
        self.side.wait(timeout)?;
        let until = budget.map(|b| Instant::now() + b);
        let mut n = 0;
        while let Some(w) = self.side.next_window() {
            self.take_window(w?);
            n += 1;
            if until.is_some_and(|u| Instant::now() >= u) {
                break;
            }
        }
        Ok(n)
    }

    fn since_start(&self, mono_ns: u64) -> u64 {
        mono_ns.saturating_sub(self.start_mono_ns)
    }

    /// From now on only the late windows of real-time threads are ranked:
    /// those of the others kept so far are let go.
    fn now_real_time(&mut self) {
        self.real_time_seen = true;
        let real_time = |k: &Kept| k.raw.head.prio < REAL_TIME_PRIO;
        self.kept_worst.retain(real_time);
        self.kept_recent.retain(real_time);
        self.kept_baseline.retain(real_time);
        // Every late window ranked so far was of another thread.
        self.cause_totals.clear();
        self.other_causes = (0, 0);
        self.own_late = (0, 0);
        self.interval_categories.clear();
    }

    fn take_window(&mut self, raw: RawWindow) {
        let at_ns = self.since_start(raw.head.switch_at);
        let h = raw.head;
        // A thread not known yet (added on fork since the last rescan) is
        // named by its window; one that ended keeps what was known of it.
        if self.info(h.pid).is_none() {
            let info = select::thread_by_id(h.pid).map_or_else(
                || ThreadInfo {
                    comm: comm_str(&h.comm),
                    policy: None,
                    rt_priority: 0,
                },
                |t| ThreadInfo::of(&t),
            );
            self.threads.insert(h.pid, info);
        }
        let real_time = h.prio < REAL_TIME_PRIO;
        if real_time && !self.real_time_seen {
            self.now_real_time();
        }
        let ranked = real_time || !self.real_time_seen;
        if h.late {
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
            if !real_time {
                self.counts.not_real_time += 1;
            }
        } else {
            self.counts.baseline += 1;
        }
        if !ranked {
            return;
        }
        let mut names = Names::new();
        let (window, truncated) = to_window(
            &raw,
            &mut names,
            &self.irqs,
            &mut self.comms,
            &mut self.functions,
        );
        if truncated {
            self.counts.truncated += 1;
        }
        if !h.late {
            self.kept_baseline.push_back(Kept { raw, at_ns });
            if self.kept_baseline.len() > KEEP_BASELINE {
                self.kept_baseline.pop_front();
            }
            return;
        }
        // This window's causes, by explain's analysis of it alone, latlab's
        // own part set apart; grouped by command as explain ranks them, so
        // the totals do not grow with every short-lived pid.
        let a = own::analyze(
            std::slice::from_ref(&window),
            &names,
            self.rt_kernel,
            &self.own,
        );
        let own_ns = a.own_ns.first().copied().unwrap_or(0);
        if own_ns > 0 {
            self.own_late.0 += 1;
            self.own_late.1 += own_ns;
        }
        let mut grouped: BTreeMap<Cause, u64> = BTreeMap::new();
        for p in a.parts.first().into_iter().flatten() {
            *grouped.entry(p.cause.by_command().0).or_default() += p.ns;
        }
        // The largest cause (explain's order: latency, then the cause).
        if let Some((top, _)) = grouped
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        {
            *self
                .interval_categories
                .entry(top.category().to_string())
                .or_default() += 1;
        }
        for (cause, ns) in grouped {
            let key = (cause.category().to_string(), cause.describe());
            if self.cause_totals.len() >= MAX_CAUSES && !self.cause_totals.contains_key(&key) {
                self.other_causes.0 += 1;
                self.other_causes.1 += ns;
                continue;
            }
            let t = self.cause_totals.entry(key).or_default();
            t.0 += 1;
            t.1 += ns;
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
    /// and the reports of the worst windows (with when they happened),
    /// latlab's own part set apart.
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
            let (w, cut) = to_window(
                &k.raw,
                &mut names,
                &self.irqs,
                &mut self.comms,
                &mut self.functions,
            );
            windows.push(w);
            complete.push(!cut);
        }
        let a = own::analyze(&windows, &names, self.rt_kernel, &self.own);
        // a.reports holds the late ones in the order of `windows`.
        let late_at: Vec<(u64, bool)> = chosen
            .iter()
            .zip(&complete)
            .filter(|(k, _)| k.raw.head.late)
            .map(|(k, &c)| (k.at_ns, c))
            .collect();
        let mut reports: Vec<WatchedWindow> = a
            .reports
            .into_iter()
            .zip(late_at)
            .map(|((window, watch_ns), (at_ns, complete))| WatchedWindow {
                at_ns,
                complete,
                window,
                watch_ns,
            })
            .collect();
        reports.sort_by_key(|w| std::cmp::Reverse(w.window.latency_ns));
        reports.truncate(KEEP_WORST);
        (a.causes, a.categories, reports, windows.len() as u64)
    }

    /// Reads the kernel's histograms now, with the counts of the threads
    /// that ended.
    fn read_counts(&mut self) -> &Counts {
        let mut rows = self.side.histogram_counts();
        for e in &self.ended {
            rows.extend(
                e.rows
                    .iter()
                    .map(|&(kind, bucket, n)| (e.tid, kind, bucket, n)),
            );
        }
        rows.extend(
            self.folded
                .iter()
                .map(|(&(kind, bucket), &n)| (ENDED_TID as u32, kind, bucket, n)),
        );
        self.latest = histograms::group(&rows);
        &self.latest
    }

    /// What is known of task `tid` (alive, or ended and kept apart).
    fn info(&self, tid: i32) -> Option<&ThreadInfo> {
        self.threads.get(&tid).or_else(|| {
            self.ended
                .iter()
                .rev()
                .find(|e| e.tid as i32 == tid)
                .and_then(|e| e.info.as_ref())
        })
    }

    /// The name of task `tid` in tables.
    fn comm_of(&self, tid: i32) -> String {
        if tid == ENDED_TID {
            return ENDED_NAME.to_string();
        }
        self.info(tid)
            .map_or_else(|| tid.to_string(), |i| i.comm.clone())
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
        let mut all = SparseHistogram::default();
        for ((_, kind), b) in &d {
            if *kind != LatencyKind::Irq {
                all.add(&SparseHistogram::from_counts(b));
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
            watch_started_at: latlab_rt::clock::format_utc(self.started_unix_s),
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
            let h = SparseHistogram::from_counts(b);
            let t = tasks.entry(*tid).or_insert_with(|| LiveTask {
                tid: *tid,
                comm: self.comm_of(*tid),
                samples: 0,
                current_ns: 0,
                p99_ns: 0,
                worst_ns: 0,
                irq_worst_ns: None,
                late: self.tasks.get(tid).map_or(0, |t| t.late),
                policy: self
                    .info(*tid)
                    .map_or_else(|| "-".into(), ThreadInfo::policy_label),
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
                    .max(SparseHistogram::from_counts(cur).max().unwrap_or(0));
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
            own_late_windows: self.own_late.0,
            own_late_ns: self.own_late.1,
        }
    }

    /// The per-task histograms so far, by kind.
    pub fn task_histograms(&mut self) -> Vec<(i32, String, LatencyKind, SparseHistogram)> {
        self.read_counts();
        self.latest
            .iter()
            .map(|((tid, kind), b)| {
                (
                    *tid,
                    self.comm_of(*tid),
                    *kind,
                    SparseHistogram::from_counts(b),
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
        if let Err(e) = self.take_what_came(Duration::ZERO, None) {
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
        let mut overall = SparseHistogram::default();
        let mut tasks: BTreeMap<i32, TaskResult> = BTreeMap::new();
        for ((tid, kind), b) in &self.latest {
            let h = SparseHistogram::from_counts(b);
            if *kind != LatencyKind::Irq {
                overall.add(&h);
            }
            let live = self.tasks.get(tid).cloned().unwrap_or_default();
            let info = self.info(*tid).filter(|_| *tid != ENDED_TID);
            let t = tasks.entry(*tid).or_insert_with(|| TaskResult {
                tid: *tid,
                comm: self.comm_of(*tid),
                policy: info.and_then(|i| i.policy),
                rt_priority: info
                    .filter(|i| matches!(i.policy, Some(Policy::Fifo | Policy::Rr)))
                    .map(|i| i.rt_priority),
                thread: None,
                irq: None,
                wakeup: None,
                late_windows: live.late,
                worst_ns: live.worst.map(|w| w.0),
                worst_at_ns: live.worst.map(|w| w.1),
            });
            let result = KindResult {
                summary: h.summary(),
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
        notes.extend(self.policy_notes(&tasks));
        if self.own_late.0 > 0 {
            notes.push(format!(
                "watch's own process (latlab) held a watched thread's CPU in {} late windows, {} of their latency: that is watch's cost (in its overhead), never one of the causes",
                self.own_late.0,
                latlab_measure::units::format_ns(self.own_late.1)
            ));
        }
        if self.functions.hidden() && !self.functions.is_empty() {
            notes.push(
                "timer callbacks are named by address: /proc/kallsyms shows this process no addresses (kernel.kptr_restrict); run latlab as root, or grant CAP_SYSLOG, to have them named"
                    .to_string(),
            );
        }
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
        if counters.watch_full > 0 {
            notes.push(format!(
                "{} threads started by watched tasks were not watched: the kernel's set of watched threads was full ({} alive at once at most)",
                counters.watch_full,
                crate::mirror::MAX_WATCHED
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
            envelope: latlab_envelope::Envelope::at(
                std::env::args().collect(),
                self.started_unix_s,
                self.system.clone(),
            ),
            duration_ns: self.started.elapsed().as_nanos() as u64,
            stopped_by: stopped_by.to_string(),
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
                latency: overall.summary(),
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

    /// What the result says of the watched threads' policies: the late
    /// windows of threads that are not real-time left out of the causes,
    /// or, when none was real-time, that their policy is the first fix.
    fn policy_notes(&self, tasks: &BTreeMap<i32, TaskResult>) -> Vec<String> {
        let not_real_time: Vec<String> = tasks
            .values()
            .filter(|t| t.late_windows > 0)
            .filter(|t| t.policy.is_some_and(|p| !p.real_time()))
            .map(|t| {
                format!(
                    "{}:{} (SCHED_{})",
                    t.comm,
                    t.tid,
                    t.policy.map_or("?", Policy::name)
                )
            })
            .collect();
        let list = |v: &[String]| {
            let mut s = v.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            if v.len() > 5 {
                s.push_str(&format!(" and {} more", v.len() - 5));
            }
            s
        };
        let mut notes = Vec::new();
        if self.real_time_seen && self.counts.not_real_time > 0 {
            notes.push(format!(
                "{} late wake-ups of threads that are not real-time ({}) are not among the causes: such a thread waits behind every real-time task by design, and advice drawn from it would be about that thread; `--rt` leaves them out of the watch",
                self.counts.not_real_time,
                list(&not_real_time)
            ));
        } else if !self.real_time_seen && !not_real_time.is_empty() {
            notes.push(format!(
                "the watched threads with late wake-ups are not real-time ({}): they share their CPU with every other task and wait behind every real-time one; for a real-time latency run them SCHED_FIFO (chrt -f -p <priority> <tid>), the fix before any of the causes",
                list(&not_real_time)
            ));
        }
        notes
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
