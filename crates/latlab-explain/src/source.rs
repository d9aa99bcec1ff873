//! Trace sources: every format latlab reads, turned into [`Rec`]s.
//!
//! The analysis walks a source once (detection and separation together; a
//! second walk only for `--dump-windows` or a window older than the
//! one-pass history, see [`crate::separate`]), so a `.dat` file is decoded
//! lazily and never held as events; text and CTF traces are parsed once
//! into memory by `latlab-ftrace`.

use std::path::{Path, PathBuf};

use latlab_ftrace::format::{Field, FieldKind, Value};
use latlab_ftrace::render::Renderer;
use latlab_ftrace::text::TextEvent;
use latlab_ftrace::{DatFile, Endian, Event};

use crate::error::{ExplainError, Result};
use crate::model::{parse_marker, FastMap, Kind, Names, Rec, Sym};

/// Renders the current event as one text line (`trace-cmd report` layout).
pub type LineFn<'a> = dyn FnMut(&mut Vec<u8>) + 'a;

/// What [`Source::walk`] calls for every event.
pub type WalkFn<'a> = dyn FnMut(&Rec, &Names, &mut LineFn<'_>) + 'a;

/// Something the analysis can walk in time order, as often as it likes.
pub trait Source {
    /// Calls `f` for every event in time order. `f` gets the normalised
    /// record, the names known so far (task names learned on the way go
    /// into `names`) and a function that renders the raw event as text.
    /// Returns what the recording lost (as far as the format says).
    fn walk(&self, names: &mut Names, f: &mut WalkFn<'_>) -> Result<Lost>;

    /// A short description of the format.
    fn format(&self) -> String;

    /// The traced machine's `uname` (system, node, release, version), when
    /// the trace carries it (trace-cmd `.dat` files with the UNAME option,
    /// as `latlab record` writes them).
    fn uname(&self) -> Option<String> {
        None
    }
}

/// Events lost while recording.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct Lost {
    /// Events the kernel counted as lost.
    pub counted: u64,
    /// Pages flagged "events lost" without a count.
    pub uncounted_pages: u64,
}

/// Records built in memory (tests, other tools): a [`Source`] over a vector.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// The events, in time order.
    pub recs: Vec<Rec>,
    /// The traced machine's `uname`, if known ([`Source::uname`]).
    pub uname: Option<String>,
}

impl From<Vec<Rec>> for Records {
    /// Records of an unknown machine (no `uname`).
    fn from(recs: Vec<Rec>) -> Self {
        Records { recs, uname: None }
    }
}

impl Source for Records {
    fn walk(&self, names: &mut Names, f: &mut WalkFn<'_>) -> Result<Lost> {
        for r in &self.recs {
            let r = *r;
            f(&r, names, &mut |out: &mut Vec<u8>| {
                out.extend_from_slice(format!("{:?}\n", r).as_bytes())
            });
        }
        Ok(Lost::default())
    }
    fn format(&self) -> String {
        "in-memory records".into()
    }
    fn uname(&self) -> Option<String> {
        self.uname.clone()
    }
}

/// A trace file opened for analysis.
#[derive(Debug)]
pub enum Trace {
    /// trace-cmd `.dat` (latlab record's output).
    Dat {
        /// Where it came from.
        path: PathBuf,
        /// The file.
        file: Box<DatFile>,
    },
    /// ftrace text or LTTng CTF (via babeltrace2), parsed into memory.
    Text {
        /// Where it came from.
        path: PathBuf,
        /// The events.
        events: Vec<TextEvent>,
        /// The format's name.
        format: &'static str,
    },
}

