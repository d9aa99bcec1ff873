//! The capture's scratch directory for per-CPU page files: latlab-rt's
//! pid-tagged [`ScratchDir`], named `.latlab-capture-<pid>-<n>`, so that a
//! later capture removes those of processes killed mid-recording.

use std::path::Path;

use latlab_rt::scratch::ScratchDir;

use crate::error::{Result, TracefsError};

/// The prefix of a capture's scratch directories.
pub(super) const PREFIX: &str = ".latlab-capture-";

/// A fresh scratch directory under `base` (the temp dir when `None`).
pub(super) fn create(base: Option<&Path>) -> Result<ScratchDir> {
    ScratchDir::create(PREFIX, base)
        .map_err(|e| TracefsError::io("create temp dir", e.path, e.source))
}
