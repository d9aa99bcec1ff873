//! How a tune ends: the journal restored (or kept) and said in words, and
//! the result document assembled.

use crate::journal::Journal;
use crate::result::{BootLine, Ending, Figures, TuneResult, TuneSettings};

use super::{Planned, Progress, Request};

/// Restores every change (or keeps them) and says so.
pub(super) fn end(journal: Journal, keep: bool, say: Progress) -> Ending {
    if keep {
        let path = journal.path().to_path_buf();
        return match journal.keep() {
            Ok(entries) => {
                say(&format!(
                    "kept {} changes (--keep); `latlab tune --restore` undoes them ({})",
                    entries.len(),
                    crate::journal::kept_path(&path).display()
                ));
                Ending {
                    kept: entries.len() as u32,
                    ..Ending::default()
                }
            }
            Err(e) => {
                say(&format!(
                    "--keep: {e}; the changes stay, and so does the restore file"
                ));
                Ending {
                    kept: 0,
                    ..Ending::default()
                }
            }
        };
    }
    let report = journal.restore();
    let ending = Ending {
        restored: report.restored.len() as u32,
        failed: report
            .failed
            .iter()
            .map(|(knob, old, error)| (knob.to_string(), old.clone(), error.to_string()))
            .collect(),
        ..Ending::default()
    };
    say(&ending_text(&ending));
    ending
}

pub(super) fn ending_text(ending: &Ending) -> String {
    if ending.failed.is_empty() {
        format!(
            "restored {} changed knob{}",
            ending.restored,
            if ending.restored == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "restored {} changed knobs; {} could not be restored: {}",
            ending.restored,
            ending.failed.len(),
            ending
                .failed
                .iter()
                .map(|(k, old, e)| format!("{k} (was {old}): {e}"))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

/// `p50 12 us, p99 45 us, p99.9 80 us, max 120 us, 0 missed`.
pub fn figures_line(f: &Figures) -> String {
    let us = |ns: u64| format!("{:.0} us", ns as f64 / 1000.0);
    format!(
        "p50 {}, p99 {}, p99.9 {}, max {}, {} missed of {}",
        us(f.p50_ns),
        us(f.p99_ns),
        us(f.p999_ns),
        us(f.max_ns),
        f.missed,
        f.samples + f.missed
    )
}

/// The settings part of the result.
pub fn settings(req: &Request, load: &str) -> TuneSettings {
    TuneSettings {
        cpus: req.rt.clone(),
        housekeeping: req.housekeeping.clone(),
        load: load.to_string(),
        deadline_ns: req.deadline_ns,
        round_ns: req.round_ns,
        rounds: req.pairs * 2,
        isolate: req.isolate,
        plan_only: req.plan_only,
        keep: req.keep,
    }
}

/// Assembles the result document.
pub fn result(
    envelope: latlab_envelope::Envelope<crate::result::TuneSchema>,
    req: &Request,
    planned: Planned,
    boot: BootLine,
    after: Option<Figures>,
    ending: Ending,
    partition: Option<String>,
) -> TuneResult {
    TuneResult {
        envelope,
        settings: settings(req, &req.measure.load),
        baseline: planned.baseline.figures,
        causes: planned.plan.causes,
        fixes: planned.fixes,
        boot,
        after,
        partition,
        ending,
    }
}
