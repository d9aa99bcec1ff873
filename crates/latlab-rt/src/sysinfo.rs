//! Facts about the machine recorded with every result, and the pitfalls
//! worth a warning before a run.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What latlab knows about the kernel and hardware a result came from.
/// Fields are `None` where the machine does not expose the fact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SystemInfo {
    /// Host name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v`: build number, date and preemption flags.
    pub kernel_version: String,
    /// `uname -m`.
    pub machine: String,
    /// Preemption model in use: `none`, `voluntary`, `full`, `lazy`, `rt`.
    pub preemption_model: Option<String>,
    /// How the preemption model was determined.
    pub preemption_source: Option<String>,
    /// CONFIG_HZ (timer tick frequency).
    pub hz: Option<u32>,
    /// High-resolution timers active (CLOCK_MONOTONIC resolution of 1 ns).
    pub high_res_timers: bool,
    /// Current clocksource.
    pub clocksource: Option<String>,
    /// Kernel command line.
    pub cmdline: String,
    /// `isolcpus=` from the command line.
    pub isolcpus: Option<String>,
    /// `nohz_full=` from the command line.
    pub nohz_full: Option<String>,
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// Number of online CPUs.
    pub online_cpus: usize,
    /// Hypervisor detected (e.g. `KVM`, `hypervisor flag`), `None` on bare metal.
    pub virtualization: Option<String>,
    /// cpufreq governor per CPU (empty when cpufreq is absent).
    pub cpufreq_governors: Vec<String>,
    /// Idle states of CPU 0 as `name (exit latency µs)`; empty when cpuidle is absent.
    pub idle_states: Vec<String>,
    /// /proc/sys/kernel/sched_rt_runtime_us (-1 = throttling off).
    pub rt_runtime_us: Option<i64>,
    /// /proc/sys/kernel/sched_rt_period_us.
    pub rt_period_us: Option<i64>,
}

impl SystemInfo {
    /// Reads everything from /proc and /sys. Never fails: what cannot be read stays `None`.
    pub fn gather() -> SystemInfo {
        let uname = uname();
        let cmdline = read_trimmed("/proc/cmdline").unwrap_or_default();
        let config = kernel_config(&uname.1);
        let (preemption_model, preemption_source) = preemption(
            read_trimmed("/sys/kernel/debug/sched/preempt").as_deref(),
            &uname.2,
            &cmdline,
            config.as_deref(),
        );
        let cpuinfo = read_trimmed("/proc/cpuinfo").unwrap_or_default();
        SystemInfo {
            hostname: uname.0,
            kernel_release: uname.1,
            kernel_version: uname.2,
            machine: uname.3,
            preemption_model,
            preemption_source,
            hz: config
                .as_deref()
                .and_then(|c| config_value(c, "CONFIG_HZ"))
                .and_then(|v| v.parse().ok()),
            high_res_timers: monotonic_resolution_ns() == 1,
            clocksource: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            isolcpus: cmdline_value(&cmdline, "isolcpus"),
            nohz_full: cmdline_value(&cmdline, "nohz_full"),
            cmdline,
            cpu_model: cpuinfo
                .lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string()),
            online_cpus: crate::sched::usable_cpus().len(),
            virtualization: virtualization(&cpuinfo),
            cpufreq_governors: (0..crate::sched::usable_cpus().len())
                .filter_map(|cpu| {
                    read_trimmed(format!(
                        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
                    ))
                })
                .collect(),
            idle_states: idle_states(),
            rt_runtime_us: read_trimmed("/proc/sys/kernel/sched_rt_runtime_us")
                .and_then(|v| v.parse().ok()),
            rt_period_us: read_trimmed("/proc/sys/kernel/sched_rt_period_us")
                .and_then(|v| v.parse().ok()),
        }
    }

    /// Known pitfalls of this machine for latency measurement, in words
    /// (each [`Pitfall::text`]): what a result's `warnings` record.
    pub fn pitfalls(&self) -> Vec<String> {
        self.pitfall_list().iter().map(Pitfall::text).collect()
    }

    /// Known pitfalls of this machine for latency measurement: each a short
    /// summary for the terminal and the why and the fix for the result.
    pub fn pitfall_list(&self) -> Vec<Pitfall> {
        let mut pitfalls = Vec::new();
        if let Some(runtime) = self.rt_runtime_us.filter(|&r| r >= 0) {
            pitfalls.push(Pitfall {
                summary: format!(
                    "RT throttling is on (sched_rt_runtime_us={runtime} of {} us)",
                    self.rt_period_us.unwrap_or(1_000_000)
                ),
                detail: "a runaway RT task is stopped, but so is a legitimate one; disable \
                         with `echo -1 > /proc/sys/kernel/sched_rt_runtime_us` for production \
                         tests"
                    .into(),
            });
        }
        if let Some(hv) = &self.virtualization {
            pitfalls.push(Pitfall {
                summary: format!("running in a virtual machine ({hv})"),
                detail: "the host can stop a vCPU at any time, so worst cases here say little \
                         about bare metal"
                    .into(),
            });
        }
        if self.cpufreq_governors.iter().any(|g| g != "performance") {
            pitfalls.push(Pitfall {
                summary: "CPU frequency scaling is active (governor not `performance`)".into(),
                detail: "wake-ups on a slowed-down CPU take longer; `cpupower frequency-set -g \
                         performance`"
                    .into(),
            });
        }
        if !self.high_res_timers {
            pitfalls.push(Pitfall {
                summary: "high-resolution timers are not active".into(),
                detail: "wake-ups are rounded to the tick".into(),
            });
        }
        pitfalls
    }
}

