//! The characterization in words: the answer in a sentence or two, and the
//! terminal summary (also `summary.txt`).

use std::fmt::Write as _;

use latlab_measure::units::format_ns;

use super::model::{Characterization, RunFigures};
use crate::explain::{top_causes, CauseSummary};
use crate::formats::TerminalText;
use crate::montavista::PAPER;

/// Causes of the loaded run's late wake-ups the summary and the report list.
pub(super) const CAUSES_LISTED: usize = 3;

impl Characterization {
    /// The answer in one or two sentences.
    pub fn answer(&self) -> String {
        let best = |loaded: bool| {
            self.classes
                .iter()
                .rev()
                .find(|c| if loaded { c.loaded.met } else { c.idle.met })
        };
        let first_missed = self.classes.iter().find(|c| !c.loaded.met);
        let [idle, loaded] = &self.runs;
        let mut text = match (best(true), first_missed) {
            (_, None) => format!(
                "This machine met every class checked, idle and under load, down to {} \
                 (worst case {} idle, {} loaded).",
                self.classes.last().map_or("", |c| c.title()),
                format_ns(idle.max),
                format_ns(loaded.max)
            ),
            (Some(met), Some(missed)) => format!(
                "Under load this machine met {} at best; it missed {} (worst case {} on CPU{}).",
                met.title(),
                missed.title(),
                format_ns(loaded.max),
                loaded.max_cpu
            ),
            (None, Some(missed)) => format!(
                "Under load this machine met no class checked; it missed {} (worst case {} on \
                 CPU{}).",
                missed.title(),
                format_ns(loaded.max),
                loaded.max_cpu
            ),
        };
        if first_missed.is_some() {
            match best(false) {
                Some(c) => {
                    let _ = write!(
                        text,
                        " Idle it met {} (worst case {}).",
                        c.title(),
                        format_ns(idle.max)
                    );
                }
                None => {
                    let _ = write!(
                        text,
                        " Idle it met no class either (worst case {}).",
                        format_ns(idle.max)
                    );
                }
            }
        }
        text
    }
}

/// The terminal summary (also `summary.txt`): the answer first, the
/// pitfalls one short line each, the classes and figures, then the top
/// causes with each fix once. The report has the whole text of each.
impl TerminalText for Characterization {
    fn terminal_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "\n== latlab characterization: {}", self.machine);
        let _ = writeln!(t, "{}", self.answer());
        if !self.pitfalls.is_empty() {
            let _ = writeln!(t, "pitfalls (the report says why, and the fix):");
            for p in &self.pitfalls {
                let _ = writeln!(t, "  - {}", p.summary);
            }
        }
        let _ = writeln!(t, "measured: {}", self.setup);
        let _ = writeln!(
            t,
            "\nrequirement classes (these runs show the worst case seen, not the worst possible):"
        );
        for class in &self.classes {
            let _ = writeln!(
                t,
                "  {:<36} idle {:<7} loaded {}",
                class.title(),
                met(class.idle.met),
                met(class.loaded.met)
            );
        }
        let [idle, loaded] = &self.runs;
        let share_line = |t: &mut String, name: &str, shares: [(f64, u64); 2]| {
            let _ = writeln!(
                t,
                "  {name:<36} idle {} at or below 10 us, worst {}; loaded {}, worst {}",
                percent(shares[0].0),
                format_ns(shares[0].1),
                percent(shares[1].0),
                format_ns(shares[1].1)
            );
        };
        share_line(&mut t, "MontaVista 2002 (300 MHz Celeron)", PAPER);
        share_line(
            &mut t,
            "  this machine",
            [(idle.share_10us, idle.max), (loaded.share_10us, loaded.max)],
        );
        let _ = writeln!(t, "\n{:<24} {:>12} {:>12}", "", idle.label, loaded.label);
        let row = |t: &mut String, name: &str, a: String, b: String| {
            let _ = writeln!(t, "{name:<24} {a:>12} {b:>12}");
        };
        row(
            &mut t,
            "samples",
            idle.samples.to_string(),
            loaded.samples.to_string(),
        );
        for (name, get) in [
            ("p50", (|r: &RunFigures| r.p50) as fn(&RunFigures) -> u64),
            ("p99", |r| r.p99),
            ("p99.99", |r| r.p99_99),
            ("max", |r| r.max),
        ] {
            row(&mut t, name, format_ns(get(idle)), format_ns(get(loaded)));
        }
        match &self.explained {
            Some(e) if e.late == 0 => {
                let _ = writeln!(
                    t,
                    "\nnothing stands in the way: no wake-up of the loaded run reached {}",
                    format_ns(e.threshold_ns)
                );
            }
            Some(e) => {
                let _ = writeln!(
                    t,
                    "\nwhat stands in the way: {} of {} loaded periods woke {} or more late; \
                     from the kernel trace, the top causes:",
                    e.late,
                    e.periods,
                    format_ns(e.threshold_ns)
                );
                let causes: Vec<CauseSummary<'_>> = e
                    .causes
                    .iter()
                    .take(CAUSES_LISTED)
                    .map(CauseSummary::of)
                    .collect();
                t.push_str(&top_causes(&causes));
                if !e.causes.is_empty() {
                    let (cpus, load) = &e.tune_target;
                    t.push_str(&crate::text::causes::tune_hint(cpus, load));
                }
            }
            None => {
                let _ = writeln!(
                    t,
                    "\nthe loaded run's trace could not be explained (its warning is above)"
                );
            }
        }
        t
    }
}

fn met(yes: bool) -> &'static str {
    if yes {
        "met"
    } else {
        "MISSED"
    }
}

/// `99.47 %`.
pub(super) fn percent(share: f64) -> String {
    format!("{:.2} %", share * 100.0)
}
