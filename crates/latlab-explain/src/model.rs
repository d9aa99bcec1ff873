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

/// The `HRTIMER` softirq vector: soft hrtimers expire in it.
pub const HRTIMER_SOFTIRQ: u8 = 8;

/// The `TIMER` softirq vector: timer-wheel (`timer_list`) timers expire in it.
pub const TIMER_SOFTIRQ: u8 = 1;

/// The name of softirq vector `vec` (`"vec17"` when out of range).
pub fn softirq_name(vec: u8) -> String {
    SOFTIRQ_NAMES
        .get(vec as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("vec{vec}"))
}

/// What a task is, as far as its name says: the kernel threads that do a
/// kernel's deferred work have fixed names.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ThreadKind {
    /// A threaded interrupt handler, `irq/NN-name` (every interrupt on
    /// PREEMPT_RT, and `threadirqs` or drivers that ask for one elsewhere);
    /// the number is the IRQ's (`/proc/irq/NN`).
    IrqThread(i32),
    /// `ktimers/N`: the timer softirqs (timer_list timers and soft
    /// hrtimers) of CPU N on PREEMPT_RT (SCHED_FIFO 1).
    Ktimers,
    /// `ksoftirqd/N`: softirq work the interrupts left over.
    Ksoftirqd,
    /// RCU's threads: `rcuc/N` (callbacks), `rcub/N` (priority boosting),
    /// `rcuop/N`/`rcuos/N` (offloaded callbacks), `rcu_preempt`, `rcu_sched`.
    Rcu,
    /// `kworker/...`: workqueue work.
    Kworker,
    /// `migration/N` (the stopper thread, highest priority), `cpuhp/N`,
    /// `watchdog/N`, `idle_inject/N`: per-CPU kernel threads above all.
    Stopper,
    /// A user task, or a kernel thread with another name.
    Other,
}

impl ThreadKind {
    /// The kind of a task called `comm`.
    pub fn of(comm: &str) -> ThreadKind {
        if let Some(rest) = comm.strip_prefix("irq/") {
            let digits = rest.split('-').next().unwrap_or("");
            if let Ok(irq) = digits.parse::<i32>() {
                return ThreadKind::IrqThread(irq);
            }
        }
        if comm.starts_with("ktimers/") {
            ThreadKind::Ktimers
        } else if comm.starts_with("ksoftirqd/") {
            ThreadKind::Ksoftirqd
        } else if comm.starts_with("rcu") {
            ThreadKind::Rcu
        } else if comm.starts_with("kworker/") {
            ThreadKind::Kworker
        } else if ["migration/", "cpuhp/", "watchdog/", "idle_inject/"]
            .iter()
            .any(|p| comm.starts_with(p))
        {
            ThreadKind::Stopper
        } else {
            ThreadKind::Other
        }
    }
}

/// A kernel priority (`prio` of sched events: 0-98 real-time, 100-139
/// normal) as a user sets it: `rt priority 50` (`chrt -f 50`), `nice 0`;
/// `None` for an unknown one (-1).
pub fn user_priority(prio: i32) -> Option<String> {
    match prio {
        0..=98 => Some(format!("rt priority {}", 99 - prio)),
        100..=139 => Some(format!("nice {}", prio - 120)),
        _ => None,
    }
}

