//! A watched task switched in: its latencies into the histograms, its
//! window sent when late (or as a baseline).

use latlab_measure::histogram::bucket_index;

use super::input::Event;
use super::state::Cpu;
use super::{BpfEmulator, MAX_BUCKETS, MAX_QUEUED_WINDOWS};
use crate::histograms::PREEMPTION_KIND;
use crate::records::{Head, RawWindow, RING};

impl BpfEmulator {
    pub(super) fn cpu(&mut self, cpu: u32) -> &mut Cpu {
        let i = cpu as usize;
        if self.cpus.len() <= i {
            self.cpus.resize_with(i + 1, Cpu::default);
        }
        &mut self.cpus[i]
    }

    pub(super) fn is_watched(&self, pid: i32) -> bool {
        pid > 0 && self.watched.contains(&(pid as u32))
    }

    pub(super) fn hist_add(&mut self, pid: u32, kind: u32, ns: u64) {
        let key = (pid, kind << 24 | bucket_index(ns) as u32);
        if let Some(n) = self.hist.get_mut(&key) {
            *n += 1;
        } else if self.hist.len() >= MAX_BUCKETS {
            self.counters.hist_full += 1;
        } else {
            self.hist.insert(key, 1);
        }
    }

    /// `on_switch` for a watched task: the sample, and its window when late
    /// (or a baseline one).
    pub(super) fn switch_in(&mut self, e: &Event, pid: i32, prio: i32, comm: [u8; 16]) {
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
