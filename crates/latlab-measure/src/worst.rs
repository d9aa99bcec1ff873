//! The exact N worst samples of a run, with when they happened.

use serde::{Deserialize, Serialize};

/// One of the worst samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorstSample {
    /// Latency, ns.
    pub latency_ns: u64,
    /// Cycle number (0-based activation index of the thread).
    pub cycle: u64,
    /// Intended wake-up time, CLOCK_MONOTONIC ns (same time line as traces with trace_clock=mono).
    pub intended_ns: u64,
    /// Seconds since the start of the run.
    pub offset_s: f64,
    /// CPU of the thread.
    pub cpu: usize,
}

/// Keeps the `capacity` largest samples seen, in constant memory.
#[derive(Debug, Clone)]
pub struct WorstSamples {
    capacity: usize,
    /// Sorted by latency, largest first.
    samples: Vec<WorstSample>,
}

impl WorstSamples {
    /// Keeps up to `capacity` samples.
    pub fn new(capacity: usize) -> Self {
        WorstSamples {
            capacity,
            samples: Vec::with_capacity(capacity + 1),
        }
    }

    /// Offers a sample; kept when it is among the worst so far. Ties keep the earlier one.
    #[inline]
    pub fn offer(&mut self, sample: WorstSample) {
        if self.samples.len() == self.capacity
            && self
                .samples
                .last()
                .is_none_or(|least| sample.latency_ns <= least.latency_ns)
        {
            return;
        }
        let at = self
            .samples
            .partition_point(|s| s.latency_ns >= sample.latency_ns);
        self.samples.insert(at, sample);
        self.samples.truncate(self.capacity);
    }

    /// Adds the samples of `other`.
    pub fn merge(&mut self, other: &WorstSamples) {
        for &s in &other.samples {
            self.offer(s);
        }
    }

    /// The worst samples, largest first.
    pub fn as_slice(&self) -> &[WorstSample] {
        &self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(latency_ns: u64, cycle: u64) -> WorstSample {
        WorstSample {
            latency_ns,
            cycle,
            intended_ns: cycle * 1000,
            offset_s: 0.0,
            cpu: 0,
        }
    }

    #[test]
    fn keeps_exactly_the_largest_in_order() {
        let mut w = WorstSamples::new(3);
        for (cycle, latency) in [5u64, 1, 9, 7, 3, 9, 8].into_iter().enumerate() {
            w.offer(s(latency, cycle as u64));
        }
        let kept: Vec<_> = w
            .as_slice()
            .iter()
            .map(|x| (x.latency_ns, x.cycle))
            .collect();
        assert_eq!(kept, vec![(9, 2), (9, 5), (8, 6)]);
    }

    #[test]
    fn merge_keeps_global_worst() {
        let mut a = WorstSamples::new(2);
        let mut b = WorstSamples::new(2);
        a.offer(s(10, 0));
        a.offer(s(1, 1));
        b.offer(s(20, 0));
        b.offer(s(5, 1));
        a.merge(&b);
        let kept: Vec<_> = a.as_slice().iter().map(|x| x.latency_ns).collect();
        assert_eq!(kept, vec![20, 10]);
    }
}
