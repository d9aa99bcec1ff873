//! `latlab lockbench`: delayed locking against plain, priority-inheritance and
//! priority-ceiling locks, with real threads or (`--simulate`) in the paper's simulated
//! uniprocessor kernel.
//!
//! Lifecycle: parse arguments, resolve them into a configuration, check privileges,
//! run each variant (Ctrl-C ends the current one and keeps what was measured), print
//! the table, write the JSON.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::Serialize;

use latlab_lock::bench;
use latlab_lock::document::SimReport;
use latlab_lock::shape::HoldShape;
use latlab_lock::sim;
use latlab_report::formats::TerminalText;
use latlab_rt::duration;
use latlab_rt::sched;
use latlab_rt::session::SessionOptions;

use latlab_session::lockbench::assemble_report;

use crate::config::lockbench::{resolve, resolve_simulation};
use crate::lifecycle::outputs::FarmFlags;
use crate::lifecycle::{write_file, Lifecycle, LoadFlags, OutputFiles, Verbosity};

/// Arguments of `latlab lockbench`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 done (also after Ctrl-C, with the variants measured so far), \
                        1 error, 2 --require-goal given and the goal not met.\n\nExample: latlab lockbench --duration 10s --json lockbench.json"
)]
pub struct LockbenchArgs {
    /// Run the deterministic uniprocessor-kernel simulation of the paper instead of real threads.
    #[arg(long)]
    pub simulate: bool,
    /// Measured time per variant (real threads).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration::length_ns)]
    pub duration: u64,
    /// Split each variant's time into this many slices that take turns with the other
    /// variants, so that a disturbance of the machine hits all variants alike.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,
    /// Unmeasured time at the start of each variant, while the predictors learn.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration::length_or_zero_ns)]
    pub warmup: u64,
    /// Variants to compare, comma-separated: plain, pi, ceiling, delayed-max, delayed-ewma,
    /// delayed-quantile, and delayed-pi (delayed-quantile on the PI futex).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plain,pi,ceiling,delayed-max,delayed-ewma,delayed-quantile"
    )]
    pub variants: Vec<String>,
    /// Period of the real-time task.
    #[arg(long, value_name = "DURATION", default_value = "4ms", value_parser = duration::period)]
    pub period: u64,
    /// SCHED_FIFO priority of the real-time task (also the ceiling of the ceiling variant).
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub priority: u8,
    /// Busy time the real-time task holds the lock each period.
    #[arg(long, value_name = "DURATION", default_value = "20us", value_parser = duration::latency)]
    pub rt_hold: u64,
    /// CPU for all threads, or `none` to leave them unpinned [default: the last usable CPU]
    #[arg(long, value_name = "CPU|none")]
    pub cpu: Option<String>,
    /// Number of SCHED_OTHER background threads.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
    /// A background critical section, `NAME=W*LO-HI,...`: W parts of the holds last LO to HI,
    /// durations with a unit (`send=93*180-340us,7*1.2-2.2ms`; a LO without one takes HI's).
    /// Repeatable, up to 8; replaces the default three shaped like the paper's Table 3.
    #[arg(long = "site", value_name = "SHAPE", value_parser = crate::config::lockbench::parse_shape)]
    pub sites: Vec<HoldShape>,
    /// How background threads pick a site: per-thread (thread i uses site i) or random.
    #[arg(long, default_value = "per-thread", value_parser = ["per-thread", "random"])]
    pub site_choice: String,
    /// Background CPU work outside the lock per iteration.
    #[arg(long, value_name = "DURATION", default_value = "200us", value_parser = duration::latency)]
    pub outside_work: u64,
    /// Margin added to the predicted hold time [default: 100us; 0 with --simulate, as the paper]
    #[arg(long, value_name = "DURATION", value_parser = duration::latency)]
    pub margin: Option<u64>,
    /// Refusals after which a thread enters anyway.
    #[arg(long, default_value_t = 100)]
    pub max_refusals: u32,
    /// Seed of the background's random choices and of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Width of the background-throughput series points in the JSON.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration::period)]
    pub sample_interval: u64,
    /// Simulated periods of the real-time task (--simulate).
    #[arg(long, default_value_t = 10_000)]
    pub periods: u64,
    /// Hold-time prediction of the simulation (--simulate): table (the paper's: fixed t_lock
    /// = Table 3's maxima, 800/2192/128 µs), or learned online: max, ewma or quantile.
    #[arg(long, default_value = "table", value_parser = ["table", "max", "ewma", "quantile"])]
    pub predictor: String,
    /// No SCHED_IDLE spinner: let the CPU go idle when every background thread waits (on a
    /// VM the hypervisor may then take milliseconds to wake the real-time task).
    #[arg(long)]
    pub no_idle_spinner: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 during the benchmark (lets CPUs enter deep idle
    /// states).
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Run even without memory locking (the real-time task still needs SCHED_FIFO: the
    /// benchmark is about it).
    #[arg(long)]
    pub allow_unprivileged: bool,
    /// Exit with status 2 unless delayed-quantile meets the delayed-locking goal: worst lock
    /// latency at most 25 % of plain's and below pi's, background work loss at most 20 %
    /// (needs plain, pi and delayed-quantile among the variants).
    #[arg(long)]
    pub require_goal: bool,
    /// Run the benchmark in a scheduler autogroup of its own at this nice (-20 to 19;
    /// negative needs root), so that busy sessions next door (compilers, browsers) do not
    /// preempt the background lock holders for milliseconds. Linux autogroups only.
    #[arg(
        long,
        value_name = "NICE",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(-20..=19)
    )]
    pub autogroup_nice: Option<i32>,
    /// Write the results (with the background throughput over time) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Background load, running through all variants (real threads only).
    #[command(flatten)]
    pub load: LoadFlags,
    /// The history database the results are also stored in.
    #[command(flatten)]
    pub history: crate::cmd::history::DbArgs,
    /// Do not store the results in the history database.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub farm: FarmFlags,
}

