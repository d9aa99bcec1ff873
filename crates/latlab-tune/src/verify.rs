//! Side-by-side verification of a fix: rounds with it applied and undone,
//! alternating in an order that cancels drift ([`schedule`]), its effect on
//! p99, p99.9 and max against the [`noise`] between identical rounds, and
//! the verdict ([`effect`]).
//!
//! The statistics, and why: a tune has 3 to 6 rounds per side, each round a
//! whole run whose p99 is one number. A bootstrap over so few rounds draws
//! from 3-6 values; its percentile interval is too narrow (it cannot reach
//! beyond the observed range and misses its stated coverage badly at this
//! size). So the shift is the Hodges-Lehmann estimate (the median of every
//! applied − undone difference) and its interval the distribution-free one
//! from the Mann-Whitney statistic: exact for any m×n, assuming only that
//! rounds are exchangeable apart from the shift (which the ABBA order
//! makes true of a linear drift). Its confidence comes in steps: 3 rounds
//! per side reach at most 90 %, so [`effect`] says "too few rounds" there
//! rather than claim; 4 per side give 97.1 %.
//!
//! What that buys, simulated (rounds whose p99 scatter uniformly over
//! ±12 µs, so a noise of about 7 µs; 1000 fixes per cell, share kept):
//!
//! | rounds a side | no effect | −6 µs | −12 µs | −18 µs | −24 µs |
//! |---|---|---|---|---|---|
//! | 3 | 0 % | 0 % | 0 % | 0 % | 0 % |
//! | 4 | 1.7 % | 7.1 % | 28 % | 69 % | 99 % |
//! | 5 | 1.2 % | 11 % | 46 % | 89 % | 99.8 % |
//! | 6 | 0.4 % | 15 % | 58 % | 94 % | 99.8 % |
//!
//! ```
//! use latlab_tune::verify::schedule;
//! // undone, applied, applied, undone, ...: drift hits both sides alike.
//! assert_eq!(schedule(2), [false, true, true, false]);
//! ```

use serde::{Deserialize, Serialize};

use crate::result::Figures;

mod shift;
#[cfg(test)]
mod tests;

use shift::{change, median};
pub use shift::{confidence, Change};

/// The confidence an interval must reach for a fix to be kept.
pub const CONFIDENCE: f64 = 0.95;

/// The fewest rounds a side whose interval reaches [`CONFIDENCE`]: the
/// least `--rounds` worth asking for.
pub const MIN_ROUNDS: u32 = 4;

/// One verification round: a run with the fix applied or undone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Round {
    /// The fix was applied during this round.
    pub applied: bool,
    /// The round's figures.
    pub figures: Figures,
}

/// The order of `2 × pairs` rounds: `false` (undone) and `true` (applied)
/// as ABBA ABBA..., so a drift linear in time weighs the same on both sides.
pub fn schedule(pairs: u32) -> Vec<bool> {
    (0..pairs)
        .flat_map(|k| {
            if k % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            }
        })
        .collect()
}

/// A figure a fix is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P999,
    /// The maximum.
    Max,
}

impl Metric {
    /// Every metric, in the order reports list them.
    pub const ALL: [Metric; 3] = [Metric::P99, Metric::P999, Metric::Max];

    /// The metric's value in `figures`, ns.
    pub fn of(self, figures: &Figures) -> u64 {
        match self {
            Metric::P99 => figures.p99_ns,
            Metric::P999 => figures.p999_ns,
            Metric::Max => figures.max_ns,
        }
    }

    /// `p99`, `p99.9`, `max`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
        }
    }
}

/// The spread between identical rounds, per metric: the median of the
/// absolute differences between every two of them (a typical gap between
/// two rounds where nothing changed), ns.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Noise {
    /// Identical rounds it was measured on (fewer than 2: unknown, all 0).
    pub rounds: u32,
    /// Of p99.
    pub p99_ns: u64,
    /// Of p99.9.
    pub p999_ns: u64,
    /// Of max.
    pub max_ns: u64,
}

impl Noise {
    /// The noise of `metric`, ns.
    pub fn of(&self, metric: Metric) -> u64 {
        match metric {
            Metric::P99 => self.p99_ns,
            Metric::P999 => self.p999_ns,
            Metric::Max => self.max_ns,
        }
    }
}