impl Trace {
    /// Opens any trace latlab reads: trace-cmd `.dat` v6/v7, ftrace text
    /// (tracefs `trace`, `trace-cmd report`), or an LTTng CTF directory.
    pub fn open(path: &Path) -> Result<Trace> {
        let terr = |source| ExplainError::Trace {
            path: path.to_path_buf(),
            source,
        };
        if path.is_dir() {
            let events = latlab_ftrace::text::read_ctf(path).map_err(terr)?;
            return Ok(Trace::Text {
                path: path.to_path_buf(),
                events,
                format: "LTTng CTF (via babeltrace2)",
            });
        }
        let mut head = [0u8; 10];
        let n = {
            use std::io::Read;
            let mut f = std::fs::File::open(path).map_err(|source| ExplainError::Io {
                what: "cannot open trace",
                path: path.to_path_buf(),
                source,
            })?;
            f.read(&mut head).unwrap_or(0)
        };
        if n == 10 && &head == latlab_ftrace::dat::MAGIC {
            let file = DatFile::open(path).map_err(terr)?;
            return Ok(Trace::Dat {
                path: path.to_path_buf(),
                file: Box::new(file),
            });
        }
        let events = latlab_ftrace::text::read_ftrace_text_file(path).map_err(terr)?;
        Ok(Trace::Text {
            path: path.to_path_buf(),
            events,
            format: "ftrace text",
        })
    }
}

/// Pre-resolved fields of one event id of a `.dat` file.
#[derive(Debug, Clone)]
enum Dec {
    Other,
    HrStart(Option<Field>, Option<Field>, Option<Field>),
    HrEntry(Option<Field>, Option<Field>, Option<Field>),
    HrExit(Option<Field>),
    TimerEntry(Option<Field>, Option<Field>),
    TimerExit(Option<Field>),
    Wake(Option<Field>, Option<Field>, bool),
    Switch(Box<[Option<Field>; 6]>),
    Irq(Option<Field>, Option<Field>),
    IrqExit(Option<Field>),
    Vector(u32),
    VectorExit,
    Soft(Option<Field>, bool),
    IpiCpu(Option<Field>),
    IpiMask(Option<Field>),
    Print(Option<Field>),
}

/// A number field of a record; scalars (nearly every field read here) are
/// read in place, the same way [`Field::value`] reads them.
#[inline]
fn num(f: &Option<Field>, data: &[u8], e: Endian) -> Option<i64> {
    let f = f.as_ref()?;
    if f.kind == FieldKind::Scalar {
        let b = data.get(f.offset..f.offset.checked_add(f.size)?)?;
        return Some(if f.signed { e.int(b) } else { e.uint(b) as i64 });
    }
    f.value(data, e)?.as_i64()
}

fn text_of<'a>(f: &Option<Field>, data: &'a [u8], e: Endian) -> Option<&'a [u8]> {
    let f = f.as_ref()?;
    if matches!(f.kind, FieldKind::String | FieldKind::Array { .. }) {
        // A fixed `char comm[16]`: the bytes up to the first NUL.
        let b = data.get(f.offset..f.offset.checked_add(f.size)?)?;
        return b.split(|&c| c == 0).next();
    }
    match f.value(data, e)? {
        Value::Str(s) => Some(s),
        Value::Array { data, .. } => Some(data.split(|&b| b == 0).next().unwrap_or(data)),
        _ => None,
    }
}

/// x86 interrupt vectors traced by `irq_vectors:*_entry/_exit`.
fn is_vector(system: &str, name: &str) -> Option<(String, bool)> {
    let known = [
        "local_timer",
        "reschedule",
        "call_function",
        "call_function_single",
        "irq_work",
        "x86_platform_ipi",
        "thermal_apic",
        "threshold_apic",
        "deferred_error_apic",
        "spurious_apic",
        "error_apic",
        "reboot",
    ];
    let (base, entry) = if let Some(b) = name.strip_suffix("_entry") {
        (b, true)
    } else if let Some(b) = name.strip_suffix("_exit") {
        (b, false)
    } else {
        return None;
    };
    if system == "irq_vectors" || known.contains(&base) {
        Some((base.to_string(), entry))
    } else {
        None
    }
}

