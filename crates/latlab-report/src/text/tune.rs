//! The terminal text of a `latlab tune` result (`latlab.tune`): the
//! baseline, the plan (each fix's knob, current → proposed value, when it
//! takes effect, its cost and why; the refused ones with the reason), each
//! measured fix's effect and verdict, the boot command line for GRUB and
//! U-Boot, the before/after table and how tune left the system.

use std::fmt::Write as _;

use latlab_fix::{Cost, Takes};
use latlab_measure::units::format_ns;
use latlab_tune::result::{CauseFixes, Figures, Outcome, PlannedFix, TuneResult};
use latlab_tune::verify::{Effect, Metric};

use super::blocks::system_line;
use crate::formats::TerminalText;
use crate::units::us;

/// `runtime` or `reboot`.
pub fn takes_name(takes: Takes) -> &'static str {
    match takes {
        Takes::Runtime => "runtime",
        Takes::Reboot => "reboot",
    }
}

/// What a fix costs, in words: `-`, `housekeeping CPUs`, `power`, ...
pub fn cost_name(cost: Cost) -> &'static str {
    match cost {
        Cost::None => "-",
        Cost::Housekeeping => "housekeeping CPUs",
        Cost::Power => "power",
        Cost::Throughput => "throughput",
        Cost::SafetyNet => "a safety net",
    }
}

/// What became of a fix, one word: `kept`, `dropped`, `proposed`, ...
pub fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Proposed => "proposed",
        Outcome::AlreadySet => "already set",
        Outcome::Skipped { .. } => "skipped",
        Outcome::Kept { .. } => "kept",
        Outcome::Dropped { .. } => "dropped",
        Outcome::NotMeasured => "not measured",
    }
}

/// The measured effect of a fix, if it was measured.
pub fn effect_of(fix: &PlannedFix) -> Option<&Effect> {
    match &fix.outcome {
        Outcome::Kept { effect } | Outcome::Dropped { effect } => Some(effect),
        _ => None,
    }
}

/// `0-1 → 0`, the current value `?` where it could not be read.
pub fn current_to_proposed(fix: &PlannedFix) -> String {
    format!(
        "{} → {}",
        fix.current.as_deref().unwrap_or("?"),
        fix.proposed
    )
}

/// The three other metrics of an effect on one line, with the intervals'
/// confidence and the rounds: `p99.9 -40.0 us [-60.0, -22.0], max ...;
/// 97 % intervals, 4 applied + 4 undone rounds`.
pub fn effect_detail(e: &Effect) -> String {
    let others: Vec<String> = Metric::ALL
        .into_iter()
        .filter(|&m| m != e.decided_by)
        .map(|m| e.change(m).text())
        .collect();
    format!(
        "{}; {:.0} % intervals, {} applied + {} undone rounds",
        others.join(", "),
        e.change(e.decided_by).confidence * 100.0,
        e.applied,
        e.undone
    )
}

/// Rows of cells as aligned columns: the first `left` left-aligned, the
/// others right-aligned, two spaces apart, each line indented by two.
fn columns(out: &mut String, rows: &[Vec<String>], left: usize) {
    let mut widths = vec![0; rows.iter().map(Vec::len).max().unwrap_or(0)];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::from(" ");
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if i < left {
                let _ = write!(line, " {cell}{pad} ");
            } else {
                let _ = write!(line, " {pad}{cell} ");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The figures of a run as a table row (µs): samples, p50, p99, p99.9, max, missed.
fn figure_cells(label: &str, f: &Figures) -> Vec<String> {
    let mut row = vec![label.to_string(), f.samples.to_string()];
    row.extend([f.p50_ns, f.p99_ns, f.p999_ns, f.max_ns].map(us));
    row.push(f.missed.to_string());
    row
}

/// The change of each figure from `before` to `after`, signed percent.
fn change_cells(before: &Figures, after: &Figures) -> Vec<String> {
    let pct = |b: u64, a: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:+.1} %", (a as f64 - b as f64) / b as f64 * 100.0)
        }
    };
    let mut row = vec!["change".to_string(), String::new()];
    for (b, a) in [
        (before.p50_ns, after.p50_ns),
        (before.p99_ns, after.p99_ns),
        (before.p999_ns, after.p999_ns),
        (before.max_ns, after.max_ns),
        (before.missed, after.missed),
    ] {
        row.push(pct(b, a));
    }
    row
}

/// The header of a figures table.
fn figure_header() -> Vec<String> {
    [
        "", "samples", "p50 us", "p99 us", "p99.9 us", "max us", "missed",
    ]
    .map(String::from)
    .to_vec()
}

