//! The plan: the fixes the explained causes call for on this system, in
//! groups tune verifies one at a time, and the boot-time needs the kernel
//! command line answers (`bootline`).
//!
//! A cause maps to fixes by its kind (`latlab_explain::Cause`) and what the
//! live system has ([`SystemView`]): the IRQs a handler's name belongs to,
//! the kernel threads behind a command name, the net devices with threaded
//! NAPI, the idle states of the real-time CPUs. A fix the kernel cannot take
//! (a per-CPU kernel thread) is kept with `refused` set, so the plan says
//! why it is not proposed.

use std::collections::BTreeSet;

use latlab_explain::model::{rt_priority, ThreadKind};
use latlab_explain::{Cause, CauseRow};
use latlab_fix::{Fix, Knob, Value};

use crate::result::CauseFixes;

/// What the plan needs to know of the live system.
#[derive(Debug, Clone, Default)]
pub struct SystemView {
    /// Online CPUs.
    pub online: Vec<usize>,
    /// IRQs: number, handler names, allowed CPUs.
    pub irqs: Vec<(u32, Vec<String>, Vec<usize>)>,
    /// Kernel threads: pid, comm, per-CPU (cannot move).
    pub kthreads: Vec<(i32, String, bool)>,
    /// Net devices with a `threaded` file.
    pub napi_devices: Vec<String>,
    /// Idle states (cpu, index) that are not polling, per CPU.
    pub idle_states: Vec<(usize, usize)>,
    /// CPUs with a cpufreq governor.
    pub cpufreq: Vec<usize>,
    /// The kernel is PREEMPT_RT.
    pub preempt_rt: bool,
}

/// A kernel command line need a cause calls for (`bootline` turns them
/// into parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BootNeed {
    /// The scheduler tick on the real-time CPUs (nohz_full).
    Tick,
    /// RCU callbacks on the real-time CPUs (rcu_nocbs, rcutree.kthread_prio).
    Rcu,
    /// Non-preemptible kernel code (preempt=full on PREEMPT_DYNAMIC).
    Preemption,
    /// Interrupts placed on the real-time CPUs from boot (irqaffinity, managed_irq).
    IrqAffinity,
    /// Deep idle states (C-state limits).
    Idle,
    /// Other work on the real-time CPUs (isolcpus).
    Isolation,
}

/// Fixes verified together: one side-by-side measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// What the group does (`IRQ affinity off the RT CPUs`).
    pub name: String,
    /// Its fixes.
    pub fixes: Vec<Fix>,
}

/// The plan of a tune.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Each cause with the fixes it calls for.
    pub causes: Vec<CauseFixes>,
    /// Runtime fixes, grouped, in the order to verify them.
    pub groups: Vec<Group>,
    /// Fixes proposed but refused (the kernel cannot take them).
    pub refused: Vec<Fix>,
    /// Boot-time needs, each with why.
    pub boot: Vec<(BootNeed, String)>,
}

/// The housekeeping CPUs for `rt`: every other online CPU. An unknown CPU,
/// or every CPU taken for real time, is an error naming the fix.
pub fn housekeeping(rt: &[usize], online: &[usize]) -> Result<Vec<usize>, String> {
    let list = latlab_fix::cpu_list(online);
    if rt.is_empty() {
        return Err("--cpus names no CPU".into());
    }
    if let Some(cpu) = rt.iter().find(|c| !online.contains(c)) {
        return Err(format!("CPU {cpu} is not online (online: {list})"));
    }
    let hk: Vec<usize> = online.iter().copied().filter(|c| !rt.contains(c)).collect();
    if hk.is_empty() {
        return Err(format!(
            "--cpus takes every online CPU ({list}) for real time: keep at least one for \
             housekeeping (interrupts, kernel threads, everything else), e.g. --cpus {}",
            latlab_fix::cpu_list(&online[1..])
        ));
    }
    Ok(hk)
}

