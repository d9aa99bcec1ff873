//! `latlab lockbench`'s document, assembled from the variants' results and
//! the lifecycle.

use latlab_lock::bench::{self, BenchConfig};
use latlab_lock::document::BenchReport;

use crate::Lifecycle;

/// The benchmark's document: its configuration, the variants' results and
/// the goal checks, with the machine and the load.
pub fn assemble_report(
    cfg: &BenchConfig,
    results: Vec<latlab_lock::bench::VariantResult>,
    load: Option<latlab_load::LoadReport>,
    life: &Lifecycle,
) -> BenchReport {
    BenchReport {
        envelope: latlab_document::Envelope::at(
            std::env::args().collect(),
            life.started(),
            life.system.clone(),
        )
        .with_warnings(life.warnings()),
        load,
        autogroup: latlab_rt::autogroup::current(),
        config: cfg.clone(),
        goal: bench::goal_checks(&results),
        results,
    }
}
