//! The measuring commands' shared flags and where their results go; the
//! lifecycle itself (session, notes, load, live view, outputs) is
//! latlab-session's.

pub mod flags;
pub mod outputs;

pub use flags::{LoadFlags, MeasuringConfig, MeasuringFlags, Outputs, RequirementFlags};
pub use latlab_session::{write_file, Lifecycle, OutputFiles, Verbosity};
