//! The kernel command line for the real-time CPUs: each parameter with the
//! measured cause (or the `--isolate` rule) that asks for it, whether the
//! running kernel already boots with it, and the whole line merged with the
//! running one, for GRUB and for U-Boot/extlinux.
//!
//! Decisions, so a reader need not guess them:
//! - CPU 0 is never a real-time CPU here: it is the boot CPU, it keeps
//!   timekeeping (kernels clear it from `nohz_full=` with a warning), and on
//!   x86 it cannot go offline. Choose another CPU; at least one online CPU
//!   must stay for housekeeping.
//! - Idle limits are written for x86 only (`intel_idle.max_cstate=1
//!   processor.max_cstate=1`, every CPU: no boot parameter limits one CPU).
//!   `cpuidle.off=1` elsewhere would leave each CPU to the architecture's
//!   default idle without a word on what that costs per board; on arm64 and
//!   the rest nothing is said, and the runtime per-CPU `disable` files (the
//!   `IdleState` knob) are the fix.
//! - `preempt=full` only on a PREEMPT_DYNAMIC kernel not already full, and
//!   never on PREEMPT_RT. Under `--isolate` it is part of the standard set.
//! - `nosoftlockup nowatchdog` only under `--isolate` (a safety net goes);
//!   `tsc=reliable` never: whether the TSC is reliable is not ours to claim.
//!
//! ```
//! use latlab_tune::bootline::{boot_line, BootFacts, Need, PreemptModel};
//!
//! let facts = BootFacts {
//!     rt: vec![1],
//!     housekeeping: vec![0],
//!     online: vec![0, 1],
//!     cmdline: "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet nohz_full=3".into(),
//!     preemption: PreemptModel::Voluntary,
//!     dynamic: true,
//!     arch: "x86_64".into(),
//!     task_priority: 80,
//!     needs: vec![(Need::Preemption, "ld-io0 held the CPU, 78 %".into())],
//! };
//! let line = boot_line(&facts, false).unwrap();
//! assert_eq!(line.parameters[0].text, "preempt=full");
//! assert_eq!(line.grub, "quiet nohz_full=3 preempt=full");
//! assert_eq!(line.uboot, "root=/dev/vda1 ro quiet nohz_full=3 preempt=full");
//! ```

mod cmdline;
mod facts;

use latlab_fix::cpu_list;

use crate::result::{BootLine, BootParameter};

use cmdline::{already, key};
pub use cmdline::{merge, words};
pub use facts::{BootFacts, Need, PreemptModel};

/// Why no command line can be made for these CPUs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BootError {
    /// No real-time CPU was given.
    #[error("no real-time CPU given: name one with --cpus (not CPU 0)")]
    NoRealTime,
    /// Every online CPU was asked for real time.
    #[error(
        "CPUs {rt} are every online CPU: keep at least one for housekeeping (the kernel's \
         timekeeping, interrupts and RCU need it); choose fewer with --cpus"
    )]
    EveryCpu {
        /// The real-time CPUs asked for.
        rt: String,
    },
    /// A real-time CPU is not online.
    #[error("CPU {cpu} is not online (online: {online}); choose among those")]
    NotOnline {
        /// The CPU.
        cpu: usize,
        /// The online CPUs.
        online: String,
    },
    /// CPU 0 was asked for real time.
    #[error(
        "CPU 0 is the boot CPU: it keeps timekeeping and the kernel clears it from nohz_full=; \
         choose real-time CPUs among 1-{last}"
    )]
    BootCpu {
        /// The last online CPU.
        last: usize,
    },
    /// The housekeeping CPUs are none, or overlap the real-time ones.
    #[error("housekeeping CPUs {hk} must be online, not empty and apart from real-time CPUs {rt}")]
    Housekeeping {
        /// The housekeeping CPUs.
        hk: String,
        /// The real-time CPUs.
        rt: String,
    },
}

fn check(facts: &BootFacts) -> Result<(), BootError> {
    let online = cpu_list(&facts.online);
    if facts.rt.is_empty() {
        return Err(BootError::NoRealTime);
    }
    if let Some(&cpu) = facts.rt.iter().find(|c| !facts.online.contains(c)) {
        return Err(BootError::NotOnline { cpu, online });
    }
    if facts.online.iter().all(|c| facts.rt.contains(c)) {
        return Err(BootError::EveryCpu {
            rt: cpu_list(&facts.rt),
        });
    }
    if facts.rt.contains(&0) {
        let last = facts.online.iter().copied().max().unwrap_or(1);
        return Err(BootError::BootCpu { last });
    }
    let hk = &facts.housekeeping;
    if hk.is_empty()
        || hk.iter().any(|c| facts.rt.contains(c))
        || hk.iter().any(|c| !facts.online.contains(c))
    {
        return Err(BootError::Housekeeping {
            hk: cpu_list(hk),
            rt: cpu_list(&facts.rt),
        });
    }
    Ok(())
}

