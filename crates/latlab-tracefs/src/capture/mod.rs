//! A capture: a private instance, enabled events, per-CPU readers (or a
//! flight-recorder ring buffer) and the `.dat` file they end in.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::dat::{self, CpuData, DatHeader};
use crate::error::{Result, TracefsError};
use crate::events::{parse_event_spec, resolve_events, EventId};
use crate::instance::{remove_stale_instances, Instance};
use crate::marker::{TraceFreezer, TraceMarker};
use crate::reader::{open_pipe_raw, read_remaining, CpuReader, Growth, StopSignal};
use crate::ringbuf::{self, RingBuffer, Sizing};
use crate::tracefs::{read_file, read_text, Tracefs};
use latlab_rt::sched::online_cpus;

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
struct CpuStats {
    read: u64,
    overrun: u64,
    commit_overrun: u64,
    dropped: u64,
}

fn parse_stats(text: &str) -> CpuStats {
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

static NEXT_TEMP: AtomicU32 = AtomicU32::new(0);

/// A temporary directory removed on drop.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new(base: Option<&Path>) -> Result<Self> {
        let base = base
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        remove_stale_temp_dirs(&base);
        loop {
            let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!(".latlab-capture-{}-{n}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(TracefsError::io("create temp dir", dir, e)),
            }
        }
    }
}

