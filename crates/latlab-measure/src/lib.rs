//! latlab-measure: the measurement engine.
//!
//! - [`histogram`]: a log-linear histogram that never drops a sample;
//! - [`stats`]: count/min/mean/stddev/percentiles/max over nanosecond samples.
//!
//! ```
//! use latlab_measure::stats::Stats;
//! let mut stats = Stats::new();
//! for ns in [12_000, 15_000, 90_000] {
//!     stats.record(ns);
//! }
//! let summary = stats.summary();
//! assert_eq!(summary.max, 90_000);
//! assert_eq!(summary.count, 3);
//! ```

pub mod histogram;
pub mod stats;
