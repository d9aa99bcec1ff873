//! Agreement of a measurement with the trace of the same run, sample by
//! sample: every sample of a measuring thread is matched to the trace's
//! period that answers the same timer expiry, and latlab's latency is
//! compared with the trace's (the expiry to the switch to the thread).
//!
//! latlab reads its clock after that switch (and, for the signal and timerfd
//! sources, after the kernel re-armed the timer), so it should read a few µs
//! more than the trace, never less. Samples the trace has no period for are
//! counted apart: their timer fired while the thread was still running (it
//! never slept, so there is no wake-up to time), or events were lost.

use std::collections::HashMap;

use serde::Serialize;

use crate::report::PeriodRow;

/// Tolerance within which a sample's intended time (moved by the run's
/// typical offset, see [`agreement`]) and a trace period's armed expiry are
/// the same expiry.
pub const MATCH_WINDOW_NS: u64 = 10_000;

/// One sample of a measurement, as far as the comparison needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasuredSample {
    /// CPU of the measuring thread.
    pub cpu: u32,
    /// Its intended wake-up, CLOCK_MONOTONIC ns.
    pub intended_ns: u64,
    /// Its latency, ns.
    pub latency_ns: u64,
    /// The measurement did not know which expiry this sample answers.
    pub uncertain: bool,
}

impl MeasuredSample {
    /// The samples of a measurement's sample log that have a latency: all
    /// but the early wake-ups (their latency field says how early).
    pub fn from_log(records: &[latlab_measure::samples::SampleRecord]) -> Vec<MeasuredSample> {
        use latlab_measure::samples::SampleRecord;
        records
            .iter()
            .filter(|r| r.flags & SampleRecord::EARLY == 0)
            .map(|r| MeasuredSample {
                cpu: u32::from(r.cpu),
                intended_ns: r.intended_ns,
                latency_ns: u64::from(r.latency_ns),
                uncertain: r.flags & SampleRecord::UNCERTAIN != 0,
            })
            .collect()
    }
}

/// latlab's latency minus the trace's, over the matched samples, ns.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Difference {
    /// Smallest difference.
    pub min: i64,
    /// Median.
    pub p50: i64,
    /// 99th percentile.
    pub p99: i64,
    /// Largest difference.
    pub max: i64,
}

/// How a measurement's samples agree with the trace's view of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Agreement {
    /// Samples compared.
    pub samples: u64,
    /// Samples matched to a trace period of the same expiry.
    pub matched: u64,
    /// Matched samples whose latency is more than 1 µs below the trace's:
    /// impossible unless the measurement is wrong.
    pub below_trace: u64,
    /// latlab minus trace, over the matched samples.
    pub difference: Option<Difference>,
    /// Samples the trace has no period for.
    pub unmatched: u64,
    /// The largest latency among them, ns.
    pub unmatched_max_ns: Option<u64>,
    /// Samples left out because the measurement did not know their expiry.
    pub uncertain: u64,
}

