//! `latlab watch --tracefs`: the kernel side without BPF. The tracepoints
//! the BPF programs use are enabled in a private tracefs instance
//! (latlab-tracefs's capture, in flight-recorder mode, read live), every
//! CPU's ring buffer is read every poll, the pages decoded
//! (latlab-ftrace), merged in time order and fed to [`BpfEmulator`], the BPF
//! logic in Rust. Events are held in memory only until they are fed;
//! nothing is written to disk. The instance is switched off and removed
//! when the side is dropped (end, Ctrl-C, SIGTERM, error).
//!
//! The cost is higher than BPF's: every event of every CPU is written to
//! the ring buffer by the kernel and then copied, decoded and analysed in
//! user space, where the BPF side keeps all but the late windows in the
//! kernel (see docs/watch.md for figures).

use std::collections::HashMap;
use std::time::Duration;

use latlab_ftrace::format::{EventFormat, Field, PageLayout, Value};
use latlab_ftrace::page::{Missed, Page};
use latlab_ftrace::Endian;
use latlab_tracefs::{Capture, CaptureOptions, LiveReader, TRACE_CLOCK};

use crate::bpf_emulator::{BpfEmulator, Event, Input};
use crate::error::{Result, WatchError};
use crate::loader::{Counters, Settings};
use crate::records::{RawWindow, VECTOR_NAMES};

/// The events enabled, and whether the watch needs them (the others are
/// taken when the kernel has them: `hrtimer_setup` replaced `hrtimer_init`
/// in 6.13, the vectors exist on x86 only).
pub const EVENTS: [(&str, bool); 23] = [
    ("sched:sched_switch", true),
    ("sched:sched_waking", true),
    ("timer:hrtimer_start", true),
    ("timer:hrtimer_expire_entry", true),
    ("timer:hrtimer_expire_exit", true),
    ("timer:hrtimer_setup", false),
    ("timer:hrtimer_init", false),
    ("irq:irq_handler_entry", true),
    ("irq:irq_handler_exit", true),
    ("irq:softirq_entry", true),
    ("irq:softirq_exit", true),
    ("irq_vectors:local_timer_entry", false),
    ("irq_vectors:local_timer_exit", false),
    ("irq_vectors:reschedule_entry", false),
    ("irq_vectors:reschedule_exit", false),
    ("irq_vectors:call_function_entry", false),
    ("irq_vectors:call_function_exit", false),
    ("irq_vectors:call_function_single_entry", false),
    ("irq_vectors:call_function_single_exit", false),
    ("irq_vectors:irq_work_entry", false),
    ("irq_vectors:irq_work_exit", false),
    ("sched:sched_process_fork", false),
    ("sched:sched_process_exit", false),
];

/// Ring-buffer size per CPU (KiB): the events of well over a second at the
/// rates seen here, while the reader comes every 100 ms.
pub const BUFFER_KB: u32 = 4096;

/// How to read one event's fields.
#[derive(Debug, Clone)]
enum Decode {
    Switch([Field; 5]),
    Waking([Field; 4]),
    IrqEntry(Field),
    IrqExit([Field; 2]),
    SoftirqEntry(Field),
    SoftirqExit(Field),
    HrtimerStart([Field; 2]),
    HrtimerSetup([Field; 3]),
    /// The timer and `now`; the callback function where the format has it.
    HrtimerEntry([Field; 2], Option<Field>),
    HrtimerExit(Field),
    VectorEntry(Field, i32),
    VectorExit(Field, i32),
    Fork([Field; 2]),
    Exit(Field),
}

/// Record bytes to [`Event`]s, from the enabled events' formats.
#[derive(Debug, Clone)]
pub struct Decoder {
    endian: Endian,
    layout: PageLayout,
    common_type: Field,
    common_pid: Field,
    by_id: HashMap<u16, Decode>,
}

fn fields<const N: usize>(f: &EventFormat, names: [&str; N]) -> Option<[Field; N]> {
    let mut out = Vec::with_capacity(N);
    for n in names {
        out.push(f.field(n)?.clone());
    }
    out.try_into().ok()
}

fn comm_of(v: Option<Value<'_>>) -> [u8; 16] {
    let mut c = [0u8; 16];
    if let Some(Value::Str(s)) = v {
        let n = s.len().min(15);
        c[..n].copy_from_slice(&s[..n]);
    }
    c
}

