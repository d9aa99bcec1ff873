//! latlab-fix: typed fixes for real-time latency.
//!
//! A cause that `latlab explain` or `latlab watch` names ("IRQ 24's handler
//! ran on the real-time CPU") calls for fixes: a [`Fix`] is one [`Knob`] of
//! the system, the [`Value`] it should take, when that takes effect
//! ([`Knob::takes`]) and what it costs. The types carry no I/O: `latlab-tune`
//! reads a knob's current value, writes the fix, verifies it and restores
//! the old value.
//!
//! ```
//! use latlab_fix::{Fix, Knob, Takes, Value};
//!
//! let fix = Fix::new(Knob::IrqAffinity { irq: 24 }, Value::Housekeeping, "IRQ 24 ran on the RT CPU");
//! assert_eq!(fix.knob.takes(), Takes::Runtime);
//! assert_eq!(fix.knob.to_string(), "/proc/irq/24/smp_affinity_list");
//! assert_eq!(fix.value.resolve(&[1], &[0]), "0");
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// One setting of a Linux system that bears on real-time latency.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "knob", rename_all = "snake_case")]
pub enum Knob {
    /// The CPUs an interrupt may run on, `/proc/irq/N/smp_affinity_list`.
    IrqAffinity {
        /// The IRQ number.
        irq: u32,
    },
    /// The CPUs of the unbound workqueues, `/sys/devices/virtual/workqueue/cpumask`.
    WorkqueueCpumask,
    /// The CPUs a (kernel) thread may run on, sched_setaffinity(2).
    TaskAffinity {
        /// The thread id.
        pid: i32,
        /// Its command name, for the reader and to check the pid was not reused.
        comm: String,
    },
    /// A thread's policy and priority, sched_setscheduler(2): values
    /// `fifo:50`, `rr:10`, `other:0`.
    TaskPriority {
        /// The thread id.
        pid: i32,
        /// Its command name.
        comm: String,
    },
    /// A net device's threaded NAPI, `/sys/class/net/DEV/threaded` (0 or 1).
    ThreadedNapi {
        /// The device (`eth0`).
        device: String,
    },
    /// A sysctl under `/proc/sys`, by its dotted name (`kernel.sched_rt_runtime_us`).
    Sysctl {
        /// The dotted name.
        name: String,
    },
    /// Whether a CPU may enter an idle state,
    /// `/sys/devices/system/cpu/cpuN/cpuidle/stateM/disable` (1 disables).
    IdleState {
        /// The CPU.
        cpu: usize,
        /// The state's index (`stateM`).
        state: usize,
    },
    /// A CPU's cpufreq governor, `/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor`.
    CpufreqGovernor {
        /// The CPU.
        cpu: usize,
    },
    /// Transparent hugepages, `/sys/kernel/mm/transparent_hugepage/enabled`.
    TransparentHugepages,
    /// Kernel same-page merging, `/sys/kernel/mm/ksm/run`.
    Ksm,
    /// A runtime isolated CPU partition: every other user task off the
    /// real-time CPUs (cgroup v2 `cpuset.cpus.partition = isolated`, or a
    /// v1 exclusive cpuset with load balancing off). Its value is the CPU list.
    CpusetPartition,
    /// A kernel boot parameter (`nohz_full`): takes effect at the next boot.
    BootParameter {
        /// The parameter's name.
        name: String,
    },
}

/// When a knob's new value takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Takes {
    /// As soon as it is written; undone by writing the old value.
    Runtime,
    /// At the next boot (the kernel command line).
    Reboot,
}

impl Knob {
    /// When a new value takes effect.
    pub fn takes(&self) -> Takes {
        match self {
            Knob::BootParameter { .. } => Takes::Reboot,
            _ => Takes::Runtime,
        }
    }

    /// The knob's file under `/proc` or `/sys`, where it has one.
    pub fn path(&self) -> Option<String> {
        Some(match self {
            Knob::IrqAffinity { irq } => format!("/proc/irq/{irq}/smp_affinity_list"),
            Knob::WorkqueueCpumask => "/sys/devices/virtual/workqueue/cpumask".into(),
            Knob::ThreadedNapi { device } => format!("/sys/class/net/{device}/threaded"),
            Knob::Sysctl { name } => format!("/proc/sys/{}", name.replace('.', "/")),
            Knob::IdleState { cpu, state } => {
                format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable")
            }
            Knob::CpufreqGovernor { cpu } => {
                format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
            }
            Knob::TransparentHugepages => "/sys/kernel/mm/transparent_hugepage/enabled".into(),
            Knob::Ksm => "/sys/kernel/mm/ksm/run".into(),
            Knob::TaskAffinity { .. }
            | Knob::TaskPriority { .. }
            | Knob::CpusetPartition
            | Knob::BootParameter { .. } => return None,
        })
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = self.path() {
            return f.write_str(&path);
        }
        match self {
            Knob::TaskAffinity { pid, comm } => write!(f, "affinity of {comm}:{pid}"),
            Knob::TaskPriority { pid, comm } => write!(f, "priority of {comm}:{pid}"),
            Knob::CpusetPartition => f.write_str("isolated cpuset partition"),
            Knob::BootParameter { name } => write!(f, "boot parameter {name}"),
            _ => unreachable!("every other knob has a path"),
        }
    }
}