fn decoder(f: &latlab_ftrace::format::EventFormat, names: &mut Names) -> Dec {
    let g = |n: &str| f.field(n).cloned();
    match f.name.as_str() {
        "hrtimer_start" => Dec::HrStart(g("hrtimer"), g("softexpires"), g("expires")),
        "hrtimer_expire_entry" => Dec::HrEntry(g("hrtimer"), g("now"), g("function")),
        "hrtimer_expire_exit" => Dec::HrExit(g("hrtimer")),
        "timer_expire_entry" => Dec::TimerEntry(g("timer"), g("function")),
        "timer_expire_exit" => Dec::TimerExit(g("timer")),
        "sched_waking" => Dec::Wake(g("pid"), g("target_cpu"), true),
        "sched_wakeup" | "sched_wakeup_new" => Dec::Wake(g("pid"), g("target_cpu"), false),
        "sched_switch" => Dec::Switch(Box::new([
            g("prev_pid"),
            g("prev_state"),
            g("next_pid"),
            g("next_prio"),
            g("next_comm"),
            g("prev_comm"),
        ])),
        "irq_handler_entry" => Dec::Irq(g("irq"), g("name")),
        "irq_handler_exit" => Dec::IrqExit(g("irq")),
        "softirq_entry" => Dec::Soft(g("vec"), true),
        "softirq_exit" => Dec::Soft(g("vec"), false),
        "ipi_send_cpu" => Dec::IpiCpu(g("cpu")),
        "ipi_send_cpumask" => Dec::IpiMask(g("cpumask")),
        "print" if f.system == "ftrace" => Dec::Print(g("buf")),
        n => match is_vector(&f.system, n) {
            Some((base, true)) => Dec::Vector(names.intern(&base)),
            Some((_, false)) => Dec::VectorExit,
            None => Dec::Other,
        },
    }
}

/// Task names of recent `sched_switch` records: a switch names two tasks,
/// nearly always ones named the same way a moment ago, so most look-ups
/// end here instead of in [`Names`] (same results: a hit means `Names`
/// already maps that pid to that name, as the last name given for it).
struct CommCache {
    /// (pid, its name, the raw 16 bytes of the `comm` field it came from).
    slots: Vec<(i32, Sym, [u8; 16])>,
}

impl CommCache {
    const SLOTS: usize = 1024;

    fn new() -> Self {
        CommCache {
            slots: vec![(i32::MIN, 0, [0; 16]); Self::SLOTS],
        }
    }

    /// The name of `pid` from a `comm` field's raw bytes (up to the first
    /// NUL, as [`Names::set_comm_bytes`] reads them).
    #[inline]
    fn comm(&mut self, names: &mut Names, pid: i32, raw: &[u8]) -> Sym {
        // Idle tasks (pid 0) are never given a name in `Names` and are
        // named per CPU: not cached.
        let key = match <[u8; 16]>::try_from(raw) {
            Ok(key) if pid > 0 => key,
            _ => return names.set_comm_bytes(pid, raw),
        };
        let slot = &mut self.slots[pid as usize % Self::SLOTS];
        if slot.0 == pid && slot.2 == key {
            return slot.1;
        }
        let sym = names.set_comm_bytes(pid, raw);
        *slot = (pid, sym, key);
        sym
    }
}

/// A fixed `char comm[16]` field's raw bytes (NULs and all), else its text.
#[inline]
fn comm_field<'a>(f: &Option<Field>, data: &'a [u8], e: Endian) -> Option<&'a [u8]> {
    match f {
        Some(f) if matches!(f.kind, FieldKind::String | FieldKind::Array { .. }) => {
            data.get(f.offset..f.offset.checked_add(f.size)?)
        }
        _ => text_of(f, data, e),
    }
}

/// Timer callback names of a `.dat` file: function addresses symbolized
/// with the file's kallsyms, once each.
struct Callbacks<'a> {
    kallsyms: &'a latlab_ftrace::symbols::Kallsyms,
    known: FastMap<u64, Sym>,
}

impl<'a> Callbacks<'a> {
    fn new(kallsyms: &'a latlab_ftrace::symbols::Kallsyms) -> Self {
        Callbacks {
            kallsyms,
            known: FastMap::default(),
        }
    }

    /// Records the callback at `addr` of the timer `timer` expiring at `ts`.
    fn learn(&mut self, names: &mut Names, timer: u64, ts: u64, addr: Option<i64>) {
        let Some(addr) = addr.map(|a| a as u64).filter(|&a| a != 0) else {
            return;
        };
        let sym = match self.known.get(&addr) {
            Some(&s) => s,
            None => {
                let s = names.intern(&function_name(self.kallsyms, addr));
                self.known.insert(addr, s);
                s
            }
        };
        names.set_callback(timer, ts, sym);
    }
}

