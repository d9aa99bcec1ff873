//! latlab-tune: from the fixes a latency cause calls for to fixes applied,
//! verified side by side, kept or dropped, exported, and undone.
//!
//! - [`knobs`]: read and write each [`latlab_fix::Knob`] on this system, and
//!   list the ones it has;
//! - [`journal`]: the restore file, written before any knob changes, and
//!   the restore of every recorded knob (also after SIGKILL: `tune --restore`);
//! - [`partition`]: a runtime isolated CPU partition (cgroup v2 or v1 cpuset);
//! - [`plan`]: the fixes the explained causes call for, and the standard
//!   isolation set;
//! - [`verify`]: alternating rounds with a fix applied and undone, its
//!   effect against the noise between identical rounds;
//! - [`bootline`]: the kernel command line for the real-time CPUs;
//! - [`export`]: a tuned profile, a shell script and a sysctl.d file.
//! - [`command`]: the whole tune and `--restore` as `latlab tune` runs them.

pub mod bootline;
pub mod command;
pub mod export;
pub mod journal;
pub mod knobs;
pub mod partition;
pub mod plan;
pub mod result;
pub mod rounds;
pub mod session;
pub mod snapshot;
pub mod verify;
