//! The normalised event model every trace format is turned into.
//!
//! The analysis only needs a handful of kernel events in detail (timers,
//! wake-ups, context switches, interrupts); every other event keeps its
//! name so it can be counted. Strings are interned once into [`Names`] so a
//! [`Rec`] is a small `Copy` value.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast non-cryptographic hasher for small keys (pids, addresses, names):
/// the per-event maps are hot, and the trace is not adversarial input to a
/// long-running service.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn write_i32(&mut self, v: i32) {
        self.write_u64(v as u32 as u64);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// An interned string (event name, task name, IRQ name).
pub type Sym = u32;

/// Softirq vector names, indexed by the kernel's `vec` number.
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The name of softirq vector `vec` (`"vec17"` when out of range).
pub fn softirq_name(vec: u8) -> String {
    SOFTIRQ_NAMES
        .get(vec as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("vec{vec}"))
}

/// What an event means to the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any other event (counted by name only).
    Other,
    /// `hrtimer_start`: a timer armed; `soft` is the soft expiry (the
    /// requested time), `expires` the hard one, both in the timer's clock.
    HrtimerStart {
        /// The hrtimer's address.
        timer: u64,
        /// Soft expiry (ns, timer clock).
        soft: u64,
        /// Hard expiry (ns, timer clock).
        expires: u64,
    },
    /// `hrtimer_expire_entry`: the timer's callback starts in the interrupt.
    HrtimerExpireEntry {
        /// The hrtimer's address.
        timer: u64,
        /// The timer clock's time at expiry (`now` field), if present.
        now: Option<u64>,
    },
    /// `hrtimer_expire_exit`: the callback returned.
    HrtimerExpireExit {
        /// The hrtimer's address.
        timer: u64,
    },
    /// `sched_waking` (or `sched_wakeup` when `waking` is false).
    Wake {
        /// The task woken.
        pid: i32,
        /// CPU it will run on, -1 if unknown.
        target_cpu: i32,
        /// True for `sched_waking`, false for `sched_wakeup`/`sched_wakeup_new`.
        waking: bool,
    },
    /// `sched_switch`.
    Switch {
        /// The task leaving the CPU.
        prev_pid: i32,
        /// True when the previous task is still runnable (was preempted).
        prev_runnable: bool,
        /// The task entering the CPU.
        next_pid: i32,
        /// Its kernel priority (0-99 RT, 100-139 normal), -1 if unknown.
        next_prio: i32,
        /// Its name.
        next_comm: Sym,
        /// The previous task's name.
        prev_comm: Sym,
    },
    /// `irq_handler_entry` or an x86 vector entry (`local_timer_entry`, ...).
    IrqEntry {
        /// IRQ number (-1 for vectors).
        irq: i32,
        /// Handler or vector name.
        name: Sym,
    },
    /// `irq_handler_exit` or a vector exit.
    IrqExit {
        /// IRQ number (-1 for vectors).
        irq: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// Vector number.
        vec: u8,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// Vector number.
        vec: u8,
    },
    /// An IPI sent to `target_cpu` (`ipi_send_cpu`), or to a mask of CPUs
    /// (`ipi_send_cpumask`, first 64 CPUs).
    IpiSend {
        /// Bit mask of target CPUs.
        mask: u64,
    },
    /// `latlab: cycle=.. intended=.. actual=.. latency=..` written to
    /// `trace_marker` by `latlab run --trace` for a late sample.
    Marker {
        /// Cycle number.
        cycle: u64,
        /// Intended wake-up (CLOCK_MONOTONIC ns).
        intended: u64,
        /// Actual wake-up (CLOCK_MONOTONIC ns).
        actual: u64,
    },
}

/// One normalised event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    /// Timestamp (ns, trace clock).
    pub ts: u64,
    /// CPU that logged it.
    pub cpu: u32,
    /// Task running when it was logged (-1 when the format does not say).
    pub pid: i32,
    /// Event name.
    pub name: Sym,
    /// Meaning.
    pub kind: Kind,
}

/// The string table for [`Sym`]s, plus task names learned from the trace.
#[derive(Debug, Clone, Default)]
pub struct Names {
    strings: Vec<String>,
    index: FastMap<String, Sym>,
    comms: FastMap<i32, Sym>,
}

impl Names {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Interns `s`.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as Sym;
        self.strings.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    /// The string of `sym` (`"?"` when unknown).
    pub fn get(&self, sym: Sym) -> &str {
        self.strings
            .get(sym as usize)
            .map(|s| s.as_str())
            .unwrap_or("?")
    }

    /// Records that `pid` is called `comm` (raw bytes, up to a NUL) and
    /// returns its symbol; cheap when the name is already known.
    pub fn set_comm_bytes(&mut self, pid: i32, comm: &[u8]) -> Sym {
        let comm = comm.split(|&b| b == 0).next().unwrap_or(comm);
        if let Some(&s) = self.comms.get(&pid) {
            if self.strings[s as usize].as_bytes() == comm {
                return s;
            }
        }
        let s = self.intern(&String::from_utf8_lossy(comm));
        self.set_comm(pid, s);
        s
    }

    /// Records that `pid` is called `comm` (the latest name wins).
    pub fn set_comm(&mut self, pid: i32, comm: Sym) {
        if pid > 0 {
            self.comms.insert(pid, comm);
        }
    }

    /// The name of `pid` (`<idle>` for 0, `<...>` when unknown).
    pub fn comm(&self, pid: i32) -> &str {
        if pid == 0 {
            return "<idle>";
        }
        self.comms
            .get(&pid)
            .map(|&s| self.get(s))
            .unwrap_or("<...>")
    }

    /// All pids with a known name.
    pub fn pids(&self) -> impl Iterator<Item = (i32, &str)> {
        self.comms.iter().map(|(&p, &s)| (p, self.get(s)))
    }
}

/// Parses a latlab `trace_marker` sample line
/// (`latlab: cycle=7 intended=1000 actual=1250 latency=250`).
pub fn parse_marker(text: &str) -> Option<Kind> {
    let rest = text.trim().strip_prefix("latlab:")?;
    let (mut cycle, mut intended, mut actual) = (None, None, None);
    for part in rest.split_whitespace() {
        let (k, v) = part.split_once('=')?;
        let v: u64 = v.parse().ok()?;
        match k {
            "cycle" => cycle = Some(v),
            "intended" => intended = Some(v),
            "actual" => actual = Some(v),
            _ => {}
        }
    }
    Some(Kind::Marker {
        cycle: cycle?,
        intended: intended?,
        actual: actual?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_line_parses_and_junk_does_not() {
        assert_eq!(
            parse_marker("latlab: cycle=7 intended=1000 actual=1250 latency=250\n"),
            Some(Kind::Marker {
                cycle: 7,
                intended: 1000,
                actual: 1250
            })
        );
        assert_eq!(parse_marker("hello world"), None);
        assert_eq!(parse_marker("latlab: cycle=x intended=1 actual=2"), None);
    }

    #[test]
    fn names_intern_once() {
        let mut n = Names::new();
        let a = n.intern("sched_switch");
        assert_eq!(n.intern("sched_switch"), a);
        assert_ne!(n.intern("irq"), a);
        n.set_comm(5, a);
        assert_eq!(n.comm(5), "sched_switch");
        assert_eq!(n.comm(0), "<idle>");
        assert_eq!(n.comm(9), "<...>");
    }
}
