//! latlab-measure: the measurement engine.
//!
//! - [`histogram`]: a log-linear histogram that never drops a sample;
//! - [`stats`]: count/min/mean/stddev/percentiles/max over nanosecond samples;
//! - [`worst`], [`series`], [`period`]: worst samples, per-second max/p99,
//!   period accuracy;
//! - [`timer`]: the wake-up sources; [`engine`]: the measurement threads;
//! - [`samples`]: the per-sample log; [`result`]: the JSON schema;
//!   [`requirements`]: limits, profiles and the verdict; [`units`]: durations.
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

#![warn(missing_docs)]

pub mod classes;
pub mod engine;
pub mod histogram;
pub mod period;
pub mod requirements;
pub mod result;
pub mod samples;
pub mod series;
pub mod stats;
pub mod timer;
pub mod units;
pub mod worst;

mod error;
pub use error::MeasureError;
