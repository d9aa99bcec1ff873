//! Analysis layer: per-window decomposition of the latency, the paper's
//! Table 2 (events per window, normal vs late), and causes ranked across all
//! late windows.
//!
//! A window runs from the intended expiry `E` to the moment the task runs
//! `S`, in three phases: `E..X` waiting for the timer interrupt
//! (`hrtimer_expire_entry` at `X`), `X..W` inside it up to the task's
//! wake-up `W`, and `W..S` waiting for the CPU. Every nanosecond is given to
//! exactly one [`Cause`], by what the relevant CPU was doing at that moment,
//! so the parts add up to the latency exactly.
//!
//! A soft hrtimer (one that expires in the `HRTIMER` softirq: on
//! PREEMPT_RT every hrtimer not marked hard) splits `E..X` at the hard
//! timer interrupt `H` that noticed the expiry: `E..H` waiting for that
//! interrupt, `H..X` waiting for the softirq thread (`ktimers/N` on
//! PREEMPT_RT) to run the callback ([`Cause::SoftTimer`]).
//!
//! On PREEMPT_RT ([`Context::rt`]) softirqs run in preemptible task
//! context, so their time is the time of the thread that runs them (an
//! `irq/NN-name` thread, `ktimers/N`, `ksoftirqd/N`, or the task that
//! raised them), and interrupts are handled by `irq/NN-name` threads:
//! kernel threads are named by kind ([`ThreadKind`]) with the priorities
//! that decided the order.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::{
    rt_priority, softirq_name, user_priority, Kind, Names, Sym, ThreadKind, HRTIMER_SOFTIRQ,
    TIMER_SOFTIRQ,
};
use crate::separate::{CpuState, Window};
use crate::timer_work::TimerWork;

/// Why part of a wake-up latency went by.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(tag = "category", rename_all = "snake_case")]
pub enum Cause {
    /// The timer interrupt came late while this task ran and the CPU logged
    /// events: interrupts were disabled in the kernel on its behalf.
    TimerIrqDelay {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
    },
    /// The CPU logged nothing at all for a while: before the timer
    /// interrupt (interrupts off in untraced code), inside an interrupt for
    /// over [`STALL_NS`], or in a task for over [`TASK_STALL_NS`] while the
    /// woken task (or its timer's thread) waited; either way the (virtual)
    /// CPU may not have been running (hypervisor preemption, SMI).
    SilentGap {
        /// The task the CPU was running (`comm:pid`; `comm` in a [`CauseRow`]).
        task: String,
        /// Where the silence was.
        within: Silence,
    },
    /// Time inside the timer interrupt itself: its entry and exit, the
    /// woken task's own expiry and wake-up, and callbacks of other timers
    /// the trace does not name (no `function` field, or `latlab watch`).
    HrtimerInterrupt,
    /// Another timer's callback, and the timer interrupt or softirq that
    /// ran it, held the CPU: a named function (the `function` field of
    /// `hrtimer_expire_entry`/`timer_expire_entry`, symbolized with the
    /// trace's kallsyms). The time of an interrupt or softirq between
    /// callbacks is the callback it ran longest; a timer interrupt that ran
    /// no callback, only raised the `HRTIMER` softirq, is the time of the
    /// soft hrtimer callbacks that softirq ran.
    TimerCallback {
        /// The callback function (`tcp_pace_kick`, `tick_nohz_handler`;
        /// `0xffff...` when the trace has no symbol for it).
        function: String,
        /// The kind of timer, by where its callback ran.
        timer: TimerKind,
    },
    /// A hard interrupt handler ran.
    IrqHandler {
        /// Handler (or x86 vector) name.
        name: String,
    },
    /// A softirq ran (a kernel without PREEMPT_RT: softirqs are not
    /// preemptible there).
    Softirq {
        /// Vector name (NET_RX, NET_TX, BLOCK, TIMER, HRTIMER, RCU, SCHED, TASKLET, ...).
        vector: String,
    },
    /// A soft hrtimer had expired and its hard interrupt had come, but its
    /// callback waits for the thread that runs the `HRTIMER` softirq
    /// (`ktimers/N` on PREEMPT_RT, `ksoftirqd/N` or the interrupted task
    /// elsewhere), while `task` ran: another task that outranked the thread
    /// (or held the CPU), or the thread itself busy with other softirq work.
    SoftTimer {
        /// The thread that ran the callback (`comm:pid`).
        thread: String,
        /// The task the CPU ran meanwhile (`comm:pid`; `comm` in a [`CauseRow`]).
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
    },
    /// A threaded interrupt handler (`irq/NN-name`) ran before the task.
    IrqThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
        /// The IRQ number (`/proc/irq/NN`).
        irq: i32,
        /// Its kernel priority (0-98 real-time; -1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// A softirq thread (`ktimers/N`, `ksoftirqd/N`) ran before the task.
    SoftirqThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// Another kernel thread with a known role (RCU, workqueue, stopper)
    /// ran before the task.
    KernelThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// Another task ran on the CPU before the woken task.
    OtherTask {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
        /// Its kernel priority (0-99 real-time, 100-139 normal; -1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// The task running when the wake-up came kept the CPU in the kernel
    /// with no preemption point (non-preemptible kernel code), though the
    /// woken task outranked it.
    NonPreemptibleKernel {
        /// `comm:pid` in a window's parts; `comm` in a ranked [`CauseRow`].
        task: String,
    },
    /// The CPU was idle: leaving the idle state (C-state exit, or a halted
    /// vCPU waiting to be run again).
    IdleExit,
    /// The task itself still ran when its timer expired: it had not gone
    /// to sleep yet (its previous cycle overran the period, or it armed an
    /// expiry already past), so the wake-up could only come after it slept.
    TaskItself,
    /// Nothing in the trace says (state unknown, or the task itself).
    Unexplained,
}

/// The kind of timer whose callback ran, by where it ran.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// An hrtimer expired in the timer interrupt (a hard hrtimer).
    Hrtimer,
    /// An hrtimer expired in the `HRTIMER` softirq (a soft hrtimer).
    SoftHrtimer,
    /// A timer-wheel timer (`timer_list`), expired in the `TIMER` softirq.
    TimerList,
}

