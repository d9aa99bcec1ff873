//! The emulator's state, as the BPF maps hold it: wake-ups on their way,
//! timers, and each CPU's state and ring.

use std::collections::VecDeque;

use crate::records::{Ev, RING};

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pending {
    pub(super) expires: u64,
    pub(super) irq_at: u64,
    pub(super) woken_at: u64,
    pub(super) timer_cpu: u32,
    pub(super) soft: bool,
    /// From the `sched_waking`, for a switch put in.
    pub(super) prio: i32,
    pub(super) comm: [u8; 16],
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Timer {
    pub(super) softexpires: Option<i64>,
    pub(super) clockid: Option<i32>,
}

/// A CPU's state (`struct cpu_state`) and its ring (`struct ring`).
#[derive(Debug, Clone, Default)]
pub(super) struct Cpu {
    pub(super) soft: u64,
    pub(super) entered: u64,
    pub(super) in_callback: bool,
    pub(super) softirq: i32,
    pub(super) callback_soft: bool,
    pub(super) measured: u64,
    pub(super) second: u64,
    pub(super) windows: u32,
    pub(super) ring: VecDeque<Ev>,
    pub(super) logged: u64,
    /// The task the last switch left running (`None`: not known yet).
    pub(super) current: Option<i32>,
}

impl Cpu {
    pub(super) fn log(&mut self, ev: Ev) {
        if self.ring.len() == RING {
            self.ring.pop_front();
        }
        self.ring.push_back(ev);
        self.logged += 1;
    }

    /// `window_allowed`: this CPU may send another window this second.
    pub(super) fn window_allowed(&mut self, now: u64, max: u32) -> bool {
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
