//! `latlab load`: run a background load alone and report its throughput.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use latlab_load::parse_size;
use latlab_session::load::run_for;

use crate::config::load::{resolve, LoadRun};

/// Arguments of `latlab load`.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// What to run: none | light | full | a list such as cpu:2,io:1,net:1
    /// (kinds: cpu, io, net, udp, mem, syscall, ipc). Default: full, or none
    /// when --load-cmd is given.
    pub spec: Option<String>,
    /// How long to run (e.g. 30s, 500ms, 2m); Ctrl-C stops early and still reports.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = latlab_rt::duration::length)]
    pub duration: Duration,
    /// Also run this command (via sh -c, in its own process group) as a load.
    #[arg(long, value_name = "COMMAND")]
    pub load_cmd: Option<String>,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Most disk space the io load may use (e.g. 256M, 1G).
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = parse_size)]
    pub disk_cap: u64,
    /// Directory in which the load's scratch directory is made (default: $TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,
    /// CPUs the load may use, e.g. 0-3,6 (default: every online CPU the kernel did not isolate at boot with isolcpus=).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Nice value of the load (0..19).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub nice: i32,
    /// Length of one throughput sample (e.g. 1s, 250ms).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = latlab_rt::duration::length)]
    pub sample_interval: Duration,
    /// Bytes per send of the net and udp loads.
    #[arg(long, value_name = "BYTES", default_value = "4096", value_parser = parse_size)]
    pub net_msg_size: u64,
    /// Internal: be the load process of a measuring command (`run --load`):
    /// read the request on stdin, report on stdout (see latlab_load::LoadProcess).
    #[arg(long, hide = true)]
    pub serve: bool,
}

/// Runs the load for the requested time, then prints (and writes) its report.
pub fn execute(args: LoadArgs) -> anyhow::Result<ExitCode> {
    if args.serve {
        return Ok(serve());
    }
    let LoadRun {
        spec,
        options,
        json,
    } = resolve(&args)?;
    latlab_rt::stop::install()?;
    let started = latlab_rt::clock::unix_time_s();
    let (report, interrupted) = run_for(&spec, &options, args.duration)?;
    if interrupted {
        eprintln!("latlab load: interrupted after {:.1} s", report.duration_s);
    }
    // The table first: if the JSON file cannot be written, the numbers are
    // still on the screen.
    let mut out = std::io::stdout().lock();
    out.write_all(latlab_report::load::table(&report).as_bytes())?;
    out.flush()?;
    if let Some(path) = &json {
        let system = Some(latlab_rt::sysinfo::SystemInfo::gather());
        let envelope = latlab_document::Envelope::at(std::env::args().collect(), started, system);
        let json = serde_json::to_string_pretty(&latlab_load::LoadDocument::new(envelope, report))?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The load process of a measuring command. Its errors go to latlab over
/// the pipe (latlab prints them); printed here only when run by hand.
fn serve() -> ExitCode {
    match latlab_load::serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if std::io::stdout().is_terminal() {
                eprintln!("latlab load --serve: {err}");
            }
            ExitCode::from(super::EXIT_ERROR)
        }
    }
}
