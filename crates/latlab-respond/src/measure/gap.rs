//! The time between two stimuli: fixed, or random so that the event is not
//! phase-locked to the timer tick.

use serde::{Deserialize, Serialize};

use latlab_measure::units::format_ns;
use latlab_rt::duration;
use latlab_rt::rng::Rng;

/// Time between two stimuli (send to send).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Gap {
    /// Always the same gap: a fixed rate.
    Fixed {
        /// The gap, ns.
        ns: u64,
    },
    /// Uniformly random gaps, so the event is not phase-locked to the tick.
    Random {
        /// Shortest gap, ns.
        min_ns: u64,
        /// Longest gap, ns.
        max_ns: u64,
    },
}

impl Gap {
    /// The shortest gap, ns.
    pub fn min_ns(&self) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, .. } => min_ns,
        }
    }

    /// The mean gap, ns.
    pub fn mean_ns(&self) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, max_ns } => (min_ns + max_ns) / 2,
        }
    }
}

impl std::str::FromStr for Gap {
    type Err = String;

    /// `1ms` (fixed) or `500us..1500us` (random, uniform).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once("..") {
            Some((lo, hi)) => {
                let (min_ns, max_ns) = (duration::latency(lo)?, duration::latency(hi)?);
                if min_ns == 0 || max_ns < min_ns {
                    return Err(format!(
                        "invalid gap range {text:?}: need 0 < MIN <= MAX, e.g. 500us..1500us"
                    ));
                }
                Ok(Gap::Random { min_ns, max_ns })
            }
            None => {
                let ns = duration::latency(text)?;
                if ns == 0 {
                    return Err("the gap must be above 0 (e.g. 1ms)".into());
                }
                Ok(Gap::Fixed { ns })
            }
        }
    }
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Gap::Fixed { ns } => write!(f, "{}", format_ns(ns)),
            Gap::Random { min_ns, max_ns } => {
                write!(f, "random {}..{}", format_ns(min_ns), format_ns(max_ns))
            }
        }
    }
}

impl Gap {
    /// The next gap in ns: the fixed one, or one drawn uniformly from the
    /// random range (independent of the timer tick).
    pub(crate) fn next_ns(&self, rng: &mut Rng) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, max_ns } => rng.range(min_ns, max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_parse_fixed_and_random() {
        assert_eq!("1ms".parse::<Gap>(), Ok(Gap::Fixed { ns: 1_000_000 }));
        assert_eq!(
            "500us..1500us".parse::<Gap>(),
            Ok(Gap::Random {
                min_ns: 500_000,
                max_ns: 1_500_000
            })
        );
        assert!("2ms..1ms".parse::<Gap>().is_err());
        assert!("0".parse::<Gap>().is_err());
        for bare in ["500", "500..1500"] {
            let err = bare.parse::<Gap>().unwrap_err();
            assert!(err.contains("give a unit: 500us or 500ms"), "{err}");
        }
    }

    #[test]
    fn random_gaps_stay_in_range_and_vary() {
        let gap = Gap::Random {
            min_ns: 100,
            max_ns: 200,
        };
        let mut rng = Rng::new(0x1234_5678_9abc_def1);
        let gaps: Vec<u64> = (0..1000).map(|_| gap.next_ns(&mut rng)).collect();
        assert!(gaps.iter().all(|g| (100..=200).contains(g)));
        let distinct: std::collections::BTreeSet<_> = gaps.iter().collect();
        assert!(distinct.len() > 50, "{} distinct gaps", distinct.len());
    }
}
