//! The terminal text of a `latlab watch` result.

use std::fmt::Write as _;

use latlab_document::WatchDocument;
use latlab_measure::units::format_ns;

use crate::units::hms;

/// The text `latlab watch` prints at the end and `latlab report` shows.
pub fn text(d: &WatchDocument) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "latlab watch: {} for {} ({}), threshold {}, stopped by {}",
        d.settings.selection,
        hms(d.duration_ns),
        d.settings.backend,
        format_ns(d.settings.threshold_ns),
        d.stopped_by
    );
    let _ = writeln!(
        s,
        "\n{:<16} {:>8} {:<9} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "task", "tid", "policy", "kind", "wake-ups", "p50", "p99", "p99.9", "max", "late"
    );
    for t in &d.tasks {
        for (kind, k) in [
            ("thread", &t.thread),
            ("irq", &t.irq),
            ("wakeup", &t.wakeup),
        ] {
            let Some(k) = k else { continue };
            let m = &k.summary;
            let flag = |p: f64, v: u64| {
                let needed = (10.0 / (1.0 - p / 100.0)).ceil() as u64;
                if m.count < needed {
                    format!("{}?", format_ns(v))
                } else {
                    format_ns(v)
                }
            };
            let policy = t
                .policy
                .map_or_else(|| "-".to_string(), |p| p.label(t.rt_priority.unwrap_or(0)));
            let _ = writeln!(
                s,
                "{:<16} {:>8} {:<9} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6}",
                t.comm.chars().take(16).collect::<String>(),
                t.tid,
                policy,
                kind,
                m.count,
                format_ns(m.p50),
                flag(99.0, m.p99),
                flag(99.9, m.p99_9),
                format_ns(m.max),
                if kind == "irq" {
                    String::new()
                } else {
                    t.late_windows.to_string()
                }
            );
        }
    }
    let sp = &d.spikes;
    let _ = writeln!(
        s,
        "\nspikes over {}: {} ({:.1}/h, 95 % CI {:.1}-{:.1}/h); worst {} at {}",
        format_ns(sp.threshold_ns),
        sp.count,
        sp.per_hour,
        sp.per_hour_low,
        sp.per_hour_high,
        format_ns(sp.worst_ns),
        hms(sp.worst_at_ns)
    );
    let w = &d.windows_seen;
    let _ = writeln!(
        s,
        "late windows explained: {} (+{} baseline), {} throttled, {} lost, {} cut short",
        w.late, w.baseline, w.throttled, w.lost, w.truncated
    );
    if !d.causes.is_empty() {
        let _ = writeln!(
            s,
            "\ncauses, ranked (explain's analysis of {} windows):",
            w.analysed
        );
        for (i, c) in d.causes.iter().take(8).enumerate() {
            let _ = writeln!(
                s,
                "{:>2}. {:>5.1} %  {} (in {} late windows)\n           {}",
                i + 1,
                c.share * 100.0,
                c.description,
                c.late_windows,
                c.recommendation
            );
        }
    }
    if !d.cause_totals.is_empty() {
        let _ = writeln!(s, "\nover the whole watch (every late window):");
        for c in d.cause_totals.iter().take(6) {
            let _ = writeln!(
                s,
                "  {:>10}  {:>5} windows  {}",
                format_ns(c.late_ns),
                c.late_windows,
                c.description
            );
        }
    }
    let o = &d.overhead;
    let _ = writeln!(
        s,
        "\nwatch's own cost: process {} CPU, BPF programs {} ({} runs), {} CPU per hour; peak memory {} KiB",
        format_ns(o.process_cpu_ns),
        format_ns(o.bpf_ns),
        o.bpf_runs,
        format_ns(o.cpu_ns_per_hour),
        o.max_rss_kib
    );
    for n in &d.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}
