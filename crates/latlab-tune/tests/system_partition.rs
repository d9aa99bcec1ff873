//! The runtime isolated partition on this machine's cpuset hierarchy: a
//! user task leaves the real-time CPU, an admitted child runs there, and
//! the restore leaves every knob as it was. CPU 1 real time, CPU 0
//! housekeeping; run as root.

mod common;

use std::os::unix::process::CommandExt;
use std::sync::Mutex;

use latlab_fix::Knob;
use latlab_tune::journal::Journal;
use latlab_tune::knobs::{self, task};
use latlab_tune::{partition, snapshot};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Releases any partition found, whatever the test did.
struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        let _ = partition::write("");
    }
}

fn ready() -> bool {
    if !common::root_and_two_cpus(module_path!()) {
        return false;
    }
    if let Err(why) = partition::available() {
        common::skip(&why);
        return false;
    }
    true
}

fn allowed(pid: u32) -> String {
    latlab_fix::cpu_list(&task::allowed_cpus(pid as i32).unwrap())
}

#[test]
fn the_partition_moves_user_tasks_off_the_rt_cpu_and_its_restore_leaves_everything_as_it_was() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !ready() {
        return;
    }
    let _release = Release;
    let mut bystander = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let before = snapshot::snapshot();
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let change = journal.apply(&Knob::CpusetPartition, "1").unwrap();
    assert_eq!((change.old.as_str(), change.new.as_str()), ("", "1"));
    let part = partition::find().expect("no partition after apply");
    eprintln!("partition: {}", part.kind());
    assert_eq!(knobs::read(&Knob::CpusetPartition).unwrap(), "1");
    assert_eq!(allowed(bystander.id()), "0", "a user task kept the RT CPU");
    assert_eq!(
        allowed(std::process::id()),
        "0",
        "the test process kept the RT CPU"
    );
    let during = snapshot::diff(&before, &snapshot::snapshot());
    eprintln!(
        "while isolated, {} snapshot keys differ, e.g. {:?}",
        during.len(),
        &during[..during.len().min(3)]
    );
    assert!(
        during.iter().any(|d| d.contains("sched_load_balance")),
        "{during:?}"
    );
    // The measured child: admitted by its own pre_exec hook.
    let admitter = part.admitter().unwrap();
    // SAFETY: the hook is async-signal-safe (getpid and write).
    let measured = unsafe {
        std::process::Command::new("sleep")
            .arg("30")
            .pre_exec(move || admitter.admit_self())
            .spawn()
            .unwrap()
    };
    assert_eq!(
        allowed(measured.id()),
        "1",
        "the admitted child is not on the RT CPU"
    );
    eprintln!(
        "while isolated: bystander sleep {} Cpus_allowed_list {}, admitted sleep {} Cpus_allowed_list {}",
        bystander.id(),
        allowed(bystander.id()),
        measured.id(),
        allowed(measured.id())
    );
    // Kernel threads stay where they were.
    let kthreads = knobs::inventory::kernel_threads();
    let kthreadd = kthreads.iter().find(|k| k.pid == 2).unwrap();
    assert_eq!(latlab_fix::cpu_list(&kthreadd.allowed), "0-1");
    assert_eq!(
        std::fs::read_to_string("/proc/2/cpuset").unwrap().trim(),
        "/"
    );
    // And a running process admitted by pid.
    let late = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    part.admit(late.id()).unwrap();
    assert_eq!(allowed(late.id()), "1");
    for mut child in [measured, late] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let report = journal.restore();
    eprintln!("restored: {:?}", report.restored);
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(partition::find().is_none());
    assert_eq!(allowed(bystander.id()), "0-1");
    let after = snapshot::snapshot();
    let _ = bystander.kill();
    let _ = bystander.wait();
    let diff = snapshot::diff(&before, &after);
    eprintln!("{} keys compared, {} differ", before.len(), diff.len());
    assert!(
        diff.is_empty(),
        "differs after restore:\n{}",
        diff.join("\n")
    );
}

#[test]
fn a_partition_refuses_every_cpu_and_an_unknown_cpu_and_changes_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !ready() {
        return;
    }
    let _release = Release;
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let online = latlab_fix::cpu_list(&latlab_rt::sched::online_cpus());
    for cpus in [online.as_str(), "7", "x"] {
        let err = journal.apply(&Knob::CpusetPartition, cpus).unwrap_err();
        eprintln!("refused {cpus:?}: {err}");
        assert!(journal.entries().is_empty());
        assert!(partition::find().is_none());
    }
    let err = journal.apply(&Knob::CpusetPartition, &online).unwrap_err();
    assert!(err.to_string().contains("keep at least one"), "{err}");
    let err = journal.apply(&Knob::CpusetPartition, "7").unwrap_err();
    assert!(err.to_string().contains("not online"), "{err}");
    drop(journal);
}
