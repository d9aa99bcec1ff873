//! trace-cmd `.dat` files, versions 6 and 7 (see `trace-cmd.dat.v6(5)` and
//! `trace-cmd.dat.v7(5)`): metadata parsing is a pure function of the bytes;
//! [`DatFile::open`] maps a file and parses it.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use crate::endian::{Endian, Reader};
use crate::error::{Error, Result};
use crate::format::{EventFormat, PageLayout};
use crate::symbols::{Kallsyms, PrintkFormats, SharedBytes};

pub use crate::compress::{Compression, Decompressor};

/// The ten bytes every .dat file starts with.
pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// Where one CPU's ring-buffer pages are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuData {
    /// CPU number.
    pub cpu: u32,
    /// File offset of the data.
    pub offset: u64,
    /// Bytes in the file (compressed size when compressed).
    pub size: u64,
    /// Whether the data is a sequence of compressed chunks.
    pub compressed: bool,
}

/// One trace buffer (the top-level buffer or an instance).
#[derive(Debug, Clone)]
pub struct BufferInfo {
    /// Instance name; empty for the top-level buffer.
    pub name: String,
    /// Trace clock, when the file says.
    pub clock: Option<String>,
    /// Ring-buffer page size.
    pub page_size: u32,
    /// Per-CPU data.
    pub cpus: Vec<CpuData>,
}

/// Everything in a .dat file except the event data itself.
#[derive(Debug, Clone)]
pub struct Meta {
    /// File version (6 or 7).
    pub version: u32,
    /// Byte order of the traced machine.
    pub endian: Endian,
    /// Size of `long` on the traced machine (4 or 8).
    pub long_size: usize,
    /// Page size of the traced machine.
    pub page_size: u32,
    /// Ring-buffer page header layout.
    pub layout: PageLayout,
    /// Compression of a v7 file.
    pub compression: Option<Compression>,
    /// All event formats (ftrace's own and every subsystem's).
    pub events: Vec<EventFormat>,
    by_id: Vec<u32>,
    /// Kernel symbols.
    pub kallsyms: Kallsyms,
    /// `trace_printk` formats.
    pub printk: PrintkFormats,
    /// Saved command lines: pid -> comm.
    pub cmdlines: HashMap<i32, String>,
    /// CPUs the file says the machine had.
    pub cpu_count: u32,
    /// Trace buffers with data.
    pub buffers: Vec<BufferInfo>,
    /// Content of the `trace_clock` file (the selected clock is in brackets).
    pub trace_clock: Option<String>,
    /// `uname` of the traced machine.
    pub uname: Option<String>,
    /// Per-CPU `stats` texts (overruns, dropped events).
    pub cpu_stats: Vec<String>,
    /// Offset added to every timestamp (OFFSET option), in clock units.
    pub ts_offset: i64,
    /// TSC to ns conversion (multiplier, shift, offset), when recorded.
    pub tsc2nsec: Option<(u32, u32, u64)>,
}

impl Meta {
    /// The format of event `id`.
    #[inline]
    pub fn event(&self, id: u16) -> Option<&EventFormat> {
        match self.by_id.get(id as usize) {
            Some(&i) if i != u32::MAX => Some(&self.events[i as usize]),
            _ => None,
        }
    }

    /// Index into [`Meta::events`] of event `id`.
    #[inline]
    pub fn event_index(&self, id: u16) -> Option<usize> {
        match self.by_id.get(id as usize) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// Finds an event by name (and system, when given as `system:name` or `system/name`).
    pub fn event_by_name(&self, name: &str) -> Option<&EventFormat> {
        let (sys, n) = match name.split_once([':', '/']) {
            Some((s, n)) => (Some(s), n),
            None => (None, name),
        };
        self.events
            .iter()
            .find(|e| e.name == n && sys.is_none_or(|s| s == e.system))
    }

    /// The trace clock in use (the bracketed entry of `trace_clock`).
    pub fn clock(&self) -> Option<&str> {
        if let Some(c) = self.buffers.iter().find_map(|b| b.clock.as_deref()) {
            return Some(c);
        }
        let t = self.trace_clock.as_deref()?;
        let s = t.find('[')?;
        let e = t[s..].find(']')?;
        Some(&t[s + 1..s + e])
    }

    /// The common-field layout of the file's events (from the first format).
    pub fn comm_of(&self, pid: i32) -> Option<&str> {
        self.cmdlines.get(&pid).map(|s| s.as_str())
    }

    fn add_events(&mut self, system: &str, text: &[u8], at: u64) -> Result<()> {
        // The strict check is the fast one; lossy only for text that needs it.
        let text = match std::str::from_utf8(text) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(text),
        };
        let f = EventFormat::parse(system, &text, self.long_size).map_err(|e| match e {
            Error::Format { event, line, msg } => Error::Format {
                event,
                line,
                msg: format!("{msg} (format file at byte offset {at})"),
            },
            e => e,
        })?;
        if self.by_id.len() <= f.id as usize {
            self.by_id.resize(f.id as usize + 1, u32::MAX);
        }
        self.by_id[f.id as usize] = self.events.len() as u32;
        self.events.push(f);
        Ok(())
    }
}