/// The rule under `--isolate` for a parameter no cause asked for.
const ISOLATE: &str = "--isolate: the standard isolation set";

/// The parameters for these facts, in a fixed order, each with why and
/// whether the running kernel already boots with it.
pub fn parameters(facts: &BootFacts, isolate: bool) -> Result<Vec<BootParameter>, BootError> {
    check(facts)?;
    let (rt, hk) = (cpu_list(&facts.rt), cpu_list(&facts.housekeeping));
    let why = |needs: &[Need]| -> Option<String> {
        let whys: Vec<&str> = facts
            .needs
            .iter()
            .filter(|(need, _)| needs.contains(need))
            .map(|(_, why)| why.as_str())
            .collect();
        match (whys.is_empty(), isolate) {
            (false, _) => Some(whys.join("; ")),
            (true, true) => Some(ISOLATE.to_string()),
            (true, false) => None,
        }
    };
    let mut wanted: Vec<(String, Option<String>)> = vec![
        (
            format!("isolcpus=managed_irq,domain,{rt}"),
            why(&[Need::Isolation, Need::Workqueue]),
        ),
        (format!("nohz_full={rt}"), why(&[Need::Tick])),
        (format!("rcu_nocbs={rt}"), why(&[Need::Rcu])),
        (format!("irqaffinity={hk}"), why(&[Need::IrqAffinity])),
    ];
    if facts.task_priority >= 2 {
        let prio = (facts.task_priority - 1).min(99);
        wanted.push((format!("rcutree.kthread_prio={prio}"), why(&[Need::Rcu])));
    }
    let preemptible =
        facts.dynamic && !matches!(facts.preemption, PreemptModel::Full | PreemptModel::Rt);
    if preemptible {
        wanted.push(("preempt=full".into(), why(&[Need::Preemption])));
    }
    wanted.push(("skew_tick=1".into(), why(&[Need::Tick])));
    if matches!(facts.arch.as_str(), "x86_64" | "i386" | "i586" | "i686") {
        let idle = facts
            .needs
            .iter()
            .filter(|(need, _)| *need == Need::Idle)
            .map(|(_, why)| format!("{why} (limits every CPU: no boot parameter limits one)"))
            .collect::<Vec<_>>();
        if !idle.is_empty() {
            let idle = Some(idle.join("; "));
            wanted.push(("intel_idle.max_cstate=1".into(), idle.clone()));
            wanted.push(("processor.max_cstate=1".into(), idle));
        }
    }
    if isolate {
        wanted.push(("nosoftlockup".into(), Some(ISOLATE.into())));
        wanted.push(("nowatchdog".into(), Some(ISOLATE.into())));
    }
    let running = words(&facts.cmdline);
    Ok(wanted
        .into_iter()
        .filter_map(|(text, why)| {
            let why = why?;
            let already = already(&running, &text);
            Some(BootParameter { text, why, already })
        })
        .collect())
}

/// The parameters and the whole line merged with the running one: `grub`
/// is the value for `GRUB_CMDLINE_LINUX_DEFAULT` (without `BOOT_IMAGE=`,
/// `root=`, `ro`/`rw` and `initrd=`, which GRUB adds); `uboot` is the whole
/// line for `setenv bootargs '...'` or extlinux's `APPEND`.
pub fn boot_line(facts: &BootFacts, isolate: bool) -> Result<BootLine, BootError> {
    let parameters = parameters(facts, isolate)?;
    let merged = merge(&facts.cmdline, &parameters);
    let grub = words(&merged)
        .into_iter()
        .take_while(|w| *w != "--")
        .filter(|w| {
            let key = key(w);
            !matches!(key, "BOOT_IMAGE" | "root" | "ro" | "rw" | "initrd")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let uboot = words(&merged)
        .into_iter()
        .filter(|w| !matches!(key(w), "BOOT_IMAGE" | "initrd"))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(BootLine {
        parameters,
        grub,
        uboot,
    })
}
