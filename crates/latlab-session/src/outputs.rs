//! Writing a measuring command's result: the saved copy, `--json` and the
//! other files, all written even when one fails, with a fallback copy of
//! the result when it could be written nowhere.

use std::path::{Path, PathBuf};

use anyhow::Context;
use latlab_rt::files;

/// Where a command's result goes, as its flags say. The lifecycle writes the
/// files; the saved copy's history and the push are the binary's (the fleet),
/// reached through [`Destinations::save`] and [`Destinations::emit`].
pub trait Destinations {
    /// `--json FILE`.
    fn json(&self) -> Option<&Path>;
    /// `--histogram-text FILE`.
    fn histogram_text(&self) -> Option<&Path>;
    /// True unless `--no-save`: the result is saved (and stored in the history).
    fn saves(&self) -> bool;
    /// Writes `json` (`document`, as a value) as `<output-dir>/<stamp>/<file_name>`
    /// and stores it in the history, unless told not to; says where on stdout.
    fn save(
        &self,
        stamp: &str,
        file_name: &str,
        json: &str,
        document: &serde_json::Value,
    ) -> anyhow::Result<()>;
    /// Writes `--junit`, prints `--lava`, then `--push`es.
    fn emit<T>(&self, result: &T, files: &mut OutputFiles) -> anyhow::Result<()>
    where
        T: serde::Serialize
            + latlab_report::formats::JunitXml
            + latlab_report::formats::LavaTestCases;
}

/// `<base>/<stamp>`, or `<stamp>-2`, `-3`... when taken.
pub fn unique_dir(base: &Path, stamp: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(base).with_context(|| {
        format!(
            "cannot create {} (choose another --output-dir)",
            base.display()
        )
    })?;
    Ok(files::create_unique_dir(base, stamp)?)
}

/// Writes a file via a temporary sibling and a rename, so a full disk or a
/// crash never leaves a half-written result where a complete one was expected.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    files::write_atomically(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// How the result's saved copy is written: given the result's JSON and the
/// result as a value (see [`Destinations::save`]).
pub type SaveCopy<'a> = &'a dyn Fn(&str, &serde_json::Value) -> anyhow::Result<()>;

/// A command's output files, written all even when one fails. When the
/// result itself was asked for and could be written nowhere (a full disk),
/// it goes into the temporary directory instead: a long measurement is not
/// lost to one full file system.
pub struct OutputFiles {
    failures: Vec<anyhow::Error>,
    /// The result's JSON and its file name, for the fallback copy.
    json: String,
    file_name: &'static str,
    result_written: bool,
    result_failed: bool,
}

impl OutputFiles {
    /// Serializes `result` and writes it where asked: with `save`, its saved
    /// copy (`<output-dir>/<stamp>/<file_name>` and the history); and to
    /// `json_path`. Other outputs follow with [`OutputFiles::other`].
    pub fn with_result<T: serde::Serialize>(
        result: &T,
        save: Option<SaveCopy<'_>>,
        file_name: &'static str,
        json_path: Option<&Path>,
    ) -> anyhow::Result<OutputFiles> {
        let json = latlab_document::text::to_text(result).context("serializing the result")?;
        let mut files = OutputFiles {
            failures: Vec::new(),
            json,
            file_name,
            result_written: false,
            result_failed: false,
        };
        if let Some(save) = save {
            let document = serde_json::to_value(result).context("serializing the result")?;
            let saved = save(&files.json, &document);
            files.note_result(saved);
        }
        if let Some(path) = json_path {
            let written = write_file(path, files.json.as_bytes());
            files.note_result(written);
        }
        Ok(files)
    }

    fn note_result(&mut self, outcome: anyhow::Result<()>) {
        match outcome {
            Ok(()) => self.result_written = true,
            Err(e) => {
                self.result_failed = true;
                self.failures.push(e);
            }
        }
    }

    /// Notes how writing another output went (or a failure met before).
    pub fn other(&mut self, outcome: anyhow::Result<()>) {
        if let Err(e) = outcome {
            self.failures.push(e);
        }
    }

    /// Ends with an error naming every failure (and where the result went
    /// instead, if it had to), or Ok when everything was written.
    pub fn finish(mut self) -> anyhow::Result<()> {
        if self.result_failed && !self.result_written {
            match files::write_new_in_temp_dir(self.file_name, self.json.as_bytes()) {
                Ok(fallback) => println!(
                    "The result could not be written where asked (below); it was written to {} instead",
                    fallback.display()
                ),
                Err(e) => self
                    .failures
                    .push(anyhow::Error::new(e).context("the fallback copy failed too")),
            }
        }
        match self.failures.len() {
            0 => Ok(()),
            1 => Err(self.failures.remove(0)),
            n => {
                let all: Vec<String> = self.failures.iter().map(describe).collect();
                anyhow::bail!("{n} outputs failed: {}", all.join("; "))
            }
        }
    }
}

/// The error and its causes, `: `-separated, each said once: a library error
/// often names its source in its own message too.
pub fn describe(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}
