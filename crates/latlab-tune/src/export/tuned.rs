//! The tuned profile (tuned.conf, INI) of the kept fixes. Each knob goes to
//! the plugin that owns it (section and option names as tuned's plugins
//! define them):
//!
//! | knob | section |
//! |---|---|
//! | sysctl | `[sysctl] name=value` |
//! | transparent hugepages | `[vm] transparent_hugepages=` |
//! | cpufreq governor | `[cpu] devices=cpuN governor=` |
//! | workqueue cpumask, idle state, threaded NAPI, KSM | `[sysfs] /sys/...=value` |
//! | thread priority (and its affinity) | `[scheduler] group.NAME=0:f:50:MASK:REGEX` |
//! | isolated partition | `[scheduler] isolated_cores=` (tuned moves every thread's affinity; not a cpuset) |
//! | IRQ affinity | `[irqbalance] banned_cpus=<rt>`, and the writes to /proc/irq in `[script]` |
//! | boot parameters | `[bootloader] cmdline=` |
//!
//! No tuned plugin writes `/proc/irq/N/smp_affinity_list`, nor a thread's
//! affinity without also setting its policy: those go to the profile's
//! `script.sh` (`[script]`, the same shell script, run with start/stop).

use std::collections::BTreeMap;

use latlab_fix::Knob;

use super::{cpu_mask, Kept, PROFILE};
use crate::result::BootParameter;

/// The kept fixes no tuned plugin applies, for the profile's `[script]`;
/// `None` when there are none.
pub(crate) fn script_part(kept: &[Kept]) -> Option<Vec<Kept>> {
    let part: Vec<Kept> = kept
        .iter()
        .filter(|k| match &k.knob {
            Knob::IrqAffinity { .. } => true,
            Knob::TaskAffinity { comm, .. } => priority_of(kept, comm).is_none(),
            _ => false,
        })
        .cloned()
        .collect();
    (!part.is_empty()).then_some(part)
}

fn priority_of<'a>(kept: &'a [Kept], comm: &str) -> Option<&'a Kept> {
    kept.iter()
        .find(|k| matches!(&k.knob, Knob::TaskPriority { comm: c, .. } if c == comm))
}

/// tuned's letter for a policy value (`fifo:50` -> `f`, 50).
fn policy(value: &str) -> Option<(char, u32)> {
    let (name, prio) = value.split_once(':')?;
    let letter = match name {
        "fifo" => 'f',
        "rr" => 'r',
        "other" => 'o',
        "batch" => 'b',
        "idle" => 'i',
        _ => return None,
    };
    Some((letter, prio.trim().parse().ok()?))
}

/// A regular expression for a thread's name in `ps -eo cmd` output: a
/// kernel thread as `[name]`, a program by its path's last part.
fn name_regex(comm: &str) -> String {
    let mut escaped = String::new();
    for c in comm.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '/' => escaped.push(c),
            // `#` starts a comment and `$` a variable in tuned.conf.
            c if c.is_ascii() => escaped.push_str(&format!("\\x{:02x}", c as u32)),
            c => escaped.push(c),
        }
    }
    format!(r"(^|/)\[?{escaped}\]?(\s|$)")
}

/// The profile's sections: name -> lines (comments and options), in order.
type Sections = BTreeMap<String, Vec<String>>;

fn option(sections: &mut Sections, section: &str, why: &str, line: String) {
    let lines = sections.entry(section.to_string()).or_default();
    lines.push(format!("# {why}"));
    lines.push(line);
}

