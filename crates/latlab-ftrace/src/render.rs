//! Renders events as text lines in the layout of `trace-cmd report`.
//!
//! The event text follows the kernel's `print fmt`, except where trace-cmd's
//! standard plugins print their own form (sched_switch, sched_wakeup,
//! sched_wakeup_new, hrtimer_start, hrtimer_expire_entry) and for
//! `trace_printk` records (bprint/bputs), which are formatted from the
//! file's printk formats.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::dat::Meta;
use crate::endian::Endian;
use crate::format::{EventFormat, Field, FieldKind, Value};
use crate::printf::{self, Arg, Ctx, Len, Num, Piece};
use crate::printfmt::PrintFmt;
use crate::stream::Event;

/// Appends the decimal digits of `v`.
#[inline]
fn push_u64(out: &mut Vec<u8>, v: u64) {
    printf::push_dec(out, v);
}

#[inline]
fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends `v` zero-padded to `width` digits.
#[inline]
fn push_zero_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(digits(v))));
    push_u64(out, v);
}

fn digits(v: u64) -> usize {
    let mut n = 1;
    let mut v = v / 10;
    while v > 0 {
        n += 1;
        v /= 10;
    }
    n
}

/// A pid-keyed map with a cheap hash (pids are small, well-spread integers).
#[derive(Debug, Default, Clone, Copy)]
struct PidHasher(u64);
impl std::hash::Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_i32(&mut self, v: i32) {
        self.0 = (v as u32 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ v >> 29).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
type PidMap = HashMap<i32, String, std::hash::BuildHasherDefault<PidHasher>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    None,
    SchedSwitch,
    SchedWakeup,
    HrtimerStart,
    HrtimerExpireEntry,
    Bprint,
    Bputs,
}

#[derive(Debug)]
struct Compiled {
    special: Special,
    /// `{name}:` padded like trace-cmd pads it, with the space after.
    label: Vec<u8>,
    /// The print fmt's flag-list memos.
    memo: Vec<crate::printfmt::FlagMemo>,
    print: Result<PrintFmt, String>,
    /// Fields a plugin reads, resolved once (see SWITCH_FIELDS, WAKEUP_FIELDS).
    fields: Vec<Option<Field>>,
}

const SWITCH_FIELDS: [&str; 7] = [
    "prev_pid",
    "prev_comm",
    "prev_prio",
    "prev_state",
    "next_pid",
    "next_comm",
    "next_prio",
];
const WAKEUP_FIELDS: [&str; 5] = ["pid", "comm", "prio", "success", "target_cpu"];
/// The fields `trace_printk` records are rendered from.
const BPRINT_FIELDS: [&str; 3] = ["ip", "fmt", "buf"];
const BPUTS_FIELDS: [&str; 2] = ["ip", "str"];
/// The hrtimer plugin's fields after the timer itself (slot 0).
const HRTIMER_FIELDS: [&str; 4] = ["now", "function", "expires", "softexpires"];

/// A plugin's view of one record: its fields by slot.
struct Rec<'a, 'f> {
    data: &'a [u8],
    endian: Endian,
    fields: &'f [Option<Field>],
}

impl<'a> Rec<'a, '_> {
    fn num(&self, slot: usize) -> Option<i64> {
        self.fields
            .get(slot)?
            .as_ref()?
            .value(self.data, self.endian)?
            .as_i64()
    }
    fn unum(&self, slot: usize) -> Option<u64> {
        self.fields
            .get(slot)?
            .as_ref()?
            .value(self.data, self.endian)?
            .as_u64()
    }
    fn str(&self, slot: usize) -> Option<&'a [u8]> {
        match self
            .fields
            .get(slot)?
            .as_ref()?
            .value(self.data, self.endian)?
        {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Formats events like `trace-cmd report`. Keeps the state trace-cmd keeps:
/// comms learned from sched_switch/sched_wakeup for pids missing from the
/// saved cmdlines.
#[derive(Debug)]
pub struct Renderer<'m> {
    meta: &'m Meta,
    compiled: Vec<Option<Compiled>>,
    /// Saved cmdlines plus comms learned from sched events (trace-cmd's rule:
    /// a pid's first known comm sticks).
    comms: PidMap,
    bprint_cache: HashMap<u64, Vec<Piece>, std::hash::BuildHasherDefault<PidHasher>>,
    scratch: Vec<u8>,
    /// Strings a print fmt computes per record (see [`PrintFmt`]).
    tmp: Vec<u8>,
    /// `{comm:>16}-{pid:<5} [` by pid (dropped when the pid's comm is learned).
    prefixes: HashMap<i32, Box<[u8]>, std::hash::BuildHasherDefault<PidHasher>>,
}

