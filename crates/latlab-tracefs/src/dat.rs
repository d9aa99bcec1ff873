//! Writing trace-cmd `.dat` files, version 6 (flyrecord).
//!
//! Layout (all numbers in the file's endianness, here the host's):
//! magic `17 08 44` `tracing` `6\0`, endian byte, long size, page size (u32);
//! `header_page\0` + u64 size + text; `header_event\0` + u64 size + text;
//! ftrace formats: u32 count, each u64 size + text; event formats: u32 system
//! count, each system name `\0`, u32 event count, each u64 size + text;
//! kallsyms: u32 size + text; printk formats: u32 size + text; saved
//! cmdlines: u64 size + text; u32 CPU count; `options  \0` then options
//! (u16 id, u32 size, data) ended by a u16 0; `flyrecord\0`; per CPU u64
//! offset and u64 size; u64 size + the clock in brackets (`[mono]`), which
//! trace-cmd reads there when a TRACECLOCK option is present; padding; the
//! raw ring-buffer pages of each CPU, starting at page-aligned offsets.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, TracefsError};

/// Option id: per-CPU statistics text (`CPU: n` + the `stats` file).
pub const OPTION_CPUSTAT: u16 = 2;
/// Option id: contents of `trace_clock` (the current clock in brackets).
pub const OPTION_TRACECLOCK: u16 = 4;
/// Option id: `uname -a` style text.
pub const OPTION_UNAME: u16 = 5;
/// Option id: the CPU count (u32).
pub const OPTION_CPUCOUNT: u16 = 8;
/// Option id: version of the writing program.
pub const OPTION_VERSION: u16 = 9;

/// Everything in a `.dat` file before the CPU data.
#[derive(Debug, Clone, Default)]
pub struct DatHeader {
    /// Ring-buffer page (sub-buffer) size in bytes.
    pub page_size: u32,
    /// Contents of `events/header_page`.
    pub header_page: Vec<u8>,
    /// Contents of `events/header_event`.
    pub header_event: Vec<u8>,
    /// `events/ftrace/*/format` files.
    pub ftrace_formats: Vec<Vec<u8>>,
    /// Per system, the `format` files of its recorded events.
    pub event_formats: Vec<(String, Vec<Vec<u8>>)>,
    /// `/proc/kallsyms` (may be empty).
    pub kallsyms: Vec<u8>,
    /// `printk_formats` (may be empty).
    pub printk_formats: Vec<u8>,
    /// `pid comm` lines.
    pub cmdlines: Vec<u8>,
    /// Options (id, data), written in this order.
    pub options: Vec<(u16, Vec<u8>)>,
    /// The trace clock (`mono`); written after the CPU table when not empty.
    pub trace_clock: String,
}

/// The ring-buffer pages of one CPU, stored in a file.
#[derive(Debug, Clone)]
pub struct CpuData {
    /// The file holding whole pages; `None` for a CPU without data.
    pub path: Option<PathBuf>,
}

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_ne_bytes());
}
fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_ne_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_ne_bytes());
}

fn len32(what: &str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| TracefsError::Io {
        op: "encode",
        path: PathBuf::from(what),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "section over 4 GiB"),
    })
}

/// Encodes the header part (everything up to and including `flyrecord\0`).
pub fn encode_header(h: &DatHeader, cpus: u32) -> Result<Vec<u8>> {
    let mut b = Vec::with_capacity(64 * 1024 + h.kallsyms.len());
    b.extend_from_slice(&[0x17, 0x08, 0x44]);
    b.extend_from_slice(b"tracing");
    b.extend_from_slice(b"6\0");
    b.push(if cfg!(target_endian = "big") { 1 } else { 0 });
    b.push(std::mem::size_of::<libc::c_long>() as u8);
    put_u32(&mut b, h.page_size);

    b.extend_from_slice(b"header_page\0");
    put_u64(&mut b, h.header_page.len() as u64);
    b.extend_from_slice(&h.header_page);
    b.extend_from_slice(b"header_event\0");
    put_u64(&mut b, h.header_event.len() as u64);
    b.extend_from_slice(&h.header_event);

    put_u32(&mut b, len32("ftrace formats", h.ftrace_formats.len())?);
    for f in &h.ftrace_formats {
        put_u64(&mut b, f.len() as u64);
        b.extend_from_slice(f);
    }
    put_u32(&mut b, len32("event systems", h.event_formats.len())?);
    for (system, formats) in &h.event_formats {
        b.extend_from_slice(system.as_bytes());
        b.push(0);
        put_u32(&mut b, len32("events", formats.len())?);
        for f in formats {
            put_u64(&mut b, f.len() as u64);
            b.extend_from_slice(f);
        }
    }
    put_u32(&mut b, len32("kallsyms", h.kallsyms.len())?);
    b.extend_from_slice(&h.kallsyms);
    put_u32(&mut b, len32("printk formats", h.printk_formats.len())?);
    b.extend_from_slice(&h.printk_formats);
    put_u64(&mut b, h.cmdlines.len() as u64);
    b.extend_from_slice(&h.cmdlines);

    put_u32(&mut b, cpus);
    if !h.options.is_empty() {
        b.extend_from_slice(b"options  \0");
        for (id, data) in &h.options {
            put_u16(&mut b, *id);
            put_u32(&mut b, len32("option", data.len())?);
            b.extend_from_slice(data);
        }
        put_u16(&mut b, 0);
    }
    b.extend_from_slice(b"flyrecord\0");
    Ok(b)
}

