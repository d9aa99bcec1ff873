//! Requirements a run must meet, and the named profiles from the papers.
//!
//! A violated requirement makes `latlab run` exit with code 2 and print the
//! verdict in words: `FAIL: CPU1 max 3.42 ms > 1.00 ms (cycle 8123)`.

use serde::{Deserialize, Serialize};

use crate::histogram::Histogram;
use crate::period::PeriodSummary;
use crate::result::{ThreadResult, Verdict};
use crate::stats::Summary;
use crate::units::{format_ns, parse_fraction};
use crate::worst::WorstSample;

/// One requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// The named profiles: (name, description), loosest first.
pub const PROFILES: [(&str, &str); 4] = [
    (
        "emblix-class1",
        "Emblix class 1 (100 ms, e.g. multimedia and network devices): worst case below 100 ms",
    ),
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
        "emblix-class1" => vec![Requirement::MaxLatency {
            limit_ns: 100_000_000,
        }],
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
        limit_ns: latlab_rt::duration::latency(limit)
            .map_err(|e| format!("the limit of {text:?}: {e}"))?,
    })
}

/// The requirements given on a command line, in the order they are
/// checked: the profiles' (see [`profile`]), then `max_latency_ns`, then each
/// percentile.
pub fn combine(
    profiles: &[Vec<Requirement>],
    max_latency_ns: Option<u64>,
    percentiles: &[Requirement],
) -> Vec<Requirement> {
    let mut all: Vec<Requirement> = profiles.iter().flatten().cloned().collect();
    if let Some(limit_ns) = max_latency_ns {
        all.push(Requirement::MaxLatency { limit_ns });
    }
    all.extend(percentiles.iter().cloned());
    all
}

/// The period tolerance a run checks: `text` (`--period-tolerance`, see
/// [`parse_period_tolerance`]) replaces any the requirements hold (a
/// profile's); without it, the requirements' own, else 5 %.
pub fn with_period_tolerance(
    requirements: &mut Vec<Requirement>,
    text: Option<&str>,
) -> Result<f64, String> {
    let Some(text) = text else {
        return Ok(requirements
            .iter()
            .find_map(|r| match r {
                Requirement::PeriodTolerance { tolerance, .. } => Some(*tolerance),
                _ => None,
            })
            .unwrap_or(0.05));
    };
    let (tolerance, min_share) = parse_period_tolerance(text)?;
    requirements.retain(|r| !matches!(r, Requirement::PeriodTolerance { .. }));
    requirements.push(Requirement::PeriodTolerance {
        tolerance,
        min_share,
    });
    Ok(tolerance)
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementOutcome {
    /// The requirement.
    pub requirement: Requirement,
    /// True when it held on every thread.
    pub passed: bool,
    /// `PASS: ...` or `FAIL: ...` lines, one per violating thread.
    pub details: Vec<String>,
}

/// One labelled set of samples that requirements are checked against: a
/// measurement thread of `latlab run` (`CPU1`), or one latency of
/// `latlab respond` (`one-way`, `round-trip`).
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// How failures name it, e.g. `CPU1`.
    pub label: &'a str,
    /// Its summary figures.
    pub latency: &'a Summary,
    /// Its histogram (for percentiles the summary does not keep).
    pub histogram: &'a Histogram,
    /// Its worst samples, largest first.
    pub worst: &'a [WorstSample],
    /// What a sample's index is called in failures (`cycle`, `event`).
    pub index_name: &'a str,
    /// Period accuracy, when the subject is periodic; period requirements
    /// do not apply to a subject without one.
    pub period: Option<&'a PeriodSummary>,
}

/// Checks every requirement against every thread of `latlab run`.
pub fn evaluate(requirements: &[Requirement], threads: &[ThreadResult]) -> Vec<RequirementOutcome> {
    let labels: Vec<String> = threads.iter().map(|t| format!("CPU{}", t.cpu)).collect();
    let subjects: Vec<Subject<'_>> = threads
        .iter()
        .zip(&labels)
        .map(|(t, label)| Subject {
            label,
            latency: &t.latency,
            histogram: &t.histogram,
            worst: &t.worst,
            index_name: "cycle",
            period: Some(&t.period),
        })
        .collect();
    evaluate_subjects(requirements, &subjects)
}

