//! The loop of `latlab tune`: baseline, plan, each group of fixes verified
//! side by side, the final run, the boot line and the exports; every
//! change recorded in the journal before it is made and restored on every
//! way out (unless `--keep`).

use std::path::PathBuf;

use crate::journal::Journal;
use crate::plan::{self, Plan, SystemView};
use crate::result::{Ending, Figures, Outcome, PlannedFix};
use crate::rounds::{Measure, Measured};
use crate::verify::{self, Round};

mod ending;

use crate::{knobs, partition};
use ending::{end, ending_text};
pub use ending::{figures_line, result, settings};

/// What a tune was asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// How every run measures.
    pub measure: Measure,
    /// The real-time CPUs.
    pub rt: Vec<usize>,
    /// The housekeeping CPUs.
    pub housekeeping: Vec<usize>,
    /// The baseline's and the final run's length, ns.
    pub baseline_ns: u64,
    /// One verification round's length, ns.
    pub round_ns: u64,
    /// Rounds per fix on each side (applied, undone).
    pub pairs: u32,
    /// `--isolate`.
    pub isolate: bool,
    /// `--plan`.
    pub plan_only: bool,
    /// `--keep`.
    pub keep: bool,
    /// `--deadline`, ns.
    pub deadline_ns: Option<u64>,
    /// The restore file.
    pub journal: PathBuf,
}

/// Where a tune's progress lines go (stderr in the CLI).
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// The baseline and the plan: what `--plan` prints, and where a tune starts.
pub struct Planned {
    /// The baseline run.
    pub baseline: Measured,
    /// The plan.
    pub plan: Plan,
    /// Every fix with its current value and outcome so far.
    pub fixes: Vec<PlannedFix>,
}

/// Measures the baseline (with its trace explained) and plans.
pub fn baseline_and_plan(
    req: &Request,
    sys: &SystemView,
    say: Progress,
) -> anyhow::Result<Planned> {
    say(&format!(
        "baseline: latlab {}",
        req.measure
            .args(
                req.baseline_ns,
                true,
                &req.measure.dir.join("baseline.json")
            )
            .join(" ")
    ));
    let baseline = req
        .measure
        .run("baseline", req.baseline_ns, true, None)?
        .ok_or_else(|| {
            anyhow::anyhow!("stopped during the baseline (Ctrl-C or SIGTERM): nothing was changed")
        })?;
    say(&format!("baseline: {}", figures_line(&baseline.figures)));
    let plan = plan::plan(
        &baseline.causes,
        sys,
        &req.rt,
        req.measure.priority,
        req.isolate,
    );
    let mut fixes = Vec::new();
    let grouped = plan
        .groups
        .iter()
        .flat_map(|g| g.fixes.iter().map(move |f| (g.name.as_str(), f)));
    let refused = plan.refused.iter().map(|f| ("refused", f));
    for (group, fix) in grouped.chain(refused) {
        let proposed = fix.value.resolve(&req.rt, &req.housekeeping);
        let current = knobs::read(&fix.knob).ok();
        let outcome = outcome_before(fix, current.as_deref(), &proposed);
        fixes.push(PlannedFix {
            group: group.to_string(),
            takes: fix.knob.takes(),
            cost: fix.cost(),
            fix: fix.clone(),
            current,
            proposed,
            outcome,
        });
    }
    Ok(Planned {
        baseline,
        plan,
        fixes,
    })
}

/// A planned fix's outcome before anything is applied: skipped (the
/// kernel cannot take it), already set ("0-1" and "0,1" are the same
/// mask, "other" and "other:0" the same priority), or proposed.
fn outcome_before(fix: &latlab_fix::Fix, current: Option<&str>, proposed: &str) -> Outcome {
    match (&fix.refused, current) {
        (Some(reason), _) => Outcome::Skipped {
            reason: reason.clone(),
        },
        (None, Some(now))
            if knobs::normalize(&fix.knob, now) == knobs::normalize(&fix.knob, proposed) =>
        {
            Outcome::AlreadySet
        }
        _ => Outcome::Proposed,
    }
}

/// Applies, verifies and keeps or drops each group of `planned`, then the
/// final run; restores everything at the end unless `--keep`. Every change
/// is in the journal before it is made; on an error or a stop the journal
/// is restored before this returns.
pub fn verify_and_end(
    req: &Request,
    planned: &mut Planned,
    say: Progress,
) -> anyhow::Result<(Option<Figures>, Ending, Option<String>)> {
    let mut journal = Journal::begin(&req.journal)?;
    let outcome = verify_groups(req, planned, &mut journal, say);
    let (after, partition) = match &outcome {
        Ok(()) if !latlab_rt::stop::requested() && kept(planned) > 0 => {
            say("after: every kept fix applied");
            let after = req
                .measure
                .run("after", req.baseline_ns, false, procs().as_deref());
            let kind = partition::find().map(|p| p.kind());
            match after {
                Ok(Some(m)) => {
                    say(&format!("after: {}", figures_line(&m.figures)));
                    (Some(m.figures), kind)
                }
                Ok(None) => (None, kind),
                Err(e) => {
                    let ending = end(journal, false, say);
                    return Err(e.context(ending_text(&ending)));
                }
            }
        }
        _ => (None, partition::find().map(|p| p.kind())),
    };
    // --keep keeps only what a whole tune measured: a stop or an error
    // restores everything.
    let keep = req.keep && outcome.is_ok() && !latlab_rt::stop::requested();
    let mut ending = end(journal, keep, say);
    ending.stopped = latlab_rt::stop::requested();
    outcome.map(|()| (after, ending, partition))
}

