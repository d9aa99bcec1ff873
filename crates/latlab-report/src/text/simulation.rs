//! The terminal table of `latlab lockbench --simulate`: the paper's Table 4
//! with the simulated figures next to the paper's.

use latlab_lock::sim::{paper, SimComparison};

use crate::units::whole_us;

const US: u64 = 1_000;

/// Renders the comparison as the paper's Table 4, the simulated figures next to the
/// paper's, followed by the sender's cost and the admission counters.
pub fn table(c: &SimComparison) -> String {
    use std::fmt::Write as _;
    let us = |ns: u64| whole_us(ns as f64);
    let paper_us = |v: f64| format!("{v} µs");
    let mut out = String::new();
    let cfg = &c.config;
    let prediction = match cfg.t_lock_ns {
        Some(t) => format!("fixed t_lock {}/{}/{} µs", t[0] / US, t[1] / US, t[2] / US),
        None => format!("predictor {} (online)", cfg.predictor.name()),
    };
    let _ = writeln!(
        out,
        "Simulated uniprocessor kernel: seed {}, {} periods of {} µs, {prediction}, margin {} µs, N = {}",
        cfg.seed,
        cfg.periods,
        cfg.rt_period_ns / US,
        cfg.margin_ns / US,
        cfg.max_refusals
    );
    let _ = writeln!(
        out,
        "{:<22}{:>14}{:>12}{:>16}{:>12}",
        "OS latency", "w/o delayed", "paper", "w/ delayed", "paper"
    );
    let (w, d) = (&c.without.latency, &c.with.latency);
    let rows = [
        (
            "Minimum",
            us(w.min),
            paper_us(paper::MIN_US.0),
            us(d.min),
            paper_us(paper::MIN_US.1),
        ),
        (
            "Maximum",
            us(w.max),
            paper_us(paper::MAX_US.0),
            us(d.max),
            paper_us(paper::MAX_US.1),
        ),
        (
            "Average",
            format!("{:.1} µs", w.mean / 1e3),
            paper_us(paper::AVG_US.0),
            format!("{:.1} µs", d.mean / 1e3),
            paper_us(paper::AVG_US.1),
        ),
        ("p99", us(w.p99), "-".into(), us(d.p99), "-".into()),
        ("p99.9", us(w.p99_9), "-".into(), us(d.p99_9), "-".into()),
    ];
    for (name, a, pa, b, pb) in rows {
        let _ = writeln!(out, "{name:<22}{a:>14}{pa:>12}{b:>16}{pb:>12}");
    }
    let pct = |x: f64| format!("{:.0} %", 100.0 * x);
    let _ = writeln!(
        out,
        "{:<22}{:>14}{:>12}",
        "Worst w/ / w/o",
        pct(c.worst_ratio()),
        pct(paper::MAX_US.1 / paper::MAX_US.0)
    );
    let _ = writeln!(
        out,
        "{:<22}{:>14}{:>12}",
        "Average w/ / w/o",
        pct(c.mean_ratio()),
        pct(paper::AVG_US.1 / paper::AVG_US.0)
    );
    let _ = writeln!(
        out,
        "{:<22}{:>14}{:>12}   ({:.0} -> {:.0} KB/s, {:.0} -> {:.0} µs per KB)",
        "Sender slowdown",
        pct(c.sender_cost()),
        pct(paper::SENDER_COST),
        c.without.kb_per_s,
        c.with.kb_per_s,
        c.without.us_per_kb,
        c.with.us_per_kb
    );
    let _ = writeln!(
        out,
        "Delayed locking: {} admissions, {} refusals, {} forced entries, {} mispredictions",
        c.with.admissions, c.with.refusals, c.with.forced_entries, c.with.mispredictions
    );
    let _ = writeln!(
        out,
        "{:<22}{:>18}{:>16}   (w/o delayed locking, interrupts included)",
        "Hold time avg / max", "simulated", "paper"
    );
    for (i, hold) in c.without.holds.iter().enumerate() {
        let sim = format!("{:.0} / {:.0} µs", hold.mean / 1e3, hold.max as f64 / 1e3);
        let paper = format!("{} / {} µs", paper::HOLD_AVG_US[i], paper::HOLD_MAX_US[i]);
        let _ = writeln!(
            out,
            "{:<22}{:>18}{:>16}",
            format!("  {}", cfg.locks[i].name),
            sim,
            paper
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_lock::fixtures::short_sim;
    use latlab_lock::sim::{compare, SimConfig};
    use latlab_lock::PredictorKind;

    #[test]
    fn table_snapshot() {
        // The rendered table of a short seeded run: any change to the model, the
        // generator or the layout shows up here.
        let c = compare(&short_sim(1)).unwrap();
        insta::assert_snapshot!(table(&c));
    }

    #[test]
    fn a_learned_predictor_is_named() {
        let learned = compare(&SimConfig {
            t_lock_ns: None,
            predictor: PredictorKind::Max,
            ..short_sim(2)
        })
        .unwrap();
        let table = table(&learned);
        assert!(table.contains("predictor max (online)"), "{table}");
    }
}