/// Checks every requirement against every subject.
pub fn evaluate_subjects(
    requirements: &[Requirement],
    subjects: &[Subject<'_>],
) -> Vec<RequirementOutcome> {
    let overall_max = subjects.iter().map(|t| t.latency.max).max().unwrap_or(0);
    requirements
        .iter()
        .map(|requirement| {
            let mut failures = Vec::new();
            let mut worst_seen = String::new();
            for t in subjects {
                match requirement {
                    Requirement::MaxLatency { limit_ns } => {
                        let max = t.latency.max;
                        if max > *limit_ns {
                            let index = t.worst.first().map(|w| w.cycle).unwrap_or(0);
                            failures.push(format!(
                                "FAIL: {} max {} > {} ({} {index})",
                                t.label,
                                format_ns(max),
                                format_ns(*limit_ns),
                                t.index_name
                            ));
                        }
                        worst_seen = format!("max {}", format_ns(max.max(overall_max)));
                    }
                    Requirement::Percentile {
                        percentile,
                        limit_ns,
                    } => {
                        let value = percentile_of(t, *percentile);
                        if value > *limit_ns {
                            failures.push(format!(
                                "FAIL: {} p{percentile} {} > {}",
                                t.label,
                                format_ns(value),
                                format_ns(*limit_ns)
                            ));
                        }
                    }
                    Requirement::PeriodTolerance {
                        tolerance,
                        min_share,
                    } => {
                        let Some(period) = t.period else { continue };
                        let share = period.share_within;
                        if share + 1e-12 < *min_share {
                            failures.push(format!(
                                "FAIL: {} {:.4}% of periods within +-{}% (need {}%), \
                                 {} outside, worst deviation {:+.1} us",
                                t.label,
                                share * 100.0,
                                tolerance * 100.0,
                                min_share * 100.0,
                                period.count - period.within_tolerance,
                                extreme_deviation(period) as f64 / 1e3
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

fn percentile_of(t: &Subject<'_>, p: f64) -> u64 {
    t.latency
        .percentile(p)
        .or_else(|| Histogram::value_at_percentile(t.histogram, p))
        .unwrap_or(0)
}

fn extreme_deviation(period: &PeriodSummary) -> i64 {
    if period.max_deviation_ns.unsigned_abs() >= period.min_deviation_ns.unsigned_abs() {
        period.max_deviation_ns
    } else {
        period.min_deviation_ns
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn combined_requirements_are_the_profiles_then_the_maximum_then_the_percentiles() {
        let percentile = parse_percentile("99.9:40us").unwrap();
        let all = combine(
            &[
                profile("moblin-ivi").unwrap(),
                profile("emblix-class3").unwrap(),
            ],
            Some(1_000),
            std::slice::from_ref(&percentile),
        );
        let mut expected = profile("moblin-ivi").unwrap();
        expected.extend(profile("emblix-class3").unwrap());
        expected.push(Requirement::MaxLatency { limit_ns: 1_000 });
        expected.push(percentile);
        assert_eq!(all, expected);
        assert!(combine(&[], None, &[]).is_empty());
    }

    #[test]
    fn a_given_period_tolerance_replaces_the_profiles() {
        let profile = || {
            vec![super::Requirement::PeriodTolerance {
                tolerance: 0.05,
                min_share: 1.0,
            }]
        };
        let mut reqs = profile();
        assert_eq!(super::with_period_tolerance(&mut reqs, None), Ok(0.05));
        assert_eq!(reqs.len(), 1);
        let mut reqs = profile();
        assert_eq!(
            super::with_period_tolerance(&mut reqs, Some("10%@99")),
            Ok(0.1)
        );
        assert_eq!(reqs.len(), 1, "{reqs:?}");
        assert_eq!(
            super::with_period_tolerance(&mut Vec::new(), None),
            Ok(0.05)
        );
    }

    use super::*;
    use crate::stats::Stats;
    use crate::worst::WorstSamples;

    #[test]
    fn subjects_without_period_are_named_by_label_and_index_name() {
        let mut stats = Stats::new();
        let mut worst = WorstSamples::new(4);
        for (i, ns) in [10_000u64, 55_000, 20_000].into_iter().enumerate() {
            stats.record(ns);
            worst.offer(WorstSample {
                latency_ns: ns,
                cycle: i as u64,
                intended_ns: 0,
                offset_s: 0.0,
                cpu: 1,
            });
        }
        let summary = stats.summary();
        let subject = Subject {
            label: "one-way",
            latency: &summary,
            histogram: stats.histogram(),
            worst: worst.as_slice(),
            index_name: "event",
            period: None,
        };
        let outcomes = evaluate_subjects(&profile("moblin-ivi").unwrap(), &[subject]);
        assert_eq!(
            outcomes[0].details,
            vec!["FAIL: one-way max 55.0 us > 40.0 us (event 1)".to_string()]
        );
        assert!(
            outcomes[1].passed,
            "no period: the period requirement does not apply"
        );
        assert_eq!(verdict(&outcomes), Verdict::Fail);
    }

    #[test]
    fn a_percentile_limit_takes_a_unit() {
        assert_eq!(
            parse_percentile("99.9:40us"),
            Ok(Requirement::Percentile {
                percentile: 99.9,
                limit_ns: 40_000
            })
        );
        let err = parse_percentile("99:40").unwrap_err();
        assert!(err.contains("give a unit: 40us or 40ms"), "{err}");
    }
}
