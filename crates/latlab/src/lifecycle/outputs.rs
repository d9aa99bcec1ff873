//! Where a measuring command's result goes, as its flags say: the saved
//! copy and the history, the test-farm formats and `--push` (latlab-session
//! writes the files).

use std::path::{Path, PathBuf};

use anyhow::Context;
use latlab_session::outputs::{unique_dir, write_file, Destinations, OutputFiles};

use super::Outputs;

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

impl Destinations for Outputs {
    fn json(&self) -> Option<&Path> {
        self.json.as_deref()
    }

    fn histogram_text(&self) -> Option<&Path> {
        self.histogram_text.as_deref()
    }

    fn saves(&self) -> bool {
        !self.save.no_save
    }

    fn save(
        &self,
        stamp: &str,
        file_name: &str,
        json: &str,
        document: &serde_json::Value,
    ) -> anyhow::Result<()> {
        self.save.save(stamp, file_name, json, document)
    }

    fn emit<T>(&self, result: &T, files: &mut OutputFiles) -> anyhow::Result<()>
    where
        T: serde::Serialize
            + latlab_report::formats::JunitXml
            + latlab_report::formats::LavaTestCases,
    {
        self.farm.emit(result, files)
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
