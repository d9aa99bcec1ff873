//! `latlab tune` as the CLI runs it: from what the user asked
//! ([`Options`]) to the result ([`tune`]), and `--restore` ([`restore`]).
//! The binary parses the flags, writes the outputs and prints.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::bootline::{self, BootFacts};
use crate::journal;
use crate::result::{TuneResult, TuneSchema};
use crate::rounds::{Load, Measure};
use crate::session::{self, Progress, Request};

/// What the user asked of a tune (the flags of `latlab tune`).
#[derive(Debug, Clone)]
pub struct Options {
    /// `--cpus`: the real-time CPUs as a list (`1`, `2-3`); `None`: the last CPU.
    pub cpus: Option<String>,
    /// `--load`: the background load of every run.
    pub load: String,
    /// `--deadline`, ns.
    pub deadline_ns: Option<u64>,
    /// `--duration`: the baseline's and the final run's length, ns.
    pub baseline_ns: u64,
    /// `--round`: one verification round's length, ns.
    pub round_ns: u64,
    /// `--rounds`: rounds per fix on each side.
    pub pairs: u32,
    /// `--priority` of the measured task.
    pub priority: i32,
    /// `--isolate`.
    pub isolate: bool,
    /// `--plan`.
    pub plan_only: bool,
    /// `--keep`.
    pub keep: bool,
    /// `--runs-dir`; `None`: `latlab-tune/<timestamp>`.
    pub runs_dir: Option<PathBuf>,
    /// The latlab binary that runs the measurements and the load.
    pub exe: PathBuf,
    /// The command line, for the result's envelope.
    pub argv: Vec<String>,
}

/// Runs a whole tune: refuses to start beside an unfinished one or without
/// root, measures the baseline under one load, plans, verifies each group
/// of fixes (unless `--plan`), and restores what it changed (unless
/// `--keep`). Installs the stop handler (Ctrl-C and SIGTERM end the tune,
/// restored) and ignores SIGHUP (a closed terminal must not kill a tune
/// between a change and its restore). `say` gets the progress lines.
pub fn tune(options: &Options, say: Progress) -> anyhow::Result<TuneResult> {
    let journal_path = journal::default_path();
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
        say(&kept);
    }
    let inventory = crate::knobs::inventory();
    let online = inventory.cpus.clone();
    let rt = match &options.cpus {
        Some(list) => {
            latlab_rt::sched::parse_cpu_list(list).with_context(|| format!("--cpus {list}"))?
        }
        None => online.last().copied().into_iter().collect(),
    };
    let housekeeping = crate::plan::housekeeping(&rt, &online).map_err(anyhow::Error::msg)?;
    let dir = options.runs_dir.clone().unwrap_or_else(|| {
        PathBuf::from("latlab-tune")
            .join(latlab_rt::clock::format_utc(latlab_rt::clock::unix_time_s()).replace(':', ""))
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    latlab_rt::stop::install_with(latlab_rt::stop::Signals::AlwaysCleanUp)?;
    // SAFETY: setting a signal's disposition to ignore.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let mut req = Request {
        measure: Measure {
            exe: options.exe.clone(),
            cpus: latlab_fix::cpu_list(&rt),
            load: options.load.clone(),
            priority: options.priority,
            dir: dir.clone(),
            load_pid: None,
        },
        rt: rt.clone(),
        housekeeping: housekeeping.clone(),
        baseline_ns: options.baseline_ns,
        round_ns: options.round_ns,
        pairs: options.pairs,
        isolate: options.isolate,
        plan_only: options.plan_only,
        keep: options.keep,
        deadline_ns: options.deadline_ns,
        journal: journal_path,
    };
    let envelope: latlab_envelope::Envelope<TuneSchema> =
        latlab_envelope::Envelope::new(options.argv.clone());
    let preempt_rt = envelope.system.preemption_model.as_deref() == Some("rt");
    let facts = |needs| {
        BootFacts::from_system(
            &envelope.system,
            &rt,
            &housekeeping,
            &online,
            options.priority as u32,
            needs,
        )
    };
    // The CPUs the command line can take (not the boot CPU), before anything is measured.
    bootline::boot_line(&facts(Vec::new()), false)?;
    let sys = crate::plan::SystemView::of(&inventory, preempt_rt);
    // One load for the whole tune, beside the runs (they run --load none):
    // stopped when `load` drops, on every way out of this function.
    let load = Load::start(
        &req.measure.exe,
        &options.load,
        86_400 * 1_000_000_000,
        &dir.join("load.json"),
    )?;
    req.measure.load_pid = load.pid();
    let mut planned = session::baseline_and_plan(&req, &sys, say)?;
    let boot = bootline::boot_line(&facts(planned.plan.boot.clone()), options.isolate)?;
    let (after, ending, partition) = if options.plan_only || latlab_rt::stop::requested() {
        (None, Default::default(), None)
    } else {
        session::verify_and_end(&req, &mut planned, say)?
    };
    drop(load);
    Ok(session::result(
        envelope, &req, planned, boot, after, ending, partition,
    ))
}

/// `--restore`: puts back an unfinished tune's changes from the restore
/// file at `path` first (they were made last), then what `--keep` kept;
/// `out` gets what was restored, knob by knob. An error when a knob could
/// not be restored (its file keeps it).
pub fn restore(path: &Path, out: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
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
        out(&format!(
            "latlab tune --restore: {} ({whose}): {} restored, {} not needed, {} failed",
            file.display(),
            report.restored.len(),
            report.dropped.len(),
            report.failed.len()
        ));
        for (knob, old) in &report.restored {
            out(&format!("  restored {knob} = {old}"));
        }
        for (knob, why) in &report.dropped {
            out(&format!("  not restored {knob}: {why}"));
        }
        for (knob, old, error) in &report.failed {
            out(&format!("  could not restore {knob} to {old}: {error}"));
        }
        failed += report.failed.len();
    }
    if !found {
        out(&format!(
            "latlab tune --restore: nothing to restore (neither {} nor {} exists)",
            path.display(),
            kept.display()
        ));
    }
    if failed > 0 {
        bail!("{failed} knobs could not be restored (above); their file keeps them");
    }
    Ok(())
}
