//! `latlab run`: periodic wake-up latency and period accuracy.

use std::process::ExitCode;

/// Arguments of `latlab run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {}

/// Runs the measurement.
pub fn execute(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