/// Writes a `.dat` file: the header, then each CPU's pages at page-aligned
/// offsets. Writes to `<out>.partial` and renames, so `out` is never left
/// half-written. Returns the file size.
pub fn write_dat(out: &Path, h: &DatHeader, cpus: &[CpuData]) -> Result<u64> {
    let page = u64::from(h.page_size.max(1));
    let header = encode_header(h, len32("cpus", cpus.len())?)?;
    let mut sizes = Vec::with_capacity(cpus.len());
    for c in cpus {
        let size = match &c.path {
            Some(p) => std::fs::metadata(p)
                .map_err(|e| TracefsError::io("stat", p, e))?
                .len(),
            None => 0,
        };
        sizes.push(size);
    }
    let mut clock = Vec::new();
    if !h.trace_clock.is_empty() {
        let text = format!("[{}]", h.trace_clock);
        put_u64(&mut clock, text.len() as u64);
        clock.extend_from_slice(text.as_bytes());
    }
    let table_end = header.len() as u64 + 16 * cpus.len() as u64 + clock.len() as u64;
    let mut offset = table_end.div_ceil(page) * page;
    let mut table = Vec::with_capacity(16 * cpus.len() + clock.len());
    for &size in &sizes {
        put_u64(&mut table, offset);
        put_u64(&mut table, size);
        offset += size.div_ceil(page) * page;
    }
    table.extend_from_slice(&clock);
    let partial = {
        let mut s = out.as_os_str().to_owned();
        s.push(".partial");
        PathBuf::from(s)
    };
    let written = write_partial(&partial, &header, &table, table_end, page, cpus, &sizes);
    if written.is_err() {
        // A full disk: nothing half-written stays behind.
        let _ = std::fs::remove_file(&partial);
    }
    let end = written?;
    std::fs::rename(&partial, out).map_err(|e| TracefsError::io("rename", &partial, e))?;
    Ok(end)
}

/// The body of [`write_dat`]: the whole file at `partial`; returns its size.
fn write_partial(
    partial: &Path,
    header: &[u8],
    table: &[u8],
    table_end: u64,
    page: u64,
    cpus: &[CpuData],
    sizes: &[u64],
) -> Result<u64> {
    let werr = |e| TracefsError::io("write", partial, e);
    let mut f = File::create(partial).map_err(|e| TracefsError::io("create", partial, e))?;
    f.write_all(header).map_err(werr)?;
    f.write_all(table).map_err(werr)?;
    let mut pos = table_end;
    for (c, &size) in cpus.iter().zip(sizes) {
        let Some(path) = &c.path else { continue };
        if size == 0 {
            continue;
        }
        let aligned = pos.div_ceil(page) * page;
        f.seek(SeekFrom::Start(aligned)).map_err(werr)?;
        let mut src = File::open(path).map_err(|e| TracefsError::io("open", path, e))?;
        let copied = std::io::copy(&mut src, &mut f).map_err(werr)?;
        pos = aligned + copied;
    }
    // Extend to the last page boundary so every CPU block ends page-aligned.
    let end = pos.div_ceil(page) * page;
    f.set_len(end.max(table_end)).map_err(werr)?;
    f.sync_all().map_err(werr)?;
    Ok(end.max(table_end))
}

/// What the page headers of one CPU's data say.
#[derive(
    Debug,
    Default,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct PageScan {
    /// Pages in the data.
    pub pages: u64,
    /// Pages without any event.
    pub empty_pages: u64,
    /// Pages whose header carries the "events were lost before this page" flag.
    pub missed_flag_pages: u64,
    /// Sum of the lost-event counts the kernel stored in pages (when it had room).
    pub missed_stored: u64,
}

const RB_MISSED_EVENTS: u64 = 1 << 31;
const RB_MISSED_STORED: u64 = 1 << 30;

