//! Hold-time shapes of critical sections (clusters of uniform ranges, like the paper's
//! Figures 8-10 and Table 3) and the small seeded random generator that draws from them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::LockError;

/// The seedable generator that makes the simulator and the benchmark's work
/// pattern repeatable (SplitMix64; one home in latlab-rt).
pub use latlab_rt::rng::Rng;

/// One cluster of hold times: `weight` parts of the samples fall uniformly in
/// `lo_ns..=hi_ns`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Cluster {
    /// Relative frequency.
    pub weight: u32,
    /// Shortest hold of the cluster, nanoseconds.
    pub lo_ns: u64,
    /// Longest hold of the cluster, nanoseconds.
    pub hi_ns: u64,
}

/// The hold-time distribution of one critical section (call site).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct HoldShape {
    /// A name for tables (the paper's kernel function, by default).
    pub name: String,
    /// The clusters (at least one, total weight above 0).
    pub clusters: Vec<Cluster>,
}

const US: u64 = 1_000;

impl HoldShape {
    fn from_us(name: &str, clusters: &[(u32, u64, u64)]) -> Self {
        Self {
            name: name.to_string(),
            clusters: clusters
                .iter()
                .map(|&(weight, lo, hi)| Cluster {
                    weight,
                    lo_ns: lo * US,
                    hi_ns: hi * US,
                })
                .collect(),
        }
    }

    /// The three sections of the paper's Table 3, with clusters read off Figures 8-10:
    /// `do_softirq` (average 121 µs, maximum 800 µs), `tcp_sendmsg` (352 µs, 2192 µs,
    /// clusters near 300, 1300 and 1900 µs) and `net_rx` (56 µs, 128 µs).
    pub fn table3() -> [HoldShape; 3] {
        [
            Self::from_us("do_softirq", &[(90, 50, 130), (8, 200, 400), (2, 600, 800)]),
            Self::from_us(
                "tcp_sendmsg",
                &[(93, 180, 340), (4, 1200, 1400), (3, 1800, 2192)],
            ),
            Self::from_us("net_rx", &[(80, 30, 60), (20, 80, 128)]),
        ]
    }

    /// Checks that the shape can be sampled.
    pub fn validate(&self) -> Result<(), LockError> {
        if self
            .clusters
            .iter()
            .map(|c| u64::from(c.weight))
            .sum::<u64>()
            == 0
        {
            return Err(LockError::InvalidConfig(format!(
                "hold shape {:?} has no cluster with a weight above 0",
                self.name
            )));
        }
        if let Some(c) = self.clusters.iter().find(|c| c.lo_ns > c.hi_ns) {
            return Err(LockError::InvalidConfig(format!(
                "hold shape {:?}: range {}-{} ns is reversed; write LO-HI",
                self.name, c.lo_ns, c.hi_ns
            )));
        }
        Ok(())
    }

    /// Draws one hold time in nanoseconds.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let total: u64 = self.clusters.iter().map(|c| u64::from(c.weight)).sum();
        let mut pick = rng.range(0, total.saturating_sub(1));
        for c in &self.clusters {
            let w = u64::from(c.weight);
            if pick < w {
                return rng.range(c.lo_ns, c.hi_ns);
            }
            pick -= w;
        }
        self.clusters.last().map_or(0, |c| c.hi_ns)
    }

    /// The mean hold time in nanoseconds.
    pub fn mean_ns(&self) -> f64 {
        let total: f64 = self.clusters.iter().map(|c| f64::from(c.weight)).sum();
        self.clusters
            .iter()
            .map(|c| f64::from(c.weight) * (c.lo_ns + c.hi_ns) as f64 / 2.0)
            .sum::<f64>()
            / total
    }

    /// The longest possible hold time in nanoseconds.
    pub fn max_ns(&self) -> u64 {
        self.clusters
            .iter()
            .filter(|c| c.weight > 0)
            .map(|c| c.hi_ns)
            .max()
            .unwrap_or(0)
    }
}

impl fmt::Display for HoldShape {
    /// The `FromStr` syntax: `NAME=W*LO-HI,W*LO-HI` with a unit (µs where
    /// that is exact, else ns).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=", self.name)?;
        for (i, c) in self.clusters.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            if c.lo_ns % US == 0 && c.hi_ns % US == 0 {
                write!(f, "{}*{}-{}us", c.weight, c.lo_ns / US, c.hi_ns / US)?;
            } else {
                write!(f, "{}*{}-{}ns", c.weight, c.lo_ns, c.hi_ns)?;
            }
        }
        Ok(())
    }
}

impl FromStr for HoldShape {
    type Err = LockError;

