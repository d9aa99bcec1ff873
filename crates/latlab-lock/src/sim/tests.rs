//! Tests of the simulation: determinism, the paper's figures, the model's parts.

use super::config::US;
use super::*;
use crate::fixtures::short_sim;
use crate::predict::PredictorKind;
use crate::shape::HoldShape;
use crate::LockError;

#[test]
fn same_seed_gives_the_same_output() {
    let a = compare(&short_sim(7)).unwrap();
    let b = compare(&short_sim(7)).unwrap();
    assert_eq!(a, b);
    let c = compare(&short_sim(8)).unwrap();
    assert_ne!(a.without.latency, c.without.latency, "the seed must matter");
}

#[test]
fn the_papers_setup_cuts_the_worst_case_to_about_a_quarter_at_a_fifth_of_the_sender() {
    // The paper: worst case 847 -> 192 µs (23 %), average 197 -> 63 µs (32 %),
    // sender 20 % slower.
    for seed in [1, 2] {
        let c = compare(&short_sim(seed)).unwrap();
        let table = format!("{c:#?}");
        assert!(
            (0.15..=0.32).contains(&c.worst_ratio()),
            "seed {seed}: worst ratio {}\n{table}",
            c.worst_ratio()
        );
        assert!(
            (0.2..=0.45).contains(&c.mean_ratio()),
            "seed {seed}\n{table}"
        );
        let cost = c.sender_cost();
        assert!(
            (0.12..=0.28).contains(&cost),
            "seed {seed}: cost {cost}\n{table}"
        );
        // Absolute figures within a third of Table 4.
        let near = |sim_ns: f64, paper_us: f64| (sim_ns / 1e3 / paper_us - 1.0).abs() < 0.34;
        assert!(
            near(c.without.latency.max as f64, paper::MAX_US.0),
            "{table}"
        );
        assert!(near(c.with.latency.max as f64, paper::MAX_US.1), "{table}");
        assert!(near(c.without.latency.mean, paper::AVG_US.0), "{table}");
        assert!(near(c.with.latency.mean, paper::AVG_US.1), "{table}");
        assert_eq!(c.without.refusals, 0);
        assert!(c.with.refusals > 0);
        assert_eq!(
            c.with.forced_entries, 0,
            "period 4000 µs > 2192 µs: no starvation"
        );
    }
}

#[test]
fn measured_holds_match_table_3_except_the_long_send_paths() {
    let c = compare(&short_sim(1)).unwrap();
    let table = format!("{c:#?}");
    for (i, hold) in c.without.holds.iter().enumerate() {
        let avg_us = hold.mean / 1e3;
        assert!(
            (avg_us / paper::HOLD_AVG_US[i] - 1.0).abs() < 0.05,
            "lock {i}: {avg_us} µs\n{table}"
        );
        assert!(hold.count > 1_000, "lock {i}: {hold:?}");
    }
    let max_us = |i: usize| c.without.holds[i].max as f64 / 1e3;
    assert!((780.0..=880.0).contains(&max_us(0)), "{table}");
    assert!(max_us(1) < 900.0, "no 1300/1900 µs paths\n{table}");
    assert!((128.0..=180.0).contains(&max_us(2)), "{table}");
}

#[test]
fn table_3_long_send_paths_would_have_shown_in_the_worst_case() {
    // With Figure 9's 1300 and 1900 µs tcp_sendmsg paths the worst case without
    // delayed locking is above 2 ms, far from the paper's 847 µs; delayed locking
    // still keeps it near 200 µs.
    let cfg = SimConfig {
        locks: HoldShape::table3(),
        ..short_sim(1)
    };
    let c = compare(&cfg).unwrap();
    assert!(c.without.latency.max > 1_800 * US, "{c:#?}");
    assert!(c.with.latency.max < 300 * US, "{c:#?}");
}

#[test]
fn learned_predictions_keep_the_cut_and_remove_most_of_the_cost() {
    // The paper's remark: predicting the hold time instead of taking the maximum of
    // a separate measurement would reduce the sender's slowdown. The online maximum
    // learns that tcp_sendmsg holds at most ~820 µs here, not 2192 µs.
    let fixed = compare(&short_sim(2)).unwrap();
    let learned = compare(&SimConfig {
        t_lock_ns: None,
        predictor: PredictorKind::Max,
        ..short_sim(2)
    })
    .unwrap();
    let table = format!("{learned:#?}");
    assert!(learned.worst_ratio() <= 0.32, "{table}");
    assert!(learned.sender_cost() < fixed.sender_cost() / 2.0, "{table}");
    assert!(learned.with.refusals < fixed.with.refusals, "{table}");
}