/// The causes listed by name: the largest; the others only where they
/// call for a fix.
const CAUSES_SHOWN: usize = 10;

/// `#3, #5-#9` for fix numbers.
fn numbers(members: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < members.len() {
        let start = members[i];
        while i + 1 < members.len() && members[i + 1] == members[i] + 1 {
            i += 1;
        }
        parts.push(if members[i] == start {
            format!("#{start}")
        } else {
            format!("#{start}-#{}", members[i])
        });
        i += 1;
    }
    parts.join(", ")
}

/// The text `latlab tune` prints at its end and `latlab report` shows.
pub fn text(r: &TuneResult) -> String {
    let mut o = String::new();
    let s = &r.settings;
    let deadline = s
        .deadline_ns
        .map(|d| format!(", deadline {}", format_ns(d)))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "latlab tune: real-time CPUs {}, housekeeping {}, load {}{deadline}; \
         rounds of {}, {} per fix{}{}{}",
        latlab_fix::cpu_list(&s.cpus),
        latlab_fix::cpu_list(&s.housekeeping),
        s.load,
        format_ns(s.round_ns),
        s.rounds,
        if s.isolate { ", --isolate" } else { "" },
        if s.plan_only { ", --plan" } else { "" },
        if s.keep { ", --keep" } else { "" }
    );
    system_line(&mut o, &r.system);
    let _ = writeln!(o, "\nBaseline (before anything changed)");
    columns(
        &mut o,
        &[figure_header(), figure_cells("baseline", &r.baseline)],
        1,
    );
    if !r.causes.is_empty() {
        let _ = writeln!(o, "\nCauses of the late wake-ups (the baseline's trace)");
        // The largest, and every one that calls for a fix; the rest summed.
        let shown = |i: usize, c: &CauseFixes| i < CAUSES_SHOWN || !c.fixes.is_empty();
        for (i, c) in r.causes.iter().enumerate().filter(|(i, c)| shown(*i, c)) {
            let _ = writeln!(o, "  {:>2}. {:>5.1} %  {}", i + 1, c.share * 100.0, c.cause);
        }
        let rest: Vec<&CauseFixes> = r
            .causes
            .iter()
            .enumerate()
            .filter(|(i, c)| !shown(*i, c))
            .map(|(_, c)| c)
            .collect();
        if !rest.is_empty() {
            let share: f64 = rest.iter().map(|c| c.share).sum();
            let _ = writeln!(
                o,
                "      {:>5.1} %  {} smaller causes that call for no fix (the JSON has them all)",
                share * 100.0,
                rest.len()
            );
        }
    }
    let _ = writeln!(o, "\nPlan");
    let mut rows = vec![["#", "knob", "current → proposed", "takes", "cost", "why"]
        .map(String::from)
        .to_vec()];
    let mut refused = Vec::new();
    for (i, f) in r.fixes.iter().enumerate() {
        if let Some(reason) = &f.fix.refused {
            refused.push(format!("#{} {}: refused: {reason}", i + 1, f.fix.knob));
        }
        rows.push(vec![
            format!("#{}", i + 1),
            f.fix.knob.to_string(),
            current_to_proposed(f),
            takes_name(f.takes).into(),
            cost_name(f.cost).into(),
            f.fix.why.clone(),
        ]);
    }
    columns(&mut o, &rows, 6);
    for line in refused {
        let _ = writeln!(o, "  {line}");
    }
    let _ = writeln!(o, "\nEach fix, applied and undone in alternating rounds");
    if let Some(e) = r.fixes.iter().find_map(effect_of) {
        let noise: Vec<String> = Metric::ALL
            .into_iter()
            .map(|m| format!("{} {} us", m.name(), us(e.change(m).noise_ns)))
            .collect();
        let _ = writeln!(o, "  noise between identical rounds: {}", noise.join(", "));
    }
    let mut groups_said: Vec<&str> = Vec::new();
    for (i, f) in r.fixes.iter().enumerate() {
        let n = i + 1;
        match (&f.outcome, effect_of(f)) {
            (_, Some(_)) if groups_said.contains(&f.group.as_str()) => {}
            (_, Some(e)) => {
                // One effect per group: its fixes were applied and undone together.
                let members: Vec<usize> = (0..r.fixes.len())
                    .filter(|&j| r.fixes[j].group == f.group && effect_of(&r.fixes[j]).is_some())
                    .map(|j| j + 1)
                    .collect();
                let what = if members.len() == 1 {
                    format!("#{n} {}", f.fix.knob)
                } else {
                    format!(
                        "{} ({} knobs: {})",
                        f.group,
                        members.len(),
                        numbers(&members)
                    )
                };
                groups_said.push(&f.group);
                let verdict = if e.kept { "KEPT" } else { "DROPPED" };
                let _ = writeln!(o, "  {verdict:<7} {what}: {}", e.why);
                let _ = writeln!(o, "          {}", effect_detail(e));
            }
            (Outcome::Skipped { reason }, _) => {
                let _ = writeln!(o, "  #{n} skipped {}: {reason}", f.fix.knob);
            }
            (Outcome::Proposed, _) if f.takes == Takes::Reboot => {}
            (outcome, _) => {
                let _ = writeln!(o, "  #{n} {} {}", outcome_name(outcome), f.fix.knob);
            }
        }
    }
    boot(&mut o, r);
    if let Some(after) = &r.after {
        let _ = writeln!(o, "\nBefore / after (every kept fix applied, same load)");
        columns(
            &mut o,
            &[
                figure_header(),
                figure_cells("before", &r.baseline),
                figure_cells("after", after),
                change_cells(&r.baseline, after),
            ],
            1,
        );
    }
    if let Some(deadline) = s.deadline_ns {
        let _ = writeln!(o, "\nDeadline {}", format_ns(deadline));
        let runs = [("before", Some(&r.baseline)), ("after", r.after.as_ref())];
        for (name, f) in runs.into_iter().filter_map(|(n, f)| Some((n, f?))) {
            let verdict = if f.max_ns <= deadline && f.missed == 0 {
                "met"
            } else {
                "MISSED"
            };
            let _ = writeln!(
                o,
                "  {name:<7} {verdict}: max {}, {} missed",
                format_ns(f.max_ns),
                f.missed
            );
        }
    }
    let _ = writeln!(o);
    for line in ending_lines(r) {
        let _ = writeln!(o, "{line}");
    }
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