impl TimerKind {
    /// `soft hrtimer, HRTIMER softirq` style.
    pub fn describe(self) -> &'static str {
        match self {
            TimerKind::Hrtimer => "hrtimer, in the timer interrupt",
            TimerKind::SoftHrtimer => "soft hrtimer, in the HRTIMER softirq",
            TimerKind::TimerList => "timer_list, in the TIMER softirq",
        }
    }
}

/// Where a [`Cause::SilentGap`] was.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Silence {
    /// Before the timer interrupt: nothing logged from the expiry on.
    BeforeInterrupt,
    /// Inside an interrupt (the timer interrupt had come).
    InInterrupt,
    /// In a task, after the timer interrupt, while the woken task or the
    /// thread that runs its soft timer waited: not even the scheduler tick
    /// was logged.
    InTask,
    /// In the idle task after the wake-up, for over [`STALL_NS`]: an idle
    /// CPU told to run the woken task switches in microseconds.
    InIdle,
}

/// A silence longer than this in a task that holds up the woken task (or
/// its soft timer's thread) is a [`Cause::SilentGap`] when the trace logs
/// timer interrupts: the scheduler tick (HZ 100 or more) would have logged
/// one, so interrupts were off or the CPU did not run.
pub const TASK_STALL_NS: u64 = 10_000_000;

/// A silence longer than this inside an interrupt (no event logged on the
/// CPU) is a [`Cause::SilentGap`]: interrupt code runs for microseconds
/// between two trace events, so a stretch this long means the CPU did not
/// run (a vCPU the host did not schedule, an SMI).
pub const STALL_NS: u64 = 1_000_000;

/// ` (rt priority 50)`, or nothing for an unknown priority.
fn prio_note(prio: i32) -> String {
    user_priority(prio)
        .map(|p| format!(" ({p})"))
        .unwrap_or_default()
}

/// `, above the task's rt priority 40` style comparison, or nothing.
fn versus(prio: i32, task_prio: i32) -> String {
    match (user_priority(prio), user_priority(task_prio)) {
        (Some(_), Some(t)) if prio <= task_prio => format!(", at or above the task's {t}"),
        (Some(_), Some(t)) => format!(", below the task's {t}"),
        _ => String::new(),
    }
}

/// The command of a `comm:pid` label (the label itself when it has no pid).
fn comm_of(label: &str) -> &str {
    match label.rsplit_once(':') {
        Some((c, p)) if p.parse::<i32>().is_ok() => c,
        _ => label,
    }
}

/// What to do about a task (`comm:pid` label) of priority `prio` that
/// ran before one of `task_prio`: raise the task, lower the other, or part
/// them.
fn priority_advice(label: &str, prio: i32, task_prio: i32) -> String {
    let who = comm_of(label);
    let pid = match label.rsplit_once(':') {
        Some((_, p)) if p.parse::<i32>().is_ok() => p.to_string(),
        _ => "<its pid>".to_string(),
    };
    match (rt_priority(prio), rt_priority(task_prio)) {
        (Some(p), Some(t)) if prio <= task_prio => format!(
            "{who} runs at SCHED_FIFO/RR {p}, at or above the task's {t}: give the task a priority above {p} (chrt -f {}, latlab run --priority {}) or lower {who} below {t} (chrt -f -p {} {pid})",
            (p + 1).min(99),
            (p + 1).min(99),
            (t - 1).max(1)
        ),
        (Some(p), None) => format!(
            "{who} runs at SCHED_FIFO/RR {p} and the task is not real-time: run the task SCHED_FIFO above {p} (chrt -f {})",
            (p + 1).min(99)
        ),
        _ => format!("check the task's policy and priority (SCHED_FIFO) against {who}'s"),
    }
}

