//! The terminal text of an explanation of late wake-ups (`latlab explain`,
//! `latlab run --explain`) and of a run's agreement with its trace.

use std::fmt::Write as _;

use latlab_explain::agreement::Agreement;
use latlab_explain::{Cause, CauseRow, Report};
use latlab_measure::units::format_ns as fmt_ns;

fn secs(ns: u64) -> String {
    let us = ns.saturating_add(500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
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

/// One cause as the short summaries list it (`latlab run --explain`,
/// `latlab scenario characterize`).
#[derive(Debug, Clone, Copy)]
pub struct CauseSummary<'a> {
    /// What happened.
    pub description: &'a str,
    /// Its share of all late-window latency (0-1).
    pub share: f64,
    /// Late windows it took part in.
    pub late_windows: u64,
    /// What to do about it: fixes separated by `; `.
    pub recommendation: &'a str,
    /// The command name of the task the cause names (`ld-io0` of
    /// `ld-io0:812`, `rustc` of `rustc (10 pids)`), which its fix names too:
    /// two causes differing only by it have the same fix.
    pub task: Option<&'a str>,
}

impl<'a> CauseSummary<'a> {
    /// The summary of a ranked cause of an explanation.
    pub fn of(row: &'a CauseRow) -> CauseSummary<'a> {
        CauseSummary {
            description: &row.description,
            share: row.share,
            late_windows: row.late_windows,
            recommendation: &row.recommendation,
            task: task_of(&row.cause),
        }
    }
}

/// `text` with each mention of the task `comm` (as a cause names it: `comm`,
/// `comm:PID` or `comm (N pids)`) replaced by one placeholder: the words of
/// a fix apart from the task it is about.
fn without_task(text: &str, comm: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(comm) {
        let after = &rest[at + comm.len()..];
        // Only the whole name: not `dd` in `add`.
        if word(rest[..at].chars().next_back()) || word(after.chars().next()) {
            out.push_str(&rest[..at + comm.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        out.push('\u{0}');
        rest = after;
        if let Some(tail) = rest.strip_prefix(':') {
            let n = digits(tail);
            if n > 0 {
                rest = &tail[n..];
            }
        } else if let Some(tail) = rest.strip_prefix(" (") {
            let n = digits(tail);
            if let Some(tail) = tail[n..].strip_prefix(" pids)").filter(|_| n > 0) {
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The task a cause names (its command name), if it names one.
fn task_of(cause: &Cause) -> Option<&str> {
    match cause {
        Cause::TimerIrqDelay { task }
        | Cause::SilentGap { task, .. }
        | Cause::SoftTimer { task, .. }
        | Cause::IrqThread { task, .. }
        | Cause::SoftirqThread { task, .. }
        | Cause::KernelThread { task, .. }
        | Cause::OtherTask { task, .. }
        | Cause::NonPreemptibleKernel { task } => Some(task),
        _ => None,
    }
}

/// The causes, ranked, with their fixes, each fix given once: a fix is the
/// recommendation's `; `-separated parts, and a part an earlier cause
/// already gave (the same words but for the task it names) is not
/// repeated: the cause says `as for #1` instead. Two lines per cause.
pub fn top_causes(causes: &[CauseSummary<'_>]) -> String {
    let mut o = String::new();
    // Each fix part given so far (the task replaced by a placeholder) and
    // the number of the cause that gave it.
    let mut given: Vec<(String, usize)> = Vec::new();
    for (i, cause) in causes.iter().enumerate() {
        let number = i + 1;
        let mut new_parts: Vec<&str> = Vec::new();
        let mut as_for: Vec<usize> = Vec::new();
        for part in cause
            .recommendation
            .split("; ")
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let key = match cause.task {
                Some(task) if !task.is_empty() => without_task(part, task),
                _ => part.to_string(),
            };
            match given.iter().find(|(k, _)| *k == key) {
                Some(&(_, earlier)) => {
                    if !as_for.contains(&earlier) {
                        as_for.push(earlier);
                    }
                }
                None => {
                    given.push((key, number));
                    new_parts.push(part);
                }
            }
        }
        as_for.sort_unstable();
        let earlier = as_for
            .iter()
            .map(|n| format!("#{n}"))
            .collect::<Vec<_>>()
            .join(" and ");
        let fix = match (new_parts.is_empty(), as_for.is_empty()) {
            (true, true) => "(no fix known)".to_string(),
            (true, false) => format!("as for {earlier}"),
            (false, true) => new_parts.join("; "),
            (false, false) => format!("{}; and as for {earlier}", new_parts.join("; ")),
        };
        let _ = writeln!(
            o,
            "  {number}. {} ({:.0} % of the late latency, {} late window{})\n     -> {fix}",
            cause.description,
            cause.share * 100.0,
            cause.late_windows,
            if cause.late_windows == 1 { "" } else { "s" }
        );
    }
    o
}

fn signed_us(ns: i64) -> String {
    format!("{:+.1}", ns as f64 / 1e3)
}

/// The terminal block of a run's agreement with its trace (`latlab run --explain`).
pub fn agreement_text(agreement: &Agreement) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "run vs trace, sample by sample: {} of {} samples matched to the trace's periods of \
         the same expiry",
        agreement.matched, agreement.samples
    );
    if let Some(d) = &agreement.difference {
        let _ = writeln!(
            o,
            "  latlab minus trace (us): min {}  p50 {}  p99 {}  max {}; {} sample(s) below \
             the trace{}",
            signed_us(d.min),
            signed_us(d.p50),
            signed_us(d.p99),
            signed_us(d.max),
            agreement.below_trace,
            if agreement.below_trace > 0 {
                ": the measurement is wrong somewhere"
            } else {
                ""
            }
        );
    }
    if agreement.unmatched > 0 {
        let _ = writeln!(
            o,
            "  {} sample(s) without a trace period (the timer fired while the thread was still \
             running, or events were lost), worst {}",
            agreement.unmatched,
            fmt_ns(agreement.unmatched_max_ns.unwrap_or(0))
        );
    }
    if agreement.uncertain > 0 {
        let _ = writeln!(
            o,
            "  {} uncertain sample(s) not compared",
            agreement.uncertain
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_explain::agreement::Difference;

    #[test]
    fn a_task_is_named_whole_with_its_pid_or_count() {
        assert_eq!(
            without_task("dd:812 ran; add dd (3 pids) and dd", "dd"),
            "\u{0} ran; add \u{0} and \u{0}"
        );
        assert_eq!(without_task("ld-io0:7 ran", "ld-io"), "ld-io0:7 ran");
    }

    #[test]
    fn top_causes_give_each_fix_once() {
        let cause = |description, recommendation, task| CauseSummary {
            description,
            share: 0.2,
            late_windows: 3,
            recommendation,
            task,
        };
        let causes = [
            cause(
                "a:1 held the CPU",
                "a:1 ran long: boot with preempt=full; it allocated pages: mlock",
                Some("a"),
            ),
            cause(
                "b (12 pids) held the CPU",
                "b (12 pids) ran long: boot with preempt=full; it allocated pages: mlock",
                Some("b"),
            ),
            cause(
                "softirq NET_RX",
                "threaded NAPI; it allocated pages: mlock",
                None,
            ),
            cause("hrtimer interrupt", "", None),
        ];
        let text = top_causes(&causes);
        assert_eq!(
            text,
            "  1. a:1 held the CPU (20 % of the late latency, 3 late windows)\n     \
             -> a:1 ran long: boot with preempt=full; it allocated pages: mlock\n  \
             2. b (12 pids) held the CPU (20 % of the late latency, 3 late windows)\n     \
             -> as for #1\n  \
             3. softirq NET_RX (20 % of the late latency, 3 late windows)\n     \
             -> threaded NAPI; and as for #1\n  \
             4. hrtimer interrupt (20 % of the late latency, 3 late windows)\n     \
             -> (no fix known)\n"
        );
    }

    #[test]
    fn the_agreement_names_matches_samples_below_the_trace_and_unmatched_ones() {
        let a = Agreement {
            samples: 6,
            matched: 4,
            below_trace: 1,
            difference: Some(Difference {
                min: -5_000,
                p50: 1_000,
                p99: 8_000,
                max: 8_000,
            }),
            unmatched: 1,
            unmatched_max_ns: Some(900_000),
            uncertain: 1,
        };
        let text = agreement_text(&a);
        assert!(text.contains("4 of 6 samples matched"), "{text}");
        assert!(
            text.contains("1 sample(s) below the trace: the measurement is wrong"),
            "{text}"
        );
        assert!(
            text.contains("1 sample(s) without a trace period"),
            "{text}"
        );
        assert!(text.contains("min -5.0"), "{text}");
    }
}
