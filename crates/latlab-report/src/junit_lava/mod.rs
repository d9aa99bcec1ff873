//! The formats test farms read: JUnit XML (Jenkins, GitLab, KernelCI's
//! tools) and LAVA's `lava-test-case` lines.
//!
//! A result becomes a [`Suite`] of [`Case`]s, one per requirement (a run
//! without requirements: one case, `latency`, that passes unless the
//! measurement is suspect), each with the figure it was checked on; both
//! formats are rendered from the suite, so they always agree.
//!
//! ```
//! use latlab_report::junit_lava::{junit_xml, lava_lines, Case, Outcome, Suite};
//! let suite = Suite {
//!     name: "latlab.run".into(),
//!     timestamp: "2026-11-24T10:00:00Z".into(),
//!     time_s: 10.0,
//!     properties: vec![("host".into(), "rpi4".into())],
//!     cases: vec![Case {
//!         name: "max-latency".into(),
//!         outcome: Outcome::Fail,
//!         measurement: Some(1250.5),
//!         units: "us",
//!         message: "max latency 1.25 ms > 1 ms".into(),
//!     }],
//! };
//! assert!(junit_xml(&suite).contains(r#"<failure message="max latency 1.25 ms &gt; 1 ms""#));
//! assert_eq!(lava_lines(&suite), "lava-test-case max-latency --result fail --measurement 1250.500 --units us\n");
//! ```

//!
//! [`suite`] holds the suite's types, [`cases`] makes a suite of each
//! document kind, [`junit`] and [`lava`] write it.

pub mod cases;
pub mod junit;
pub mod lava;
pub mod suite;

use latlab_document::{BenchReport, RespondResult, RunDocument};

pub use cases::{lockbench_suite, respond_suite, run_suite};
pub use junit::junit_xml;
pub use lava::lava_lines;
pub use suite::{Case, Outcome, Suite};

use crate::formats::{JunitXml, LavaTestCases};

impl JunitXml for RunDocument {
    fn junit_xml(&self) -> String {
        junit_xml(&run_suite(self))
    }
}

impl JunitXml for RespondResult {
    fn junit_xml(&self) -> String {
        junit_xml(&respond_suite(self))
    }
}

impl JunitXml for BenchReport {
    fn junit_xml(&self) -> String {
        junit_xml(&lockbench_suite(self))
    }
}

impl LavaTestCases for RunDocument {
    fn lava_test_cases(&self) -> String {
        lava_lines(&run_suite(self))
    }
}

impl LavaTestCases for RespondResult {
    fn lava_test_cases(&self) -> String {
        lava_lines(&respond_suite(self))
    }
}

impl LavaTestCases for BenchReport {
    fn lava_test_cases(&self) -> String {
        lava_lines(&lockbench_suite(self))
    }
}
