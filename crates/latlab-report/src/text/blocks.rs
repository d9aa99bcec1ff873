//! The blocks of text the summaries of `latlab run` and `latlab respond`
//! share: the machine's line, a latency table, the worst samples, the
//! verdict.

use std::fmt::Write;

use latlab_measure::requirements::RequirementOutcome;
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;
use latlab_measure::units::format_ns;
use latlab_measure::worst::WorstSample;
use latlab_rt::sysinfo::SystemInfo;

use crate::units::{us, us_f64};

/// How many worst samples the summary lists.
const WORST_SHOWN: usize = 5;

/// Appends the one-line description of the machine (kernel, preemption,
/// HZ, clocksource, VM).
pub fn system_line(out: &mut String, sys: &SystemInfo) {
    let _ = writeln!(
        out,
        "kernel {} | preemption {} | HZ {} | clocksource {} | {}",
        sys.kernel_release,
        sys.preemption_model.as_deref().unwrap_or("unknown"),
        sys.hz.map_or("?".to_string(), |hz| hz.to_string()),
        sys.clocksource.as_deref().unwrap_or("?"),
        sys.virtualization
            .as_ref()
            .map_or("bare metal".to_string(), |v| format!("VM: {v}"))
    );
}

/// One row of a latency table.
#[derive(Debug, Clone, Copy)]
pub struct LatencyRow<'a> {
    /// First column, e.g. the CPU or `one-way`.
    pub label: &'a str,
    /// The figures of the row.
    pub latency: &'a Summary,
    /// The last, optional count column (`missed` periods, `lost` events).
    pub extra: Option<u64>,
}

/// Appends a latency table in microseconds: a header, then one row per
/// entry. `label` is the first column's header and width; `extra` names
/// the optional count column.
pub fn latency_table(
    out: &mut String,
    label: (&str, usize),
    extra: Option<&str>,
    rows: &[LatencyRow<'_>],
) {
    let (header, width) = label;
    let _ = write!(
        out,
        "{:>width$} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        header, "samples", "min", "mean", "stddev", "p50", "p90", "p99", "p99.9", "p99.99", "max",
    );
    if let Some(extra) = extra {
        let _ = write!(out, " {extra:>7}");
    }
    out.push('\n');
    for row in rows {
        let l = row.latency;
        let _ = write!(
            out,
            "{:>width$} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
            row.label,
            l.count,
            us(l.min),
            us_f64(l.mean),
            us_f64(l.stddev),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.p99_9),
            us(l.p99_99),
            us(l.max),
        );
        if let (Some(_), Some(value)) = (extra, row.extra) {
            let _ = write!(out, " {value:>7}");
        }
        out.push('\n');
    }
}

/// Appends the five worst samples under `title`; `index_name` names a
/// sample's index (`cycle`, `event`).
pub fn worst_block(out: &mut String, title: &str, worst: &[WorstSample], index_name: &str) {
    if worst.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}");
    for (rank, w) in worst.iter().take(WORST_SHOWN).enumerate() {
        let _ = writeln!(
            out,
            "{:>4}. CPU{:<3} {:>10}  {index_name} {:<10} at {:.3} s",
            rank + 1,
            w.cpu,
            format_ns(w.latency_ns),
            w.cycle,
            w.offset_s
        );
    }
    out.push('\n');
}

/// Appends the verdict and each requirement's outcome; `hint` suggests
/// requirements when none was given.
pub fn verdict_block(
    out: &mut String,
    verdict: Verdict,
    outcomes: &[RequirementOutcome],
    hint: &str,
) {
    match verdict {
        Verdict::None => {
            let _ = writeln!(out, "No requirement given ({hint}).");
        }
        Verdict::Pass | Verdict::Fail | Verdict::Suspect => {
            let why = if verdict == Verdict::Suspect {
                ": wake-ups came before their intended time, so these figures prove nothing \
                 (the requirements below as measured)"
            } else {
                ""
            };
            let _ = writeln!(out, "Verdict: {}{why}", crate::verdict::headline(verdict));
            for outcome in outcomes {
                for line in &outcome.details {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
    }
}
