//! The BPF program's logic (`crates/latlab-watch/bpf/watch.bpf.c`) in Rust,
//! fed by decoded trace events in time order instead of running inside the
//! tracepoints: the same histograms (latlab-measure's buckets, per task and
//! kind), the same per-CPU rings of [`RING`] events, the same windows
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

use std::collections::{HashMap, HashSet, VecDeque};

use latlab_measure::histogram::bucket_index;

use crate::histograms::PREEMPTION_KIND;
use crate::loader::{Counters, Settings};
use crate::records::{Ev, EvType, Head, RawWindow, RING};

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

/// What a decoded trace event says (the fields the BPF programs read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// `sched_switch`.
    Switch {
        /// The task leaving.
        prev_pid: i32,
        /// It stays runnable (preempted).
        prev_runnable: bool,
        /// The task running next.
        next_pid: i32,
        /// Its kernel priority.
        next_prio: i32,
        /// Its name.
        next_comm: [u8; 16],
    },
    /// `sched_waking`.
    Waking {
        /// The woken task.
        pid: i32,
        /// Its kernel priority.
        prio: i32,
        /// The CPU it will run on.
        target_cpu: i32,
        /// Its name.
        comm: [u8; 16],
    },
    /// `irq_handler_entry`.
    IrqEntry {
        /// The interrupt.
        irq: i32,
    },
    /// `irq_handler_exit`.
    IrqExit {
        /// The interrupt.
        irq: i32,
        /// The handler's return value.
        ret: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// The vector.
        vec: i32,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// The vector.
        vec: i32,
    },
    /// `hrtimer_start`: a timer armed.
    HrtimerStart {
        /// The timer's address.
        timer: u64,
        /// Its soft expiry (in its clock).
        softexpires: i64,
    },
    /// `hrtimer_setup` / `hrtimer_init`: a timer's clock.
    HrtimerSetup {
        /// The timer's address.
        timer: u64,
        /// Its clock as asked for.
        clockid: i32,
        /// Its mode (`enum hrtimer_mode`).
        mode: u32,
    },
    /// `hrtimer_expire_entry`.
    HrtimerEntry {
        /// The timer's address.
        timer: u64,
        /// The time of its clock base when the interrupt ran.
        now: i64,
        /// Its callback function's address (0: not in the event).
        function: u64,
    },
    /// `hrtimer_expire_exit`.
    HrtimerExit {
        /// The timer's address.
        timer: u64,
    },
    /// An x86 vector's entry (`irq_vectors:*_entry`).
    VectorEntry {
        /// The vector number.
        vector: i32,
        /// Which ([`crate::records::VECTOR_NAMES`]).
        which: i32,
    },
    /// An x86 vector's exit.
    VectorExit {
        /// The vector number.
        vector: i32,
        /// Which.
        which: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The forking thread.
        parent: i32,
        /// The new one.
        child: i32,
    },
    /// `sched_process_exit`: a thread ends.
    Exit {
        /// The thread.
        pid: i32,
    },
}

/// One event: when (trace clock `mono`: CLOCK_MONOTONIC ns), where, the
/// task running, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Timestamp (ns).
    pub ts: u64,
    /// The CPU it happened on.
    pub cpu: u32,
    /// The task running (`common_pid`).
    pub pid: i32,
    /// What.
    pub input: Input,
}

#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    expires: u64,
    irq_at: u64,
    woken_at: u64,
    timer_cpu: u32,
    soft: bool,
    /// From the `sched_waking`, for a switch put in.
    prio: i32,
    comm: [u8; 16],
}

#[derive(Debug, Clone, Copy, Default)]
struct Timer {
    softexpires: Option<i64>,
    clockid: Option<i32>,
}

/// A CPU's state (`struct cpu_state`) and its ring (`struct ring`).
#[derive(Debug, Clone, Default)]
struct Cpu {
    soft: u64,
    entered: u64,
    in_callback: bool,
    softirq: i32,
    callback_soft: bool,
    measured: u64,
    second: u64,
    windows: u32,
    ring: VecDeque<Ev>,
    logged: u64,
    /// The task the last switch left running (`None`: not known yet).
    current: Option<i32>,
}

