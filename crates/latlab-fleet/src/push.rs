//! `latlab push RESULT.json --to URL` (and `--push URL` on the measuring
//! commands): results sent to a `latlab serve`, through a local spool.
//!
//! Every result is first written into the spool directory (one file per
//! result, named by its id, written to a temporary name, synced and renamed,
//! so a crash or a full disk never leaves a torn file there), then every
//! spooled result is sent, oldest first, and removed once the server has
//! stored it (201) or says it already had it (200). When the server cannot be
//! reached the results stay and go with the next push: nothing is lost while
//! the network or the server is down. A result the server refuses as
//! malformed (400, 413, 422) moves to `rejected/` in the spool, so it cannot
//! block the others; a refused token (401) stops the push with the spool
//! intact.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
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

impl PushAuth {
    /// The token: the file's first line, or $LATLAB_TOKEN.
    pub fn token(&self) -> anyhow::Result<String> {
        let token = match &self.token_file {
            Some(path) => std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
            None => std::env::var("LATLAB_TOKEN").unwrap_or_default(),
        };
        if token.is_empty() {
            anyhow::bail!(
                "no board token: give --token-file FILE or set LATLAB_TOKEN \
                 (`latlab serve --add-board NAME` prints one)"
            );
        }
        Ok(token)
    }

    /// The spool directory.
    pub fn spool_dir(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.spool {
            return Ok(dir.clone());
        }
        let data = latlab_history::default_path()?;
        Ok(data.with_file_name("spool"))
    }
}

/// What a push did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PushOutcome {
    /// Results the server stored now.
    pub stored: usize,
    /// Results it had already.
    pub already: usize,
    /// Results it refused as malformed (moved to `rejected/`).
    pub rejected: usize,
    /// Results still waiting in the spool.
    pub waiting: usize,
}

/// Runs `latlab push`.
pub fn execute(args: PushArgs) -> anyhow::Result<ExitCode> {
    let mut documents = Vec::new();
    for file in &args.files {
        documents.push(crate::cmd::report::read_result_value(file)?);
    }
    let outcome = push(&args.to, &args.auth, &documents)?;
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

/// The file name of a result in the spool: its id, made safe.
fn spool_name(document: &Value) -> String {
    let id: String = latlab_document::document_id(document)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{id}.json")
}

/// Writes `document` into the spool (temporary name, sync, rename).
pub fn spool(dir: &Path, document: &Value) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the spool {}", dir.display()))?;
    let path = dir.join(spool_name(document));
    if path.exists() {
        return Ok(path);
    }
    let text = serde_json::to_string(document).context("serializing the result")?;
    let tmp = dir.join(format!(".{}.tmp", spool_name(document)));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes()).and_then(|()| f.sync_all())
        })
        .and_then(|()| std::fs::rename(&tmp, &path))
        .and_then(|()| std::fs::File::open(dir).and_then(|d| d.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| {
            format!(
                "writing {} into the spool (is the disk full? the spool keeps what it holds)",
                path.display()
            )
        });
    }
    Ok(path)
}

/// The spooled results, oldest first.
fn spooled(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading the spool {}", dir.display())),
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".json") && !name.starts_with('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Spools `documents`, then sends everything in the spool to `url`.
/// A document that cannot be spooled (a full disk) is still sent directly;
/// one that can be neither spooled nor sent is an error.
pub fn push(url: &str, auth: &PushAuth, documents: &[Value]) -> anyhow::Result<PushOutcome> {
    let token = auth.token()?;
    let dir = auth.spool_dir()?;
    let endpoint = format!("{}/api/v1/results", url.trim_end_matches('/'));
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .timeout(Duration::from_secs(120))
        .build();
    let mut outcome = PushOutcome::default();
    let mut unspooled = Vec::new();
    for document in documents {
        if let Err(e) = spool(&dir, document) {
            eprintln!("latlab: warning: {:#}; sending it directly", e);
            unspooled.push(document);
        }
    }
    let mut down: Option<String> = None;
    for document in unspooled {
        match send(&agent, &endpoint, &token, &serde_json::to_string(document)?) {
            Sent::Stored => outcome.stored += 1,
            Sent::Already => outcome.already += 1,
            Sent::Rejected(why) => {
                outcome.rejected += 1;
                eprintln!("latlab: the server refused a result: {why}");
            }
            Sent::Unauthorized(why) => anyhow::bail!("{why}"),
            Sent::Down(why) => {
                anyhow::bail!("{why}; and the result could not be spooled either (see above)")
            }
        }
    }
    for path in spooled(&dir)? {
        if down.is_some() {
            outcome.waiting += 1;
            continue;
        }
        let body = match std::fs::read_to_string(&path) {
            Ok(body) => body,
            Err(e) => {
                eprintln!("latlab: warning: reading {}: {e}", path.display());
                outcome.waiting += 1;
                continue;
            }
        };
        match send(&agent, &endpoint, &token, &body) {
            Sent::Stored => {
                outcome.stored += 1;
                let _ = std::fs::remove_file(&path);
            }
            Sent::Already => {
                outcome.already += 1;
                let _ = std::fs::remove_file(&path);
            }
            Sent::Rejected(why) => {
                outcome.rejected += 1;
                let rejected = dir.join("rejected");
                let _ = std::fs::create_dir_all(&rejected);
                let target = rejected.join(path.file_name().unwrap_or_default());
                let _ = std::fs::rename(&path, &target);
                eprintln!(
                    "latlab: the server refused {} ({why}); moved to {}",
                    path.display(),
                    target.display()
                );
            }
            Sent::Unauthorized(why) => {
                anyhow::bail!("{why}; the spool {} keeps every result", dir.display())
            }
            Sent::Down(why) => {
                eprintln!(
                    "latlab: warning: {why}; results wait in {} for the next push",
                    dir.display()
                );
                down = Some(why);
                outcome.waiting += 1;
            }
        }
    }
    Ok(outcome)
}

enum Sent {
    Stored,
    Already,
    Rejected(String),
    Unauthorized(String),
    Down(String),
}

fn send(agent: &ureq::Agent, endpoint: &str, token: &str, body: &str) -> Sent {
    let response = agent
        .post(endpoint)
        .set("Authorization", &format!("Bearer {token}"))
        .set("Content-Type", "application/json")
        .send_string(body);
    let message = |r: ureq::Response| r.into_string().unwrap_or_default().trim().to_string();
    match response {
        Ok(r) if r.status() == 201 => Sent::Stored,
        Ok(_) => Sent::Already,
        Err(ureq::Error::Status(401, r)) => Sent::Unauthorized(format!(
            "{endpoint} refused the token (401: {}): check --token-file or LATLAB_TOKEN",
            message(r)
        )),
        Err(ureq::Error::Status(code, r))
            if (400..500).contains(&code) && code != 408 && code != 429 =>
        {
            Sent::Rejected(format!("{code}: {}", message(r)))
        }
        Err(ureq::Error::Status(code, r)) => {
            Sent::Down(format!("{endpoint} answered {code}: {}", message(r)))
        }
        Err(e) => Sent::Down(format!("{endpoint} cannot be reached: {e}")),
    }
}

/// `--push URL` on the measuring commands: sends the new result (after it
/// was written); a failure is a warning, the result waits in the spool.
pub fn push_after_measuring(url: &str, auth: &PushAuth, document: &Value) {
    match push(url, auth, std::slice::from_ref(document)) {
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