impl Decoder {
    /// The decoder of the formats (`(system, format file)`) and the page
    /// header layout (`events/header_page`).
    pub fn new(formats: &[(String, Vec<u8>)], header_page: &str, long_size: usize) -> Result<Self> {
        let bad = |e: latlab_ftrace::Error| WatchError::Tracefs(format!("event format: {e}"));
        let layout = PageLayout::parse(header_page).map_err(bad)?;
        let mut by_id = HashMap::new();
        let mut common = None;
        for (system, text) in formats {
            let f = EventFormat::parse(system, &String::from_utf8_lossy(text), long_size)
                .map_err(bad)?;
            if common.is_none() {
                let field = |n: &str| f.common_fields.iter().find(|c| c.name == n).cloned();
                if let (Some(t), Some(p)) = (field("common_type"), field("common_pid")) {
                    common = Some((t, p));
                }
            }
            let vector = |name: &str| {
                let base = name.trim_end_matches("_entry").trim_end_matches("_exit");
                VECTOR_NAMES
                    .iter()
                    .position(|v| *v == base)
                    .map(|i| i as i32)
            };
            let d = match (system.as_str(), f.name.as_str()) {
                ("sched", "sched_switch") => fields(
                    &f,
                    [
                        "prev_pid",
                        "prev_state",
                        "next_pid",
                        "next_prio",
                        "next_comm",
                    ],
                )
                .map(Decode::Switch),
                ("sched", "sched_waking") => {
                    fields(&f, ["pid", "prio", "target_cpu", "comm"]).map(Decode::Waking)
                }
                ("sched", "sched_process_fork") => {
                    fields(&f, ["parent_pid", "child_pid"]).map(Decode::Fork)
                }
                ("sched", "sched_process_exit") => f.field("pid").cloned().map(Decode::Exit),
                ("irq", "irq_handler_entry") => f.field("irq").cloned().map(Decode::IrqEntry),
                ("irq", "irq_handler_exit") => fields(&f, ["irq", "ret"]).map(Decode::IrqExit),
                ("irq", "softirq_entry") => f.field("vec").cloned().map(Decode::SoftirqEntry),
                ("irq", "softirq_exit") => f.field("vec").cloned().map(Decode::SoftirqExit),
                ("timer", "hrtimer_start") => {
                    fields(&f, ["hrtimer", "softexpires"]).map(Decode::HrtimerStart)
                }
                ("timer", "hrtimer_setup" | "hrtimer_init") => {
                    fields(&f, ["hrtimer", "clockid", "mode"]).map(Decode::HrtimerSetup)
                }
                ("timer", "hrtimer_expire_entry") => fields(&f, ["hrtimer", "now"])
                    .map(|t| Decode::HrtimerEntry(t, f.field("function").cloned())),
                ("timer", "hrtimer_expire_exit") => {
                    f.field("hrtimer").cloned().map(Decode::HrtimerExit)
                }
                ("irq_vectors", name) => match (vector(name), f.field("vector")) {
                    (Some(which), Some(v)) if name.ends_with("_entry") => {
                        Some(Decode::VectorEntry(v.clone(), which))
                    }
                    (Some(which), Some(v)) => Some(Decode::VectorExit(v.clone(), which)),
                    _ => None,
                },
                _ => None,
            };
            match d {
                Some(d) => {
                    by_id.insert(f.id, d);
                }
                None => {
                    return Err(WatchError::Tracefs(format!(
                    "{system}:{} lacks a field latlab watch reads (this kernel's format differs)",
                    f.name
                )))
                }
            }
        }
        let (common_type, common_pid) = common.ok_or_else(|| {
            WatchError::Tracefs("the event formats have no common_type/common_pid".into())
        })?;
        Ok(Decoder {
            endian: Endian::native(),
            layout,
            common_type,
            common_pid,
            by_id,
        })
    }

