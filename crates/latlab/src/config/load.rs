//! `latlab load`'s arguments resolved into the load and its options.

use std::path::PathBuf;

use anyhow::Context;
use latlab_load::{LoadOptions, LoadSpec};

use crate::cmd::load::LoadArgs;

/// `latlab load`, resolved.
#[derive(Debug)]
pub struct LoadRun {
    /// The load to run (empty: an idle run, reported as such).
    pub spec: LoadSpec,
    /// Its options.
    pub options: LoadOptions,
    /// `--json FILE`, whose directory exists.
    pub json: Option<PathBuf>,
}

/// Validates `args` into a [`LoadRun`].
pub fn resolve(args: &LoadArgs) -> anyhow::Result<LoadRun> {
    let text = args.spec.clone().unwrap_or_else(|| {
        if args.load_cmd.is_some() {
            "none"
        } else {
            "full"
        }
        .to_owned()
    });
    let mut spec: LoadSpec = text.parse()?;
    if let Some(cmd) = &args.load_cmd {
        spec = spec.with_command(cmd.clone());
    }
    if spec.is_empty() {
        eprintln!("latlab load: {text:?} runs no load; reporting an idle run");
    }
    let defaults = LoadOptions::default();
    let options = LoadOptions {
        disk_cap_bytes: args.disk_cap,
        temp_root: args.temp_dir.clone().unwrap_or(defaults.temp_root),
        cpus: match &args.cpus {
            Some(list) => latlab_rt::sched::parse_cpu_list(list)?,
            None => Vec::new(),
        },
        nice: args.nice,
        sample_interval: args.sample_interval,
        net_message_bytes: usize::try_from(args.net_msg_size)
            .context("--net-msg-size too large")?,
        ..defaults
    };
    if let Some(parent) = args.json.as_deref().and_then(std::path::Path::parent) {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            anyhow::bail!(
                "--json: directory {} does not exist; create it or give another path",
                parent.display()
            );
        }
    }
    Ok(LoadRun {
        spec,
        options,
        json: args.json.clone(),
    })
}
