use super::*;

/// Rounds in schedule order: `undone` and `applied` give each side's
/// (p99, p99.9, max) in µs, in turn.
fn rounds(undone: &[(u64, u64, u64)], applied: &[(u64, u64, u64)]) -> Vec<Round> {
    let (mut u, mut a) = (undone.iter(), applied.iter());
    let figures = |&(p99, p999, max): &(u64, u64, u64)| Figures {
        samples: 100_000,
        p50_ns: 5_000,
        p99_ns: p99 * 1000,
        p999_ns: p999 * 1000,
        max_ns: max * 1000,
        missed: 0,
    };
    schedule(undone.len().max(applied.len()) as u32)
        .into_iter()
        .filter_map(|applied| {
            let next = if applied { a.next() } else { u.next() }?;
            Some(Round {
                applied,
                figures: figures(next),
            })
        })
        .collect()
}

/// A/A rounds whose p99 differ by a few µs.
/// Four undone rounds (p99, p99.9, max in µs) the tests measure fixes against.
const UNDONE: [(u64, u64, u64); 4] = [
    (100, 300, 900),
    (103, 310, 950),
    (98, 290, 880),
    (101, 305, 990),
];

fn baseline() -> Noise {
    let same = [
        (100, 300, 900),
        (104, 310, 950),
        (97, 290, 880),
        (102, 305, 1000),
    ];
    noise(&rounds(&same, &[]))
}

#[test]
fn the_schedule_is_balanced_and_cancels_a_linear_drift() {
    let s = schedule(4);
    assert_eq!(s, [false, true, true, false, false, true, true, false]);
    let at = |side: bool| -> usize { (0..s.len()).filter(|&i| s[i] == side).sum() };
    assert_eq!(at(true), at(false));
    // A drift of +10 µs per round and no effect: no shift found.
    let figures = |i: usize| Figures {
        samples: 1,
        p50_ns: 1,
        p99_ns: 100_000 + 10_000 * i as u64,
        p999_ns: 200_000,
        max_ns: 300_000,
        missed: 0,
    };
    let drifting: Vec<Round> = s
        .iter()
        .enumerate()
        .map(|(i, &applied)| Round {
            applied,
            figures: figures(i),
        })
        .collect();
    let e = effect(&drifting, &baseline());
    assert_eq!(e.p99.shift_ns, 0, "{e:?}");
    assert!(!e.kept);
}

#[test]
fn noise_is_the_median_gap_between_identical_rounds() {
    let n = baseline();
    // p99 gaps: 4 3 2 7 2 5 -> median (3 + 4) / 2.
    assert_eq!((n.rounds, n.p99_ns), (4, 3_500));
    assert_eq!(noise(&[]).rounds, 0);
}

#[test]
fn a_clear_improvement_is_kept() {
    let undone = UNDONE;
    let applied = [
        (62, 200, 800),
        (60, 210, 850),
        (65, 190, 820),
        (61, 205, 900),
    ];
    let e = effect(&rounds(&undone, &applied), &baseline());
    assert!(e.kept, "{}", e.why);
    assert_eq!((e.applied, e.undone), (4, 4));
    assert!((e.p99.confidence - (1.0 - 2.0 / 70.0)).abs() < 1e-9);
    // Every applied round beats every undone one: the interval is the range.
    assert_eq!((e.p99.low_ns, e.p99.high_ns), (-43_000, -33_000));
    assert_eq!(e.p99.shift_ns, -38_500);
    assert!((e.p99.ratio - 0.62).abs() < 0.01, "{}", e.p99.ratio);
    assert_eq!(
        e.why,
        "p99 -38.5 us (-38 %) [-43.0, -33.0] vs noise 3.5 us: kept"
    );
}

#[test]
fn a_change_inside_the_noise_is_dropped() {
    let undone = UNDONE;
    let applied = [
        (102, 300, 900),
        (99, 310, 950),
        (104, 290, 880),
        (100, 305, 990),
    ];
    let e = effect(&rounds(&undone, &applied), &baseline());
    assert!(!e.kept);
    assert!(e.p99.low_ns < 0 && e.p99.high_ns > 0, "{e:?}");
    assert!(e.why.ends_with("within noise 3.5 us: dropped"), "{}", e.why);
}

