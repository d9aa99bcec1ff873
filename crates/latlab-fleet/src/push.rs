//! The board's push (`latlab push RESULT.json --to URL`, and `--push URL`
//! on the measuring commands): results sent to a `latlab serve` through
//! the [`crate::spool`].
//!
//! Every result is first spooled, then every spooled result is sent,
//! oldest first, and removed once the server has stored it (201) or says
//! it already had it (200). When the server cannot be reached the results
//! stay and go with the next push: nothing is lost while the network or
//! the server is down. A result the server refuses as malformed (400, 413,
//! 422) moves to `rejected/` in the spool, so it cannot block the others;
//! a refused token (401) stops the push with the spool intact.

use std::path::Path;

use serde_json::Value;

use crate::http_client;
use crate::spool;
use crate::{FleetError, Result};

/// The board's token: the first line of `file`, or `$LATLAB_TOKEN`.
pub fn read_token(file: Option<&Path>) -> Result<String> {
    let token = match file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|error| FleetError::TokenFile {
                path: path.to_path_buf(),
                error,
            })?
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        None => std::env::var("LATLAB_TOKEN").unwrap_or_default(),
    };
    if token.is_empty() {
        return Err(FleetError::NoToken);
    }
    Ok(token)
}

/// Where and how a board pushes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination<'a> {
    /// The server: the URL `latlab serve` listens on (http://HOST:PORT).
    pub url: &'a str,
    /// The board's token.
    pub token: &'a str,
    /// The spool directory.
    pub spool: &'a Path,
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

/// Spools `documents`, then sends everything in the spool to the server.
/// A document that cannot be spooled (a full disk) is still sent directly;
/// one that can be neither spooled nor sent is an error. What the user
/// should know on the way (a result refused, the server down) goes to
/// `warn`.
pub fn push(
    to: &Destination,
    documents: &[Value],
    warn: &mut dyn FnMut(String),
) -> Result<PushOutcome> {
    let dir = to.spool;
    let endpoint = format!("{}/api/v1/results", to.url.trim_end_matches('/'));
    let send = |body: &str| send(&endpoint, to.token, body);
    let mut outcome = PushOutcome::default();
    let mut unspooled = Vec::new();
    for document in documents {
        if let Err(e) = spool::spool(dir, document) {
            warn(format!("warning: {e}; sending it directly"));
            unspooled.push(document);
        }
    }
    let mut down: Option<String> = None;
    for document in unspooled {
        match send(&serde_json::to_string(document).map_err(FleetError::Json)?) {
            Sent::Stored => outcome.stored += 1,
            Sent::Already => outcome.already += 1,
            Sent::Rejected(why) => {
                outcome.rejected += 1;
                warn(format!("the server refused a result: {why}"));
            }
            Sent::Unauthorized(why) => return Err(FleetError::Unauthorized(why)),
            Sent::Down(why) => return Err(FleetError::Unsent(why)),
        }
    }
    for path in spool::spooled(dir)? {
        if down.is_some() {
            outcome.waiting += 1;
            continue;
        }
        let body = match std::fs::read_to_string(&path) {
            Ok(body) => body,
            Err(e) => {
                warn(format!("warning: reading {}: {e}", path.display()));
                outcome.waiting += 1;
                continue;
            }
        };
        match send(&body) {
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
                let target = spool::reject(dir, &path);
                warn(format!(
                    "the server refused {} ({why}); moved to {}",
                    path.display(),
                    target.display()
                ));
            }
            Sent::Unauthorized(why) => {
                return Err(FleetError::Unauthorized(format!(
                    "{why}; the spool {} keeps every result",
                    dir.display()
                )))
            }
            Sent::Down(why) => {
                warn(format!(
                    "warning: {why}; results wait in {} for the next push",
                    dir.display()
                ));
                down = Some(why);
                outcome.waiting += 1;
            }
        }
    }
    Ok(outcome)
}

/// What the server made of one result.
enum Sent {
    Stored,
    Already,
    Rejected(String),
    Unauthorized(String),
    Down(String),
}

fn send(endpoint: &str, token: &str, body: &str) -> Sent {
    match http_client::post_json(endpoint, token, body) {
        Ok(a) if a.status == 201 => Sent::Stored,
        Ok(a) if a.status < 400 => Sent::Already,
        Ok(a) if a.status == 401 => Sent::Unauthorized(format!(
            "{endpoint} refused the token (401: {}): check --token-file or LATLAB_TOKEN",
            a.body.trim()
        )),
        Ok(a) if (400..500).contains(&a.status) && a.status != 408 && a.status != 429 => {
            Sent::Rejected(format!("{}: {}", a.status, a.body.trim()))
        }
        Ok(a) => Sent::Down(format!(
            "{endpoint} answered {}: {}",
            a.status,
            a.body.trim()
        )),
        Err(e) => Sent::Down(format!("{endpoint} cannot be reached: {e}")),
    }
}
