use latlab_explain::{Cause, CauseRow};
use latlab_measure::classes::ClassOutcome;
use latlab_measure::requirements::PROFILES;
use latlab_rt::sysinfo::Pitfall;

use super::*;
use crate::formats::TerminalText;
use crate::html::Cell;

fn run_figures(label: &'static str, max: u64) -> RunFigures {
    RunFigures {
        label,
        samples: 1000,
        p50: 10_000,
        p99: 20_000,
        p99_99: max,
        max,
        max_cpu: 1,
        share_10us: 0.5,
    }
}

/// Classes met idle / loaded, loosest first, as `Characterization::of` builds them.
fn characterization(met: [(bool, bool); 4], explained: Option<Explained>) -> Characterization {
    Characterization {
        machine: "m".into(),
        setup: "s".into(),
        runs: [
            run_figures("idle", 30_000),
            run_figures("loaded", 2_500_000),
        ],
        classes: PROFILES
            .iter()
            .zip(met)
            .map(|(&(profile, description), (idle, loaded))| ClassRow {
                profile,
                description,
                idle: ClassOutcome {
                    met: idle,
                    line: format!("idle {profile}"),
                },
                loaded: ClassOutcome {
                    met: loaded,
                    line: format!("loaded {profile}"),
                },
            })
            .collect(),
        explained,
        pitfalls: vec![Pitfall {
            summary: "running in a virtual machine".into(),
            detail: "the host can stop a vCPU".into(),
        }],
    }
}

#[test]
fn answer_names_the_strictest_class_met_and_the_first_missed() {
    let c = characterization(
        [(true, true), (true, true), (true, false), (true, false)],
        None,
    );
    assert_eq!(
        c.answer(),
        "Under load this machine met Emblix class 2 (< 1 ms) at best; it missed Emblix \
         class 3 (< 100 us) (worst case 2.50 ms on CPU1). Idle it met Moblin IVI (40 us, \
         periods +-5 %) (worst case 30.0 us)."
    );
    let all = characterization([(true, true); 4], None);
    assert!(
        all.answer()
            .starts_with("This machine met every class checked"),
        "{}",
        all.answer()
    );
    let none = characterization([(false, false); 4], None);
    assert!(
        none.answer().contains("met no class checked")
            && none.answer().contains("Idle it met no class either"),
        "{}",
        none.answer()
    );
}

#[test]
fn summary_lists_every_class_the_causes_each_fix_once_and_the_pitfalls() {
    // Causes 2 and 3 name other tasks with the same fix as cause 1; the
    // causes are explain's own rows.
    let cause = |i: u64, task: &str, fix: &str| CauseRow {
        cause: Cause::TimerIrqDelay {
            task: task.to_string(),
        },
        description: format!("cause {i}: {task} held the CPU"),
        late_windows: 10,
        normal_windows: 0,
        late_ns: 0,
        mean_late_ns: 0,
        mean_normal_ns: 0,
        excess_ns: 0,
        share: 0.25,
        pids: Vec::new(),
        related_events: Vec::new(),
        woken_by: Vec::new(),
        recommendation: format!("{task} ran long: {fix}; pre-fault and mlock memory"),
    };
    let explained = Explained {
        periods: 6000,
        late: 42,
        threshold_ns: 40_000,
        causes: vec![
            cause(1, "ld-io0:7", "use PREEMPT_RT"),
            cause(2, "dd:9", "use PREEMPT_RT"),
            cause(3, "rustc (5 pids)", "boot with preempt=full"),
            cause(4, "x:1", "never shown"),
        ],
        notes: vec!["3 events lost".into()],
        tune_target: (vec![0, 1], "full".into()),
    };
    let c = characterization(
        [(true, true), (true, true), (false, false), (false, false)],
        Some(explained),
    );
    let text = c.terminal_text();
    for class in &c.classes {
        assert!(text.contains(class.title()), "{text}");
    }
    assert!(
        text.contains("sudo latlab tune --load full (--plan: the plan, nothing changed)"),
        "{text}"
    );
    assert!(
        text.contains("42 of 6000 loaded periods woke 40.0 us or more late"),
        "{text}"
    );
    assert!(
        text.contains("3. cause 3") && !text.contains("cause 4"),
        "top three: {text}"
    );
    assert!(
        text.contains("-> ld-io0:7 ran long: use PREEMPT_RT; pre-fault and mlock memory\n"),
        "{text}"
    );
    assert!(text.contains("-> as for #1\n"), "{text}");
    assert!(
        text.contains("-> rustc (5 pids) ran long: boot with preempt=full; and as for #1\n"),
        "{text}"
    );
    assert_eq!(
        text.matches("pre-fault and mlock memory").count(),
        1,
        "{text}"
    );
    // The answer first, then the pitfalls, one short line each.
    let answer = text.find("Under load this machine").unwrap();
    let pitfall = text.find("  - running in a virtual machine\n").unwrap();
    assert!(answer < pitfall && pitfall < text.find("requirement classes").unwrap());
    assert!(!text.contains("the host can stop a vCPU"), "{text}");

    let opening = c.opening();
    assert_eq!(
        opening.columns[..3],
        ["requirement class", "idle", "loaded"]
    );
    assert_eq!(
        opening.rows[1][0],
        Cell::Text("Emblix class 2 (< 1 ms)".into())
    );
    assert_eq!(opening.rows[2][1..3], [Cell::Met(false), Cell::Met(false)]);
    let paragraphs = &opening.paragraphs;
    assert!(paragraphs[0].starts_with("Under load"), "{paragraphs:?}");
    assert!(paragraphs.iter().any(|p| p.contains("--profile <class>")));
    assert!(paragraphs.iter().any(|p| p.contains("Fix: dd:9 ran long")));
    assert!(paragraphs
        .iter()
        .any(|p| p == "Pitfall: running in a virtual machine: the host can stop a vCPU."));
}
