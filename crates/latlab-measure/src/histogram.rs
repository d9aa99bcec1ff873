//! A log-linear latency histogram that never drops a sample.
//!
//! Values below 2^[`PRECISION_BITS`] ns are counted exactly (1 ns buckets).
//! Above that, every power-of-two range is split into 2^([`PRECISION_BITS`]-1)
//! equal buckets, so a bucket is never wider than 1/512 of its lower bound
//! (0.2 %). The buckets cover the whole `u64` range, so there is no overflow
//! bucket that loses values, and the memory is fixed (about 224 KiB) however
//! long a run lasts.

use serde::{Deserialize, Serialize};

/// Bits of precision: values below `2^PRECISION_BITS` are exact.
pub const PRECISION_BITS: u32 = 10;
const EXACT: u64 = 1 << PRECISION_BITS;
const HALF: u64 = EXACT / 2;
/// Number of buckets needed to cover every `u64`.
const BUCKETS: usize = (EXACT + (64 - PRECISION_BITS as u64) * HALF) as usize;

/// Index of the bucket that holds `value`.
#[inline]
fn bucket_of(value: u64) -> usize {
    if value < EXACT {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros(); // >= PRECISION_BITS
    let shift = exponent - PRECISION_BITS + 1;
    let mantissa = value >> shift; // in [HALF, EXACT)
    (EXACT + u64::from(exponent - PRECISION_BITS) * HALF + (mantissa - HALF)) as usize
}

/// Smallest and largest value bucket `index` holds (`low..=high` ns), or
/// `None` past the last bucket: for counts made elsewhere with the same
/// scheme (`latlab watch` counts in the kernel by bucket index).
pub fn bucket_bounds(index: usize) -> Option<(u64, u64)> {
    (index < BUCKETS).then(|| bucket_range(index))
}

/// The index of the bucket that holds `value` (see [`bucket_bounds`]).
pub fn bucket_index(value: u64) -> usize {
    bucket_of(value)
}

/// Smallest and largest value a bucket holds.
#[inline]
fn bucket_range(index: usize) -> (u64, u64) {
    let index = index as u64;
    if index < EXACT {
        return (index, index);
    }
    let group = (index - EXACT) / HALF;
    let mantissa = HALF + (index - EXACT) % HALF;
    let shift = group as u32 + 1;
    let low = mantissa << shift;
    let high = low.wrapping_add((1u64 << shift) - 1);
    (low, if high < low { u64::MAX } else { high })
}

/// A fixed-size log-linear histogram of nanosecond values.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total && self.counts == other.counts
    }
}

impl Histogram {
    /// An empty histogram. Allocates once; recording never allocates.
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Counts one value.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_of(value)] += 1;
        self.total += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Counts `count` occurrences of `value`.
    pub fn record_n(&mut self, value: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.counts[bucket_of(value)] += count;
        self.total += count;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Adds every count of `other` to this histogram.
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Smallest value recorded (exact), or `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    /// Largest value recorded (exact), or `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The value at percentile `p` (0..=100) by the nearest-rank rule: the
    /// smallest recorded value such that at least `p` % of the values are at
    /// or below it. Exact below 2^[`PRECISION_BITS`] ns; above, the upper
    /// bound of the bucket (never an underestimate), clamped to the exact
    /// min and max. `None` when empty.
    pub fn value_at_percentile(&self, p: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        // Integer arithmetic in millionths of a percent, so 99.9 % of 1000
        // is rank 999 and not 1000 through floating-point rounding.
        let micro = (p.clamp(0.0, 100.0) * 1e6).round() as u128;
        let scale = 100_000_000u128;
        let rank = (micro * u128::from(self.total)).div_ceil(scale) as u64;
        let rank = rank.clamp(1, self.total);
        let mut seen = 0u64;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (_, high) = bucket_range(index);
                return Some(high.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Number of values at or below `value` (bucket resolution: a bucket
    /// counts when its upper bound is at or below `value`).
    pub fn count_at_or_below(&self, value: u64) -> u64 {
        self.buckets()
            .take_while(|b| b.high <= value)
            .map(|b| b.count)
            .sum()
    }

    /// The non-empty buckets in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(index, &count)| {
                let (low, high) = bucket_range(index);
                Bucket { low, high, count }
            })
    }

    /// A histogram rebuilt from buckets (as stored in a result file).
    pub fn from_buckets(buckets: &[Bucket]) -> Self {
        let mut histogram = Histogram::new();
        for bucket in buckets {
            histogram.counts[bucket_of(bucket.low)] += bucket.count;
            histogram.total += bucket.count;
            if bucket.count > 0 {
                histogram.min = histogram.min.min(bucket.low);
                histogram.max = histogram.max.max(bucket.high);
            }
        }
        histogram
    }
}

