//! `latlab compare ID ID...`: the comparison report of results from the
//! history. It says what it compares: per quantity measured (a run and a
//! watch of the same thread both hold a timer wake-up latency), the
//! results set against the first, and the results it cannot compare with
//! what they hold. When nothing can be compared, the report still shows
//! each result, and the command exits 1.

use std::process::ExitCode;

use anyhow::Context;
use latlab_report::html::{self, comparison, Document, Entry};

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

/// Reads the results from the history, says what is compared with what,
/// and writes the comparison report.
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
    // In the messages a result is named by its id, then by its name in
    // the report (what tells the results apart, or its --label).
    let names = if args.output.labels.is_empty() {
        html::auto_labels(&documents)
    } else {
        args.output.labels.clone()
    };
    let entries: Vec<Entry> = documents
        .iter()
        .zip(names.iter().zip(&args.ids))
        .map(|(document, (name, id))| Entry {
            label: format!("id {id} ({name})"),
            document: document.clone(),
        })
        .collect();
    let plan = comparison::plan(&entries);
    for line in plan.describe(&entries) {
        eprintln!("{line}");
    }
    let nothing_compared = plan.compared.is_empty();
    write_report(documents, &args.output, &[])?;
    if nothing_compared {
        anyhow::bail!(
            "nothing compared: no two of these results hold the same latency distribution (above); \
             the report shows each on its own. To compare, give ids of results that measure the \
             same quantity (`latlab history --kind KIND` lists the results of one kind)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
