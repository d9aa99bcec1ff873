//! `latlab push RESULT.json --to URL` (and `--push URL` on the measuring
//! commands): the arguments, resolved into the fleet's push
//! ([`latlab_fleet::push`]) through the board's spool.

use std::path::PathBuf;
use std::process::ExitCode;

use latlab_fleet::push::{push, Destination, PushOutcome};
use serde_json::Value;

/// Arguments of `latlab push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// Result files (run, respond, watch, lockbench JSON; a cyclictest,
    /// rt-tests or rtla file as read by `latlab report`) to send; none:
    /// only resend what waits in the spool.
    #[arg(value_name = "RESULT")]
    pub files: Vec<PathBuf>,
    /// The server: the URL `latlab serve` listens on (http://HOST:PORT).
    #[arg(long, value_name = "URL")]
    pub to: String,
    #[command(flatten)]
    pub auth: PushAuth,
}

/// The board's token and its spool, shared by `push` and `--push`.
#[derive(Debug, Clone, clap::Args)]
pub struct PushAuth {
    /// File holding the board's token (from `latlab serve --add-board`);
    /// default: the LATLAB_TOKEN environment variable.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Directory of results not yet sent (default:
    /// $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool).
    #[arg(long, value_name = "DIR")]
    pub spool: Option<PathBuf>,
}

/// Spools `documents` and sends the spool to `url`, warnings on stderr.
fn send(url: &str, auth: &PushAuth, documents: &[Value]) -> anyhow::Result<PushOutcome> {
    let token = latlab_fleet::push::read_token(auth.token_file.as_deref())?;
    let spool = match &auth.spool {
        Some(dir) => dir.clone(),
        None => latlab_fleet::spool::default_dir()?,
    };
    let to = Destination {
        url,
        token: &token,
        spool: &spool,
    };
    Ok(push(&to, documents, &mut |note| {
        eprintln!("latlab: {note}")
    })?)
}

/// Runs `latlab push`.
pub fn execute(args: PushArgs) -> anyhow::Result<ExitCode> {
    let mut documents = Vec::new();
    for file in &args.files {
        documents.push(crate::cmd::report::read_result_value(file)?);
    }
    let outcome = send(&args.to, &args.auth, &documents)?;
    println!(
        "{} stored, {} already there, {} rejected, {} waiting in the spool",
        outcome.stored, outcome.already, outcome.rejected, outcome.waiting
    );
    Ok(if outcome.waiting == 0 && outcome.rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_ERROR)
    })
}

/// `--push URL` on the measuring commands: sends the new result (after it
/// was written); a failure is a warning, the result waits in the spool.
pub fn push_after_measuring(url: &str, auth: &PushAuth, document: &Value) {
    match send(url, auth, std::slice::from_ref(document)) {
        Ok(outcome) if outcome.waiting == 0 => println!(
            "Pushed to {url} ({} stored, {} already there)",
            outcome.stored, outcome.already
        ),
        Ok(outcome) => eprintln!(
            "latlab: warning: {} result(s) wait in the spool for the next push to {url}",
            outcome.waiting
        ),
        Err(e) => eprintln!("latlab: warning: pushing to {url}: {e:#}"),
    }
}
