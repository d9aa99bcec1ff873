//! Raw command-line arguments, as clap parses them. Validation into resolved
//! configurations happens in each command module.

use clap::{Parser, Subcommand};

/// Measure, explain and reduce real-time latency on Linux.
#[derive(Debug, Parser)]
// The version names the target triple and git commit (build.rs): a binary
// copied to a board says what it is.
#[command(
    name = "latlab",
    version = env!("LATLAB_VERSION"),
    about,
    propagate_version = true,
    after_help = "Start here: `sudo latlab scenario characterize` (what `make run` runs). In about \
                  a minute it measures this machine idle and under every load latlab has, explains \
                  the late wake-ups from a kernel trace, says which of the papers' requirement \
                  classes it meets (Emblix 100 ms, 1 ms, 100 us; Moblin 40 us) and what stands in \
                  the way, and writes one HTML report that opens offline.\n\n\
                  Durations take a unit: 500ns, 40us, 1ms, 30s, 10m, 1h (ns, us, ms, s, m, h). A \
                  number without one is an error, in every option of every command (0 alone is \
                  zero)."
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// latlab's commands.
// Parsed once per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure wake-up latency and period accuracy of periodic real-time threads.
    Run(crate::cmd::run::RunArgs),
    /// Print the events of a trace one per line, like `trace-cmd report`.
    Dump(crate::cmd::dump::DumpArgs),
    /// Name why a periodic timer task woke up late, from a kernel trace (the KTAS analysis).
    Explain(crate::cmd::explain::ExplainArgs),
    /// Run a background load (cpu, io, net, udp, mem, syscall, ipc, a command) alone and report its throughput.
    Load(crate::cmd::load::LoadArgs),
    /// Compare delayed locking with plain, PI and ceiling locks (real threads, or --simulate).
    Lockbench(crate::cmd::lockbench::LockbenchArgs),
    /// Capture kernel events (tracefs) into a trace-cmd .dat file.
    Record(crate::cmd::record::RecordArgs),
    /// Write results as one self-contained HTML report with plots; several results are compared.
    Report(crate::cmd::report::ReportArgs),
    /// List, filter or delete the results kept in the history database (every saved `run`, `respond`, `watch` and `lockbench` result is stored there).
    History(crate::cmd::history::HistoryArgs),
    /// Write the comparison report of results from the history, by id.
    Compare(crate::cmd::compare::CompareArgs),
    /// Run one of the papers' experiments on this machine and write its comparison report.
    Scenario(crate::cmd::scenario::ScenarioArgs),
    /// Response latency to an external event: stimulus to responder wake-up and answer
    /// (pty/serial, pipe, eventfd, socket, UDP, signal; real serial and GPIO).
    Respond(crate::cmd::respond::RespondArgs),
    /// Send result files to a `latlab serve` (through a local spool: nothing is lost while it is down).
    Push(crate::cmd::push::PushArgs),
    /// Serve the store (SQLite or PostgreSQL) over HTTP: boards push results, a dashboard shows the fleet.
    Serve(crate::cmd::serve::ServeArgs),
    /// Watch the wake-ups of running tasks for hours or days, live, in the kernel (eBPF): latency histograms and the causes of late ones.
    Watch(crate::cmd::watch::WatchArgs),
    /// Apply the fixes the measured causes call for, verify each side by side under the same
    /// load, keep what helps, print the boot line, export a tuned profile, undo the rest.
    Tune(crate::cmd::tune::TuneArgs),
}
