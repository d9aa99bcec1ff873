//! `latlab record`'s arguments resolved into the capture's options.

use std::path::{Path, PathBuf};
use std::time::Duration;

use latlab_report::text::record::cpu_list;

use anyhow::Context;
use latlab_tracefs::CaptureOptions;

use crate::cmd::record::RecordArgs;

/// `latlab record`, resolved.
#[derive(Debug)]
pub struct RecordRun {
    /// The capture.
    pub capture: CaptureOptions,
    /// The trace file (writable: checked).
    pub output: PathBuf,
    /// Record for this long (`None`: until the command ends or Ctrl-C).
    pub duration: Option<Duration>,
    /// The command to trace (empty: none).
    pub command: Vec<String>,
    /// Print the summary as JSON.
    pub json: bool,
}

/// Validates `args` into a [`RecordRun`]; fails before recording, not
/// after, when the output cannot be written.
pub fn resolve(args: &RecordArgs) -> anyhow::Result<RecordRun> {
    let temp_dir = args
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let opts = CaptureOptions {
        events: args.events.clone(),
        buffer_size_kb: args.buffer_size,
        grow_to_kb: None,
        flight_recorder: args.flight_recorder,
        temp_dir: Some(temp_dir),
        kallsyms: !args.no_kallsyms,
        measured_cpus: match &args.rt_cpus {
            Some(list) => parse_rt_cpus(list)?,
            None => Vec::new(),
        },
    };
    latlab_session::record::check_writable(&args.output)?;
    Ok(RecordRun {
        capture: opts,
        output: args.output.clone(),
        duration: args.duration,
        command: args.command.clone(),
        json: args.json,
    })
}

/// `--rt-cpus`: a list of online CPUs.
fn parse_rt_cpus(text: &str) -> anyhow::Result<Vec<usize>> {
    let cpus = latlab_rt::sched::parse_cpu_list(text).context("--rt-cpus")?;
    let online = latlab_rt::sched::online_cpus();
    match cpus.iter().find(|c| !online.contains(c)) {
        Some(bad) => anyhow::bail!(
            "--rt-cpus: CPU {bad} is not online (online: {}); name the CPUs the real-time \
             tasks run on",
            cpu_list(&online)
        ),
        None => Ok(cpus),
    }
}