/// Set in the environment of the copy of latlab that `--autogroup-nice` starts
/// (to the pid of the latlab that started it).
const IN_OWN_AUTOGROUP: &str = "LATLAB_IN_OWN_AUTOGROUP";

/// Runs the command.
pub fn execute(args: LockbenchArgs) -> anyhow::Result<ExitCode> {
    if args.simulate {
        return simulate(&args);
    }
    let (cfg, variants) = resolve(&args)?;
    if let Some(nice) = args.autogroup_nice {
        if !latlab_rt::autogroup::settle_copy(IN_OWN_AUTOGROUP) {
            let code = latlab_rt::autogroup::rerun_in_own_group(nice, IN_OWN_AUTOGROUP)?;
            return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
        }
    }
    if args.require_goal {
        if let Some(needed) = bench::goal_variants_missing(&variants).first() {
            bail!(
                "--require-goal compares delayed-quantile with plain and pi: add {} to --variants",
                needed.name()
            );
        }
    }
    let load_plan = args.load.resolve();
    let mut life = Lifecycle::enter(
        SessionOptions {
            allow_unprivileged: args.allow_unprivileged,
            hold_dma_latency: !args.no_dma_latency,
            realtime_fallback: None,
            realtime_required_why: "the benchmark's real-time task needs SCHED_FIFO",
            ..SessionOptions::measurement(sched::Policy::Fifo, i32::from(cfg.rt_priority))
        },
        Vec::new(),
        Verbosity::Normal,
        &load_plan,
    )?;
    life.print_notes("`latlab run --verbose`: why, and the fix");
    life.begin();
    let load = life.start_load()?;
    let outcome = bench::run(&cfg, &variants, &latlab_rt::stop::requested, &mut |what| {
        eprintln!("latlab lockbench: {what}")
    });
    let load_report = load.map(latlab_session::load::stop).transpose()?;
    life.end();
    let results = match outcome {
        Ok(results) => results,
        Err(err) => return Err(err).context("lock benchmark"),
    };
    if !results.is_empty() {
        let report = assemble_report(&cfg, results.clone(), load_report.clone(), &life);
        print!("{}", report.terminal_text());
        if !args.no_history {
            let document = serde_json::to_value(&report).context("serializing the results")?;
            if let Some(id) = crate::cmd::history::record_document(&document, &args.history) {
                println!("Stored in the history as id {id} (`latlab history`)");
            }
        }
        // A full disk: the JSON goes to the temporary directory instead.
        let mut files =
            OutputFiles::with_result(&report, None, "lockbench.json", args.json.as_deref())?;
        args.farm.emit(&report, &mut files)?;
        files.finish()?;
    } else if latlab_rt::stop::requested() {
        eprintln!(
            "latlab lockbench: stopped before a variant's first measured period: no result to write"
        );
    }
    if args.require_goal && !bench::goal_met(&results) {
        eprintln!("latlab lockbench: the goal was not met (see the goal lines above)");
        return Ok(ExitCode::from(super::EXIT_REQUIREMENT_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

fn simulate(args: &LockbenchArgs) -> anyhow::Result<ExitCode> {
    let cfg = resolve_simulation(args)?;
    for warning in cfg.warnings() {
        eprintln!("latlab: warning: {warning}");
    }
    let comparison = sim::compare(&cfg)?;
    let envelope = latlab_document::Envelope::without_machine(std::env::args().collect())
        .with_warnings(cfg.warnings());
    let report = SimReport::new(envelope, comparison);
    print!("{}", report.terminal_text());
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).context("serializing the results")? + "\n";
    write_file(path, text.as_bytes())
}