/// The plan for `causes` (ranked, largest first) on `sys`, with `rt` the
/// real-time CPUs, `task_priority` the measured task's SCHED_FIFO
/// priority, and `isolate` adding the standard isolation set.
pub fn plan(
    causes: &[CauseRow],
    sys: &SystemView,
    rt: &[usize],
    task_priority: i32,
    isolate: bool,
) -> Plan {
    let mut plan = Plan::default();
    for row in causes {
        let (fixes, boot) = for_cause(row, sys, rt, task_priority);
        for need in boot {
            add_need(&mut plan.boot, need, &row.description);
        }
        if !fixes.is_empty() {
            plan.causes.push(CauseFixes {
                cause: row.description.clone(),
                share: row.share,
                fixes,
            });
        }
    }
    let mut all: Vec<Fix> = plan.causes.iter().flat_map(|c| c.fixes.clone()).collect();
    if isolate {
        all.extend(isolation_set(sys, rt));
        for need in [
            BootNeed::Isolation,
            BootNeed::Tick,
            BootNeed::Rcu,
            BootNeed::IrqAffinity,
        ] {
            add_need(
                &mut plan.boot,
                need,
                "--isolate: the standard isolation set",
            );
        }
    }
    let mut seen = BTreeSet::new();
    for fix in all {
        if !seen.insert(format!("{:?}", fix.knob)) {
            continue;
        }
        if fix.refused.is_some() {
            plan.refused.push(fix);
            continue;
        }
        let name = group_name(&fix.knob);
        match plan.groups.iter_mut().find(|g| g.name == name) {
            Some(group) => group.fixes.push(fix),
            None => plan.groups.push(Group {
                name: name.into(),
                fixes: vec![fix],
            }),
        }
    }
    plan
}

fn add_need(boot: &mut Vec<(BootNeed, String)>, need: BootNeed, why: &str) {
    if !boot.iter().any(|(n, _)| *n == need) {
        boot.push((need, why.to_string()));
    }
}

/// The group a fix is verified in.
fn group_name(knob: &Knob) -> &'static str {
    match knob {
        Knob::IrqAffinity { .. } => "IRQ affinity off the RT CPUs",
        Knob::WorkqueueCpumask => "unbound workqueues off the RT CPUs",
        Knob::TaskAffinity { .. } => "kernel threads off the RT CPUs",
        Knob::TaskPriority { .. } => "kernel thread priorities below the task",
        Knob::ThreadedNapi { .. } => "threaded NAPI",
        Knob::IdleState { .. } => "deep idle states off on the RT CPUs",
        Knob::CpufreqGovernor { .. } => "performance governor on the RT CPUs",
        Knob::CpusetPartition => "isolated cpuset partition",
        Knob::Sysctl { .. } | Knob::TransparentHugepages | Knob::Ksm => {
            "kernel housekeeping settings"
        }
        Knob::BootParameter { .. } => "boot parameters",
    }
}

