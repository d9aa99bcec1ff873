//! Separation layer: the events of each window, from the intended expiry to
//! the moment the task runs, on the task's CPU and the timer's CPU, plus
//! events elsewhere that touch them (the task's wake-up, IPIs sent to them).
//!
//! The CPU state (running task, interrupt and softirq nesting) is tracked
//! over the whole trace and saved when a window opens, so the analysis knows
//! what the CPU was doing at the intended time even when the window starts
//! in the middle of something.

use crate::detect::Period;
use crate::model::{Kind, Rec, Sym};

/// What a CPU is doing, as far as the trace says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuState {
    /// Running task (-1 until the trace says).
    pub current: i32,
    /// Whether `current` is known.
    pub known: bool,
    /// Hard interrupt handlers being run, innermost last.
    pub irqs: Vec<Sym>,
    /// Softirq being run.
    pub softirq: Option<u8>,
    /// Inside an hrtimer callback.
    pub in_hrtimer: bool,
}

impl CpuState {
    /// Applies one event logged on this CPU.
    pub fn apply(&mut self, r: &Rec) {
        if !self.known && r.pid >= 0 && !matches!(r.kind, Kind::Switch { .. }) {
            self.current = r.pid;
            self.known = true;
        }
        match r.kind {
            Kind::Switch { next_pid, .. } => {
                self.current = next_pid;
                self.known = true;
                // A switch happens in task context.
                self.irqs.clear();
                self.softirq = None;
                self.in_hrtimer = false;
            }
            Kind::IrqEntry { name, .. } if self.irqs.len() < 8 => self.irqs.push(name),
            Kind::IrqExit { .. } => {
                self.irqs.pop();
                if self.irqs.is_empty() {
                    self.in_hrtimer = false;
                }
            }
            Kind::SoftirqEntry { vec } => self.softirq = Some(vec),
            Kind::SoftirqExit { .. } => self.softirq = None,
            Kind::HrtimerExpireEntry { .. } => self.in_hrtimer = true,
            Kind::HrtimerExpireExit { .. } => self.in_hrtimer = false,
            _ => {}
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
        if r.cpu == w.p.cpu || r.cpu == w.p.timer_cpu {
            return true;
        }
        match r.kind {
            Kind::Wake { pid, .. } => pid == w.p.pid,
            Kind::IpiSend { mask } => {
                let bit = |c: u32| if c < 64 { 1u64 << c } else { 0 };
                mask & (bit(w.p.cpu) | bit(w.p.timer_cpu)) != 0
            }
            _ => false,
        }
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
