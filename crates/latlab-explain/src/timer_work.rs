//! Which timer callback a CPU's timer work was for, at each moment of a
//! window.
//!
//! A timer interrupt or a `HRTIMER`/`TIMER` softirq runs callbacks, and
//! spends time of its own around them (entry, the clock event device's
//! reprogramming, the softirq's loop). Inside a callback the time is that
//! callback's; between callbacks it is the callback the interrupt or
//! softirq ran longest (a softirq that ran only `tcp_pace_kick` ran for
//! it). A timer interrupt that ran no callback at all only raised the
//! `HRTIMER` softirq: its time is that of the soft hrtimer callbacks the
//! next `HRTIMER` softirq on the CPU ran (when no task switch comes
//! between them).
//!
//! The woken task's own expiry (its `hrtimer_expire_entry` at the
//! period's `expire`) is not another timer's work: its time stays
//! [`crate::Cause::HrtimerInterrupt`], as does a callback the trace does
//! not name.

use crate::analyze::{Context, TimerKind};
use crate::model::{Kind, Names, Sym, HRTIMER_SOFTIRQ};
use crate::separate::{CpuState, Running, Window};

/// Whose a callback's time is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// The woken task's own timer.
    Own,
    /// A callback the trace does not name.
    Unknown,
    /// A named callback.
    Named(Sym, TimerKind),
}

/// One timer interrupt or softirq run on a CPU, clipped to the window.
#[derive(Debug, Clone)]
struct Span {
    cpu: u32,
    start: u64,
    end: u64,
    /// A hard interrupt (else a softirq).
    irq: bool,
    /// A timer interrupt (a hard interrupt that expires hrtimers).
    timer_irq: bool,
    /// The softirq vector.
    vec: Option<u8>,
    /// It ran a callback (any, the task's own included).
    ran: bool,
    /// The named callback it ran longest.
    main: Option<(Sym, TimerKind)>,
}

/// A span being built.
#[derive(Debug)]
struct Open {
    start: u64,
    irq: bool,
    timer_irq: bool,
    vec: Option<u8>,
    /// The callback running and since when (clipped to the window).
    current: Option<(Who, u64)>,
    /// Time and count per callback.
    spent: Vec<(Who, u64, u64)>,
}

impl Open {
    fn new(start: u64, irq: bool, timer_irq: bool, vec: Option<u8>) -> Open {
        Open {
            start,
            irq,
            timer_irq,
            vec,
            current: None,
            spent: Vec::new(),
        }
    }

    /// Ends the running callback at `at`.
    fn end_callback(&mut self, at: u64) {
        if let Some((who, since)) = self.current.take() {
            let ns = at.saturating_sub(since);
            match self.spent.iter_mut().find(|(w, _, _)| *w == who) {
                Some(e) => {
                    e.1 += ns;
                    e.2 += 1;
                }
                None => self.spent.push((who, ns, 1)),
            }
        }
    }

    fn close(mut self, cpu: u32, end: u64) -> Span {
        self.end_callback(end);
        let main = self
            .spent
            .iter()
            .max_by(|a, b| {
                a.1.cmp(&b.1)
                    .then(a.2.cmp(&b.2))
                    .then(b.0.key().cmp(&a.0.key()))
            })
            .and_then(|(who, _, _)| match *who {
                Who::Named(f, k) => Some((f, k)),
                _ => None,
            });
        Span {
            cpu,
            start: self.start,
            end,
            irq: self.irq,
            timer_irq: self.timer_irq,
            vec: self.vec,
            ran: !self.spent.is_empty(),
            main,
        }
    }
}

impl Who {
    /// An order for ties (first seen would depend on the map).
    fn key(&self) -> (u8, Sym, TimerKind) {
        match *self {
            Who::Own => (0, 0, TimerKind::Hrtimer),
            Who::Unknown => (1, 0, TimerKind::Hrtimer),
            Who::Named(f, k) => (2, f, k),
        }
    }
}

/// The timer work of a window's CPUs.
#[derive(Debug, Clone, Default)]
pub(crate) struct TimerWork {
    spans: Vec<Span>,
    /// The woken task's own expiry: (timer CPU, its expire entry time).
    own: Option<(u32, u64)>,
}

