//! The kernel side a [`crate::Session`] runs over: the BPF programs
//! ([`BpfSide`]) or the tracefs stream with the same logic in user space
//! ([`TracefsSide`]). Both give the same histogram counts, counters and
//! windows, so that the analysis, snapshots, live view, metrics and result
//! are one code.

use std::time::Duration;

use crate::document::{Backend, PathReads};
use crate::error::{Result, WatchError};
use crate::loader::{BpfSide, Counters};
use crate::records::RawWindow;
use crate::tracefs_side::TracefsSide;

/// What the session needs of a kernel side.
pub trait KernelSide {
    /// Which side this is.
    fn backend(&self) -> Backend;
    /// Starts watching thread `tid`.
    fn watch(&mut self, tid: u32) -> Result<()>;
    /// Stops watching thread `tid`.
    fn unwatch(&mut self, tid: u32);
    /// The threads watched now (those added on fork included).
    fn watched(&self) -> Vec<u32>;
    /// Makes the side's fast copy of the watched set agree with `watched`
    /// (what [`KernelSide::watched`] just returned; the BPF side's bits, see
    /// [`BpfSide::resync_bits`]). Called on every rescan.
    fn resync(&mut self, _watched: &[u32]) {}
    /// Every histogram bucket counted so far: `(pid, kind, bucket, count)`.
    fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)>;
    /// Takes the buckets of threads `tids` (that ended) out of the side,
    /// freeing their room, and returns them as `histogram_counts` would.
    fn take_histograms(&mut self, tids: &[u32]) -> Vec<(u32, u32, u32, u64)>;
    /// Takes the buckets `rows` (as `histogram_counts` read them) out of
    /// the side, with their counts now: `take_histograms` without a pass
    /// over every bucket.
    fn take_rows(&mut self, rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)>;
    /// The counters.
    fn counters(&self) -> Counters;
    /// Waits up to `timeout` for windows (the tracefs side reads and
    /// analyses the events that came meanwhile).
    fn wait(&mut self, timeout: Duration) -> Result<()>;
    /// The next window, if one came.
    fn next_window(&mut self) -> Option<Result<RawWindow>>;
    /// Kernel time spent in the side's programs and their runs (BPF; zero
    /// for tracefs, whose recording cost is not measurable per event).
    fn kernel_time(&self) -> (Duration, u64);
    /// Remarks for the result (optional tracepoints missing, ...).
    fn notes(&self) -> Vec<String>;
    /// How the side reads the kernel memory on a wake-up's path (BPF only).
    fn path_reads(&self) -> Option<PathReads> {
        None
    }
    /// Detaches the side from the kernel's events (`false`) or attaches it
    /// again (`true`), only the programs named in `only` when it is not
    /// empty: see [`BpfSide::set_attached`]. The tracefs side cannot.
    fn set_attached(&mut self, _on: bool, _only: &[String]) -> Result<()> {
        Err(WatchError::Tracefs(
            "detaching from the events is for the BPF side only".into(),
        ))
    }
}

impl KernelSide for BpfSide {
    fn backend(&self) -> Backend {
        Backend::Bpf
    }
    fn path_reads(&self) -> Option<PathReads> {
        Some(if self.probe_reads.is_some() {
            PathReads::ProbeReads
        } else {
            PathReads::PlainLoads
        })
    }
    fn watch(&mut self, tid: u32) -> Result<()> {
        BpfSide::watch(self, tid)
    }
    fn unwatch(&mut self, tid: u32) {
        BpfSide::unwatch(self, tid)
    }
    fn watched(&self) -> Vec<u32> {
        BpfSide::watched(self)
    }
    fn resync(&mut self, watched: &[u32]) {
        BpfSide::resync_bits(self, watched)
    }
    fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)> {
        BpfSide::histogram_counts(self)
    }
    fn take_histograms(&mut self, tids: &[u32]) -> Vec<(u32, u32, u32, u64)> {
        BpfSide::take_histograms(self, tids)
    }
    fn take_rows(&mut self, rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)> {
        BpfSide::take_rows(self, rows)
    }
    fn counters(&self) -> Counters {
        BpfSide::counters(self)
    }
    fn wait(&mut self, timeout: Duration) -> Result<()> {
        BpfSide::wait(self, timeout);
        Ok(())
    }
    fn next_window(&mut self) -> Option<Result<RawWindow>> {
        BpfSide::next_window(self)
    }
    fn kernel_time(&self) -> (Duration, u64) {
        BpfSide::kernel_time(self)
    }
    fn set_attached(&mut self, on: bool, only: &[String]) -> Result<()> {
        BpfSide::set_attached(self, on, only)
    }
    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .skipped
            .iter()
            .map(|s| format!("optional tracepoint not on this kernel: {s}"))
            .collect();
        if let Some(why) = &self.probe_reads {
            notes.push(format!(
                "kernel memory on the wake-up's path read with bpf_probe_read_kernel(): {why}"
            ));
        }
        notes.extend(self.timer_program_note());
        notes
    }
}

impl KernelSide for TracefsSide {
    fn backend(&self) -> Backend {
        Backend::Tracefs
    }
    fn watch(&mut self, tid: u32) -> Result<()> {
        if self.emulator_mut().watch(tid) {
            Ok(())
        } else {
            Err(WatchError::Selection(format!(
                "too many tasks to watch (at most {})",
                crate::bpf_emulator::MAX_WATCHED
            )))
        }
    }
    fn unwatch(&mut self, tid: u32) {
        self.emulator_mut().unwatch(tid)
    }
    fn watched(&self) -> Vec<u32> {
        self.emulator().watched()
    }
    fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)> {
        self.emulator().histogram_counts()
    }
    fn take_histograms(&mut self, tids: &[u32]) -> Vec<(u32, u32, u32, u64)> {
        self.emulator_mut().take_histograms(tids)
    }
    fn take_rows(&mut self, rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)> {
        self.emulator_mut().take_rows(rows)
    }
    fn counters(&self) -> Counters {
        TracefsSide::counters(self)
    }
    fn wait(&mut self, timeout: Duration) -> Result<()> {
        TracefsSide::wait(self, timeout)
    }
    fn next_window(&mut self) -> Option<Result<RawWindow>> {
        TracefsSide::next_window(self).map(Ok)
    }
    fn kernel_time(&self) -> (Duration, u64) {
        (Duration::ZERO, 0)
    }
    fn notes(&self) -> Vec<String> {
        let mut n = self.notes.clone();
        n.push(
            "measured through tracefs (--tracefs): overhead counts watch's process only; the kernel's cost of recording every event is not in it (docs/watch.md gives measured figures)"
                .into(),
        );
        let inferred = self.emulator().inferred_switches();
        if inferred > 0 {
            n.push(format!(
                "{inferred} task switches were missing from the trace (this kernel does not record every sched_switch in tracefs) and were put in at the next task's first event: those wake-ups are measured to that moment, later than the switch by the time the task took to its first traced event"
            ));
        }
        if self.pages_after_loss > 0 {
            n.push(format!(
                "the kernel flagged lost events before {} ring-buffer pages: wake-ups around them may be missing",
                self.pages_after_loss
            ));
        }
        n
    }
}
