//! Writing a measuring command's result: the saved copy and the history,
//! `--json`, the other files, the test-farm formats and `--push`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use latlab_rt::files;

/// Where a result is saved: `<output-dir>/<timestamp>/<file>` and the history.
#[derive(Debug, Clone, clap::Args)]
pub struct SaveFlags {
    /// Directory for `<timestamp>/<result file>`.
    #[arg(long, default_value = "latlab-results", value_name = "DIR")]
    pub output_dir: PathBuf,
    /// Do not write `<output-dir>/<timestamp>/<result file>` (nor store it in the history).
    #[arg(long)]
    pub no_save: bool,
    /// The history database the saved result is also stored in.
    #[command(flatten)]
    pub history: crate::cmd::history::DbArgs,
    /// Do not store the saved result in the history database.
    #[arg(long)]
    pub no_history: bool,
}

impl SaveFlags {
    /// Writes `json` as `<output-dir>/<stamp>/<file_name>` and stores
    /// `document` in the history, unless told not to; says where on stdout.
    pub fn save(
        &self,
        stamp: &str,
        file_name: &str,
        json: &str,
        document: &serde_json::Value,
    ) -> anyhow::Result<()> {
        if self.no_save {
            return Ok(());
        }
        let path = unique_dir(&self.output_dir, stamp)?.join(file_name);
        write_file(&path, json.as_bytes())?;
        println!("Result written to {}", path.display());
        if !self.no_history {
            if let Some(id) = crate::cmd::history::record_document(document, &self.history) {
                println!(
                    "Stored in the history as id {id} (`latlab history`, `latlab compare {id} ID`)"
                );
            }
        }
        Ok(())
    }
}

/// `<base>/<stamp>`, or `<stamp>-2`, `-3`... when taken.
fn unique_dir(base: &Path, stamp: &str) -> anyhow::Result<PathBuf> {
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
    /// Serializes `result` and writes it where asked: with `saved` =
    /// (flags, stamp), into `<output-dir>/<stamp>/<file_name>` and the history
    /// (unless `--no-save`); and to `json_path`. Other outputs follow with
    /// [`OutputFiles::other`].
    pub fn with_result<T: serde::Serialize>(
        result: &T,
        saved: Option<(&SaveFlags, &str)>,
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
        if let Some((save, stamp)) = saved.filter(|(save, _)| !save.no_save) {
            let document = serde_json::to_value(result).context("serializing the result")?;
            let saved = save.save(stamp, file_name, &files.json, &document);
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
                let all: Vec<String> = self.failures.iter().map(crate::cmd::describe).collect();
                anyhow::bail!("{n} outputs failed: {}", all.join("; "))
            }
        }
    }
}

/// The formats test farms read, and pushing to a `latlab serve`: shared by
/// `run`, `respond` and `lockbench`.
#[derive(Debug, Clone, clap::Args)]
pub struct FarmFlags {
    /// Also write the result as JUnit XML to FILE: one test case per
    /// requirement, the figures as properties and in the messages.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print LAVA `lava-test-case NAME --result pass|fail --measurement M
    /// --units U` lines, one per requirement (contrib/lava runs them).
    #[arg(long)]
    pub lava: bool,
    /// Send the result to a `latlab serve` at URL; when it cannot be
    /// reached the result waits in the spool for the next push.
    #[arg(long, value_name = "URL")]
    pub push: Option<String>,
    #[command(flatten)]
    pub push_auth: crate::cmd::push::PushAuth,
}

impl FarmFlags {
    /// Writes `--junit`, prints `--lava`, then `--push`es (a failed push
    /// is a warning: the result waits in the spool).
    pub fn emit<T>(&self, result: &T, files: &mut OutputFiles) -> anyhow::Result<()>
    where
        T: serde::Serialize
            + latlab_report::formats::JunitXml
            + latlab_report::formats::LavaTestCases,
    {
        if let Some(path) = &self.junit {
            files.other(write_file(path, result.junit_xml().as_bytes()));
        }
        if self.lava {
            print!("{}", result.lava_test_cases());
        }
        if let Some(url) = &self.push {
            let document = serde_json::to_value(result).context("serializing the result")?;
            crate::cmd::push::push_after_measuring(url, &self.push_auth, &document);
        }
        Ok(())
    }
}
