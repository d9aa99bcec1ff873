//! latlab-respond: response latency to an external event, the Moblin
//! paper's first test. A stimulus (the "measurement board") sends an event;
//! a responder process (SCHED_FIFO, pinned, mlocked, blocking on the event)
//! wakes and answers on a reverse channel (the stand-in for the paper's GPIO
//! toggle). Both sides time with CLOCK_MONOTONIC, so one-way (send to
//! wake-up) and round-trip (send to answer) latency are measured.
//!
//! - [`channel`]: pty (raw, the kernel tty path), pipe, eventfd, UNIX
//!   socket, UDP on loopback, signal; real serial ports;
//! - [`gpio`]: the GPIO character device (uAPI v2) answer with kernel edge timestamps;
//! - [`measure`]: the responder process and the stimulus loop;
//! - [`result`]: the `latlab.respond` JSON schema (its terminal summary is
//!   rendered by latlab-report).
//!
//! ```
//! use latlab_respond::measure::{measure, Gap, Quiet, RespondConfig};
//! use latlab_rt::sched::{usable_cpus, Policy};
//!
//! let cpus = usable_cpus();
//! let config = RespondConfig {
//!     channel: "pty".parse().unwrap(),
//!     gpio: None,
//!     count: Some(100),
//!     duration_ns: None,
//!     gap: "100us..300us".parse().unwrap(),
//!     // `latlab respond` uses SCHED_FIFO 95 and mlockall; this example
//!     // needs no privilege.
//!     policy: Policy::Other,
//!     priority: 0,
//!     responder_cpu: *cpus.last().unwrap(),
//!     stimulus_cpu: cpus[0],
//!     lock_memory: false,
//!     timeout_ns: 1_000_000_000,
//! };
//! let output = measure(&config, &mut Quiet).unwrap();
//! assert_eq!(output.answered, 100);
//! assert!(output.round_trip.stats.summary().min >= output.one_way.stats.summary().min);
//! ```

#![warn(missing_docs)]

pub mod channel;
pub mod gpio;
pub mod measure;
pub mod result;

mod error;
pub use error::RespondError;
