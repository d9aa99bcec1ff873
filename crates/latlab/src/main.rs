//! `latlab`: measure, explain and reduce real-time latency on Linux.
//!
//! The binary is argument parsing plus glue; every concept lives in a library crate.

mod cli;
mod cmd;
mod generate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    // `Cli::parse()`, plus the hidden `latlab generate` (man pages, completions).
    let matches = generate::with_hidden_subcommand(cli::Cli::command()).get_matches();
    let result = match matches.subcommand() {
        Some((generate::NAME, generate)) => generate::execute(generate).map(|()| ExitCode::SUCCESS),
        _ => cmd::dispatch(
            cli::Cli::from_arg_matches(&matches)
                .map_err(|err| err.format(&mut cli::Cli::command()))
                .unwrap_or_else(|err| err.exit()),
        ),
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

/// A closed stdout (e.g. `latlab dump | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
