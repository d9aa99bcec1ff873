//! The lock benchmark behind `latlab lockbench`: a periodic `SCHED_FIFO` task takes a
//! shared lock every period while `SCHED_OTHER` background threads on the same CPU run
//! critical sections shaped like the paper's Table 3, plus work outside the lock.
//!
//! For each [`BenchVariant`] it measures the real-time task's wake-up latency (release
//! to running) and lock latency (release to lock acquired), overruns, the background's
//! throughput (overall and over time, the paper's Figure 13) and the lock's counters.
//!
//! - The real-time task sleeps with `clock_nanosleep(TIMER_ABSTIME)` every period, takes
//!   the lock, holds it for `rt_hold_ns` (busy), releases it and publishes its next
//!   release on the [`ReleaseTimer`].
//! - A background iteration: `outside_work_ns` of CPU work (thread CPU time) outside the
//!   lock, then one critical section at a call site drawn at random; inside the lock it
//!   spins until `CLOCK_MONOTONIC` has advanced by a hold time drawn from the site's
//!   [`HoldShape`]. Each site is a distinct `lock()` call, so the lock monitor predicts
//!   each separately.
//! - The first `warmup_ns` are not measured: the predictors learn the hold times.
//! - The measured window opens and closes at releases of the real-time task, which
//!   counts every release inside it exactly once, as a period or as an overrun, however
//!   late any thread runs.

mod config;
mod goal;
mod result;
mod runner;
#[cfg(test)]
mod tests;

pub use config::{BenchConfig, BenchVariant, SiteChoice, MAX_BENCH_SITES};
pub use goal::{goal_checks, goal_met, goal_variants_missing, GoalCheck};
pub use result::{ThroughputPoint, VariantResult};
pub use runner::{run, run_variant};