    /// The event of one record (`None`: an event not watched).
    pub fn decode(&self, ts: u64, cpu: u32, data: &[u8]) -> Option<Event> {
        let e = self.endian;
        let int = |f: &Field| f.value(data, e).and_then(|v| v.as_i64()).unwrap_or(0);
        let id = self.common_type.value(data, e)?.as_u64()? as u16;
        let input = match self.by_id.get(&id)? {
            Decode::Switch([prev, state, next, prio, comm]) => Input::Switch {
                prev_pid: int(prev) as i32,
                // Running (0) or preempted (only the bit above the
                // reported states set, "R+").
                prev_runnable: int(state) & 0xff == 0,
                next_pid: int(next) as i32,
                next_prio: int(prio) as i32,
                next_comm: comm_of(comm.value(data, e)),
            },
            Decode::Waking([pid, prio, target, comm]) => Input::Waking {
                pid: int(pid) as i32,
                prio: int(prio) as i32,
                target_cpu: int(target) as i32,
                comm: comm_of(comm.value(data, e)),
            },
            Decode::IrqEntry(irq) => Input::IrqEntry {
                irq: int(irq) as i32,
            },
            Decode::IrqExit([irq, ret]) => Input::IrqExit {
                irq: int(irq) as i32,
                ret: int(ret) as i32,
            },
            Decode::SoftirqEntry(v) => Input::SoftirqEntry { vec: int(v) as i32 },
            Decode::SoftirqExit(v) => Input::SoftirqExit { vec: int(v) as i32 },
            Decode::HrtimerStart([t, s]) => Input::HrtimerStart {
                timer: int(t) as u64,
                softexpires: int(s),
            },
            Decode::HrtimerSetup([t, c, m]) => Input::HrtimerSetup {
                timer: int(t) as u64,
                clockid: int(c) as i32,
                mode: int(m) as u32,
            },
            Decode::HrtimerEntry([t, now], function) => Input::HrtimerEntry {
                timer: int(t) as u64,
                now: int(now),
                function: function.as_ref().map_or(0, |f| int(f) as u64),
            },
            Decode::HrtimerExit(t) => Input::HrtimerExit {
                timer: int(t) as u64,
            },
            Decode::VectorEntry(v, which) => Input::VectorEntry {
                vector: int(v) as i32,
                which: *which,
            },
            Decode::VectorExit(v, which) => Input::VectorExit {
                vector: int(v) as i32,
                which: *which,
            },
            Decode::Fork([p, c]) => Input::Fork {
                parent: int(p) as i32,
                child: int(c) as i32,
            },
            Decode::Exit(p) => Input::Exit { pid: int(p) as i32 },
        };
        Some(Event {
            ts,
            cpu,
            pid: int(&self.common_pid) as i32,
            input,
        })
    }

    /// The events of one ring-buffer page, appended to `out`; whether the
    /// kernel flagged events lost before it.
    pub fn page(&self, page: &[u8], cpu: u32, out: &mut Vec<Event>) -> Result<bool> {
        let p = Page::parse(page, &self.layout, self.endian)
            .map_err(|e| WatchError::Tracefs(format!("a ring-buffer page of CPU {cpu}: {e}")))?;
        for rec in p.records() {
            // A damaged record ends the page (what the kernel flags).
            let Ok(rec) = rec else { break };
            if let Some(e) = self.decode(rec.timestamp, cpu, rec.data) {
                out.push(e);
            }
        }
        Ok(p.missed != Missed::None)
    }
}

/// The kernel side fed by a private tracefs instance.
pub struct TracefsSide {
    emulator: BpfEmulator,
    decoder: Decoder,
    reader: Option<LiveReader>,
    capture: Option<Capture>,
    cpus: Vec<usize>,
    page_size: usize,
    /// Decoded events not yet fed (newer than the last watermark).
    queue: Vec<Event>,
    buf: Vec<u8>,
    /// Remarks for the result.
    pub notes: Vec<String>,
    /// Pages after which the kernel flagged lost events.
    pub pages_after_loss: u64,
}

impl std::fmt::Debug for TracefsSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracefsSide")
            .field("capture", &self.capture)
            .finish_non_exhaustive()
    }
}

