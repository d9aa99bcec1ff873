//! Hold-time predictors: from the hold times a call site showed so far, how long will
//! the next critical section at that site take (the paper's `t_lock,i`)?

use serde::{Deserialize, Serialize};

use crate::LockError;

/// Which predictor a delayed lock uses for every call site.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PredictorKind {
    /// The longest hold seen so far (the paper's choice: never under-predicts a hold it
    /// has seen, at the price of refusing often when one rare path is long).
    Max,
    /// Exponential average (the paper's alternative): `t <- t + weight * (sample - t)`.
    /// Tracks the typical hold; under-predicts every hold longer than the average.
    Ewma {
        /// Weight of the newest sample, in (0, 1].
        weight: f64,
    },
    /// A high quantile of the last `window` holds (default: p99.5 of 1024). Follows
    /// changes (old outliers age out) while covering all but the rarest paths; the
    /// window is long enough that a path taken a few percent of the time is always in it.
    Quantile {
        /// How many recent holds are kept (at least 1).
        window: usize,
        /// The quantile predicted, in (0, 1].
        quantile: f64,
    },
}

impl Default for PredictorKind {
    fn default() -> Self {
        Self::Quantile {
            window: 1024,
            quantile: 0.995,
        }
    }
}

impl PredictorKind {
    /// The exponential average with weight 1/8 for the newest sample.
    pub const EWMA: Self = Self::Ewma { weight: 0.125 };

