//! Each runtime knob of this machine applied through the journal, read
//! back, and undone; refused writes change nothing. Real /proc and /sys:
//! run as root. CPU 1 is the real-time CPU, CPU 0 housekeeping.

mod common;

use common::Put;

use std::sync::Mutex;

use latlab_fix::Knob;
use latlab_tune::journal::Journal;
use latlab_tune::knobs::{self, inventory, KnobError};

/// The tests of this file change shared knobs: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Applies `value` through a journal, checks it took and was recorded,
/// undoes it and checks the old value is back and the entry gone.
fn round_trip(journal: &mut Journal, knob: Knob, value: &str) -> Result<String, KnobError> {
    let _guard = Put::new(knob.clone());
    let old = knobs::read(&knob)?;
    let change = journal.apply(&knob, value)?;
    assert!(!change.unchanged, "{knob}: already {value}");
    assert_eq!(change.old, old);
    assert_eq!(
        knobs::normalize(&knob, &knobs::read(&knob)?),
        knobs::normalize(&knob, value),
        "{knob} did not take {value}"
    );
    let file = std::fs::read_to_string(journal.path()).unwrap();
    let recorded: serde_json::Value = serde_json::from_str(&file).unwrap();
    let entries = recorded["entries"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["knob"] == serde_json::to_value(&knob).unwrap() && e["old"] == old.as_str()),
        "{knob} not in the restore file: {file}"
    );
    journal.undo(&knob)?;
    assert_eq!(knobs::read(&knob)?, old, "{knob} not restored");
    assert!(journal.entries().is_empty());
    Ok(format!("{knob}: {old} -> {value} -> {old}"))
}

/// A value other than `now` among `choices`.
fn other(now: &str, choices: &[&str]) -> String {
    choices.iter().find(|c| **c != now).unwrap().to_string()
}

