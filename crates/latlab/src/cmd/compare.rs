//! `latlab compare ID ID...`: the comparison report of results from the history.

use std::process::ExitCode;

use anyhow::Context;
use latlab_report::html::Document;

use crate::cmd::history::DbArgs;
use crate::cmd::report::{write_report, OutputArgs};

/// Arguments of `latlab compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Ids from `latlab history`; the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "ID")]
    pub ids: Vec<i64>,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Reads the results from the history and writes the comparison report.
pub fn execute(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let history = args.db.open_existing()?;
    let documents = args
        .ids
        .iter()
        .map(|&id| {
            let value = history.get(id)?;
            Document::from_value(value)
                .with_context(|| format!("result {id} of {}", history.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    write_report(documents, &args.output, &[])?;
    Ok(ExitCode::SUCCESS)
}