#[test]
fn a_better_p99_with_a_measurably_worse_max_is_dropped() {
    let undone = UNDONE;
    let applied = [
        (62, 200, 2900),
        (60, 210, 2500),
        (65, 190, 3000),
        (61, 205, 2700),
    ];
    let e = effect(&rounds(&undone, &applied), &baseline());
    assert!(e.p99.better() && e.max.worse(), "{e:?}");
    assert!(!e.kept);
    assert!(e.why.contains("but max +"), "{}", e.why);
    assert!(e.why.ends_with("worse max, dropped"), "{}", e.why);
    // A max that moved within its noise does not stop it.
    let applied = [
        (62, 200, 930),
        (60, 210, 900),
        (65, 190, 960),
        (61, 205, 910),
    ];
    assert!(effect(&rounds(&undone, &applied), &baseline()).kept);
}

#[test]
fn too_few_rounds_say_so_instead_of_claiming() {
    let undone = [(100, 300, 900), (103, 310, 950), (98, 290, 880)];
    let applied = [(62, 200, 800), (60, 210, 850), (65, 190, 820)];
    let e = effect(&rounds(&undone, &applied), &baseline());
    assert!(!e.kept);
    assert!((e.p99.confidence - 0.9).abs() < 1e-9);
    assert!(
        e.why.contains("too few rounds (3 applied, 3 undone)"),
        "{}",
        e.why
    );
    assert!(e.why.contains("4 of each needed"), "{}", e.why);
    let none = effect(&rounds(&undone, &[]), &baseline());
    assert!(
        !none.kept && none.why.contains("not measured"),
        "{}",
        none.why
    );
}

#[test]
fn a_worse_fix_is_named_worse_and_the_interval_narrows_with_rounds() {
    let undone = [
        (60, 200, 800),
        (61, 210, 850),
        (62, 190, 820),
        (59, 205, 900),
        (60, 200, 800),
    ];
    let applied = [
        (100, 300, 900),
        (103, 310, 950),
        (98, 290, 880),
        (101, 305, 990),
        (99, 300, 900),
    ];
    let e = effect(&rounds(&undone, &applied), &Noise::default());
    assert!(e.p99.worse() && !e.kept, "{e:?}");
    assert!(e.why.ends_with("worse, dropped"), "{}", e.why);
    // Without A/A rounds the undone rounds give the noise.
    assert_eq!(e.p99.noise_ns, 1_000);
    // 5 per side: an interval inside the range, still at least 95 %.
    assert!(e.p99.low_ns > 36_000 && e.p99.high_ns < 44_000, "{e:?}");
    assert!(confidence(5, 5) >= CONFIDENCE && confidence(5, 5) < confidence(4, 4));
    assert!(confidence(3, 3) < CONFIDENCE && confidence(4, 3) < CONFIDENCE);
    let min = MIN_ROUNDS as usize;
    assert!(confidence(min, min) >= CONFIDENCE && confidence(min - 1, min - 1) < CONFIDENCE);
}

/// Simulated fixes: rounds whose p99 scatter around 100 µs (±12 µs,
/// uniform), shifted by `shift_us` when applied; how many of `fixes` are kept.
fn kept_of_simulated(shift_us: i64, fixes: u32, seed: u64) -> u32 {
    let mut rng = latlab_rt::rng::Rng::new(seed);
    let mut p99 = |shift: i64| (100_000 + rng.range(0, 24_000) as i64 - 12_000 + shift) as u64;
    let mut round = |applied: bool, shift: i64| Round {
        applied,
        figures: Figures {
            samples: 100_000,
            p50_ns: 5_000,
            p99_ns: p99(shift),
            p999_ns: 200_000,
            max_ns: 400_000,
            missed: 0,
        },
    };
    let mut kept = 0;
    for _ in 0..fixes {
        let aa: Vec<Round> = (0..4).map(|_| round(false, 0)).collect();
        let rounds: Vec<Round> = schedule(4)
            .into_iter()
            .map(|applied| round(applied, if applied { shift_us * 1000 } else { 0 }))
            .collect();
        kept += u32::from(effect(&rounds, &noise(&aa)).kept);
    }
    kept
}

#[test]
fn a_fix_that_does_nothing_is_rarely_kept_and_a_real_one_usually_is() {
    // No effect: kept at most as often as the interval's one side allows
    // (1.4 % for 4 rounds a side).
    let false_keeps = kept_of_simulated(0, 1000, 1);
    assert!(false_keeps <= 25, "{false_keeps} of 1000 kept");
    // A shift as large as the rounds' whole spread: kept nearly always.
    let keeps = kept_of_simulated(-24, 200, 2);
    assert!(keeps >= 190, "{keeps} of 200 kept");
    // Half of it: sometimes (4 rounds a side cannot tell more often).
    let keeps = kept_of_simulated(-12, 200, 3);
    assert!((20..=120).contains(&keeps), "{keeps} of 200 kept");
    // Upwards: never kept.
    assert_eq!(kept_of_simulated(24, 200, 4), 0);
}
