//! The terminal text of an explanation of late wake-ups (`latlab explain`,
//! `latlab run --explain`); the short list of its causes is [`super::causes`],
//! a run's agreement with its trace [`super::agreement`].

use std::fmt::Write as _;

use latlab_explain::Report;
use latlab_measure::units::format_ns as fmt_ns;

fn secs(ns: u64) -> String {
    let us = ns.saturating_add(500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// `latlab explain`'s terminal text: the explanation ([`text`]) and, when
/// it found causes, the `latlab tune` command that applies their fixes on
/// the CPUs the analysed task's periods ran on.
pub fn text_with_next_step(report: &Report) -> String {
    let mut o = text(report);
    if !report.causes.is_empty() {
        let mut cpus: Vec<usize> = report.table1.iter().map(|r| r.cpu as usize).collect();
        cpus.sort_unstable();
        cpus.dedup();
        o.push_str(&super::causes::tune_hint_for_trace(&cpus));
    }
    o
}

/// The terminal text of an explanation (`latlab explain`, `latlab run --explain`).
pub fn text(report: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "trace: {} ({})", report.trace, report.format);
    let _ = writeln!(
        o,
        "kernel: {}{}",
        report.kernel.evidence,
        report
            .kernel
            .uname
            .as_deref()
            .map(|u| format!(": {u}"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "events: {}, span {}, lost {}{}",
        report.events,
        fmt_ns(report.span_ns),
        report.lost_events,
        if report.lost_pages > 0 {
            format!(" (+{} page(s) with an unknown number)", report.lost_pages)
        } else {
            String::new()
        }
    );
    let _ = writeln!(o, "\nperiodic timer tasks found:");
    if report.tasks_found.is_empty() {
        let _ = writeln!(o, "  none");
    }
    for t in report.tasks_found.iter().take(10) {
        let _ =
            writeln!(
            o,
            "  {:>24}  {:>7} periods  every {:>9}  regular {:>3.0}%  latency p50 {:>9} max {:>9}{}",
            format!("{}:{}", t.comm, t.pid),
            t.periods,
            fmt_ns(t.median_interval_ns),
            t.regularity * 100.0,
            fmt_ns(t.latency.p50),
            fmt_ns(t.latency.max),
            if t.from_markers { "  (trace_marker)" } else { "" }
        );
    }
    if report.tasks_found.len() > 10 {
        let _ = writeln!(o, "  ... {} more", report.tasks_found.len() - 10);
    }
    let names: Vec<String> = report
        .selected
        .iter()
        .map(|t| format!("{}:{}", t.comm, t.pid))
        .collect();
    let _ = writeln!(
        o,
        "\nanalysed: {} ({})",
        if names.is_empty() {
            "nothing".into()
        } else {
            names.join(", ")
        },
        report.selection
    );
    let _ = writeln!(
        o,
        "periods: {}, late: {} (threshold {} = {}); latency min {} p50 {} p99 {} max {}",
        report.periods,
        report.late,
        report.threshold,
        fmt_ns(report.threshold_ns),
        fmt_ns(report.latency.min),
        fmt_ns(report.latency.p50),
        fmt_ns(report.latency.p99),
        fmt_ns(report.latency.max)
    );
    let late_rows: Vec<_> = report
        .table1
        .iter()
        .filter(|r| r.late_count.is_some())
        .collect();
    if !late_rows.is_empty() {
        let _ = writeln!(o, "\nTable 1: late periods (detection)");
        let _ = writeln!(
            o,
            "  {:>8} {:>8} {:>12} {:>6} {:>4} {:>17} {:>10}",
            "period", "pid", "latency", "late#", "cpu", "intended (s)", "event#"
        );
        for r in late_rows.iter().take(20) {
            let _ = writeln!(
                o,
                "  {:>8} {:>8} {:>12} {:>6} {:>4} {:>17} {:>10}",
                r.index,
                r.pid,
                fmt_ns(r.latency_ns),
                r.late_count.unwrap_or(0),
                r.cpu,
                secs(r.intended_ns),
                r.position
            );
        }
        if late_rows.len() > 20 {
            let _ = writeln!(
                o,
                "  ... {} more late periods (--json has all)",
                late_rows.len() - 20
            );
        }
    }
    if !report.table2.is_empty() {
        let _ = writeln!(
            o,
            "\nTable 2: events per window, {} normal vs {} late windows",
            report.baseline_windows, report.late_windows
        );
        let _ = writeln!(
            o,
            "  {:<28} {:>9} {:>9} {:>11} {:>11}",
            "event", "normal", "late", "normal/win", "late/win"
        );
        for r in report.table2.iter().take(15) {
            let _ = writeln!(
                o,
                "  {:<28} {:>9} {:>9} {:>11.2} {:>11.2}",
                r.event, r.normal, r.late, r.normal_per_window, r.late_per_window
            );
        }
    }
    if !report.categories.is_empty() {
        let _ = writeln!(o, "\nlate-window latency by category:");
        for c in &report.categories {
            let _ = writeln!(
                o,
                "  {:<24} {:>5.1}%  {:>10}  in {}/{} late, {}/{} normal windows (normal mean {})",
                c.category,
                c.share * 100.0,
                fmt_ns(c.late_ns),
                c.late_windows,
                report.late_windows,
                c.normal_windows,
                report.baseline_windows,
                fmt_ns(c.mean_normal_ns)
            );
        }
    }
    if !report.causes.is_empty() {
        let _ = writeln!(o, "\ncauses, ranked by latency beyond their normal share:");
        for (i, c) in report.causes.iter().enumerate().take(10) {
            let _ = writeln!(
                o,
                "  {}. {}\n     in {}/{} late and {}/{} normal windows; {} in late windows ({:.0}% of their latency), mean {} late vs {} normal",
                i + 1,
                c.description,
                c.late_windows,
                report.late_windows,
                c.normal_windows,
                report.baseline_windows,
                fmt_ns(c.late_ns),
                c.share * 100.0,
                fmt_ns(c.mean_late_ns),
                fmt_ns(c.mean_normal_ns)
            );
            if c.pids.len() > 1 {
                let top: Vec<String> = c
                    .pids
                    .iter()
                    .take(5)
                    .map(|p| format!("{} {} in {} late", p.pid, fmt_ns(p.late_ns), p.late_windows))
                    .collect();
                let more = if c.pids.len() > 5 {
                    format!(", and {} more (--json has all)", c.pids.len() - 5)
                } else {
                    String::new()
                };
                let _ = writeln!(o, "     its pids, most first: {}{more}", top.join(", "));
            }
            if !c.related_events.is_empty() {
                let ev: Vec<String> = c
                    .related_events
                    .iter()
                    .map(|(n, k)| format!("{n} x{k}"))
                    .collect();
                let _ = writeln!(o, "     its events in late windows: {}", ev.join(", "));
            }
            if !c.woken_by.is_empty() {
                let ev: Vec<String> = c
                    .woken_by
                    .iter()
                    .map(|(n, k)| format!("{n} x{k}"))
                    .collect();
                let _ = writeln!(
                    o,
                    "     woken in late windows by the interrupts: {}",
                    ev.join(", ")
                );
            }
            let _ = writeln!(o, "     -> {}", c.recommendation);
        }
    }
    if !report.windows.is_empty() {
        let _ = writeln!(o, "\nworst late windows (latency = sum of parts):");
        for w in report.windows.iter().take(5) {
            let _ = writeln!(
                o,
                "  late #{} {} on CPU {} at {} s: {}",
                w.late_index,
                w.task,
                w.cpu,
                secs(w.start_ns),
                fmt_ns(w.latency_ns)
            );
            for p in &w.parts {
                let _ = writeln!(o, "    {:>12}  {}", fmt_ns(p.ns), p.cause.describe());
            }
        }
    }
    if !report.steal_ns.is_empty() {
        let s: Vec<String> = report
            .steal_ns
            .iter()
            .map(|(c, n)| format!("cpu{c} {}", fmt_ns(*n)))
            .collect();
        let _ = writeln!(
            o,
            "\nsteal time during the run (hypervisor): {}",
            s.join(", ")
        );
    }
    for n in &report.notes {
        let _ = writeln!(o, "\nnote: {n}");
    }
    o
}

// Where the binary finds them (`latlab_report::explain::...`).
pub use super::agreement::agreement_text;
pub use super::causes::{top_causes, CauseSummary};
