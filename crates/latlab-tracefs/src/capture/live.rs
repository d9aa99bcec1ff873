//! Live reading of a flight-recorder capture's ring buffers, nothing on disk.

use std::fs::File;
use std::path::PathBuf;

use super::Capture;
use crate::dat::DatHeader;
use crate::error::{Result, TracefsError};
use crate::reader::{open_pipe_raw, read_remaining};

/// Per-CPU readers of a flight-recorder capture's ring buffers, for a caller
/// that decodes the events as they arrive (`latlab watch --tracefs`):
/// nothing goes to disk. Drop it before [`Capture::discard`]: its open files
/// keep the instance busy.
#[derive(Debug)]
pub struct LiveReader {
    pub(super) files: Vec<(usize, File)>,
    pub(super) page_size: usize,
}

impl LiveReader {
    /// The CPUs read, in the order [`LiveReader::read_into`] numbers them.
    pub fn cpus(&self) -> Vec<usize> {
        self.files.iter().map(|(cpu, _)| *cpu).collect()
    }

    /// Appends every page the `index`-th CPU's ring buffer holds now (full or
    /// partial, each padded to the page size) to `out`, without waiting;
    /// returns the bytes appended.
    pub fn read_into(&self, index: usize, out: &mut Vec<u8>) -> Result<u64> {
        let (cpu, file) = &self.files[index];
        let mut out = out;
        read_remaining(file, &mut out, self.page_size).map_err(|source| TracefsError::Reader {
            cpu: *cpu,
            path: PathBuf::from(format!("per_cpu/cpu{cpu}/trace_pipe_raw")),
            source,
        })
    }
}

impl Capture {
    /// Opens every CPU's `trace_pipe_raw` for a caller that reads and
    /// decodes the pages itself (only in flight-recorder mode, where no
    /// reader thread takes them).
    pub fn live_reader(&self) -> Result<LiveReader> {
        if !self.flight_recorder {
            return Err(TracefsError::WrongMode(
                "live_reader needs a flight-recorder capture (CaptureOptions::flight_recorder)",
            ));
        }
        let mut files = Vec::with_capacity(self.cpus.len());
        for &cpu in &self.cpus {
            let path = self
                .inst()
                .path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            files.push((cpu, open_pipe_raw(&path, cpu)?));
        }
        Ok(LiveReader {
            files,
            page_size: self.page_size,
        })
    }

    /// Ring-buffer page size in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Size of the kernel's `long` in the page header (4 or 8).
    pub fn long_size(&self) -> usize {
        self.long_size
    }

    /// What decoding the pages needs (page header layout, the enabled
    /// events' formats, the trace clock), as a `.dat` header holds it.
    pub fn header(&self) -> Result<DatHeader> {
        self.build_header()
    }

    /// Events lost since the start on all CPUs (overrun, commit overrun and
    /// dropped events of the CPUs' `stats`).
    pub fn lost_events(&self) -> u64 {
        self.read_stats()
            .iter()
            .zip(&self.baseline)
            .map(|(now, base)| {
                now.overrun.saturating_sub(base.overrun)
                    + now.commit_overrun.saturating_sub(base.commit_overrun)
                    + now.dropped.saturating_sub(base.dropped)
            })
            .sum()
    }

    /// Switches tracing off and removes the instance, writing nothing (a
    /// capture read live through [`Capture::live_reader`]).
    pub fn discard(mut self) -> Result<()> {
        self.inst().write("tracing_on", "0")?;
        self.release_marker();
        match self.instance.take() {
            Some(inst) => inst.remove(),
            None => Ok(()),
        }
    }
}