/// A function pointer's name: the symbol that starts there, `sym+0x10`
/// inside one (a kallsyms that lacks the function), else the address.
fn function_name(kallsyms: &latlab_ftrace::symbols::Kallsyms, addr: u64) -> String {
    match kallsyms.lookup(addr) {
        Some((name, start)) if start == addr => name.to_string(),
        Some((name, start)) => format!("{name}+{:#x}", addr - start),
        None => format!("{addr:#x}"),
    }
}

/// A callback as a text trace prints it: `tcp_pace_kick` (tracefs),
/// `tcp_pace_kick/0x0` (trace-cmd), `0xffffffff81a0b2c0` (LTTng); the
/// name, or the address as `0x...`.
fn text_function(v: &str) -> Option<String> {
    let v = v.trim_matches('"');
    let v = v.split('/').next().unwrap_or(v);
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        let a = u64::from_str_radix(hex, 16).ok().filter(|&a| a != 0)?;
        return Some(format!("{a:#x}"));
    }
    if let Ok(a) = v.parse::<u64>() {
        return (a != 0).then(|| format!("{a:#x}"));
    }
    (!v.is_empty() && v != "0").then(|| v.to_string())
}

fn dat_rec(
    ev: &Event<'_>,
    dec: &Dec,
    name: u32,
    names: &mut Names,
    cache: &mut CommCache,
    callbacks: &mut Callbacks<'_>,
) -> Rec {
    let d = ev.data;
    let e = ev.meta.endian;
    let kind = match dec {
        Dec::Other => Kind::Other,
        Dec::HrStart(t, s, x) => {
            let expires = num(x, d, e).unwrap_or(0) as u64;
            let soft = num(s, d, e).map(|v| v as u64).unwrap_or(expires);
            Kind::HrtimerStart {
                timer: num(t, d, e).unwrap_or(0) as u64,
                soft,
                expires,
            }
        }
        Dec::HrEntry(t, now, func) => {
            let timer = num(t, d, e).unwrap_or(0) as u64;
            callbacks.learn(names, timer, ev.ts, num(func, d, e));
            Kind::HrtimerExpireEntry {
                timer,
                now: num(now, d, e).map(|v| v as u64),
            }
        }
        Dec::HrExit(t) => Kind::HrtimerExpireExit {
            timer: num(t, d, e).unwrap_or(0) as u64,
        },
        Dec::TimerEntry(t, func) => {
            let timer = num(t, d, e).unwrap_or(0) as u64;
            callbacks.learn(names, timer, ev.ts, num(func, d, e));
            Kind::TimerExpireEntry { timer }
        }
        Dec::TimerExit(t) => Kind::TimerExpireExit {
            timer: num(t, d, e).unwrap_or(0) as u64,
        },
        Dec::Wake(p, c, waking) => Kind::Wake {
            pid: num(p, d, e).unwrap_or(-1) as i32,
            target_cpu: num(c, d, e).unwrap_or(-1) as i32,
            waking: *waking,
        },
        Dec::Switch(f) => {
            let [pp, ps, np, npr, nc, pc] = &**f;
            let prev_pid = num(pp, d, e).unwrap_or(-1) as i32;
            let next_pid = num(np, d, e).unwrap_or(-1) as i32;
            let next_comm = cache.comm(names, next_pid, comm_field(nc, d, e).unwrap_or(b"?"));
            let prev_comm = cache.comm(names, prev_pid, comm_field(pc, d, e).unwrap_or(b"?"));
            Kind::Switch {
                prev_pid,
                prev_runnable: num(ps, d, e).map(|s| s & 0xff == 0).unwrap_or(false),
                next_pid,
                next_prio: num(npr, d, e).unwrap_or(-1) as i32,
                next_comm,
                prev_comm,
            }
        }
        Dec::Irq(i, n) => Kind::IrqEntry {
            irq: num(i, d, e).unwrap_or(-1) as i32,
            name: names.intern(&String::from_utf8_lossy(text_of(n, d, e).unwrap_or(b"?"))),
        },
        Dec::IrqExit(i) => Kind::IrqExit {
            irq: num(i, d, e).unwrap_or(-1) as i32,
        },
        Dec::Vector(n) => Kind::IrqEntry { irq: -1, name: *n },
        Dec::VectorExit => Kind::IrqExit { irq: -1 },
        Dec::Soft(v, entry) => {
            let vec = num(v, d, e).unwrap_or(255) as u8;
            if *entry {
                Kind::SoftirqEntry { vec }
            } else {
                Kind::SoftirqExit { vec }
            }
        }
        Dec::IpiCpu(c) => match num(c, d, e) {
            Some(c) if (0..64).contains(&c) => Kind::IpiSend { mask: 1 << c },
            _ => Kind::Other,
        },
        Dec::IpiMask(m) => {
            let mask = m
                .as_ref()
                .and_then(|f| f.value(d, e))
                .and_then(|v| match v {
                    Value::Array { .. } => v.index(0).and_then(|x| x.as_u64()),
                    other => other.as_u64(),
                })
                .unwrap_or(0);
            Kind::IpiSend { mask }
        }
        Dec::Print(b) => text_of(b, d, e)
            .and_then(|t| std::str::from_utf8(t).ok())
            .and_then(parse_marker)
            .unwrap_or(Kind::Other),
    };
    Rec {
        ts: ev.ts,
        cpu: ev.cpu,
        pid: ev.pid(),
        name,
        kind,
    }
}

