//! Starting a capture: tracefs found, a private instance created, the
//! clock, the events and the ring-buffer size set, the readers started.

use std::fs::OpenOptions;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

use super::header::{current_clock, header_page_long_size, host_page_size};
use super::options::{CaptureOptions, TRACE_CLOCK};
use super::report::CpuStats;
use super::{Capture, Mode};
use crate::error::{Result, TracefsError};
use crate::events::{parse_event_spec, resolve_events};
use crate::instance::{remove_stale_instances, Instance};
use crate::marker::{TraceFreezer, TraceMarker};
use crate::reader::{CpuReader, Growth, StopSignal};
use crate::ringbuf::{self, RingBuffer, Sizing};
use crate::tracefs::Tracefs;
use latlab_rt::sched::online_cpus;

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
        let temp = super::scratch::create(opts.temp_dir.as_deref())?;

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
                let out = capture.temp.path().join(format!("cpu{cpu}.raw"));
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
}

/// Sets the instance's ring-buffer size (see [`CaptureOptions::buffer_size_kb`])
/// and describes the choice. An automatic size the kernel cannot allocate
/// is halved until it can (never below the kernel's own size).
pub(super) fn size_ring_buffer(
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