/// The boot command line: each parameter with why, then GRUB's and U-Boot's line.
fn boot(o: &mut String, r: &TuneResult) {
    let b = &r.boot;
    if b.parameters.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nKernel command line (takes effect at the next boot)");
    let rows: Vec<Vec<String>> = b
        .parameters
        .iter()
        .map(|p| {
            let already = if p.already {
                " (already booted with it)"
            } else {
                ""
            };
            vec![p.text.clone(), format!("{}{already}", p.why)]
        })
        .collect();
    columns(o, &rows, 2);
    let _ = writeln!(o, "  GRUB:   {}", b.grub);
    let _ = writeln!(o, "  U-Boot: {}", b.uboot);
}

/// How tune left the system, a line each: the fixes kept and dropped, the
/// knobs restored or left changed, the partition, any knob not restored.
pub fn ending_lines(r: &TuneResult) -> Vec<String> {
    let e = &r.ending;
    let count = |kept: bool| {
        r.fixes
            .iter()
            .filter(|f| match f.outcome {
                Outcome::Kept { .. } => kept,
                Outcome::Dropped { .. } => !kept,
                _ => false,
            })
            .count()
    };
    let kept = count(true);
    let mut out = Vec::new();
    if e.stopped {
        out.push("Stopped before the end.".to_string());
    }
    let fixes = |n: usize| format!("{n} fix{}", if n == 1 { "" } else { "es" });
    let head = format!("{} kept, {} dropped.", fixes(kept), count(false));
    out.push(if r.settings.plan_only {
        format!("{head} --plan: nothing was changed.")
    } else if e.kept > 0 {
        format!(
            "{head} {} knob{} left changed (--keep): `latlab tune --restore` undoes them (a \
             reboot does too: runtime changes do not survive one).",
            e.kept,
            if e.kept == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{head} Each dropped fix was undone after its rounds; {} knob{} restored at the \
             end{}.",
            e.restored,
            if e.restored == 1 { "" } else { "s" },
            if e.failed.is_empty() {
                "; nothing left changed"
            } else {
                ""
            }
        )
    });
    if let Some(p) = &r.partition {
        out.push(format!("Isolated partition: {p}."));
    }
    for (knob, old, error) in &e.failed {
        out.push(format!("NOT RESTORED: {knob} (was {old}): {error}"));
    }
    out
}

impl TerminalText for TuneResult {
    fn terminal_text(&self) -> String {
        text(self)
    }
}

#[cfg(test)]
pub(crate) mod tests;
