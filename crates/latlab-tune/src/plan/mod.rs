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

use latlab_explain::CauseRow;
use latlab_fix::{Fix, Knob};

use crate::bootline::Need;
use crate::result::CauseFixes;

mod causes;

use causes::for_cause;
pub use causes::isolation_set;

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

impl SystemView {
    /// The view of what `knobs::inventory` found; `preempt_rt` for a
    /// PREEMPT_RT kernel.
    pub fn of(inventory: &crate::knobs::Inventory, preempt_rt: bool) -> SystemView {
        SystemView {
            online: inventory.cpus.clone(),
            irqs: inventory
                .irqs
                .iter()
                .map(|irq| {
                    let names = irq.actions.split(", ").map(str::to_string).collect();
                    let cpus = latlab_rt::sched::parse_cpu_list(&irq.affinity).unwrap_or_default();
                    (irq.irq, names, cpus)
                })
                .collect(),
            kthreads: inventory
                .kernel_threads
                .iter()
                .map(|t| (t.pid, t.comm.clone(), t.per_cpu))
                .collect(),
            napi_devices: inventory.net.iter().map(|n| n.device.clone()).collect(),
            idle_states: inventory
                .idle
                .iter()
                .flat_map(|cpu| {
                    cpu.states
                        .iter()
                        .filter(|s| s.name != "POLL" && s.state > 0)
                        .map(move |s| (cpu.cpu, s.state))
                })
                .collect(),
            cpufreq: inventory.cpufreq.iter().map(|(cpu, _)| *cpu).collect(),
            preempt_rt,
        }
    }
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
    pub boot: Vec<(Need, String)>,
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
        plan.causes.push(CauseFixes {
            cause: row.description.clone(),
            share: row.share,
            fixes,
        });
    }
    let mut all: Vec<Fix> = plan.causes.iter().flat_map(|c| c.fixes.clone()).collect();
    if isolate {
        all.extend(isolation_set(sys, rt));
        for need in [Need::Isolation, Need::Tick, Need::Rcu, Need::IrqAffinity] {
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

fn add_need(boot: &mut Vec<(Need, String)>, need: Need, why: &str) {
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

#[cfg(test)]
mod tests;