/// The noise of identical rounds (the baseline's A/A rounds; their
/// `applied` flags are not read).
pub fn noise(rounds: &[Round]) -> Noise {
    let spread = |m: Metric| {
        let mut gaps = Vec::new();
        for (i, a) in rounds.iter().enumerate() {
            for b in &rounds[i + 1..] {
                gaps.push(m.of(&a.figures).abs_diff(m.of(&b.figures)) as i64);
            }
        }
        median(&mut gaps).max(0) as u64
    };
    Noise {
        rounds: rounds.len() as u32,
        p99_ns: spread(Metric::P99),
        p999_ns: spread(Metric::P999),
        max_ns: spread(Metric::Max),
    }
}

/// The measured effect of a fix and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Effect {
    /// The rounds, in the order run.
    pub rounds: Vec<Round>,
    /// Rounds with the fix applied.
    pub applied: u32,
    /// Rounds with it undone.
    pub undone: u32,
    /// The metric the verdict is decided on.
    pub decided_by: Metric,
    /// The change of p99.
    pub p99: Change,
    /// The change of p99.9.
    pub p999: Change,
    /// The change of max.
    pub max: Change,
    /// Kept: better by more than the noise on `decided_by`, the interval
    /// excludes no change, and no metric measurably worse.
    pub kept: bool,
    /// Why, in one sentence (`p99 -38.0 us (-27 %) [-52.0, -21.0] vs noise 9.0
    /// us: kept`).
    pub why: String,
}

impl Effect {
    /// The change of `metric`.
    pub fn change(&self, metric: Metric) -> &Change {
        match metric {
            Metric::P99 => &self.p99,
            Metric::P999 => &self.p999,
            Metric::Max => &self.max,
        }
    }
}

/// The effect of a fix on p99 ([`effect_on`]).
pub fn effect(rounds: &[Round], noise: &Noise) -> Effect {
    effect_on(rounds, noise, Metric::P99)
}

/// The effect of a fix, decided on `metric`. Kept only when `metric` is
/// better by more than its noise with an interval of at least
/// [`CONFIDENCE`] that excludes no change, and no other metric is
/// measurably worse (a fix that lowers p99 but raises the worst case is
/// not one a real-time system wants). `noise` from fewer than 2 rounds is
/// replaced by the noise of the undone rounds.
pub fn effect_on(rounds: &[Round], noise: &Noise, metric: Metric) -> Effect {
    let noise = if noise.rounds >= 2 {
        *noise
    } else {
        let undone: Vec<Round> = rounds.iter().filter(|r| !r.applied).copied().collect();
        self::noise(&undone)
    };
    let change = |m| change(rounds, m, noise.of(m));
    let (p99, p999, max) = (
        change(Metric::P99),
        change(Metric::P999),
        change(Metric::Max),
    );
    let applied = rounds.iter().filter(|r| r.applied).count() as u32;
    let undone = rounds.len() as u32 - applied;
    let mut effect = Effect {
        rounds: rounds.to_vec(),
        applied,
        undone,
        decided_by: metric,
        p99,
        p999,
        max,
        kept: false,
        why: String::new(),
    };
    let main = effect.change(metric);
    let worse = Metric::ALL
        .into_iter()
        .map(|m| effect.change(m))
        .find(|c| c.metric != metric && c.worse());
    let (kept, why) = if applied == 0 || undone == 0 {
        (
            false,
            format!("{applied} rounds applied, {undone} undone: not measured"),
        )
    } else if main.confidence < CONFIDENCE {
        (false, format!(
            "{} ({:.0} %) vs {}: too few rounds ({applied} applied, {undone} undone) for a 95 % interval, {MIN_ROUNDS} of each needed: not kept",
            main.text(), main.confidence * 100.0, main.noise_text()
        ))
    } else if let Some(w) = worse.filter(|_| main.better()) {
        (
            false,
            format!(
                "{} vs {}, but {} vs {}: worse {}, dropped",
                main.text(),
                main.noise_text(),
                w.text(),
                w.noise_text(),
                w.metric.name()
            ),
        )
    } else if main.better() {
        (
            true,
            format!("{} vs {}: kept", main.text(), main.noise_text()),
        )
    } else if main.worse() {
        (
            false,
            format!("{} vs {}: worse, dropped", main.text(), main.noise_text()),
        )
    } else if main.shift_ns.unsigned_abs() <= main.noise_ns {
        (
            false,
            format!("{}, within {}: dropped", main.text(), main.noise_text()),
        )
    } else {
        (
            false,
            format!(
                "{} vs {}: the interval includes no change, dropped",
                main.text(),
                main.noise_text()
            ),
        )
    };
    effect.kept = kept;
    effect.why = why;
    effect
}