fn kept(planned: &Planned) -> usize {
    planned
        .fixes
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Kept { .. }))
        .count()
}

/// The procs file of tune's isolated partition, when one is applied.
fn procs() -> Option<PathBuf> {
    partition::find().map(|p| p.procs_file())
}

fn verify_groups(
    req: &Request,
    planned: &mut Planned,
    journal: &mut Journal,
    say: Progress,
) -> anyhow::Result<()> {
    say(&format!("noise: {} identical rounds", 2 * req.pairs));
    let mut same = Vec::new();
    for i in 0..2 * req.pairs {
        if latlab_rt::stop::requested() {
            return Ok(());
        }
        let Some(m) = req
            .measure
            .run(&format!("noise-{}", i + 1), req.round_ns, false, None)?
        else {
            return Ok(());
        };
        say(&format!("  round {}: {}", i + 1, figures_line(&m.figures)));
        same.push(Round {
            applied: false,
            figures: m.figures,
        });
    }
    let noise = verify::noise(&same);
    let groups = planned.plan.groups.clone();
    for (g, group) in groups.iter().enumerate() {
        let mut members: Vec<usize> = planned
            .fixes
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f.outcome, Outcome::Proposed) && group.fixes.contains(&f.fix))
            .map(|(i, _)| i)
            .collect();
        if members.is_empty() {
            continue;
        }
        say(&format!(
            "fix {}/{}: {} ({} knob{})",
            g + 1,
            groups.len(),
            group.name,
            members.len(),
            if members.len() == 1 { "" } else { "s" }
        ));
        let mut rounds = Vec::new();
        for (r, applied) in verify::schedule(req.pairs).into_iter().enumerate() {
            if latlab_rt::stop::requested() {
                break;
            }
            set(planned, &mut members, journal, applied, say);
            if members.is_empty() {
                break;
            }
            let Some(m) = req.measure.run(
                &format!("fix{}-round{}", g + 1, r + 1),
                req.round_ns,
                false,
                procs().as_deref(),
            )?
            else {
                break;
            };
            say(&format!(
                "  round {} ({}): {}",
                r + 1,
                if applied { "applied" } else { "undone" },
                figures_line(&m.figures)
            ));
            rounds.push(Round {
                applied,
                figures: m.figures,
            });
        }
        if members.is_empty() {
            continue;
        }
        if latlab_rt::stop::requested() {
            set(planned, &mut members, journal, false, say);
            for &i in &members {
                planned.fixes[i].outcome = Outcome::NotMeasured;
            }
            return Ok(());
        }
        let effect = verify::effect(&rounds, &noise);
        let keep = effect.kept;
        say(&format!("  {}: {}", group.name, effect.why));
        set(planned, &mut members, journal, keep, say);
        for &i in &members {
            planned.fixes[i].outcome = if keep {
                Outcome::Kept {
                    effect: effect.clone(),
                }
            } else {
                Outcome::Dropped {
                    effect: effect.clone(),
                }
            };
        }
    }
    Ok(())
}

/// Applies (or undoes) every fix of a group; one the kernel refuses is
/// skipped with the reason, and leaves the group.
fn set(
    planned: &mut Planned,
    members: &mut Vec<usize>,
    journal: &mut Journal,
    applied: bool,
    say: Progress,
) {
    members.retain(|&i| {
        let f = &mut planned.fixes[i];
        let result = if applied {
            journal.apply(&f.fix.knob, &f.proposed).map(|_| ())
        } else {
            journal.undo(&f.fix.knob)
        };
        match result {
            Ok(()) => true,
            Err(e) => {
                say(&format!("  skipped {}: {e}", f.fix.knob));
                f.outcome = Outcome::Skipped {
                    reason: e.to_string(),
                };
                false
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use latlab_fix::{Fix, Knob, Value};

    use super::outcome_before;
    use crate::result::Outcome;

    #[test]
    fn a_value_written_another_way_is_already_set() {
        let irq = Fix::new(Knob::IrqAffinity { irq: 24 }, Value::Housekeeping, "IRQ 24");
        assert_eq!(
            outcome_before(&irq, Some("0-1"), "0,1"),
            Outcome::AlreadySet
        );
        assert_eq!(outcome_before(&irq, Some("0-1"), "0"), Outcome::Proposed);
        assert_eq!(outcome_before(&irq, None, "0"), Outcome::Proposed);
        let prio = Fix::new(
            Knob::TaskPriority {
                pid: 12,
                comm: "ktimers/1".into(),
            },
            Value::literal("other"),
            "ktimers",
        );
        assert_eq!(
            outcome_before(&prio, Some("other:0"), "other"),
            Outcome::AlreadySet
        );
        assert_eq!(
            outcome_before(&prio, Some("fifo:50"), "other"),
            Outcome::Proposed
        );
        let mut refused = irq.clone();
        refused.refused = Some("a managed IRQ".into());
        assert!(matches!(
            outcome_before(&refused, Some("0-1"), "0,1"),
            Outcome::Skipped { .. }
        ));
    }
}