impl Cause {
    /// The category name (the JSON `category` tag).
    pub fn category(&self) -> &'static str {
        match self {
            Cause::TimerIrqDelay { .. } => "timer_irq_delay",
            Cause::SilentGap { .. } => "silent_gap",
            Cause::HrtimerInterrupt => "hrtimer_interrupt",
            Cause::TimerCallback { .. } => "timer_callback",
            Cause::IrqHandler { .. } => "irq_handler",
            Cause::Softirq { .. } => "softirq",
            Cause::SoftTimer { .. } => "soft_timer",
            Cause::IrqThread { .. } => "irq_thread",
            Cause::SoftirqThread { .. } => "softirq_thread",
            Cause::KernelThread { .. } => "kernel_thread",
            Cause::OtherTask { .. } => "other_task",
            Cause::NonPreemptibleKernel { .. } => "non_preemptible_kernel",
            Cause::IdleExit => "idle_exit",
            Cause::TaskItself => "task_itself",
            Cause::Unexplained => "unexplained",
        }
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        match self {
            Cause::TimerIrqDelay { task } => {
                format!("timer interrupt delayed while {task} ran: interrupts off in the kernel (or, on a VM, the virtual timer delivered late)")
            }
            Cause::SilentGap { task, within: Silence::BeforeInterrupt } => format!(
                "timer interrupt delayed, CPU logged nothing (running {task}): interrupts off in untraced code, or the vCPU was not running (hypervisor, SMI)"
            ),
            Cause::SilentGap { task, within: Silence::InInterrupt } => format!(
                "CPU logged nothing for over {} inside an interrupt (running {task}): the vCPU was not running (hypervisor), or an SMI",
                crate::report::fmt_ns(STALL_NS)
            ),
            Cause::SilentGap { task, within: Silence::InIdle } => format!(
                "CPU logged nothing for over {} after the wake-up, idle ({task}): the vCPU was not running (hypervisor), or an SMI",
                crate::report::fmt_ns(STALL_NS)
            ),
            Cause::SilentGap { task, within: Silence::InTask } => format!(
                "CPU logged nothing for over {} while {task} ran, not even the scheduler tick: interrupts off in untraced code, or the vCPU was not running (hypervisor, SMI)",
                crate::report::fmt_ns(TASK_STALL_NS)
            ),
            Cause::HrtimerInterrupt => "hrtimer interrupt (the wake-up itself, and expired timers the trace does not name)".into(),
            Cause::TimerCallback { function, timer } => {
                format!(
                    "timer callback {function} ({}): {}",
                    timer.describe(),
                    crate::callbacks::known(function).what
                )
            }
            Cause::IrqHandler { name } => format!("interrupt handler {name}"),
            Cause::Softirq { vector } => format!("softirq {vector}"),
            Cause::SoftTimer { thread, task, prio } => {
                if comm_of(thread) == comm_of(task) {
                    format!("soft hrtimer: {thread} ran other softirq work before its callback")
                } else {
                    format!(
                        "soft hrtimer: its callback waited for {thread} while {task}{} ran",
                        prio_note(*prio)
                    )
                }
            }
            Cause::IrqThread { task, irq, prio, task_prio } => format!(
                "threaded handler of IRQ {irq}, {task}{}, ran first{}",
                prio_note(*prio),
                versus(*prio, *task_prio)
            ),
            Cause::SoftirqThread { task, prio, task_prio } => format!(
                "softirq thread {task}{} ran first{}",
                prio_note(*prio),
                versus(*prio, *task_prio)
            ),
            Cause::KernelThread { task, prio, task_prio } => format!(
                "kernel thread {task}{} ran first{}",
                prio_note(*prio),
                versus(*prio, *task_prio)
            ),
            Cause::OtherTask { task, prio, task_prio } => {
                if (0..100).contains(prio) {
                    format!(
                        "real-time task {task}{} ran first{}",
                        prio_note(*prio),
                        versus(*prio, *task_prio)
                    )
                } else {
                    format!("task {task} ran first")
                }
            }
            Cause::NonPreemptibleKernel { task } => {
                format!("{task} held the CPU in non-preemptible kernel code")
            }
            Cause::IdleExit => "exit from an idle state".into(),
            Cause::TaskItself => "the task itself still ran past its expiry (its previous cycle overran the period)".into(),
            Cause::Unexplained => "unexplained".into(),
        }
    }

    /// What to do about it; `rt` is a PREEMPT_RT kernel (where the usual
    /// advice, "use PREEMPT_RT", has been taken).
    pub fn recommendation(&self, related: &[(String, u64)], rt: bool) -> String {
        let allocs = related.iter().any(|(n, _)| n.starts_with("mm_page_alloc"));
        let base = match self {
            Cause::Softirq { vector } if vector.starts_with("NET") => {
                "network softirqs on the RT CPU: enable threaded NAPI (echo 1 > /sys/class/net/<dev>/threaded), move the NIC's IRQ affinity away from the RT CPU, or use PREEMPT_RT".to_string()
            }
            Cause::Softirq { vector } if vector == "BLOCK" => {
                "block I/O completion on the RT CPU: move the storage IRQ affinity away from it, or use PREEMPT_RT".into()
            }
            Cause::Softirq { vector } if vector == "RCU" => {
                "RCU callbacks on the RT CPU: boot with rcu_nocbs=<rt cpus> (and nohz_full)".into()
            }
            Cause::Softirq { vector } if vector == "HRTIMER" || vector == "TIMER" => format!(
                "timer callbacks in the {vector} softirq on the RT CPU ({}), which the trace does not name: record with latlab record (hrtimer_expire_entry and timer_expire_entry with their function) and run latlab explain on it to see which, then move the work that arms them off the RT CPU; IRQ affinity does not move timers",
                if vector == "HRTIMER" {
                    "soft hrtimers armed on this CPU, such as TCP pacing"
                } else {
                    "timer_list timers armed on this CPU, such as TCP retransmits and delayed work"
                }
            ),
            Cause::Softirq { .. } => {
                "softirq work on the RT CPU: move the interrupts that raise it away (IRQ affinity), or use PREEMPT_RT (softirqs become preemptible threads)".into()
            }
            Cause::TimerCallback { function, .. } => crate::callbacks::known(function).fix,
            Cause::IrqHandler { name } if rt => format!(
                "the hard part of interrupt {name} (its primary handler, which wakes the irq thread) ran on the RT CPU: set its affinity (/proc/irq/N/smp_affinity_list) to other CPUs"
            ),
            Cause::IrqHandler { name } => format!(
                "interrupt {name} on the RT CPU: set its affinity (/proc/irq/N/smp_affinity) to other CPUs, or use threaded IRQs/PREEMPT_RT"
            ),
            Cause::SoftTimer { thread, task, prio } => {
                let thread_comm = comm_of(thread);
                let why = if comm_of(task) == thread_comm {
                    format!("{thread_comm} was busy with other timers and softirq work")
                } else if rt_priority(*prio).is_some() {
                    format!(
                        "{task}{} outranks {thread_comm}: lower it or move it off this CPU (its IRQ affinity, if it is an irq thread)",
                        prio_note(*prio)
                    )
                } else {
                    format!("{task} held the CPU in a section {thread_comm} could not preempt")
                };
                format!(
                    "the timer is a soft hrtimer: its callback runs in {thread_comm} (on PREEMPT_RT every hrtimer not marked hard: posix timers, itimer, timerfd, and the sleep of a task that is not real-time; ktimers/N runs at SCHED_FIFO 1), behind any higher-priority work on the CPU. Sleep with clock_nanosleep from a SCHED_FIFO/RR thread (a hard hrtimer, expired in the interrupt), or raise {thread_comm} (chrt -f -p <prio> <its pid>); here {why}"
                )
            }
            Cause::IrqThread { task, irq, prio, task_prio } => {
                let comm = comm_of(task);
                let affinity = format!(
                    "or move IRQ {irq} off this CPU (echo <other cpus> > /proc/irq/{irq}/smp_affinity_list; a managed IRQ, such as a per-queue virtio or NVMe one, cannot move: keep the I/O that raises it off this CPU)"
                );
                if *prio >= 0 && *task_prio >= 0 && prio <= task_prio {
                    format!("{}, {affinity}", priority_advice(task, *prio, *task_prio))
                } else {
                    format!("{comm} (the handler of IRQ {irq}) ran first: {affinity}")
                }
            }
            Cause::SoftirqThread { task, prio, task_prio } => {
                let comm = comm_of(task);
                let what = if ThreadKind::of(comm) == ThreadKind::Ktimers {
                    "it runs the timer softirqs (timer_list and soft hrtimer callbacks) of its CPU"
                } else {
                    "it runs softirq work the interrupts left over (network, block, tasklets)"
                };
                if *prio >= 0 && *task_prio >= 0 && prio <= task_prio {
                    format!("{what}: {}", priority_advice(task, *prio, *task_prio))
                } else {
                    format!("{what}: move the interrupts and timers that raise it off this CPU (IRQ affinity, nohz_full), or run the task at a higher priority")
                }
            }
            Cause::KernelThread { task, prio, task_prio } => {
                let comm = comm_of(task);
                let what = match ThreadKind::of(comm) {
                    ThreadKind::Rcu => "RCU work on this CPU: boot with rcu_nocbs=<rt cpus> (callbacks offloaded) and rcutree.kthread_prio below the task's priority",
                    ThreadKind::Kworker => "workqueue work on this CPU: keep unbound workqueues off it (/sys/devices/virtual/workqueue/cpumask) and the work that queues per-CPU items away from it",
                    ThreadKind::Stopper => "a per-CPU kernel thread above every task (stop_machine, CPU hotplug, migration): avoid CPU hotplug and affinity changes during the run, isolate the CPU (isolcpus, nohz_full)",
                    _ => "a kernel thread on this CPU: keep its work off the RT CPU",
                };
                if *prio >= 0 && *task_prio >= 0 && prio <= task_prio && ThreadKind::of(comm) != ThreadKind::Stopper {
                    format!("{what}; {}", priority_advice(task, *prio, *task_prio))
                } else {
                    what.to_string()
                }
            }
            Cause::NonPreemptibleKernel { task } if task.starts_with("ksoftirqd") && !rt => {
                "softirq work deferred to ksoftirqd held the CPU: threaded NAPI / IRQ affinity away from the RT CPU, and preempt=full or PREEMPT_RT".into()
            }
            Cause::NonPreemptibleKernel { task } if rt => format!(
                "{task} kept the CPU although the woken task outranked it: on PREEMPT_RT only raw spinlocks, preempt_disable/local_irq_disable and migrate_disable sections do that; keep {task} off the RT CPU (affinity, cpusets, isolcpus), and find the section with the timerlat/osnoise tracers"
            ),
            Cause::NonPreemptibleKernel { task } => format!(
                "{task} ran long kernel code without a preemption point: boot with preempt=full (PREEMPT_DYNAMIC) or use PREEMPT_RT, or keep it off the RT CPU (affinity, cpusets, isolcpus)"
            ),
            Cause::TimerIrqDelay { task } if rt => format!(
                "{task} had interrupts off: on PREEMPT_RT only raw spinlocks and local_irq_disable sections do that; keep {task} off the RT CPU (affinity, cpusets), and find the section with the irqsoff or timerlat tracer (on a VM, check that the vCPU ran: steal time)"
            ),
            Cause::TimerIrqDelay { task } => format!(
                "{task} disabled interrupts in the kernel: keep it off the RT CPU (affinity, cpusets), or use PREEMPT_RT (spinlocks no longer disable interrupts)"
            ),
            Cause::SilentGap { .. } => {
                "nothing was logged: if this is a VM, pin the vCPUs to dedicated host CPUs or use bare metal (check steal time); on bare metal look for SMIs (hwlatdetect) or enable more tracepoints".into()
            }
            Cause::OtherTask { task, prio, task_prio } if (0..100).contains(prio) => {
                if *task_prio >= 0 {
                    format!("{}, or move {task} to another CPU", priority_advice(task, *prio, *task_prio))
                } else {
                    format!("{task} has equal or higher RT priority on the same CPU: give the measured task a higher priority or move {task} to another CPU")
                }
            }
            Cause::OtherTask { task, .. } => format!(
                "{task} was picked first: check the measured task's policy and priority (SCHED_FIFO), or move {task} away"
            ),
            Cause::IdleExit => {
                "deep idle states: hold /dev/cpu_dma_latency at 0 (latlab run does by default) or limit C-states (idle=poll, intel_idle.max_cstate=1); on a VM the halted vCPU must be rescheduled by the host (pin vCPUs)".into()
            }
            Cause::HrtimerInterrupt => {
                "time spent in the timer interrupt: its own cost and the task's expiry (a VM makes both dearer), and timers whose callbacks the trace does not name (latlab record logs them): spread or drop other timers on the RT CPU (nohz_full)".into()
            }
            Cause::TaskItself => {
                "the task's own cycle (or the lateness of its previous wake-up) took it past the next expiry: these are overruns, not wake-up latency; use a longer period or less work per cycle, and see the previous late periods for what delayed it".into()
            }
            Cause::Unexplained => {
                "the trace does not say: record with more events (irq, irq_vectors, sched, timer, syscalls) and check for lost events".into()
            }
        };
        if allocs {
            format!("{base}; it allocated pages (mm_page_alloc) while the task waited: pre-fault and mlock memory, keep memory-hungry work off the RT CPU")
        } else {
            base
        }
    }
}