    /// A short name: `max`, `ewma` or `quantile`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Max => "max",
            Self::Ewma { .. } => "ewma",
            Self::Quantile { .. } => "quantile",
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), LockError> {
        match *self {
            Self::Max => Ok(()),
            Self::Ewma { weight } if weight > 0.0 && weight <= 1.0 => Ok(()),
            Self::Ewma { weight } => Err(LockError::InvalidConfig(format!(
                "EWMA weight {weight} is outside (0, 1]; use e.g. 0.125"
            ))),
            Self::Quantile { window, quantile } => {
                if window == 0 {
                    Err(LockError::InvalidConfig(
                        "quantile window of 0 samples; use at least 1 (default 1024)".into(),
                    ))
                } else if !(quantile > 0.0 && quantile <= 1.0) {
                    Err(LockError::InvalidConfig(format!(
                        "quantile {quantile} is outside (0, 1]; use e.g. 0.99"
                    )))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// The state of one predictor. Not synchronized: the lock updates it while it is held.
#[derive(Debug, Clone)]
pub struct Predictor {
    state: State,
    samples: u64,
}

#[derive(Debug, Clone)]
enum State {
    Max {
        max: u64,
    },
    Ewma {
        weight: f64,
        average: f64,
    },
    Quantile {
        quantile: f64,
        window: usize,
        /// Ring of the last `window` holds.
        ring: Vec<u64>,
        /// Where the next hold goes in `ring`.
        next: usize,
        /// Scratch space for the selection.
        scratch: Vec<u64>,
        /// The current prediction.
        current: u64,
    },
}

impl Predictor {
    /// A predictor of the given kind that has seen nothing yet (predicts 0).
    pub fn new(kind: PredictorKind) -> Self {
        let state = match kind {
            PredictorKind::Max => State::Max { max: 0 },
            PredictorKind::Ewma { weight } => State::Ewma {
                weight,
                average: 0.0,
            },
            PredictorKind::Quantile { window, quantile } => State::Quantile {
                quantile,
                window: window.max(1),
                ring: Vec::new(),
                next: 0,
                scratch: Vec::new(),
                current: 0,
            },
        };
        Self { state, samples: 0 }
    }

    /// How many holds were recorded.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The predicted next hold time in nanoseconds (0 before the first sample).
    pub fn predict(&self) -> u64 {
        match &self.state {
            State::Max { max } => *max,
            State::Ewma { average, .. } => average.round() as u64,
            State::Quantile { current, .. } => *current,
        }
    }

    /// Records one observed hold time in nanoseconds.
    pub fn record(&mut self, hold_ns: u64) {
        self.samples += 1;
        let first = self.samples == 1;
        match &mut self.state {
            State::Max { max } => *max = (*max).max(hold_ns),
            State::Ewma { weight, average } => {
                if first {
                    *average = hold_ns as f64;
                } else {
                    *average += *weight * (hold_ns as f64 - *average);
                }
            }
            State::Quantile {
                quantile,
                window,
                ring,
                next,
                scratch,
                current,
            } => {
                if ring.len() < *window {
                    ring.push(hold_ns);
                    *current = select_rank(ring, scratch, *quantile);
                    return;
                }
                let evicted = std::mem::replace(&mut ring[*next], hold_ns);
                *next = (*next + 1) % *window;
                // With a full window the element at the quantile's rank only changes when
                // the new and the evicted hold lie on different sides of it (or on it).
                let p = *current;
                let unchanged = (hold_ns < p && evicted < p) || (hold_ns > p && evicted > p);
                if !unchanged {
                    *current = select_rank(ring, scratch, *quantile);
                }
            }
        }
    }
}

/// The nearest-rank `quantile` of `values` (non-empty), using `scratch` as work space.
fn select_rank(values: &[u64], scratch: &mut Vec<u64>, quantile: f64) -> u64 {
    scratch.clear();
    scratch.extend_from_slice(values);
    let n = scratch.len();
    let rank = ((quantile * n as f64).ceil() as usize).clamp(1, n) - 1;
    *scratch.select_nth_unstable(rank).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_quantile(values: &[u64], quantile: f64) -> u64 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let rank = ((quantile * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
        sorted[rank]
    }

    #[test]
    fn max_predicts_the_longest_hold_seen() {
        let mut p = Predictor::new(PredictorKind::Max);
        assert_eq!(p.predict(), 0);
        for hold in [300, 2192, 120, 800] {
            p.record(hold);
        }
        assert_eq!(p.predict(), 2192);
        assert_eq!(p.samples(), 4);
    }

    #[test]
    fn ewma_starts_at_the_first_sample_and_moves_by_its_weight() {
        let mut p = Predictor::new(PredictorKind::Ewma { weight: 0.5 });
        p.record(1000);
        assert_eq!(p.predict(), 1000);
        p.record(2000);
        assert_eq!(p.predict(), 1500);
        p.record(0);
        assert_eq!(p.predict(), 750);
    }

    #[test]
    fn ewma_converges_to_a_constant_hold() {
        let mut p = Predictor::new(PredictorKind::EWMA);
        p.record(10_000);
        for _ in 0..200 {
            p.record(400);
        }
        assert!((p.predict() as i64 - 400).abs() <= 1, "{}", p.predict());
    }

    #[test]
    fn quantile_matches_a_sorted_window_after_every_sample() {
        let kind = PredictorKind::Quantile {
            window: 50,
            quantile: 0.9,
        };
        let mut p = Predictor::new(kind);
        let mut history = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..2000 {
            // A clustered sequence with repeats, so that ties with the prediction occur.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let hold = match (x >> 33) % 10 {
                0 => 1900 + (x >> 40) % 300,
                1 | 2 => 1300,
                _ => 200 + (x >> 45) % 100,
            } + if i > 1000 { 500 } else { 0 };
            p.record(hold);
            history.push(hold);
            let start = history.len().saturating_sub(50);
            assert_eq!(
                p.predict(),
                naive_quantile(&history[start..], 0.9),
                "at {i}"
            );
        }
    }

    #[test]
    fn quantile_forgets_old_outliers() {
        let mut p = Predictor::new(PredictorKind::Quantile {
            window: 10,
            quantile: 1.0,
        });
        p.record(5000);
        for _ in 0..10 {
            p.record(100);
        }
        assert_eq!(p.predict(), 100);
    }

    #[test]
    fn invalid_parameters_are_rejected_with_a_hint() {
        let err = PredictorKind::Ewma { weight: 0.0 }.validate().unwrap_err();
        assert!(err.to_string().contains("0.125"), "{err}");
        assert!(PredictorKind::Quantile {
            window: 0,
            quantile: 0.5
        }
        .validate()
        .is_err());
        assert!(PredictorKind::Quantile {
            window: 4,
            quantile: 1.5
        }
        .validate()
        .is_err());
        assert!(PredictorKind::default().validate().is_ok());
    }
}