fn special_for(f: &EventFormat) -> Special {
    match (f.system.as_str(), f.name.as_str()) {
        ("sched", "sched_switch") => Special::SchedSwitch,
        ("sched", "sched_wakeup" | "sched_wakeup_new") => Special::SchedWakeup,
        ("timer", "hrtimer_start") => Special::HrtimerStart,
        ("timer", "hrtimer_expire_entry") => Special::HrtimerExpireEntry,
        ("ftrace", "bprint") => Special::Bprint,
        ("ftrace", "bputs") => Special::Bputs,
        _ => Special::None,
    }
}

impl<'m> Renderer<'m> {
    /// A renderer for the events of `meta`.
    pub fn new(meta: &'m Meta) -> Self {
        Renderer {
            meta,
            compiled: (0..meta.events.len()).map(|_| None).collect(),
            comms: meta.cmdlines.iter().map(|(k, v)| (*k, v.clone())).collect(),
            bprint_cache: HashMap::default(),
            scratch: Vec::with_capacity(256),
            tmp: Vec::with_capacity(256),
            prefixes: HashMap::default(),
        }
    }

    /// The comm trace-cmd would print for `pid`.
    pub fn comm_of(&self, pid: i32) -> &str {
        if pid == 0 {
            return "<idle>";
        }
        self.comms.get(&pid).map(|s| s.as_str()).unwrap_or("<...>")
    }

    fn learn(&mut self, pid: i32, comm: &[u8]) {
        if pid != 0 && !self.comms.contains_key(&pid) {
            self.comms
                .insert(pid, String::from_utf8_lossy(comm).into_owned());
            self.prefixes.remove(&pid);
        }
    }

    /// Appends one `trace-cmd report` line (with newline) for `ev` to `out`.
    pub fn line(&mut self, ev: &Event<'_>, out: &mut Vec<u8>) {
        let buffer = &self.meta.buffers[ev.buffer].name;
        if !buffer.is_empty() {
            out.extend_from_slice(buffer.as_bytes());
            out.extend_from_slice(b": ");
        }
        if self.learns_comms(ev) {
            // The info text is rendered first: plugins learn comms trace-cmd then prints.
            let mut info = std::mem::take(&mut self.scratch);
            info.clear();
            self.info(ev, &mut info);
            self.header(ev, out);
            while info.last() == Some(&b'\n') {
                info.pop();
            }
            out.extend_from_slice(&info);
            self.scratch = info;
        } else {
            self.header(ev, out);
            let start = out.len();
            self.info(ev, out);
            while out.len() > start && out.last() == Some(&b'\n') {
                out.pop();
            }
        }
        out.push(b'\n');
    }

    /// Whether rendering `ev` may teach the renderer a comm (sched_switch,
    /// sched_wakeup): then the line's own comm is looked up after it.
    fn learns_comms(&mut self, ev: &Event<'_>) -> bool {
        let (Some(format), Some(idx)) = (ev.format, self.meta.event_index(ev.id())) else {
            return false;
        };
        let c = self.compiled(idx, format);
        matches!(c.special, Special::SchedSwitch | Special::SchedWakeup)
    }

