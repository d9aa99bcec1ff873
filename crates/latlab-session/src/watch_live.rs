//! `latlab watch`'s live views, as text: the top-like screen on a terminal,
//! and one progress line otherwise (the binary prints them).

use std::time::Duration;

use latlab_measure::units::format_ns;
use latlab_watch::session::Live;

/// `hh:mm:ss`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The top-like view.
pub fn screen(live: &Live, selection: &str, threshold: u64, cpu_share: f64, side: &str) -> String {
    let mut s = format!(
        "latlab watch ({side}): {selection}, {} watched, threshold {} (Ctrl-C stops and writes the result)\n\n",
        clock(live.elapsed),
        format_ns(threshold)
    );
    s.push_str(&format!(
        "{:<16} {:>8} {:<9} {:>10} {:>10} {:>11} {:>10} {:>10} {:>6}\n",
        "TASK", "TID", "POLICY", "WAKE-UPS", "NOW", "P99", "WORST", "IRQ WORST", "LATE"
    ));
    for t in live.tasks.iter().take(20) {
        // p99 needs 1000 samples (10 above it); mark a guess with '?'.
        let p99 = if t.samples >= latlab_watch::stats::samples_needed(99.0) {
            format_ns(t.p99_ns)
        } else {
            format!("{}?", format_ns(t.p99_ns))
        };
        s.push_str(&format!(
            "{:<16} {:>8} {:<9} {:>10} {:>10} {:>11} {:>10} {:>10} {:>6}\n",
            t.comm.chars().take(16).collect::<String>(),
            t.tid,
            t.policy,
            t.samples,
            format_ns(t.current_ns),
            p99,
            format_ns(t.worst_ns),
            t.irq_worst_ns.map(format_ns).unwrap_or_else(|| "-".into()),
            t.late
        ));
    }
    if live.tasks.len() > 20 {
        s.push_str(&format!("... and {} more\n", live.tasks.len() - 20));
    }
    if live.tasks.is_empty() {
        s.push_str("(no wake-up of a watched task yet)\n");
    }
    let sp = &live.spikes;
    s.push_str(&format!(
        "\nspikes over {}: {} ({:.1}/h, 95% CI {:.1}-{:.1}/h)",
        format_ns(threshold),
        sp.count,
        sp.per_hour,
        sp.per_hour_low,
        sp.per_hour_high
    ));
    if let Some(ago) = live.since_worst {
        s.push_str(&format!(
            "; worst {} {} ago",
            format_ns(sp.worst_ns),
            clock(ago)
        ));
    }
    s.push('\n');
    if live.top_causes.is_empty() {
        s.push_str("causes: no late window yet\n");
    } else {
        s.push_str("top causes of late wake-ups:\n");
        for (d, n, share) in &live.top_causes {
            s.push_str(&format!("  {:>5.1}%  {d} ({n} windows)\n", share * 100.0));
        }
    }
    let c = &live.counters;
    s.push_str(&format!(
        "kernel: {} late, {} windows throttled, {} lost",
        c.late, c.throttled, c.lost
    ));
    if side == "tracefs" {
        s.push_str(&format!(", {} trace events lost", c.events_lost));
    }
    s.push_str(&format!("; watch's CPU: {:.3}%\n", cpu_share * 100.0));
    s
}

/// The progress line printed every few seconds when stderr is not a
/// terminal: tasks, wake-ups, the worst, late ones and the top cause.
pub fn progress_line(live: &Live) -> String {
    let worst = live.tasks.iter().map(|t| t.worst_ns).max().unwrap_or(0);
    let samples: u64 = live.tasks.iter().map(|t| t.samples).sum();
    let top = live
        .top_causes
        .first()
        .map(|(d, _, s)| format!("; top cause {d} ({:.0}%)", s * 100.0))
        .unwrap_or_default();
    let lost = if live.counters.events_lost > 0 {
        format!("; {} trace events lost", live.counters.events_lost)
    } else {
        String::new()
    };
    format!(
        "[{}] {} task(s), {samples} wake-ups, worst {}, {} late ({:.1}/h){top}{lost}",
        clock(live.elapsed),
        live.tasks.len(),
        format_ns(worst),
        live.spikes.count,
        live.spikes.per_hour
    )
}
