//! `latlab explain`'s arguments resolved into the analysis' options.

use std::path::PathBuf;

use latlab_explain::Options;

use crate::cmd::explain::ExplainArgs;

/// `latlab explain`, resolved.
#[derive(Debug)]
pub struct ExplainRun {
    /// The trace to explain.
    pub trace: PathBuf,
    /// The analysis' options (the run result's steal time read in).
    pub options: Options,
    /// `--json FILE` (`-`: stdout).
    pub json: Option<PathBuf>,
}

/// Validates `args` into an [`ExplainRun`], reading `--run-result`.
pub fn resolve(args: &ExplainArgs) -> anyhow::Result<ExplainRun> {
    let steal_ns = match &args.run_result {
        Some(p) => latlab_explain::steal_from_run_result(p)?,
        None => Vec::new(),
    };
    Ok(ExplainRun {
        trace: args.trace.clone(),
        options: Options {
            pids: args.pid.clone(),
            comms: args.comm.clone(),
            threshold: args.threshold,
            baseline: args.baseline,
            dump_windows: args.dump_windows.clone(),
            steal_ns,
            max_windows: args.max_windows,
        },
        json: args.json.clone(),
    })
}
