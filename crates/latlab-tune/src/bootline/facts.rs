//! What the command line is made from: the CPUs, the running kernel, and
//! what the measured causes asked for.

use latlab_fix::Knob;
use latlab_rt::sysinfo::SystemInfo;

/// What a measured cause asks of the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Need {
    /// The scheduler tick interrupted the real-time CPU.
    Tick,
    /// RCU callbacks or its kthreads ran there.
    Rcu,
    /// A device interrupt's handler ran there.
    IrqAffinity,
    /// An unbound workqueue's worker ran there.
    Workqueue,
    /// The wake-up waited for the CPU to leave a deep idle state.
    Idle,
    /// The task waited for non-preemptible kernel code.
    Preemption,
    /// Another task (user or kernel) ran there.
    Isolation,
}

impl Need {
    /// What a fix's knob says its cause asks of the command line: the
    /// runtime knob's boot-time counterpart, or a boot parameter's own.
    /// `None` for knobs with none (a sysctl, THP, a thread's priority).
    pub fn of_knob(knob: &Knob) -> Option<Need> {
        Some(match knob {
            Knob::IrqAffinity { .. } => Need::IrqAffinity,
            Knob::WorkqueueCpumask => Need::Workqueue,
            Knob::TaskAffinity { .. } | Knob::CpusetPartition => Need::Isolation,
            Knob::IdleState { .. } => Need::Idle,
            Knob::BootParameter { name } => match name.as_str() {
                "nohz_full" | "skew_tick" => Need::Tick,
                "rcu_nocbs" | "rcutree.kthread_prio" => Need::Rcu,
                "irqaffinity" => Need::IrqAffinity,
                "isolcpus" => Need::Isolation,
                "preempt" => Need::Preemption,
                n if n.starts_with("workqueue.") => Need::Workqueue,
                n if n.contains("idle") || n.contains("cstate") => Need::Idle,
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The kernel's preemption model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptModel {
    /// `none` (server).
    NoForced,
    /// `voluntary` (desktop).
    Voluntary,
    /// `full`.
    Full,
    /// `lazy` (6.13+).
    Lazy,
    /// PREEMPT_RT.
    Rt,
    /// Not known (a PREEMPT_DYNAMIC kernel without debugfs).
    Unknown,
}

impl PreemptModel {
    /// From latlab's names (`SystemInfo::preemption_model`).
    pub fn from_name(name: Option<&str>) -> PreemptModel {
        match name {
            Some("none") => PreemptModel::NoForced,
            Some("voluntary") => PreemptModel::Voluntary,
            Some("full") => PreemptModel::Full,
            Some("lazy") => PreemptModel::Lazy,
            Some("rt") => PreemptModel::Rt,
            _ => PreemptModel::Unknown,
        }
    }
}

/// What the command line is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct BootFacts {
    /// The real-time CPUs.
    pub rt: Vec<usize>,
    /// The housekeeping CPUs.
    pub housekeeping: Vec<usize>,
    /// Every online CPU.
    pub online: Vec<usize>,
    /// The running kernel's `/proc/cmdline`.
    pub cmdline: String,
    /// Its preemption model.
    pub preemption: PreemptModel,
    /// Built with PREEMPT_DYNAMIC (`preempt=` works at boot).
    pub dynamic: bool,
    /// `uname -m`: `x86_64`, `aarch64`, ...
    pub arch: String,
    /// The measured task's SCHED_FIFO priority.
    pub task_priority: u32,
    /// What the measured causes asked for, each with why (the cause and its share).
    pub needs: Vec<(Need, String)>,
}

impl BootFacts {
    /// The facts of this system (as `SystemInfo::gather` found them) for
    /// these CPUs, the measured task's priority and the causes' needs.
    pub fn from_system(
        info: &SystemInfo,
        rt: &[usize],
        housekeeping: &[usize],
        online: &[usize],
        task_priority: u32,
        needs: Vec<(Need, String)>,
    ) -> BootFacts {
        BootFacts {
            rt: rt.to_vec(),
            housekeeping: housekeeping.to_vec(),
            online: online.to_vec(),
            cmdline: info.cmdline.clone(),
            preemption: PreemptModel::from_name(info.preemption_model.as_deref()),
            dynamic: info.kernel_version.contains("PREEMPT_DYNAMIC"),
            arch: info.machine.clone(),
            task_priority,
            needs,
        }
    }
}