/// Matches `samples` to the trace periods `rows` (the explanation's Table 1)
/// by CPU and armed expiry, and compares their latencies.
///
/// The expiry a sample answers lies at or after its intended time: exactly
/// there for the absolute timers, a little after for those armed relative
/// to a clock read (`itimer`, `rtc`, `nanosleep`), by about the arming
/// call's duration. That offset is taken as the median distance from the
/// samples' intended times to the next expiry, and a sample matches the
/// first expiry from 2 µs before its intended time plus the offset to
/// [`MATCH_WINDOW_NS`] after it (never before the intended time itself).
pub fn agreement(samples: &[MeasuredSample], rows: &[PeriodRow]) -> Agreement {
    let mut by_cpu: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
    for row in rows {
        if let Some(expiry) = row.expiry_ns {
            by_cpu
                .entry(row.cpu)
                .or_default()
                .push((expiry, row.latency_ns));
        }
    }
    for periods in by_cpu.values_mut() {
        periods.sort_unstable();
    }
    let mut result = Agreement {
        samples: samples.len() as u64,
        matched: 0,
        below_trace: 0,
        difference: None,
        unmatched: 0,
        unmatched_max_ns: None,
        uncertain: 0,
    };
    let next_expiry = |sample: &MeasuredSample, from: u64| {
        by_cpu.get(&sample.cpu).and_then(|periods| {
            let at = periods.partition_point(|&(expiry, _)| expiry < from);
            periods.get(at).copied()
        })
    };
    let mut offsets: Vec<u64> = samples
        .iter()
        .filter(|s| !s.uncertain)
        .filter_map(|s| Some(next_expiry(s, s.intended_ns)?.0 - s.intended_ns))
        .collect();
    offsets.sort_unstable();
    let offset = offsets.get(offsets.len() / 2).copied().unwrap_or(0);
    let mut differences = Vec::with_capacity(samples.len());
    for sample in samples {
        if sample.uncertain {
            result.uncertain += 1;
            continue;
        }
        let from = (sample.intended_ns + offset).saturating_sub(2_000);
        let found = next_expiry(sample, from.max(sample.intended_ns))
            .filter(|&(expiry, _)| expiry <= sample.intended_ns + offset + MATCH_WINDOW_NS);
        match found {
            Some((_, trace_latency)) => {
                result.matched += 1;
                let difference = sample.latency_ns as i64 - trace_latency as i64;
                if difference < -1_000 {
                    result.below_trace += 1;
                }
                differences.push(difference);
            }
            None => {
                result.unmatched += 1;
                result.unmatched_max_ns = result.unmatched_max_ns.max(Some(sample.latency_ns));
            }
        }
    }
    differences.sort_unstable();
    if let (Some(&min), Some(&max)) = (differences.first(), differences.last()) {
        let at = |p: f64| {
            differences[((p / 100.0 * differences.len() as f64).ceil() as usize)
                .clamp(1, differences.len())
                - 1]
        };
        result.difference = Some(Difference {
            min,
            p50: at(50.0),
            p99: at(99.0),
            max,
        });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_log_gives_every_sample_but_the_early_ones() {
        use latlab_measure::samples::SampleRecord;
        let record = |latency_ns, flags| SampleRecord {
            intended_ns: 1_000,
            latency_ns,
            cpu: 1,
            flags,
        };
        let samples = MeasuredSample::from_log(&[
            record(5_000, 0),
            record(300, SampleRecord::EARLY),
            record(7_000, SampleRecord::UNCERTAIN | SampleRecord::MISSED),
        ]);
        assert_eq!(samples.len(), 2, "{samples:?}");
        assert_eq!((samples[0].cpu, samples[0].latency_ns), (1, 5_000));
        assert!(!samples[0].uncertain);
        assert_eq!(samples[1].latency_ns, 7_000);
        assert!(samples[1].uncertain);
    }

    fn row(cpu: u32, expiry: u64, latency: u64) -> PeriodRow {
        PeriodRow {
            index: 0,
            pid: 1,
            latency_ns: latency,
            late_count: None,
            intended_ns: expiry,
            expiry_ns: Some(expiry),
            cpu,
            position: 0,
            soft: false,
        }
    }

    fn sample(cpu: u32, intended: u64, latency: u64) -> MeasuredSample {
        MeasuredSample {
            cpu,
            intended_ns: intended,
            latency_ns: latency,
            uncertain: false,
        }
    }

    #[test]
    fn samples_match_by_cpu_and_expiry_and_differences_are_signed() {
        let rows = [
            row(0, 1_000_000, 10_000),
            row(0, 1_100_000, 12_000),
            row(1, 1_000_000, 30_000),
            // An itimer expiry armed 2 µs after latlab's clock read.
            row(1, 1_102_000, 15_000),
        ];
        let samples = [
            sample(0, 1_000_000, 18_000),
            sample(0, 1_100_000, 11_500), // 0.5 µs below: within the clock reads' slack
            sample(1, 1_000_000, 25_000), // 5 µs below the trace: wrong
            sample(1, 1_100_000, 20_000),
            sample(1, 1_200_000, 900_000), // no period in the trace
            MeasuredSample {
                uncertain: true,
                ..sample(0, 1_300_000, 1)
            },
        ];
        let a = agreement(&samples, &rows);
        assert_eq!(
            (a.samples, a.matched, a.unmatched, a.uncertain),
            (6, 4, 1, 1)
        );
        assert_eq!(a.below_trace, 1);
        assert_eq!(a.unmatched_max_ns, Some(900_000));
        let d = a.difference.unwrap();
        assert_eq!((d.min, d.max), (-5_000, 8_000));
    }

    #[test]
    fn a_timer_armed_after_the_clock_read_matches_by_its_typical_offset() {
        // The kernel armed every expiry 40 µs after latlab's intended time (a
        // slow arming call under emulation); one sample is 40 µs off that.
        let rows: Vec<PeriodRow> = (0..9)
            .map(|k| row(0, 1_000_000 * k + 40_000, 20_000))
            .collect();
        let mut samples: Vec<MeasuredSample> =
            (0..8).map(|k| sample(0, 1_000_000 * k, 60_500)).collect();
        samples.push(sample(0, 8_000_000 - 40_000, 100_000));
        let a = agreement(&samples, &rows);
        assert_eq!((a.matched, a.unmatched, a.below_trace), (8, 1, 0));
        assert_eq!(a.difference.unwrap().p50, 40_500);
    }

    #[test]
    fn a_sample_too_far_from_any_expiry_is_unmatched() {
        let mut rows: Vec<PeriodRow> = (0..4).map(|k| row(0, 1_000_000 * k, 4_000)).collect();
        rows.push(row(0, 4_000_000 + MATCH_WINDOW_NS + 1, 4_000));
        let samples: Vec<MeasuredSample> =
            (0..5).map(|k| sample(0, 1_000_000 * k, 5_000)).collect();
        let a = agreement(&samples, &rows);
        assert_eq!((a.matched, a.unmatched), (4, 1));
        assert_eq!(agreement(&samples[..1], &[]).difference, None);
    }
}
