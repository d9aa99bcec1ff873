//! tracefs for tests: found by the product's own discovery
//! ([`latlab_tracefs::Tracefs::discover`]: `/sys/kernel/tracing`, or a
//! tracefs or debugfs `tracing/` mount listed in `/proc/mounts`), and the
//! checks that a test left nothing enabled there.

use std::path::{Path, PathBuf};

use latlab_tracefs::{instance_owner, latlab_instances, Tracefs};

use crate::skip::{is_root, require_if, require_tracefs_present};

/// tracefs as latlab finds it, when this process is root and there is one;
/// otherwise skips (or fails under `LATLAB_REQUIRE_PRIVILEGE=1` or
/// `LATLAB_REQUIRE_TRACEFS=1`) naming the fix. `test` names the test in the
/// message.
pub fn require_tracefs(test: &str) -> Option<Tracefs> {
    let strict = require_tracefs_present();
    if !require_if(
        strict,
        &format!("{test}: root (tracefs access)"),
        is_root(),
        "run the tests as root (sudo -E cargo test)",
    ) {
        return None;
    }
    let found = Tracefs::discover();
    let fix = match &found {
        Ok(_) => String::new(),
        Err(err) => err.to_string(),
    };
    require_if(strict, &format!("{test}: tracefs"), found.is_ok(), &fix).then(|| found.unwrap())
}

/// The names of the tracefs instances process `pid` owns
/// (`latlab-<pid>`, `latlab-<pid>-...`).
pub fn instances_of(tracefs: &Tracefs, pid: u32) -> Vec<String> {
    latlab_instances(tracefs)
        .unwrap_or_default()
        .into_iter()
        .filter(|name| instance_owner(name) == Some(pid))
        .collect()
}

/// The directory of instance `name`.
pub fn instance_dir(tracefs: &Tracefs, name: &str) -> PathBuf {
    tracefs.path("instances").join(name)
}

/// What a test must leave as it found it in tracefs: the top-level event
/// list. Take it before the test, check with [`TracefsState::assert_clean`]
/// after.
#[derive(Debug, Clone)]
pub struct TracefsState {
    tracefs: Tracefs,
    set_event: String,
}

impl TracefsState {
    /// Reads the state now.
    pub fn now(tracefs: &Tracefs) -> TracefsState {
        TracefsState {
            tracefs: tracefs.clone(),
            set_event: top_level_events(tracefs),
        }
    }

    /// The top-level event list read when the state was taken.
    pub fn set_event(&self) -> &str {
        &self.set_event
    }

    /// Asserts that process `pid` left no instance behind and that the
    /// top-level event list is what it was (empty when it was empty).
    pub fn assert_clean(&self, pid: u32) {
        let left = instances_of(&self.tracefs, pid);
        assert!(left.is_empty(), "instances left behind: {left:?}");
        let after = top_level_events(&self.tracefs);
        assert_eq!(after, self.set_event, "top-level events changed");
        if self.set_event.trim().is_empty() {
            assert!(
                after.trim().is_empty(),
                "events enabled at top level: {after}"
            );
        }
    }
}

/// The top-level `set_event` (the events enabled outside any instance).
pub fn top_level_events(tracefs: &Tracefs) -> String {
    std::fs::read_to_string(tracefs.path("set_event")).unwrap_or_default()
}

/// A tracefs instance a test makes by hand, removed (tracing and events
/// off first) when dropped, also when the test fails.
#[derive(Debug)]
pub struct ScratchInstance(PathBuf);

impl ScratchInstance {
    /// Creates instance `name` (removing a leftover of that name first).
    pub fn create(tracefs: &Tracefs, name: &str) -> std::io::Result<ScratchInstance> {
        let dir = instance_dir(tracefs, name);
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir)?;
        Ok(ScratchInstance(dir))
    }

    /// Its directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchInstance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::write(self.0.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}