/// A tuned.conf for the kept fixes and the boot parameters, for the
/// real-time CPUs `rt`. It includes no other profile.
pub fn tuned_profile(kept: &[Kept], boot: &[BootParameter], rt: &[usize]) -> String {
    let rt_list = latlab_fix::cpu_list(rt);
    let mut s = Sections::new();
    let mut unmapped: Vec<String> = Vec::new();
    let mut governors: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, k) in kept.iter().enumerate() {
        let why = &k.why;
        match &k.knob {
            Knob::Sysctl { name } => option(&mut s, "sysctl", why, format!("{name}={}", k.value)),
            Knob::TransparentHugepages => option(
                &mut s,
                "vm",
                why,
                format!("transparent_hugepages={}", k.value),
            ),
            Knob::CpufreqGovernor { cpu } => governors.entry(&k.value).or_default().push(*cpu),
            Knob::WorkqueueCpumask => match cpu_mask(&k.value) {
                Some(mask) => option(&mut s, "sysfs", why, format!("{}={mask}", k.knob)),
                None => unmapped.push(format!("{} = {} (not a CPU list)", k.knob, k.value)),
            },
            Knob::IdleState { .. } | Knob::ThreadedNapi { .. } | Knob::Ksm => {
                option(&mut s, "sysfs", why, format!("{}={}", k.knob, k.value))
            }
            Knob::TaskPriority { comm, .. } => {
                let affinity = kept.iter().find_map(|a| match &a.knob {
                    Knob::TaskAffinity { comm: c, .. } if c == comm => cpu_mask(&a.value),
                    _ => None,
                });
                match policy(&k.value) {
                    Some((letter, prio)) => option(
                        &mut s,
                        "scheduler",
                        &format!("{why} (thread {comm}, matched by name)"),
                        format!(
                            "group.latlab{i}=0:{letter}:{prio}:{}:{}",
                            affinity.as_deref().unwrap_or("*"),
                            name_regex(comm)
                        ),
                    ),
                    None => unmapped.push(format!("{} = {} (policy not known)", k.knob, k.value)),
                }
            }
            Knob::CpusetPartition => option(
                &mut s,
                "scheduler",
                &format!("{why} (tuned moves every other thread's affinity off these CPUs: its substitute for the partition)"),
                format!("isolated_cores={}", k.value),
            ),
            Knob::IrqAffinity { .. } | Knob::TaskAffinity { .. } => {}
            Knob::BootParameter { name } => {
                unmapped.push(format!("boot parameter {name} (in [bootloader] when on the line)"))
            }
        }
    }
    for (i, (governor, cpus)) in governors.iter().enumerate() {
        let devices: Vec<String> = cpus.iter().map(|c| format!("cpu{c}")).collect();
        let name = if i == 0 {
            "cpu".into()
        } else {
            format!("cpu_latlab{i}")
        };
        let lines = s.entry(name).or_default();
        if i > 0 {
            lines.push("type=cpu".into());
        }
        lines.push("# the cpufreq governor of the real-time CPUs, kept by latlab tune".into());
        lines.push(format!("devices={}", devices.join(",")));
        lines.push(format!("governor={governor}"));
    }
    if let Some(part) = script_part(kept) {
        if part
            .iter()
            .any(|k| matches!(k.knob, Knob::IrqAffinity { .. }))
        {
            option(
                &mut s,
                "irqbalance",
                "keep irqbalance from moving interrupts back onto the real-time CPUs",
                format!("banned_cpus={rt_list}"),
            );
        }
        let lines = s.entry("script".into()).or_default();
        lines.push("# no tuned plugin writes these; script.sh does (start/stop):".into());
        for k in &part {
            lines.push(format!("#   {} = {}: {}", k.knob, k.value, k.why));
        }
        lines.push("script=${i:PROFILE_DIR}/script.sh".into());
    }
    if !boot.is_empty() {
        let lines = s.entry("bootloader".into()).or_default();
        for p in boot {
            lines.push(format!("# {}: {}", p.text, super::one_line(&p.why)));
        }
        let cmdline: Vec<&str> = boot.iter().map(|p| p.text.as_str()).collect();
        lines.push(format!("cmdline={}", cmdline.join(" ")));
    }
    let mut out = format!(
        "# tuned profile written by latlab tune: the fixes it measured and kept for\n\
         # the real-time CPUs {rt_list}. It includes no other profile.\n\
         # Install: cp -r {PROFILE} /etc/tuned/ && tuned-adm profile {PROFILE}\n"
    );
    for line in &unmapped {
        out.push_str(&format!("# not in this profile: {line}\n"));
    }
    out.push_str(&format!(
        "\n[main]\nsummary=latlab tune: the fixes measured to help real-time CPUs {rt_list}\n"
    ));
    for (name, lines) in &s {
        out.push_str(&format!("\n[{name}]\n"));
        for line in lines {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
