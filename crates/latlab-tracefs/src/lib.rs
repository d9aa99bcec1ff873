//! Kernel event capture from tracefs, written as trace-cmd `.dat` files.
//!
//! latlab records kernel events itself, with plain tracepoints only, on
//! kernels where `trace-cmd record` cannot run. Everything happens in a
//! private tracing instance (`instances/latlab-<pid>`) so the user's own
//! tracing setup is never touched; the instance is removed when the
//! [`Capture`] stops or is dropped, and instances left by dead latlab
//! processes are removed at the next start.
//!
//! ```no_run
//! use latlab_tracefs::{Capture, CaptureOptions};
//! # fn main() -> Result<(), latlab_tracefs::TracefsError> {
//! let opts = CaptureOptions { events: vec!["+syscalls".into()], ..Default::default() };
//! let capture = Capture::start(&opts)?;
//! let marker = capture.marker();
//! marker.write(b"workload starts").ok();
//! std::thread::sleep(std::time::Duration::from_millis(100));
//! let report = capture.stop(std::path::Path::new("latlab.dat"))?;
//! println!("{} events, {} lost", report.total_events, report.lost_events);
//! # Ok(()) }
//! ```
//!
//! The file opens in `trace-cmd report` and KernelShark. Decoding lives in
//! `latlab-ftrace`; this crate only captures.
//!
//! Event specifications need no privilege to check:
//!
//! ```
//! use latlab_tracefs::parse_event_spec;
//! let req = parse_event_spec(&["+syscalls", "-kmem"]).unwrap();
//! assert!(req.events.iter().any(|e| e.to_string() == "raw_syscalls:sys_enter"));
//! assert!(req.events.iter().any(|e| e.to_string() == "sched:sched_switch"));
//! assert!(!req.events.iter().any(|e| e.system == "kmem"));
//! ```

#![warn(missing_docs)]

mod capture;
pub mod dat;
mod error;
pub mod events;
mod instance;
mod late_marks;
mod marker;
mod reader;
pub mod ringbuf;
mod tracefs;

pub use capture::{Capture, CaptureOptions, CaptureReport, CpuReport, LiveReader, TRACE_CLOCK};
pub use error::{Result, TracefsError};
pub use events::{parse_event_spec, resolve_events, EventId, EventSet, EVENT_SETS};
pub use instance::{
    instance_owner, latlab_instances, remove_stale_instances, Instance, StaleCleanup,
    INSTANCE_PREFIX,
};
pub use late_marks::{LateMark, LateMarks};
pub use marker::{TraceFreezer, TraceMarker};
pub use ringbuf::{RingBuffer, Sizing};
pub use tracefs::{Tracefs, DEFAULT_MOUNT};