/// One part of a window's decomposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Part {
    /// The cause.
    pub cause: Cause,
    /// Nanoseconds it accounts for.
    pub ns: u64,
}

/// Interrupts known by name to deliver hrtimer expiries: the x86 LAPIC
/// timer vector, the ARM generic timer (`arch_timer`), the Cortex-A9/A5
/// private timer (`twd`), RISC-V's `riscv-timer`.
fn is_timer_irq_name(name: &str) -> bool {
    name == "local_timer" || name.contains("arch_timer") || name == "twd" || name == "riscv-timer"
}

/// What the analysis knows of the traced kernel, the same for every window.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// A PREEMPT_RT kernel: softirqs run in preemptible threads, so their
    /// time is their thread's, and do not hold off the timer interrupt.
    pub rt: bool,
    /// Interrupts in which an hrtimer expired (the CPU's clock event
    /// device, whatever its name on this machine), learned from the
    /// windows; they count as timer interrupts beside the known names.
    pub timer_irqs: Vec<Sym>,
    /// Timer interrupts are in the trace (irq_vectors or irq_handler
    /// events): a CPU that runs with interrupts on logs the scheduler tick.
    pub ticks_traced: bool,
}

impl Context {
    /// The context of a trace: `rt` as the kernel was found, the timer
    /// interrupts learned from `windows` (the interrupt being handled on a
    /// CPU when an `hrtimer_expire_entry` was logged there).
    pub fn new(rt: bool, windows: &[Window], names: &Names) -> Context {
        let mut timer_irqs: Vec<Sym> = Vec::new();
        let mut ticks_traced = false;
        let mut top: Vec<(u32, Option<Sym>)> = Vec::new();
        for w in windows {
            top.clear();
            top.push((w.p.timer_cpu, w.timer_cpu_state.irqs.last().copied()));
            if w.p.cpu != w.p.timer_cpu {
                top.push((w.p.cpu, w.task_cpu_state.irqs.last().copied()));
            }
            for r in &w.events {
                let Some(slot) = top.iter_mut().find(|(c, _)| *c == r.cpu) else {
                    continue;
                };
                match r.kind {
                    Kind::IrqEntry { name, .. } => {
                        slot.1 = Some(name);
                        ticks_traced |= is_timer_irq_name(names.get(name));
                    }
                    Kind::IrqExit { .. } | Kind::Switch { .. } => slot.1 = None,
                    Kind::HrtimerExpireEntry { .. } => {
                        if let Some(n) = slot.1 {
                            if !timer_irqs.contains(&n) && timer_irqs.len() < 16 {
                                timer_irqs.push(n);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        ticks_traced |= !timer_irqs.is_empty();
        Context {
            rt,
            timer_irqs,
            ticks_traced,
        }
    }

    pub(crate) fn is_timer_irq(&self, irq: Sym, names: &Names) -> bool {
        self.timer_irqs.contains(&irq) || is_timer_irq_name(names.get(irq))
    }
}

fn task_label(names: &Names, pid: i32) -> String {
    format!("{}:{}", names.comm(pid), pid)
}

/// The phases of a window (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `E..H`: waiting for the timer interrupt.
    Interrupt,
    /// `H..X`: a soft hrtimer waiting for its softirq thread.
    SoftWait,
    /// `X..W`: in the callback, up to the wake-up.
    Callback,
    /// `W..S`: woken, waiting for the CPU.
    Run,
}

/// Splits a window's latency into causes; the parts add up to
/// `w.p.latency()` exactly.
pub fn decompose(w: &Window, names: &Names, ctx: &Context) -> Vec<Part> {
    let p = &w.p;
    let e = p.intended;
    let s = p.run.max(e);
    let x = p.expire.unwrap_or(s).clamp(e, s);
    let wk = p.wake.unwrap_or(x).clamp(x, s);
    let mut timer_st = w.timer_cpu_state.clone();
    let mut task_st = w.task_cpu_state.clone();
    let same_cpu = p.timer_cpu == p.cpu;
    let timer_irq = |st: &CpuState| st.irqs.iter().any(|&i| ctx.is_timer_irq(i, names));
    // A soft timer: the hard timer interrupt that raised the softirq (the
    // first one on the timer CPU from E on), and the thread that ran the
    // callback (the task on the timer CPU at X).
    let (h, soft_thread) = if p.soft {
        let mut h = if timer_irq(&timer_st) { Some(e) } else { None };
        let mut thread = timer_st.current;
        for r in w.events.iter().filter(|r| r.cpu == p.timer_cpu) {
            match r.kind {
                Kind::IrqEntry { name, .. } if h.is_none() && ctx.is_timer_irq(name, names) => {
                    h = Some(r.ts.clamp(e, x))
                }
                Kind::Switch { next_pid, .. } if r.ts <= x => thread = next_pid,
                Kind::HrtimerExpireEntry { .. } if r.ts >= x => break,
                _ => {}
            }
        }
        (h.unwrap_or(x).min(x), thread)
    } else {
        (x, -1)
    };
    // Did the timer CPU log anything between E and the timer interrupt?
    // (The timer interrupt's own entry does not count.)
    let silent_a = !w.events.iter().any(|r| {
        r.cpu == p.timer_cpu
            && r.ts > e
            && r.ts < h
            && !matches!(r.kind, Kind::IrqEntry { name, .. } if ctx.is_timer_irq(name, names))
    });
    // Stretches of over STALL_NS without an event on the two CPUs.
    let mut stalls: Vec<(u32, u64, u64)> = Vec::new();
    let mut last = [(p.timer_cpu, e), (p.cpu, e)];
    for r in &w.events {
        for (cpu, at) in last.iter_mut() {
            if r.cpu == *cpu {
                let ts = r.ts.clamp(e, s);
                if ts >= *at + STALL_NS {
                    stalls.push((*cpu, *at, ts));
                }
                *at = ts.max(*at);
            }
        }
    }
    let stalled = |cpu: u32, t: u64| stalls.iter().any(|&(c, a, b)| c == cpu && a <= t && t < b);
    let stalled_task = |cpu: u32, t: u64| {
        ctx.ticks_traced
            && stalls
                .iter()
                .any(|&(c, a, b)| c == cpu && a <= t && t < b && b - a >= TASK_STALL_NS)
    };
    // The woken task's priority, as it was switched in.
    let task_prio = w
        .events
        .iter()
        .rev()
        .find_map(|r| match r.kind {
            Kind::Switch {
                next_pid,
                next_prio,
                ..
            } if next_pid == p.pid => Some(next_prio),
            _ => None,
        })
        .unwrap_or(-1);
    let mut preempted: Option<i32> = None;
    let mut acc: BTreeMap<Cause, u64> = BTreeMap::new();
    let mut t = e;
    let work = TimerWork::of(w, names, ctx);
    // Timer work for another timer's callback, named.
    let other_timer = |cpu: u32, t: u64, st: &CpuState| {
        work.at(cpu, t, st, names)
            .map(|(f, timer)| Cause::TimerCallback {
                function: names.get(f).to_string(),
                timer,
            })
    };

    let classify =
        |t: u64, timer_st: &CpuState, task_st: &CpuState, preempted: Option<i32>| -> Cause {
            let phase = if t < h {
                Phase::Interrupt
            } else if t < x {
                Phase::SoftWait
            } else if t < wk {
                Phase::Callback
            } else {
                Phase::Run
            };
            let (st, cpu) = if phase == Phase::Run {
                (task_st, p.cpu)
            } else {
                (timer_st, p.timer_cpu)
            };
            let waiting_for_thread = |st: &CpuState| Cause::SoftTimer {
                thread: task_label(names, soft_thread),
                task: task_label(names, st.current),
                prio: st.current_prio.unwrap_or(-1),
            };
            if phase == Phase::Callback {
                // A soft timer's callback runs in a thread that can be preempted.
                if p.soft
                    && st.known
                    && st.irqs.is_empty()
                    && st.current != soft_thread
                    && st.current > 0
                {
                    return waiting_for_thread(st);
                }
                if stalled(cpu, t) && st.known {
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::InInterrupt,
                    };
                }
                return Cause::HrtimerInterrupt;
            }
            if let Some(&irq) = st.irqs.last() {
                let is_timer = ctx.is_timer_irq(irq, names);
                // Another timer's callback running in the interrupt: the
                // CPU was busy with it, not standing still.
                let in_callback = work.running(cpu, st, names).is_some();
                if phase == Phase::Interrupt && silent_a && is_timer && st.known && !in_callback {
                    // The interrupt came but nothing happened in it until
                    // the expiry: the CPU stood still (on a VM: the host
                    // ran something else).
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::BeforeInterrupt,
                    };
                }
                if stalled(cpu, t) && st.known {
                    return Cause::SilentGap {
                        task: task_label(names, st.current),
                        within: Silence::InInterrupt,
                    };
                }
                if is_timer || (phase == Phase::Run && st.in_hrtimer) {
                    return other_timer(cpu, t, st).unwrap_or(Cause::HrtimerInterrupt);
                }
                return Cause::IrqHandler {
                    name: names.get(irq).to_string(),
                };
            }
            if st.in_hrtimer && !(p.soft && phase == Phase::SoftWait) {
                return other_timer(cpu, t, st).unwrap_or(Cause::HrtimerInterrupt);
            }
            // Without PREEMPT_RT a softirq holds the CPU; with it, the
            // softirq is its thread's time (below). The timer softirqs'
            // time is their callbacks'.
            if let (Some(v), false) = (st.softirq, ctx.rt) {
                if v == HRTIMER_SOFTIRQ || v == TIMER_SOFTIRQ {
                    if let Some(c) = other_timer(cpu, t, st) {
                        return c;
                    }
                }
                return Cause::Softirq {
                    vector: softirq_name(v),
                };
            }
            if !st.known {
                return Cause::Unexplained;
            }
            if st.current == 0 {
                // Woken, the idle CPU switches at once: a long silence
                // there is the CPU not running, not its idle state.
                if phase == Phase::Run && stalled(cpu, t) {
                    return Cause::SilentGap {
                        task: task_label(names, 0),
                        within: Silence::InIdle,
                    };
                }
                return Cause::IdleExit;
            }
            if st.current == p.pid {
                // Before the wake-up: the task had not slept yet. After
                // it, the trace contradicts itself.
                return if phase == Phase::Run {
                    Cause::Unexplained
                } else {
                    Cause::TaskItself
                };
            }
            let task = task_label(names, st.current);
            if matches!(phase, Phase::SoftWait | Phase::Run) && stalled_task(cpu, t) {
                return Cause::SilentGap {
                    task,
                    within: Silence::InTask,
                };
            }
            match phase {
                Phase::Interrupt if silent_a => Cause::SilentGap {
                    task,
                    within: Silence::BeforeInterrupt,
                },
                Phase::Interrupt => Cause::TimerIrqDelay { task },
                Phase::SoftWait => waiting_for_thread(st),
                _ => {
                    let prio = st.current_prio.unwrap_or(-1);
                    let outranks = prio >= 0 && task_prio >= 0 && prio <= task_prio;
                    if !outranks && preempted == Some(st.current) {
                        return Cause::NonPreemptibleKernel { task };
                    }
                    match ThreadKind::of(names.comm(st.current)) {
                        ThreadKind::IrqThread(irq) => Cause::IrqThread {
                            task,
                            irq,
                            prio,
                            task_prio,
                        },
                        ThreadKind::Ktimers | ThreadKind::Ksoftirqd => Cause::SoftirqThread {
                            task,
                            prio,
                            task_prio,
                        },
                        ThreadKind::Rcu | ThreadKind::Kworker | ThreadKind::Stopper => {
                            Cause::KernelThread {
                                task,
                                prio,
                                task_prio,
                            }
                        }
                        ThreadKind::Other => Cause::OtherTask {
                            task,
                            prio,
                            task_prio,
                        },
                    }
                }
            }
        };

    let mut boundaries = vec![h, x, wk];
    boundaries.retain(|&b| b > e && b < s);
    boundaries.dedup();
    let mut bi = 0;
    let mut advance = |to: u64,
                       t: &mut u64,
                       timer_st: &CpuState,
                       task_st: &CpuState,
                       preempted: &mut Option<i32>,
                       acc: &mut BTreeMap<Cause, u64>| {
        // Split at phase boundaries between *t and `to`.
        while *t < to {
            while bi < boundaries.len() && boundaries[bi] <= *t {
                bi += 1;
            }
            let end = boundaries
                .get(bi)
                .copied()
                .filter(|&b| b < to)
                .unwrap_or(to);
            if *t >= wk && preempted.is_none() {
                *preempted = Some(if task_st.known { task_st.current } else { -2 });
            }
            let c = classify(*t, timer_st, task_st, *preempted);
            *acc.entry(c).or_default() += end - *t;
            *t = end;
        }
    };
    for r in &w.events {
        let ts = r.ts.clamp(e, s);
        advance(ts, &mut t, &timer_st, &task_st, &mut preempted, &mut acc);
        if r.cpu == p.timer_cpu {
            timer_st.apply(r);
        }
        if r.cpu == p.cpu && !same_cpu {
            task_st.apply(r);
        }
        if same_cpu {
            task_st.clone_from(&timer_st);
        }
    }
    advance(s, &mut t, &timer_st, &task_st, &mut preempted, &mut acc);
    let mut parts: Vec<Part> = acc
        .into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(cause, ns)| Part { cause, ns })
        .collect();
    parts.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.cause.cmp(&b.cause)));
    parts
}

