//! The BPF program's logic (`crates/latlab-watch/bpf/watch.bpf.c`) in Rust,
//! fed by decoded trace events in time order instead of running inside the
//! tracepoints: the same histograms (latlab-measure's buckets, per task and
//! kind), the same per-CPU rings of [`RING`](crate::records::RING) events, the same windows
//! ([`RawWindow`]) and counters, so that the session's analysis is shared.
//! `latlab watch --tracefs` feeds it from a private tracefs instance
//! ([`crate::tracefs_side`]).
//!
//! The BPF side sends a window at the CPU's next switch (so that copying
//! the rings never delays the wake-up it describes) and user space cuts the
//! rings at `switch_at`; here nothing runs on the watched wake-up's path, so
//! the window is taken at the switch itself: the same events up to
//! `switch_at`.
//!
//! One difference the trace forces: `hrtimer_expire_entry` in tracefs holds
//! no expiry, so the soft expiry comes from the timer's last
//! `hrtimer_start` (and its clock from `hrtimer_setup`/`hrtimer_init` when
//! seen, else from the entry's `now`, which is the timer's clock). A timer
//! re-armed inside its own callback (no `hrtimer_start`) wakes as an
//! ordinary wake-up.
//!
//! A second one this machine shows: some kernels do not record every
//! `sched_switch` in tracefs (here, 6.18 in a VM, no switch away from the
//! idle task on CPU 1 ever reaches the ring buffer, while BPF on the same
//! tracepoint sees them). Every event names the task running
//! (`common_pid`), so a switch that is missing shows as an event of another
//! task than the last switch left running: the switch is put in at that
//! event, the first moment the task is known to run (an upper bound: the
//! wake-up is measured as late as it can have been, never earlier), and
//! counted ([`BpfEmulator::inferred_switches`]).
//!
//! And one the cost forces on the BPF side: it has no program on
//! `hrtimer_expire_exit` and reads from the callback's clock base whether
//! a callback still runs; here the trace's `hrtimer_expire_exit` ends it
//! (the same answer). A callback is soft here when it runs in the HRTIMER
//! softirq; there, when the timer says so (`is_soft`).
//!
//! One file per part: `input` (the events fed), `state` (what the BPF maps
//! hold), `feed` (the tracepoint handlers) and `switch` (a watched task
//! switched in: its sample and window).

mod feed;
mod input;
mod state;
mod switch;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet, VecDeque};

use crate::loader::{Counters, Settings};
use crate::records::RawWindow;

pub use input::{Event, Input};
use state::{Cpu, Pending, Timer};

/// `CLOCK_REALTIME`.
const CLOCK_REALTIME: i32 = 0;
/// `CLOCK_MONOTONIC`.
const CLOCK_MONOTONIC: i32 = 1;
/// `HRTIMER_MODE_REL`.
const HRTIMER_MODE_REL: u32 = 1;
/// The HRTIMER softirq's vector.
const HRTIMER_SOFTIRQ: i32 = 8;
/// Histogram buckets (task, kind, bucket) at most, as the BPF map.
pub const MAX_BUCKETS: usize = 65_536;
/// Wake-ups on their way at most, as the BPF map.
pub const MAX_PENDING: usize = 4096;
/// Watched threads at most, as the BPF map.
pub const MAX_WATCHED: usize = 4096;
/// Timers whose expiry is remembered at most (forgotten all at once past it).
pub const MAX_TIMERS: usize = 65_536;
/// Windows waiting for user space at most (the BPF ring buffer's 8 MiB hold
/// about 146); more are counted as lost.
pub const MAX_QUEUED_WINDOWS: usize = 256;
/// How far (ns) an expiry entry's `now` may be from the event's time for
/// the timer to count as a CLOCK_MONOTONIC one when its clock was not seen.
const SAME_CLOCK_NS: i64 = 1_000_000;

/// The kernel side's logic over a stream of events.
#[derive(Debug)]
pub struct BpfEmulator {
    settings: Settings,
    watched: HashSet<u32>,
    pending: HashMap<u32, Pending>,
    /// Watched threads that left their CPU runnable and have not run
    /// since: their wake-ups end no sleep and are not measured.
    preempted: HashSet<u32>,
    cpus: Vec<Cpu>,
    timers: HashMap<u64, Timer>,
    hist: HashMap<(u32, u32), u64>,
    counters: Counters,
    windows: VecDeque<RawWindow>,
    inferred: u64,
}

fn no_comm() -> [u8; 16] {
    [0; 16]
}

impl BpfEmulator {
    /// An emulator with the BPF side's settings and nothing watched.
    pub fn new(settings: Settings) -> BpfEmulator {
        BpfEmulator {
            settings,
            watched: HashSet::new(),
            pending: HashMap::new(),
            preempted: HashSet::new(),
            cpus: Vec::new(),
            timers: HashMap::new(),
            hist: HashMap::new(),
            counters: Counters::default(),
            windows: VecDeque::new(),
            inferred: 0,
        }
    }

    /// Switches the trace lacked, put in where the next task showed
    /// running (see the module's text).
    pub fn inferred_switches(&self) -> u64 {
        self.inferred
    }

    /// Starts watching thread `tid`; `false` when [`MAX_WATCHED`] are watched.
    pub fn watch(&mut self, tid: u32) -> bool {
        if self.watched.len() >= MAX_WATCHED && !self.watched.contains(&tid) {
            return false;
        }
        self.watched.insert(tid);
        true
    }

    /// Stops watching thread `tid`.
    pub fn unwatch(&mut self, tid: u32) {
        self.watched.remove(&tid);
        self.pending.remove(&tid);
        self.preempted.remove(&tid);
    }

    /// The threads watched now (those added on fork included).
    pub fn watched(&self) -> Vec<u32> {
        self.watched.iter().copied().collect()
    }

    /// Every histogram bucket counted so far: `(pid, kind, bucket, count)`.
    pub fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)> {
        self.hist
            .iter()
            .map(|(&(pid, kb), &n)| (pid, kb >> 24, kb & 0xff_ffff, n))
            .collect()
    }

    /// Takes the histogram buckets of threads `tids` out and returns them
    /// (as the BPF side's `take_histograms`).
    pub fn take_histograms(&mut self, tids: &[u32]) -> Vec<(u32, u32, u32, u64)> {
        let mut taken = Vec::new();
        self.hist.retain(|&(pid, kb), &mut n| {
            let take = tids.contains(&pid);
            if take {
                taken.push((pid, kb >> 24, kb & 0xff_ffff, n));
            }
            !take
        });
        taken
    }

    /// Takes the buckets `rows` out, with their counts now (as the BPF
    /// side's `take_rows`).
    pub fn take_rows(&mut self, rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)> {
        rows.iter()
            .filter_map(|&(pid, kind, bucket, _)| {
                let n = self.hist.remove(&(pid, kind << 24 | bucket))?;
                Some((pid, kind, bucket, n))
            })
            .collect()
    }

    /// The counters (`enum counter`).
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The next window, oldest first.
    pub fn next_window(&mut self) -> Option<RawWindow> {
        self.windows.pop_front()
    }

    /// Events of `cpu` were lost before the next one: what the CPU was
    /// doing is unknown, so its state starts afresh (a lost
    /// `hrtimer_expire_exit` would otherwise make later wake-ups look
    /// timer-driven).
    pub fn lost_before(&mut self, cpu: u32) {
        let c = self.cpu(cpu);
        c.in_callback = false;
        c.softirq = 0;
        c.soft = 0;
        c.current = None;
    }
}
