//! The terminal table of `latlab lockbench` (real threads): one column per
//! lock variant, in the shape of the paper's Table 4, and the goal lines.

use latlab_lock::bench::{goal_checks, BenchConfig, GoalCheck, SiteChoice, VariantResult};

use crate::units::{us, us_f64};

/// Renders the results in the shape of the paper's Table 4: one column per variant.
pub fn table(cfg: &BenchConfig, results: &[VariantResult]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "latlab lockbench: RT task SCHED_FIFO {} every {} µs (holds {} µs), {} SCHED_OTHER background thread{}, {}, {:.1} s per variant in {} round{}",
        cfg.rt_priority,
        cfg.period_ns / 1_000,
        cfg.rt_hold_ns / 1_000,
        cfg.background_threads,
        if cfg.background_threads == 1 { "" } else { "s" },
        cfg.cpu.map_or("not pinned".to_string(), |c| format!("all on CPU {c}")),
        cfg.duration_ns as f64 / 1e9,
        cfg.rounds,
        if cfg.rounds == 1 { "" } else { "s" },
    );
    let sites: Vec<String> = cfg
        .sites
        .iter()
        .map(|s| {
            format!(
                "{} (mean {:.0} µs, max {} µs)",
                s.name,
                s.mean_ns() / 1e3,
                s.max_ns() / 1_000
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "background: {} µs of work outside the lock, then {}: {}{}",
        cfg.outside_work_ns / 1_000,
        match cfg.site_choice {
            SiteChoice::PerThread => "thread i's own site i",
            SiteChoice::Random => "a random one of",
        },
        sites.join(", "),
        if cfg.idle_spinner {
            "; a SCHED_IDLE spinner keeps the CPU from idling"
        } else {
            ""
        }
    );
    let width = results
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(8)
        .max(9)
        + 2;
    let row = |out: &mut String, name: &str, cells: Vec<String>| {
        let _ = write!(out, "{name:<28}");
        for cell in cells {
            let _ = write!(out, "{cell:>width$}");
        }
        out.push('\n');
    };
    row(
        &mut out,
        "",
        results.iter().map(|r| r.variant.clone()).collect(),
    );
    for (title, pick) in [
        ("RT lock latency (µs)", 0),
        ("RT wake-up latency (µs)", 1),
        ("RT lock wait after wake-up (µs)", 2),
    ] {
        let _ = writeln!(out, "{title}");
        let summary = |r: &VariantResult| match pick {
            0 => r.lock,
            1 => r.wake,
            _ => r.lock_wait,
        };
        row(
            &mut out,
            "  min",
            results.iter().map(|r| us(summary(r).min)).collect(),
        );
        row(
            &mut out,
            "  mean",
            results.iter().map(|r| us_f64(summary(r).mean)).collect(),
        );
        row(
            &mut out,
            "  p99",
            results.iter().map(|r| us(summary(r).p99)).collect(),
        );
        row(
            &mut out,
            "  p99.9",
            results.iter().map(|r| us(summary(r).p99_9)).collect(),
        );
        row(
            &mut out,
            "  max",
            results.iter().map(|r| us(summary(r).max)).collect(),
        );
    }
    row(
        &mut out,
        "RT periods",
        results.iter().map(|r| r.periods.to_string()).collect(),
    );
    row(
        &mut out,
        "RT overruns",
        results.iter().map(|r| r.overruns.to_string()).collect(),
    );
    row(
        &mut out,
        "background sections/s",
        results
            .iter()
            .map(|r| format!("{:.0}", r.bg_sections_per_s))
            .collect(),
    );
    for (index, site) in cfg.sites.iter().enumerate() {
        row(
            &mut out,
            &format!("  {}/s", site.name),
            results
                .iter()
                .map(|r| {
                    r.bg_sections_per_s_by_site
                        .get(index)
                        .map_or("-".into(), |x| format!("{x:.0}"))
                })
                .collect(),
        );
    }
    row(
        &mut out,
        "background work (ms/s)",
        results
            .iter()
            .map(|r| format!("{:.0}", r.bg_work_ms_per_s))
            .collect(),
    );
    if let Some(plain) = results.iter().find(|r| r.variant == "plain") {
        row(
            &mut out,
            "  vs plain",
            results
                .iter()
                .map(|r| {
                    format!(
                        "{:+.1} %",
                        100.0 * (r.bg_work_ms_per_s / plain.bg_work_ms_per_s.max(1e-9) - 1.0)
                    )
                })
                .collect(),
        );
        row(
            &mut out,
            "worst lock latency vs plain",
            results
                .iter()
                .map(|r| {
                    format!(
                        "{:.0} %",
                        100.0 * r.lock.max as f64 / plain.lock.max.max(1) as f64
                    )
                })
                .collect(),
        );
    }
    row(
        &mut out,
        "refusals",
        results
            .iter()
            .map(|r| r.counters.refusals.to_string())
            .collect(),
    );
    row(
        &mut out,
        "forced entries",
        results
            .iter()
            .map(|r| r.counters.forced_entries.to_string())
            .collect(),
    );
    row(
        &mut out,
        "mispredictions",
        results
            .iter()
            .map(|r| r.counters.mispredictions.to_string())
            .collect(),
    );
    if results
        .iter()
        .any(|r| r.counters.ceiling_boost_failures > 0)
    {
        row(
            &mut out,
            "ceiling boost failures",
            results
                .iter()
                .map(|r| r.counters.ceiling_boost_failures.to_string())
                .collect(),
        );
    }
    if results.iter().any(|r| r.interrupted) {
        let measured: Vec<String> = results
            .iter()
            .map(|r| format!("{} {:.1} s", r.variant, r.measured_s))
            .collect();
        let _ = writeln!(out, "(interrupted; measured: {})", measured.join(", "));
    }
    for check in goal_checks(results) {
        let _ = writeln!(
            out,
            "goal {}: worst lock latency {:.0} % of plain (<= 25 %), {} PI's, background work {:+.1} % vs plain (loss <= 20 %): {}",
            check.variant,
            100.0 * check.worst_vs_plain,
            match check.worst_vs_pi {
                Some(x) if x < 1.0 => format!("below ({:.0} % of)", 100.0 * x),
                Some(x) => format!("NOT below ({:.0} % of)", 100.0 * x),
                None => "no run to compare with".to_string(),
            },
            -100.0 * check.throughput_loss,
            if check.met { "met" } else { "NOT met" }
        );
    }
    let plain = results.iter().find(|r| r.variant == "plain");
    let dominated: Vec<GoalCheck> = goal_checks(results)
        .into_iter()
        .filter(|c| c.wakeup_dominated && !c.met)
        .collect();
    if let (Some(plain), false) = (plain, dominated.is_empty()) {
        let waits: Vec<String> = dominated
            .iter()
            .map(|c| format!("{} {:.0} %", c.variant, 100.0 * c.wait_vs_plain))
            .collect();
        let worst_wake = results.iter().map(|r| r.wake.max).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "note: wake-ups alone took up to {:.1} ms, longer than plain's worst lock wait ({:.1} ms): \
             the worst lock latencies above are set by the machine, not the lock. Worst lock wait \
             after the wake-up vs plain: {}. Run on a quieter machine (a VM's host stops vCPUs), \
             or longer with more --rounds.",
            worst_wake as f64 / 1e6,
            plain.lock_wait.max as f64 / 1e6,
            waits.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_lock::fixtures::{five_variants, quick_wake_ups, slow_wake_ups};

    #[test]
    fn a_goal_missed_because_of_slow_wake_ups_says_so() {
        let results = slow_wake_ups();
        let table = table(&BenchConfig::default(), &results);
        assert!(
            table.contains("wake-ups alone took up to 8.0 ms")
                && table.contains("delayed-quantile 5 %"),
            "{table}"
        );
        // Quick wake-ups: the lock decided the worst case, no note.
        let quiet = quick_wake_ups();
        assert!(!super::table(&BenchConfig::default(), &quiet).contains("note:"));
    }

    #[test]
    fn goal_needs_a_quarter_of_plain_below_pi_and_at_most_a_fifth_less_work() {
        let results = five_variants();
        let table = table(&BenchConfig::default(), &results);
        insta::assert_snapshot!(table);
        for name in [
            "plain",
            "pi",
            "delayed-max",
            "delayed-ewma",
            "delayed-quantile",
        ] {
            assert!(table.contains(name), "{table}");
        }
        assert!(
            table.contains("goal delayed-max") && table.contains(": met"),
            "{table}"
        );
    }
}