fn tag_eq(b: &[u8], s: &str) -> bool {
    b == s.as_bytes()
}

fn text(b: &[u8]) -> String {
    let b = match b.iter().position(|&c| c == 0) {
        Some(n) => &b[..n],
        None => b,
    };
    String::from_utf8_lossy(b).into_owned()
}

fn parse_cmdlines(b: &[u8]) -> HashMap<i32, String> {
    let mut m = HashMap::new();
    for line in b.split(|&c| c == b'\n') {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches('\0');
        if let Some((pid, comm)) = line.split_once(' ') {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                m.insert(pid, comm.to_string());
            }
        }
    }
    m
}

struct MetaParser<'a> {
    data: &'a [u8],
    /// `data` as shared bytes, when the caller keeps them (see [`DatFile`]).
    shared: Option<SharedBytes>,
    meta: Meta,
}

const OPT_DONE: u16 = 0;
const OPT_CPUSTAT: u16 = 2;
const OPT_BUFFER: u16 = 3;
const OPT_TRACECLOCK: u16 = 4;
const OPT_UNAME: u16 = 5;
const OPT_OFFSET: u16 = 7;
const OPT_CPUCOUNT: u16 = 8;
const OPT_TSC2NSEC: u16 = 14;
const OPT_HEADER_INFO: u16 = 16;
const OPT_FTRACE_EVENTS: u16 = 17;
const OPT_EVENT_FORMATS: u16 = 18;
const OPT_KALLSYMS: u16 = 19;
const OPT_PRINTK: u16 = 20;
const OPT_CMDLINES: u16 = 21;

impl<'a> MetaParser<'a> {
    fn header_info(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let at = r.offset();
        let tag = r.bytes(12, "header_page tag")?;
        if !tag_eq(tag, "header_page\0") {
            return Err(Error::Corrupt {
                offset: at,
                what: "expected \"header_page\"".into(),
            });
        }
        let n = r.u64("header_page size")?;
        let hp = r.sized(n, "header_page")?;
        self.meta.layout = PageLayout::parse(&String::from_utf8_lossy(hp))?;
        let at = r.offset();
        let tag = r.bytes(13, "header_event tag")?;
        if !tag_eq(tag, "header_event\0") {
            return Err(Error::Corrupt {
                offset: at,
                what: "expected \"header_event\"".into(),
            });
        }
        let n = r.u64("header_event size")?;
        r.sized(n, "header_event")?;
        Ok(())
    }

    fn ftrace_events(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let count = r.u32("ftrace event count")?;
        for _ in 0..count {
            let n = r.u64("ftrace format size")?;
            let at = r.offset();
            let t = r.sized(n, "ftrace format")?;
            self.meta.add_events("ftrace", t, at)?;
        }
        Ok(())
    }

    fn event_formats(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let systems = r.u32("event system count")?;
        for _ in 0..systems {
            let sys = text(r.cstr("event system name")?);
            let count = r.u32("event count")?;
            for _ in 0..count {
                let n = r.u64("event format size")?;
                let at = r.offset();
                let t = r.sized(n, "event format")?;
                self.meta.add_events(&sys, t, at)?;
            }
        }
        Ok(())
    }