/// Reads only the page headers (timestamp, commit) of a file of ring-buffer
/// pages to count pages and lost-event flags. `long_size` is the kernel's
/// (the commit field's) size, 4 or 8.
pub fn scan_pages(path: &Path, page_size: usize, long_size: usize) -> Result<PageScan> {
    use std::os::unix::fs::FileExt;
    let f = File::open(path).map_err(|e| TracefsError::io("open", path, e))?;
    let len = f
        .metadata()
        .map_err(|e| TracefsError::io("stat", path, e))?
        .len();
    let mut scan = PageScan::default();
    let mut hdr = [0u8; 16];
    let hdr_len = 8 + long_size;
    let mut off = 0u64;
    while off + page_size as u64 <= len {
        f.read_exact_at(&mut hdr[..hdr_len], off)
            .map_err(|e| TracefsError::io("read", path, e))?;
        let commit = if long_size == 8 {
            u64::from_ne_bytes(hdr[8..16].try_into().expect("8 bytes"))
        } else {
            u64::from(u32::from_ne_bytes(hdr[8..12].try_into().expect("4 bytes")))
        };
        let data_len = commit & !(RB_MISSED_EVENTS | RB_MISSED_STORED) & 0xffff_ffff;
        scan.pages += 1;
        if data_len == 0 {
            scan.empty_pages += 1;
        }
        if commit & RB_MISSED_EVENTS != 0 {
            scan.missed_flag_pages += 1;
            let at = off + hdr_len as u64 + data_len;
            if commit & RB_MISSED_STORED != 0 && at + long_size as u64 <= off + page_size as u64 {
                let mut n = [0u8; 8];
                f.read_exact_at(&mut n[..long_size], at)
                    .map_err(|e| TracefsError::io("read", path, e))?;
                scan.missed_stored += if long_size == 8 {
                    u64::from_ne_bytes(n)
                } else {
                    u64::from(u32::from_ne_bytes(n[..4].try_into().expect("4 bytes")))
                };
            }
        }
        off += page_size as u64;
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let h = DatHeader {
            page_size: 4096,
            header_page: b"hp".to_vec(),
            header_event: b"he".to_vec(),
            ftrace_formats: vec![b"f1".to_vec()],
            event_formats: vec![("sched".into(), vec![b"e1".to_vec(), b"e22".to_vec()])],
            kallsyms: vec![],
            printk_formats: vec![],
            cmdlines: b"1 init\n".to_vec(),
            options: vec![(OPTION_CPUCOUNT, 2u32.to_ne_bytes().to_vec())],
            trace_clock: String::new(),
        };
        let b = encode_header(&h, 2).unwrap();
        assert_eq!(&b[..10], b"\x17\x08\x44tracing");
        assert_eq!(&b[10..12], b"6\0");
        assert_eq!(u32::from_ne_bytes(b[14..18].try_into().unwrap()), 4096);
        assert_eq!(&b[18..30], b"header_page\0");
        assert_eq!(u64::from_ne_bytes(b[30..38].try_into().unwrap()), 2);
        assert!(b.ends_with(b"\x00\x00flyrecord\0"));
        let sys = b.windows(6).position(|w| w == b"sched\0").unwrap();
        assert_eq!(
            u32::from_ne_bytes(b[sys + 6..sys + 10].try_into().unwrap()),
            2
        );
    }

    #[test]
    fn cpu_data_is_page_aligned_and_page_flags_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let cpu0 = dir.path().join("cpu0");
        let mut page = vec![0u8; 4096];
        page[8..16].copy_from_slice(&(24u64 | RB_MISSED_EVENTS | RB_MISSED_STORED).to_ne_bytes());
        page[16 + 24..16 + 32].copy_from_slice(&7u64.to_ne_bytes());
        let mut data = page.clone();
        data.extend_from_slice(&[0u8; 4096]);
        std::fs::write(&cpu0, &data).unwrap();
        let scan = scan_pages(&cpu0, 4096, 8).unwrap();
        assert_eq!(
            scan,
            PageScan {
                pages: 2,
                empty_pages: 1,
                missed_flag_pages: 1,
                missed_stored: 7
            }
        );
        let out = dir.path().join("t.dat");
        let h = DatHeader {
            page_size: 4096,
            trace_clock: "mono".into(),
            ..Default::default()
        };
        let size = write_dat(
            &out,
            &h,
            &[CpuData { path: Some(cpu0) }, CpuData { path: None }],
        )
        .unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len() as u64, size);
        let table = bytes.windows(10).position(|w| w == b"flyrecord\0").unwrap() + 10;
        let off0 = u64::from_ne_bytes(bytes[table..table + 8].try_into().unwrap());
        let size0 = u64::from_ne_bytes(bytes[table + 8..table + 16].try_into().unwrap());
        assert_eq!(off0 % 4096, 0);
        assert_eq!(size0, 8192);
        assert_eq!(&bytes[off0 as usize..off0 as usize + 8192], &data[..]);
        let size1 = u64::from_ne_bytes(bytes[table + 24..table + 32].try_into().unwrap());
        assert_eq!(size1, 0);
        assert_eq!(&bytes[table + 32..table + 40], &6u64.to_ne_bytes());
        assert_eq!(&bytes[table + 40..table + 46], b"[mono]");
    }
}