    /// `{comm:>16}-{pid:<5} [{cpu:03}] {secs:5}.{usecs:06}: {name:<20} ` without fmt.
    fn header(&mut self, ev: &Event<'_>, out: &mut Vec<u8>) {
        let pid = ev.pid();
        match self.prefixes.get(&pid) {
            Some(p) => out.extend_from_slice(p),
            None => {
                let start = out.len();
                let comm = self.comm_of(pid);
                out.extend(std::iter::repeat_n(
                    b' ',
                    16usize.saturating_sub(comm.len()),
                ));
                out.extend_from_slice(comm.as_bytes());
                out.push(b'-');
                let p0 = out.len();
                push_i64(out, pid as i64);
                let plen = out.len() - p0;
                out.extend(std::iter::repeat_n(b' ', 5usize.saturating_sub(plen)));
                out.extend_from_slice(b" [");
                self.prefixes.insert(pid, out[start..].into());
            }
        }
        // trace-cmd rounds to the nearest microsecond.
        let us = ev.ts.saturating_add(500) / 1000;
        let (secs, usecs) = (us / 1_000_000, us % 1_000_000);
        // "{cpu:03}] {secs:>5}.{usecs:06}: " through one small buffer.
        let mut b = [b'0'; 48];
        let mut i = b.len();
        i -= 2;
        b[i..i + 2].copy_from_slice(b": ");
        let mut u = usecs as usize;
        for _ in 0..3 {
            let d = (u % 100) * 2;
            u /= 100;
            i -= 2;
            b[i..i + 2].copy_from_slice(&printf::DEC2[d..d + 2]);
        }
        i -= 1;
        b[i] = b'.';
        i = digits_before(&mut b, i, secs, 5, b' ');
        i -= 2;
        b[i..i + 2].copy_from_slice(b"] ");
        i = digits_before(&mut b, i, u64::from(ev.cpu), 3, b'0');
        out.extend_from_slice(&b[i..]);
        match (ev.format, self.meta.event_index(ev.id())) {
            (Some(format), Some(idx)) => {
                let label = &self.compiled(idx, format).label;
                out.extend_from_slice(label);
            }
            _ => {
                let name = ev.name();
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                out.extend(std::iter::repeat_n(
                    b' ',
                    20usize.saturating_sub(name.len()) + 1,
                ));
            }
        }
    }

    /// The compiled form of event `idx` (compiled on first use).
    fn compiled(&mut self, idx: usize, format: &EventFormat) -> &Compiled {
        self.compiled[idx].get_or_insert_with(|| {
            let special = special_for(format);
            let mut label = format.name.as_bytes().to_vec();
            label.push(b':');
            label.extend(std::iter::repeat_n(
                b' ',
                20usize.saturating_sub(format.name.len()) + 1,
            ));
            Compiled {
                special,
                label,
                memo: Vec::new(),
                print: PrintFmt::compile(format, self.meta.long_size),
                fields: match special {
                    Special::SchedSwitch => SWITCH_FIELDS
                        .iter()
                        .map(|n| format.field(n).cloned())
                        .collect(),
                    Special::SchedWakeup => WAKEUP_FIELDS
                        .iter()
                        .map(|n| format.field(n).cloned())
                        .collect(),
                    Special::Bprint => BPRINT_FIELDS
                        .iter()
                        .map(|n| format.field(n).cloned())
                        .collect(),
                    Special::Bputs => BPUTS_FIELDS
                        .iter()
                        .map(|n| format.field(n).cloned())
                        .collect(),
                    Special::HrtimerStart | Special::HrtimerExpireEntry => {
                        let timer = format.field("timer").or_else(|| format.field("hrtimer"));
                        std::iter::once(timer.cloned())
                            .chain(HRTIMER_FIELDS.iter().map(|n| format.field(n).cloned()))
                            .collect()
                    }
                    _ => Vec::new(),
                },
            }
        })
    }

    /// Calls `f` with the record `data` of event `idx` while the renderer
    /// stays mutable: the compiled fields are lent out and put back after.
    fn with_fields(&mut self, idx: usize, data: &[u8], f: impl FnOnce(&mut Self, &Rec<'_, '_>)) {
        let fields = match self.compiled[idx].as_mut() {
            Some(c) => std::mem::take(&mut c.fields),
            None => Vec::new(),
        };
        let rec = Rec {
            data,
            endian: self.meta.endian,
            fields: &fields,
        };
        f(self, &rec);
        if let Some(c) = self.compiled[idx].as_mut() {
            c.fields = fields;
        }
    }

