//! latlab-report: renderers from results to bytes. Every renderer is a pure
//! function of a result; none does I/O.
//!
//! The crate is laid out by output format, one trait per format
//! ([`formats`]); each format's module renders every document kind it takes:
//!
//! - [`text`]: the terminal text of every kind (`latlab run`'s tables, its
//!   summary at each verbosity, respond, lockbench, explain, load, watch, a
//!   peer tool's result);
//! - [`html`]: the self-contained HTML report with SVG plots;
//! - [`cyclictest`]: cyclictest's `-h` histogram text, for tools that plot it;
//! - [`rt_tests`]: rt-tests' `--json` format;
//! - [`junit_lava`]: JUnit XML and LAVA test case lines, for test farms;
//! - [`dashboard`]: the pages of `latlab serve`.
//!
//! What every format shares: [`units`] (how a quantity is written),
//! [`markup`] (the one XML/HTML escaper) and [`verdict`] (a verdict in words).
//!
//! ```
//! use latlab_report::units::{rate, us};
//! assert_eq!(us(12_345), "12.3");
//! assert_eq!(rate(1.024e9, "bytes"), "1.02 GB/s");
//! ```

#![warn(missing_docs)]

pub mod characterize;
pub mod cyclictest;
pub mod dashboard;
pub mod formats;
pub mod history;
pub mod html;
pub mod junit_lava;
pub mod markup;
pub mod montavista;
pub mod png;
pub mod rt_tests;
pub mod text;
pub mod units;
pub mod verdict;

// The paths the terminal renderers had before the crate was laid out by
// format, kept while the binary's call sites move to `text::...`.
#[doc(hidden)]
pub use text::{explain, load, run as table, run_summary};

#[cfg(test)]
pub(crate) mod fixture;
