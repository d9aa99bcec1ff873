//! Every knob tune can touch, read into one map: to prove a tune left the
//! system as it found it, and to print what differs.
//!
//! Keys: `irq/N/affinity`, `workqueue/cpumask`, `sysctl/NAME`,
//! `cpuidle/cpuN/stateM/disable`, `cpufreq/cpuN/governor`, `thp`, `ksm`,
//! `net/DEV/threaded`, `cgroup/PATH[/FILE]` for the cpuset hierarchies,
//! and `task/TID/COMM/{affinity,policy,cpuset}` for every thread.

use std::collections::BTreeMap;
use std::path::Path;

use latlab_fix::{cpu_list, Knob};
use latlab_rt::sched::online_cpus;

use crate::knobs::{self, inventory, task};

/// The cpuset and cgroup files recorded for each cgroup directory.
const CGROUP_FILES: &[&str] = &[
    "cpuset.cpus",
    "cpuset.mems",
    "cpuset.cpu_exclusive",
    "cpuset.sched_load_balance",
    "cpuset.cpus.partition",
    "cpuset.cpus.exclusive",
    "cgroup.subtree_control",
];

/// Reads every knob tune can touch.
pub fn snapshot() -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut put = |key: String, knob: &Knob| {
        if let Ok(value) = knobs::read(knob) {
            map.insert(key, value);
        }
    };
    for irq in irq_numbers() {
        put(format!("irq/{irq}/affinity"), &Knob::IrqAffinity { irq });
    }
    put("workqueue/cpumask".into(), &Knob::WorkqueueCpumask);
    for knob in inventory::touchable() {
        if let Knob::Sysctl { name } = &knob {
            put(format!("sysctl/{name}"), &knob);
        }
    }
    put("thp".into(), &Knob::TransparentHugepages);
    put("ksm".into(), &Knob::Ksm);
    for cpu in online_cpus() {
        put(
            format!("cpufreq/cpu{cpu}/governor"),
            &Knob::CpufreqGovernor { cpu },
        );
        for state in inventory::idle_cpu(cpu)
            .map(|c| c.states)
            .unwrap_or_default()
        {
            let knob = Knob::IdleState {
                cpu,
                state: state.state,
            };
            put(
                format!("cpuidle/cpu{cpu}/state{}/disable", state.state),
                &knob,
            );
        }
    }
    for dev in inventory::net_devices() {
        map.insert(format!("net/{}/threaded", dev.device), dev.threaded);
    }
    for root in cpuset_roots() {
        walk_cgroup(&root, 0, &mut map);
    }
    for tid in task::all_threads() {
        let Ok(comm) = task::comm(tid) else { continue };
        let key = |what: &str| format!("task/{tid}/{comm}/{what}");
        if let Ok(cpus) = task::affinity(tid) {
            map.insert(key("affinity"), cpu_list(&cpus));
        }
        if let Ok(policy) = task::priority(tid) {
            map.insert(key("policy"), policy);
        }
        if let Ok(cpuset) = std::fs::read_to_string(format!("/proc/{tid}/cpuset")) {
            map.insert(key("cpuset"), cpuset.trim().to_string());
        }
    }
    map
}

/// What differs between two snapshots, one line each (`key: a -> b`).
/// A thread in only one of them (started or ended between) is not a
/// difference.
pub fn diff(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let thread = |key: &str| -> Option<String> {
        let rest = key.strip_prefix("task/")?;
        Some(rest[..rest.rfind('/')?].to_string())
    };
    let threads = |map: &BTreeMap<String, String>| -> std::collections::BTreeSet<String> {
        map.keys().filter_map(|k| thread(k)).collect()
    };
    let (in_before, in_after) = (threads(before), threads(after));
    let both =
        |key: &str| thread(key).is_none_or(|t| in_before.contains(&t) && in_after.contains(&t));
    let mut lines = Vec::new();
    for (key, old) in before {
        match after.get(key) {
            Some(new) if new != old => lines.push(format!("{key}: {old} -> {new}")),
            None if both(key) => lines.push(format!("{key}: {old} -> (gone)")),
            _ => {}
        }
    }
    for (key, new) in after {
        if !before.contains_key(key) && both(key) {
            lines.push(format!("{key}: (absent) -> {new}"));
        }
    }
    lines
}

fn irq_numbers() -> Vec<u32> {
    let mut irqs: Vec<u32> = std::fs::read_dir("/proc/irq")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    irqs.sort_unstable();
    irqs
}

/// The roots of the cgroup hierarchies that hold cpusets (v1 cpuset, v2).
fn cpuset_roots() -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let v1 = f.get(2) == Some(&"cgroup") && f.get(3)?.split(',').any(|o| o == "cpuset");
            (v1 || f.get(2) == Some(&"cgroup2")).then(|| f[1].to_string())
        })
        .collect()
}

fn walk_cgroup(dir: &str, depth: usize, map: &mut BTreeMap<String, String>) {
    map.insert(format!("cgroup{dir}"), "dir".into());
    for name in CGROUP_FILES {
        let path = Path::new(dir).join(name);
        if let Ok(text) = std::fs::read_to_string(&path) {
            map.insert(format!("cgroup{}", path.display()), text.trim().to_string());
        }
    }
    if depth >= 8 {
        return;
    }
    let mut children: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path().display().to_string())
        .collect();
    children.sort();
    for child in children {
        walk_cgroup(&child, depth + 1, map);
    }
}
