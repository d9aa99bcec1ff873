//! What `latlab tune` kept, as files other tools read: a tuned profile
//! ([`tuned_profile`]), and for a system without tuned a POSIX shell script
//! ([`shell_script`]) and a sysctl.d file ([`sysctl_d`]). [`write_exports`]
//! writes them all under one directory:
//!
//! ```text
//! DIR/tuned/latlab-rt/tuned.conf   cp -r DIR/tuned/latlab-rt /etc/tuned/ && tuned-adm profile latlab-rt
//! DIR/tuned/latlab-rt/script.sh    the kept fixes no tuned plugin applies (IRQ and thread affinity)
//! DIR/latlab-rt.sh                 sh latlab-rt.sh [start|stop], as root
//! DIR/90-latlab-rt.conf            cp to /etc/sysctl.d/ && sysctl --system
//! ```
//!
//! A kept value is as [`latlab_fix::Value::resolve`] gives it: CPU sets are
//! CPU lists (`0-1`); the files that take a hexadecimal mask (the workqueue
//! cpumask, tuned's scheduler affinity) get [`cpu_mask`] of it here.

mod script;
mod tuned;

use std::io;
use std::path::{Path, PathBuf};

use latlab_fix::Knob;

use crate::result::{BootParameter, Outcome, PlannedFix};

pub use script::shell_script;
pub use tuned::tuned_profile;

/// The tuned profile's name (its directory under `/etc/tuned`).
pub const PROFILE: &str = "latlab-rt";

/// One kept fix: the knob, the value tune wrote, and why it was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The knob.
    pub knob: Knob,
    /// The value written (CPU sets as CPU lists).
    pub value: String,
    /// Why: the cause that asked for it (one line).
    pub why: String,
}

impl Kept {
    /// A kept fix.
    pub fn new(knob: Knob, value: impl Into<String>, why: impl Into<String>) -> Kept {
        Kept {
            knob,
            value: value.into(),
            why: one_line(&why.into()),
        }
    }

    /// The fix of a tune result, if it was measured and kept.
    pub fn from_planned(planned: &PlannedFix) -> Option<Kept> {
        matches!(planned.outcome, Outcome::Kept { .. }).then(|| {
            Kept::new(
                planned.fix.knob.clone(),
                planned.proposed.clone(),
                format!(
                    "{} (measured: helped by more than the noise)",
                    planned.fix.why
                ),
            )
        })
    }
}

impl From<(Knob, String)> for Kept {
    fn from((knob, value): (Knob, String)) -> Kept {
        Kept::new(knob, value, "kept by latlab tune")
    }
}

/// Text on one line (for a comment).
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A CPU list (`0-1,33`) as the kernel's hexadecimal mask: 32-bit groups,
/// highest first, separated by commas (`2,00000003`). `None` if the list
/// does not parse.
pub fn cpu_mask(list: &str) -> Option<String> {
    let cpus = latlab_rt::sched::parse_cpu_list(list).ok()?;
    let groups = cpus.iter().max().map_or(1, |max| max / 32 + 1);
    let mut words = vec![0u32; groups];
    for cpu in cpus {
        words[cpu / 32] |= 1 << (cpu % 32);
    }
    let mut out: Vec<String> = Vec::new();
    for (i, word) in words.iter().rev().enumerate() {
        out.push(if i == 0 {
            format!("{word:x}")
        } else {
            format!("{word:08x}")
        });
    }
    Some(out.join(","))
}

/// A `/etc/sysctl.d/90-latlab-rt.conf` with each kept sysctl, why above it.
pub fn sysctl_d(kept: &[Kept]) -> String {
    let mut out = String::from(
        "# Written by latlab tune: the sysctls it measured and kept.\n\
         # Install: cp 90-latlab-rt.conf /etc/sysctl.d/ && sysctl --system\n",
    );
    for k in kept {
        if let Knob::Sysctl { name } = &k.knob {
            out.push_str(&format!("\n# {}\n{name} = {}\n", k.why, k.value));
        }
    }
    out
}

/// The files [`write_exports`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exports {
    /// `DIR/tuned/latlab-rt/tuned.conf`.
    pub tuned: PathBuf,
    /// `DIR/tuned/latlab-rt/script.sh`, when the profile needs one.
    pub tuned_script: Option<PathBuf>,
    /// `DIR/latlab-rt.sh`.
    pub script: PathBuf,
    /// `DIR/90-latlab-rt.conf`.
    pub sysctl: PathBuf,
}

/// Writes the tuned profile, the shell script and the sysctl.d file under
/// `dir` (made if missing); the scripts are executable.
pub fn write_exports(
    dir: &Path,
    kept: &[Kept],
    boot: &[BootParameter],
    rt: &[usize],
) -> io::Result<Exports> {
    let profile = dir.join("tuned").join(PROFILE);
    std::fs::create_dir_all(&profile)?;
    let tuned = profile.join("tuned.conf");
    std::fs::write(&tuned, tuned_profile(kept, boot, rt))?;
    let tuned_script = match tuned::script_part(kept) {
        Some(part) => {
            let path = profile.join("script.sh");
            write_executable(&path, &shell_script(&part, &[]))?;
            Some(path)
        }
        None => None,
    };
    let script = dir.join("latlab-rt.sh");
    write_executable(&script, &shell_script(kept, boot))?;
    let sysctl = dir.join("90-latlab-rt.conf");
    std::fs::write(&sysctl, sysctl_d(kept))?;
    Ok(Exports {
        tuned,
        tuned_script,
        script,
        sysctl,
    })
}

/// `--export DIR`: [`write_exports`] for what `result` kept; the files
/// written, in the order to list them.
pub fn write_result(dir: &Path, result: &crate::result::TuneResult) -> io::Result<Vec<PathBuf>> {
    let kept: Vec<_> = result.fixes.iter().filter_map(Kept::from_planned).collect();
    let files = write_exports(dir, &kept, &result.boot.parameters, &result.settings.cpus)?;
    let mut written = vec![files.tuned, files.script, files.sysctl];
    written.extend(files.tuned_script);
    Ok(written)
}

fn write_executable(path: &Path, text: &str) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
