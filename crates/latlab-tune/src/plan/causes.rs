//! From one explained cause (its kind, its tasks' pids) to the fixes it
//! calls for on this system, and the standard isolation set.

use latlab_explain::model::{rt_priority, ThreadKind};
use latlab_explain::{Cause, CauseRow};
use latlab_fix::{Fix, Knob, Value};

use super::{Need, SystemView};

/// The fixes and boot needs one cause calls for.
pub(super) fn for_cause(
    row: &CauseRow,
    sys: &SystemView,
    rt: &[usize],
    task_priority: i32,
) -> (Vec<Fix>, Vec<Need>) {
    let why = row.description.as_str();
    let mut fixes = Vec::new();
    let mut boot = Vec::new();
    match &row.cause {
        Cause::IrqHandler { name } => {
            fixes.extend(irqs_named(sys, rt, name, why));
            boot.push(Need::IrqAffinity);
        }
        Cause::IrqThread {
            irq, task, prio, ..
        } => {
            if let Ok(irq) = u32::try_from(*irq) {
                if sys
                    .irqs
                    .iter()
                    .any(|(n, _, cpus)| *n == irq && cpus.iter().any(|c| rt.contains(c)))
                {
                    fixes.push(Fix::new(
                        Knob::IrqAffinity { irq },
                        Value::Housekeeping,
                        why,
                    ));
                }
            }
            fixes.extend(priority_below(row, sys, task, *prio, task_priority, why));
        }
        Cause::Softirq { vector } if vector.starts_with("NET") => {
            fixes.extend(napi(sys, why));
        }
        Cause::Softirq { vector } if vector == "RCU" => boot.push(Need::Rcu),
        Cause::Softirq { vector } if vector == "TIMER" || vector == "HRTIMER" => {
            boot.push(Need::Tick)
        }
        Cause::KernelThread { task, prio, .. } => match ThreadKind::of(task) {
            ThreadKind::Rcu => boot.push(Need::Rcu),
            ThreadKind::Kworker => {
                fixes.push(Fix::new(Knob::WorkqueueCpumask, Value::Housekeeping, why));
                boot.push(Need::Workqueue);
            }
            _ => {
                fixes.extend(move_threads(row, sys, why));
                fixes.extend(priority_below(row, sys, task, *prio, task_priority, why));
            }
        },
        Cause::SoftirqThread { task, prio, .. } => {
            fixes.extend(move_threads(row, sys, why));
            fixes.extend(priority_below(row, sys, task, *prio, task_priority, why));
        }
        Cause::NonPreemptibleKernel { task } => {
            if !sys.preempt_rt {
                boot.push(Need::Preemption);
            }
            if task.starts_with("ksoftirqd") {
                fixes.extend(napi(sys, why));
            } else {
                fixes.extend(keep_off(row, sys, why));
            }
        }
        Cause::TimerIrqDelay { .. } | Cause::OtherTask { .. } => {
            fixes.extend(keep_off(row, sys, why))
        }
        Cause::IdleExit => {
            fixes.extend(
                sys.idle_states
                    .iter()
                    .filter(|(cpu, _)| rt.contains(cpu))
                    .map(|&(cpu, state)| {
                        Fix::new(Knob::IdleState { cpu, state }, Value::literal("1"), why)
                    }),
            );
            boot.push(Need::Idle);
        }
        Cause::HrtimerInterrupt | Cause::TimerCallback { .. } => boot.push(Need::Tick),
        Cause::Softirq { .. }
        | Cause::SoftTimer { .. }
        | Cause::SilentGap { .. }
        | Cause::TaskItself
        | Cause::Unexplained => {}
    }
    (fixes, boot)
}

/// The IRQs whose handler is `name` that may run on an RT CPU.
fn irqs_named(sys: &SystemView, rt: &[usize], name: &str, why: &str) -> Vec<Fix> {
    sys.irqs
        .iter()
        .filter(|(_, names, cpus)| {
            names.iter().any(|n| n == name) && cpus.iter().any(|c| rt.contains(c))
        })
        .map(|(irq, _, _)| Fix::new(Knob::IrqAffinity { irq: *irq }, Value::Housekeeping, why))
        .collect()
}

/// Threaded NAPI on every device that has it.
fn napi(sys: &SystemView, why: &str) -> Vec<Fix> {
    sys.napi_devices
        .iter()
        .map(|d| {
            Fix::new(
                Knob::ThreadedNapi { device: d.clone() },
                Value::literal("1"),
                why,
            )
        })
        .collect()
}

