//! What a measurement gives back: the raw outcome, each latency, where
//! each side ran, the GPIO edges, and the progress shown while it runs.

use serde::{Deserialize, Serialize};

use latlab_measure::series::SeriesPoint;
use latlab_measure::stats::Stats;
use latlab_measure::worst::WorstSamples;
use latlab_rt::sched::Policy;

/// Where a side ran and what it really got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    /// CPU it was pinned to.
    pub cpu: usize,
    /// Policy it really had (`null` if unknown).
    pub policy: Option<Policy>,
    /// Priority it really had.
    pub priority: i32,
    /// Its memory was locked.
    pub mlocked: bool,
}

/// The progress shown while measuring.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Seconds since the first event.
    pub elapsed_s: f64,
    /// Events answered.
    pub answered: u64,
    /// Events lost so far.
    pub lost: u64,
    /// Largest one-way latency so far, ns.
    pub max_one_way_ns: u64,
    /// Largest round trip so far, ns.
    pub max_round_trip_ns: u64,
}

/// One latency: all samples, the worst, the per-second series.
#[derive(Debug, Clone)]
pub struct LatencyOutput {
    /// Every sample.
    pub stats: Stats,
    /// The worst samples.
    pub worst: WorstSamples,
    /// Per-second max and p99.
    pub series: Vec<SeriesPoint>,
}

/// The raw outcome of a measurement.
#[derive(Debug, Clone)]
pub struct RespondOutput {
    /// Events sent.
    pub sent: u64,
    /// Events answered in time.
    pub answered: u64,
    /// Events not answered within the timeout.
    pub lost: u64,
    /// Stimulus send to responder wake-up.
    pub one_way: LatencyOutput,
    /// Stimulus send to answer received.
    pub round_trip: LatencyOutput,
    /// The round trip ends at the kernel's timestamp of a GPIO edge.
    pub kernel_timestamps: bool,
    /// With `--gpio`: how the kernel's edge timestamps sat against the
    /// stimulus's own clock.
    pub gpio_edges: Option<GpioEdges>,
    /// CLOCK_MONOTONIC of the first event, ns.
    pub start_ns: u64,
    /// CLOCK_MONOTONIC at the end, ns.
    pub end_ns: u64,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// The responder.
    pub responder: Placement,
    /// The stimulus.
    pub stimulus: Placement,
}

/// How the kernel's GPIO edge timestamps sat against the stimulus's own
/// clock. An edge's CLOCK_MONOTONIC timestamp must lie between the send
/// and the stimulus's read of the event; one outside (a line reporting
/// another clock, a driver stamping after the fact) is not used: that
/// round trip ends at the read instead, and the edge is counted here.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct GpioEdges {
    /// Edges whose timestamp lay between the send and the read: their
    /// round trip ends at the kernel's timestamp.
    pub within: u64,
    /// Edges whose timestamp lay outside: their round trip ends at the read.
    pub outside: u64,
    /// Largest delay from an edge's timestamp to the stimulus's read, ns
    /// (what timing the edge in user space would have added).
    pub max_edge_to_read_ns: u64,
    /// Mean of that delay, ns.
    pub mean_edge_to_read_ns: u64,
    /// Sum of those delays, ns (results of several runs merge with it).
    pub sum_edge_to_read_ns: u64,
}

impl GpioEdges {
    /// Where the round trip of one answer ends: the kernel's edge
    /// timestamp when it lies between `sent` and `read`, else `read`.
    pub fn end(&mut self, sent: u64, kernel_ts: u64, read: u64) -> u64 {
        if (sent..=read).contains(&kernel_ts) {
            let late = read - kernel_ts;
            self.within += 1;
            self.max_edge_to_read_ns = self.max_edge_to_read_ns.max(late);
            self.sum_edge_to_read_ns += late;
            self.mean_edge_to_read_ns = self.sum_edge_to_read_ns / self.within;
            kernel_ts
        } else {
            self.outside += 1;
            read
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab's GPIO pair (a CP2112 whose driver polls its pins) showed
    /// that nothing in a result said where a GPIO round trip ended; an
    /// edge stamped outside send..read must not become the round trip.
    #[test]
    fn gpio_round_trips_end_at_the_edge_only_when_it_lies_between_send_and_read() {
        let mut edges = GpioEdges::default();
        assert_eq!(edges.end(1_000, 41_000, 41_500), 41_000);
        assert_eq!(edges.end(2_000, 2_000, 2_100), 2_000);
        // A timestamp from another clock (or after the read) is not used.
        assert_eq!(edges.end(5_000, 1_700_000_000_000, 6_000), 6_000);
        assert_eq!(edges.end(5_000, 4_999, 6_000), 6_000);
        assert_eq!((edges.within, edges.outside), (2, 2));
        assert_eq!(edges.max_edge_to_read_ns, 500);
        assert_eq!(edges.mean_edge_to_read_ns, 300);
        let json = serde_json::to_value(edges).unwrap();
        assert_eq!(
            (json["within"].as_u64(), json["outside"].as_u64()),
            (Some(2), Some(2))
        );
    }
}
