//! The prose of each cause: a one-line description and what to do about it,
//! with the priorities that decided the order.

use latlab_measure::units::format_ns;

use super::cause::{Cause, Silence, STALL_NS, TASK_STALL_NS};
use crate::model::{rt_priority, user_priority, ThreadKind};

/// ` (rt priority 50)`, or nothing for an unknown priority.
pub(super) fn prio_note(prio: i32) -> String {
    user_priority(prio)
        .map(|p| format!(" ({p})"))
        .unwrap_or_default()
}

/// `, above the task's rt priority 40` style comparison, or nothing.
pub(super) fn versus(prio: i32, task_prio: i32) -> String {
    match (user_priority(prio), user_priority(task_prio)) {
        (Some(_), Some(t)) if prio <= task_prio => format!(", at or above the task's {t}"),
        (Some(_), Some(t)) => format!(", below the task's {t}"),
        _ => String::new(),
    }
}

/// The command of a `comm:pid` label (the label itself when it has no pid).
pub(super) fn comm_of(label: &str) -> &str {
    match label.rsplit_once(':') {
        Some((c, p)) if p.parse::<i32>().is_ok() => c,
        _ => label,
    }
}

/// What to do about a task (`comm:pid` label) of priority `prio` that
/// ran before one of `task_prio`: raise the task, lower the other, or part
/// them.
pub(super) fn priority_advice(label: &str, prio: i32, task_prio: i32) -> String {
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
                format_ns(STALL_NS)
            ),
            Cause::SilentGap { task, within: Silence::InIdle } => format!(
                "CPU logged nothing for over {} after the wake-up, idle ({task}): the vCPU was not running (hypervisor), or an SMI",
                format_ns(STALL_NS)
            ),
            Cause::SilentGap { task, within: Silence::InTask } => format!(
                "CPU logged nothing for over {} while {task} ran, not even the scheduler tick: interrupts off in untraced code, or the vCPU was not running (hypervisor, SMI)",
                format_ns(TASK_STALL_NS)
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
