//! Figures of a peer column from its exact buckets: the percentiles by the
//! nearest-rank rule latlab uses everywhere, with the bucket's label as the
//! value (the tool's own convention), and `None` for a rank past the last
//! bucket (an overflow's value is not known).

use latlab_measure::histogram::Bucket;

use crate::document::{Column, Measurement, PeerSummary};

/// The percentiles a summary keeps.
const KEPT: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// The value at percentile `p` of `buckets` plus `overflows` samples past
/// them: the label of the bucket holding the nearest-rank sample, `None`
/// when that sample is an overflow or there is none.
pub fn percentile(buckets: &[Bucket], overflows: u64, p: f64) -> Option<u64> {
    let in_buckets = buckets
        .iter()
        .fold(0u64, |sum, b| sum.saturating_add(b.count));
    let total = in_buckets.saturating_add(overflows);
    if total == 0 {
        return None;
    }
    // Millionths of a percent in integers, as latlab-measure's histogram
    // does, so 99.9 % of 1000 is rank 999.
    let micro = (p.clamp(0.0, 100.0) * 1e6).round() as u128;
    let rank = (micro * u128::from(total)).div_ceil(100_000_000) as u64;
    let rank = rank.clamp(1, total);
    let mut seen = 0u64;
    for b in buckets {
        seen = seen.saturating_add(b.count);
        if seen >= rank {
            return Some(b.low);
        }
    }
    None
}

/// The sum of `counts`, at most `u64::MAX` (a damaged file's counts can
/// add up past it).
pub fn total(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// A summary of only the count and the extremes a peer printed (its
/// percentiles left for [`with_percentiles`]).
pub fn extremes(
    count: Option<u64>,
    min: Option<u64>,
    mean: Option<f64>,
    max: Option<u64>,
) -> PeerSummary {
    PeerSummary {
        count,
        min,
        mean,
        max,
        ..PeerSummary::default()
    }
}

/// Fills the percentiles of `summary` from the buckets (when there are any).
pub fn with_percentiles(
    mut summary: PeerSummary,
    buckets: Option<&[Bucket]>,
    overflows: u64,
) -> PeerSummary {
    let Some(buckets) = buckets else {
        return summary;
    };
    let [p50, p90, p99, p99_9, p99_99] = KEPT.map(|p| percentile(buckets, overflows, p));
    summary.p50 = p50;
    summary.p90 = p90;
    summary.p99 = p99;
    summary.p99_9 = p99_9;
    summary.p99_99 = p99_99;
    summary
}

/// Buckets of one width from `(label, count)` pairs, non-empty ones only,
/// lowest first (pairs of the same label are added).
pub fn buckets(mut pairs: Vec<(u64, u64)>, width_ns: u64) -> Vec<Bucket> {
    pairs.retain(|&(_, count)| count > 0);
    pairs.sort_unstable_by_key(|&(low, _)| low);
    let mut out: Vec<Bucket> = Vec::with_capacity(pairs.len());
    for (low, count) in pairs {
        match out.last_mut() {
            Some(last) if last.low == low => last.count = last.count.saturating_add(count),
            _ => out.push(Bucket {
                low,
                high: low.saturating_add(width_ns.max(1) - 1),
                count,
            }),
        }
    }
    out
}

/// All columns of a measurement as one (see [`Measurement::pooled`]).
pub fn pool(measurement: &Measurement) -> Column {
    let columns = &measurement.columns;
    let all_known = |f: &dyn Fn(&Column) -> Option<u64>| -> Option<Vec<u64>> {
        columns.iter().map(f).collect::<Option<Vec<u64>>>()
    };
    let counts = all_known(&|c| c.latency.count);
    let count = counts
        .as_ref()
        .map(|c| c.iter().fold(0u64, |sum, &n| sum.saturating_add(n)));
    let min = all_known(&|c| c.latency.min).and_then(|v| v.into_iter().min());
    let max = all_known(&|c| c.latency.max).and_then(|v| v.into_iter().max());
    let mean = match (&counts, count) {
        (Some(counts), Some(total)) if total > 0 => columns
            .iter()
            .zip(counts)
            .map(|(c, &n)| c.latency.mean.map(|m| m * n as f64))
            .sum::<Option<f64>>()
            .map(|sum| sum / total as f64),
        _ => None,
    };
    let histogram = columns
        .iter()
        .map(|c| c.histogram.clone())
        .collect::<Option<Vec<Vec<Bucket>>>>()
        .map(|all| {
            let width = measurement.bucket_ns.unwrap_or(1);
            buckets(
                all.into_iter()
                    .flatten()
                    .map(|b| (b.low, b.count))
                    .collect(),
                width,
            )
        });
    let overflows =
        all_known(&|c| c.overflows).map(|v| v.iter().fold(0u64, |sum, &n| sum.saturating_add(n)));
    let overflow_from_ns = all_known(&|c| c.overflow_from_ns).and_then(|v| v.into_iter().min());
    let summary = extremes(count, min, mean, max);
    let latency = with_percentiles(summary, histogram.as_deref(), overflows.unwrap_or(0));
    Column {
        name: "all".into(),
        cpu: None,
        priority: None,
        interval_ns: None,
        latency,
        histogram,
        overflows,
        overflow_from_ns,
        overflow_cycles: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(low_us: u64, count: u64) -> (u64, u64) {
        (low_us * 1000, count)
    }

    #[test]
    fn nearest_rank_gives_the_bucket_label_and_none_past_the_last_bucket() {
        let buckets = buckets(vec![b(14, 10), b(15, 980), b(40, 9)], 1000);
        assert_eq!(buckets[0].high, 14_999);
        assert_eq!(percentile(&buckets, 1, 0.0), Some(14_000));
        assert_eq!(percentile(&buckets, 1, 50.0), Some(15_000));
        assert_eq!(percentile(&buckets, 1, 99.0), Some(15_000), "rank 990");
        assert_eq!(percentile(&buckets, 1, 99.9), Some(40_000), "rank 999");
        assert_eq!(percentile(&buckets, 1, 100.0), None, "the overflow");
        assert_eq!(percentile(&[], 0, 50.0), None);
        assert_eq!(percentile(&[], 3, 50.0), None);
    }

    #[test]
    fn buckets_drop_empty_ones_and_add_equal_labels() {
        let out = buckets(vec![b(3, 1), b(1, 0), b(2, 2), b(3, 4)], 1000);
        assert_eq!(
            out.iter().map(|b| (b.low, b.count)).collect::<Vec<_>>(),
            [(2000, 2), (3000, 5)]
        );
    }
}