/// One row of the paper's Table 2.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EventRow {
    /// Event name.
    pub event: String,
    /// Occurrences in normal windows.
    pub normal: u64,
    /// Occurrences in late windows.
    pub late: u64,
    /// Per normal window.
    pub normal_per_window: f64,
    /// Per late window.
    pub late_per_window: f64,
}

/// The paper's Table 2: event counts in normal vs late windows, normalised
/// per window, most over-represented in late windows first.
pub fn event_table(windows: &[Window], names: &Names) -> Vec<EventRow> {
    let n_late = windows.iter().filter(|w| w.late).count().max(1) as f64;
    let n_norm = windows.iter().filter(|w| !w.late).count().max(1) as f64;
    let mut counts: HashMap<u32, (u64, u64)> = HashMap::new();
    for w in windows {
        for r in &w.events {
            let c = counts.entry(r.name).or_default();
            if w.late {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
    }
    let mut rows: Vec<EventRow> = counts
        .into_iter()
        .map(|(n, (a, b))| EventRow {
            event: names.get(n).to_string(),
            normal: a,
            late: b,
            normal_per_window: a as f64 / n_norm,
            late_per_window: b as f64 / n_late,
        })
        .collect();
    rows.sort_by(|a, b| {
        let da = a.late_per_window - a.normal_per_window;
        let db = b.late_per_window - b.normal_per_window;
        db.total_cmp(&da).then(a.event.cmp(&b.event))
    });
    rows
}

/// A cause ranked across all late windows.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CauseRow {
    /// The cause.
    pub cause: Cause,
    /// Its description.
    pub description: String,
    /// Late windows it appears in.
    pub late_windows: u64,
    /// Normal (baseline) windows it appears in.
    pub normal_windows: u64,
    /// Latency it accounts for, summed over late windows (ns).
    pub late_ns: u64,
    /// Mean per late window (ns).
    pub mean_late_ns: u64,
    /// Mean per normal window (ns).
    pub mean_normal_ns: u64,
    /// Latency beyond its normal share: `late_ns - late windows x mean_normal_ns` (ns).
    pub excess_ns: u64,
    /// Share of all late-window latency (0-1).
    pub share: f64,
    /// For a cause that names a task: every process with that command name
    /// (`comm`) that took part in a late window, most late latency first.
    /// Short-lived processes (each `dd` of a disk load, each fork of a
    /// shell loop) have their own pids but are one cause.
    pub pids: Vec<PidRow>,
    /// Events the task(s) named in the cause logged in late windows, most first.
    pub related_events: Vec<(String, u64)>,
    /// The hard interrupts that woke the task(s) named in the cause in late
    /// windows (the interrupt being handled on the CPU that logged the
    /// wake-up), most first: for an `irq/NN` thread its own IRQ, for
    /// `ktimers/N` the timer interrupt, for `ksoftirqd/N` the device whose
    /// softirq work it took over.
    pub woken_by: Vec<(String, u64)>,
    /// What to do about it.
    pub recommendation: String,
}

/// One process's part in a cause grouped by command name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PidRow {
    /// The process (thread) id.
    pub pid: i32,
    /// Latency it accounts for, summed over late windows (ns).
    pub late_ns: u64,
    /// Late windows it appears in.
    pub late_windows: u64,
}