    fn kallsyms(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let n = r.u32("kallsyms size")?;
        let text = r.sized(n as u64, "kallsyms")?;
        // Text that lies in the file itself is shared, not copied.
        let base = self.data.as_ptr() as usize;
        let at = (text.as_ptr() as usize).wrapping_sub(base);
        self.meta.kallsyms = match &self.shared {
            Some(bytes) if at <= self.data.len() && at + text.len() <= self.data.len() => {
                Kallsyms::shared(bytes.clone(), at..at + text.len())
            }
            _ => Kallsyms::parse(text),
        };
        Ok(())
    }

    fn printk(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let n = r.u32("printk size")?;
        self.meta.printk = PrintkFormats::parse(r.sized(n as u64, "printk formats")?);
        Ok(())
    }

    fn cmdlines(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let n = r.u64("cmdlines size")?;
        self.meta.cmdlines = parse_cmdlines(r.sized(n, "cmdlines")?);
        Ok(())
    }

    fn flyrecord_cpus(&self, r: &mut Reader<'_>, cpus: u32) -> Result<Vec<CpuData>> {
        let mut v = Vec::new();
        for cpu in 0..cpus {
            let offset = r.u64("CPU data offset")?;
            let size = r.u64("CPU data size")?;
            v.push(CpuData {
                cpu,
                offset,
                size,
                compressed: false,
            });
        }
        Ok(v)
    }

    fn parse_v6(&mut self, r: &mut Reader<'a>) -> Result<()> {
        self.header_info(r)?;
        self.ftrace_events(r)?;
        self.event_formats(r)?;
        self.kallsyms(r)?;
        self.printk(r)?;
        self.cmdlines(r)?;
        let cpus = r.u32("CPU count")?;
        if cpus > 1 << 16 {
            return Err(Error::Corrupt {
                offset: r.offset() - 4,
                what: format!("{cpus} CPUs is implausible"),
            });
        }
        self.meta.cpu_count = cpus;
        let mut instance_buffers: Vec<(u64, String)> = Vec::new();
        let mut clock_after_table = false;
        loop {
            let at = r.offset();
            let tag = r.bytes(10, "section tag")?;
            if tag_eq(tag, "options  \0") {
                loop {
                    let id = r.u16("option id")?;
                    if id == OPT_DONE {
                        break;
                    }
                    let n = r.u32("option size")?;
                    let oat = r.offset();
                    let d = r.sized(n as u64, "option")?;
                    if id == OPT_TRACECLOCK && d.is_empty() {
                        // Older trace-cmd: the clock text follows the CPU table.
                        clock_after_table = true;
                    } else if id == OPT_BUFFER {
                        let mut o = Reader::new(d, oat, self.meta.endian);
                        let off = o.u64("buffer offset")?;
                        let name = text(o.cstr("buffer name")?);
                        instance_buffers.push((off, name));
                    } else {
                        self.option(id, d, oat)?;
                    }
                }
            } else if tag_eq(tag, "latency  \0") {
                // Latency-tracer text: no binary events.
                break;
            } else if tag_eq(tag, "flyrecord\0") {
                let cpus = self.flyrecord_cpus(r, cpus)?;
                if clock_after_table {
                    if let Ok(n) = r.u64("trace clock size") {
                        if n < 4096 {
                            if let Ok(t) = r.sized(n, "trace clock") {
                                self.meta.trace_clock = Some(text(t));
                            }
                        }
                    }
                }
                self.meta.buffers.push(BufferInfo {
                    name: String::new(),
                    clock: None,
                    page_size: self.meta.page_size,
                    cpus,
                });
                break;
            } else {
                return Err(Error::Corrupt {
                    offset: at,
                    what: format!("unknown section tag {:?}", String::from_utf8_lossy(tag)),
                });
            }
        }
        for (off, name) in instance_buffers {
            if off as usize > self.data.len() {
                return Err(Error::Truncated {
                    offset: off,
                    what: "instance buffer",
                    need: off - self.data.len() as u64,
                });
            }
            let mut b = Reader::new(&self.data[off as usize..], off, self.meta.endian);
            let tag = b.bytes(10, "instance flyrecord tag")?;
            if !tag_eq(tag, "flyrecord\0") {
                return Err(Error::Corrupt {
                    offset: off,
                    what: format!("instance {name:?}: expected \"flyrecord\""),
                });
            }
            let cpus = self.flyrecord_cpus(&mut b, cpus)?;
            self.meta.buffers.push(BufferInfo {
                name,
                clock: None,
                page_size: self.meta.page_size,
                cpus,
            });
        }
        Ok(())
    }

