//! The terminal summary of a run (`latlab run --verbose`): its header,
//! the latency and period tables, the split, the early wake-ups; the
//! blocks it shares with `latlab respond` are in [`super::blocks`].

use std::fmt::Write;

use latlab_measure::result::{RunResult, RunSettings, ThreadResult};
use latlab_measure::units::format_ns;

use super::blocks::{latency_table, system_line, verdict_block, worst_block, LatencyRow};
use crate::units::us;

/// The summary printed at the end of `latlab run --verbose` (and by
/// `latlab report` on a terminal): every table.
pub fn summary_table(result: &RunResult) -> String {
    let mut out = String::new();
    let sys = &result.system;
    header_line(&mut out, result, None);
    system_line(&mut out, sys);
    out.push('\n');
    out.push_str("Wake-up latency (us)\n");
    let threads: Vec<&ThreadResult> = result.threads.iter().collect();
    thread_latency_table(&mut out, result, &threads);
    split_block(&mut out, result);
    early_block(&mut out, result);
    out.push('\n');
    period_block(&mut out, result);
    worst_block(&mut out, "Worst samples", &result.overall.worst, "cycle");
    verdict_block(
        &mut out,
        result.verdict,
        &result.requirements,
        "try --max-latency 1ms or --profile emblix-class2",
    );
    out
}

/// Appends the latency table of `threads`, a row each labelled by its CPU,
/// and the row of all threads when the run had more than one.
pub(crate) fn thread_latency_table(
    out: &mut String,
    result: &RunResult,
    threads: &[&ThreadResult],
) {
    let labels: Vec<String> = threads.iter().map(|t| t.cpu.to_string()).collect();
    let mut rows: Vec<LatencyRow<'_>> = threads
        .iter()
        .zip(&labels)
        .map(|(t, label)| LatencyRow {
            label,
            latency: &t.latency,
            extra: Some(t.missed_periods),
        })
        .collect();
    if result.threads.len() > 1 {
        rows.push(LatencyRow {
            label: "all",
            latency: &result.overall.latency,
            extra: Some(result.overall.missed_periods),
        });
    }
    latency_table(out, ("CPU", 4), Some("missed"), &rows);
}

