//! The plan's tests: causes built as explain writes them.

use super::*;
use latlab_explain::Cause;
use latlab_fix::Knob;

fn row(cause: Cause, pids: &[i32]) -> CauseRow {
    let description = cause.describe();
    serde_json::from_value(serde_json::json!({
        "cause": cause,
        "description": description,
        "late_windows": 3, "normal_windows": 0, "late_ns": 300_000,
        "mean_late_ns": 100_000, "mean_normal_ns": 0, "excess_ns": 300_000,
        "share": 0.5,
        "pids": pids.iter().map(|p| serde_json::json!({"pid": p, "late_ns": 1, "late_windows": 1})).collect::<Vec<_>>(),
        "related_events": [], "woken_by": [], "recommendation": "",
    }))
    .expect("a CauseRow")
}

fn system() -> SystemView {
    SystemView {
        online: vec![0, 1],
        irqs: vec![
            (24, vec!["virtio0-input.0".into()], vec![0, 1]),
            (25, vec!["virtio0-output.0".into()], vec![0]),
        ],
        kthreads: vec![
            (15, "ksoftirqd/1".into(), true),
            (80, "khugepaged".into(), false),
        ],
        napi_devices: vec!["eth0".into()],
        idle_states: vec![(0, 1), (1, 1)],
        cpufreq: vec![],
        preempt_rt: false,
    }
}

#[test]
fn housekeeping_keeps_a_cpu_and_names_the_fix() {
    assert_eq!(housekeeping(&[1], &[0, 1]).unwrap(), vec![0]);
    let every = housekeeping(&[0, 1], &[0, 1]).unwrap_err();
    assert!(
        every.contains("keep at least one") && every.contains("--cpus 1"),
        "{every}"
    );
    let unknown = housekeeping(&[7], &[0, 1]).unwrap_err();
    assert!(
        unknown.contains("CPU 7 is not online (online: 0-1)"),
        "{unknown}"
    );
}

#[test]
fn an_irq_handler_moves_only_its_irqs_that_reach_the_rt_cpu() {
    let p = plan(
        &[row(
            Cause::IrqHandler {
                name: "virtio0-input.0".into(),
            },
            &[],
        )],
        &system(),
        &[1],
        95,
        false,
    );
    let knobs: Vec<_> = p
        .groups
        .iter()
        .flat_map(|g| &g.fixes)
        .map(|f| f.knob.clone())
        .collect();
    assert_eq!(knobs, vec![Knob::IrqAffinity { irq: 24 }]);
    assert!(p.boot.iter().any(|(n, _)| *n == Need::IrqAffinity));
}

#[test]
fn a_per_cpu_thread_is_refused_and_a_movable_one_moves() {
    let causes = [
        row(
            Cause::SoftirqThread {
                task: "ksoftirqd/1".into(),
                prio: 120,
                task_prio: 4,
            },
            &[15],
        ),
        row(
            Cause::KernelThread {
                task: "khugepaged".into(),
                prio: 139,
                task_prio: 4,
            },
            &[80],
        ),
    ];
    let p = plan(&causes, &system(), &[1], 95, false);
    assert_eq!(p.refused.len(), 1);
    assert!(p.refused[0].refused.as_deref().unwrap().contains("per-CPU"));
    let moved: Vec<_> = p.groups.iter().flat_map(|g| &g.fixes).collect();
    assert_eq!(moved.len(), 1);
    assert_eq!(
        moved[0].knob,
        Knob::TaskAffinity {
            pid: 80,
            comm: "khugepaged".into()
        }
    );
}

#[test]
fn non_preemptible_user_code_asks_for_preempt_full_and_the_partition() {
    let p = plan(
        &[row(
            Cause::NonPreemptibleKernel {
                task: "ld-io0".into(),
            },
            &[4242],
        )],
        &system(),
        &[1],
        95,
        false,
    );
    assert!(p.boot.iter().any(|(n, _)| *n == Need::Preemption));
    assert_eq!(p.groups[0].fixes[0].knob, Knob::CpusetPartition);
    let rt = SystemView {
        preempt_rt: true,
        ..system()
    };
    let p = plan(
        &[row(
            Cause::NonPreemptibleKernel {
                task: "ld-io0".into(),
            },
            &[],
        )],
        &rt,
        &[1],
        95,
        false,
    );
    assert!(
        p.boot.is_empty(),
        "no preempt=full on PREEMPT_RT: {:?}",
        p.boot
    );
}

#[test]
fn isolate_adds_the_standard_set_once_per_knob() {
    let causes = [row(
        Cause::IrqHandler {
            name: "virtio0-input.0".into(),
        },
        &[],
    )];
    let p = plan(&causes, &system(), &[1], 95, true);
    let knobs: Vec<_> = p
        .groups
        .iter()
        .flat_map(|g| &g.fixes)
        .map(|f| &f.knob)
        .collect();
    let irq24 = knobs
        .iter()
        .filter(|k| ***k == Knob::IrqAffinity { irq: 24 })
        .count();
    assert_eq!(irq24, 1, "one fix per knob: {knobs:?}");
    assert!(
        !knobs.contains(&&Knob::IrqAffinity { irq: 25 }),
        "IRQ 25 never reaches CPU 1"
    );
    assert!(knobs.contains(&&Knob::CpusetPartition));
    assert!(knobs.contains(&&Knob::IdleState { cpu: 1, state: 1 }));
    assert!(
        !knobs.contains(&&Knob::IdleState { cpu: 0, state: 1 }),
        "housekeeping CPUs keep their idle states"
    );
    assert!(!knobs
        .iter()
        .any(|k| matches!(k, Knob::TaskAffinity { comm, .. } if comm.starts_with("ksoftirqd"))));
}