/// Something about the machine that spoils a latency measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pitfall {
    /// What it is, short enough for one terminal line: `RT throttling is on
    /// (sched_rt_runtime_us=950000 of 1000000 us)`.
    pub summary: String,
    /// Why it matters and the fix.
    pub detail: String,
}

impl Pitfall {
    /// The whole sentence: `<summary>: <detail>` (the summary alone without
    /// a detail).
    pub fn text(&self) -> String {
        if self.detail.is_empty() {
            self.summary.clone()
        } else {
            format!("{}: {}", self.summary, self.detail)
        }
    }
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn uname() -> (String, String, String, String) {
    // SAFETY: utsname is plain data filled in by the kernel.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        let field = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (
            field(&u.nodename),
            field(&u.release),
            field(&u.version),
            field(&u.machine),
        )
    }
}

// time_t and c_long are i64 here but c_long is i32 on 32-bit targets.
#[allow(clippy::unnecessary_cast)]
fn monotonic_resolution_ns() -> i64 {
    let mut ts = crate::clock::zeroed_timespec();
    // SAFETY: valid timespec out-pointer.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// The kernel build configuration, from /proc/config.gz or /boot/config-RELEASE.
fn kernel_config(release: &str) -> Option<String> {
    if let Ok(file) = std::fs::File::open("/proc/config.gz") {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(file)
            .read_to_string(&mut text)
            .is_ok()
        {
            return Some(text);
        }
    }
    std::fs::read_to_string(format!("/boot/config-{release}")).ok()
}

fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
}

fn cmdline_value(cmdline: &str, key: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_string)
}

/// The preemption model in force and how it was found, from debugfs's
/// `sched/preempt` (`dynamic_modes`, if mounted), `uname -v`, the command
/// line and the kernel config. A PREEMPT_DYNAMIC kernel without debugfs or
/// a config (a board's initramfs, say) is `dynamic`: its active mode is not
/// to be known without them, and the source says how to learn it.
fn preemption(
    dynamic_modes: Option<&str>,
    version: &str,
    cmdline: &str,
    config: Option<&str>,
) -> (Option<String>, Option<String>) {
    // debugfs shows the active dynamic mode in parentheses: "none (voluntary) full".
    let active = dynamic_modes.and_then(|modes| {
        modes
            .split_whitespace()
            .find(|m| m.starts_with('('))
            .map(|m| m.trim_matches(|c| c == '(' || c == ')').to_string())
    });
    // A PREEMPT_RT kernel may be PREEMPT_DYNAMIC too (6.12: its modes are
    // full and lazy); it is `rt` whatever the mode.
    if version.contains("PREEMPT_RT") {
        let source = match &active {
            Some(mode) => format!("uname -v (PREEMPT_RT; dynamic mode {mode})"),
            None => "uname -v".into(),
        };
        return (Some("rt".into()), Some(source));
    }
    if let Some(active) = active {
        return (Some(active), Some("/sys/kernel/debug/sched/preempt".into()));
    }
    if let Some(mode) = cmdline_value(cmdline, "preempt") {
        return (Some(mode), Some("kernel command line preempt=".into()));
    }
    if let Some(config) = config {
        for (key, mode) in [
            ("CONFIG_PREEMPT_RT", "rt"),
            ("CONFIG_PREEMPT_NONE", "none"),
            ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
            ("CONFIG_PREEMPT_LAZY", "lazy"),
            ("CONFIG_PREEMPT", "full"),
        ] {
            if config_value(config, key) == Some("y") {
                let dynamic = config_value(config, "CONFIG_PREEMPT_DYNAMIC") == Some("y");
                let source = if dynamic {
                    "kernel config default (PREEMPT_DYNAMIC, no preempt= on the command line)"
                } else {
                    "kernel config"
                };
                return (Some(mode.into()), Some(source.into()));
            }
        }
    }
    if version.contains("PREEMPT_DYNAMIC") {
        return (
            Some("dynamic".into()),
            Some(
                "uname -v (PREEMPT_DYNAMIC; the active mode is in /sys/kernel/debug/sched/preempt: \
                 mount -t debugfs none /sys/kernel/debug)"
                    .into(),
            ),
        );
    }
    if version.contains("PREEMPT ") || version.ends_with("PREEMPT") {
        return (Some("full".into()), Some("uname -v".into()));
    }
    (None, None)
}

