//! Separation layer: the events of each window, from the intended expiry to
//! the moment the task runs, on the task's CPU and the timer's CPU, plus
//! events elsewhere that touch them (the task's wake-up, IPIs sent to them).
//!
//! The CPU state (running task, interrupt and softirq nesting) is tracked
//! over the whole trace and saved when a window opens, so the analysis knows
//! what the CPU was doing at the intended time even when the window starts
//! in the middle of something.
//!
//! Two ways to cut windows, with identical results:
//! - [`Collector`] runs in the same pass as detection: it keeps a bounded
//!   history of recent events and cuts the window of every period as soon
//!   as the period ends; the analysis keeps the windows it chooses.
//! - [`Separator`] is a second pass that cuts only the chosen windows. It
//!   is used when a chosen window began before the history's horizon, when
//!   the windows of all periods outgrew their memory budget
//!   ([`MIN_COLLECTED_BYTES`], [`COLLECTED_BYTES_PER_EVENT`]), and for
//!   `--dump-windows`, which needs each event rendered as text (the raw
//!   event is gone once the pass has moved on, and rendering every event
//!   just in case costs more than a second pass).

use std::collections::VecDeque;

use crate::detect::Period;
use crate::model::{Kind, Rec, Sym};

/// What a CPU is doing, as far as the trace says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuState {
    /// Running task (-1 until the trace says).
    pub current: i32,
    /// Whether `current` is known.
    pub known: bool,
    /// The kernel priority `current` was switched in with (its
    /// `next_prio`, PI boosts included), when the trace said.
    pub current_prio: Option<i32>,
    /// Hard interrupt handlers being run, innermost last.
    pub irqs: Vec<Sym>,
    /// Softirq being run.
    pub softirq: Option<u8>,
    /// Inside an hrtimer callback.
    pub in_hrtimer: bool,
    /// Timer callbacks running, innermost last (a hard hrtimer's callback
    /// can interrupt a soft one's).
    pub callbacks: Vec<Running>,
    /// The last timer callback the running softirq began, returned or
    /// not: what a timer softirq caught between two callbacks works for.
    pub softirq_callback: Option<Running>,
}

/// A timer callback running on a CPU (its function: [`crate::model::Names::callback`]
/// of `timer` at `since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    /// The timer's address.
    pub timer: u64,
    /// When the callback began (its expire-entry event, trace clock ns).
    pub since: u64,
    /// A timer-wheel (`timer_list`) timer, else an hrtimer.
    pub wheel: bool,
    /// Hard interrupts being handled when it began (0: in a softirq).
    pub depth: u8,
}

impl CpuState {
    /// Applies one event logged on this CPU.
    pub fn apply(&mut self, r: &Rec) {
        if !self.known && r.pid >= 0 && !matches!(r.kind, Kind::Switch { .. }) {
            self.current = r.pid;
            self.known = true;
        }
        match r.kind {
            Kind::Switch {
                next_pid,
                next_prio,
                ..
            } => {
                self.current = next_pid;
                self.current_prio = (next_prio >= 0).then_some(next_prio);
                self.known = true;
                // A switch happens in task context.
                self.irqs.clear();
                self.softirq = None;
                self.in_hrtimer = false;
                self.callbacks.clear();
                self.softirq_callback = None;
            }
            Kind::IrqEntry { name, .. } if self.irqs.len() < 8 => self.irqs.push(name),
            Kind::IrqExit { .. } => {
                self.irqs.pop();
                if self.irqs.is_empty() {
                    self.in_hrtimer = false;
                }
                let depth = self.irqs.len() as u8;
                self.callbacks.retain(|c| c.depth <= depth);
            }
            Kind::SoftirqEntry { vec } => self.softirq = Some(vec),
            Kind::SoftirqExit { .. } => {
                self.softirq = None;
                self.callbacks.retain(|c| c.depth > 0);
                self.softirq_callback = None;
                // Its callbacks ended with it, exits logged or not (latlab
                // watch's BPF side logs none).
                if self.irqs.is_empty() {
                    self.in_hrtimer = false;
                }
            }
            Kind::HrtimerExpireEntry { timer, .. } => {
                self.in_hrtimer = true;
                self.begin_callback(timer, r.ts, false);
            }
            Kind::HrtimerExpireExit { timer } => {
                self.in_hrtimer = false;
                self.end_callback(timer);
            }
            Kind::TimerExpireEntry { timer } => self.begin_callback(timer, r.ts, true),
            Kind::TimerExpireExit { timer } => self.end_callback(timer),
            _ => {}
        }
    }
}