impl Cause {
    /// The task label (`comm:pid`) of a cause that names a task.
    fn task(&self) -> Option<&str> {
        match self {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task, .. }
            | Cause::SoftTimer { task, .. }
            | Cause::IrqThread { task, .. }
            | Cause::SoftirqThread { task, .. }
            | Cause::KernelThread { task, .. }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => Some(task),
            _ => None,
        }
    }

    /// The same cause naming `task` instead.
    fn with_task(&self, label: String) -> Cause {
        let mut c = self.clone();
        match &mut c {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task, .. }
            | Cause::SoftTimer { task, .. }
            | Cause::IrqThread { task, .. }
            | Cause::SoftirqThread { task, .. }
            | Cause::KernelThread { task, .. }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => *task = label,
            _ => {}
        }
        c
    }

    /// The cause grouped by command name (`dd:812` -> `dd`) and the pid it
    /// named. A task with an unknown name (`<...>:812`) stays on its own.
    pub fn by_command(&self) -> (Cause, Option<i32>) {
        let Some((comm, pid)) = self
            .task()
            .and_then(|t| t.rsplit_once(':'))
            .and_then(|(c, p)| Some((c, p.parse::<i32>().ok()?)))
        else {
            return (self.clone(), None);
        };
        if comm == "<...>" {
            return (self.clone(), None);
        }
        (self.with_task(comm.to_string()), Some(pid))
    }
}

