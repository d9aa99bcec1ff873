//! Per-CPU page streams merged into one time-ordered event stream.
//!
//! Memory stays bounded: one page (or, for compressed files, one chunk) per
//! CPU is decoded at a time, and events borrow from it.

use std::borrow::Cow;

use crate::compress::{Compression, Decompressor};
use crate::dat::{CpuData, DatFile, Meta};
use crate::endian::Endian;
use crate::error::{Error, Result};
use crate::format::{EventFormat, Value};
use crate::page::{Missed, Page};

/// One event, borrowing its payload from the stream.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// Timestamp in trace-clock units (ns for the usual clocks).
    pub ts: u64,
    /// CPU that recorded the event.
    pub cpu: u32,
    /// Index into [`Meta::buffers`].
    pub buffer: usize,
    /// The raw record (starts with `common_type`).
    pub data: &'a [u8],
    /// Events lost on this CPU just before this one.
    pub missed: Missed,
    /// The event's format, when the file has it.
    pub format: Option<&'a EventFormat>,
    /// The file's metadata.
    pub meta: &'a Meta,
}

impl<'a> Event<'a> {
    /// The event id (`common_type`).
    #[inline]
    pub fn id(&self) -> u16 {
        match self.data.get(..2) {
            Some(b) => self.meta.endian.uint(b) as u16,
            None => 0,
        }
    }

    /// Event name, or `"unknown"` when the file has no format for its id.
    pub fn name(&self) -> &'a str {
        self.format.map(|f| f.name.as_str()).unwrap_or("unknown")
    }

    /// Subsystem name (`sched`, `irq`, `ftrace`, ...).
    pub fn system(&self) -> &'a str {
        self.format.map(|f| f.system.as_str()).unwrap_or("unknown")
    }

    /// `common_pid`: the task running when the event fired.
    #[inline]
    pub fn pid(&self) -> i32 {
        match self.data.get(4..8) {
            Some(b) => self.meta.endian.int(b) as i32,
            None => -1,
        }
    }

    /// `common_flags` (irqs-off, need-resched, hardirq, softirq bits).
    pub fn flags(&self) -> u8 {
        self.data.get(2).copied().unwrap_or(0)
    }

    /// `common_preempt_count`.
    pub fn preempt_count(&self) -> u8 {
        self.data.get(3).copied().unwrap_or(0)
    }

    /// The command name of [`Event::pid`] from the file's saved cmdlines
    /// (`<idle>` for pid 0, `<...>` when unknown).
    pub fn comm(&self) -> &'a str {
        let pid = self.pid();
        if pid == 0 {
            return "<idle>";
        }
        self.meta.comm_of(pid).unwrap_or("<...>")
    }

    /// A field by name (event fields first, then `common_*`).
    pub fn field(&self, name: &str) -> Option<Value<'a>> {
        self.format?.field(name)?.value(self.data, self.meta.endian)
    }

    /// A numeric field as unsigned.
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.field(name)?.as_u64()
    }

    /// A numeric field as signed.
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.field(name)?.as_i64()
    }

    /// A string field.
    pub fn str(&self, name: &str) -> Option<Cow<'a, str>> {
        self.field(name)?.as_str()
    }

    /// Copies the event out of the stream.
    pub fn to_owned_event(&self) -> OwnedEvent {
        OwnedEvent {
            ts: self.ts,
            cpu: self.cpu,
            buffer: self.buffer,
            data: self.data.to_vec(),
            missed: self.missed,
        }
    }
}

/// An event copied out of a stream (see [`Event::to_owned_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedEvent {
    /// Timestamp.
    pub ts: u64,
    /// CPU.
    pub cpu: u32,
    /// Buffer index.
    pub buffer: usize,
    /// Raw record.
    pub data: Vec<u8>,
    /// Events lost just before.
    pub missed: Missed,
}

impl OwnedEvent {
    /// A borrowed view with field accessors.
    pub fn view<'a>(&'a self, meta: &'a Meta) -> Event<'a> {
        let id = match self.data.get(..2) {
            Some(b) => meta.endian.uint(b) as u16,
            None => 0,
        };
        Event {
            ts: self.ts,
            cpu: self.cpu,
            buffer: self.buffer,
            data: &self.data,
            missed: self.missed,
            format: meta.event(id),
            meta,
        }
    }
}

