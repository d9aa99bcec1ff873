//! `latlab tune`: from the causes of the late wake-ups to fixes applied,
//! verified side by side, kept or dropped, exported, and undone
//! (latlab-tune). Each measurement is `latlab run`, this same binary, as
//! the tune prints it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};

use latlab_document::Document;
use latlab_rt::duration;

use crate::cmd::report::{write_report, OutputArgs};
use crate::lifecycle::outputs::SaveFlags;
use crate::lifecycle::OutputFiles;
use latlab_session::outputs::SaveCopy;
use latlab_tune::command::{self, Options};
use latlab_tune::export;
use latlab_tune::journal;
use latlab_tune::result::TuneResult;

/// Arguments of `latlab tune`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 done (every change restored, or kept with --keep), \
                        1 error (a usage error included; every change restored, or the knobs \
                        that could not be named and kept in the restore file)."
)]
pub struct TuneArgs {
    /// The real-time CPUs (e.g. `1`, `2-3`): measured, and what the fixes keep other work off.
    /// At least one online CPU stays for housekeeping [default: the last CPU].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// The background load of every run (as `latlab run --load`).
    #[arg(long, default_value = "full", value_name = "SPEC")]
    pub load: String,
    /// The deadline the task must meet (e.g. `100us`): the verdict of the before/after runs.
    #[arg(long, value_name = "DURATION", value_parser = duration::latency)]
    pub deadline: Option<u64>,
    /// The baseline's and the final run's length.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration::length_ns)]
    pub duration: u64,
    /// One verification round's length.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration::length_ns)]
    pub round: u64,
    /// Rounds per fix on each side (applied, undone), alternating; 4 is the fewest that
    /// give a 95 % interval.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(4..=20))]
    pub rounds: u32,
    /// SCHED_FIFO priority of the measured task.
    #[arg(long, default_value_t = 95, value_parser = clap::value_parser!(i32).range(2..=99))]
    pub priority: i32,
    /// Add the standard isolation set (IRQs, workqueues, kernel threads, an isolated partition,
    /// idle states, housekeeping sysctls) even where no cause asked for it.
    #[arg(long)]
    pub isolate: bool,
    /// Measure the baseline and print the plan; change nothing.
    #[arg(long)]
    pub plan: bool,
    /// Leave the kept fixes applied at the end (recorded beside the restore file: `--restore`
    /// undoes them later).
    #[arg(long)]
    pub keep: bool,
    /// Undo what tune left changed, and exit: a tune that did not end (SIGKILL, a power cut),
    /// from its restore file, and the fixes an earlier --keep kept.
    #[arg(long, conflicts_with_all = ["plan", "keep", "isolate"])]
    pub restore: bool,
    /// Write what was kept as a tuned profile, a shell script and a sysctl.d file under DIR.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// Write the result (schema latlab.tune) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The saved copy (`<output-dir>/<timestamp>/tune.json`) and the history.
    #[command(flatten)]
    pub save: SaveFlags,
    /// Send the result to a `latlab serve` at URL; when it cannot be reached the result waits
    /// in the spool for the next push.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
    #[command(flatten)]
    pub push_auth: crate::cmd::push::PushAuth,
    /// Directory for the runs' JSON files [default: latlab-tune/<timestamp>].
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
}

/// Runs the tune.
pub fn execute(args: TuneArgs) -> anyhow::Result<ExitCode> {
    if args.restore {
        command::restore(&journal::default_path(), &mut |line| eprintln!("{line}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let options = Options {
        cpus: args.cpus.clone(),
        load: args.load.clone(),
        deadline_ns: args.deadline,
        baseline_ns: args.duration,
        round_ns: args.round,
        pairs: args.rounds,
        priority: args.priority,
        isolate: args.isolate,
        plan_only: args.plan,
        keep: args.keep,
        runs_dir: args.runs_dir.clone(),
        exe: std::env::current_exe()
            .context("finding the latlab binary to run the measurements")?,
        argv: std::env::args().collect(),
    };
    let result = command::tune(&options, &mut |line| eprintln!("tune: {line}"))?;
    write_outputs(&args, &result)?;
    print!("{}", latlab_report::text::tune::text(&result));
    if !result.ending.failed.is_empty() {
        bail!(
            "{} knobs could not be restored (NOT RESTORED above); the restore file keeps them: \
             fix the cause and run `latlab tune --restore`",
            result.ending.failed.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json`, the saved copy and the history, `--push`, `--html`, `--export`:
/// each written even when another fails (the result, when it could be
/// written nowhere, to the temporary directory).
fn write_outputs(args: &TuneArgs, result: &TuneResult) -> anyhow::Result<()> {
    let stamp = latlab_rt::clock::format_stamp(latlab_rt::clock::unix_time_s());
    let save =
        |json: &str, value: &serde_json::Value| args.save.save(&stamp, "tune.json", json, value);
    let saves = !args.save.no_save;
    let save = saves.then_some(&save as SaveCopy<'_>);
    let mut files = OutputFiles::with_result(result, save, "tune.json", args.json.as_deref())?;
    if let Some(url) = &args.push {
        let value = serde_json::to_value(result).context("serializing the result")?;
        crate::cmd::push::push_after_measuring(url, &args.push_auth, &value);
    }
    if let Some(path) = &args.html {
        let out = OutputArgs {
            output: path.clone(),
            labels: Vec::new(),
            title: "latlab tune".into(),
            png: None,
        };
        let document = Document::Tune(Box::new(result.clone()));
        files.other(write_report(vec![document], &out, &[]));
    }
    if let Some(dir) = &args.export {
        let written = export::write_result(dir, result)
            .with_context(|| format!("writing the exports under {}", dir.display()));
        for f in written.iter().flatten() {
            eprintln!("tune: exported {}", f.display());
        }
        files.other(written.map(drop));
    }
    files.finish()
}
