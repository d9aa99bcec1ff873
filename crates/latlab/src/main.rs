//! `latlab`: measure, explain and reduce real-time latency on Linux.
//!
//! The binary is argument parsing plus glue; every concept lives in a library crate.

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::dispatch(cli) {
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