/// Ranks causes across windows by the latency they add beyond their share
/// in normal windows. `parts[i]` is the decomposition of `windows[i]`.
/// Causes that name a task are grouped by the task's command name
/// ([`Cause::by_command`]), with each pid's part in [`CauseRow::pids`].
pub fn rank_causes(
    windows: &[Window],
    parts: &[Vec<Part>],
    names: &Names,
    ctx: &Context,
) -> Vec<CauseRow> {
    let n_late = windows.iter().filter(|w| w.late).count() as u64;
    let n_norm = windows.iter().filter(|w| !w.late).count() as u64;
    let total_late: u64 = windows
        .iter()
        .zip(parts)
        .filter(|(w, _)| w.late)
        .map(|(_, ps)| ps.iter().map(|p| p.ns).sum::<u64>())
        .sum();
    // (late windows, normal windows, late ns, normal ns) per grouped cause,
    // and (late windows, late ns) per pid of it.
    let mut agg: BTreeMap<Cause, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut by_pid: BTreeMap<Cause, BTreeMap<i32, (u64, u64)>> = BTreeMap::new();
    for (w, ps) in windows.iter().zip(parts) {
        let mut in_window: BTreeMap<Cause, u64> = BTreeMap::new();
        for p in ps {
            let (group, pid) = p.cause.by_command();
            if let (Some(pid), true) = (pid, w.late) {
                let e = by_pid
                    .entry(group.clone())
                    .or_default()
                    .entry(pid)
                    .or_default();
                e.0 += 1;
                e.1 += p.ns;
            }
            *in_window.entry(group).or_default() += p.ns;
        }
        for (group, ns) in in_window {
            let a = agg.entry(group).or_default();
            if w.late {
                a.0 += 1;
                a.2 += ns;
            } else {
                a.1 += 1;
                a.3 += ns;
            }
        }
    }
    // Events per (pid) in late windows, by the task that logged them, and
    // the hard interrupts that woke each pid there.
    let mut per_pid: HashMap<i32, HashMap<u32, u64>> = HashMap::new();
    let mut woken: HashMap<i32, HashMap<u32, u64>> = HashMap::new();
    for w in windows.iter().filter(|w| w.late) {
        let mut cur: HashMap<u32, i32> = HashMap::new();
        cur.insert(w.p.cpu, w.task_cpu_state.current);
        cur.insert(w.p.timer_cpu, w.timer_cpu_state.current);
        let mut irq: HashMap<u32, Sym> = HashMap::new();
        for (cpu, st) in [
            (w.p.cpu, &w.task_cpu_state),
            (w.p.timer_cpu, &w.timer_cpu_state),
        ] {
            if let Some(&n) = st.irqs.last() {
                irq.insert(cpu, n);
            }
        }
        for r in &w.events {
            let pid = if r.pid >= 0 {
                r.pid
            } else {
                cur.get(&r.cpu).copied().unwrap_or(-1)
            };
            match r.kind {
                Kind::Switch { next_pid, .. } => {
                    cur.insert(r.cpu, next_pid);
                    irq.remove(&r.cpu);
                }
                Kind::IrqEntry { name, .. } => {
                    irq.insert(r.cpu, name);
                }
                Kind::IrqExit { .. } => {
                    irq.remove(&r.cpu);
                }
                Kind::Wake { pid: woke, .. } => {
                    if let Some(&n) = irq.get(&r.cpu) {
                        *woken.entry(woke).or_default().entry(n).or_default() += 1;
                    }
                }
                _ => {}
            }
            if pid > 0 && r.kind == Kind::Other {
                *per_pid.entry(pid).or_default().entry(r.name).or_default() += 1;
            }
        }
    }
    let top = |maps: &HashMap<i32, HashMap<u32, u64>>, pids: &[PidRow]| {
        let mut sum: HashMap<u32, u64> = HashMap::new();
        for m in pids.iter().filter_map(|p| maps.get(&p.pid)) {
            for (&n, &c) in m {
                *sum.entry(n).or_default() += c;
            }
        }
        let mut v: Vec<(String, u64)> = sum
            .into_iter()
            .map(|(n, c)| (names.get(n).to_string(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(5);
        v
    };
    let mut rows: Vec<CauseRow> = agg
        .into_iter()
        .filter(|(_, a)| a.0 > 0)
        .map(|(cause, (lw, nw, lns, nns))| {
            let mean_late = lns / n_late.max(1);
            let mean_normal = nns.checked_div(n_norm).unwrap_or(0);
            let mut pids: Vec<PidRow> = by_pid
                .get(&cause)
                .map(|m| {
                    m.iter()
                        .map(|(&pid, &(late_windows, late_ns))| PidRow {
                            pid,
                            late_ns,
                            late_windows,
                        })
                        .collect()
                })
                .unwrap_or_default();
            pids.sort_by(|a, b| b.late_ns.cmp(&a.late_ns).then(a.pid.cmp(&b.pid)));
            let related = top(&per_pid, &pids);
            let woken_by = top(&woken, &pids);
            // One pid: named as before (`hog:7`); several: `dd (14 pids)`.
            let shown = match (cause.task(), pids.as_slice()) {
                (Some(comm), [one]) => cause.with_task(format!("{comm}:{}", one.pid)),
                (Some(comm), many) if many.len() > 1 => {
                    cause.with_task(format!("{comm} ({} pids)", many.len()))
                }
                _ => cause.clone(),
            };
            CauseRow {
                description: shown.describe(),
                recommendation: shown.recommendation(&related, ctx.rt),
                late_windows: lw,
                normal_windows: nw,
                late_ns: lns,
                mean_late_ns: mean_late,
                mean_normal_ns: mean_normal,
                excess_ns: lns.saturating_sub(mean_normal * n_late),
                share: if total_late > 0 {
                    lns as f64 / total_late as f64
                } else {
                    0.0
                },
                pids,
                related_events: related,
                woken_by,
                cause,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.excess_ns
            .cmp(&a.excess_ns)
            .then(b.late_ns.cmp(&a.late_ns))
            .then(a.cause.cmp(&b.cause))
    });
    rows
}

/// A cause category summed over all its causes.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CategoryRow {
    /// Category name ([`Cause::category`]).
    pub category: String,
    /// Late windows where it appears.
    pub late_windows: u64,
    /// Normal windows where it appears.
    pub normal_windows: u64,
    /// Latency it accounts for in late windows (ns).
    pub late_ns: u64,
    /// Mean per normal window (ns).
    pub mean_normal_ns: u64,
    /// Share of all late-window latency (0-1).
    pub share: f64,
}

/// Causes summed by category, largest share of late latency first.
pub fn categories(windows: &[Window], parts: &[Vec<Part>]) -> Vec<CategoryRow> {
    let n_norm = windows.iter().filter(|w| !w.late).count() as u64;
    let mut agg: BTreeMap<&'static str, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut total = 0u64;
    for (w, ps) in windows.iter().zip(parts) {
        let mut seen: Vec<&'static str> = Vec::new();
        for p in ps {
            let c = p.cause.category();
            let a = agg.entry(c).or_default();
            if w.late {
                a.2 += p.ns;
                total += p.ns;
            } else {
                a.3 += p.ns;
            }
            if !seen.contains(&c) {
                seen.push(c);
                if w.late {
                    a.0 += 1;
                } else {
                    a.1 += 1;
                }
            }
        }
    }
    let mut rows: Vec<CategoryRow> = agg
        .into_iter()
        .filter(|(_, a)| a.0 > 0)
        .map(|(c, (lw, nw, lns, nns))| CategoryRow {
            category: c.to_string(),
            late_windows: lw,
            normal_windows: nw,
            late_ns: lns,
            mean_normal_ns: nns.checked_div(n_norm).unwrap_or(0),
            share: if total > 0 {
                lns as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    rows.sort_by(|a, b| b.late_ns.cmp(&a.late_ns).then(a.category.cmp(&b.category)));
    rows
}
