//! The exported files as text: the sysctl.d file read by procps's own
//! sysctl (`--dry-run`: nothing written), the shell script read by `sh -n`,
//! the hexadecimal masks, and what goes where.

use std::process::Command;

use latlab_fix::Knob;
use latlab_tune::export::{cpu_mask, shell_script, sysctl_d, tuned_profile, write_exports, Kept};
use latlab_tune::result::BootParameter;

fn sysctl(name: &str, value: &str) -> Kept {
    Kept::new(
        Knob::Sysctl { name: name.into() },
        value,
        format!("{name} measured"),
    )
}

fn kept() -> Vec<Kept> {
    vec![
        sysctl("vm.stat_interval", "10"),
        sysctl("kernel.timer_migration", "0"),
        Kept::new(
            Knob::IrqAffinity { irq: 24 },
            "0",
            "IRQ 24's handler ran on CPU 1\n(31 %)",
        ),
        Kept::new(Knob::WorkqueueCpumask, "0", "kworker/u4:2 ran on CPU 1"),
        Kept::new(Knob::TransparentHugepages, "never", "khugepaged"),
        Kept::new(
            Knob::TaskPriority {
                pid: 17,
                comm: "ktimers/1".into(),
            },
            "fifo:81",
            "timers waited",
        ),
        Kept::new(
            Knob::TaskAffinity {
                pid: 90,
                comm: "it's-odd".into(),
            },
            "0",
            "a user thread ran on CPU 1",
        ),
    ]
}

fn boot() -> Vec<BootParameter> {
    vec![BootParameter {
        text: "nohz_full=1".into(),
        why: "the tick, 12 %".into(),
        already: false,
    }]
}

#[test]
fn masks_are_the_kernels_hex_in_32_bit_groups() {
    assert_eq!(cpu_mask("0").as_deref(), Some("1"));
    assert_eq!(cpu_mask("0-1").as_deref(), Some("3"));
    assert_eq!(cpu_mask("4,7").as_deref(), Some("90"));
    assert_eq!(cpu_mask("0,33").as_deref(), Some("2,00000001"));
    assert_eq!(cpu_mask("x"), None);
}

#[test]
fn the_sysctl_d_file_is_read_by_procps_sysctl() {
    let text = sysctl_d(&kept());
    assert!(!text.contains("transparent"), "only sysctls:\n{text}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("90-latlab-rt.conf");
    std::fs::write(&path, &text).unwrap();
    let Ok(out) = Command::new("sysctl")
        .arg("--dry-run")
        .arg("-p")
        .arg(&path)
        .output()
    else {
        latlab_testkit::skip::skip("no sysctl (procps): the file is checked by its own parse only");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{stderr}\n{text}"
    );
    // --dry-run prints what it would write, one `key = value` a line.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "vm.stat_interval = 10\nkernel.timer_migration = 0\n"
    );
}

#[test]
fn the_script_parses_and_says_why_for_each_line() {
    let text = shell_script(&kept(), &boot());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latlab-rt.sh");
    std::fs::write(&path, &text).unwrap();
    let out = Command::new("sh").arg("-n").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "  # vm.stat_interval measured\n  put '/proc/sys/vm/stat_interval' '10'\n",
        "  # IRQ 24's handler ran on CPU 1 (31 %)\n  put '/proc/irq/24/smp_affinity_list' '0'\n",
        "  put '/sys/devices/virtual/workqueue/cpumask' 1\n",
        "  put '/sys/kernel/mm/transparent_hugepage/enabled' 'never'\n",
        "  policy 'ktimers/1' -f 81\n",
        "  affinity 'it'\\''s-odd' '0'\n",
        "#   nohz_full=1: the tick, 12 %\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from\n{text}");
    }
    assert!(text.contains("run as root"));
}

#[test]
fn the_profile_puts_each_knob_in_its_plugins_section() {
    let text = tuned_profile(&kept(), &boot(), &[1]);
    for expected in [
        "[main]\nsummary=latlab tune: the fixes measured to help real-time CPUs 1\n",
        "[sysctl]\n# vm.stat_interval measured\nvm.stat_interval=10\n",
        "[vm]\n# khugepaged\ntransparent_hugepages=never\n",
        "/sys/devices/virtual/workqueue/cpumask=1\n",
        "group.latlab5=0:f:81:*:(^|/)\\[?ktimers/1\\]?(\\s|$)\n",
        "[irqbalance]\n",
        "banned_cpus=1\n",
        "cmdline=nohz_full=1\n",
        "script=${i:PROFILE_DIR}/script.sh\n",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    assert!(!text.contains("include="), "the profile stands alone");
    // A value tuned.conf would cut (# starts a comment) never reaches it.
    assert!(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .all(|l| !l.contains('#')));
}

#[test]
fn nothing_kept_writes_files_that_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_exports(dir.path(), &[], &[], &[1]).unwrap();
    assert_eq!(
        written.tuned_script, None,
        "no [script] without a knob for it"
    );
    let script = std::fs::read_to_string(&written.script).unwrap();
    assert!(script.contains("no runtime fix was kept"));
    let profile = std::fs::read_to_string(&written.tuned).unwrap();
    assert!(!profile.contains("[script]") && !profile.contains("[bootloader]"));
    let out = Command::new("sh")
        .arg("-n")
        .arg(&written.script)
        .output()
        .unwrap();
    assert!(out.status.success());
}
