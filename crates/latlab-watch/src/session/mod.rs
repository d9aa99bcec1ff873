//! A running watch: a kernel side ([`KernelSide`]: BPF, or tracefs with
//! `--tracefs`) started, the tasks chosen, windows turned
//! into explanations as they arrive, a snapshot every interval, and the
//! final [`WatchDocument`]. Memory is bounded by the threads alive, not by
//! the threads seen, however long it runs: histograms are sparse (the
//! buckets in use, [`SparseHistogram`](crate::histograms::SparseHistogram); the kernel's map holds at most
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
//!
//! One file per stage: `start`, `rescan` (tasks added, ended threads
//! folded), `windows` (polled and explained), `threads` (what is known per
//! thread), `snapshots`, `live` (the live view) and `finish` (the result).

mod finish;
mod live;
mod rescan;
mod snapshots;
mod start;
#[cfg(test)]
mod tests;
mod threads;
mod windows;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use latlab_rt::sysinfo::SystemInfo;

use crate::document::*;
use crate::error::Result;
use crate::functions::FunctionNames;
use crate::histograms::Counts;
use crate::irqnames::IrqNames;
use crate::own::OwnThreads;
use crate::select::{Policy, Selection, Started};
use crate::side::KernelSide;
use crate::window::CommCache;

pub use live::{Live, LiveTask};
use rescan::Ended;
pub use snapshots::merge_pairs;
use threads::TaskLive;
pub use threads::ThreadInfo;
use windows::Kept;

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
}
