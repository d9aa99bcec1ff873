//! Requirements a run must meet, and the named profiles from the papers.
//!
//! A violated requirement makes `latlab run` exit with code 2 and print the
//! verdict in words: `FAIL: CPU1 max 3.42 ms > 1.00 ms (cycle 8123)`.

use serde::{Deserialize, Serialize};

use crate::histogram::Histogram;
use crate::result::{ThreadResult, Verdict};
use crate::units::{format_ns, parse_duration, parse_fraction};

/// One requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Requirement {
    /// Every sample at or below `limit_ns`.
    MaxLatency {
        /// The limit, ns.
        limit_ns: u64,
    },
    /// The `percentile` of each thread at or below `limit_ns`.
    Percentile {
        /// Percentile, 0..100.
        percentile: f64,
        /// The limit, ns.
        limit_ns: u64,
    },
    /// At least `min_share` of the periods within ±`tolerance` of the reference.
    PeriodTolerance {
        /// Accepted deviation, fraction of the period.
        tolerance: f64,
        /// Share of periods that must be within it (1.0: all).
        min_share: f64,
    },
}

/// The named profiles: (name, description).
pub const PROFILES: [(&str, &str); 3] = [
    (
        "emblix-class2",
        "Emblix class 2 (< 1 ms, e.g. music instruments): worst case below 1 ms",
    ),
    (
        "emblix-class3",
        "Emblix class 3 (tens of us, e.g. motor control): worst case below 100 us",
    ),
    (
        "moblin-ivi",
        "Moblin in-vehicle reference: worst case 40 us, every period within +-5 %",
    ),
];

/// The requirements of a named profile.
pub fn profile(name: &str) -> Result<Vec<Requirement>, String> {
    Ok(match name {
        "emblix-class2" => vec![Requirement::MaxLatency {
            limit_ns: 1_000_000,
        }],
        "emblix-class3" => vec![Requirement::MaxLatency { limit_ns: 100_000 }],
        "moblin-ivi" => vec![
            Requirement::MaxLatency { limit_ns: 40_000 },
            Requirement::PeriodTolerance {
                tolerance: 0.05,
                min_share: 1.0,
            },
        ],
        _ => {
            let names: Vec<_> = PROFILES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "unknown profile {name:?} (known: {})",
                names.join(", ")
            ));
        }
    })
}

/// Parses `--percentile 99.9:40us`.
pub fn parse_percentile(text: &str) -> Result<Requirement, String> {
    let (p, limit) = text
        .split_once(':')
        .ok_or_else(|| format!("expected PERCENTILE:LIMIT such as 99.9:40us, got {text:?}"))?;
    let percentile: f64 = p
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("invalid percentile {p:?} in {text:?}"))?;
    if !(0.0..=100.0).contains(&percentile) {
        return Err(format!("percentile {percentile} is not between 0 and 100"));
    }
    Ok(Requirement::Percentile {
        percentile,
        limit_ns: parse_duration(limit)?,
    })
}

/// Parses `--period-tolerance 5%` (all periods) or `5%@99.9` (99.9 % of them).
pub fn parse_period_tolerance(text: &str) -> Result<(f64, f64), String> {
    let (tolerance, share) = match text.split_once('@') {
        Some((t, s)) => (parse_fraction(t)?, parse_fraction(s.trim_end_matches('%'))?),
        None => (parse_fraction(text)?, 1.0),
    };
    Ok((tolerance, share))
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Requirement::MaxLatency { limit_ns } => {
                write!(f, "max latency <= {}", format_ns(*limit_ns))
            }
            Requirement::Percentile {
                percentile,
                limit_ns,
            } => write!(f, "p{percentile} latency <= {}", format_ns(*limit_ns)),
            Requirement::PeriodTolerance {
                tolerance,
                min_share,
            } => write!(
                f,
                "{}% of periods within +-{}%",
                min_share * 100.0,
                tolerance * 100.0
            ),
        }
    }
}

/// Whether one requirement held, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequirementOutcome {
    /// The requirement.
    pub requirement: Requirement,
    /// True when it held on every thread.
    pub passed: bool,
    /// `PASS: ...` or `FAIL: ...` lines, one per violating thread.
    pub details: Vec<String>,
}

/// Checks every requirement against every thread.
pub fn evaluate(requirements: &[Requirement], threads: &[ThreadResult]) -> Vec<RequirementOutcome> {
    requirements
        .iter()
        .map(|requirement| {
            let mut failures = Vec::new();
            let mut worst_seen = String::new();
            for t in threads {
                match requirement {
                    Requirement::MaxLatency { limit_ns } => {
                        let max = t.latency.max;
                        if max > *limit_ns {
                            let cycle = t.worst.first().map(|w| w.cycle).unwrap_or(0);
                            failures.push(format!(
                                "FAIL: CPU{} max {} > {} (cycle {cycle})",
                                t.cpu,
                                format_ns(max),
                                format_ns(*limit_ns)
                            ));
                        }
                        worst_seen = format!("max {}", format_ns(max.max(threads_max(threads))));
                    }
                    Requirement::Percentile {
                        percentile,
                        limit_ns,
                    } => {
                        let value = percentile_of(t, *percentile);
                        if value > *limit_ns {
                            failures.push(format!(
                                "FAIL: CPU{} p{percentile} {} > {}",
                                t.cpu,
                                format_ns(value),
                                format_ns(*limit_ns)
                            ));
                        }
                    }
                    Requirement::PeriodTolerance {
                        tolerance,
                        min_share,
                    } => {
                        let share = t.period.share_within;
                        if share + 1e-12 < *min_share {
                            failures.push(format!(
                                "FAIL: CPU{} {:.4}% of periods within +-{}% (need {}%), \
                                 {} outside, worst deviation {:+.1} us",
                                t.cpu,
                                share * 100.0,
                                tolerance * 100.0,
                                min_share * 100.0,
                                t.period.count - t.period.within_tolerance,
                                extreme_deviation(t) as f64 / 1e3
                            ));
                        }
                    }
                }
            }
            let passed = failures.is_empty();
            let details = if passed {
                let extra = if worst_seen.is_empty() {
                    String::new()
                } else {
                    format!(" ({worst_seen})")
                };
                vec![format!("PASS: {requirement}{extra}")]
            } else {
                failures
            };
            RequirementOutcome {
                requirement: requirement.clone(),
                passed,
                details,
            }
        })
        .collect()
}

/// The verdict of a set of outcomes.
pub fn verdict(outcomes: &[RequirementOutcome]) -> Verdict {
    if outcomes.is_empty() {
        Verdict::None
    } else if outcomes.iter().all(|o| o.passed) {
        Verdict::Pass
    } else {
        Verdict::Fail
    }
}

fn threads_max(threads: &[ThreadResult]) -> u64 {
    threads.iter().map(|t| t.latency.max).max().unwrap_or(0)
}

fn percentile_of(t: &ThreadResult, p: f64) -> u64 {
    t.latency
        .percentile(p)
        .or_else(|| Histogram::value_at_percentile(&t.histogram, p))
        .unwrap_or(0)
}

fn extreme_deviation(t: &ThreadResult) -> i64 {
    if t.period.max_deviation_ns.unsigned_abs() >= t.period.min_deviation_ns.unsigned_abs() {
        t.period.max_deviation_ns
    } else {
        t.period.min_deviation_ns
    }
}