    /// Appends the event-specific text of `ev` (what follows `name:`).
    pub fn info(&mut self, ev: &Event<'_>, out: &mut Vec<u8>) {
        let Some(format) = ev.format else {
            out.extend_from_slice(format!("[UNKNOWN EVENT id {}]", ev.id()).as_bytes());
            return;
        };
        let Some(idx) = self.meta.event_index(ev.id()) else {
            return;
        };
        self.compiled(idx, format);
        let special = self.compiled[idx]
            .as_ref()
            .map(|c| c.special)
            .unwrap_or(Special::None);
        match special {
            Special::SchedSwitch | Special::SchedWakeup => {
                self.with_fields(idx, ev.data, |r, rec| {
                    if special == Special::SchedSwitch {
                        r.sched_switch(rec, out);
                    } else {
                        r.sched_wakeup(rec, out);
                    }
                });
            }
            Special::HrtimerStart | Special::HrtimerExpireEntry => {
                if let Some(c) = self.compiled[idx].as_ref() {
                    let rec = Rec {
                        data: ev.data,
                        endian: self.meta.endian,
                        fields: &c.fields,
                    };
                    self.hrtimer(&rec, special, out);
                }
            }
            Special::Bprint => self.with_fields(idx, ev.data, |r, rec| r.bprint(rec, out)),
            Special::Bputs => {
                if let Some(c) = self.compiled[idx].as_ref() {
                    let rec = Rec {
                        data: ev.data,
                        endian: self.meta.endian,
                        fields: &c.fields,
                    };
                    self.bputs(&rec, out);
                }
            }
            Special::None => self.generic(ev, idx, out),
        }
    }

    fn generic(&mut self, ev: &Event<'_>, idx: usize, out: &mut Vec<u8>) {
        let ctx = Ctx {
            long_size: self.meta.long_size,
            kallsyms: &self.meta.kallsyms,
        };
        match self.compiled[idx].as_mut().map(|c| (&c.print, &mut c.memo)) {
            Some((Ok(p), memo)) => {
                p.render(out, ev.data, self.meta.endian, &ctx, &mut self.tmp, memo)
            }
            _ => {
                out.extend_from_slice(b"[FAILED TO PARSE]");
                if let Some(f) = ev.format {
                    print_fields(out, f, ev.data, self.meta.endian);
                }
            }
        }
    }

    fn sched_switch(&mut self, ev: &Rec<'_, '_>, out: &mut Vec<u8>) {
        let Some(prev_pid) = ev.num(0) else {
            out.push(b'!');
            return;
        };
        if let Some(c) = ev.str(1) {
            out.extend_from_slice(c);
            out.push(b':');
            self.learn(prev_pid as i32, c);
        }
        push_i64(out, prev_pid);
        out.push(b' ');
        if let Some(p) = ev.num(2) {
            out.push(b'[');
            push_i64(out, p as i32 as i64);
            out.extend_from_slice(b"] ");
        }
        if let Some(state) = ev.num(3) {
            let states = b"SDTtZXxW";
            let state = state as i32;
            let mut found = false;
            for (i, &c) in states.iter().enumerate() {
                if state & (1 << i) != 0 {
                    if found {
                        out.push(b'|');
                    }
                    found = true;
                    out.push(c);
                }
            }
            if !found {
                out.push(b'R');
            }
        }
        out.extend_from_slice(b" ==> ");
        let Some(next_pid) = ev.num(4) else {
            out.push(b'!');
            return;
        };
        self.task(out, next_pid, ev.str(5), ev.num(6).map(|p| p as i32 as i64));
    }

    fn sched_wakeup(&mut self, ev: &Rec<'_, '_>, out: &mut Vec<u8>) {
        let Some(pid) = ev.num(0) else {
            out.push(b'!');
            return;
        };
        self.task(out, pid, ev.str(1), ev.num(2));
        if let Some(s) = ev.num(3) {
            out.extend_from_slice(b" success=");
            push_i64(out, s);
        }
        if let Some(c) = ev.num(4) {
            out.extend_from_slice(b" CPU:");
            push_zero_padded(out, c as u64, 3);
        }
    }

    /// `comm:pid [prio]`, each part that is known; learns the comm.
    fn task(&mut self, out: &mut Vec<u8>, pid: i64, comm: Option<&[u8]>, prio: Option<i64>) {
        if let Some(c) = comm {
            out.extend_from_slice(c);
            out.push(b':');
            self.learn(pid as i32, c);
        }
        push_i64(out, pid);
        if let Some(p) = prio {
            out.extend_from_slice(b" [");
            push_i64(out, p);
            out.push(b']');
        }
    }

