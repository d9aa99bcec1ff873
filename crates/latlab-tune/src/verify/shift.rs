//! The shift between applied and undone rounds and its exact interval
//! (Hodges-Lehmann with the Mann-Whitney interval; see [`super`] for why).

use serde::{Deserialize, Serialize};

use super::{Metric, Round, CONFIDENCE};

/// A fix's change of one metric, applied vs undone (negative = better).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    /// The metric.
    pub metric: Metric,
    /// The median of the undone rounds, ns.
    pub undone_ns: u64,
    /// The shift (Hodges-Lehmann: the median applied − undone difference), ns.
    pub shift_ns: i64,
    /// `(undone + shift) / undone`: 0.62 is 38 % lower.
    pub ratio: f64,
    /// The interval's low end, ns.
    pub low_ns: i64,
    /// The interval's high end, ns.
    pub high_ns: i64,
    /// The interval's exact confidence (0.971 for 4 rounds per side); below
    /// [`CONFIDENCE`] when there were too few rounds.
    pub confidence: f64,
    /// The noise between identical rounds, ns.
    pub noise_ns: u64,
}

impl Change {
    /// Better by more than the noise, and the interval excludes no change.
    pub fn better(&self) -> bool {
        self.high_ns < 0 && self.shift_ns.unsigned_abs() > self.noise_ns
    }

    /// Worse by more than the noise, and the interval excludes no change.
    pub fn worse(&self) -> bool {
        self.low_ns > 0 && self.shift_ns.unsigned_abs() > self.noise_ns
    }

    /// `p99 -38.0 us (-27 %) [-52.0, -21.0]`.
    pub fn text(&self) -> String {
        let us = |ns: i64| ns as f64 / 1e3;
        format!(
            "{} {:+.1} us ({:+.0} %) [{:.1}, {:.1}]",
            self.metric.name(),
            us(self.shift_ns),
            (self.ratio - 1.0) * 100.0,
            us(self.low_ns),
            us(self.high_ns)
        )
    }

    /// `noise 9.0 us`.
    pub fn noise_text(&self) -> String {
        format!("noise {:.1} us", self.noise_ns as f64 / 1e3)
    }
}

/// The change of `metric` from the applied and undone rounds.
pub(super) fn change(rounds: &[Round], metric: Metric, noise_ns: u64) -> Change {
    let side = |applied: bool| -> Vec<i64> {
        let values = rounds.iter().filter(|r| r.applied == applied);
        values.map(|r| metric.of(&r.figures) as i64).collect()
    };
    let (a, mut u) = (side(true), side(false));
    let mut diffs: Vec<i64> = a
        .iter()
        .flat_map(|x| u.iter().map(move |y| x - y))
        .collect();
    diffs.sort_unstable();
    let shift_ns = median(&mut diffs.clone());
    let undone_ns = median(&mut u).max(0) as u64;
    let (k, confidence) = interval_rank(a.len(), u.len());
    let at = |i: usize| diffs.get(i).copied().unwrap_or(0);
    let ratio = if undone_ns > 0 {
        (undone_ns as f64 + shift_ns as f64) / undone_ns as f64
    } else {
        1.0
    };
    Change {
        metric,
        undone_ns,
        shift_ns,
        ratio,
        low_ns: at(k - 1),
        high_ns: at(diffs.len().saturating_sub(k)),
        confidence,
        noise_ns,
    }
}

/// The median (the mean of the middle two for an even count), 0 when empty.
pub(super) fn median(values: &mut [i64]) -> i64 {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => 0,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]).div_euclid(2),
    }
}

/// P(U ≤ u) for u = 0..=m·n: the null distribution of the Mann-Whitney
/// count for m and n rounds, counted exactly (all arrangements alike).
fn u_cdf(m: usize, n: usize) -> Vec<f64> {
    // counts[i][j][u]: arrangements of i and j rounds with count u.
    let mut counts = vec![vec![vec![1.0f64]; n + 1]; m + 1];
    for i in 1..=m {
        for j in 1..=n {
            let mut c = vec![0.0; i * j + 1];
            for (u, v) in counts[i][j - 1].iter().enumerate() {
                c[u] += v;
            }
            for (u, v) in counts[i - 1][j].iter().enumerate() {
                c[u + j] += v;
            }
            counts[i][j] = c;
        }
    }
    let all = &counts[m][n];
    let total: f64 = all.iter().sum();
    all.iter()
        .scan(0.0, |acc, v| {
            *acc += v;
            Some(*acc / total)
        })
        .collect()
}

/// The rank k of the interval [d(k), d(mn+1−k)] over the sorted
/// differences, and its exact confidence: the widest-k interval of at
/// least [`CONFIDENCE`], else k = 1 (the whole range) and its lower one.
fn interval_rank(m: usize, n: usize) -> (usize, f64) {
    if m == 0 || n == 0 {
        return (1, 0.0);
    }
    let cdf = u_cdf(m, n);
    let level = |k: usize| (1.0 - 2.0 * cdf[k - 1]).max(0.0);
    let best = (1..=(m * n).div_ceil(2))
        .take_while(|&k| level(k) >= CONFIDENCE)
        .last();
    best.map_or((1, level(1)), |k| (k, level(k)))
}

/// The confidence of the interval for `m` applied and `n` undone rounds.
pub fn confidence(m: usize, n: usize) -> f64 {
    interval_rank(m, n).1
}
