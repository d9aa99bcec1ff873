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
use latlab_tune::bootline::{self, BootFacts};
use latlab_tune::export;
use latlab_tune::journal;
use latlab_tune::result::TuneResult;
use latlab_tune::rounds::{Load, Measure};
use latlab_tune::session::{self, Request};

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
    let journal_path = journal::default_path();
    if args.restore {
        return restore(&journal_path);
    }
    if let Some(stale) = journal::check_stale(&journal_path) {
        bail!("{}", stale.message);
    }
    if !latlab_rt::privilege::is_root() {
        bail!(
            "latlab tune reads the kernel trace and changes system settings: run it as root \
             (sudo latlab tune ...); --plan changes nothing but still traces the baseline"
        );
    }
    if let Some(kept) = journal::kept_notice(&journal::kept_path(&journal_path)) {
        eprintln!("tune: {kept}");
    }
    let inventory = latlab_tune::knobs::inventory();
    let online = inventory.cpus.clone();
    let rt = match &args.cpus {
        Some(list) => {
            latlab_rt::sched::parse_cpu_list(list).with_context(|| format!("--cpus {list}"))?
        }
        None => online.last().copied().into_iter().collect(),
    };
    let housekeeping = latlab_tune::plan::housekeeping(&rt, &online).map_err(anyhow::Error::msg)?;
    let dir = args.runs_dir.clone().unwrap_or_else(|| {
        PathBuf::from("latlab-tune")
            .join(latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()).replace(':', ""))
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    latlab_rt::stop::install_with(latlab_rt::stop::Signals::AlwaysCleanUp)?;
    // A closed terminal or a dropped ssh session must not kill a tune
    // between a change and its restore: it runs on to its end (and
    // restores); Ctrl-C and SIGTERM stop it.
    // SAFETY: setting a signal's disposition to ignore.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let mut req = Request {
        measure: Measure {
            exe: std::env::current_exe()
                .context("finding the latlab binary to run the measurements")?,
            cpus: latlab_fix::cpu_list(&rt),
            load: args.load.clone(),
            priority: args.priority,
            dir: dir.clone(),
            load_pid: None,
        },
        rt: rt.clone(),
        housekeeping: housekeeping.clone(),
        baseline_ns: args.duration,
        round_ns: args.round,
        pairs: args.rounds,
        isolate: args.isolate,
        plan_only: args.plan,
        keep: args.keep,
        deadline_ns: args.deadline,
        journal: journal_path,
    };
    let envelope: latlab_envelope::Envelope<latlab_tune::result::TuneSchema> =
        latlab_envelope::Envelope::new(std::env::args().collect());
    let mut say = |line: &str| eprintln!("tune: {line}");
    let preempt_rt = envelope.system.preemption_model.as_deref() == Some("rt");
    let facts = |needs| {
        BootFacts::from_system(
            &envelope.system,
            &rt,
            &housekeeping,
            &online,
            args.priority as u32,
            needs,
        )
    };
    // The CPUs the command line can take (not the boot CPU), before anything is measured.
    bootline::boot_line(&facts(Vec::new()), false)?;
    let sys = latlab_tune::plan::SystemView::of(&inventory, preempt_rt);
    // One load for the whole tune, beside the runs (they run --load none):
    // stopped when `load` drops, on every way out of this function.
    let load = Load::start(
        &req.measure.exe,
        &args.load,
        86_400 * 1_000_000_000,
        &dir.join("load.json"),
    )?;
    req.measure.load_pid = load.pid();
    let mut planned = session::baseline_and_plan(&req, &sys, &mut say)?;
    let boot = bootline::boot_line(&facts(planned.plan.boot.clone()), args.isolate)?;
    let (after, ending, partition) = if args.plan || latlab_rt::stop::requested() {
        (None, Default::default(), None)
    } else {
        session::verify_and_end(&req, &mut planned, &mut say)?
    };
    drop(load);
    let result = session::result(envelope, &req, planned, boot, after, ending, partition);
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

/// `--json`, the saved copy and the history, `--push`, `--html`, `--export`.
fn write_outputs(args: &TuneArgs, result: &TuneResult) -> anyhow::Result<()> {
    let value = serde_json::to_value(result).context("serializing the result")?;
    let stamp = latlab_rt::clock::format_stamp(latlab_rt::clock::unix_time_s());
    let json = serde_json::to_string_pretty(&value)? + "\n";
    args.save.save(&stamp, "tune.json", &json, &value)?;
    if let Some(url) = &args.push {
        crate::cmd::push::push_after_measuring(url, &args.push_auth, &value);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, &json).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("tune: result in {}", path.display());
    }
    if let Some(path) = &args.html {
        let out = OutputArgs {
            output: path.clone(),
            labels: Vec::new(),
            title: "latlab tune".into(),
            png: None,
        };
        write_report(vec![Document::Tune(Box::new(result.clone()))], &out, &[])?;
    }
    if let Some(dir) = &args.export {
        let kept: Vec<_> = result
            .fixes
            .iter()
            .filter_map(export::Kept::from_planned)
            .collect();
        let files =
            export::write_exports(dir, &kept, &result.boot.parameters, &result.settings.cpus)
                .with_context(|| format!("writing the exports under {}", dir.display()))?;
        let script = files.tuned_script.iter();
        for f in [&files.tuned, &files.script, &files.sysctl]
            .into_iter()
            .chain(script)
        {
            eprintln!("tune: exported {}", f.display());
        }
    }
    Ok(())
}

/// `--restore`: an unfinished tune's changes first (they were made last),
/// then what `--keep` kept.
fn restore(path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let kept = journal::kept_path(path);
    let files = [
        (path, "left by a tune that did not end"),
        (kept.as_path(), "kept with --keep"),
    ];
    let mut failed = 0;
    let mut found = false;
    for (file, whose) in files {
        if !file.exists() {
            continue;
        }
        found = true;
        let report = journal::restore_file(file)?;
        eprintln!(
            "latlab tune --restore: {} ({whose}): {} restored, {} not needed, {} failed",
            file.display(),
            report.restored.len(),
            report.dropped.len(),
            report.failed.len()
        );
        for (knob, old) in &report.restored {
            eprintln!("  restored {knob} = {old}");
        }
        for (knob, why) in &report.dropped {
            eprintln!("  not restored {knob}: {why}");
        }
        for (knob, old, error) in &report.failed {
            eprintln!("  could not restore {knob} to {old}: {error}");
        }
        failed += report.failed.len();
    }
    if !found {
        eprintln!(
            "latlab tune --restore: nothing to restore (neither {} nor {} exists)",
            path.display(),
            kept.display()
        );
    }
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        bail!("{failed} knobs could not be restored (above); their file keeps them")
    }
}
