//! `latlab`: measure, explain and reduce real-time latency on Linux.
//!
//! The binary is argument parsing plus glue; every concept lives in a library crate.

mod cli;
mod cmd;
mod config;
#[cfg(feature = "generate")]
mod generate;
mod lifecycle;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    // `Cli::parse()`, plus the hidden `latlab generate` (man pages, completions).
    #[cfg(feature = "generate")]
    let command = generate::with_hidden_subcommand(cli::Cli::command());
    #[cfg(not(feature = "generate"))]
    let command = cli::Cli::command();
    let matches = match command.try_get_matches() {
        Ok(matches) => matches,
        Err(err) => return usage_exit(err),
    };
    let result = match matches.subcommand() {
        #[cfg(feature = "generate")]
        Some((generate::NAME, generate)) => generate::execute(generate).map(|()| ExitCode::SUCCESS),
        _ => match cli::Cli::from_arg_matches(&matches) {
            Ok(cli) => cmd::dispatch(cli),
            Err(err) => return usage_exit(err.format(&mut cli::Cli::command())),
        },
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("latlab: error: {}", cmd::describe(&err));
            ExitCode::from(cmd::EXIT_ERROR)
        }
    }
}

/// Prints clap's message and exits as rtla does: 0 for `--help` and
/// `--version`, [`cmd::EXIT_ERROR`] for a usage error (clap's own 2 is
/// latlab's "a requirement was missed", which a script must not confuse with
/// a typo).
fn usage_exit(err: clap::Error) -> ExitCode {
    let _ = err.print();
    if err.use_stderr() {
        ExitCode::from(cmd::EXIT_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

/// A closed stdout (e.g. `latlab dump | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
