//! What a capture or snapshot kept and lost, per CPU, from the instance's
//! `per_cpu/cpuN/stats` files.

use std::path::PathBuf;

use crate::ringbuf::RingBuffer;

/// Per-CPU figures of a capture or snapshot.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct CpuReport {
    /// The CPU number.
    pub cpu: usize,
    /// Events read from the ring buffer (`read events` in the CPU's `stats`).
    pub events: u64,
    /// Events lost to ring-buffer overrun (overwritten before they were read).
    pub overrun: u64,
    /// Events lost because an interrupting writer wrapped the buffer (`commit overrun`).
    pub commit_overrun: u64,
    /// Events dropped because the buffer was full (`dropped events`).
    pub dropped: u64,
    /// All lost events: overrun + commit_overrun + dropped.
    pub lost: u64,
    /// Pages of data stored for this CPU.
    pub pages: u64,
    /// Pages flagged by the kernel as "events lost before this page".
    pub pages_after_loss: u64,
    /// Bytes of ring-buffer data stored for this CPU.
    pub bytes: u64,
    /// The CPU's ring-buffer size at the end, in KiB (after any growth).
    pub buffer_kb: u64,
}

/// What a capture (or one flight-recorder snapshot) wrote.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct CaptureReport {
    /// The `.dat` file written.
    pub path: PathBuf,
    /// The tracing instance used.
    pub instance: String,
    /// `true` for a flight-recorder snapshot (only the ring buffer's content).
    pub flight_recorder: bool,
    /// The events that were enabled (`system:event`).
    pub events_enabled: Vec<String>,
    /// Requested events this kernel does not have.
    pub events_missing: Vec<String>,
    /// The CPUs the page allocator's (`kmem`) events were recorded on, the
    /// measured ones; absent when they were recorded on every CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kmem_cpus: Option<Vec<usize>>,
    /// The trace clock used.
    pub trace_clock: String,
    /// Ring-buffer page size in bytes.
    pub page_size: usize,
    /// Per-CPU figures.
    pub cpus: Vec<CpuReport>,
    /// Sum of `events` over CPUs.
    pub total_events: u64,
    /// Sum of `lost` over CPUs. In flight-recorder mode these are the events
    /// the ring buffer overwrote, as designed, to keep the newest ones.
    pub lost_events: u64,
    /// Size of the `.dat` file in bytes.
    pub file_bytes: u64,
    /// Seconds from start to stop (or snapshot).
    pub duration_s: f64,
    /// The ring buffers: size per CPU, how it was chosen, memory taken.
    pub ring_buffer: RingBuffer,
}

impl CaptureReport {
    /// When events were lost: how many, with what buffer, and what to
    /// change (`size_flag` names the option that sets the size, e.g.
    /// `--buffer-size`). `None` when nothing was lost or in flight-recorder
    /// mode (where overwriting is the design).
    pub fn loss_advice(&self, size_flag: &str, events_flag: &str) -> Option<String> {
        if self.lost_events == 0 || self.flight_recorder {
            return None;
        }
        let total = self.lost_events + self.total_events;
        let pct = 100.0 * self.lost_events as f64 / total.max(1) as f64;
        let largest = self.cpus.iter().map(|c| c.buffer_kb).max().unwrap_or(0);
        let largest = largest.max(self.ring_buffer.kb_per_cpu);
        // Enough for the share lost plus the same again as margin.
        let factor = (2.0 * (1.0 + pct / 100.0)).max(2.0);
        let suggest = ((largest as f64 * factor) as u64).div_ceil(1024) * 1024;
        Some(format!(
            "{} events were lost ({pct:.2} %, ring-buffer overrun) with a ring buffer of {} per \
             CPU; use {size_flag} {suggest} (KiB per CPU, {} in all) or fewer {events_flag}",
            self.lost_events,
            crate::ringbuf::kib(largest),
            crate::ringbuf::kib(suggest * self.cpus.len().max(1) as u64),
        ))
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CpuStats {
    pub(super) read: u64,
    pub(super) overrun: u64,
    pub(super) commit_overrun: u64,
    pub(super) dropped: u64,
}

pub(super) fn parse_stats(text: &str) -> CpuStats {
    let mut s = CpuStats::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let Ok(v) = v.trim().parse::<u64>() else {
            continue;
        };
        match k.trim() {
            "read events" => s.read = v,
            "overrun" => s.overrun = v,
            "commit overrun" => s.commit_overrun = v,
            "dropped events" => s.dropped = v,
            _ => {}
        }
    }
    s
}
