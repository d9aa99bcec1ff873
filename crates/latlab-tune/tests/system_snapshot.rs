//! The snapshot of every knob tune can touch: the same before and after
//! a journal applied every runtime knob and restored them. Root; CPU 1
//! real time, CPU 0 housekeeping.

mod common;

use latlab_fix::Knob;
use latlab_tune::journal::Journal;
use latlab_tune::knobs::{self, inventory};
use latlab_tune::{partition, snapshot};

/// Restores every knob of a list on drop.
struct PutAll(Vec<(Knob, String)>);

impl Drop for PutAll {
    fn drop(&mut self) {
        for (knob, old) in self.0.iter().rev() {
            if knobs::read(knob).ok().as_deref() != Some(old.as_str()) {
                let _ = knobs::write(knob, old);
            }
        }
    }
}

#[test]
fn the_snapshot_is_identical_after_every_knob_is_applied_and_restored() {
    if !common::root_and_two_cpus(module_path!()) {
        return;
    }
    let flip = |now: &str, a: &str, b: &str| {
        if now == a {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let mut plan: Vec<(Knob, String)> = Vec::new();
    for knob in inventory::touchable() {
        let Ok(now) = knobs::read(&knob) else {
            continue;
        };
        let value = match &knob {
            Knob::WorkqueueCpumask => "0".into(),
            Knob::TransparentHugepages => flip(&now, "never", "madvise"),
            Knob::Sysctl { name } if name == "kernel.sched_rt_runtime_us" => {
                flip(&now, "-1", "950000")
            }
            Knob::Sysctl { name } if name == "vm.stat_interval" => flip(&now, "10", "1"),
            _ => flip(&now, "0", "1"),
        };
        plan.push((knob, value));
    }
    for irq in inventory::irqs() {
        plan.push((Knob::IrqAffinity { irq: irq.irq }, "0".into()));
    }
    for state in inventory::idle_cpu(1).map(|c| c.states).unwrap_or_default() {
        plan.push((
            Knob::IdleState {
                cpu: 1,
                state: state.state,
            },
            "1".into(),
        ));
    }
    for k in inventory::kernel_threads()
        .into_iter()
        .filter(|k| !k.per_cpu && k.pid != 2)
    {
        plan.push((
            Knob::TaskAffinity {
                pid: k.pid,
                comm: k.comm,
            },
            "0".into(),
        ));
    }
    if partition::available().is_ok() {
        plan.push((Knob::CpusetPartition, "1".into()));
    }
    let _put = PutAll(
        plan.iter()
            .filter_map(|(k, _)| Some((k.clone(), knobs::read(k).ok()?)))
            .filter(|(k, _)| *k != Knob::CpusetPartition)
            .collect(),
    );
    let _release = scopeguard(|| {
        let _ = partition::write("");
    });
    let before = snapshot::snapshot();
    let again = snapshot::snapshot();
    assert!(
        snapshot::diff(&before, &again).is_empty(),
        "the snapshot moves by itself: {:?}",
        snapshot::diff(&before, &again)
    );
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::begin(&dir.path().join("tune-restore.json")).unwrap();
    let (mut applied, mut refused) = (0, 0);
    for (knob, value) in &plan {
        match journal.apply(knob, value) {
            Ok(change) if !change.unchanged => applied += 1,
            Ok(_) => {}
            Err(e) => {
                refused += 1;
                eprintln!("refused: {e}");
            }
        }
    }
    let during = snapshot::diff(&before, &snapshot::snapshot());
    eprintln!(
        "{applied} knobs applied ({refused} refused); {} snapshot keys differ while applied",
        during.len()
    );
    assert!(
        during.len() >= applied,
        "the snapshot missed changes: {during:?}"
    );
    let report = journal.restore();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let after = snapshot::snapshot();
    let diff = snapshot::diff(&before, &after);
    eprintln!(
        "{} snapshot keys, {} differ after restore",
        before.len(),
        diff.len()
    );
    assert!(
        diff.is_empty(),
        "differs after restore:\n{}",
        diff.join("\n")
    );
}

/// Runs `f` on drop.
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f()
            }
        }
    }
    Guard(Some(f))
}