impl TracefsSide {
    /// Creates the instance, enables the events and starts tracing.
    pub fn start(settings: &Settings) -> Result<TracefsSide> {
        let events: Vec<String> = EVENTS
            .iter()
            .filter(|(e, _)| settings.follow_forks || *e != "sched:sched_process_fork")
            .map(|(e, _)| e.to_string())
            .collect();
        let opts = CaptureOptions {
            events,
            buffer_size_kb: Some(BUFFER_KB),
            grow_to_kb: None,
            flight_recorder: true,
            temp_dir: None,
            kallsyms: false,
            measured_cpus: Vec::new(),
        };
        let capture = Capture::start(&opts).map_err(|e| WatchError::Tracefs(e.to_string()))?;
        let missing = capture.missing_events();
        if let Some((e, _)) = EVENTS
            .iter()
            .find(|(e, required)| *required && missing.iter().any(|m| m == e))
        {
            return Err(WatchError::NoTracepoint {
                tracepoint: e.to_string(),
                reason: "not in tracefs".into(),
            });
        }
        let header = capture
            .header()
            .map_err(|e| WatchError::Tracefs(e.to_string()))?;
        if header.trace_clock != TRACE_CLOCK {
            return Err(WatchError::Tracefs(format!(
                "this kernel has no `{TRACE_CLOCK}` trace clock (has {}): timer expiries could not be compared with event times",
                header.trace_clock
            )));
        }
        let formats: Vec<(String, Vec<u8>)> = header
            .event_formats
            .iter()
            .flat_map(|(s, fs)| fs.iter().map(move |f| (s.clone(), f.clone())))
            .collect();
        let decoder = Decoder::new(
            &formats,
            &String::from_utf8_lossy(&header.header_page),
            capture.long_size(),
        )?;
        let reader = capture
            .live_reader()
            .map_err(|e| WatchError::Tracefs(e.to_string()))?;
        let mut notes: Vec<String> = capture.notes().to_vec();
        let optional_missing: Vec<&String> = missing
            .iter()
            .filter(|m| *m != "timer:hrtimer_init" && *m != "timer:hrtimer_setup")
            .collect();
        if !optional_missing.is_empty() {
            notes.push(format!(
                "optional events not on this kernel: {}",
                optional_missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(TracefsSide {
            emulator: BpfEmulator::new(*settings),
            decoder,
            cpus: reader.cpus(),
            page_size: capture.page_size(),
            reader: Some(reader),
            capture: Some(capture),
            queue: Vec::new(),
            buf: Vec::new(),
            notes,
            pages_after_loss: 0,
        })
    }

    /// The name of the tracefs instance.
    pub fn instance_name(&self) -> Option<&str> {
        self.capture.as_ref().map(|c| c.instance_name())
    }

    /// Reads every CPU's buffer and feeds the events up to now, in time
    /// order, to the emulator (later ones wait for the next read, when every
    /// CPU has passed them).
    pub fn read(&mut self) -> Result<()> {
        let Some(reader) = self.reader.as_ref() else {
            return Ok(());
        };
        let watermark = latlab_rt::clock::monotonic_ns();
        for (i, &cpu) in self.cpus.iter().enumerate() {
            self.buf.clear();
            reader
                .read_into(i, &mut self.buf)
                .map_err(|e| WatchError::Tracefs(e.to_string()))?;
            for page in self.buf.chunks(self.page_size) {
                if self.decoder.page(page, cpu as u32, &mut self.queue)? {
                    self.pages_after_loss += 1;
                    self.emulator.lost_before(cpu as u32);
                }
            }
        }
        // Each CPU's events come in order; merged by time (stable: equal
        // stamps keep their CPU's order).
        self.queue.sort_by_key(|e| e.ts);
        let due = self.queue.partition_point(|e| e.ts <= watermark);
        for e in self.queue.drain(..due) {
            self.emulator.feed(&e);
        }
        Ok(())
    }

    /// The BPF logic the events are fed to.
    pub fn emulator(&self) -> &BpfEmulator {
        &self.emulator
    }

    /// The same, to change what is watched.
    pub fn emulator_mut(&mut self) -> &mut BpfEmulator {
        &mut self.emulator
    }

    /// The counters, the events the kernel lost included.
    pub fn counters(&self) -> Counters {
        let mut c = self.emulator.counters();
        c.events_lost = self.capture.as_ref().map_or(0, |c| c.lost_events());
        c
    }

    /// Waits `timeout`, then reads.
    pub fn wait(&mut self, timeout: Duration) -> Result<()> {
        // Ends at once on a stop (Ctrl-C, SIGTERM).
        latlab_rt::stop::sleep(timeout);
        self.read()
    }

    /// The next window.
    pub fn next_window(&mut self) -> Option<RawWindow> {
        self.emulator.next_window()
    }

    /// Switches tracing off and removes the instance (also on drop).
    pub fn close(&mut self) -> Result<()> {
        // The open trace_pipe_raw files keep the instance busy: first them.
        self.reader = None;
        match self.capture.take() {
            Some(c) => c.discard().map_err(|e| WatchError::Tracefs(e.to_string())),
            None => Ok(()),
        }
    }
}

impl Drop for TracefsSide {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            eprintln!("latlab watch: {e}");
        }
    }
}