    fn func(&self, out: &mut Vec<u8>, v: u64) {
        match self.meta.kallsyms.lookup(v) {
            Some((name, addr)) => {
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"/0x");
                crate::printf::push_hex_digits(out, addr.wrapping_sub(v));
            }
            None => {
                // 0x{v:08x}
                out.extend_from_slice(b"0x");
                let start = out.len();
                crate::printf::push_hex_digits(out, v);
                let n = out.len() - start;
                if n < 8 {
                    out.splice(start..start, std::iter::repeat_n(b'0', 8 - n));
                }
            }
        }
    }

    /// trace-cmd's hrtimer plugin; fields by slot: timer (or hrtimer),
    /// then [`HRTIMER_FIELDS`].
    fn hrtimer(&self, ev: &Rec<'_, '_>, kind: Special, out: &mut Vec<u8>) {
        out.extend_from_slice(b"hrtimer=");
        if let Some(t) = ev.unum(0) {
            out.extend_from_slice(b"0x");
            crate::printf::push_hex_digits(out, t);
        }
        if kind == Special::HrtimerExpireEntry {
            out.extend_from_slice(b" now=");
            if let Some(n) = ev.unum(1) {
                push_u64(out, n);
            }
            if let Some(f) = ev.unum(2) {
                out.extend_from_slice(b" function=");
                self.func(out, f);
            }
        } else {
            if let Some(f) = ev.unum(2) {
                out.extend_from_slice(b" function=");
                self.func(out, f);
            }
            out.extend_from_slice(b" expires=");
            if let Some(n) = ev.unum(3) {
                push_u64(out, n);
            }
            out.extend_from_slice(b" softexpires=");
            if let Some(n) = ev.unum(4) {
                push_u64(out, n);
            }
        }
    }

    fn ip_prefix(&self, ev: &Rec<'_, '_>, out: &mut Vec<u8>) {
        let ip = ev.unum(0).unwrap_or(0);
        match self.meta.kallsyms.lookup(ip) {
            Some((name, _)) => out.extend_from_slice(name.as_bytes()),
            None => {
                out.extend_from_slice(b"0x");
                crate::printf::push_hex_digits(out, ip);
            }
        }
        out.extend_from_slice(b": ");
    }

    /// Fields by slot: [`BPUTS_FIELDS`].
    fn bputs(&self, ev: &Rec<'_, '_>, out: &mut Vec<u8>) {
        self.ip_prefix(ev, out);
        let addr = ev.unum(1).unwrap_or(0);
        match self.meta.printk.get(addr) {
            Some(s) => out.extend_from_slice(s),
            None => {
                out.extend_from_slice(b"0x");
                crate::printf::push_hex_digits(out, addr);
            }
        }
    }

    /// Fields by slot: [`BPRINT_FIELDS`].
    fn bprint(&mut self, ev: &Rec<'_, '_>, out: &mut Vec<u8>) {
        self.ip_prefix(ev, out);
        let addr = ev.unum(1).unwrap_or(0);
        let pieces = match self.bprint_cache.get(&addr) {
            Some(p) => p,
            None => {
                let Some(fmt) = self.meta.printk.get(addr) else {
                    out.extend_from_slice(format!("[UNKNOWN FORMAT 0x{addr:x}]").as_bytes());
                    return;
                };
                self.bprint_cache.insert(addr, printf::parse_format(fmt));
                &self.bprint_cache[&addr]
            }
        };
        let buf = match ev
            .fields
            .get(2)
            .and_then(|f| f.as_ref()?.value(ev.data, ev.endian))
        {
            Some(Value::Array { data, .. }) => data,
            Some(Value::Str(s)) => s,
            _ => &[][..],
        };
        let args = bprint_args(pieces, buf, self.meta.endian, self.meta.long_size);
        let ctx = Ctx {
            long_size: self.meta.long_size,
            kallsyms: &self.meta.kallsyms,
        };
        printf::format(out, pieces, args, &ctx);
    }
}

/// Decodes the binary arguments `trace_printk` packed with `vbin_printf`:
/// integers aligned to their size (8-byte values to 4), strings inline.
/// Lazily, in the order [`printf::format`] takes them (no allocation).
pub(crate) fn bprint_args<'a, 'p>(
    pieces: &'p [Piece],
    buf: &'a [u8],
    endian: Endian,
    long_size: usize,
) -> BprintArgs<'a, 'p> {
    BprintArgs {
        pieces: pieces.iter(),
        buf,
        endian,
        long_size,
        pos: 0,
        queue: [None, None, None],
        next: 3,
    }
}