/// Removes `.latlab-capture-<pid>-<n>` directories of processes that died
/// (killed with SIGKILL mid-recording); nothing else is touched.
fn remove_stale_temp_dirs(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(".latlab-capture-") else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (pid.parse::<u32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        if pid != std::process::id() && !crate::instance::pid_alive(pid) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

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
    temp: TempDir,
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
    /// Finds or mounts tracefs, removes instances of dead latlab processes,
    /// creates `instances/latlab-<pid>`, sets `trace_clock` to `mono`,
    /// enables the events and starts tracing (and, unless in flight-recorder
    /// mode, one reader thread per online CPU).
    pub fn start(opts: &CaptureOptions) -> Result<Capture> {
        let req = parse_event_spec(&opts.events)?;
        let tracefs = Tracefs::discover()?;
        let mut notes = Vec::new();
        if tracefs.mounted_now() {
            notes.push(format!(
                "tracefs was not mounted; mounted it at {} (left mounted; `umount {}` removes it)",
                tracefs.root().display(),
                tracefs.root().display()
            ));
        }
        let stale = remove_stale_instances(&tracefs)?;
        if !stale.removed.is_empty() {
            notes.push(format!(
                "removed tracing instances left by dead latlab processes: {}",
                stale.removed.join(", ")
            ));
        }
        if !stale.busy.is_empty() {
            notes.push(format!(
                "instances of dead processes still busy, left alone: {}",
                stale.busy.join(", ")
            ));
        }
        let instance = Instance::create(&tracefs)?;
        let resolved = resolve_events(&req, &instance.path("events")).map_err(|e| match e {
            // The instance goes away; point at the top-level list.
            TracefsError::NoEvents { missing, .. } => TracefsError::NoEvents {
                missing,
                available: tracefs.path("available_events"),
            },
            other => other,
        })?;
        let mut missing: Vec<String> = resolved.missing.iter().map(|e| e.to_string()).collect();
        missing.extend(resolved.missing_systems.iter().map(|s| format!("{s}:*")));

        let clocks = instance.read("trace_clock")?;
        let trace_clock = if clocks
            .split_whitespace()
            .any(|c| c.trim_matches(['[', ']']) == TRACE_CLOCK)
        {
            instance.write("trace_clock", TRACE_CLOCK)?;
            TRACE_CLOCK.to_string()
        } else {
            notes.push(format!(
                "this kernel has no `{TRACE_CLOCK}` trace clock (has: {}); timestamps use the \
                 default clock and do not line up with CLOCK_MONOTONIC",
                clocks.trim()
            ));
            current_clock(&clocks)
        };

        let online = online_cpus();
        let scope = (!opts.measured_cpus.is_empty()
            && !online.iter().all(|c| opts.measured_cpus.contains(c)))
        .then(|| crate::events::cpu_filter(&opts.measured_cpus))
        .flatten();
        let mut kmem_cpus = None;
        let mut events = Vec::new();
        for ev in &resolved.enabled {
            if let Some(filter) = scope.as_deref().filter(|_| ev.measured_cpus_only()) {
                // Before enabling, so no event of another CPU gets in.
                let rel = format!("events/{}/{}/filter", ev.system, ev.name);
                match instance.write(&rel, filter) {
                    Ok(()) => {
                        let mut cpus = opts.measured_cpus.clone();
                        cpus.sort_unstable();
                        cpus.dedup();
                        kmem_cpus = Some(cpus);
                    }
                    Err(e) => notes.push(format!(
                        "could not limit {ev} to the measured CPUs ({filter}): {e}; it is \
                         recorded on every CPU"
                    )),
                }
            }
            let rel = format!("events/{}/{}/enable", ev.system, ev.name);
            match instance.write(&rel, "1") {
                Ok(()) => events.push(ev.clone()),
                Err(e @ TracefsError::PermissionDenied { .. }) => return Err(e),
                Err(e) => {
                    missing.push(ev.to_string());
                    notes.push(format!("could not enable {ev}: {e}"));
                }
            }
        }
        if events.is_empty() {
            return Err(TracefsError::NoEvents {
                missing: missing.join(","),
                available: tracefs.path("available_events"),
            });
        }

        let page_size = match instance.read("buffer_subbuf_size_kb") {
            Ok(t) => t
                .trim()
                .parse::<usize>()
                .map(|kb| kb * 1024)
                .unwrap_or_else(|_| host_page_size()),
            Err(_) => host_page_size(),
        };
        let long_size =
            header_page_long_size(&tracefs).unwrap_or(std::mem::size_of::<libc::c_long>());
        let cpus: Vec<usize> = online
            .into_iter()
            .filter(|c| instance.path(&format!("per_cpu/cpu{c}")).exists())
            .collect();
        let ncpus = cpus.iter().max().map_or(0, |m| m + 1);
        let mem_available_kb = ringbuf::mem_available_kb().unwrap_or(0);
        let ring = size_ring_buffer(&instance, opts, cpus.len(), page_size, mem_available_kb)?;

        let marker_path = instance.path("trace_marker");
        let marker_file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&marker_path)
            .map_err(|e| TracefsError::io("open", &marker_path, e))?;
        let marker = TraceMarker::new(OwnedFd::from(marker_file));
        let on_path = instance.path("tracing_on");
        let on_file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&on_path)
            .map_err(|e| TracefsError::io("open", &on_path, e))?;
        let freezer = TraceFreezer::new(OwnedFd::from(on_file));
        let temp = TempDir::new(opts.temp_dir.as_deref())?;

        let mut capture = Capture {
            mode: Mode::FlightRecorder { snapshots: 0 },
            cpus: cpus.clone(),
            ncpus,
            page_size,
            long_size,
            events,
            missing,
            kmem_cpus,
            notes,
            trace_clock,
            kallsyms: opts.kallsyms,
            flight_recorder: opts.flight_recorder,
            baseline: vec![CpuStats::default(); ncpus],
            ring,
            mem_available_kb,
            final_kb: Vec::new(),
            started: Instant::now(),
            marker,
            freezer,
            temp,
            instance: Some(instance),
        };
        capture.baseline = capture.read_stats();
        if !opts.flight_recorder {
            let stop =
                StopSignal::new().map_err(|e| TracefsError::io("create eventfd", "eventfd", e))?;
            let mut readers = Vec::with_capacity(cpus.len());
            // Install the mode first so Drop stops already-started readers on error.
            capture.mode = Mode::Streaming {
                stop: stop.clone(),
                readers: Vec::new(),
            };
            for &cpu in &cpus {
                let src = capture
                    .inst()
                    .path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
                let out = capture.temp.0.join(format!("cpu{cpu}.raw"));
                let growth = Growth {
                    size_file: capture
                        .inst()
                        .path(&format!("per_cpu/cpu{cpu}/buffer_size_kb")),
                    kb: capture.ring.kb_per_cpu,
                    max_kb: capture.ring.max_kb_per_cpu,
                };
                match CpuReader::spawn(cpu, src, out, page_size, growth, stop.clone()) {
                    Ok(r) => readers.push(r),
                    Err(e) => {
                        capture.mode = Mode::Streaming { stop, readers };
                        return Err(e);
                    }
                }
            }
            capture.mode = Mode::Streaming { stop, readers };
        }
        capture.inst().write("tracing_on", "1")?;
        capture.started = Instant::now();
        Ok(capture)
    }

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

    fn drain_to_temp(&self, n: u32) -> Result<Vec<(usize, PathBuf)>> {
        let mut files = Vec::new();
        for &cpu in &self.cpus {
            let src_path = self
                .inst()
                .path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let src = open_pipe_raw(&src_path, cpu)?;
            let out_path = self.temp.0.join(format!("snap{n}-cpu{cpu}.raw"));
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
    fn release_marker(&self) {
        if let Ok(null) = OpenOptions::new().write(true).open("/dev/null") {
            for fd in [self.marker.raw_fd(), self.freezer.raw_fd()] {
                // SAFETY: both descriptors are valid; dup3 atomically replaces fd.
                unsafe { libc::dup3(null.as_raw_fd(), fd, libc::O_CLOEXEC) };
            }
        }
    }

    fn finish_file(&mut self, out: &Path, files: &[(usize, PathBuf)]) -> Result<CaptureReport> {
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

    fn build_header(&self) -> Result<DatHeader> {
        let inst = self.inst();
        let tracefs = inst.tracefs();
        let mut h = DatHeader {
            page_size: self.page_size as u32,
            header_page: tracefs.read("events/header_page")?,
            header_event: tracefs.read("events/header_event")?,
            trace_clock: self.trace_clock.clone(),
            ..Default::default()
        };
        let ftrace_dir = tracefs.path("events/ftrace");
        if let Ok(entries) = fs::read_dir(&ftrace_dir) {
            let mut names: Vec<PathBuf> =
                entries.flatten().map(|e| e.path().join("format")).collect();
            names.sort();
            for p in names.into_iter().filter(|p| p.exists()) {
                h.ftrace_formats.push(read_file(&p)?);
            }
        }
        let mut systems: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
        for ev in &self.events {
            let p = inst.path(&format!("events/{}/{}/format", ev.system, ev.name));
            systems.entry(&ev.system).or_default().push(read_file(&p)?);
        }
        h.event_formats = systems
            .into_iter()
            .map(|(s, f)| (s.to_string(), f))
            .collect();
        if self.kallsyms {
            h.kallsyms = read_file(Path::new("/proc/kallsyms")).unwrap_or_default();
        }
        h.printk_formats = tracefs.read("printk_formats").unwrap_or_default();
        h.cmdlines = cmdlines(tracefs);
        for &cpu in &self.cpus {
            let mut text = format!("CPU: {cpu}\n").into_bytes();
            text.extend(
                inst.read(&format!("per_cpu/cpu{cpu}/stats"))
                    .unwrap_or_default()
                    .bytes(),
            );
            text.push(0);
            h.options.push((dat::OPTION_CPUSTAT, text));
        }
        let mut clock = inst.read("trace_clock").unwrap_or_default().into_bytes();
        clock.push(0);
        h.options.push((dat::OPTION_TRACECLOCK, clock));
        h.options.push((dat::OPTION_UNAME, nul_terminated(uname())));
        h.options.push((
            dat::OPTION_VERSION,
            nul_terminated(format!("latlab {}", env!("CARGO_PKG_VERSION"))),
        ));
        h.options.push((
            dat::OPTION_CPUCOUNT,
            (self.ncpus as u32).to_ne_bytes().to_vec(),
        ));
        Ok(h)
    }
}

/// Per-CPU readers of a flight-recorder capture's ring buffers, for a caller
/// that decodes the events as they arrive (`latlab watch --tracefs`):
/// nothing goes to disk. Drop it before [`Capture::discard`]: its open files
/// keep the instance busy.
#[derive(Debug)]
pub struct LiveReader {
    files: Vec<(usize, File)>,
    page_size: usize,
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

/// Sets the instance's ring-buffer size (see [`CaptureOptions::buffer_size_kb`])
/// and describes the choice. An automatic size the kernel cannot allocate
/// is halved until it can (never below the kernel's own size).
fn size_ring_buffer(
    instance: &Instance,
    opts: &CaptureOptions,
    cpus: usize,
    page_size: usize,
    mem_available_kb: u64,
) -> Result<RingBuffer> {
    let current = instance
        .read("buffer_size_kb")
        .ok()
        .and_then(|t| ringbuf::parse_buffer_size_kb(&t))
        .unwrap_or(ringbuf::MIN_AUTO_KB_PER_CPU);
    let page_kb = (page_size as u64 / 1024).max(1);
    // The kernel rounds a size to whole sub-buffers: what it reads back is
    // what the buffer takes.
    let read_back = |asked: u64| {
        instance
            .read("buffer_size_kb")
            .ok()
            .and_then(|t| ringbuf::parse_buffer_size_kb(&t))
            .unwrap_or(asked)
    };
    if let Some(kb) = opts.buffer_size_kb {
        instance.write("buffer_size_kb", &kb.to_string())?;
        let kb = read_back(kb as u64);
        let max = opts.grow_to_kb.map_or(kb, u64::from);
        return Ok(RingBuffer::new(
            kb,
            cpus,
            Sizing::Given,
            max,
            mem_available_kb,
        ));
    }
    if opts.flight_recorder || mem_available_kb == 0 {
        return Ok(RingBuffer::new(
            current,
            cpus,
            Sizing::Kernel,
            current,
            mem_available_kb,
        ));
    }
    let mut kb = ringbuf::auto_kb(mem_available_kb, cpus, current, page_kb);
    let max = opts.grow_to_kb.map_or_else(
        || ringbuf::auto_max_kb(mem_available_kb, cpus, current, page_kb),
        u64::from,
    );
    loop {
        match instance.write("buffer_size_kb", &kb.to_string()) {
            Ok(()) => break,
            Err(e @ TracefsError::PermissionDenied { .. }) => return Err(e),
            Err(_) if kb / 2 >= current => kb = kb / 2 / page_kb * page_kb,
            Err(e) => return Err(e),
        }
    }
    let kb = read_back(kb);
    Ok(RingBuffer::new(
        kb,
        cpus,
        Sizing::Auto,
        max,
        mem_available_kb,
    ))
}

fn nul_terminated(s: String) -> Vec<u8> {
    let mut v = s.into_bytes();
    v.push(0);
    v
}

fn current_clock(clocks: &str) -> String {
    clocks
        .split_whitespace()
        .find(|c| c.starts_with('['))
        .map(|c| c.trim_matches(['[', ']']).to_string())
        .unwrap_or_else(|| "local".into())
}

fn host_page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// The kernel's long size, from the `commit` field of `header_page`.
fn header_page_long_size(tracefs: &Tracefs) -> Option<usize> {
    let text = read_text(&tracefs.path("events/header_page")).ok()?;
    let line = text.lines().find(|l| l.contains("commit;"))?;
    let size = line
        .split(';')
        .find_map(|p| p.trim().strip_prefix("size:"))?;
    size.trim().parse().ok()
}

fn uname() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        field(&u.sysname),
        field(&u.nodename),
        field(&u.release),
        field(&u.version)
    )
}

/// `pid comm` lines: the kernel's saved_cmdlines, completed from /proc.
fn cmdlines(tracefs: &Tracefs) -> Vec<u8> {
    let mut map: BTreeMap<u32, String> = BTreeMap::new();
    if let Ok(text) = read_text(&tracefs.path("saved_cmdlines")) {
        for line in text.lines() {
            if let Some((pid, comm)) = line.split_once(' ') {
                if let Ok(pid) = pid.parse() {
                    map.insert(pid, comm.to_string());
                }
            }
        }
    }
    if let Ok(entries) = fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            add_comm(&mut map, pid, &e.path());
            if let Ok(tasks) = fs::read_dir(e.path().join("task")) {
                for t in tasks.flatten() {
                    if let Ok(tid) = t.file_name().to_string_lossy().parse::<u32>() {
                        add_comm(&mut map, tid, &t.path());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (pid, comm) in map {
        out.extend_from_slice(format!("{pid} {comm}\n").as_bytes());
    }
    out
}

fn add_comm(map: &mut BTreeMap<u32, String>, pid: u32, dir: &Path) {
    if map.contains_key(&pid) {
        return;
    }
    if let Ok(c) = fs::read_to_string(dir.join("comm")) {
        map.insert(pid, c.trim_end().to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_parse() {
        let s = parse_stats(
            "entries: 5\noverrun: 3\ncommit overrun: 1\nbytes: 100\noldest event ts: 1.5\n\
             now ts: 2.0\ndropped events: 2\nread events: 42\n",
        );
        assert_eq!(
            (s.read, s.overrun, s.commit_overrun, s.dropped),
            (42, 3, 1, 2)
        );
    }

    #[test]
    fn capture_and_marker_can_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send::<Capture>();
        send_sync::<TraceMarker>();
        send_sync::<CaptureReport>();
    }

    #[test]
    fn stale_temp_dirs_of_dead_processes_go_others_stay() {
        let base = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = base.path().join(format!(".latlab-capture-{dead}-0"));
        let live = base.path().join(".latlab-capture-1-0");
        let other = base.path().join(format!(".latlab-capture-{dead}-x"));
        for d in [&stale, &live, &other] {
            fs::create_dir(d).unwrap();
            fs::write(d.join("cpu0.raw"), b"x").unwrap();
        }
        let t = TempDir::new(Some(base.path())).unwrap();
        assert!(!stale.exists());
        assert!(live.exists() && other.exists());
        let path = t.0.clone();
        assert!(path.is_dir());
        drop(t);
        assert!(!path.exists());
    }

    #[test]
    fn loss_advice_names_the_count_the_buffer_and_a_larger_size() {
        let mut r = CaptureReport {
            total_events: 900,
            lost_events: 100,
            cpus: vec![
                CpuReport {
                    cpu: 0,
                    buffer_kb: 1408,
                    ..Default::default()
                },
                CpuReport {
                    cpu: 1,
                    buffer_kb: 2048,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        r.ring_buffer.kb_per_cpu = 1408;
        let a = r.loss_advice("--buffer-size", "--events").unwrap();
        assert!(a.starts_with("100 events were lost (10.00 %"), "{a}");
        assert!(a.contains("ring buffer of 2 MiB per CPU"), "{a}");
        // 2 MiB x 2 x 1.1, rounded up to whole MiB.
        assert!(
            a.contains("use --buffer-size 5120 (KiB per CPU, 10 MiB in all)"),
            "{a}"
        );
        r.flight_recorder = true;
        assert_eq!(r.loss_advice("--buffer-size", "--events"), None);
        r.flight_recorder = false;
        r.lost_events = 0;
        assert_eq!(r.loss_advice("--buffer-size", "--events"), None);
    }

    #[test]
    fn clock_parse() {
        assert_eq!(current_clock("local global [mono] boot"), "mono");
        assert_eq!(current_clock("[local] global"), "local");
    }
}