#[derive(Debug)]
enum Src<'t> {
    Plain {
        data: &'t [u8],
        base: u64,
        pos: usize,
    },
    Zipped {
        data: &'t [u8],
        base: u64,
        comp: Compression,
        chunks_left: u32,
        pos: usize,
        /// The current chunk, decompressed (the allocation is kept).
        buf: Vec<u8>,
        buf_pos: usize,
        chunk_at: u64,
        decoder: Box<Decompressor>,
    },
}

/// One record of the current page: its timestamp and where its bytes are
/// in the page data or chunk buffer.
#[derive(Debug, Clone, Copy)]
struct Head {
    ts: u64,
    start: u32,
    end: u32,
}

fn src_bytes<'s>(src: &'s Src<'_>) -> &'s [u8] {
    match src {
        Src::Plain { data, .. } => data,
        Src::Zipped { buf, .. } => buf,
    }
}

/// One CPU's pages, decoded lazily.
#[derive(Debug)]
struct CpuStream<'t> {
    cpu: u32,
    buffer: usize,
    page_size: usize,
    endian: Endian,
    layout: crate::format::PageLayout,
    src: Src<'t>,
    /// File offset of the current page (for errors).
    page_at: u64,
    pending_missed: Missed,
    /// Events lost before the first record of the current page.
    page_missed: Missed,
    /// Records of the current page, decoded at once; `next` is the next to
    /// yield, `heads[next - 1]` the current head.
    heads: Vec<Head>,
    next: usize,
    /// Whether `heads[next - 1]` is a record not yet consumed.
    has_head: bool,
    /// An error met in the current page after the records in `heads`.
    page_error: Option<Error>,
    init_error: Option<Error>,
    /// Reported once the data that is present has been decoded.
    truncated: Option<Error>,
    lost: u64,
    lost_unknown: u64,
}