/// `comm:pid` (the comm may itself contain `:`).
fn plugin_task(word: &str) -> Option<(&str, i32)> {
    let (c, p) = word.rsplit_once(':')?;
    Some((c, p.parse().ok()?))
}

fn text_num(ev: &TextEvent, keys: &[&str]) -> Option<i64> {
    keys.iter().find_map(|k| ev.field_i64(k))
}

fn text_str<'a>(ev: &'a TextEvent, key: &str) -> Option<&'a str> {
    ev.field(key).map(|s| s.trim_matches('"'))
}

/// Records the callback a text event's `function` field names.
fn text_callback(ev: &TextEvent, names: &mut Names, timer: u64) {
    if let Some(f) = ev.field("function").and_then(text_function) {
        let sym = names.intern(&f);
        names.set_callback(timer, ev.ts, sym);
    }
}

/// Normalises one text event.
pub fn text_rec(ev: &TextEvent, names: &mut Names) -> Rec {
    let name = names.intern(&ev.name);
    if ev.pid > 0 && ev.comm != "<...>" && !ev.comm.is_empty() {
        let c = names.intern(&ev.comm);
        names.set_comm(ev.pid, c);
    }
    let kind = match ev.name.as_str() {
        "hrtimer_start" | "timer_hrtimer_start" => {
            let expires = text_num(ev, &["expires"]).unwrap_or(0) as u64;
            Kind::HrtimerStart {
                timer: text_num(ev, &["hrtimer"]).unwrap_or(0) as u64,
                soft: text_num(ev, &["softexpires"])
                    .map(|v| v as u64)
                    .unwrap_or(expires),
                expires,
            }
        }
        "hrtimer_expire_entry" | "timer_hrtimer_expire_entry" => {
            let timer = text_num(ev, &["hrtimer"]).unwrap_or(0) as u64;
            text_callback(ev, names, timer);
            Kind::HrtimerExpireEntry {
                timer,
                now: text_num(ev, &["now"]).map(|v| v as u64),
            }
        }
        "hrtimer_expire_exit" | "timer_hrtimer_expire_exit" => Kind::HrtimerExpireExit {
            timer: text_num(ev, &["hrtimer"]).unwrap_or(0) as u64,
        },
        "timer_expire_entry" => {
            let timer = text_num(ev, &["timer"]).unwrap_or(0) as u64;
            text_callback(ev, names, timer);
            Kind::TimerExpireEntry { timer }
        }
        "timer_expire_exit" => Kind::TimerExpireExit {
            timer: text_num(ev, &["timer"]).unwrap_or(0) as u64,
        },
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            // trace-cmd's plugin form: `comm:pid [prio] CPU:nnn`.
            let plugin = plugin_task(ev.info.split_whitespace().next().unwrap_or(""));
            let pid = text_num(ev, &["pid", "tid"])
                .map(|v| v as i32)
                .or(plugin.map(|p| p.1))
                .unwrap_or(-1);
            if let Some((c, p)) = plugin {
                let c = names.intern(c);
                names.set_comm(p, c);
            }
            let plugin_cpu = ev
                .info
                .split_whitespace()
                .find_map(|w| w.strip_prefix("CPU:"))
                .and_then(|c| c.parse::<i64>().ok());
            if let Some(c) = text_str(ev, "comm") {
                let c = names.intern(c);
                names.set_comm(pid, c);
            }
            Kind::Wake {
                pid,
                target_cpu: text_num(ev, &["target_cpu"]).or(plugin_cpu).unwrap_or(-1) as i32,
                waking: ev.name == "sched_waking",
            }
        }
        "sched_switch" if ev.field("prev_pid").is_none() && ev.info.contains(" ==> ") => {
            // trace-cmd's plugin form: `prev:pid [prio] S ==> next:pid [prio]`.
            let (l, r) = ev.info.split_once(" ==> ").unwrap_or(("", ""));
            let lw: Vec<&str> = l.split_whitespace().collect();
            let rw: Vec<&str> = r.split_whitespace().collect();
            let (pc, prev_pid) =
                plugin_task(lw.first().copied().unwrap_or("")).unwrap_or(("?", -1));
            let (nc, next_pid) =
                plugin_task(rw.first().copied().unwrap_or("")).unwrap_or(("?", -1));
            let prio = |w: Option<&&str>| {
                w.and_then(|s| s.trim_matches(['[', ']']).parse::<i32>().ok())
                    .unwrap_or(-1)
            };
            let next_comm = names.intern(nc);
            let prev_comm = names.intern(pc);
            names.set_comm(next_pid, next_comm);
            names.set_comm(prev_pid, prev_comm);
            Kind::Switch {
                prev_pid,
                prev_runnable: lw.last().is_some_and(|s| s.starts_with('R')),
                next_pid,
                next_prio: prio(rw.get(1)),
                next_comm,
                prev_comm,
            }
        }
        "sched_switch" => {
            let prev_pid = text_num(ev, &["prev_pid", "prev_tid"]).unwrap_or(-1) as i32;
            let next_pid = text_num(ev, &["next_pid", "next_tid"]).unwrap_or(-1) as i32;
            let next_comm = names.intern(text_str(ev, "next_comm").unwrap_or("?"));
            let prev_comm = names.intern(text_str(ev, "prev_comm").unwrap_or("?"));
            names.set_comm(next_pid, next_comm);
            names.set_comm(prev_pid, prev_comm);
            let prev_runnable = match ev.field("prev_state").map(|s| s.trim()) {
                Some(s) if s.starts_with('R') => true,
                Some(s) => s.parse::<i64>().map(|v| v & 0xff == 0).unwrap_or(false),
                None => false,
            };
            Kind::Switch {
                prev_pid,
                prev_runnable,
                next_pid,
                next_prio: text_num(ev, &["next_prio"]).unwrap_or(-1) as i32,
                next_comm,
                prev_comm,
            }
        }
        "irq_handler_entry" => Kind::IrqEntry {
            irq: text_num(ev, &["irq"]).unwrap_or(-1) as i32,
            name: names.intern(text_str(ev, "name").unwrap_or("?")),
        },
        "irq_handler_exit" => Kind::IrqExit {
            irq: text_num(ev, &["irq"]).unwrap_or(-1) as i32,
        },
        "softirq_entry" | "irq_softirq_entry" => Kind::SoftirqEntry {
            vec: text_num(ev, &["vec"]).unwrap_or(255) as u8,
        },
        "softirq_exit" | "irq_softirq_exit" => Kind::SoftirqExit {
            vec: text_num(ev, &["vec"]).unwrap_or(255) as u8,
        },
        "ipi_send_cpu" => match text_num(ev, &["cpu"]) {
            Some(c) if (0..64).contains(&c) => Kind::IpiSend { mask: 1 << c },
            _ => Kind::Other,
        },
        "print" | "tracing_mark_write" => parse_marker(&ev.info).unwrap_or(Kind::Other),
        n => match is_vector(ev.system.as_deref().unwrap_or(""), n) {
            Some((base, true)) => Kind::IrqEntry {
                irq: -1,
                name: names.intern(&base),
            },
            Some((_, false)) => Kind::IrqExit { irq: -1 },
            None => Kind::Other,
        },
    };
    Rec {
        ts: ev.ts,
        cpu: ev.cpu,
        pid: ev.pid,
        name,
        kind,
    }
}

