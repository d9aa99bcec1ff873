//! latlab-rt: the real-time environment of a measurement.
//!
//! - [`autogroup`]: running again in a scheduler autogroup of our own at a chosen nice;
//! - [`jobcontrol`]: Ctrl-Z and `fg` for the process groups we start;
//! - [`sched`]: scheduling policy, priority and CPU affinity of a thread, CPU
//!   lists and the online CPUs;
//! - [`cpuset`]: a set of CPUs for affinity, the kernel's `cpu_set_t` bounds-checked;
//! - [`scratch`]: a private scratch directory tagged with our pid, removed on
//!   drop, and the clean-up of those killed processes left behind;
//! - [`process`]: whether another process is alive;
//! - [`memory`]: `mlockall` and stack prefaulting;
//! - [`dma`]: holding `/dev/cpu_dma_latency` so CPUs stay out of deep idle;
//! - [`privilege`]: probing what this process may do, with errors that name the fix;
//! - [`monitor`]: the hook trait that follows a measurement from the calling thread;
//! - [`session`]: the one real-time session every measuring command enters
//!   (privilege probe, mlock, cpu_dma_latency, warnings, steal time, stop signals);
//! - [`stop`]: a Ctrl-C / SIGTERM stop request shared by every long-running
//!   command, and the one way it ends their waits (sleeps on it, interrupted
//!   system calls);
//! - [`signal`]: installing a signal handler;
//! - [`clock`]: CLOCK_MONOTONIC in nanoseconds, and sleeping to a deadline on it;
//! - [`duration`]: durations as people write them, always with a unit (`30s`, `1ms`, `40us`);
//! - [`rng`]: a tiny seedable random generator;
//! - [`wait`]: timed waits between threads (an event, a condition variable)
//!   that keep their nanoseconds on 32-bit targets, where std's do not;
//! - [`sysinfo`]: the facts about the machine that every result records.
//!
//! ```
//! let now = latlab_rt::clock::monotonic_ns();
//! assert!(latlab_rt::clock::monotonic_ns() >= now);
//! ```

#![warn(missing_docs)]

pub mod autogroup;
pub mod clock;
pub mod cpuset;
pub mod dma;
pub mod duration;
pub mod files;
pub mod jobcontrol;
pub mod memory;
pub mod monitor;
pub mod privilege;
pub mod process;
pub mod rng;
pub mod sched;
pub mod scratch;
pub mod session;
pub mod signal;
pub mod stop;
pub mod sysinfo;
pub mod wait;

mod error;
pub use error::RtError;