    /// Parses `NAME=W*LO-HI,W*LO-HI,...` (`W*` defaults to 1 and `LO-HI` may
    /// be a single value), durations with their unit as every option takes
    /// them ([`latlab_rt::duration`]); a LO without one takes HI's, e.g.
    /// `send=93*180-340us,4*1.2-1.4ms,3*1800us-2.2ms`.
    fn from_str(text: &str) -> Result<Self, LockError> {
        let bad = |why: &str| {
            LockError::InvalidConfig(format!(
                "hold shape {text:?}: {why}; write NAME=W*LO-HI,... with a unit, e.g. \
                 send=93*180-340us,7*1200-2192us"
            ))
        };
        let (name, spec) = text.split_once('=').ok_or_else(|| bad("missing '='"))?;
        if name.trim().is_empty() {
            return Err(bad("empty name"));
        }
        let is_bare = |s: &str| {
            let s = s.trim();
            !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        };
        let duration = |s: &str| latlab_rt::duration::latency(s).map_err(|e| bad(&e));
        let mut clusters = Vec::new();
        for part in spec.split(',') {
            let (weight, range) = match part.split_once('*') {
                Some((w, r)) => (
                    w.trim()
                        .parse::<u32>()
                        .map_err(|_| bad(&format!("weight {w:?} is not a whole number")))?,
                    r.trim(),
                ),
                None => (1, part.trim()),
            };
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            if is_bare(hi) {
                return Err(bad(&format!(
                    "give a unit: {range}us or {range}ms (units: {})",
                    latlab_rt::duration::UNITS
                )));
            }
            let lo = if is_bare(lo) {
                let unit = hi
                    .trim()
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                duration(&format!("{}{unit}", lo.trim()))?
            } else {
                duration(lo)?
            };
            clusters.push(Cluster {
                weight,
                lo_ns: lo,
                hi_ns: duration(hi)?,
            });
        }
        let shape = Self {
            name: name.trim().to_string(),
            clusters,
        };
        shape.validate()?;
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table3_shapes_have_the_papers_averages_and_maxima() {
        // Table 3: average 121 / 352 / 56 µs, maximum 800 / 2192 / 128 µs.
        let expected = [(121.0, 800), (352.0, 2192), (56.0, 128)];
        for (shape, (avg_us, max_us)) in HoldShape::table3().iter().zip(expected) {
            let mean_us = shape.mean_ns() / 1e3;
            assert!(
                (mean_us - avg_us).abs() / avg_us < 0.05,
                "{}: mean {mean_us} µs vs {avg_us}",
                shape.name
            );
            assert_eq!(shape.max_ns(), max_us * US, "{}", shape.name);
        }
    }

    #[test]
    fn samples_follow_the_shape() {
        let mut rng = Rng::new(7);
        let shape = &HoldShape::table3()[1];
        let n = 200_000;
        let mut sum = 0.0;
        let mut max = 0;
        let mut long = 0;
        for _ in 0..n {
            let s = shape.sample(&mut rng);
            assert!((180 * US..=2192 * US).contains(&s), "{s}");
            sum += s as f64;
            max = max.max(s);
            if s >= 1800 * US {
                long += 1;
            }
        }
        let mean = sum / n as f64;
        assert!(
            (mean - shape.mean_ns()).abs() / shape.mean_ns() < 0.02,
            "{mean}"
        );
        assert!(max > 2150 * US);
        let frac = long as f64 / n as f64;
        assert!((frac - 0.03).abs() < 0.005, "{frac}");
    }

    #[test]
    fn parse_and_print_round_trip() {
        let shape: HoldShape = "send=93*180-340us,4*1.2-1.4ms,3*1800us-2192us"
            .parse()
            .unwrap();
        assert_eq!(shape.clusters.len(), 3);
        assert_eq!(shape.clusters[1].lo_ns, 1200 * US);
        assert_eq!(shape.max_ns(), 2192 * US);
        assert_eq!(
            shape.to_string(),
            "send=93*180-340us,4*1200-1400us,3*1800-2192us"
        );
        assert_eq!(shape.to_string().parse::<HoldShape>().unwrap(), shape);
        let fine: HoldShape = "x=500ns-2us".parse().unwrap();
        assert_eq!(fine.to_string().parse::<HoldShape>().unwrap(), fine);
        let single: HoldShape = "x=250us".parse().unwrap();
        assert_eq!(
            single.clusters,
            vec![Cluster {
                weight: 1,
                lo_ns: 250 * US,
                hi_ns: 250 * US
            }]
        );
        for bad in ["nosep", "=1-2us", "x=a-3us", "x=0*5-6us", "x=9-3us"] {
            let err = bad.parse::<HoldShape>().unwrap_err().to_string();
            assert!(
                err.contains(bad) || err.contains("reversed") || err.contains("weight"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_shape_without_a_unit_is_refused_with_the_units() {
        for (bare, range) in [("x=180-340", "180-340"), ("x=3*250", "250")] {
            let err = bare.parse::<HoldShape>().unwrap_err().to_string();
            assert!(
                err.contains(&format!("give a unit: {range}us or {range}ms")),
                "{bare}: {err}"
            );
        }
    }
}
