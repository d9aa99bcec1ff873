//! One event fed to the emulator: the BPF programs' tracepoint handlers,
//! and the switches the trace lacks put in.

use super::input::{Event, Input};
use super::state::{Pending, Timer};
use super::{
    no_comm, BpfEmulator, CLOCK_MONOTONIC, CLOCK_REALTIME, HRTIMER_MODE_REL, HRTIMER_SOFTIRQ,
    MAX_PENDING, MAX_TIMERS, SAME_CLOCK_NS,
};
use crate::records::{Ev, EvType};

impl BpfEmulator {
    /// A switch the trace lacks: the task running now is not the one the
    /// last switch left running.
    pub(super) fn missing_switch(&mut self, e: &Event) {
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

    pub(super) fn timer(&mut self, timer: u64) -> &mut Timer {
        if self.timers.len() >= MAX_TIMERS && !self.timers.contains_key(&timer) {
            self.timers.clear();
        }
        self.timers.entry(timer).or_default()
    }
}
