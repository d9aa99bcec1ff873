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

    /// A histogram rebuilt from buckets (counted elsewhere with the same
    /// scheme, or read from a file of schema version 1).
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

/// One non-empty bucket: `count` values in `low..=high` nanoseconds (the
/// form histograms had in result files of schema version 1, still read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    /// Smallest value the bucket holds, ns.
    pub low: u64,
    /// Largest value the bucket holds, ns.
    pub high: u64,
    /// Number of values in the bucket.
    pub count: u64,
}

/// Empty buckets a run bridges with zeros rather than starting a new run:
/// a zero costs two bytes of JSON (`0,`), a new run about nine (`],[45312,`).
const MAX_ZEROS_IN_RUN: usize = 3;

impl Histogram {
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The non-empty buckets as runs of neighbouring buckets, lowest first
    /// (see [`runs_of`]): what a histogram is in JSON.
    pub fn runs(&self) -> Vec<Vec<u64>> {
        runs_of(
            self.counts
                .iter()
                .enumerate()
                .map(|(index, &count)| (index, count)),
        )
    }

    /// Adds `count` values to the bucket at `index` (a stored histogram).
    fn add_stored(&mut self, index: usize, count: u64) -> Result<(), String> {
        if count == 0 {
            return Ok(());
        }
        let Some(slot) = self.counts.get_mut(index) else {
            return Err(format!("a run goes past the last bucket ({BUCKETS})"));
        };
        *slot = slot
            .checked_add(count)
            .ok_or("a bucket's count overflows")?;
        self.total = self
            .total
            .checked_add(count)
            .ok_or("the total count overflows")?;
        let (low, high) = bucket_range(index);
        self.min = self.min.min(low);
        self.max = self.max.max(high);
        Ok(())
    }
}

/// Bucket counts (`(index, count)`, lowest index first; empty buckets may be
/// left out) as runs of neighbouring buckets: each the lowest value of its
/// first bucket (ns) and the counts of that bucket and the ones after it,
/// with up to [`MAX_ZEROS_IN_RUN`] empty buckets inside a run as zeros. The
/// bucket scheme is fixed, so a bucket's index (and so its `high`) follows
/// from `low`. The JSON form of every histogram of this scheme, kept whole
/// ([`Histogram`]) or only its buckets in use (`latlab watch`'s).
pub fn runs_of(counts: impl IntoIterator<Item = (usize, u64)>) -> Vec<Vec<u64>> {
    let mut runs: Vec<Vec<u64>> = Vec::new();
    let mut previous: Option<usize> = None;
    for (index, count) in counts {
        if count == 0 {
            continue;
        }
        match (previous, runs.last_mut()) {
            (Some(p), Some(run)) if index > p && index - p - 1 <= MAX_ZEROS_IN_RUN => {
                run.extend(std::iter::repeat_n(0, index - p - 1));
                run.push(count);
            }
            _ => runs.push(vec![bucket_range(index).0, count]),
        }
        previous = Some(index);
    }
    runs
}

/// A stored histogram read as bucket counts (`(index, count)` in the order
/// written, zeros left out): the runs of [`runs_of`] or, in files of schema
/// version 1, `{low, high, count}` buckets. For histograms that keep only
/// the buckets in use; [`Histogram`] reads itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCounts(pub Vec<(usize, u64)>);

impl<'de> Deserialize<'de> for StoredCounts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Vec::<Stored>::deserialize(deserializer)?;
        let mut counts = Vec::new();
        for element in stored {
            match element {
                Stored::Bucket(b) => counts.push((bucket_of(b.low), b.count)),
                Stored::Run(run) => {
                    let first = bucket_of(run[0]);
                    counts.extend(run[1..].iter().enumerate().map(|(i, &n)| (first + i, n)));
                }
            }
        }
        if let Some((index, _)) = counts.iter().find(|(index, _)| *index >= BUCKETS) {
            return Err(serde::de::Error::custom(format!(
                "a run goes past the last bucket ({BUCKETS}): bucket {index}"
            )));
        }
        counts.retain(|&(_, n)| n > 0);
        Ok(StoredCounts(counts))
    }
}

/// In JSON a histogram is its runs of non-empty buckets (see
/// [`Histogram::runs`]); the `{low, high, count}` buckets of earlier files
/// read too.
impl schemars::JsonSchema for Histogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Histogram".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let bucket = generator.subschema_for::<Bucket>();
        schemars::json_schema!({
            "description": "The non-empty buckets in runs of neighbours, lowest first: `[low, count, count, ...]` is the bucket holding `low` ns (its lowest value) and the ones after it, each with its count (0 for an empty bucket inside a run). Buckets are 1 ns wide below 1024 ns; above, a power-of-two range [2^e, 2^(e+1)) ns has 512 buckets 2^(e-9) ns wide. Files of schema version 1 hold `{low, high, count}` buckets instead; both read.",
            "type": "array",
            "items": {
                "anyOf": [
                    {
                        "description": "A run: the lowest value (ns) of its first bucket, then the count of each bucket from there.",
                        "type": "array",
                        "items": {"type": "integer", "minimum": 0},
                        "minItems": 2
                    },
                    bucket
                ]
            }
        })
    }
}

impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.runs())
    }
}

/// One element of a stored histogram: a run (`[low, count, ...]`) or, in
/// files of schema version 1, a bucket (`{low, high, count}`).
enum Stored {
    Run(Vec<u64>),
    Bucket(Bucket),
}

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Element;
        impl<'de> serde::de::Visitor<'de> for Element {
            type Value = Stored;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a histogram run `[low, count, ...]` or a bucket `{low, high, count}`")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Stored, A::Error> {
                let mut run = Vec::with_capacity(seq.size_hint().unwrap_or(2));
                while let Some(n) = seq.next_element::<u64>()? {
                    run.push(n);
                }
                if run.len() < 2 {
                    return Err(serde::de::Error::invalid_length(run.len(), &self));
                }
                Ok(Stored::Run(run))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Stored, A::Error> {
                Bucket::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Stored::Bucket)
            }
        }
        deserializer.deserialize_any(Element)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let StoredCounts(counts) = StoredCounts::deserialize(deserializer)?;
        let mut histogram = Histogram::new();
        for (index, count) in counts {
            histogram
                .add_stored(index, count)
                .map_err(serde::de::Error::custom)?;
        }
        Ok(histogram)
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
        // 5000 lies in a bucket 8 ns wide: [5000, 5007].
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

    #[test]
    fn runs_bridge_short_gaps_and_start_anew_after_long_ones() {
        let mut h = Histogram::new();
        // Exact buckets 5, 6, 9 (two empty between), then 20 (ten empty).
        for (value, times) in [(5, 2), (6, 1), (9, 4), (20, 1)] {
            h.record_n(value, times);
        }
        // 5000 lies in [5000, 5007]; the next bucket is [5008, 5015].
        h.record_n(5_000, 3);
        h.record_n(5_010, 1);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, "[[5,2,1,0,0,4],[20,1],[5000,3,1]]");
        let back: Histogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.count(), 12);
        assert_eq!(serde_json::to_string(&Histogram::new()).unwrap(), "[]");
    }

    #[test]
    fn old_bucket_form_reads_to_the_same_histogram() {
        let mut h = Histogram::new();
        for v in (0..40_000u64).map(|i| 2_000 + i * 7919 % 98_000) {
            h.record(v);
        }
        let old: Vec<Bucket> = h.buckets().collect();
        let old_json = serde_json::to_string(&old).unwrap();
        assert!(old_json.starts_with("[{\"low\":"), "{old_json}");
        let back: Histogram = serde_json::from_str(&old_json).unwrap();
        assert_eq!(back, h);
        for p in [50.0, 99.0, 99.9] {
            assert_eq!(back.value_at_percentile(p), h.value_at_percentile(p));
        }
        // A mixed list (a hand-edited file) reads as well.
        let mixed = r#"[{"low":5,"high":5,"count":2},[5000,3,1]]"#;
        let mixed: Histogram = serde_json::from_str(mixed).unwrap();
        assert_eq!(
            (mixed.count(), mixed.min(), mixed.max()),
            (6, Some(5), Some(5_015))
        );
    }

    #[test]
    fn the_json_grows_with_the_buckets_not_the_samples() {
        // Every bucket from 10 to 100 us holds values: the dense middle of a
        // long run. Each costs at most its count's digits and a comma.
        let mut h = Histogram::new();
        let (first, last) = (bucket_of(10_000), bucket_of(100_000));
        for index in first..=last {
            h.record_n(bucket_range(index).0, 1 + index as u64 % 997);
        }
        let buckets = last - first + 1;
        let json = serde_json::to_string(&h).unwrap();
        assert!(
            json.len() <= 4 * buckets + 16,
            "{} bytes for {buckets} buckets",
            json.len()
        );
        // Isolated buckets: a run each, `[low,count],`.
        let mut sparse = Histogram::new();
        for index in (first..=last).step_by(MAX_ZEROS_IN_RUN + 2) {
            sparse.record(bucket_range(index).0);
        }
        let n = sparse.buckets().count();
        let json = serde_json::to_string(&sparse).unwrap();
        assert!(json.len() <= 12 * n, "{} bytes for {n} buckets", json.len());
        assert_eq!(serde_json::from_str::<Histogram>(&json).unwrap(), sparse);
    }

    #[test]
    fn bad_stored_histograms_are_errors_that_say_what_is_wrong() {
        let err = |text: &str| {
            serde_json::from_str::<Histogram>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("[[5]]").contains("[low, count, ...]"),
            "{}",
            err("[[5]]")
        );
        assert!(err("[7]").contains("[low, count, ...]"));
        let past_end = format!("[[{},1,1]]", u64::MAX);
        assert!(
            err(&past_end).contains("past the last bucket"),
            "{}",
            err(&past_end)
        );
        let overflow = format!("[[5,{}],[5,1]]", u64::MAX);
        assert!(err(&overflow).contains("overflows"), "{}", err(&overflow));
    }
}
