//! What this machine has of the knobs tune may touch.

use serde::Serialize;

use latlab_fix::{cpu_list, Knob};
use latlab_rt::sched::{online_cpus, parse_cpu_list};

use super::task;

/// The knobs of this machine, as tune's plan needs them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inventory {
    /// The online CPUs.
    pub cpus: Vec<usize>,
    /// Every numbered interrupt of `/proc/interrupts`.
    pub irqs: Vec<Irq>,
    /// Every kernel thread.
    pub kernel_threads: Vec<KernelThread>,
    /// The net devices with a `threaded` file.
    pub net: Vec<NetDevice>,
    /// The idle states of each CPU that has cpuidle.
    pub idle: Vec<IdleCpu>,
    /// The cpufreq governor of each CPU that has one: (cpu, governor).
    pub cpufreq: Vec<(usize, String)>,
    /// The sysctls and files tune may touch, and whether this kernel has each.
    pub present: Vec<(Knob, bool)>,
    /// How a runtime partition would be made here, when it can be.
    pub partition: Option<String>,
}

/// One interrupt.
#[derive(Debug, Clone, Serialize)]
pub struct Irq {
    /// Its number.
    pub irq: u32,
    /// The chip and trigger (`PCI-MSIX-0000:00:02.0 1-edge`).
    pub chip: String,
    /// The handlers' names (`virtio1-req.0`).
    pub actions: String,
    /// `smp_affinity_list`.
    pub affinity: String,
    /// `effective_affinity_list`, where the kernel has it.
    pub effective: Option<String>,
    /// Interrupts handled, per online CPU (in the order of `/proc/interrupts`).
    pub counts: Vec<u64>,
    /// Whether its affinity can be set.
    pub movable: Movable,
}

/// Whether an interrupt's affinity can be set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "movable", content = "why", rename_all = "snake_case")]
pub enum Movable {
    /// Only trying tells (a managed IRQ refuses the write with EIO).
    Unknown,
    /// The kernel says it cannot be moved: why.
    No(String),
}

/// One kernel thread.
#[derive(Debug, Clone, Serialize)]
pub struct KernelThread {
    /// Its pid.
    pub pid: i32,
    /// Its name.
    pub comm: String,
    /// The CPUs it may run on.
    pub allowed: Vec<usize>,
    /// Policy and priority (`fifo:50`).
    pub priority: String,
    /// Bound to its CPU (PF_NO_SETAFFINITY): it cannot be moved.
    pub per_cpu: bool,
}

/// A net device with threaded NAPI.
#[derive(Debug, Clone, Serialize)]
pub struct NetDevice {
    /// Its name.
    pub device: String,
    /// `threaded` now (`0`, `1`).
    pub threaded: String,
}

/// The idle states of one CPU.
#[derive(Debug, Clone, Serialize)]
pub struct IdleCpu {
    /// The CPU.
    pub cpu: usize,
    /// Its states, by index.
    pub states: Vec<IdleState>,
}

/// One cpuidle state of a CPU.
#[derive(Debug, Clone, Serialize)]
pub struct IdleState {
    /// The index (`stateN`).
    pub state: usize,
    /// Its name (`POLL`, `C1`).
    pub name: String,
    /// Exit latency, µs.
    pub latency_us: u64,
    /// Disabled now.
    pub disabled: bool,
}

/// The sysctls and files tune may touch.
pub fn touchable() -> Vec<Knob> {
    let sysctl = |name: &str| Knob::Sysctl { name: name.into() };
    vec![
        sysctl("kernel.sched_rt_runtime_us"),
        sysctl("kernel.timer_migration"),
        sysctl("vm.stat_interval"),
        sysctl("kernel.watchdog"),
        sysctl("kernel.nmi_watchdog"),
        sysctl("kernel.soft_watchdog"),
        Knob::WorkqueueCpumask,
        Knob::TransparentHugepages,
        Knob::Ksm,
    ]
}

/// What this machine has.
pub fn inventory() -> Inventory {
    let cpus = online_cpus();
    Inventory {
        irqs: irqs(),
        kernel_threads: kernel_threads(),
        net: net_devices(),
        idle: cpus.iter().filter_map(|&cpu| idle_cpu(cpu)).collect(),
        cpufreq: cpus
            .iter()
            .filter_map(|&cpu| {
                let knob = Knob::CpufreqGovernor { cpu };
                super::read(&knob).ok().map(|g| (cpu, g))
            })
            .collect(),
        present: touchable()
            .into_iter()
            .map(|k| {
                let there = std::path::Path::new(&k.path().unwrap_or_default()).exists();
                (k, there)
            })
            .collect(),
        partition: crate::partition::available().ok(),
        cpus,
    }
}