/// One non-empty bucket: `count` values in `low..=high` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    /// Smallest value the bucket holds, ns.
    pub low: u64,
    /// Largest value the bucket holds, ns.
    pub high: u64,
    /// Number of values in the bucket.
    pub count: u64,
}

/// In JSON a histogram is its non-empty buckets, lowest first.
impl schemars::JsonSchema for Histogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Histogram".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = Vec::<Bucket>::json_schema(generator);
        schema.insert(
            "description".into(),
            "The non-empty buckets, lowest first: `count` values in `low..=high` ns each.".into(),
        );
        schema
    }
}

impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.buckets())
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let buckets = Vec::<Bucket>::deserialize(deserializer)?;
        Ok(Histogram::from_buckets(&buckets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_whole_u64_range_without_gaps() {
        let mut expected_low = 0u64;
        for index in 0..BUCKETS {
            let (low, high) = bucket_range(index);
            assert_eq!(low, expected_low, "gap before bucket {index}");
            assert!(high >= low);
            assert_eq!(bucket_of(low), index);
            assert_eq!(bucket_of(high), index);
            if high == u64::MAX {
                assert_eq!(index, BUCKETS - 1);
                return;
            }
            expected_low = high + 1;
        }
        panic!("buckets end before u64::MAX");
    }

    #[test]
    fn bucket_width_is_within_precision() {
        for value in [1_500u64, 10_000, 1_000_000, 3_420_000, u64::MAX / 3] {
            let (low, high) = bucket_range(bucket_of(value));
            assert!(low <= value && value <= high);
            assert!((high - low) as f64 <= low as f64 / 512.0, "{value}");
        }
    }

    #[test]
    fn percentiles_are_exact_in_the_exact_range() {
        let mut h = Histogram::new();
        for v in 1..=1000 {
            h.record(v);
        }
        assert_eq!(h.value_at_percentile(50.0), Some(500));
        assert_eq!(h.value_at_percentile(90.0), Some(900));
        assert_eq!(h.value_at_percentile(99.0), Some(990));
        assert_eq!(h.value_at_percentile(99.9), Some(999));
        assert_eq!(h.value_at_percentile(99.99), Some(1000));
        assert_eq!(h.value_at_percentile(100.0), Some(1000));
        assert_eq!(h.value_at_percentile(0.0), Some(1));
        assert_eq!(h.count_at_or_below(10), 10);
    }

    #[test]
    fn percentile_of_large_values_is_bucket_upper_bound_clamped_to_max() {
        let mut h = Histogram::new();
        h.record(5_000);
        h.record(3_420_000);
        // 5000 lies in a bucket 8 ns wide: [4992, 5007].
        assert_eq!(h.value_at_percentile(50.0), Some(5_007));
        assert_eq!(h.value_at_percentile(100.0), Some(3_420_000));
        assert_eq!(h.min(), Some(5_000));
    }

    #[test]
    fn extreme_values_are_never_dropped() {
        let mut h = Histogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
        assert_eq!(h.max(), Some(u64::MAX));
        assert_eq!(h.buckets().map(|b| b.count).sum::<u64>(), 2);
    }

    #[test]
    fn merge_and_serde_round_trip() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        for v in 0..2000 {
            a.record(v * 7);
            b.record(v * 13 + 1);
        }
        a.merge(&b);
        assert_eq!(a.count(), 4000);
        let json = serde_json::to_string(&a).unwrap();
        let back: Histogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.value_at_percentile(99.0), a.value_at_percentile(99.0));
    }
}
