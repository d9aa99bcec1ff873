//! A tune result built by hand (every field), and its terminal text.

use latlab_document::Envelope;
use latlab_fix::{Fix, Knob, Value};
use latlab_rt::sysinfo::SystemInfo;
use latlab_tune::result::{
    BootLine, BootParameter, CauseFixes, Ending, Figures, Outcome, PlannedFix, TuneResult,
    TuneSettings,
};
use latlab_tune::verify::{effect, noise, schedule, Round};

use super::text;

/// Figures with these p50, p99, p99.9 and max in µs.
pub(crate) fn figures(p50: u64, p99: u64, p999: u64, max: u64, missed: u64) -> Figures {
    Figures {
        samples: 600_000,
        p50_ns: p50 * 1000,
        p99_ns: p99 * 1000,
        p999_ns: p999 * 1000,
        max_ns: max * 1000,
        missed,
    }
}

/// Four rounds a side in schedule order, p99 from `undone` and `applied` (µs).
fn rounds(undone: [u64; 4], applied: [u64; 4]) -> Vec<Round> {
    let (mut u, mut a) = (undone.into_iter(), applied.into_iter());
    schedule(4)
        .into_iter()
        .map(|applied| {
            let p99 = if applied { a.next() } else { u.next() }.unwrap();
            Round {
                applied,
                figures: figures(6, p99, 2 * p99 + 100, 8 * p99 + 100, 0),
            }
        })
        .collect()
}

/// A fix of the plan.
fn planned(fix: Fix, current: Option<&str>, proposed: &str, outcome: Outcome) -> PlannedFix {
    PlannedFix {
        group: fix.knob.to_string(),
        takes: fix.knob.takes(),
        cost: fix.cost(),
        current: current.map(String::from),
        proposed: proposed.into(),
        fix,
        outcome,
    }
}

/// A tune of CPU 1 under full load: IRQ 24 moved (kept), timer migration
/// off (dropped, inside the noise), ksoftirqd refused, nohz_full proposed.
pub(crate) fn sample_tune() -> TuneResult {
    let aa = [100, 104, 97, 102].map(|p99| Round {
        applied: false,
        figures: figures(6, p99, 2 * p99 + 100, 8 * p99 + 100, 0),
    });
    let noise = noise(&aa);
    let irq = Fix::new(
        Knob::IrqAffinity { irq: 24 },
        Value::Housekeeping,
        "IRQ 24 (virtio0) ran on the RT CPU",
    );
    let timer = Fix::new(
        Knob::Sysctl {
            name: "kernel.timer_migration".into(),
        },
        Value::literal("0"),
        "timers of the RT CPU fired elsewhere",
    );
    let mut ksoftirqd = Fix::new(
        Knob::TaskAffinity {
            pid: 20,
            comm: "ksoftirqd/1".into(),
        },
        Value::Housekeeping,
        "ksoftirqd/1 ran before the task",
    );
    ksoftirqd.refused = Some("a per-CPU kernel thread cannot move".into());
    let nohz = Fix::new(
        Knob::BootParameter {
            name: "nohz_full".into(),
        },
        Value::RealTime,
        "the tick interrupted the task",
    );
    let kept = effect(&rounds([100, 103, 98, 101], [62, 60, 65, 61]), &noise);
    let dropped = effect(&rounds([100, 103, 98, 101], [102, 99, 104, 100]), &noise);
    let system = SystemInfo {
        hostname: "vm".into(),
        kernel_release: "6.18.0".into(),
        preemption_model: Some("full".into()),
        ..SystemInfo::default()
    };
    let mut envelope = Envelope::at(vec!["latlab".into(), "tune".into()], 0.0, system);
    envelope.warnings = vec!["the load's io ran on tmpfs".into()];
    TuneResult {
        envelope,
        settings: TuneSettings {
            cpus: vec![1],
            housekeeping: vec![0],
            load: "full".into(),
            deadline_ns: Some(100_000),
            round_ns: 10_000_000_000,
            rounds: 4,
            isolate: false,
            plan_only: false,
            keep: false,
        },
        baseline: figures(6, 142, 310, 1_900, 3),
        causes: vec![CauseFixes {
            cause: "IRQ 24 (virtio0) ran on CPU 1".into(),
            share: 0.78,
            fixes: vec![irq.clone()],
        }],
        fixes: vec![
            planned(irq, Some("0-1"), "0", Outcome::Kept { effect: kept }),
            planned(timer, Some("1"), "0", Outcome::Dropped { effect: dropped }),
            planned(
                ksoftirqd,
                Some("0-1"),
                "0",
                Outcome::Skipped {
                    reason: "refused".into(),
                },
            ),
            planned(nohz, None, "1", Outcome::Proposed),
        ],
        boot: BootLine {
            parameters: vec![
                BootParameter {
                    text: "nohz_full=1".into(),
                    why: "the tick interrupted the task".into(),
                    already: false,
                },
                BootParameter {
                    text: "preempt=full".into(),
                    why: "PREEMPT_DYNAMIC kernel".into(),
                    already: true,
                },
            ],
            grub: "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet nohz_full=1 preempt=full\"".into(),
            uboot: "setenv bootargs \"${bootargs} nohz_full=1 preempt=full\"".into(),
        },
        after: Some(figures(6, 98, 250, 900, 0)),
        partition: Some("cgroup v1 exclusive cpuset".into()),
        ending: Ending {
            restored: 2,
            kept: 0,
            failed: Vec::new(),
            stopped: false,
        },
    }
}