    fn option(&mut self, id: u16, d: &[u8], at: u64) -> Result<()> {
        let e = self.meta.endian;
        match id {
            OPT_CPUSTAT => self.meta.cpu_stats.push(text(d)),
            OPT_TRACECLOCK => self.meta.trace_clock = Some(text(d)),
            OPT_UNAME => self.meta.uname = Some(text(d)),
            OPT_CPUCOUNT if d.len() >= 4 => self.meta.cpu_count = e.uint(&d[..4]) as u32,
            OPT_OFFSET => {
                let t = text(d);
                let t = t.trim();
                self.meta.ts_offset = if let Some(h) = t.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).unwrap_or(0)
                } else {
                    t.parse().unwrap_or(0)
                };
            }
            OPT_TSC2NSEC if d.len() >= 16 => {
                self.meta.tsc2nsec = Some((
                    e.uint(&d[0..4]) as u32,
                    e.uint(&d[4..8]) as u32,
                    e.uint(&d[8..16]),
                ));
            }
            _ => {
                let _ = at;
            }
        }
        Ok(())
    }

    /// Reads a v7 section at `off`; returns its (decompressed) body and the file offset of the body.
    fn section(&self, off: u64, want_id: Option<u16>) -> Result<(std::borrow::Cow<'a, [u8]>, u64)> {
        let (flags, body, body_at) = self.section_header(off, want_id)?;
        if flags & 1 != 0 {
            let (comp, cdata, size) = self.compressed(off, body, body_at)?;
            let out = comp.decompress(cdata, size, body_at)?;
            Ok((std::borrow::Cow::Owned(out), body_at))
        } else {
            Ok((std::borrow::Cow::Borrowed(body), body_at))
        }
    }

    /// The v7 section header at `off` (checked against `want_id`): its
    /// flags, its body as stored and the body's file offset.
    fn section_header(&self, off: u64, want_id: Option<u16>) -> Result<(u16, &'a [u8], u64)> {
        if off as usize >= self.data.len() {
            return Err(Error::Truncated {
                offset: off,
                what: "section header",
                need: 16,
            });
        }
        let mut r = Reader::new(&self.data[off as usize..], off, self.meta.endian);
        let id = r.u16("section id")?;
        let flags = r.u16("section flags")?;
        let _desc = r.u32("section description")?;
        let size = r.u64("section size")?;
        if let Some(w) = want_id {
            if id != w {
                return Err(Error::Corrupt {
                    offset: off,
                    what: format!("expected section {w}, found section {id}"),
                });
            }
        }
        let body_at = r.offset();
        let body = r.sized(size, "section body")?;
        Ok((flags, body, body_at))
    }

    /// A compressed section body's compression, compressed bytes and
    /// uncompressed size (the section at `off`, for errors).
    fn compressed(
        &self,
        off: u64,
        body: &'a [u8],
        body_at: u64,
    ) -> Result<(Compression, &'a [u8], usize)> {
        let comp = self.meta.compression.ok_or_else(|| Error::Corrupt {
            offset: off,
            what: "compressed section in an uncompressed file".into(),
        })?;
        let mut c = Reader::new(body, body_at, self.meta.endian);
        let csize = c.u32("compressed size")?;
        let size = c.u32("uncompressed size")?;
        let cdata = c.sized(csize as u64, "compressed data")?;
        Ok((comp, cdata, size as usize))
    }

    /// A compressed kallsyms section is checked here but decompressed on the
    /// first symbol lookup (several MB that `--stats` and `explain` never
    /// read); an uncompressed one is read in place.
    fn lazy_kallsyms(&mut self, off: u64) -> Result<()> {
        let Some(shared) = self.shared.clone() else {
            return Ok(());
        };
        let (flags, body, body_at) = self.section_header(off, Some(OPT_KALLSYMS))?;
        if flags & 1 == 0 {
            let mut sr = Reader::new(body, body_at, self.meta.endian);
            return self.kallsyms(&mut sr);
        }
        let (comp, cdata, size) = self.compressed(off, body, body_at)?;
        let start = cdata.as_ptr() as usize - self.data.as_ptr() as usize;
        self.meta.kallsyms = Kallsyms::compressed(
            shared,
            start..start + cdata.len(),
            comp,
            size,
            self.meta.endian,
        );
        Ok(())
    }

    fn parse_v7(&mut self, r: &mut Reader<'a>) -> Result<()> {
        let at = r.offset();
        let cname = text(r.cstr("compression name")?);
        let _cver = r.cstr("compression version")?;
        self.meta.compression = match cname.as_str() {
            "none" | "" => None,
            "zstd" => Some(Compression::Zstd),
            "zlib" => Some(Compression::Zlib),
            other => {
                let _ = at;
                return Err(Error::UnsupportedCompression { name: other.into() });
            }
        };
        let mut next = r.u64("first options offset")?;
        let mut seen = std::collections::HashSet::new();
        let mut pending_buffers = Vec::new();
        while next != 0 {
            if !seen.insert(next) {
                return Err(Error::Corrupt {
                    offset: next,
                    what: "options sections form a loop".into(),
                });
            }
            let (body, body_at) = self.section(next, Some(0))?;
            let mut o = Reader::new(&body, body_at, self.meta.endian);
            next = 0;
            loop {
                if o.pos() >= body.len() {
                    break;
                }
                let id = o.u16("option id")?;
                let n = o.u32("option size")?;
                let oat = o.offset();
                let d = o.sized(n as u64, "option")?;
                let mut dr = Reader::new(d, oat, self.meta.endian);
                match id {
                    OPT_DONE => {
                        next = if d.len() >= 8 {
                            dr.u64("next options offset")?
                        } else {
                            0
                        };
                        break;
                    }
                    OPT_KALLSYMS if self.shared.is_some() => {
                        let so = dr.u64("section offset")?;
                        self.lazy_kallsyms(so)?;
                    }
                    OPT_HEADER_INFO | OPT_FTRACE_EVENTS | OPT_EVENT_FORMATS | OPT_KALLSYMS
                    | OPT_PRINTK | OPT_CMDLINES => {
                        let so = dr.u64("section offset")?;
                        let (sb, sat) = self.section(so, Some(id))?;
                        let mut sr = Reader::new(&sb, sat, self.meta.endian);
                        match id {
                            OPT_HEADER_INFO => self.header_info(&mut sr)?,
                            OPT_FTRACE_EVENTS => self.ftrace_events(&mut sr)?,
                            OPT_EVENT_FORMATS => self.event_formats(&mut sr)?,
                            OPT_KALLSYMS => self.kallsyms(&mut sr)?,
                            OPT_PRINTK => self.printk(&mut sr)?,
                            _ => self.cmdlines(&mut sr)?,
                        }
                    }
                    OPT_BUFFER => {
                        let so = dr.u64("buffer section offset")?;
                        let name = text(dr.cstr("buffer name")?);
                        let clock = text(dr.cstr("buffer clock")?);
                        let page_size = dr.u32("buffer page size")?;
                        let count = dr.u32("buffer CPU count")?;
                        let mut cpus = Vec::new();
                        for _ in 0..count {
                            let cpu = dr.u32("CPU id")?;
                            let offset = dr.u64("CPU data offset")?;
                            let size = dr.u64("CPU data size")?;
                            cpus.push(CpuData {
                                cpu,
                                offset,
                                size,
                                compressed: false,
                            });
                        }
                        pending_buffers.push((so, name, clock, page_size, cpus));
                    }
                    _ => self.option(id, d, oat)?,
                }
            }
        }
        for (so, name, clock, page_size, mut cpus) in pending_buffers {
            // The flyrecord section header says whether the CPU data is compressed.
            if so as usize + 4 > self.data.len() {
                return Err(Error::Truncated {
                    offset: so,
                    what: "flyrecord section header",
                    need: 4,
                });
            }
            let flags = self
                .meta
                .endian
                .uint(&self.data[so as usize + 2..so as usize + 4]);
            let compressed = flags & 1 != 0;
            if compressed && self.meta.compression.is_none() {
                return Err(Error::Corrupt {
                    offset: so,
                    what: "compressed flyrecord in an uncompressed file".into(),
                });
            }
            for c in &mut cpus {
                c.compressed = compressed;
            }
            self.meta.buffers.push(BufferInfo {
                name,
                clock: Some(clock),
                page_size,
                cpus,
            });
        }
        Ok(())
    }
}

