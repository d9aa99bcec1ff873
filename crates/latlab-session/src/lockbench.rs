//! `latlab lockbench`'s document, assembled from the variants' results and
//! the lifecycle.

use latlab_lock::bench::{self, BenchConfig};
use latlab_lock::document::{self, BenchReport};

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
        schema: document::BENCH_SCHEMA.into(),
        schema_version: document::BENCH_SCHEMA_VERSION,
        id: Some(latlab_document::new_id()),
        started_at: latlab_rt::clock::format_utc(life.started()),
        load,
        system: life.system.clone(),
        command_line: std::env::args().collect(),
        autogroup: latlab_rt::autogroup::current(),
        config: cfg.clone(),
        goal: bench::goal_checks(&results),
        results,
    }
}