/// The numbered interrupts of `/proc/interrupts`.
pub fn irqs() -> Vec<Irq> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    let mut lines = text.lines();
    let columns = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|line| {
            let (number, rest) = line.trim_start().split_once(':')?;
            let irq: u32 = number.parse().ok()?;
            let mut words = rest.split_whitespace();
            let counts: Vec<u64> = words
                .by_ref()
                .take(columns)
                .map(|w| w.parse().unwrap_or(0))
                .collect();
            let tail: Vec<&str> = words.collect();
            let sys = |f: &str| std::fs::read_to_string(format!("/sys/kernel/irq/{irq}/{f}"));
            let actions = sys("actions")
                .map(|a| a.trim().to_string())
                .unwrap_or_else(|_| tail.last().map(|s| s.to_string()).unwrap_or_default());
            let chip = tail
                .iter()
                .take(tail.len().saturating_sub(usize::from(!actions.is_empty())))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let proc = |f: &str| {
                std::fs::read_to_string(format!("/proc/irq/{irq}/{f}"))
                    .ok()
                    .map(|t| t.trim().to_string())
            };
            let affinity = proc("smp_affinity_list").unwrap_or_default();
            // A managed or per-CPU interrupt refuses the write (EIO) and
            // /proc does not say which in advance: only a missing file does.
            let movable = if proc("smp_affinity_list").is_none() {
                Movable::No("no smp_affinity_list: its affinity cannot be set".into())
            } else {
                Movable::Unknown
            };
            Some(Irq {
                irq,
                chip,
                actions,
                affinity,
                effective: proc("effective_affinity_list"),
                counts,
                movable,
            })
        })
        .collect()
}

/// Every kernel thread (children of kthreadd, PF_KTHREAD).
pub fn kernel_threads() -> Vec<KernelThread> {
    task::all_threads()
        .into_iter()
        .filter_map(|pid| {
            let flags = task::flags(pid).ok()?;
            if flags & task::PF_KTHREAD == 0 && pid != 2 {
                return None;
            }
            Some(KernelThread {
                pid,
                comm: task::comm(pid).ok()?,
                allowed: task::affinity(pid).ok()?,
                priority: task::priority(pid).ok()?,
                per_cpu: flags & task::PF_NO_SETAFFINITY != 0,
            })
        })
        .collect()
}

/// The net devices with a `threaded` file.
pub fn net_devices() -> Vec<NetDevice> {
    let mut devices: Vec<NetDevice> = std::fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let device = entry.file_name().to_str()?.to_string();
            let threaded = super::read(&Knob::ThreadedNapi {
                device: device.clone(),
            })
            .ok()?;
            Some(NetDevice { device, threaded })
        })
        .collect();
    devices.sort_by(|a, b| a.device.cmp(&b.device));
    devices
}

/// The cpuidle states of `cpu`, `None` without cpuidle.
pub fn idle_cpu(cpu: usize) -> Option<IdleCpu> {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut states = Vec::new();
    for state in 0.. {
        let dir = format!("{base}/state{state}");
        let Ok(name) = std::fs::read_to_string(format!("{dir}/name")) else {
            break;
        };
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap_or_default();
        states.push(IdleState {
            state,
            name: name.trim().to_string(),
            latency_us: read("latency").trim().parse().unwrap_or(0),
            disabled: read("disable").trim() == "1",
        });
    }
    (!states.is_empty()).then_some(IdleCpu { cpu, states })
}

/// The CPUs of a list file, empty where it cannot be read.
pub fn cpus_of(path: &str) -> Vec<usize> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_cpu_list(t.trim()).ok())
        .unwrap_or_default()
}

/// A short description of an inventory, one line per kind.
pub fn summary(inv: &Inventory) -> String {
    format!(
        "cpus {}; {} irqs; {} kernel threads ({} per-CPU); threaded NAPI on {}; cpuidle on {} cpus; cpufreq on {} cpus; partition: {}",
        cpu_list(&inv.cpus),
        inv.irqs.len(),
        inv.kernel_threads.len(),
        inv.kernel_threads.iter().filter(|k| k.per_cpu).count(),
        inv.net.iter().map(|n| n.device.as_str()).collect::<Vec<_>>().join(","),
        inv.idle.len(),
        inv.cpufreq.len(),
        inv.partition.as_deref().unwrap_or("none"),
    )
}