impl CpuState {
    /// A callback begins: it ends any callback that began at the same
    /// interrupt depth and was not seen to end (a trace without exit
    /// events, such as `latlab watch`'s).
    fn begin_callback(&mut self, timer: u64, since: u64, wheel: bool) {
        let depth = self.irqs.len() as u8;
        self.callbacks.retain(|c| c.depth < depth);
        let running = Running {
            timer,
            since,
            wheel,
            depth,
        };
        if depth == 0 {
            self.softirq_callback = Some(running);
        }
        if self.callbacks.len() < 8 {
            self.callbacks.push(running);
        }
    }

    /// The callback of `timer` returned (and any begun inside it).
    fn end_callback(&mut self, timer: u64) {
        if let Some(i) = self.callbacks.iter().rposition(|c| c.timer == timer) {
            self.callbacks.truncate(i);
        }
    }
}

/// The events of one period.
#[derive(Debug, Clone)]
pub struct Window {
    /// Index into the period list.
    pub period: usize,
    /// Whether the period was late.
    pub late: bool,
    /// The period.
    pub p: Period,
    /// State of the timer CPU at the intended time.
    pub timer_cpu_state: CpuState,
    /// State of the task's CPU at the intended time.
    pub task_cpu_state: CpuState,
    /// The events, in time order.
    pub events: Vec<Rec>,
    /// Events left out because the window held too many.
    pub dropped: u64,
    /// The events as text (late windows, when asked for).
    pub text: Vec<u8>,
}

/// Whether event `r` belongs to the window of period `p`: logged on its
/// CPU or its timer's CPU, or waking its task, or an IPI sent to either CPU.
fn touches(p: &Period, r: &Rec) -> bool {
    if r.cpu == p.cpu || r.cpu == p.timer_cpu {
        return true;
    }
    match r.kind {
        Kind::Wake { pid, .. } => pid == p.pid,
        Kind::IpiSend { mask } => {
            let bit = |c: u32| if c < 64 { 1u64 << c } else { 0 };
            mask & (bit(p.cpu) | bit(p.timer_cpu)) != 0
        }
        _ => false,
    }
}

/// Per-window cap on stored events.
pub const MAX_WINDOW_EVENTS: usize = 100_000;

/// Collects windows while the trace streams by.
#[derive(Debug)]
pub struct Separator {
    /// The windows, sorted by start.
    pub windows: Vec<Window>,
    next: usize,
    active: Vec<usize>,
    cpus: Vec<CpuState>,
    want_text: bool,
}

impl Separator {
    /// Windows for `chosen` (period index, late) of `periods`; `want_text`
    /// keeps late windows' events as text for `--dump-windows`.
    pub fn new(periods: &[Period], chosen: &[(usize, bool)], want_text: bool) -> Self {
        let mut windows: Vec<Window> = chosen
            .iter()
            .map(|&(i, late)| Window {
                period: i,
                late,
                p: periods[i],
                timer_cpu_state: CpuState::default(),
                task_cpu_state: CpuState::default(),
                events: Vec::new(),
                dropped: 0,
                text: Vec::new(),
            })
            .collect();
        windows.sort_by_key(|w| (w.p.intended, w.period));
        Separator {
            windows,
            next: 0,
            active: Vec::new(),
            cpus: Vec::new(),
            want_text,
        }
    }

    fn touches(w: &Window, r: &Rec) -> bool {
        touches(&w.p, r)
    }

    /// Feeds one event (time order); `line` renders it as text.
    pub fn push(&mut self, r: &Rec, line: &mut dyn FnMut(&mut Vec<u8>)) {
        // Open windows whose intended time has come; they see the state
        // before this event.
        while self.next < self.windows.len() && self.windows[self.next].p.intended <= r.ts {
            let i = self.next;
            self.next += 1;
            let st =
                |c: u32, cpus: &Vec<CpuState>| cpus.get(c as usize).cloned().unwrap_or_default();
            self.windows[i].timer_cpu_state = st(self.windows[i].p.timer_cpu, &self.cpus);
            self.windows[i].task_cpu_state = st(self.windows[i].p.cpu, &self.cpus);
            if self.windows[i].p.run >= r.ts {
                self.active.push(i);
            }
        }
        let windows = &mut self.windows;
        self.active.retain(|&i| windows[i].p.run >= r.ts);
        for &i in &self.active {
            let w = &mut windows[i];
            if !Self::touches(w, r) {
                continue;
            }
            if w.events.len() >= MAX_WINDOW_EVENTS {
                w.dropped += 1;
                continue;
            }
            w.events.push(*r);
            if self.want_text && w.late {
                line(&mut w.text);
            }
        }
        if r.cpu != u32::MAX {
            let c = r.cpu as usize;
            if c >= self.cpus.len() {
                self.cpus.resize(c + 1, CpuState::default());
            }
            self.cpus[c].apply(r);
        }
    }
}