/// See [`bprint_args`].
pub(crate) struct BprintArgs<'a, 'p> {
    pieces: std::slice::Iter<'p, Piece>,
    buf: &'a [u8],
    endian: Endian,
    long_size: usize,
    pos: usize,
    /// The current conversion's arguments: star width, star precision, value.
    queue: [Option<Arg<'a>>; 3],
    next: usize,
}

impl<'a> BprintArgs<'a, '_> {
    fn read(&mut self, size: usize) -> u64 {
        let align = if size >= 8 { 4 } else { size.max(1) };
        self.pos = self.pos.div_ceil(align) * align;
        let v = self
            .buf
            .get(self.pos..self.pos + size)
            .map(|b| self.endian.uint(b))
            .unwrap_or(0);
        self.pos += size;
        v
    }
}

impl<'a> Iterator for BprintArgs<'a, '_> {
    type Item = Arg<'a>;

    fn next(&mut self) -> Option<Arg<'a>> {
        loop {
            while self.next < 3 {
                let i = self.next;
                self.next += 1;
                if let Some(a) = self.queue[i].take() {
                    return Some(a);
                }
            }
            let s = loop {
                match self.pieces.next()? {
                    Piece::Spec(s) => break s,
                    Piece::Lit(_) => {}
                }
            };
            self.next = 0;
            self.queue[0] = (s.width == Num::Star).then(|| Arg::Num(self.read(4)));
            self.queue[1] = (s.prec == Num::Star).then(|| Arg::Num(self.read(4)));
            self.queue[2] = Some(match s.conv {
                b's' => {
                    let buf = self.buf;
                    let rest = buf.get(self.pos..).unwrap_or(&[]);
                    let n = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
                    self.pos += n + 1;
                    Arg::Str(Cow::Borrowed(&rest[..n]))
                }
                b'p' => Arg::Num(self.read(self.long_size)),
                b'c' => Arg::Num(self.read(1)),
                _ => {
                    let size = match s.len {
                        Len::HH => 1,
                        Len::H => 2,
                        Len::None => 4,
                        Len::L | Len::Z => self.long_size,
                        Len::LL => 8,
                    };
                    let v = self.read(size);
                    // Sign-extend so %d of a narrow type prints negative values.
                    let v = if matches!(s.conv, b'd' | b'i') && size < 8 {
                        let sh = 64 - 8 * size as u32;
                        (((v << sh) as i64) >> sh) as u64
                    } else {
                        v
                    };
                    Arg::Num(v)
                }
            });
        }
    }
}

/// trace-cmd's fallback when a print fmt cannot be parsed: ` name=value` for each field.
fn print_fields(out: &mut Vec<u8>, f: &EventFormat, data: &[u8], endian: Endian) {
    use std::io::Write;
    for field in &f.fields {
        let _ = write!(out, " {}=", field.name);
        match field.value(data, endian) {
            Some(Value::Int(v)) => {
                let _ = write!(out, "{v}");
            }
            Some(Value::UInt(v)) => {
                if field.type_name.contains('*')
                    || field.type_name.contains("long") && field.size == 8
                {
                    let _ = write!(out, "0x{v:x}");
                } else {
                    let _ = write!(out, "{v}");
                }
            }
            Some(Value::Str(s)) => out.extend_from_slice(s),
            Some(Value::Array { data, .. }) => {
                out.extend_from_slice(b"ARRAY[");
                for (i, b) in data.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    let _ = write!(out, "{b:02x}");
                }
                out.push(b']');
            }
            None => {
                let _ = matches!(field.kind, FieldKind::Scalar);
            }
        }
    }
}

/// Writes `n` in decimal into `b` just before index `end`, padded on the
/// left with `pad` to `width` characters; returns where the text starts.
#[inline]
fn digits_before(b: &mut [u8], end: usize, mut n: u64, width: usize, pad: u8) -> usize {
    let mut i = end;
    loop {
        i -= 1;
        b[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    while end - i < width {
        i -= 1;
        b[i] = pad;
    }
    i
}
