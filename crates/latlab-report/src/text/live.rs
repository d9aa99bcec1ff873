//! The live status lines of the measuring commands (`run`, `respond`,
//! `load`), as text: a progress bar, the time elapsed and left, the maxima
//! so far. The binary redraws them on stderr.

use latlab_measure::units::format_ns;

/// A 20-character progress bar for `fraction` (clamped to 0..=1): `[#####...............]`.
pub fn bar(fraction: f64) -> String {
    const WIDTH: usize = 20;
    let filled = ((fraction.clamp(0.0, 1.0)) * WIDTH as f64) as usize;
    format!("[{}{}]", "#".repeat(filled), ".".repeat(WIDTH - filled))
}

/// `done/total UNIT, N s left` for a count-based run, the time left
/// extrapolated from the rate so far (`elapsed_s` for `done`).
pub fn count_and_eta(done: u64, total: u64, unit: &str, elapsed_s: f64) -> String {
    if done == 0 || elapsed_s <= 0.0 {
        return format!("{done}/{total} {unit}");
    }
    let left_s = (total.saturating_sub(done)) as f64 * elapsed_s / done as f64;
    format!("{done}/{total} {unit}, {left_s:.0} s left")
}

/// `latlab run`'s line: bar, elapsed/remaining (of `total_s` seconds or
/// `loops` loops), the maximum so far per CPU (the first 8).
pub fn run_progress(
    progress: &latlab_measure::engine::Progress,
    total_s: Option<f64>,
    loops: Option<u64>,
) -> String {
    let done = progress.threads.iter().map(|t| t.1).min().unwrap_or(0);
    let (fraction, time) = match (total_s, loops) {
        (Some(total), _) => (
            progress.elapsed_s / total,
            format!(
                "{:.0}/{:.0} s, {:.0} s left",
                progress.elapsed_s,
                total,
                (total - progress.elapsed_s).max(0.0)
            ),
        ),
        (None, Some(loops)) => (
            done as f64 / loops as f64,
            count_and_eta(done, loops, "loops", progress.elapsed_s),
        ),
        _ => (0.0, format!("{:.0} s", progress.elapsed_s)),
    };
    let maxima: Vec<String> = progress
        .threads
        .iter()
        .take(8)
        .map(|&(cpu, _, max)| format!("CPU{cpu} max {}", format_ns(max)))
        .collect();
    let more = if progress.threads.len() > 8 {
        " ..."
    } else {
        ""
    };
    format!("{} {time}  {}{more}", bar(fraction), maxima.join("  "))
}

/// `latlab respond`'s line: events done (with a bar and the time left when
/// the `count` is known), maxima so far and losses.
pub fn respond_progress(p: &latlab_respond::measure::Progress, count: Option<u64>) -> String {
    let done = p.answered + p.lost;
    let progress = match count {
        Some(count) => format!(
            "{} {}",
            bar(done as f64 / count.max(1) as f64),
            count_and_eta(done, count, "events", p.elapsed_s)
        ),
        None => format!("{done} events, {:.0} s", p.elapsed_s),
    };
    format!(
        "{progress}  one-way max {}  round-trip max {}  lost {}",
        format_ns(p.max_one_way_ns),
        format_ns(p.max_round_trip_ns),
        p.lost
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_with_the_fraction_and_clamps() {
        assert_eq!(bar(0.0), format!("[{}]", ".".repeat(20)));
        assert_eq!(bar(0.5), format!("[{}{}]", "#".repeat(10), ".".repeat(10)));
        assert_eq!(bar(2.0), format!("[{}]", "#".repeat(20)));
        assert_eq!(bar(-1.0), bar(0.0));
    }

    #[test]
    fn eta_extrapolates_the_rate_so_far() {
        assert_eq!(count_and_eta(0, 1_000, "loops", 0.0), "0/1000 loops");
        assert_eq!(
            count_and_eta(250, 1_000, "events", 10.0),
            "250/1000 events, 30 s left"
        );
        assert_eq!(
            count_and_eta(1_000, 1_000, "loops", 40.0),
            "1000/1000 loops, 0 s left"
        );
    }
}