/// Parses the metadata of a .dat file held in memory.
pub fn parse_meta(data: &[u8]) -> Result<Meta> {
    parse_meta_shared(data, None)
}

/// [`parse_meta`]; with `shared` (the same bytes, kept alive by the caller)
/// large parts such as kallsyms refer to them instead of copying.
fn parse_meta_shared(data: &[u8], shared: Option<SharedBytes>) -> Result<Meta> {
    if data.len() < 10 || &data[..10] != MAGIC {
        return Err(Error::BadMagic);
    }
    let mut r = Reader::new(data, 0, Endian::Little);
    r.bytes(10, "magic")?;
    let version = text(r.cstr("version")?);
    let v: u32 = match version.as_str() {
        "6" => 6,
        "7" => 7,
        _ => return Err(Error::UnsupportedVersion { version }),
    };
    let endian = match r.u8("endianness")? {
        0 => Endian::Little,
        1 => Endian::Big,
        x => {
            return Err(Error::Corrupt {
                offset: r.offset() - 1,
                what: format!("endianness flag {x} (want 0 or 1)"),
            })
        }
    };
    r.endian = endian;
    let long_size = r.u8("long size")? as usize;
    if long_size != 4 && long_size != 8 {
        return Err(Error::Corrupt {
            offset: r.offset() - 1,
            what: format!("long size {long_size} (want 4 or 8)"),
        });
    }
    let page_size = r.u32("page size")?;
    if !(256..=1 << 24).contains(&page_size) {
        return Err(Error::Corrupt {
            offset: r.offset() - 4,
            what: format!("page size {page_size} is implausible"),
        });
    }
    let mut p = MetaParser {
        data,
        shared,
        meta: Meta {
            version: v,
            endian,
            long_size,
            page_size,
            layout: if long_size == 8 {
                PageLayout::LP64
            } else {
                PageLayout::ILP32
            },
            compression: None,
            events: Vec::new(),
            by_id: Vec::new(),
            kallsyms: Kallsyms::default(),
            printk: PrintkFormats::default(),
            cmdlines: HashMap::new(),
            cpu_count: 0,
            buffers: Vec::new(),
            trace_clock: None,
            uname: None,
            cpu_stats: Vec::new(),
            ts_offset: 0,
            tsc2nsec: None,
        },
    };
    if v == 6 {
        p.parse_v6(&mut r)?;
    } else {
        p.parse_v7(&mut r)?;
    }
    for b in &p.meta.buffers {
        if b.page_size < 64 || b.page_size > 1 << 24 {
            return Err(Error::Corrupt {
                offset: 0,
                what: format!(
                    "buffer {:?} page size {} is implausible",
                    b.name, b.page_size
                ),
            });
        }
    }
    Ok(p.meta)
}

