//! What `latlab run` prints at its end, at each verbosity: the verdict
//! alone ([`verdict_text`], `--quiet`), a short summary ([`short_text`],
//! the default: the verdict first, what makes the result questionable, the
//! latency per CPU, one line each for the worst samples, the split, the
//! periods and the load, and the top causes of the late wake-ups with each
//! fix once), or every table (`--verbose`:
//! [`crate::formats::TerminalText`]). The result file holds everything
//! whatever was printed.

use std::fmt::Write as _;

use latlab_document::run::FlightRecorderStop;
use latlab_document::RunDocument;
use latlab_measure::result::{RunResult, Verdict};
use latlab_measure::units::format_ns;
use latlab_tracefs::CaptureReport;

use crate::units::us;

use super::blocks::{system_line, verdict_block};
use super::explain::{top_causes, CauseSummary};
use super::run::{early_block, header_line, thread_latency_table};

/// Threads listed one per row in the short summary; with more, the
/// summary shows all of them together and the worst few.
const THREADS_LISTED: usize = 8;
/// Causes of late wake-ups the short summary lists.
const CAUSES_LISTED: usize = 3;
/// Worst samples the short summary names.
const WORST_LISTED: usize = 3;

/// The verdict alone (`latlab run --quiet`): the first line of the summary,
/// the verdict with each requirement's outcome, what makes the result
/// questionable, and with `--explain` how the samples agree with the trace.
pub fn verdict_text(doc: &RunDocument) -> String {
    let mut out = String::new();
    header_line(&mut out, doc, load_label(doc).as_deref());
    verdict(&mut out, doc);
    for line in attention(doc) {
        let _ = writeln!(out, "warning: {line}");
    }
    if let Some(agreement) = &doc.trace_agreement {
        let mut line = format!(
            "run vs trace, sample by sample: {} of {} samples matched",
            agreement.matched, agreement.samples
        );
        if let Some(d) = &agreement.difference {
            let _ = write!(
                line,
                ", latlab minus trace p50 {:+.1} us, p99 {:+.1} us",
                d.p50 as f64 / 1e3,
                d.p99 as f64 / 1e3
            );
        }
        if agreement.below_trace == 0 {
            line.push_str(", none below the trace");
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The short summary `latlab run` prints by default.
pub fn short_text(doc: &RunDocument) -> String {
    let mut out = verdict_text(doc);
    system_line(&mut out, &doc.system);
    out.push_str("\nWake-up latency (us)\n");
    latency_rows(&mut out, doc);
    worst_line(&mut out, doc);
    split_line(&mut out, doc);
    period_line(&mut out, doc);
    if let Some(load) = &doc.load {
        let _ = writeln!(out, "{}", super::load::summary_line(load));
    }
    if let Some(explain) = &doc.explain {
        out.push('\n');
        let _ = writeln!(
            out,
            "Late wake-ups: {} of {} periods at or over {} in the kernel trace{}",
            explain.late,
            explain.periods,
            format_ns(explain.threshold_ns),
            if explain.causes.is_empty() {
                "."
            } else {
                "; the top causes:"
            }
        );
        let causes: Vec<CauseSummary<'_>> = explain
            .causes
            .iter()
            .take(CAUSES_LISTED)
            .map(CauseSummary::of)
            .collect();
        out.push_str(&top_causes(&causes));
        if explain.causes.len() > CAUSES_LISTED {
            let _ = writeln!(
                out,
                "  ({} more causes: --verbose, or \"explain\" in the result)",
                explain.causes.len() - CAUSES_LISTED
            );
        }
        if !explain.causes.is_empty() {
            let load = doc.load.as_ref().map_or("none", |l| l.spec.as_str());
            out.push_str(&super::causes::tune_hint(&doc.settings.cpus, load));
        }
    }
    let _ = writeln!(
        out,
        "(--verbose prints every table: per CPU, the split, the periods, the load, the trace's \
         analysis)"
    );
    out
}

/// What makes this result questionable, one sentence each: an unprivileged
/// run, wake-ups before their time, expiries the kernel did not tell, a
/// trace that lost events, samples below the trace, the load's and the
/// explanation's warnings. The short summary and `--quiet` show them right
/// under the verdict.
pub fn attention(doc: &RunDocument) -> Vec<String> {
    let mut lines = Vec::new();
    let s = &doc.settings;
    if s.unprivileged {
        lines.push(format!(
            "unprivileged run: the threads ran {}{}; not representative of a real-time task \
             (the result's warnings say what was refused and the fix)",
            super::run::scheduling(s)
                .split(" (")
                .next()
                .unwrap_or_default(),
            if s.mlocked { "" } else { ", memory not locked" }
        ));
    }
    let mut early = String::new();
    early_block(&mut early, doc);
    lines.extend(early.lines().map(str::to_string));
    if let Some(advice) = doc
        .trace
        .as_ref()
        .and_then(|t| t.loss_advice("--trace-buffer-kb", "--trace-events"))
    {
        lines.push(format!("trace: {advice}"));
    }
    if let Some(agreement) = doc.trace_agreement.as_ref().filter(|a| a.below_trace > 0) {
        lines.push(format!(
            "{} sample(s) below the trace: the measurement is wrong somewhere",
            agreement.below_trace
        ));
    }
    if let Some(load) = &doc.load {
        lines.extend(load.warnings.iter().map(|w| format!("load: {w}")));
    }
    if let Some(explain) = &doc.explain {
        lines.extend(explain.notes.iter().map(|n| format!("trace analysis: {n}")));
    }
    lines
}

/// The line naming a recorded trace (`--trace FILE`), and in flight-recorder
/// mode the sample that stopped it, or that none did.
pub fn trace_line(trace: &CaptureReport, stop: Option<&FlightRecorderStop>) -> String {
    let mode = match (trace.flight_recorder, stop) {
        (false, _) => String::new(),
        (true, Some(stop)) => format!(" (flight recorder, stopped by {})", stop_text(stop)),
        (true, None) => " (flight recorder, never stopped: no sample reached the threshold; \
                          the file holds the ring buffer's last events)"
            .to_string(),
    };
    format!(
        "Trace: {} events ({} {}) written to {}{mode}; ring buffer: {}\n",
        trace.total_events,
        trace.lost_events,
        if trace.flight_recorder {
            "overwritten"
        } else {
            "lost"
        },
        trace.path.display(),
        trace.ring_buffer.summary
    )
}

/// `CPU1 cycle 1431: 2.25 ms at 1.432 s, at or over 100 us`: the sample that
/// stopped a flight recorder.
pub fn stop_text(stop: &FlightRecorderStop) -> String {
    format!(
        "CPU{} cycle {}: {} at {:.3} s, at or over {}",
        stop.cpu,
        stop.cycle,
        format_ns(stop.latency_ns),
        stop.at_s,
        format_ns(stop.threshold_ns)
    )
}

/// A load as the header names it: `load full`, ``load `stress-ng` ``.
fn load_label(doc: &RunDocument) -> Option<String> {
    doc.load.as_ref().map(|_| doc.load_name())
}

/// The verdict block, with the worst case when no requirement was given.
fn verdict(out: &mut String, result: &RunResult) {
    let hint = match result.verdict {
        Verdict::None => format!(
            "max {}, p99.9 {} over {} samples; try --max-latency 1ms or --profile \
             emblix-class2",
            format_ns(result.overall.latency.max),
            format_ns(result.overall.latency.p99_9),
            result.overall.latency.count
        ),
        _ => String::new(),
    };
    verdict_block(out, result.verdict, &result.requirements, &hint);
}

/// The latency table: a row per thread, or with many threads the worst few
/// and all of them together.
fn latency_rows(out: &mut String, result: &RunResult) {
    let mut threads: Vec<_> = result.threads.iter().collect();
    let many = threads.len() > THREADS_LISTED;
    if many {
        threads.sort_by_key(|t| std::cmp::Reverse(t.latency.max));
        threads.truncate(WORST_LISTED);
        threads.sort_by_key(|t| t.cpu);
    }
    thread_latency_table(out, result, &threads);
    if many {
        let _ = writeln!(
            out,
            "(the {WORST_LISTED} CPUs with the worst maximum of {}; --verbose lists each)",
            result.threads.len()
        );
    }
}

fn worst_line(out: &mut String, result: &RunResult) {
    if result.overall.worst.is_empty() {
        return;
    }
    let worst: Vec<String> = result
        .overall
        .worst
        .iter()
        .take(WORST_LISTED)
        .map(|w| {
            format!(
                "CPU{} {} (cycle {}, {:.3} s)",
                w.cpu,
                format_ns(w.latency_ns),
                w.cycle,
                w.offset_s
            )
        })
        .collect();
    let _ = writeln!(out, "Worst: {}", worst.join(", "));
}

fn split_line(out: &mut String, result: &RunResult) {
    let Some(split) = &result.overall.split else {
        return;
    };
    let part = |p: &latlab_measure::result::LatencyPart| {
        format!("{}/{}", us(p.summary.p99), us(p.summary.max))
    };
    let _ = writeln!(
        out,
        "Split at the timer interrupt (BPF), p99/max us: interrupt {}, preemption {}, thread {}",
        part(&split.interrupt_latency),
        part(&split.preemption_latency),
        part(&split.thread_latency)
    );
}

fn period_line(out: &mut String, result: &RunResult) {
    let p = &result.overall.period;
    if p.count == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "Periods within +-{}% of {}: {:.3} % ({} of {}), deviation {:+.1}..{:+.1} us",
        result.settings.period_tolerance * 100.0,
        format_ns(result.settings.interval_ns),
        p.share_within * 100.0,
        p.within_tolerance,
        p.count,
        p.min_deviation_ns as f64 / 1e3,
        p.max_deviation_ns as f64 / 1e3
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sample_result;

    #[test]
    fn the_verdict_comes_first_and_the_tables_stay_out() {
        let doc = RunDocument::new(sample_result());
        let text = short_text(&doc);
        let verdict = text.find("Verdict: FAIL").expect("verdict");
        let table = text.find("Wake-up latency").expect("table");
        assert!(verdict < table, "{text}");
        assert!(!text.contains("Period accuracy"), "{text}");
        assert!(text.contains("Periods within +-5% of 1.00 ms"), "{text}");
        assert!(text.contains("Worst: CPU1 3.42 ms (cycle 8123"), "{text}");
        let quiet = verdict_text(&doc);
        assert_eq!(quiet.lines().count(), 3, "{quiet}");
        assert!(
            quiet.contains("FAIL: CPU1 max 3.42 ms > 1.00 ms (cycle 8123)"),
            "{quiet}"
        );
    }

    #[test]
    fn an_unprivileged_run_says_so_under_the_verdict() {
        let mut result = sample_result();
        result.settings.unprivileged = true;
        result.settings.mlocked = false;
        result.settings.policy = latlab_rt::sched::Policy::Other;
        result.settings.priority = 0;
        let text = verdict_text(&RunDocument::new(result));
        assert!(
            text.starts_with(
                "latlab run: clock-nanosleep timer, 1.00 ms interval, SCHED_OTHER \
                 (unprivileged, memory not locked), 2 CPUs"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "warning: unprivileged run: the threads ran SCHED_OTHER, memory not locked"
            ),
            "{text}"
        );
    }
}