impl Source for Trace {
    fn walk(&self, names: &mut Names, f: &mut WalkFn<'_>) -> Result<Lost> {
        match self {
            Trace::Dat { path, file } => {
                let meta = &file.meta;
                for (&pid, comm) in &meta.cmdlines {
                    let c = names.intern(comm);
                    names.set_comm(pid, c);
                }
                let decs: Vec<(Dec, u32)> = meta
                    .events
                    .iter()
                    .map(|f| (decoder(f, names), names.intern(&f.name)))
                    .collect();
                let unknown = names.intern("unknown");
                let mut renderer = Renderer::new(meta);
                let mut cache = CommCache::new();
                let mut callbacks = Callbacks::new(&meta.kallsyms);
                let mut events = file.events();
                while let Some(ev) = events.next_event() {
                    let ev = ev.map_err(|source| ExplainError::Trace {
                        path: path.clone(),
                        source,
                    })?;
                    let rec = match meta.event_index(ev.id()) {
                        Some(i) => dat_rec(
                            &ev,
                            &decs[i].0,
                            decs[i].1,
                            names,
                            &mut cache,
                            &mut callbacks,
                        ),
                        None => Rec {
                            ts: ev.ts,
                            cpu: ev.cpu,
                            pid: ev.pid(),
                            name: unknown,
                            kind: Kind::Other,
                        },
                    };
                    f(&rec, names, &mut |out: &mut Vec<u8>| {
                        renderer.line(&ev, out)
                    });
                }
                let l = events.lost();
                Ok(Lost {
                    counted: l.counted,
                    uncounted_pages: l.uncounted_pages,
                })
            }
            Trace::Text { events, .. } => {
                for ev in events {
                    let rec = text_rec(ev, names);
                    f(&rec, names, &mut |out: &mut Vec<u8>| {
                        latlab_ftrace::text::render_line(ev, out)
                    });
                }
                Ok(Lost {
                    counted: events.iter().filter_map(|e| e.lost_before).sum(),
                    uncounted_pages: 0,
                })
            }
        }
    }

