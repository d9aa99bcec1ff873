//! Writes the kernel (or the knob) refuses: a clear error naming the file
//! or call, the errno and what it means; nothing changed, nothing in the
//! restore file. Real /proc and /sys: run as root; CPU 1 real time.

mod common;

use common::Put;

use std::sync::Mutex;

use latlab_fix::Knob;
use latlab_tune::journal::Journal;
use latlab_tune::knobs::{self, inventory, KnobError};

/// The tests of this file change shared knobs: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn a_refused_write_changes_nothing_and_records_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !common::root_and_two_cpus(module_path!()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let cases = [
        (Knob::TransparentHugepages, "sometimes"),
        (Knob::IdleState { cpu: 1, state: 0 }, "7"),
        (
            Knob::Sysctl {
                name: "kernel.timer_migration".into(),
            },
            "lots",
        ),
        (Knob::IrqAffinity { irq: 26 }, "9"),
        (Knob::WorkqueueCpumask, ""),
        (
            Knob::Sysctl {
                name: "kernel.no_such_knob".into(),
            },
            "1",
        ),
        (
            Knob::BootParameter {
                name: "nohz_full".into(),
            },
            "1",
        ),
    ];
    for (knob, value) in cases {
        let _guard = Put::new(knob.clone());
        let before = knobs::read(&knob).ok();
        let err = journal
            .apply(&knob, value)
            .expect_err(&format!("{knob} took {value:?}"));
        eprintln!("refused: {err}");
        assert_eq!(knobs::read(&knob).ok(), before, "{knob} changed");
        assert!(journal.entries().is_empty(), "{knob}: recorded");
        let file = std::fs::read_to_string(journal.path()).unwrap();
        assert!(file.contains("\"entries\": []"), "{file}");
        if knob
            == (Knob::Sysctl {
                name: "kernel.no_such_knob".into(),
            })
        {
            assert!(
                err.to_string().contains("this kernel has no such knob"),
                "{err}"
            );
        }
    }
    // An IRQ the kernel will not move (which ones, only trying tells).
    let mut managed = None;
    for irq in inventory::irqs() {
        let knob = Knob::IrqAffinity { irq: irq.irq };
        let _guard = Put::new(knob.clone());
        let before = knobs::read(&knob).unwrap();
        let other = if before == "0" { "1" } else { "0" };
        match journal.apply(&knob, other) {
            Ok(_) => journal.undo(&knob).unwrap(),
            Err(err) => {
                eprintln!("refused: {err}");
                assert_eq!(knobs::read(&knob).unwrap(), before);
                assert!(journal.entries().is_empty());
                managed = Some(err);
                break;
            }
        }
    }
    match managed {
        Some(err) => assert!(err.to_string().contains("a managed IRQ"), "{err}"),
        None => common::skip("every IRQ here can be moved"),
    }
    // A per-CPU kernel thread: the kernel refuses, and the error says why.
    let bound = inventory::kernel_threads()
        .into_iter()
        .find(|k| k.per_cpu && k.comm == "ksoftirqd/1");
    if let Some(k) = bound {
        let knob = Knob::TaskAffinity {
            pid: k.pid,
            comm: k.comm.clone(),
        };
        let _guard = Put::new(knob.clone());
        let err = journal
            .apply(&knob, "0")
            .expect_err("a per-CPU kthread moved");
        eprintln!("refused: {err}");
        assert!(err.to_string().contains("a per-CPU kernel thread"), "{err}");
        assert_eq!(knobs::read(&knob).unwrap(), "1");
        assert!(journal.entries().is_empty());
    }
    let report = journal.restore();
    assert!(report.restored.is_empty() && report.failed.is_empty());
    assert!(!dir.path().join("tune-restore.json").exists());
}

#[test]
fn a_reused_pid_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !common::root_and_two_cpus(module_path!()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let before = knobs::read(&Knob::TaskAffinity {
        pid,
        comm: "sleep".into(),
    })
    .unwrap();
    for (knob, value) in [
        (
            Knob::TaskAffinity {
                pid,
                comm: "irq/24-ACPI".into(),
            },
            "0",
        ),
        (
            Knob::TaskPriority {
                pid,
                comm: "irq/24-ACPI".into(),
            },
            "fifo:10",
        ),
    ] {
        let err = journal
            .apply(&knob, value)
            .expect_err("a reused pid was written");
        eprintln!("refused: {err}");
        assert!(matches!(err, KnobError::PidReused { .. }), "{err}");
        assert!(err.to_string().contains("pid was reused"), "{err}");
        assert!(journal.entries().is_empty());
    }
    let knob = Knob::TaskPriority {
        pid,
        comm: "sleep".into(),
    };
    assert_eq!(
        knobs::read(&Knob::TaskAffinity {
            pid,
            comm: "sleep".into()
        })
        .unwrap(),
        before
    );
    assert_eq!(knobs::read(&knob).unwrap(), "other:0");
    let _ = child.kill();
    let _ = child.wait();
    drop(journal);
}

#[test]
fn without_privilege_the_error_says_what_is_needed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !common::root_and_two_cpus(module_path!()) {
        return;
    }
    // sysfs checks the file-system uid, which is per thread: this thread
    // writes as nobody (sysctls check the effective uid, per process).
    let knob = Knob::Ksm;
    let _guard = Put::new(knob.clone());
    let now = knobs::read(&knob).unwrap();
    let before = now.clone();
    let err = std::thread::spawn(move || {
        // SAFETY: setfsuid only changes this thread's file-system uid.
        unsafe { libc::setfsuid(65534) };
        let result = knobs::write(&Knob::Ksm, if now == "1" { "0" } else { "1" });
        unsafe { libc::setfsuid(0) };
        result
    })
    .join()
    .unwrap()
    .expect_err("nobody wrote a sysctl");
    eprintln!("refused: {err}");
    assert!(err.to_string().contains("needs root"), "{err}");
    assert_eq!(knobs::read(&knob).unwrap(), before);
}