/// History kept in any case (trace-clock ns): a timer interrupt delayed by
/// up to this much still finds the events since the intended expiry.
pub const HISTORY_NS: u64 = 200_000_000;
/// History kept at most for a period still open (ns): a task woken and not
/// yet run holds the history back this far at most.
pub const MAX_HISTORY_NS: u64 = 1_000_000_000;
/// Events the history holds at most.
pub const MAX_HISTORY_EVENTS: usize = 1 << 19;
/// Bytes the one-pass windows may take, all windows together (their
/// events and the windows themselves), at least; see
/// [`COLLECTED_BYTES_PER_EVENT`].
pub const MIN_COLLECTED_BYTES: usize = 128 << 20;
/// Bytes the one-pass windows may take per event of the trace so far (a
/// `.dat` event takes 40-60 bytes of the file, which is mapped in memory
/// anyway): past both this and [`MIN_COLLECTED_BYTES`], the collector gives
/// up and explain cuts the chosen windows in a second pass instead, so
/// memory stays bounded by a fraction of the trace's own size.
pub const COLLECTED_BYTES_PER_EVENT: usize = 16;
/// A CPU-state checkpoint every this many events.
const CHECKPOINT_EVERY: u64 = 64;

/// One event of the history, with the running maximum of the timestamps
/// up to it (a window opens at the first event at or after its intended
/// time; the running maximum makes that a binary search even where a CPU's
/// clock stepped back).
#[derive(Debug, Clone, Copy)]
struct Past {
    rec: Rec,
    max_ts: u64,
}

/// A period that has ended, waiting for an event past its end.
#[derive(Debug, Clone, Copy)]
struct Ended {
    index: usize,
    p: Period,
}

/// One-pass separation: cuts the window of every period while detection
/// runs (see the module docs). Feed every event with [`Collector::push`],
/// then every period the detector found with [`Collector::ended`], then
/// call [`Collector::finish`] at the end of the trace.
#[derive(Debug, Default)]
pub struct Collector {
    history: VecDeque<Past>,
    /// Stream index of `history[0]`.
    base: u64,
    /// Stream index of the next event.
    next: u64,
    /// Running maximum of the timestamps of the events dropped from the history.
    dropped_max: Option<u64>,
    max_ts: u64,
    cpus: Vec<CpuState>,
    /// CPU states before the event at the stream index, oldest first.
    checkpoints: VecDeque<(u64, Vec<CpuState>)>,
    ended: Vec<Ended>,
    /// Bytes held by `windows`.
    collected: usize,
    /// Bytes the windows may take at least ([`MIN_COLLECTED_BYTES`]).
    budget: usize,
    /// And per event seen ([`COLLECTED_BYTES_PER_EVENT`]).
    budget_per_event: usize,
    /// Whether the windows outgrew the budget (all dropped).
    pub gave_up: bool,
    /// The window of each period by its index in the detector's list;
    /// `None` while not cut, or when its start had already left the
    /// history (the caller then runs a [`Separator`] pass).
    pub windows: Vec<Option<Window>>,
}

impl Collector {
    /// An empty collector.
    pub fn new() -> Self {
        Self::with_budget(MIN_COLLECTED_BYTES, COLLECTED_BYTES_PER_EVENT)
    }

    /// An empty collector whose windows may take `budget` bytes in all, or
    /// `per_event` bytes per event seen if that is more.
    pub fn with_budget(budget: usize, per_event: usize) -> Self {
        Collector {
            budget,
            budget_per_event: per_event,
            ..Self::default()
        }
    }

    /// Feeds one event (time order), before the detector sees it.
    pub fn push(&mut self, r: &Rec) {
        if self.gave_up {
            return;
        }
        if self.next % CHECKPOINT_EVERY == 0 {
            self.checkpoints.push_back((self.next, self.cpus.clone()));
        }
        self.max_ts = if self.next == 0 {
            r.ts
        } else {
            self.max_ts.max(r.ts)
        };
        self.history.push_back(Past {
            rec: *r,
            max_ts: self.max_ts,
        });
        self.next += 1;
        if r.cpu != u32::MAX {
            let c = r.cpu as usize;
            if c >= self.cpus.len() {
                self.cpus.resize(c + 1, CpuState::default());
            }
            self.cpus[c].apply(r);
        }
        if !self.ended.is_empty() {
            let ts = r.ts;
            let mut k = 0;
            while k < self.ended.len() {
                if self.ended[k].p.run < ts {
                    let e = self.ended.swap_remove(k);
                    self.cut(e);
                } else {
                    k += 1;
                }
            }
        }
    }

    /// Tells the collector that the detector found period `index` (its
    /// list index), ended by the last event pushed.
    pub fn ended(&mut self, index: usize, p: Period) {
        if self.gave_up {
            return;
        }
        if self.windows.len() <= index {
            self.windows.resize(index + 1, None);
        }
        self.ended.push(Ended { index, p });
    }