fn virtualization(cpuinfo: &str) -> Option<String> {
    if let Some(kind) = read_trimmed("/sys/hypervisor/type") {
        return Some(kind);
    }
    for path in [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ] {
        if let Some(vendor) = read_trimmed(path) {
            for known in [
                "QEMU",
                "KVM",
                "VMware",
                "VirtualBox",
                "Xen",
                "Microsoft",
                "Amazon EC2",
                "Google",
            ] {
                if vendor.contains(known) {
                    return Some(vendor);
                }
            }
        }
    }
    if let Some(kind) = std::fs::read("/proc/device-tree/compatible")
        .ok()
        .and_then(|c| virtual_board(&c))
    {
        return Some(kind);
    }
    let flagged = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    flagged.then(|| "hypervisor (cpuid flag)".to_string())
}

/// A virtual machine known by its device tree's `compatible` strings
/// (NUL-separated): ARM and RISC-V guests have no DMI and no cpuid flag.
fn virtual_board(compatible: &[u8]) -> Option<String> {
    compatible
        .split(|&b| b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .find_map(|s| match s {
            "linux,dummy-virt" => Some("QEMU virt machine (device tree linux,dummy-virt)".into()),
            "riscv-virtio" => Some("QEMU virt machine (device tree riscv-virtio)".into()),
            _ if s.starts_with("xen,") => Some(format!("Xen (device tree {s})")),
            _ => None,
        })
}

fn idle_states() -> Vec<String> {
    let base = Path::new("/sys/devices/system/cpu/cpu0/cpuidle");
    let mut states = Vec::new();
    for index in 0.. {
        let dir = base.join(format!("state{index}"));
        let Some(name) = read_trimmed(dir.join("name")) else {
            break;
        };
        let latency = read_trimmed(dir.join("latency")).unwrap_or_else(|| "?".into());
        states.push(format!("{name} ({latency} us)"));
    }
    states
}

/// Steal time per CPU in nanoseconds, from /proc/stat (time the hypervisor
/// ran something else while this vCPU wanted to run). Empty when unreadable.
pub fn steal_ns_per_cpu() -> Vec<(usize, u64)> {
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    read_trimmed("/proc/stat")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: usize = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal: u64 = fields.nth(7)?.parse().ok()?;
            Some((cpu, steal * 1_000_000_000 / tick))
        })
        .collect()
}