impl<'t> CpuStream<'t> {
    fn new(file: &'t [u8], meta: &Meta, buffer: usize, c: &CpuData, page_size: usize) -> Self {
        let start = c.offset as usize;
        // trace-cmd counts a compressed CPU's size after its 4-byte chunk count.
        let extra = if c.compressed { 4 } else { 0 };
        let want_end = start.saturating_add(c.size as usize + extra);
        let end = want_end.min(file.len());
        let data = &file[start.min(end)..end];
        let mut init_error = None;
        // A truncated file: decode what is there, then report where it ends.
        let truncated = (want_end > file.len()).then(|| Error::Truncated {
            offset: file.len() as u64,
            what: "CPU data (the file ends before the size its header gives)",
            need: (want_end - file.len()) as u64,
        });
        let src = if c.compressed {
            let comp = meta.compression.unwrap_or(Compression::Zstd);
            let chunks_left = if data.is_empty() {
                0
            } else if data.len() < 4 {
                init_error = Some(Error::Truncated {
                    offset: c.offset,
                    what: "compressed chunk count",
                    need: 4 - data.len() as u64,
                });
                0
            } else {
                meta.endian.uint(&data[..4]) as u32
            };
            Src::Zipped {
                data,
                base: c.offset,
                comp,
                chunks_left,
                pos: 4,
                buf: Vec::new(),
                buf_pos: 0,
                chunk_at: c.offset,
                decoder: Box::default(),
            }
        } else {
            Src::Plain {
                data,
                base: c.offset,
                pos: 0,
            }
        };
        CpuStream {
            cpu: c.cpu,
            buffer,
            page_size,
            endian: meta.endian,
            layout: meta.layout,
            src,
            page_at: c.offset,
            pending_missed: Missed::None,
            page_missed: Missed::None,
            heads: Vec::with_capacity(256),
            next: 0,
            has_head: false,
            page_error: None,
            init_error,
            truncated,
            lost: 0,
            lost_unknown: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        src_bytes(&self.src)
    }

    /// The current head's timestamp (`u64::MAX` when there is none).
    #[inline]
    fn head_ts(&self) -> u64 {
        if self.has_head {
            self.heads[self.next - 1].ts
        } else {
            u64::MAX
        }
    }

    /// Loads the next page; false at the end of the data.
    fn next_page(&mut self) -> Result<bool> {
        let page_size = self.page_size;
        let (start, len, at) = match &mut self.src {
            Src::Plain { data, base, pos } => {
                if *pos >= data.len() {
                    return Ok(false);
                }
                let start = *pos;
                let len = page_size.min(data.len() - start);
                if len < page_size {
                    if let Some(e) = self.truncated.take() {
                        // The file was cut inside this page.
                        *pos = data.len();
                        return Err(e);
                    }
                }
                *pos += page_size;
                (start, len, *base + start as u64)
            }
            Src::Zipped {
                data,
                base,
                comp,
                chunks_left,
                pos,
                buf,
                buf_pos,
                chunk_at,
                decoder,
            } => {
                if *buf_pos >= buf.len() {
                    if *chunks_left == 0 {
                        return Ok(false);
                    }
                    let at = *base + *pos as u64;
                    let hdr = data.get(*pos..*pos + 8).ok_or(Error::Truncated {
                        offset: at,
                        what: "compressed chunk header",
                        need: 8,
                    })?;
                    let csize = self.endian.uint(&hdr[..4]) as usize;
                    let usize_ = self.endian.uint(&hdr[4..]) as usize;
                    let cdata = data
                        .get(*pos + 8..*pos + 8 + csize)
                        .ok_or(Error::Truncated {
                            offset: at,
                            what: "compressed chunk",
                            need: (*pos + 8 + csize).saturating_sub(data.len()) as u64,
                        })?;
                    decoder.decompress_into(*comp, cdata, usize_, at, buf)?;
                    *buf_pos = 0;
                    *pos += 8 + csize;
                    *chunks_left -= 1;
                    *chunk_at = at;
                    if buf.is_empty() {
                        // An empty chunk: try the next one.
                        self.heads.clear();
                        self.next = 0;
                        self.has_head = false;
                        return Ok(*chunks_left > 0);
                    }
                }
                let start = *buf_pos;
                let len = page_size.min(buf.len() - start);
                *buf_pos += page_size;
                (start, len, *chunk_at)
            }
        };
        self.page_at = at;
        let page_bytes = &src_bytes(&self.src)[start..start + len];
        let page = Page::parse(page_bytes, &self.layout, self.endian).map_err(|e| e.at_base(at))?;
        match page.missed {
            Missed::None => {}
            Missed::Unknown => {
                self.lost_unknown += 1;
                self.pending_missed = Missed::Unknown;
            }
            Missed::Count(n) => {
                self.lost += n;
                self.pending_missed = match self.pending_missed {
                    Missed::Count(m) => Missed::Count(m + n),
                    _ => Missed::Count(n),
                };
            }
        }
        self.heads.clear();
        self.next = 0;
        self.has_head = false;
        let base = page.committed().as_ptr() as usize;
        for r in page.records() {
            match r {
                Ok(r) => {
                    let off = start + (r.data.as_ptr() as usize - base);
                    self.heads.push(Head {
                        ts: r.timestamp,
                        start: off as u32,
                        end: (off + r.data.len()) as u32,
                    });
                }
                Err(e) => {
                    self.page_error = Some(e.at_base(at));
                    break;
                }
            }
        }
        self.page_missed = if self.heads.is_empty() {
            Missed::None
        } else {
            std::mem::take(&mut self.pending_missed)
        };
        Ok(true)
    }

    fn kill(&mut self) {
        self.has_head = false;
        self.heads.clear();
        self.next = 0;
        self.src = Src::Plain {
            data: &[],
            base: 0,
            pos: 0,
        };
    }

    #[inline]
    fn advance(&mut self, meta: &Meta) -> Result<()> {
        if self.next < self.heads.len() {
            self.next += 1;
            self.has_head = true;
            return Ok(());
        }
        self.advance_slow().map_err(|e| Error::Cpu {
            cpu: self.cpu,
            buffer: meta
                .buffers
                .get(self.buffer)
                .map(|b| b.name.clone())
                .unwrap_or_default(),
            source: Box::new(e),
        })
    }

    #[cold]
    fn advance_slow(&mut self) -> Result<()> {
        self.has_head = false;
        if let Some(e) = self.init_error.take() {
            self.kill();
            return Err(e);
        }
        loop {
            if self.next < self.heads.len() {
                self.next += 1;
                self.has_head = true;
                return Ok(());
            }
            if let Some(e) = self.page_error.take() {
                self.kill();
                return Err(e);
            }
            match self.next_page() {
                Ok(true) => {}
                Ok(false) => {
                    if let Some(e) = self.truncated.take() {
                        return Err(e);
                    }
                    return Ok(());
                }
                Err(e) => {
                    self.kill();
                    return Err(e);
                }
            }
        }
    }
}

/// Lost-event totals of a stream so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LostEvents {
    /// Events the kernel counted as lost.
    pub counted: u64,
    /// Pages flagged "events lost" without a count.
    pub uncounted_pages: u64,
}

