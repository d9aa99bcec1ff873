//! `latlab generate`: the man pages and shell completions, generated from the
//! same clap definition that parses the command line, so they cannot drift
//! from it, and the result documents' JSON Schemas, generated from their
//! types. The repository keeps the output under `docs/man/`, `completions/`
//! and `docs/schema/` (`make cli-docs` rewrites them; a test fails when they
//! are out of date), and `make install` installs the pages and completions.
//!
//! The subcommand is hidden and not part of [`crate::cli::Cli`]: it is added
//! to the parser only in `main`, so the pages and completions do not mention
//! it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{CommandFactory, Subcommand};
use clap_complete::Shell;

/// The hidden subcommand's name.
pub const NAME: &str = "generate";

/// What `latlab generate` writes.
#[derive(Debug, Subcommand)]
pub enum Generate {
    /// Man pages, one per command (latlab.1, latlab-run.1, ...), into DIR.
    Man {
        /// The directory to write into (created if missing).
        dir: PathBuf,
    },
    /// Completion scripts into DIR: latlab.bash, _latlab (zsh), latlab.fish.
    Completions {
        /// The directory to write into (created if missing).
        dir: PathBuf,
    },
    /// The JSON Schema of every result document into DIR, one
    /// `<schema name>.json` each (latlab.run.json, ...).
    Schemas {
        /// The directory to write into (created if missing).
        dir: PathBuf,
    },
}

/// The shells latlab ships completions for, each with its script's file
/// name (the name each shell's completion directory expects).
pub const SHELLS: [(Shell, &str); 3] = [
    (Shell::Bash, "latlab.bash"),
    (Shell::Zsh, "_latlab"),
    (Shell::Fish, "latlab.fish"),
];

/// `command` with the hidden `generate` subcommand added.
pub fn with_hidden_subcommand(command: clap::Command) -> clap::Command {
    let generate = Generate::augment_subcommands(
        clap::Command::new(NAME)
            .about("Write the man pages or shell completions generated from the CLI definition")
            .subcommand_required(true)
            .hide(true),
    );
    command.subcommand(generate)
}

/// Runs `latlab generate` from its parsed arguments.
pub fn execute(matches: &clap::ArgMatches) -> anyhow::Result<()> {
    use clap::FromArgMatches;
    let what = Generate::from_arg_matches(matches)?;
    match what {
        Generate::Man { dir } => write_man_pages(&dir),
        Generate::Completions { dir } => write_completions(&dir),
        Generate::Schemas { dir } => write_schemas(&dir),
    }
}

/// The CLI definition the pages and completions describe. The version is the
/// package version alone: the target and commit that `--version` adds would
/// make the committed pages change with every commit.
fn documented_command() -> clap::Command {
    crate::cli::Cli::command().version(env!("CARGO_PKG_VERSION"))
}

/// Writes one man page per command into `dir`.
fn write_man_pages(dir: &Path) -> anyhow::Result<()> {
    create_dir(dir)?;
    clap_mangen::generate_to(documented_command(), dir)
        .with_context(|| format!("writing the man pages into {}", dir.display()))
}

/// Writes the completion script of every shell in [`SHELLS`] into `dir`.
fn write_completions(dir: &Path) -> anyhow::Result<()> {
    create_dir(dir)?;
    let mut command = documented_command();
    for (shell, file_name) in SHELLS {
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut command, "latlab", &mut script);
        let path = dir.join(file_name);
        std::fs::write(&path, script).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Writes the JSON Schema of every result document kind into `dir`, as
/// `<schema name>.json`, generated from the document types
/// ([`latlab_document::schemas`]).
fn write_schemas(dir: &Path) -> anyhow::Result<()> {
    create_dir(dir)?;
    for (name, schema) in latlab_document::schemas() {
        let text = serde_json::to_string_pretty(&schema).context("serializing a schema")? + "\n";
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Creates `dir` and its parents, naming it in the error.
fn create_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}