#[test]
fn each_runtime_knob_is_applied_and_restored_through_the_journal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !common::root_and_two_cpus(module_path!()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let mut knobs_tried: Vec<(Knob, String)> = Vec::new();
    let sysctl = |name: &str| Knob::Sysctl { name: name.into() };
    for (name, choices) in [
        ("kernel.sched_rt_runtime_us", &["-1", "950000"][..]),
        ("kernel.timer_migration", &["0", "1"]),
        ("vm.stat_interval", &["10", "1"]),
        ("kernel.watchdog", &["0", "1"]),
        ("kernel.nmi_watchdog", &["0", "1"]),
        ("kernel.soft_watchdog", &["0", "1"]),
    ] {
        let path = sysctl(name).path().unwrap();
        let mode = std::fs::metadata(&path)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .ok();
        if mode.is_some_and(|m| m & 0o200 == 0) {
            common::skip(&format!(
                "{name}: read-only on this kernel ({path} mode {:o})",
                mode.unwrap() & 0o777
            ));
            continue;
        }
        match knobs::read(&sysctl(name)) {
            Ok(now) => knobs_tried.push((sysctl(name), other(&now, choices))),
            Err(e) => common::skip(&format!("{name}: {e}")),
        }
    }
    knobs_tried.push((Knob::WorkqueueCpumask, "0".into()));
    let thp = knobs::read(&Knob::TransparentHugepages).unwrap();
    knobs_tried.push((
        Knob::TransparentHugepages,
        other(&thp, &["never", "madvise"]),
    ));
    let ksm = knobs::read(&Knob::Ksm).unwrap();
    knobs_tried.push((Knob::Ksm, other(&ksm, &["1", "0"])));
    match inventory::idle_cpu(1) {
        Some(cpu) => {
            for state in cpu.states {
                let knob = Knob::IdleState {
                    cpu: 1,
                    state: state.state,
                };
                knobs_tried.push((knob, if state.disabled { "0" } else { "1" }.into()));
            }
        }
        None => common::skip("CPU 1 has no cpuidle states"),
    }
    match knobs::read(&Knob::CpufreqGovernor { cpu: 1 }) {
        Ok(now) => knobs_tried.push((
            Knob::CpufreqGovernor { cpu: 1 },
            other(&now, &["performance", "powersave"]),
        )),
        Err(e) => common::skip(&format!(
            "cpufreq governor: {e} (no cpufreq on this machine)"
        )),
    }
    // Threaded NAPI: the first device that takes it (which do is known by trying).
    let mut napi = None;
    for dev in inventory::net_devices()
        .into_iter()
        .filter(|d| d.device != "lo")
    {
        let knob = Knob::ThreadedNapi {
            device: dev.device.clone(),
        };
        let value = other(&dev.threaded, &["1", "0"]);
        let _guard = Put::new(knob.clone());
        match knobs::write(&knob, &value) {
            Ok(()) => {
                napi = Some((knob, value));
                break;
            }
            Err(e) => eprintln!("threaded NAPI: {e}"),
        }
    }
    match napi {
        Some(found) => knobs_tried.push(found),
        None => common::skip("threaded NAPI: no device here takes it"),
    }
    // A movable kernel thread.
    let kthread = inventory::kernel_threads()
        .into_iter()
        .find(|k| !k.per_cpu && ["khungtaskd", "kcompactd0", "kauditd"].contains(&k.comm.as_str()));
    match kthread {
        Some(k) => knobs_tried.push((
            Knob::TaskAffinity {
                pid: k.pid,
                comm: k.comm,
            },
            "0".into(),
        )),
        None => common::skip("kernel thread affinity: no movable khungtaskd/kcompactd0/kauditd"),
    }
    // A thread's priority: a child of ours.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    knobs_tried.push((
        Knob::TaskPriority {
            pid,
            comm: "sleep".into(),
        },
        "fifo:10".into(),
    ));
    knobs_tried.push((
        Knob::TaskAffinity {
            pid,
            comm: "sleep".into(),
        },
        "0".into(),
    ));
    let mut done = 0;
    for (knob, value) in knobs_tried {
        match round_trip(&mut journal, knob.clone(), &value) {
            Ok(line) => {
                eprintln!("ok: {line}");
                done += 1;
            }
            Err(e) => panic!("{knob} = {value}: {e}"),
        }
    }
    // One IRQ the kernel lets us move (which ones do is known only by trying).
    let mut irq_moved = false;
    for irq in inventory::irqs() {
        let knob = Knob::IrqAffinity { irq: irq.irq };
        if knobs::read(&knob).map(|v| v == "0").unwrap_or(true) {
            continue;
        }
        match round_trip(&mut journal, knob, "0") {
            Ok(line) => {
                eprintln!("ok: {line}");
                irq_moved = true;
                break;
            }
            Err(e) => eprintln!("refused, as it may be: {e}"),
        }
    }
    assert!(irq_moved, "no IRQ could be moved");
    let _ = child.kill();
    let _ = child.wait();
    let report = journal.restore();
    assert!(
        report.failed.is_empty() && report.restored.is_empty(),
        "{report:?}"
    );
    eprintln!("{} knobs applied and restored", done + 1);
}

#[test]
fn boot_parameters_read_the_command_line_and_refuse_a_write() {
    let present = knobs::read(&Knob::BootParameter {
        name: "console".into(),
    })
    .unwrap();
    let absent = knobs::read(&Knob::BootParameter {
        name: "nohz_full".into(),
    })
    .unwrap();
    eprintln!("console={present:?} nohz_full={absent:?}");
    assert_eq!(present.is_empty(), !knobs::cmdline().contains("console="));
    let err = knobs::write(
        &Knob::BootParameter {
            name: "nohz_full".into(),
        },
        "1",
    )
    .unwrap_err();
    assert!(err.to_string().contains("takes a reboot"), "{err}");
}

#[test]
fn the_inventory_lists_this_machine() {
    let inv = knobs::inventory();
    eprintln!("{}", inventory::summary(&inv));
    assert!(!inv.cpus.is_empty());
    assert!(!inv.irqs.is_empty());
    assert!(inv
        .kernel_threads
        .iter()
        .any(|k| k.per_cpu && k.comm.starts_with("ksoftirqd/")));
    assert!(inv.kernel_threads.iter().any(|k| k.pid == 2 && !k.per_cpu));
    let present: Vec<String> = inv
        .present
        .iter()
        .map(|(k, there)| format!("{k}={there}"))
        .collect();
    eprintln!("{}", present.join(" "));
}