impl Cpu {
    fn log(&mut self, ev: Ev) {
        if self.ring.len() == RING {
            self.ring.pop_front();
        }
        self.ring.push_back(ev);
        self.logged += 1;
    }

    /// `window_allowed`: this CPU may send another window this second.
    fn window_allowed(&mut self, now: u64, max: u32) -> bool {
        let second = now / 1_000_000_000;
        if self.second != second {
            self.second = second;
            self.windows = 0;
        }
        if self.windows >= max {
            return false;
        }
        self.windows += 1;
        true
    }
}

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

    fn cpu(&mut self, cpu: u32) -> &mut Cpu {
        let i = cpu as usize;
        if self.cpus.len() <= i {
            self.cpus.resize_with(i + 1, Cpu::default);
        }
        &mut self.cpus[i]
    }

    fn is_watched(&self, pid: i32) -> bool {
        pid > 0 && self.watched.contains(&(pid as u32))
    }

    fn hist_add(&mut self, pid: u32, kind: u32, ns: u64) {
        let key = (pid, kind << 24 | bucket_index(ns) as u32);
        if let Some(n) = self.hist.get_mut(&key) {
            *n += 1;
        } else if self.hist.len() >= MAX_BUCKETS {
            self.counters.hist_full += 1;
        } else {
            self.hist.insert(key, 1);
        }
    }

    /// A switch the trace lacks: the task running now is not the one the
    /// last switch left running.
    fn missing_switch(&mut self, e: &Event) {
        let running = match e.input {
            Input::Switch { prev_pid, .. } => prev_pid,
            _ => e.pid,
        };
        let c = self.cpu(e.cpu);
        let Some(last) = c.current.replace(running) else {
            return;
        };
        if last == running {
            return;
        }
        self.inferred += 1;
        let p = self.pending.get(&(running as u32)).copied();
        let (prio, comm) = p.map_or((0, no_comm()), |p| (p.prio, p.comm));
        self.cpu(e.cpu).log(Ev {
            ts: e.ts,
            cpu: e.cpu,
            ty: EvType::Switch,
            x: 0,
            pid: last,
            a: last,
            b: running,
            c: prio,
            d: 0,
            comm,
        });
        if self.is_watched(running) {
            self.switch_in(e, running, prio, comm);
        }
    }

    /// Handles one event (events must come in time order).
    pub fn feed(&mut self, e: &Event) {
        self.missing_switch(e);
        let ev = |ty, x, abcd: [i32; 4], comm| Ev {
            ts: e.ts,
            cpu: e.cpu,
            ty,
            x,
            pid: e.pid,
            a: abcd[0],
            b: abcd[1],
            c: abcd[2],
            d: abcd[3],
            comm,
        };
        match e.input {
            Input::HrtimerStart { timer, softexpires } => {
                self.timer(timer).softexpires = Some(softexpires);
            }
            Input::HrtimerSetup {
                timer,
                clockid,
                mode,
            } => {
                // The kernel runs a relative CLOCK_REALTIME timer on
                // CLOCK_MONOTONIC (__hrtimer_setup); the event shows the
                // clock asked for.
                let clockid = if clockid == CLOCK_REALTIME && mode & HRTIMER_MODE_REL != 0 {
                    CLOCK_MONOTONIC
                } else {
                    clockid
                };
                *self.timer(timer) = Timer {
                    softexpires: None,
                    clockid: Some(clockid),
                };
            }
            Input::HrtimerEntry {
                timer,
                now,
                function,
            } => {
                let t = self.timers.get_mut(&timer).map(std::mem::take);
                let monotonic = match t.and_then(|t| t.clockid) {
                    Some(clock) => clock == CLOCK_MONOTONIC,
                    None => (now - e.ts as i64).abs() < SAME_CLOCK_NS,
                };
                let soft = match t.and_then(|t| t.softexpires) {
                    Some(s) if monotonic && s > 0 => s as u64,
                    _ => 0,
                };
                if let Some(clockid) = t.and_then(|t| t.clockid) {
                    // The clock stays; the expiry is used up.
                    self.timer(timer).clockid = Some(clockid);
                }
                // As on_hrtimer_entry: the interrupt's clock read for its
                // expired timers (`now`) is the interrupt's moment, for a
                // CLOCK_MONOTONIC timer; the event's time otherwise.
                let entered = if monotonic && now > 0 && now as u64 <= e.ts {
                    now as u64
                } else {
                    e.ts
                };
                let c = self.cpu(e.cpu);
                let in_softirq = c.softirq == HRTIMER_SOFTIRQ + 1;
                c.soft = soft;
                c.entered = entered;
                c.in_callback = true;
                c.callback_soft = in_softirq;
                let since_read = (e.ts - entered).min(i32::MAX as u64) as i32;
                let (low, high) = Ev::function_fields(function);
                c.log(ev(
                    EvType::HrtimerEntry,
                    timer,
                    [in_softirq as i32, low, since_read, high],
                    no_comm(),
                ));
            }
            Input::HrtimerExit { timer } => {
                let c = self.cpu(e.cpu);
                c.in_callback = false;
                c.log(ev(EvType::HrtimerExit, timer, [0; 4], no_comm()));
            }
            Input::Waking {
                pid,
                prio,
                target_cpu: _,
                comm,
            } => {
                let measured =
                    self.is_watched(pid) && pid != e.pid && !self.preempted.contains(&(pid as u32));
                let c = self.cpu(e.cpu);
                let by_callback = measured && c.in_callback && c.soft != 0 && c.soft <= e.ts;
                // The BPF side logs b = -1 (the target is not read there),
                // and d: a watched task woken by the callback (1: hard, 2: soft).
                let d = if by_callback {
                    1 + c.callback_soft as i32
                } else {
                    0
                };
                c.log(ev(EvType::Waking, 0, [pid, -1, prio, d], comm));
                if !measured {
                    return;
                }
                let mut w = Pending {
                    woken_at: e.ts,
                    timer_cpu: e.cpu,
                    prio,
                    comm,
                    ..Default::default()
                };
                if by_callback {
                    w.expires = c.soft;
                    w.irq_at = c.entered;
                    w.soft = c.callback_soft;
                }
                let key = pid as u32;
                if self.pending.len() < MAX_PENDING || self.pending.contains_key(&key) {
                    self.pending.insert(key, w);
                }
            }
            Input::Switch {
                prev_pid,
                prev_runnable,
                next_pid,
                next_prio,
                next_comm,
            } => {
                self.cpu(e.cpu).log(ev(
                    EvType::Switch,
                    0,
                    [prev_pid, next_pid, next_prio, prev_runnable as i32],
                    next_comm,
                ));
                self.cpu(e.cpu).current = Some(next_pid);
                // A watched thread leaving its CPU runnable (preempted): a
                // wake-up pending for it found it running and ends no sleep
                // (the BPF side's on_switch; see its pending slot).
                if prev_runnable && self.is_watched(prev_pid) {
                    self.pending.remove(&(prev_pid as u32));
                    self.preempted.insert(prev_pid as u32);
                }
                if !self.is_watched(next_pid) {
                    return;
                }
                self.preempted.remove(&(next_pid as u32));
                self.switch_in(e, next_pid, next_prio, next_comm);
            }
            Input::IrqEntry { irq } => {
                self.cpu(e.cpu)
                    .log(ev(EvType::IrqEntry, 0, [irq, 0, 0, 0], no_comm()));
            }
            Input::IrqExit { irq, ret } => {
                self.cpu(e.cpu)
                    .log(ev(EvType::IrqExit, 0, [irq, ret, 0, 0], no_comm()));
            }
            Input::SoftirqEntry { vec } => {
                let c = self.cpu(e.cpu);
                c.softirq = vec + 1;
                c.log(ev(EvType::SoftirqEntry, 0, [vec, 0, 0, 0], no_comm()));
            }
            Input::SoftirqExit { vec } => {
                let c = self.cpu(e.cpu);
                c.softirq = 0;
                c.log(ev(EvType::SoftirqExit, 0, [vec, 0, 0, 0], no_comm()));
            }
            Input::VectorEntry { vector, which } => {
                self.cpu(e.cpu)
                    .log(ev(EvType::VectorEntry, 0, [vector, which, 0, 0], no_comm()));
            }
            Input::VectorExit { vector, which } => {
                self.cpu(e.cpu)
                    .log(ev(EvType::VectorExit, 0, [vector, which, 0, 0], no_comm()));
            }
            Input::Fork { parent, child } => {
                if self.settings.follow_forks
                    && self.is_watched(parent)
                    && child > 0
                    && !self.watch(child as u32)
                {
                    self.counters.watch_full += 1;
                }
            }
            // As on_exit: the set holds the threads alive.
            Input::Exit { pid } => {
                if self.is_watched(pid) {
                    self.unwatch(pid as u32);
                }
            }
        }
    }

    fn timer(&mut self, timer: u64) -> &mut Timer {
        if self.timers.len() >= MAX_TIMERS && !self.timers.contains_key(&timer) {
            self.timers.clear();
        }
        self.timers.entry(timer).or_default()
    }

    /// `on_switch` for a watched task: the sample, and its window when late
    /// (or a baseline one).
    fn switch_in(&mut self, e: &Event, pid: i32, prio: i32, comm: [u8; 16]) {
        let key = pid as u32;
        let Some(p) = self.pending.remove(&key) else {
            return;
        };
        // As on_switch with rt_only: a thread below the real-time
        // priorities is not measured.
        if self.settings.rt_only && prio >= 100 {
            return;
        }
        let now = e.ts;
        let start = if p.expires != 0 {
            p.expires
        } else {
            p.woken_at
        };
        let lat = now.saturating_sub(start);
        if p.expires != 0 {
            self.hist_add(key, 0, lat);
            self.hist_add(key, 1, p.irq_at.saturating_sub(p.expires));
            self.hist_add(key, PREEMPTION_KIND, now.saturating_sub(p.irq_at));
        } else {
            self.hist_add(key, 2, lat);
        }
        let late = lat > self.settings.threshold_ns;
        let (every, max) = (
            self.settings.baseline_every as u64,
            self.settings.max_windows_per_sec,
        );
        let c = self.cpu(e.cpu);
        c.measured += 1;
        let baseline = !late && every > 0 && c.measured % every == 0;
        if late {
            self.counters.late += 1;
        }
        if !late && !baseline {
            return;
        }
        if !self.cpu(e.cpu).window_allowed(now, max) {
            if late {
                self.counters.throttled += 1;
            }
            return;
        }
        if self.windows.len() >= MAX_QUEUED_WINDOWS {
            self.counters.lost += 1;
            return;
        }
        let head = Head {
            pid,
            cpu: e.cpu,
            timer_cpu: p.timer_cpu,
            prio,
            expires: p.expires,
            irq_at: p.irq_at,
            woken_at: p.woken_at,
            switch_at: now,
            late,
            soft: p.soft,
            comm,
        };
        let mut events = Vec::new();
        let mut horizon = Vec::new();
        let mut rings = vec![e.cpu];
        if p.timer_cpu != e.cpu {
            rings.push(p.timer_cpu);
        }
        for cpu in rings {
            let c = self.cpu(cpu);
            events.extend(c.ring.iter().copied());
            let oldest = c.ring.front().map_or(u64::MAX, |ev| ev.ts);
            horizon.push((cpu, oldest, c.logged > RING as u64));
        }
        events.sort_by_key(|ev| ev.ts);
        self.windows.push_back(RawWindow {
            head,
            events,
            horizon,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::tests::comm;

    fn settings() -> Settings {
        Settings {
            threshold_ns: 100_000,
            follow_forks: true,
            max_windows_per_sec: 50,
            baseline_every: 0,
            probe_reads: false,
            rt_only: false,
        }
    }

    fn at(ts: u64, cpu: u32, pid: i32, input: Input) -> Event {
        Event {
            ts,
            cpu,
            pid,
            input,
        }
    }

    fn switch(prev: i32, next: i32, name: &str) -> Input {
        Input::Switch {
            prev_pid: prev,
            prev_runnable: false,
            next_pid: next,
            next_prio: 9,
            next_comm: comm(name),
        }
    }

    fn waking(pid: i32) -> Input {
        Input::Waking {
            pid,
            prio: 9,
            target_cpu: 1,
            comm: comm("rt"),
        }
    }

    /// A timer wake-up: armed on CPU 0, fired there `irq` ns late, the task
    /// running on CPU 1 `thread` ns after the expiry.
    fn timer_wakeup(m: &mut BpfEmulator, expiry: u64, irq: u64, thread: u64) {
        m.feed(&at(
            expiry - 500_000,
            0,
            42,
            Input::HrtimerStart {
                timer: 0xa0,
                softexpires: expiry as i64,
            },
        ));
        let fired = expiry + irq;
        m.feed(&at(
            fired,
            0,
            0,
            Input::HrtimerEntry {
                timer: 0xa0,
                now: fired as i64 - 200,
                function: 0,
            },
        ));
        m.feed(&at(fired + 100, 0, 0, waking(42)));
        m.feed(&at(fired + 200, 0, 0, Input::HrtimerExit { timer: 0xa0 }));
        m.feed(&at(expiry + thread, 1, 0, switch(0, 42, "rt")));
    }

    #[test]
    fn a_timer_wakeup_gives_irq_and_thread_latency_and_a_late_window() {
        let mut m = BpfEmulator::new(settings());
        m.watch(42);
        timer_wakeup(&mut m, 10_000_000, 3_000, 20_000);
        timer_wakeup(&mut m, 11_000_000, 4_000, 250_000);
        let h = crate::histograms::group(&m.histogram_counts());
        let thread =
            crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Thread)]);
        let irq = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Irq)]);
        assert_eq!(thread.count(), 2);
        assert!(thread.max().unwrap().abs_diff(250_000) < 500);
        // Bucket bounds: within 0.2 % (latlab run's scheme). The interrupt's
        // moment is its clock read (`now`, 200 ns before the event), as the
        // BPF side takes it; the preemption latency is from there to the run.
        assert!(irq.max().unwrap().abs_diff(3_800) < 10);
        let preemption = crate::histograms::latency_split(&m.histogram_counts(), &[42])
            .unwrap()
            .preemption_latency;
        assert_eq!(preemption.summary.count, 2);
        assert!(preemption.summary.max.abs_diff(246_200) < 500);
        assert_eq!(m.counters().late, 1);
        let w = m.next_window().expect("the late one");
        assert!(m.next_window().is_none());
        assert_eq!(w.head.expires, 11_000_000);
        assert_eq!(w.head.latency(), 250_000);
        assert_eq!((w.head.cpu, w.head.timer_cpu), (1, 0));
        // Both CPUs' rings, merged in time order, the switch included.
        assert!(w.events.windows(2).all(|p| p[0].ts <= p[1].ts));
        assert_eq!(w.events.last().unwrap().ty, EvType::Switch);
        assert_eq!(w.horizon.len(), 2);
    }

    #[test]
    fn other_wakeups_and_unwatched_tasks() {
        let mut m = BpfEmulator::new(settings());
        m.watch(42);
        m.feed(&at(1_000, 0, 7, waking(42)));
        m.feed(&at(6_000, 1, 0, switch(0, 42, "rt")));
        // Unwatched: nothing counted. Woken while running: nothing pending.
        m.feed(&at(7_000, 0, 7, waking(43)));
        m.feed(&at(8_000, 1, 0, switch(0, 43, "x")));
        m.feed(&at(9_000, 1, 42, waking(42)));
        m.feed(&at(9_500, 1, 42, switch(42, 42, "rt")));
        let h = crate::histograms::group(&m.histogram_counts());
        assert_eq!(h.len(), 1);
        let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
        assert_eq!(w.count(), 1);
        assert!(w.max().unwrap().abs_diff(5_000) < 10);
        assert_eq!(m.counters().late, 0);
    }

    fn preempted(prev: i32, next: i32) -> Input {
        Input::Switch {
            prev_pid: prev,
            prev_runnable: true,
            next_pid: next,
            next_prio: 120,
            next_comm: comm("hog"),
        }
    }

    #[test]
    fn only_a_wake_up_from_sleep_is_measured() {
        let mut m = BpfEmulator::new(settings());
        m.watch(42);
        // Woken from CPU 1 while still running on CPU 0 (it never slept),
        // then preempted by a hog: the end of the preemption is no wake-up.
        m.feed(&at(1_000, 1, 7, waking(42)));
        m.feed(&at(500_000, 0, 42, preempted(42, 99)));
        m.feed(&at(900_000, 0, 99, preempted(99, 42)));
        // Woken while preempted (only its state changes): nothing either.
        m.feed(&at(1_000_000, 0, 42, preempted(42, 99)));
        m.feed(&at(1_001_000, 1, 7, waking(42)));
        m.feed(&at(1_400_000, 0, 99, preempted(99, 42)));
        // A sleep, its wake-up and the switch in: one sample of 3 us.
        m.feed(&at(2_000_000, 0, 42, switch(42, 0, "idle")));
        m.feed(&at(3_000_000, 1, 7, waking(42)));
        m.feed(&at(3_003_000, 0, 0, switch(0, 42, "rt")));
        let h = crate::histograms::group(&m.histogram_counts());
        let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
        assert_eq!(w.count(), 1);
        assert!(w.max().unwrap().abs_diff(3_000) < 10);
    }

    #[test]
    fn a_timer_of_another_clock_or_rearmed_in_its_callback_is_not_timer_driven() {
        let mut m = BpfEmulator::new(settings());
        m.watch(42);
        // CLOCK_REALTIME (its `now` is far from the trace clock).
        m.feed(&at(
            100,
            0,
            0,
            Input::HrtimerStart {
                timer: 1,
                softexpires: 5_000,
            },
        ));
        m.feed(&at(
            1_000,
            0,
            0,
            Input::HrtimerEntry {
                timer: 1,
                now: 1_700_000_000_000_000_000,
                function: 0,
            },
        ));
        m.feed(&at(1_100, 0, 0, waking(42)));
        m.feed(&at(1_200, 0, 0, Input::HrtimerExit { timer: 1 }));
        m.feed(&at(2_000, 0, 0, switch(0, 42, "rt")));
        // The same timer firing again without a new start.
        m.feed(&at(
            3_000,
            0,
            0,
            Input::HrtimerEntry {
                timer: 1,
                now: 2_990,
                function: 0,
            },
        ));
        m.feed(&at(3_100, 0, 0, waking(42)));
        m.feed(&at(3_200, 0, 0, Input::HrtimerExit { timer: 1 }));
        m.feed(&at(4_000, 0, 0, switch(0, 42, "rt")));
        let h = crate::histograms::group(&m.histogram_counts());
        let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
        assert_eq!(w.count(), 2);
        assert!(!h.contains_key(&(42, crate::histograms::LatencyKind::Thread)));
    }

    #[test]
    fn a_switch_the_trace_lacks_is_put_in_where_the_task_shows_running() {
        let mut m = BpfEmulator::new(settings());
        m.watch(42);
        m.feed(&at(1_000, 1, 7, switch(7, 0, "swapper/1")));
        m.feed(&at(2_000, 0, 0, waking(42)));
        // No switch idle -> 42 on CPU 1; 42's first event there at 9 000.
        m.feed(&at(
            9_000,
            1,
            42,
            Input::HrtimerSetup {
                timer: 5,
                clockid: 1,
                mode: 0,
            },
        ));
        assert_eq!(m.inferred_switches(), 1);
        let h = crate::histograms::group(&m.histogram_counts());
        let w = crate::histograms::histogram(&h[&(42, crate::histograms::LatencyKind::Wakeup)]);
        assert_eq!(w.count(), 1);
        assert!(w.max().unwrap().abs_diff(7_000) < 10);
        // A recorded switch needs nothing put in.
        m.feed(&at(10_000, 1, 42, switch(42, 0, "swapper/1")));
        m.feed(&at(11_000, 1, 0, Input::IrqEntry { irq: 3 }));
        assert_eq!(m.inferred_switches(), 1);
    }

    #[test]
    fn rt_only_measures_real_time_wake_ups_and_an_exit_leaves_the_set() {
        let mut m = BpfEmulator::new(Settings {
            rt_only: true,
            ..settings()
        });
        m.watch(42);
        let wake_up = |m: &mut BpfEmulator, t: u64, prio: i32| {
            m.feed(&at(t, 0, 0, waking(42)));
            m.feed(&at(
                t + 1_000,
                0,
                0,
                Input::Switch {
                    prev_pid: 0,
                    prev_runnable: false,
                    next_pid: 42,
                    next_prio: prio,
                    next_comm: comm("loop"),
                },
            ));
            m.feed(&at(t + 2_000, 0, 42, switch(42, 0, "swapper/0")));
        };
        // SCHED_OTHER (prio 120): not measured; SCHED_FIFO 90 (prio 9) and
        // SCHED_DEADLINE (prio -1): measured.
        wake_up(&mut m, 1_000_000, 120);
        assert_eq!(crate::histograms::group(&m.histogram_counts()).len(), 0);
        wake_up(&mut m, 2_000_000, 9);
        wake_up(&mut m, 3_000_000, -1);
        let counted: u64 = m.histogram_counts().iter().map(|r| r.3).sum();
        assert_eq!(counted, 2);
        // Its end takes it out of the set; its counts stay until taken.
        m.feed(&at(4_000_000, 0, 42, Input::Exit { pid: 42 }));
        assert!(m.watched().is_empty());
        let rows = m.histogram_counts();
        assert_eq!(m.take_rows(&rows).len(), rows.len());
        assert!(m.histogram_counts().is_empty());
    }

    #[test]
    fn forks_throttling_baseline_and_bounds() {
        let mut m = BpfEmulator::new(Settings {
            max_windows_per_sec: 2,
            baseline_every: 3,
            ..settings()
        });
        m.watch(42);
        m.feed(&at(
            10,
            0,
            42,
            Input::Fork {
                parent: 42,
                child: 50,
            },
        ));
        assert!(m.watched().contains(&50));
        // Five late wake-ups of 50 in one second: two windows, three throttled.
        for k in 0..5u64 {
            let t = 1_000_000 + k * 1_000_000;
            m.feed(&at(t, 0, 0, waking(50)));
            m.feed(&at(t + 200_000, 0, 0, switch(0, 50, "child")));
        }
        assert_eq!(m.counters().late, 5);
        assert_eq!(m.counters().throttled, 3);
        let mut n = 0;
        while m.next_window().is_some() {
            n += 1;
        }
        assert_eq!(n, 2);
        // In the next second, every third normal wake-up is a baseline window.
        for k in 0..6u64 {
            let t = 2_000_000_000 + k * 1_000_000;
            m.feed(&at(t, 0, 0, waking(50)));
            m.feed(&at(t + 1_000, 0, 0, switch(0, 50, "child")));
        }
        let w = m.next_window().expect("a baseline window");
        assert!(!w.head.late);
        // The ring keeps the newest RING events.
        for k in 0..(RING as u64 + 5) {
            m.feed(&at(3_000_000_000 + k, 0, 0, Input::IrqEntry { irq: 11 }));
        }
        assert_eq!(m.cpus[0].ring.len(), RING);
        m.unwatch(50);
        assert!(!m.watched().contains(&50));
    }
}