#[test]
fn minimum_latency_is_the_interrupt_plus_a_context_switch() {
    let cfg = short_sim(3);
    let run = simulate(&cfg, true).unwrap();
    let floor = cfg.urgent_isr_ns + cfg.context_switch_ns;
    assert!(run.latency.min >= floor, "{:?}", run.latency);
    assert!(run.latency.min <= floor + 2 * US, "{:?}", run.latency);
    assert_eq!(run.latency.count, cfg.periods);
}

#[test]
fn an_impossible_section_is_forced_in_after_max_refusals() {
    // A section longer than the period can never fit: every entry is forced after
    // N refusals, so the sender still makes progress.
    let mut cfg = short_sim(4);
    cfg.locks[1] = "long=4500us".parse().unwrap();
    cfg.t_lock_ns = Some([800 * US, 4_500 * US, 128 * US]);
    cfg.max_refusals = 5;
    cfg.periods = 400;
    let run = simulate(&cfg, true).unwrap();
    assert!(run.forced_entries > 0, "{run:?}");
    assert!(run.sent_kb > 0);
    // (The first forced entry of the measured time may have had refusals before it.)
    assert!(run.refusals + 5 >= 5 * run.forced_entries, "{run:?}");
    assert!(run.refusals <= 5 * (run.forced_entries + 2), "{run:?}");
}

#[test]
fn a_release_missed_entirely_counts_from_the_first_one() {
    // A 100 µs period under 800 µs sections: releases pile up behind a section,
    // and the latency of the first one runs on past the next release.
    let cfg = SimConfig {
        rt_period_ns: 100 * US,
        periods: 2_000,
        ..short_sim(5)
    };
    let run = simulate(&cfg, false).unwrap();
    assert!(run.latency.max > 600 * US, "{:?}", run.latency);
    assert!(run.latency.count < cfg.periods, "{:?}", run.latency);
}

#[test]
fn a_t_lock_longer_than_the_period_is_warned_about() {
    assert!(SimConfig::default().warnings().is_empty());
    let short_period = SimConfig {
        rt_period_ns: 1_000 * US,
        ..SimConfig::default()
    };
    let warnings = short_period.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("tcp_sendmsg's t_lock (2192 µs)"),
        "{warnings:?}"
    );
    let learned = SimConfig {
        t_lock_ns: None,
        ..short_period
    };
    assert!(learned.warnings().is_empty());
}

#[test]
fn invalid_parameters_are_rejected() {
    let mut cfg = short_sim(1);
    cfg.rt_period_ns = 10 * US;
    assert!(compare(&cfg).is_err());
    let mut cfg = short_sim(1);
    cfg.window_kb = 0;
    assert!(compare(&cfg).is_err());
}

#[test]
fn sites_replace_the_three_sections_and_a_prediction_sets_t_lock_or_a_predictor() {
    let shapes: Vec<HoldShape> = ["a=1*10-20us", "b=1*30-40us", "c=1*50-60us"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let cfg = SimConfig::default().with_sites(&shapes).unwrap();
    assert_eq!(cfg.locks.to_vec(), shapes);
    assert_eq!(
        SimConfig::default().with_sites(&[]).unwrap(),
        SimConfig::default()
    );
    let err = SimConfig::default().with_sites(&shapes[..2]).unwrap_err();
    assert!(matches!(err, LockError::SimSites { given: 2 }), "{err}");
    assert!(err
        .to_string()
        .starts_with("--simulate models three kernel sections"));

    let table = SimConfig::default().with_prediction("table".parse().unwrap());
    assert_eq!(
        (table.t_lock_ns, table.predictor),
        (SimConfig::default().t_lock_ns, PredictorKind::Max)
    );
    for (name, predictor) in [
        ("max", PredictorKind::Max),
        ("ewma", PredictorKind::EWMA),
        ("quantile", PredictorKind::default()),
    ] {
        let cfg = SimConfig::default().with_prediction(name.parse().unwrap());
        assert_eq!((cfg.t_lock_ns, cfg.predictor), (None, predictor), "{name}");
    }
    assert!("median".parse::<SimPrediction>().is_err());
}