/// The bytes of a .dat file: a read-only map of the file, or owned memory.
#[derive(Debug)]
enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// An open trace-cmd .dat file.
#[derive(Debug)]
pub struct DatFile {
    bytes: std::sync::Arc<Bytes>,
    /// The parsed metadata.
    pub meta: Meta,
}

impl DatFile {
    /// Opens and parses a file (the file is memory-mapped, not read into memory).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only; a trace file being truncated by another
        // process while we read it is outside what this reader supports.
        // Populated at once: one pass over the page tables instead of a
        // fault every few pages while decoding (a tenth of the decode time).
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) };
        let bytes = match map {
            Ok(m) => Bytes::Map(m),
            Err(_) => {
                let mut v = Vec::new();
                (&file).read_to_end(&mut v).map_err(io)?;
                Bytes::Owned(v)
            }
        };
        Self::from_shared(std::sync::Arc::new(bytes))
    }

    /// Parses a file held in memory.
    pub fn from_bytes(data: Vec<u8>) -> Result<Self> {
        Self::from_shared(std::sync::Arc::new(Bytes::Owned(data)))
    }

    fn from_shared(bytes: std::sync::Arc<Bytes>) -> Result<Self> {
        let shared: SharedBytes = bytes.clone();
        let meta = parse_meta_shared((*bytes).as_ref(), Some(shared))?;
        Ok(DatFile { bytes, meta })
    }

    /// The raw file bytes.
    pub fn bytes(&self) -> &[u8] {
        (*self.bytes).as_ref()
    }
}
