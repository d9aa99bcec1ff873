//! One module per command, and nothing else: each holds its raw arguments
//! (clap), turns them into a resolved configuration ([`crate::config`]),
//! runs, and returns the process exit code.

pub mod characterize;
pub mod compare;
pub mod dump;
pub mod explain;
pub mod history;
pub mod load;
pub mod lockbench;
pub mod push;
pub mod record;
pub mod report;
pub mod respond;
pub mod run;
pub mod scenario;
pub mod serve;
pub mod tune;
pub mod watch;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// Exit code for errors (bad input, missing permission, I/O failure).
pub const EXIT_ERROR: u8 = 1;
/// Exit code when a requirement or threshold was exceeded.
pub const EXIT_REQUIREMENT_FAILED: u8 = 2;
/// Exit code when the measurement itself is suspect (wake-ups before their
/// intended time): its figures can neither pass nor fail a requirement.
pub const EXIT_SUSPECT: u8 = 3;

/// Runs the command the user asked for.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::execute(args),
        Command::Dump(args) => dump::execute(args),
        Command::Explain(args) => explain::execute(args),
        Command::Load(args) => load::execute(args),
        Command::Lockbench(args) => lockbench::execute(args),
        Command::Record(args) => record::execute(args),
        Command::Report(args) => report::execute(args),
        Command::History(args) => history::execute(args),
        Command::Compare(args) => compare::execute(args),
        Command::Scenario(args) => scenario::execute(args),
        Command::Respond(args) => respond::execute(args),
        Command::Push(args) => push::execute(args),
        Command::Serve(args) => serve::execute(args),
        Command::Watch(args) => watch::execute(args),
        Command::Tune(args) => tune::execute(args),
    }
}

pub use latlab_session::describe;
