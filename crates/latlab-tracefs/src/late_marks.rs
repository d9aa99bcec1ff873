//! A measurement's late samples marked in the trace it records: one
//! `trace_marker` line for every sample at or over the threshold; in
//! flight-recorder mode the first one also stops tracing, named by a line of
//! its own, so the ring buffer keeps what led up to it. Called from the
//! measurement threads: no allocation, and a failed write is counted, never
//! fatal.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::{Capture, TraceFreezer, TraceMarker};

/// A late sample, as the marks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateMark {
    /// CPU of the measuring thread.
    pub cpu: usize,
    /// Its cycle number.
    pub cycle: u64,
    /// Intended wake-up, CLOCK_MONOTONIC ns.
    pub intended_ns: u64,
    /// Actual wake-up, CLOCK_MONOTONIC ns.
    pub actual_ns: u64,
}

/// The marks of one capture (share it between the measurement threads in
/// an `Arc`).
#[derive(Debug)]
pub struct LateMarks {
    marker: TraceMarker,
    freezer: Option<TraceFreezer>,
    threshold_ns: u64,
    failed: AtomicU64,
    last_errno: AtomicI32,
    stopped_by: OnceLock<LateMark>,
}

impl LateMarks {
    /// Marks for `capture`'s trace; samples are marked at or over
    /// `threshold_ns`, and with `flight_recorder` the first freezes it.
    pub fn new(capture: &Capture, threshold_ns: u64, flight_recorder: bool) -> LateMarks {
        LateMarks {
            marker: capture.marker(),
            freezer: flight_recorder.then(|| capture.freezer()),
            threshold_ns,
            failed: AtomicU64::new(0),
            last_errno: AtomicI32::new(0),
            stopped_by: OnceLock::new(),
        }
    }

    /// The threshold, ns.
    pub fn threshold_ns(&self) -> u64 {
        self.threshold_ns
    }

    /// Marks `sample` (a sample at or over the threshold) in the trace and,
    /// for a flight recorder's first, stops tracing (a race between two
    /// CPUs has one winner: the one kept).
    pub fn mark(&self, sample: LateMark) {
        // Counted, not fatal: the measurement goes on; the run reports them.
        if let Err(err) =
            self.marker
                .write_sample(sample.cycle, sample.intended_ns, sample.actual_ns)
        {
            self.failed.fetch_add(1, Ordering::Relaxed);
            self.last_errno
                .store(err.raw_os_error().unwrap_or(0), Ordering::Relaxed);
        }
        if let Some(freezer) = &self.freezer {
            if self.stopped_by.set(sample).is_ok() {
                let _ = self.marker.write_stop(
                    sample.cpu as u64,
                    sample.cycle,
                    sample.actual_ns.saturating_sub(sample.intended_ns),
                    self.threshold_ns,
                );
                let _ = freezer.freeze();
            }
        }
    }

    /// The sample that stopped the flight recorder, if one did.
    pub fn stopped_by(&self) -> Option<LateMark> {
        self.stopped_by.get().copied()
    }

    /// How many marker lines the kernel refused, and the last error; `None`
    /// when none was.
    pub fn failures(&self) -> Option<(u64, std::io::Error)> {
        let failed = self.failed.load(Ordering::Relaxed);
        (failed > 0).then(|| {
            let errno = self.last_errno.load(Ordering::Relaxed);
            (failed, std::io::Error::from_raw_os_error(errno))
        })
    }
}