/// The value a fix gives its knob: literal, or the CPU lists of the run,
/// which tune resolves once it knows them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Value {
    /// This exact text (`1`, `never`, `fifo:50`).
    Literal(String),
    /// The housekeeping CPUs (every online CPU not given to real time), as a list.
    Housekeeping,
    /// The real-time CPUs, as a list.
    RealTime,
}

impl Value {
    /// The literal value, given the real-time and housekeeping CPUs.
    pub fn resolve(&self, real_time: &[usize], housekeeping: &[usize]) -> String {
        match self {
            Value::Literal(text) => text.clone(),
            Value::Housekeeping => cpu_list(housekeeping),
            Value::RealTime => cpu_list(real_time),
        }
    }

    /// A literal value.
    pub fn literal(text: impl Into<String>) -> Value {
        Value::Literal(text.into())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Literal(text) => f.write_str(text),
            Value::Housekeeping => f.write_str("<housekeeping cpus>"),
            Value::RealTime => f.write_str("<rt cpus>"),
        }
    }
}

/// A CPU list as the kernel writes one: `0-3,6`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// What a fix costs the system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    /// Nothing measurable.
    None,
    /// Work moves to the housekeeping CPUs (they do more).
    Housekeeping,
    /// More power (idle states off, a fixed high frequency).
    Power,
    /// Less throughput (forced preemption, offloaded callbacks, no merging).
    Throughput,
    /// A safety net goes (RT throttling, the watchdogs).
    SafetyNet,
}

/// One proposed change: a knob, the value it should take, and the cause
/// that calls for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fix {
    /// The knob.
    #[serde(flatten)]
    pub knob: Knob,
    /// The value it should take.
    pub value: Value,
    /// The cause or rule that asks for it (`IRQ 24's handler ran on the RT CPU`).
    pub why: String,
    /// Set where the kernel cannot take it (a managed IRQ, a per-CPU
    /// kernel thread): why, instead of proposing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Fix {
    /// A fix the kernel can take.
    pub fn new(knob: Knob, value: Value, why: impl Into<String>) -> Fix {
        Fix {
            knob,
            value,
            why: why.into(),
            refused: None,
        }
    }

    /// What it costs.
    pub fn cost(&self) -> Cost {
        match &self.knob {
            Knob::IrqAffinity { .. }
            | Knob::WorkqueueCpumask
            | Knob::TaskAffinity { .. }
            | Knob::CpusetPartition => Cost::Housekeeping,
            Knob::IdleState { .. } | Knob::CpufreqGovernor { .. } => Cost::Power,
            Knob::Sysctl { name } if name == "kernel.sched_rt_runtime_us" => Cost::SafetyNet,
            Knob::Sysctl { name } if name.contains("watchdog") => Cost::SafetyNet,
            Knob::TransparentHugepages | Knob::Ksm | Knob::ThreadedNapi { .. } => Cost::Throughput,
            Knob::BootParameter { name } if name == "rcu_nocbs" || name == "preempt" => {
                Cost::Throughput
            }
            Knob::BootParameter { name }
                if ["isolcpus", "nohz_full", "irqaffinity"].contains(&name.as_str()) =>
            {
                Cost::Housekeeping
            }
            Knob::BootParameter { name } if name.contains("idle") || name.contains("cstate") => {
                Cost::Power
            }
            _ => Cost::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_the_kernel_writes_them() {
        assert_eq!(cpu_list(&[3, 0, 1, 2, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn a_fix_round_trips_through_json_with_its_knob_inline() {
        let fix = Fix::new(
            Knob::Sysctl {
                name: "kernel.sched_rt_runtime_us".into(),
            },
            Value::literal("-1"),
            "rt throttling",
        );
        let json = serde_json::to_value(&fix).unwrap();
        assert_eq!(json["knob"], "sysctl");
        assert_eq!(json["name"], "kernel.sched_rt_runtime_us");
        assert_eq!(
            fix.knob.path().unwrap(),
            "/proc/sys/kernel/sched_rt_runtime_us"
        );
        assert_eq!(fix.cost(), Cost::SafetyNet);
        let back: Fix = serde_json::from_value(json).unwrap();
        assert_eq!(back, fix);
    }
}