/// A time-ordered stream of the events of all CPUs (a lending iterator: call
/// [`Events::next_event`] in a `while let` loop).
#[derive(Debug)]
pub struct Events<'t> {
    meta: &'t Meta,
    cpus: Vec<CpuStream<'t>>,
    started: bool,
    consumed: Option<usize>,
    /// While the stream `cur` keeps yielding records with timestamps below
    /// `bound` (the others' earliest head, ties going to the lower index),
    /// it stays the earliest: no scan of the other CPUs is needed.
    cur: usize,
    bound: u64,
    ts_adjust: bool,
}

impl<'t> Events<'t> {
    pub(crate) fn new(file: &'t [u8], meta: &'t Meta) -> Self {
        let mut cpus = Vec::new();
        for (b, buf) in meta.buffers.iter().enumerate() {
            for c in &buf.cpus {
                if c.size > 0 {
                    cpus.push(CpuStream::new(file, meta, b, c, buf.page_size as usize));
                }
            }
        }
        Events {
            meta,
            cpus,
            started: false,
            consumed: None,
            cur: usize::MAX,
            bound: 0,
            ts_adjust: meta.ts_offset != 0 || meta.tsc2nsec.is_some(),
        }
    }

    /// Keeps only the CPUs for which `keep` returns true (others are not decoded).
    pub fn retain_cpus(mut self, keep: impl Fn(u32) -> bool) -> Self {
        self.cpus.retain(|c| keep(c.cpu));
        self
    }

    /// Lost events seen so far, summed over CPUs.
    pub fn lost(&self) -> LostEvents {
        let mut l = LostEvents::default();
        for c in &self.cpus {
            l.counted += c.lost;
            l.uncounted_pages += c.lost_unknown;
        }
        l
    }

    fn adjust(&self, ts: u64) -> u64 {
        let mut t = ts;
        if let Some((mult, shift, off)) = self.meta.tsc2nsec {
            t = (((t as u128) * mult as u128) >> shift) as u64;
            t = t.wrapping_add(off);
        }
        t.wrapping_add(self.meta.ts_offset as u64)
    }

