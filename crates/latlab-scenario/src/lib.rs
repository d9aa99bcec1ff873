//! The experiments of the papers latlab reproduces (`latlab scenario`), as
//! data: per experiment its title, what it reproduces and its steps, each a
//! latlab command line ([`table`]), made runnable from the options
//! ([`plan`]). A crate of its own: it is neither measuring (latlab-measure)
//! nor rendering (latlab-report, whose characterize constants it uses).

pub mod plan;
pub mod runner;
pub mod table;

pub use plan::{Options, Plan, Step};
pub use runner::{run_steps, StepCodes, StepsRun};
pub use table::{Scenario, SCENARIOS};