/// The live kernel threads behind the cause's pids, off the RT CPUs; a
/// per-CPU one is refused.
fn move_threads(row: &CauseRow, sys: &SystemView, why: &str) -> Vec<Fix> {
    row.pids
        .iter()
        .filter_map(|p| sys.kthreads.iter().find(|(pid, _, _)| *pid == p.pid))
        .map(|(pid, comm, per_cpu)| {
            let mut fix = Fix::new(
                Knob::TaskAffinity {
                    pid: *pid,
                    comm: comm.clone(),
                },
                Value::Housekeeping,
                why,
            );
            if *per_cpu {
                fix.refused = Some(format!("{comm} is a per-CPU kernel thread: it cannot move"));
            }
            fix
        })
        .collect()
}

/// A user task (or movable kernel thread) on the RT CPU: the isolated
/// partition keeps every user task off it.
fn keep_off(row: &CauseRow, sys: &SystemView, why: &str) -> Vec<Fix> {
    let kernel = move_threads(row, sys, why);
    if kernel.is_empty() {
        vec![Fix::new(Knob::CpusetPartition, Value::RealTime, why)]
    } else {
        kernel
    }
}

/// On PREEMPT_RT, a kernel thread at or above the measured task's
/// priority goes just below it.
fn priority_below(
    row: &CauseRow,
    sys: &SystemView,
    task: &str,
    prio: i32,
    task_priority: i32,
    why: &str,
) -> Vec<Fix> {
    let at_or_above = rt_priority(prio).is_some_and(|p| p >= task_priority);
    if !sys.preempt_rt || !at_or_above || task_priority <= 1 {
        return Vec::new();
    }
    row.pids
        .iter()
        .filter_map(|p| {
            sys.kthreads
                .iter()
                .find(|(pid, comm, _)| *pid == p.pid && comm.starts_with(task))
        })
        .map(|(pid, comm, _)| {
            Fix::new(
                Knob::TaskPriority {
                    pid: *pid,
                    comm: comm.clone(),
                },
                Value::literal(format!("fifo:{}", task_priority - 1)),
                why,
            )
        })
        .collect()
}

/// `--isolate`: the standard isolation set, whether or not a cause asked.
pub fn isolation_set(sys: &SystemView, rt: &[usize]) -> Vec<Fix> {
    let why = "--isolate: the standard isolation set";
    let mut fixes: Vec<Fix> = sys
        .irqs
        .iter()
        .filter(|(_, _, cpus)| cpus.iter().any(|c| rt.contains(c)))
        .map(|(irq, _, _)| Fix::new(Knob::IrqAffinity { irq: *irq }, Value::Housekeeping, why))
        .collect();
    fixes.push(Fix::new(Knob::WorkqueueCpumask, Value::Housekeeping, why));
    for (pid, comm, per_cpu) in &sys.kthreads {
        if !per_cpu {
            fixes.push(Fix::new(
                Knob::TaskAffinity {
                    pid: *pid,
                    comm: comm.clone(),
                },
                Value::Housekeeping,
                why,
            ));
        }
    }
    fixes.push(Fix::new(Knob::CpusetPartition, Value::RealTime, why));
    for &(cpu, state) in sys.idle_states.iter().filter(|(cpu, _)| rt.contains(cpu)) {
        fixes.push(Fix::new(
            Knob::IdleState { cpu, state },
            Value::literal("1"),
            why,
        ));
    }
    for &cpu in sys.cpufreq.iter().filter(|c| rt.contains(c)) {
        fixes.push(Fix::new(
            Knob::CpufreqGovernor { cpu },
            Value::literal("performance"),
            why,
        ));
    }
    let sysctl = |name: &str, value: &str| {
        Fix::new(
            Knob::Sysctl { name: name.into() },
            Value::literal(value),
            why,
        )
    };
    fixes.push(sysctl("vm.stat_interval", "10"));
    fixes.push(sysctl("kernel.timer_migration", "0"));
    fixes.push(sysctl("kernel.watchdog", "0"));
    fixes.push(Fix::new(
        Knob::TransparentHugepages,
        Value::literal("never"),
        why,
    ));
    fixes.push(Fix::new(Knob::Ksm, Value::literal("0"), why));
    fixes
}
