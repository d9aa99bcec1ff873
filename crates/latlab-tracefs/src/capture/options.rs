//! What to capture and how: [`CaptureOptions`] and the trace clock.

use std::path::PathBuf;

/// The clock latlab asks for: CLOCK_MONOTONIC, the measurement threads' clock.
pub const TRACE_CLOCK: &str = "mono";

/// What to capture and how.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// `--events` items (see [`crate::parse_event_spec`]); empty means the defaults.
    pub events: Vec<String>,
    /// Ring-buffer size per CPU in KiB (`buffer_size_kb`); `None` sizes it
    /// from the available memory (see [`crate::ringbuf::auto_kb`]) when
    /// streaming, and keeps the kernel's in flight-recorder mode.
    pub buffer_size_kb: Option<u32>,
    /// Let each CPU's buffer double, up to this many KiB, when a drain finds
    /// it more than half full. `None`: up to the automatic bound when the
    /// size is automatic, no growth when it is given.
    pub grow_to_kb: Option<u32>,
    /// Keep events only in the ring buffer (no streaming) until
    /// [`Capture::snapshot_to`] or [`Capture::stop`].
    pub flight_recorder: bool,
    /// Where per-CPU temporary files go (default: the system temp dir). Put
    /// it on the same file system as the output for long recordings.
    pub temp_dir: Option<PathBuf>,
    /// Store `/proc/kallsyms` in the file so function addresses (timer
    /// callbacks, work functions) resolve to names. Adds a few MiB.
    pub kallsyms: bool,
    /// The CPUs being measured (the real-time tasks' CPUs). When given, and
    /// not every CPU, the page allocator's events (`kmem`, see
    /// [`crate::events::MEASURED_CPUS_ONLY_SYSTEM`]) are recorded only on
    /// them; every other event on every CPU. Empty: every event everywhere.
    pub measured_cpus: Vec<usize>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            events: Vec::new(),
            buffer_size_kb: None,
            grow_to_kb: None,
            flight_recorder: false,
            temp_dir: None,
            kallsyms: true,
            measured_cpus: Vec::new(),
        }
    }
}