/// The fixes and boot needs one cause calls for.
fn for_cause(
    row: &CauseRow,
    sys: &SystemView,
    rt: &[usize],
    task_priority: i32,
) -> (Vec<Fix>, Vec<BootNeed>) {
    let why = row.description.as_str();
    let mut fixes = Vec::new();
    let mut boot = Vec::new();
    match &row.cause {
        Cause::IrqHandler { name } => {
            fixes.extend(irqs_named(sys, rt, name, why));
            boot.push(BootNeed::IrqAffinity);
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
        Cause::Softirq { vector } if vector == "RCU" => boot.push(BootNeed::Rcu),
        Cause::Softirq { vector } if vector == "TIMER" || vector == "HRTIMER" => {
            boot.push(BootNeed::Tick)
        }
        Cause::KernelThread { task, prio, .. } => match ThreadKind::of(task) {
            ThreadKind::Rcu => boot.push(BootNeed::Rcu),
            ThreadKind::Kworker => {
                fixes.push(Fix::new(Knob::WorkqueueCpumask, Value::Housekeeping, why))
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
                boot.push(BootNeed::Preemption);
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
            boot.push(BootNeed::Idle);
        }
        Cause::HrtimerInterrupt | Cause::TimerCallback { .. } => boot.push(BootNeed::Tick),
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
    fixes.push(Fix::new(
        Knob::TransparentHugepages,
        Value::literal("never"),
        why,
    ));
    fixes.push(Fix::new(Knob::Ksm, Value::literal("0"), why));
    fixes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cause: Cause, pids: &[i32]) -> CauseRow {
        let description = cause.describe();
        serde_json::from_value(serde_json::json!({
            "cause": cause,
            "description": description,
            "late_windows": 3, "normal_windows": 0, "late_ns": 300_000,
            "mean_late_ns": 100_000, "mean_normal_ns": 0, "excess_ns": 300_000,
            "share": 0.5,
            "pids": pids.iter().map(|p| serde_json::json!({"pid": p, "late_ns": 1, "late_windows": 1})).collect::<Vec<_>>(),
            "related_events": [], "woken_by": [], "recommendation": "",
        }))
        .expect("a CauseRow")
    }

    fn system() -> SystemView {
        SystemView {
            online: vec![0, 1],
            irqs: vec![
                (24, vec!["virtio0-input.0".into()], vec![0, 1]),
                (25, vec!["virtio0-output.0".into()], vec![0]),
            ],
            kthreads: vec![
                (15, "ksoftirqd/1".into(), true),
                (80, "khugepaged".into(), false),
            ],
            napi_devices: vec!["eth0".into()],
            idle_states: vec![(0, 1), (1, 1)],
            cpufreq: vec![],
            preempt_rt: false,
        }
    }

    #[test]
    fn housekeeping_keeps_a_cpu_and_names_the_fix() {
        assert_eq!(housekeeping(&[1], &[0, 1]).unwrap(), vec![0]);
        let every = housekeeping(&[0, 1], &[0, 1]).unwrap_err();
        assert!(
            every.contains("keep at least one") && every.contains("--cpus 1"),
            "{every}"
        );
        let unknown = housekeeping(&[7], &[0, 1]).unwrap_err();
        assert!(
            unknown.contains("CPU 7 is not online (online: 0-1)"),
            "{unknown}"
        );
    }

    #[test]
    fn an_irq_handler_moves_only_its_irqs_that_reach_the_rt_cpu() {
        let p = plan(
            &[row(
                Cause::IrqHandler {
                    name: "virtio0-input.0".into(),
                },
                &[],
            )],
            &system(),
            &[1],
            95,
            false,
        );
        let knobs: Vec<_> = p
            .groups
            .iter()
            .flat_map(|g| &g.fixes)
            .map(|f| f.knob.clone())
            .collect();
        assert_eq!(knobs, vec![Knob::IrqAffinity { irq: 24 }]);
        assert!(p.boot.iter().any(|(n, _)| *n == BootNeed::IrqAffinity));
    }

    #[test]
    fn a_per_cpu_thread_is_refused_and_a_movable_one_moves() {
        let causes = [
            row(
                Cause::SoftirqThread {
                    task: "ksoftirqd/1".into(),
                    prio: 120,
                    task_prio: 4,
                },
                &[15],
            ),
            row(
                Cause::KernelThread {
                    task: "khugepaged".into(),
                    prio: 139,
                    task_prio: 4,
                },
                &[80],
            ),
        ];
        let p = plan(&causes, &system(), &[1], 95, false);
        assert_eq!(p.refused.len(), 1);
        assert!(p.refused[0].refused.as_deref().unwrap().contains("per-CPU"));
        let moved: Vec<_> = p.groups.iter().flat_map(|g| &g.fixes).collect();
        assert_eq!(moved.len(), 1);
        assert_eq!(
            moved[0].knob,
            Knob::TaskAffinity {
                pid: 80,
                comm: "khugepaged".into()
            }
        );
    }

    #[test]
    fn non_preemptible_user_code_asks_for_preempt_full_and_the_partition() {
        let p = plan(
            &[row(
                Cause::NonPreemptibleKernel {
                    task: "ld-io0".into(),
                },
                &[4242],
            )],
            &system(),
            &[1],
            95,
            false,
        );
        assert!(p.boot.iter().any(|(n, _)| *n == BootNeed::Preemption));
        assert_eq!(p.groups[0].fixes[0].knob, Knob::CpusetPartition);
        let rt = SystemView {
            preempt_rt: true,
            ..system()
        };
        let p = plan(
            &[row(
                Cause::NonPreemptibleKernel {
                    task: "ld-io0".into(),
                },
                &[],
            )],
            &rt,
            &[1],
            95,
            false,
        );
        assert!(
            p.boot.is_empty(),
            "no preempt=full on PREEMPT_RT: {:?}",
            p.boot
        );
    }

    #[test]
    fn isolate_adds_the_standard_set_once_per_knob() {
        let causes = [row(
            Cause::IrqHandler {
                name: "virtio0-input.0".into(),
            },
            &[],
        )];
        let p = plan(&causes, &system(), &[1], 95, true);
        let knobs: Vec<_> = p
            .groups
            .iter()
            .flat_map(|g| &g.fixes)
            .map(|f| &f.knob)
            .collect();
        let irq24 = knobs
            .iter()
            .filter(|k| ***k == Knob::IrqAffinity { irq: 24 })
            .count();
        assert_eq!(irq24, 1, "one fix per knob: {knobs:?}");
        assert!(
            !knobs.contains(&&Knob::IrqAffinity { irq: 25 }),
            "IRQ 25 never reaches CPU 1"
        );
        assert!(knobs.contains(&&Knob::CpusetPartition));
        assert!(knobs.contains(&&Knob::IdleState { cpu: 1, state: 1 }));
        assert!(
            !knobs.contains(&&Knob::IdleState { cpu: 0, state: 1 }),
            "housekeeping CPUs keep their idle states"
        );
        assert!(!knobs.iter().any(
            |k| matches!(k, Knob::TaskAffinity { comm, .. } if comm.starts_with("ksoftirqd"))
        ));
    }
}