impl TimerWork {
    /// The timer work of the window's timer CPU and task CPU.
    pub(crate) fn of(w: &Window, names: &Names, ctx: &Context) -> TimerWork {
        let p = &w.p;
        let e = p.intended;
        let s = p.run.max(e);
        let mut work = TimerWork {
            spans: Vec::new(),
            own: p.expire.map(|x| (p.timer_cpu, x)),
        };
        let mut cpus = vec![(p.timer_cpu, &w.timer_cpu_state)];
        if p.cpu != p.timer_cpu {
            cpus.push((p.cpu, &w.task_cpu_state));
        }
        for (cpu, st) in cpus {
            let mut switches: Vec<u64> = Vec::new();
            let mut stack: Vec<Open> = Vec::new();
            let mut spans: Vec<Span> = Vec::new();
            // What the CPU was in at the intended time.
            if st.softirq.is_some() {
                let mut open = Open::new(e, false, false, st.softirq);
                // The callback it ran last, before the window.
                if let Some(c) = &st.softirq_callback {
                    open.spent.push((work.who(cpu, c, names), 0, 1));
                }
                stack.push(open);
            }
            for &irq in &st.irqs {
                stack.push(Open::new(e, true, ctx.is_timer_irq(irq, names), None));
            }
            for c in &st.callbacks {
                let who = work.who(cpu, c, names);
                // Depth 0: the softirq; depth n: the n-th interrupt.
                let open = match c.depth {
                    0 => stack.iter_mut().find(|o| !o.irq),
                    d => stack.iter_mut().filter(|o| o.irq).nth(d as usize - 1),
                };
                if let Some(open) = open {
                    open.current = Some((who, e));
                }
            }
            for r in w.events.iter().filter(|r| r.cpu == cpu) {
                let ts = r.ts.clamp(e, s);
                match r.kind {
                    Kind::IrqEntry { name, .. } => {
                        stack.push(Open::new(ts, true, ctx.is_timer_irq(name, names), None))
                    }
                    Kind::IrqExit { .. } => {
                        while let Some(o) = stack.pop() {
                            let irq = o.irq;
                            spans.push(o.close(cpu, ts));
                            if irq {
                                break;
                            }
                        }
                    }
                    Kind::SoftirqEntry { vec } => {
                        stack.push(Open::new(ts, false, false, Some(vec)))
                    }
                    Kind::SoftirqExit { .. } => {
                        while let Some(o) = stack.pop() {
                            let irq = o.irq;
                            spans.push(o.close(cpu, ts));
                            if !irq {
                                break;
                            }
                        }
                    }
                    Kind::Switch { .. } => {
                        switches.push(ts);
                        while let Some(o) = stack.pop() {
                            spans.push(o.close(cpu, ts));
                        }
                    }
                    Kind::HrtimerExpireEntry { timer, .. } | Kind::TimerExpireEntry { timer } => {
                        let wheel = matches!(r.kind, Kind::TimerExpireEntry { .. });
                        if let Some(open) = stack.last_mut() {
                            open.end_callback(ts);
                            let c = Running {
                                timer,
                                since: r.ts,
                                wheel,
                                depth: if open.irq { 1 } else { 0 },
                            };
                            open.current = Some((work.who(cpu, &c, names), ts));
                        }
                    }
                    Kind::HrtimerExpireExit { .. } | Kind::TimerExpireExit { .. } => {
                        if let Some(open) = stack.last_mut() {
                            open.end_callback(ts);
                        }
                    }
                    _ => {}
                }
            }
            while let Some(o) = stack.pop() {
                spans.push(o.close(cpu, s));
            }
            // A timer interrupt that ran no callback raised the HRTIMER
            // softirq: it was for what the next one ran.
            spans.sort_by_key(|sp| sp.start);
            for i in 0..spans.len() {
                if !spans[i].timer_irq || spans[i].ran {
                    continue;
                }
                let end = spans[i].end;
                let next = spans
                    .iter()
                    .find(|sp| !sp.irq && sp.vec == Some(HRTIMER_SOFTIRQ) && sp.start >= end);
                if let Some(next) = next {
                    let switched = switches.iter().any(|&t| t >= end && t <= next.start);
                    if !switched {
                        spans[i].main = next.main.filter(|(_, k)| *k == TimerKind::SoftHrtimer);
                    }
                }
            }
            work.spans.extend(spans);
        }
        work
    }

    /// Whose time a callback's is.
    fn who(&self, cpu: u32, c: &Running, names: &Names) -> Who {
        if !c.wheel && self.own == Some((cpu, c.since)) {
            return Who::Own;
        }
        match names.callback(c.timer, c.since) {
            Some(f) => Who::Named(
                f,
                if c.wheel {
                    TimerKind::TimerList
                } else if c.depth > 0 {
                    TimerKind::Hrtimer
                } else {
                    TimerKind::SoftHrtimer
                },
            ),
            None => Who::Unknown,
        }
    }

    /// The named callback of another timer running at the current
    /// interrupt level of the CPU in state `st`.
    pub(crate) fn running(
        &self,
        cpu: u32,
        st: &CpuState,
        names: &Names,
    ) -> Option<(Sym, TimerKind)> {
        let depth = st.irqs.len() as u8;
        let c = st.callbacks.iter().rev().find(|c| c.depth == depth)?;
        match self.who(cpu, c, names) {
            Who::Named(f, k) => Some((f, k)),
            _ => None,
        }
    }

    /// The named callback whose work the CPU in state `st` did at `t`: the
    /// callback running at the CPU's current interrupt level, else the one
    /// the interrupt or softirq it is in was for. `None`: the woken task's
    /// own expiry, a callback the trace does not name, or no timer work.
    pub(crate) fn at(
        &self,
        cpu: u32,
        t: u64,
        st: &CpuState,
        names: &Names,
    ) -> Option<(Sym, TimerKind)> {
        let depth = st.irqs.len() as u8;
        if st.callbacks.iter().any(|c| c.depth == depth) {
            return self.running(cpu, st, names);
        }
        self.spans
            .iter()
            .filter(|sp| sp.cpu == cpu && sp.irq == (depth > 0) && sp.start <= t && t < sp.end)
            .max_by_key(|sp| sp.start)
            .and_then(|sp| sp.main)
    }
}
