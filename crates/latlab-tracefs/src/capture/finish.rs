//! Ending a capture: flight-recorder snapshots, stop, and the `.dat` file
//! written from the per-CPU page files.

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::report::{CaptureReport, CpuReport};
use super::{Capture, Mode};
use crate::dat::{self, CpuData};
use crate::error::{Result, TracefsError};
use crate::reader::{open_pipe_raw, read_remaining};

impl Capture {
    /// Flight-recorder mode: pauses tracing, moves what the ring buffers
    /// hold into a `.dat` file at `path`, and resumes tracing. Errors in
    /// streaming mode.
    pub fn snapshot_to(&mut self, path: &Path) -> Result<CaptureReport> {
        let Mode::FlightRecorder { snapshots } = &mut self.mode else {
            return Err(TracefsError::WrongMode(
                "snapshot_to needs a flight-recorder capture (CaptureOptions::flight_recorder)",
            ));
        };
        *snapshots += 1;
        let n = *snapshots;
        self.inst().write("tracing_on", "0")?;
        let result = self
            .drain_to_temp(n)
            .and_then(|files| self.finish_file(path, &files));
        let resumed = self.inst().write("tracing_on", "1");
        let report = result?;
        resumed?;
        Ok(report)
    }

    pub(super) fn drain_to_temp(&self, n: u32) -> Result<Vec<(usize, PathBuf)>> {
        let mut files = Vec::new();
        for &cpu in &self.cpus {
            let src_path = self
                .inst()
                .path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let src = open_pipe_raw(&src_path, cpu)?;
            let out_path = self.temp.path().join(format!("snap{n}-cpu{cpu}.raw"));
            let mut out =
                File::create(&out_path).map_err(|e| TracefsError::io("create", &out_path, e))?;
            read_remaining(&src, &mut out, self.page_size).map_err(|source| {
                TracefsError::Reader {
                    cpu,
                    path: src_path.clone(),
                    source,
                }
            })?;
            files.push((cpu, out_path));
        }
        Ok(files)
    }

    /// Stops tracing, writes everything captured to a `.dat` file at `out`,
    /// and removes the instance.
    pub fn stop(mut self, out: &Path) -> Result<CaptureReport> {
        self.inst().write("tracing_on", "0")?;
        let files = match std::mem::replace(&mut self.mode, Mode::FlightRecorder { snapshots: 0 }) {
            Mode::Streaming { stop, readers } => {
                stop.stop();
                let mut files = Vec::new();
                let mut first_err = None;
                for r in readers {
                    let (cpu, path) = (r.cpu, r.out_path.clone());
                    match r.join() {
                        Ok((_, kb)) => {
                            self.final_kb.push((cpu, kb));
                            files.push((cpu, path));
                        }
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                if let Some(e) = first_err {
                    return Err(e);
                }
                files
            }
            Mode::FlightRecorder { snapshots } => self.drain_to_temp(snapshots + 1)?,
        };
        let report = self.finish_file(out, &files)?;
        self.release_marker();
        if let Some(inst) = self.instance.take() {
            inst.remove()?;
        }
        Ok(report)
    }

    /// Points the marker and freezer descriptors at /dev/null so that no
    /// open file keeps the instance busy, even while clones are still alive.
    pub(super) fn release_marker(&self) {
        if let Ok(null) = OpenOptions::new().write(true).open("/dev/null") {
            for fd in [self.marker.raw_fd(), self.freezer.raw_fd()] {
                // SAFETY: both descriptors are valid; dup3 atomically replaces fd.
                unsafe { libc::dup3(null.as_raw_fd(), fd, libc::O_CLOEXEC) };
            }
        }
    }

    pub(super) fn finish_file(
        &mut self,
        out: &Path,
        files: &[(usize, PathBuf)],
    ) -> Result<CaptureReport> {
        let stats = self.read_stats();
        let header = self.build_header()?;
        let mut cpu_data = vec![CpuData { path: None }; self.ncpus];
        for (cpu, path) in files {
            cpu_data[*cpu] = CpuData {
                path: Some(path.clone()),
            };
        }
        let file_bytes = dat::write_dat(out, &header, &cpu_data)?;
        let mut ring = self.ring.clone();
        ring.finish(&self.final_kb, self.mem_available_kb);
        let mut report = CaptureReport {
            ring_buffer: ring,
            path: out.to_path_buf(),
            instance: self.inst().name().to_string(),
            flight_recorder: self.is_flight_recorder(),
            events_enabled: self.events.iter().map(|e| e.to_string()).collect(),
            events_missing: self.missing.clone(),
            kmem_cpus: self.kmem_cpus.clone(),
            trace_clock: self.trace_clock.clone(),
            page_size: self.page_size,
            file_bytes,
            duration_s: self.started.elapsed().as_secs_f64(),
            ..Default::default()
        };
        for (cpu, path) in files {
            let scan = dat::scan_pages(path, self.page_size, self.long_size)?;
            let (now, base) = (stats[*cpu], self.baseline[*cpu]);
            let overrun = now.overrun.saturating_sub(base.overrun);
            let commit_overrun = now.commit_overrun.saturating_sub(base.commit_overrun);
            let dropped = now.dropped.saturating_sub(base.dropped);
            report.cpus.push(CpuReport {
                cpu: *cpu,
                events: now.read.saturating_sub(base.read),
                overrun,
                commit_overrun,
                dropped,
                lost: overrun + commit_overrun + dropped,
                pages: scan.pages,
                pages_after_loss: scan.missed_flag_pages,
                bytes: scan.pages * self.page_size as u64,
                buffer_kb: self
                    .final_kb
                    .iter()
                    .find(|c| c.0 == *cpu)
                    .map_or(self.ring.kb_per_cpu, |c| c.1),
            });
            // Files of a snapshot are not needed any more.
            let _ = fs::remove_file(path);
        }
        report.total_events = report.cpus.iter().map(|c| c.events).sum();
        report.lost_events = report.cpus.iter().map(|c| c.lost).sum();
        self.baseline = stats;
        Ok(report)
    }
}