    /// Forgets the windows (cut or waiting) of the periods `keep` rejects.
    pub fn retain(&mut self, keep: impl Fn(&Period) -> bool) {
        self.ended.retain(|e| keep(&e.p));
        for slot in &mut self.windows {
            if slot.as_ref().is_some_and(|w| !keep(&w.p)) {
                if let Some(w) = slot.take() {
                    self.collected -=
                        std::mem::size_of::<Window>() + w.events.len() * std::mem::size_of::<Rec>();
                }
            }
        }
    }

    /// Drops history no open period can need; `oldest_open` is the
    /// detector's [`crate::detect::Detector::oldest_open`].
    pub fn trim(&mut self, oldest_open: Option<u64>) {
        let head = self.max_ts;
        let mut keep = head.saturating_sub(HISTORY_NS);
        let open = self
            .ended
            .iter()
            .map(|e| e.p.intended)
            .chain(oldest_open)
            .min();
        if let Some(o) = open {
            keep = keep.min(o.max(head.saturating_sub(MAX_HISTORY_NS)));
        }
        // Drop whole checkpoint intervals only, so that the history always
        // starts at a checkpoint and a window's CPU state can be replayed.
        // `max_ts` never decreases along the history: a binary search.
        let drop = self
            .history
            .partition_point(|x| x.max_ts < keep)
            .max(self.history.len().saturating_sub(MAX_HISTORY_EVENTS));
        let want = self.base + drop as u64;
        let ci = self.checkpoints.partition_point(|(at, _)| *at <= want);
        let Some(&(new_base, _)) = ci.checked_sub(1).and_then(|i| self.checkpoints.get(i)) else {
            return;
        };
        if new_base <= self.base {
            return;
        }
        let n = (new_base - self.base) as usize;
        self.dropped_max = Some(self.history[n - 1].max_ts);
        self.history.drain(..n);
        self.base = new_base;
        while self
            .checkpoints
            .front()
            .is_some_and(|(at, _)| *at < new_base)
        {
            self.checkpoints.pop_front();
        }
    }

    /// Cuts the windows of the periods still waiting (end of the trace).
    pub fn finish(&mut self) {
        for e in std::mem::take(&mut self.ended) {
            self.cut(e);
        }
    }

    /// Cuts the window of `e` from the history, exactly as a [`Separator`]
    /// pass would.
    fn cut(&mut self, e: Ended) {
        let p = e.p;
        // The window opens at the first event at or after the intended time.
        if self.dropped_max.is_some_and(|m| m >= p.intended) {
            return; // its start has left the history
        }
        let open = self.history.partition_point(|x| x.max_ts < p.intended);
        if open == self.history.len() {
            return; // cannot happen: the period ended on an event at or after it
        }
        let open_at = self.base + open as u64;
        // CPU states before the opening event: the last checkpoint at or
        // before it, replayed up to it.
        let ci = self
            .checkpoints
            .partition_point(|(at, _)| *at <= open_at)
            .saturating_sub(1);
        let Some((at, states)) = self.checkpoints.get(ci) else {
            return;
        };
        if *at > open_at {
            return;
        }
        let state_of = |c: u32| states.get(c as usize).cloned().unwrap_or_default();
        let (mut timer_st, mut task_st) = (state_of(p.timer_cpu), state_of(p.cpu));
        for x in self.history.range((at - self.base) as usize..open) {
            if x.rec.cpu == p.timer_cpu {
                timer_st.apply(&x.rec);
            }
            if x.rec.cpu == p.cpu {
                task_st.apply(&x.rec);
            }
        }
        let mut w = Window {
            period: e.index,
            late: false,
            p,
            timer_cpu_state: timer_st,
            task_cpu_state: task_st,
            events: Vec::new(),
            dropped: 0,
            text: Vec::new(),
        };
        for x in self.history.range(open..) {
            if x.rec.ts > p.run {
                break;
            }
            if !touches(&p, &x.rec) {
                continue;
            }
            if w.events.len() >= MAX_WINDOW_EVENTS {
                w.dropped += 1;
            } else {
                w.events.push(x.rec);
            }
        }
        // Most windows are kept until the end without being chosen.
        w.events.shrink_to_fit();
        self.collected +=
            std::mem::size_of::<Window>() + w.events.len() * std::mem::size_of::<Rec>();
        self.windows[e.index] = Some(w);
        let allowed = (self.next as usize)
            .saturating_mul(self.budget_per_event)
            .max(self.budget);
        if self.collected > allowed {
            *self = Collector {
                gave_up: true,
                ..Collector::default()
            };
        }
    }
}