/// Steal time per CPU accumulated since `before` (a [`steal_ns_per_cpu`] reading).
pub fn steal_ns_since(before: &[(usize, u64)]) -> Vec<(usize, u64)> {
    steal_ns_per_cpu()
        .into_iter()
        .map(|(cpu, now)| {
            let then = before
                .iter()
                .find(|(c, _)| *c == cpu)
                .map_or(now, |&(_, t)| t);
            (cpu, now.saturating_sub(then))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_time_only_grows() {
        let before = steal_ns_per_cpu();
        assert!(!before.is_empty(), "/proc/stat lists CPUs");
        let since = steal_ns_since(&before);
        assert_eq!(since.len(), before.len());
        // A CPU that was not in the first reading counts from zero.
        let since_nothing = steal_ns_since(&[]);
        assert!(since_nothing.iter().all(|&(_, ns)| ns == 0));
    }

    #[test]
    fn gather_reads_this_machine() {
        let info = SystemInfo::gather();
        assert!(!info.kernel_release.is_empty());
        assert!(info.online_cpus >= 1);
        assert!(!info.cmdline.is_empty());
    }

    #[test]
    fn preemption_from_config_and_cmdline() {
        let config = "CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ=250\n";
        assert_eq!(config_value(config, "CONFIG_HZ"), Some("250"));
        let dynamic = "#1 SMP PREEMPT_DYNAMIC";
        let (model, source) = preemption(None, dynamic, "quiet", Some(config));
        assert_eq!(model.as_deref(), Some("none"));
        assert!(source.unwrap().contains("PREEMPT_DYNAMIC"));
        // debugfs names the active mode and wins over the config.
        let modes = Some("none (voluntary) full");
        let (model, _) = preemption(modes, dynamic, "quiet", Some(config));
        assert_eq!(model.as_deref(), Some("voluntary"));
        let (model, source) = preemption(None, "#1 SMP", "preempt=full quiet", None);
        assert_eq!(model.as_deref(), Some("full"));
        assert_eq!(source.as_deref(), Some("kernel command line preempt="));
        let rt = "#1 SMP PREEMPT_RT Debian 6.1.192-2";
        assert_eq!(preemption(None, rt, "", None).0.as_deref(), Some("rt"));
    }

    /// Found in the lab: Debian's 6.12 PREEMPT_RT kernel is PREEMPT_DYNAMIC
    /// too, and debugfs's mode (lazy) was taken for the model.
    #[test]
    fn a_preempt_rt_kernel_is_rt_whatever_its_dynamic_mode() {
        let version = "#1 SMP PREEMPT_RT Debian 6.12.107-1 (2026-08-29)";
        let (model, source) = preemption(Some("full (lazy)"), version, "", None);
        assert_eq!(model.as_deref(), Some("rt"));
        assert_eq!(
            source.as_deref(),
            Some("uname -v (PREEMPT_RT; dynamic mode lazy)")
        );
    }

    /// Found in the lab: QEMU's ARM virt machine (no DMI, no cpuid flag)
    /// was called bare metal.
    #[test]
    fn an_arm_virt_guest_is_known_by_its_device_tree() {
        let kind = virtual_board(b"linux,dummy-virt\0").unwrap();
        assert!(kind.contains("QEMU virt"), "{kind}");
        assert_eq!(
            virtual_board(b"raspberrypi,4-model-b\0brcm,bcm2711\0"),
            None
        );
    }

    /// Found in the lab: Debian's kernel in a busybox initramfs has no
    /// config file and no debugfs mounted; the model was then unknown.
    #[test]
    fn a_dynamic_kernel_without_config_or_debugfs_is_dynamic() {
        let version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16)";
        let (model, source) = preemption(None, version, "console=ttyS0", None);
        assert_eq!(model.as_deref(), Some("dynamic"));
        assert!(source.unwrap().contains("mount -t debugfs"));
    }

    #[test]
    fn cmdline_values_stop_at_double_dash() {
        let cmdline = "quiet isolcpus=2-3 nohz_full=2-3 -- isolcpus=9";
        assert_eq!(cmdline_value(cmdline, "isolcpus").as_deref(), Some("2-3"));
        assert_eq!(cmdline_value(cmdline, "nohz_full").as_deref(), Some("2-3"));
        assert_eq!(cmdline_value("a -- nohz_full=1", "nohz_full"), None);
    }

    #[test]
    fn pitfalls_name_throttling_and_vm() {
        let info = SystemInfo {
            rt_runtime_us: Some(950_000),
            rt_period_us: Some(1_000_000),
            virtualization: Some("KVM".into()),
            high_res_timers: true,
            ..SystemInfo::default()
        };
        let text = info.pitfalls().join("\n");
        assert!(text.contains("RT throttling"));
        assert!(text.contains("virtual machine"));
        let list = info.pitfall_list();
        assert_eq!(
            list[0].summary,
            "RT throttling is on (sched_rt_runtime_us=950000 of 1000000 us)"
        );
        assert!(list.iter().all(|p| p.summary.len() < 80), "{list:?}");
        assert!(list[0].text().ends_with("for production tests"), "{list:?}");
    }
}