/// Appends the first line of a run's summary: the timer, interval,
/// scheduling obtained, CPUs and length, and the load when `load` names one.
pub fn header_line(out: &mut String, result: &RunResult, load: Option<&str>) {
    let s = &result.settings;
    let length = match (s.duration_s, s.loops) {
        (_, Some(loops)) => format!("{loops} loops"),
        _ => format!("{:.1} s", result.elapsed_s),
    };
    let _ = writeln!(
        out,
        "latlab run: {} timer, {} interval, {}, {} CPU{}, {}{}{}",
        s.timer,
        format_ns(s.interval_ns),
        scheduling(s),
        s.cpus.len(),
        if s.cpus.len() == 1 { "" } else { "s" },
        length,
        load.map(|l| format!(", {l}")).unwrap_or_default(),
        if result.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
}

/// The scheduling the measurement threads ran at, as every summary says it:
/// `SCHED_FIFO 95`, `SCHED_OTHER`, and what an unprivileged run lacked
/// (`SCHED_OTHER (unprivileged, memory not locked)`).
pub fn scheduling(s: &RunSettings) -> String {
    let mut text = if s.policy.is_realtime() {
        format!("{} {}", s.policy.kernel_name(), s.priority)
    } else {
        s.policy.kernel_name().to_string()
    };
    if s.unprivileged {
        text.push_str(if s.mlocked {
            " (unprivileged)"
        } else {
            " (unprivileged, memory not locked)"
        });
    }
    text
}

/// What the three parts of a [`latlab_measure::result::LatencySplit`] are,
/// one line each (the terminal and HTML summaries say it under their table).
pub const SPLIT_LEGEND: [&str; 3] = [
    "interrupt: the timer's expiry -> the timer interrupt (MontaVista's interrupt latency, \
     rtla's IRQ latency)",
    "preemption: the timer interrupt -> the thread running (MontaVista's preemption latency)",
    "thread: the expiry -> the thread running, interrupt + preemption (rtla's thread latency); \
     latlab's latency adds the return to user space",
];

/// Appends the split of the latency at the timer interrupt (`--split`), if
/// the run has one: per thread and overall, the timer wake-ups the kernel
/// measured and p50/p99/max of each part.
pub(crate) fn split_block(out: &mut String, result: &RunResult) {
    let Some(overall) = &result.overall.split else {
        return;
    };
    let _ = writeln!(
        out,
        "\nLatency split at the timer interrupt (us; measured in the kernel, BPF)"
    );
    let header = format!(
        "{:>4} {:>10}  {:^26}  {:^26}  {:^26}",
        "", "timer", "interrupt latency", "preemption latency", "thread latency"
    );
    let _ = writeln!(out, "{}", header.trim_end());
    let _ = writeln!(
        out,
        "{:>4} {:>10}  {:>8} {:>8} {:>8}  {:>8} {:>8} {:>8}  {:>8} {:>8} {:>8}",
        "CPU", "wake-ups", "p50", "p99", "max", "p50", "p99", "max", "p50", "p99", "max"
    );
    let row = |out: &mut String, label: &str, s: &latlab_measure::result::LatencySplit| {
        let _ = write!(out, "{label:>4} {:>10}", s.timer_wakeups);
        for part in [
            &s.interrupt_latency,
            &s.preemption_latency,
            &s.thread_latency,
        ] {
            let l = &part.summary;
            let _ = write!(out, "  {:>8} {:>8} {:>8}", us(l.p50), us(l.p99), us(l.max));
        }
        out.push('\n');
    };
    for t in &result.threads {
        match &t.split {
            Some(split) => row(out, &t.cpu.to_string(), split),
            None => {
                let _ = writeln!(out, "{:>4} {:>10}", t.cpu, "-");
            }
        }
    }
    if result.threads.len() > 1 {
        row(out, "all", overall);
    }
    for line in SPLIT_LEGEND {
        let _ = writeln!(out, "{line}");
    }
}

pub(crate) fn period_block(out: &mut String, result: &RunResult) {
    let reference = result.settings.interval_ns;
    let _ = writeln!(
        out,
        "Period accuracy (reference {}{}, tolerance +-{}%)",
        format_ns(reference),
        if result.settings.interval_step_ns > 0 {
            " + step per CPU"
        } else {
            ""
        },
        result.settings.period_tolerance * 100.0
    );
    let _ = writeln!(
        out,
        "{:>4} {:>10} {:>10} {:>9} {:>12} {:>12}",
        "CPU", "periods", "within", "share", "min dev us", "max dev us"
    );
    let row = |out: &mut String, label: &str, t: &latlab_measure::period::PeriodSummary| {
        let _ = writeln!(
            out,
            "{:>4} {:>10} {:>10} {:>8.3}% {:>+12.1} {:>+12.1}",
            label,
            t.count,
            t.within_tolerance,
            t.share_within * 100.0,
            t.min_deviation_ns as f64 / 1e3,
            t.max_deviation_ns as f64 / 1e3
        );
    };
    for t in &result.threads {
        row(out, &t.cpu.to_string(), &t.period);
    }
    if result.threads.len() > 1 {
        row(out, "all", &result.overall.period);
    }
    out.push('\n');
}

/// Appends the early wake-ups, if there were any: a wake-up before its
/// intended time cannot happen, so it is named, never folded into the table.
/// Also the wake-ups whose expiry the kernel did not tell.
pub(crate) fn early_block(out: &mut String, result: &RunResult) {
    for t in result.threads.iter().filter(|t| t.uncertain_expiries > 0) {
        let _ = writeln!(
            out,
            "uncertain expiries: {} on CPU{} (the kernel does not tell which {} expiry a wake-up \
             answers after the thread was held about two intervals: measured against the \
             earliest, so overstated by whole intervals at worst, never understated)",
            t.uncertain_expiries, t.cpu, result.settings.timer
        );
    }
    for t in result.threads.iter().filter(|t| t.early_wakeups > 0) {
        let _ = writeln!(
            out,
            "early wake-ups: {} on CPU{} (up to {} before the intended time; not in the \
             figures above): the measurement is suspect (a latlab bug or a clock problem; \
             please report it with the result JSON)",
            t.early_wakeups,
            t.cpu,
            format_ns(t.max_early_ns)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sample_result;

    #[test]
    fn summary_table_snapshot() {
        insta::assert_snapshot!(summary_table(&sample_result()));
    }

    #[test]
    fn summary_names_early_wake_ups_and_a_suspect_verdict() {
        let text = summary_table(&crate::fixture::sample_result_with_early(2, 97_500));
        assert!(
            text.contains("early wake-ups: 2 on CPU0 (up to 97.5 us before the intended time"),
            "{text}"
        );
        assert!(text.contains("Verdict: SUSPECT"), "{text}");
        assert!(!summary_table(&sample_result()).contains("early wake-ups"));
    }

    #[test]
    fn summary_names_uncertain_expiries() {
        let mut result = sample_result();
        result.threads[1].uncertain_expiries = 3;
        let text = summary_table(&result);
        assert!(
            text.contains("uncertain expiries: 3 on CPU1 (the kernel does not tell which"),
            "{text}"
        );
        assert!(!summary_table(&sample_result()).contains("uncertain"));
    }

    #[test]
    fn summary_names_the_failing_cpu_and_cycle() {
        let text = summary_table(&sample_result());
        assert!(
            text.contains("FAIL: CPU1 max 3.42 ms > 1.00 ms (cycle 8123)"),
            "{text}"
        );
    }
}