    /// Finds the earliest head (the lowest index among equal timestamps) and
    /// the bound below which that stream stays the earliest.
    fn pick(&mut self) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        for (i, c) in self.cpus.iter().enumerate() {
            if c.has_head {
                let ts = c.head_ts();
                if best.is_none_or(|(_, t)| ts < t) {
                    best = Some((i, ts));
                }
            }
        }
        let (i, _) = best?;
        // Streams before `i` win ties, so `i` must stay strictly below
        // their heads; streams after it lose ties.
        let mut bound = u64::MAX;
        for (j, c) in self.cpus.iter().enumerate() {
            if j != i && c.has_head {
                let ts = c.head_ts();
                let b = if j < i { ts } else { ts.saturating_add(1) };
                bound = bound.min(b);
            }
        }
        self.cur = i;
        self.bound = bound;
        Some(i)
    }

    /// The next event in time order, or `None` at the end. After an error the
    /// failing CPU is dropped and the others continue.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_>>> {
        if !self.started {
            self.started = true;
            for i in 0..self.cpus.len() {
                if let Err(e) = self.cpus[i].advance(self.meta) {
                    return Some(Err(e));
                }
            }
        }
        let i = match self.consumed.take() {
            Some(i) => {
                if let Err(e) = self.cpus[i].advance(self.meta) {
                    self.cur = usize::MAX;
                    return Some(Err(e));
                }
                let c = &self.cpus[i];
                if i == self.cur && c.has_head && c.head_ts() < self.bound {
                    i
                } else {
                    self.pick()?
                }
            }
            None => self.pick()?,
        };
        self.consumed = Some(i);
        let c = &self.cpus[i];
        let h = c.heads[c.next - 1];
        let data = &c.bytes()[h.start as usize..h.end as usize];
        let id = match data.get(..2) {
            Some(b) => self.meta.endian.uint(b) as u16,
            None => 0,
        };
        let ts = if self.ts_adjust {
            self.adjust(h.ts)
        } else {
            h.ts
        };
        Some(Ok(Event {
            ts,
            cpu: c.cpu,
            buffer: c.buffer,
            data,
            missed: if c.next == 1 {
                c.page_missed
            } else {
                Missed::None
            },
            format: self.meta.event(id),
            meta: self.meta,
        }))
    }
}

/// An [`Iterator`] over copies of the events (see [`Events::into_owned`]).
#[derive(Debug)]
pub struct OwnedEvents<'t>(Events<'t>);

impl Iterator for OwnedEvents<'_> {
    type Item = Result<OwnedEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_event().map(|r| r.map(|e| e.to_owned_event()))
    }
}

impl<'t> Events<'t> {
    /// A plain iterator that copies each event out (one allocation per event;
    /// [`Events::next_event`] avoids it).
    pub fn into_owned(self) -> OwnedEvents<'t> {
        OwnedEvents(self)
    }
}

/// Task names over time: starts from the file's saved cmdlines and follows
/// the comms that sched events carry (the latest one wins, so a task that
/// calls `exec` changes name mid-trace, unlike `trace-cmd report`'s
/// first-name-sticks rule that [`crate::render::Renderer`] reproduces).
#[derive(Debug, Clone, Default)]
pub struct CommTracker {
    comms: std::collections::HashMap<i32, String>,
}

impl CommTracker {
    /// Starts from the saved cmdlines of `meta`.
    pub fn new(meta: &Meta) -> Self {
        CommTracker {
            comms: meta.cmdlines.clone(),
        }
    }

    fn set(&mut self, pid: Option<i64>, comm: Option<Cow<'_, str>>) {
        if let (Some(pid), Some(comm)) = (pid, comm) {
            if pid > 0
                && !comm.is_empty()
                && self.comms.get(&(pid as i32)).map(|c| c.as_str()) != Some(&comm)
            {
                self.comms.insert(pid as i32, comm.into_owned());
            }
        }
    }

    /// Learns from `ev` (sched_switch, sched_waking/wakeup/wakeup_new,
    /// sched_process_fork, task_rename).
    pub fn observe(&mut self, ev: &Event<'_>) {
        match ev.name() {
            "sched_switch" => {
                self.set(ev.i64("prev_pid"), ev.str("prev_comm"));
                self.set(ev.i64("next_pid"), ev.str("next_comm"));
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" | "sched_migrate_task" => {
                self.set(ev.i64("pid"), ev.str("comm"))
            }
            "sched_process_fork" => self.set(ev.i64("child_pid"), ev.str("child_comm")),
            "task_rename" => self.set(ev.i64("pid"), ev.str("newcomm")),
            _ => {}
        }
    }

    /// The latest known name of `pid` (`<idle>` for 0, `<...>` when unknown).
    pub fn comm(&self, pid: i32) -> &str {
        if pid == 0 {
            return "<idle>";
        }
        self.comms.get(&pid).map(|s| s.as_str()).unwrap_or("<...>")
    }
}

impl DatFile {
    /// A merged, time-ordered stream of all events of all buffers and CPUs.
    pub fn events(&self) -> Events<'_> {
        Events::new(self.bytes(), &self.meta)
    }
}
