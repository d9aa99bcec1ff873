//! Raw command-line arguments, as clap parses them. Validation into resolved
//! configurations happens in each command module.

use clap::{Parser, Subcommand};

/// Measure, explain and reduce real-time latency on Linux.
#[derive(Debug, Parser)]
#[command(name = "latlab", version, about, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// latlab's commands.
// Parsed once per process; boxing the large argument structs would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure wake-up latency and period accuracy of periodic real-time threads.
    Run(crate::cmd::run::RunArgs),
    /// Capture kernel events (tracefs) into a trace-cmd .dat file.
    Record(crate::cmd::record::RecordArgs),
}
