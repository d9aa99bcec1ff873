//! latlab-report: renderers from results to bytes. Every renderer is a pure
//! function of a result; none does I/O.
//!
//! - [`table`]: the terminal tables of `latlab run`;
//! - [`run_summary`]: what `latlab run` prints at each verbosity;
//! - [`cyclictest`]: cyclictest's `-h` histogram text, for tools that plot it;
//! - [`rt_tests`]: rt-tests' `--json` format;
//! - [`respond`]: the terminal summary and histogram text of `latlab respond`;
//! - [`peer`]: a peer tool's result read by latlab (cyclictest, rt-tests, rtla);
//! - [`html`]: the self-contained HTML report with SVG plots;
//! - [`farm`]: JUnit XML and LAVA test case lines, for test farms;
//! - [`dashboard`]: the pages of `latlab serve`.
//!
//! ```
//! use latlab_report::table::us;
//! assert_eq!(us(12_345), "12.3");
//! ```

#![warn(missing_docs)]

pub mod cyclictest;
pub mod dashboard;
pub mod explain;
pub mod farm;
pub mod formats;
pub mod history;
pub mod html;
pub mod load;
pub mod lockbench;
pub mod peer;
pub mod respond;
pub mod rt_tests;
pub mod run_summary;
pub mod simulation;
pub mod table;
pub mod watch;

#[cfg(test)]
pub(crate) mod fixture;
