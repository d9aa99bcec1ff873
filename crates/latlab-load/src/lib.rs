//! Background loads that report their own throughput.
//!
//! Every latency paper latlab follows measures under load: IOzone disk I/O
//! (Emblix), a counter-increment hog next to a USB reader (Moblin "full"),
//! LMBench and Netperf (MontaVista), heavy network and I/O stress (KTAS), a
//! TCP bulk sender whose "transfer time per 1 KB" shows what the real-time
//! side costs the rest of the system (delayed locking, Figure 13). This crate
//! builds those loads in, so a run is reproducible on a bare board, and counts
//! the work each one gets done, so the cost to the background is measured.
//!
//! Load kinds ([`LoadKind`]), each run by its own worker threads at
//! `SCHED_OTHER` (never real-time), nice 0 or higher:
//!
//! | kind      | work                                                        | unit  |
//! |-----------|-------------------------------------------------------------|-------|
//! | `cpu`     | tight counter increment                                     | ops   |
//! | `io`      | IOzone-like write, fsync, drop cache, read of a file whose size doubles each round up to the disk cap | bytes |
//! | `net`     | TCP bulk transfer over 127.0.0.1, fixed message size        | bytes |
//! | `udp`     | UDP datagram stream over 127.0.0.1                          | bytes |
//! | `mem`     | mmap, touch every page, munmap (page-allocator churn)       | pages |
//! | `syscall` | a storm of cheap system calls (`getppid`)                   | calls |
//! | `ipc`     | hackbench-like groups of senders and receivers over socketpairs | msgs |
//!
//! A [`LoadSpec`] is a profile (`none`, `light`, `full`) or a list such as
//! `cpu:2,io:1,net:1`, optionally with an external command
//! ([`LoadSpec::with_command`]) run via `sh -c` in its own process group.
//!
//! Safety: the `io` load writes only inside a private temporary directory that
//! is removed on stop, on error and on drop; the disk it uses is capped
//! ([`LoadOptions::disk_cap_bytes`]). Network loads bind only to 127.0.0.1.
//! The external command's whole process group is killed on stop and on drop,
//! and is killed by the kernel if latlab itself dies (`PR_SET_PDEATHSIG`).
//!
//! # Use around a measurement
//!
//! Start the load once the measurement threads are ready
//! ([`RunningLoad::start`] returns when every worker runs), call
//! [`RunningLoad::check`] now and then (a load that died makes the
//! measurement meaningless), and [`RunningLoad::stop`] before the summary;
//! the [`LoadReport`] goes into the result (it is `Serialize`), and
//! [`LoadReport::summary_line`] or [`LoadReport::table`] into the text.
//! Workers of a [`RunningLoad`] are threads of the calling process (so none
//! can outlive it) and share its address space. A real-time, memory-locked
//! measuring process runs its load with [`LoadProcess`] instead: the same
//! load in a child process (latlab re-executing itself, the child running
//! [`serve_stdio`]) at SCHED_OTHER, not memory-locked, in its own address
//! space, so the `mem` load's pages are not locked and its `munmap`s do not
//! shoot down TLB entries on the measuring CPUs. The child reports
//! readiness, failures and the final [`LoadReport`] over a pipe, and is
//! stopped cleanly by the kernel (`PR_SET_PDEATHSIG`) if latlab dies.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use latlab_load::{LoadOptions, LoadSpec, RunningLoad};
//!
//! let spec: LoadSpec = "cpu:1,syscall:1".parse()?;
//! let options = LoadOptions {
//!     sample_interval: Duration::from_millis(100),
//!     ..LoadOptions::default()
//! };
//! let load = RunningLoad::start(&spec, &options)?;
//! std::thread::sleep(Duration::from_millis(300));
//! load.check()?; // fails if a worker died
//! let report = load.stop()?;
//! let cpu = report.kind("cpu").expect("cpu was requested");
//! assert!(cpu.total > 0);
//! println!("cpu: {:.0} ops/s", cpu.per_second); // the tables are latlab-report's
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod command;
mod error;
#[doc(hidden)]
pub mod fixtures;
mod process;
mod report;
mod running;
mod sched;
mod size;
mod spec;
mod started;
mod tempdir;
mod workers;

pub use error::LoadError;
pub use process::{serve_stdio, LoadProcess};
pub use report::{
    amount, rate, short_number, si, CommandReport, KindReport, LoadDocument, LoadReport, LoadSchema,
};
pub use running::{LoadOptions, RunningLoad};
pub use size::parse_size;
pub use spec::{LoadKind, LoadSpec};
pub use started::{own_binary, StartedLoad, LOAD_SETTLE};