/// The `chrt` priority of a kernel priority (`Some(50)` for 49); `None`
/// for a task that is not real-time or unknown.
pub fn rt_priority(prio: i32) -> Option<i32> {
    (0..=98).contains(&prio).then(|| 99 - prio)
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
    /// `timer_expire_entry`: a timer-wheel (`timer_list`) timer's callback
    /// starts, in the `TIMER` softirq (its function: [`Names::callback`]).
    TimerExpireEntry {
        /// The timer_list's address.
        timer: u64,
    },
    /// `timer_expire_exit`: the timer-wheel callback returned.
    TimerExpireExit {
        /// The timer_list's address.
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

/// The string table for [`Sym`]s, plus what the trace names on the way:
/// task names by pid, and timer callbacks by the timer's address.
#[derive(Debug, Clone, Default)]
pub struct Names {
    strings: Vec<String>,
    index: FastMap<String, Sym>,
    comms: FastMap<i32, Sym>,
    /// Per timer address, the callback function from each moment the trace
    /// logged one (time order; a new entry only when it changed: an
    /// address freed and reused by another timer).
    callbacks: FastMap<u64, Vec<(u64, Sym)>>,
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

    /// Records that the timer at address `timer` (an hrtimer or a
    /// timer_list) ran the callback `function` at `at` (trace clock ns): the
    /// `function` field of `hrtimer_expire_entry`/`timer_expire_entry`,
    /// symbolized. Cheap when nothing changed, and the same calls again (a
    /// second pass over the trace) change nothing.
    pub fn set_callback(&mut self, timer: u64, at: u64, function: Sym) {
        if self.callback(timer, at) == Some(function) {
            return;
        }
        let seen = self.callbacks.entry(timer).or_default();
        let i = seen.partition_point(|&(t, _)| t <= at);
        seen.insert(i, (at, function));
    }

    /// The callback function the timer at address `timer` ran at `at`, as
    /// the trace last named it then (`None` when the trace does not say:
    /// events without a `function` field, or `latlab watch`'s).
    pub fn callback(&self, timer: u64, at: u64) -> Option<Sym> {
        let seen = self.callbacks.get(&timer)?;
        let i = seen.partition_point(|&(t, _)| t <= at);
        i.checked_sub(1).map(|i| seen[i].1)
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
    fn thread_kinds_and_priorities_come_from_names_and_prio() {
        assert_eq!(ThreadKind::of("irq/25-virtio0-"), ThreadKind::IrqThread(25));
        assert_eq!(ThreadKind::of("irq/9-acpi"), ThreadKind::IrqThread(9));
        assert_eq!(ThreadKind::of("irq/x-acpi"), ThreadKind::Other);
        assert_eq!(ThreadKind::of("ktimers/0"), ThreadKind::Ktimers);
        assert_eq!(ThreadKind::of("ksoftirqd/3"), ThreadKind::Ksoftirqd);
        assert_eq!(ThreadKind::of("rcuc/1"), ThreadKind::Rcu);
        assert_eq!(ThreadKind::of("rcu_preempt"), ThreadKind::Rcu);
        assert_eq!(ThreadKind::of("kworker/0:1H"), ThreadKind::Kworker);
        assert_eq!(ThreadKind::of("migration/0"), ThreadKind::Stopper);
        assert_eq!(ThreadKind::of("dd"), ThreadKind::Other);
        assert_eq!(user_priority(49).as_deref(), Some("rt priority 50"));
        assert_eq!(user_priority(120).as_deref(), Some("nice 0"));
        assert_eq!(user_priority(-1), None);
        assert_eq!((rt_priority(4), rt_priority(120)), (Some(95), None));
    }

    #[test]
    fn a_timers_callback_is_the_one_named_at_that_time() {
        let mut n = Names::new();
        let (pace, wake) = (n.intern("tcp_pace_kick"), n.intern("hrtimer_wakeup"));
        assert_eq!(n.callback(0x10, 5), None);
        n.set_callback(0x10, 100, pace);
        n.set_callback(0x10, 200, pace);
        // The address freed and reused by another timer.
        n.set_callback(0x10, 300, wake);
        assert_eq!(n.callback(0x10, 99), None);
        assert_eq!(n.callback(0x10, 100), Some(pace));
        assert_eq!(n.callback(0x10, 299), Some(pace));
        assert_eq!(n.callback(0x10, 300), Some(wake));
        assert_eq!(n.callback(0x20, 300), None);
        // A second pass over the trace names them again: nothing changes.
        let before = n.callbacks.clone();
        for (at, f) in [(100, pace), (200, pace), (300, wake)] {
            n.set_callback(0x10, at, f);
        }
        assert_eq!(n.callbacks, before);
        assert_eq!(n.callbacks[&0x10].len(), 2);
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