#[test]
fn the_summary_names_the_kept_and_the_dropped_with_their_intervals() {
    let r = sample_tune();
    let t = text(&r);
    assert!(
        t.contains("KEPT    #1 /proc/irq/24/smp_affinity_list: p99 -38.5 us (-38 %) [-43.0, -33.0] vs noise 3.5 us: kept"),
        "{t}"
    );
    let dropped = t.lines().find(|l| l.contains("DROPPED #2")).expect(&t);
    assert!(
        dropped.ends_with("within noise 3.5 us: dropped"),
        "{dropped}"
    );
    assert!(
        t.contains("97 % intervals, 4 applied + 4 undone rounds"),
        "{t}"
    );
    assert!(
        t.contains("#3 skipped affinity of ksoftirqd/1:20: refused"),
        "{t}"
    );
    assert!(
        t.contains("#3 affinity of ksoftirqd/1:20: refused: a per-CPU kernel thread cannot move"),
        "{t}"
    );
    // A boot-time fix is in the plan, not among the measured.
    assert!(!t.contains("#4 proposed"), "{t}");
    assert!(
        t.contains("1 fix kept, 1 dropped. Each dropped fix was undone after its rounds; 2 knobs restored at the end; nothing left changed."),
        "{t}"
    );
    assert!(t.contains("warning: the load's io ran on tmpfs"), "{t}");
}

#[test]
fn the_plan_boot_line_and_before_after_table_read_in_columns() {
    let t = text(&sample_tune());
    let cells = |line: &str| -> Vec<String> {
        let cells = line.split("  ").map(str::trim).filter(|c| !c.is_empty());
        cells.map(String::from).collect()
    };
    let plan = t.lines().find(|l| l.starts_with("  #1  /proc")).expect(&t);
    assert_eq!(
        cells(plan),
        [
            "#1",
            "/proc/irq/24/smp_affinity_list",
            "0-1 → 0",
            "runtime",
            "housekeeping CPUs",
            "IRQ 24 (virtio0) ran on the RT CPU"
        ]
    );
    let nohz = t
        .lines()
        .find(|l| l.contains("boot parameter nohz_full"))
        .expect(&t);
    assert!(nohz.contains("? → 1") && nohz.contains("reboot"), "{nohz}");
    assert!(
        t.contains("preempt=full  PREEMPT_DYNAMIC kernel (already booted with it)"),
        "{t}"
    );
    assert!(
        t.contains("  GRUB:   GRUB_CMDLINE_LINUX_DEFAULT=\"quiet nohz_full=1 preempt=full\""),
        "{t}"
    );
    assert!(t.contains("  U-Boot: setenv bootargs"), "{t}");
    let row = |label: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(label))
            .expect(label)
    };
    let cells = |label: &str| cells(row(label));
    assert_eq!(
        cells("before"),
        ["before", "600000", "6.0", "142.0", "310.0", "1900.0", "3"]
    );
    assert_eq!(
        cells("after"),
        ["after", "600000", "6.0", "98.0", "250.0", "900.0", "0"]
    );
    assert_eq!(
        cells("change"),
        ["change", "+0.0 %", "-31.0 %", "-19.4 %", "-52.6 %", "-100.0 %"]
    );
    // The columns line up: p99 ends at the same place in every row.
    let end = |label: &str| row(label).find(&cells(label)[3]).unwrap() + cells(label)[3].len();
    assert_eq!(end("before"), end("after"));
}

#[test]
fn a_plan_without_an_after_run_and_a_failed_restore_say_so() {
    let mut r = sample_tune();
    r.after = None;
    r.settings.plan_only = true;
    r.ending.failed.push((
        "/proc/irq/24/smp_affinity_list".into(),
        "0-1".into(),
        "EIO".into(),
    ));
    r.ending.stopped = true;
    let t = text(&r);
    assert!(!t.contains("Before / after"), "{t}");
    assert!(t.contains(", --plan"), "{t}");
    assert!(t.contains("Stopped before the end."), "{t}");
    assert!(
        t.contains("NOT RESTORED: /proc/irq/24/smp_affinity_list (was 0-1): EIO"),
        "{t}"
    );
}

#[test]
fn the_sample_reads_back_from_its_json_with_every_effect() {
    let r = sample_tune();
    let json = serde_json::to_string(&r).unwrap();
    let back: TuneResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["schema"], "latlab.tune");
    // PlannedFix.outcome holds the tagged Outcome: `outcome.outcome`.
    let kept = &value["fixes"][0]["outcome"];
    assert_eq!(kept["outcome"], "kept");
    assert_eq!(kept["effect"]["p99"]["shift_ns"], -38_500);
    assert_eq!(kept["effect"]["rounds"].as_array().unwrap().len(), 8);
}

#[test]
fn a_deadline_is_met_or_missed_before_and_after() {
    let t = text(&sample_tune());
    let lines: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("Deadline 100 us"))
        .collect();
    assert!(lines.len() >= 3, "{t}");
    assert!(lines[1].starts_with("  before  MISSED: max 1.9"), "{t}");
}

#[test]
fn a_group_verified_together_reads_as_one_effect() {
    let mut r = sample_tune();
    let mut second = r.fixes[0].clone();
    second.fix.knob = Knob::IrqAffinity { irq: 25 };
    r.fixes.insert(1, second);
    for f in &mut r.fixes[..2] {
        f.group = "IRQ affinity off the RT CPUs".into();
    }
    let t = text(&r);
    let kept: Vec<&str> = t.lines().filter(|l| l.starts_with("  KEPT")).collect();
    assert_eq!(kept.len(), 1, "{t}");
    assert!(
        kept[0]
            .starts_with("  KEPT    IRQ affinity off the RT CPUs (2 knobs: #1-#2): p99 -38.5 us"),
        "{t}"
    );
}
