//! A capture: a private instance, enabled events, per-CPU readers (or a
//! flight-recorder ring buffer) and the `.dat` file they end in.
//!
//! One file per stage: `options` (what to capture), `start` (the instance
//! set up, the readers started), `finish` (snapshots, stop, the `.dat`
//! file), `header` (the `.dat` header: formats and the system), `live`
//! (pages read without a file), `report` (what was kept and lost) and
//! `scratch` (the directory of per-CPU page files).

mod finish;
mod header;
mod live;
mod options;
mod report;
mod scratch;
mod start;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Instant;

use crate::events::EventId;
use crate::instance::Instance;
use crate::marker::{TraceFreezer, TraceMarker};
use crate::reader::{CpuReader, StopSignal};
use crate::ringbuf::RingBuffer;

use latlab_rt::scratch::ScratchDir;
pub use live::LiveReader;
pub use options::{CaptureOptions, TRACE_CLOCK};
use report::{parse_stats, CpuStats};
pub use report::{CaptureReport, CpuReport};

/// How the pages leave the ring buffers: reader threads, or snapshots.
enum Mode {
    Streaming {
        stop: Arc<StopSignal>,
        readers: Vec<CpuReader>,
    },
    FlightRecorder {
        snapshots: u32,
    },
}

/// A running kernel-event capture in a private tracefs instance.
///
/// Dropping it (on an error path, or after Ctrl-C was caught) switches
/// tracing off, stops the readers and removes the instance; only
/// [`Capture::stop`] writes a file.
pub struct Capture {
    mode: Mode,
    cpus: Vec<usize>,
    ncpus: usize,
    page_size: usize,
    long_size: usize,
    events: Vec<EventId>,
    missing: Vec<String>,
    kmem_cpus: Option<Vec<usize>>,
    notes: Vec<String>,
    trace_clock: String,
    kallsyms: bool,
    flight_recorder: bool,
    baseline: Vec<CpuStats>,
    ring: RingBuffer,
    mem_available_kb: u64,
    /// Each CPU's buffer size at the end (streaming mode), KiB.
    final_kb: Vec<(usize, u64)>,
    started: Instant,
    marker: TraceMarker,
    freezer: TraceFreezer,
    temp: ScratchDir,
    // Dropped last (field order): the instance outlives readers and marker use.
    instance: Option<Instance>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("instance", &self.instance.as_ref().map(Instance::name))
            .field("cpus", &self.cpus)
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl Capture {
    fn inst(&self) -> &Instance {
        self.instance.as_ref().expect("instance lives until stop")
    }

    /// The instance name (`latlab-<pid>...`).
    pub fn instance_name(&self) -> &str {
        self.inst().name()
    }

    /// The enabled events.
    pub fn events(&self) -> &[EventId] {
        &self.events
    }

    /// Requested events this kernel does not have (skipped).
    pub fn missing_events(&self) -> &[String] {
        &self.missing
    }

    /// Things the user should know (tracefs mounted, stale instances
    /// removed, clock missing, events that would not enable).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The ring buffers as sized at the start (the report gives the sizes
    /// at the end, after any growth).
    pub fn ring_buffer(&self) -> &RingBuffer {
        &self.ring
    }

    /// A handle on the instance's `trace_marker`.
    pub fn marker(&self) -> TraceMarker {
        self.marker.clone()
    }

    /// A handle that stops tracing at once from any thread (see
    /// [`TraceFreezer`]); pair it with [`Capture::snapshot_to`] in
    /// flight-recorder mode.
    pub fn freezer(&self) -> TraceFreezer {
        self.freezer.clone()
    }

    /// True when tracing is switched off in the instance (after
    /// [`TraceFreezer::freeze`], or while a snapshot is taken).
    pub fn is_frozen(&self) -> bool {
        self.inst()
            .read("tracing_on")
            .is_ok_and(|s| s.trim() == "0")
    }

    /// True in flight-recorder mode.
    pub fn is_flight_recorder(&self) -> bool {
        self.flight_recorder
    }

    fn read_stats(&self) -> Vec<CpuStats> {
        let mut out = vec![CpuStats::default(); self.ncpus];
        for &cpu in &self.cpus {
            if let Ok(t) = self.inst().read(&format!("per_cpu/cpu{cpu}/stats")) {
                out[cpu] = parse_stats(&t);
            }
        }
        out
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Some(inst) = &self.instance {
            let _ = inst.write("tracing_on", "0");
        }
        if let Mode::Streaming { stop, readers } =
            std::mem::replace(&mut self.mode, Mode::FlightRecorder { snapshots: 0 })
        {
            stop.stop();
            for r in readers {
                let _ = r.join();
            }
        }
        if self.instance.is_some() {
            self.release_marker();
        }
        // The instance (removed in its own Drop) is dropped after this body.
    }
}
