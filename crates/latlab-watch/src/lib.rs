//! latlab-watch: the wake-ups of any task measured and explained live, in
//! the kernel, for days (`latlab watch`, issue 16).
//!
//! The kernel side (`crates/latlab-watch/bpf/watch.bpf.c`, compiled by clang, committed as
//! `crates/latlab-watch/bpf/watch.bpf.o` and loaded by [aya](https://aya-rs.dev), a pure-Rust
//! loader) measures every wake-up of the watched tasks into histograms with
//! latlab-measure's bucket scheme and sends only the windows of late
//! wake-ups (plus a sample of normal ones) to user space. This crate:
//! - [`probe`]: what the kernel and the user offer (BTF, bpf(), CAP_BPF);
//! - [`loader`]: the object loaded and attached, its maps;
//! - [`tracefs_side`] and [`bpf_emulator`]: without BPF (`--tracefs`), the same
//!   tracepoints streamed from a private tracefs instance into the BPF
//!   program's logic written in Rust;
//! - [`side`]: what the session needs of either kernel side;
//! - [`select`]: which tasks (`--pid`, `--comm`, `--rt`, a command);
//! - [`own`]: latlab's own threads, watch's cost and never a cause;
//! - [`records`] and [`window`]: a window as latlab-explain's model, so that
//!   explain's own analysis names the causes; [`functions`]: the timer
//!   callbacks' names from `/proc/kallsyms`;
//! - [`histograms`]: the kernel's counts as [`latlab_measure::histogram::Histogram`]s;
//! - [`stats`]: spikes per hour with a confidence interval, what a
//!   percentile claim needs;
//! - [`session`]: the running watch, its snapshots and its result
//!   ([`document::WatchDocument`], schema `latlab.watch`);
//! - [`metrics`]: OpenMetrics text for `--metrics`.
#![warn(missing_docs)]

#[cfg(feature = "bpf")]
pub mod bpf_emulator;
pub mod document;
pub mod error;
pub mod functions;
pub mod histograms;
pub mod irqnames;
#[cfg(feature = "bpf")]
pub mod loader;
pub mod metrics;
pub mod own;
pub mod probe;
pub mod records;
#[cfg(feature = "bpf")]
pub mod run_split;
pub mod select;
#[cfg(feature = "bpf")]
pub mod session;
#[cfg(feature = "bpf")]
pub mod side;
pub mod stats;
#[cfg(feature = "bpf")]
pub mod tracefs_side;
pub mod window;

pub use document::{Backend, PathReads, WatchDocument, WatchSchema};
pub use error::{Result, WatchError};
#[cfg(feature = "bpf")]
pub use loader::{BpfSide, Settings};
#[cfg(feature = "bpf")]
pub use session::{Session, SessionOptions};
#[cfg(feature = "bpf")]
pub use side::KernelSide;
#[cfg(feature = "bpf")]
pub use tracefs_side::TracefsSide;