    fn format(&self) -> String {
        match self {
            Trace::Dat { file, .. } => format!(
                "trace-cmd .dat v{}, clock {}",
                file.meta.version,
                file.meta.clock().unwrap_or("unknown")
            ),
            Trace::Text { format, .. } => format.to_string(),
        }
    }

    fn uname(&self) -> Option<String> {
        match self {
            Trace::Dat { file, .. } => file.meta.uname.clone().filter(|u| !u.trim().is_empty()),
            Trace::Text { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_read_from_each_text_form() {
        assert_eq!(
            text_function("tcp_pace_kick").as_deref(),
            Some("tcp_pace_kick")
        );
        assert_eq!(
            text_function("tcp_pace_kick/0x0").as_deref(),
            Some("tcp_pace_kick")
        );
        assert_eq!(
            text_function("\"it_real_fn\"").as_deref(),
            Some("it_real_fn")
        );
        assert_eq!(
            text_function("0xFFFFFFFF81A0B2C0").as_deref(),
            Some("0xffffffff81a0b2c0")
        );
        assert_eq!(text_function("0"), None);
        assert_eq!(text_function("0x0"), None);
    }

    #[test]
    fn function_pointers_are_named_by_the_symbol_that_starts_there() {
        let k = latlab_ftrace::symbols::Kallsyms::parse(
            b"ffffffff81000000 T tcp_pace_kick\nffffffff81000100 t hrtimer_wakeup\n",
        );
        assert_eq!(function_name(&k, 0xffffffff81000000), "tcp_pace_kick");
        // Inside a symbol (a kallsyms without the function): not its name.
        assert_eq!(function_name(&k, 0xffffffff81000010), "tcp_pace_kick+0x10");
        assert_eq!(function_name(&k, 0x1000), "0x1000");
    }
}
