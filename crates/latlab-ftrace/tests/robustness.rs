//! Truncated and corrupted files give errors (naming a byte offset where the
//! problem is positional), never a panic; hand-built files cover the file-level
//! corner cases (zlib-compressed v7, big-endian, 32-bit) no recorder here makes.

use std::io::Read;
use std::path::PathBuf;

use latlab_ftrace::page::PageBuilder;
use latlab_ftrace::render::Renderer;
use latlab_ftrace::{DatFile, Endian, Error};

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let raw = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if name.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Decodes and renders every event; returns the count or the first error.
fn decode_all(data: Vec<u8>) -> Result<usize, Error> {
    let f = DatFile::from_bytes(data)?;
    let mut r = Renderer::new(&f.meta);
    let mut ev = f.events();
    let mut n = 0;
    let mut line = Vec::new();
    while let Some(e) = ev.next_event() {
        let e = e?;
        line.clear();
        r.line(&e, &mut line);
        n += 1;
    }
    Ok(n)
}

fn assert_positional(e: &Error) {
    let msg = e.to_string();
    if let Error::Cpu { .. } = e {
        assert!(msg.starts_with("in the data of CPU "), "{msg}");
    }
    let msg = e.root().to_string();
    let ok = match e.root() {
        Error::Truncated { .. } | Error::Corrupt { .. } | Error::Decompress { .. } => {
            msg.contains("byte offset")
        }
        Error::Format { msg: m, .. } => m.contains("byte offset") || msg.contains("header_page"),
        Error::BadMagic
        | Error::UnsupportedVersion { .. }
        | Error::UnsupportedCompression { .. } => true,
        _ => false,
    };
    assert!(ok, "error without a position: {msg}");
}

/// A tiny deterministic generator (no dependency, reproducible failures).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// The recorded fixtures (2 MB of event formats each: kept to a few dozen
/// mutations so the debug-build test stays fast; the fuzz targets go further).
#[test]
fn truncated_and_flipped_fixtures_are_errors_not_panics() {
    for name in ["v6.dat.gz", "v7-zstd.dat"] {
        let data = fixture(name);
        let full = decode_all(data.clone()).unwrap();
        assert!(full > 1000);
        let mut rng = Lcg(7);
        let mut cuts: Vec<usize> = (0..12).map(|_| rng.next() as usize % data.len()).collect();
        cuts.extend([0, 9, 11, 30, data.len() - 1]);
        for cut in cuts {
            match decode_all(data[..cut].to_vec()) {
                Ok(n) => assert!(n <= full, "{name} cut at {cut}: {n} events > {full}"),
                Err(e) => assert_positional(&e),
            }
        }
        for i in 0..12 {
            let mut d = data.clone();
            let at = if i % 2 == 0 {
                rng.next() as usize % 4096
            } else {
                d.len() - 1 - rng.next() as usize % 60_000
            };
            d[at] ^= 1 << (rng.next() % 8);
            if let Err(e) = decode_all(d) {
                assert_positional(&e);
            }
        }
    }
}

/// Hand-built files are small, so every truncation point and many flips are cheap.
#[test]
fn every_truncation_and_many_flips_of_hand_built_files() {
    let mut files = Vec::new();
    for e in [Endian::Little, Endian::Big] {
        for long32 in [false, true] {
            let evs: Vec<(u32, Vec<u8>)> = (0..40)
                .map(|i| (i * 10, waking_record(e, 42, i as i32)))
                .collect();
            let p0 = page(e, long32, 5_000, &evs);
            let p1 = page(e, long32, 9_000, &evs[..7]);
            files.push(build_v6(e, long32, &[p0, p1]));
        }
    }
    let e = Endian::Little;
    let evs: Vec<(u32, Vec<u8>)> = (0..40)
        .map(|i| (i, waking_record(e, 42, i as i32)))
        .collect();
    files.push(build_v7_zlib(&[
        page(e, false, 1, &evs),
        page(e, false, 2, &evs),
    ]));
    let mut rng = Lcg(99);
    for f in &files {
        let full = decode_all(f.clone()).unwrap();
        assert!(full >= 47);
        for cut in 0..f.len() {
            if cut > 2048 && cut % 97 != 0 {
                continue;
            }
            match decode_all(f[..cut].to_vec()) {
                Ok(n) => assert!(n <= full),
                Err(e) => assert_positional(&e),
            }
        }
        for _ in 0..400 {
            let mut d = f.clone();
            let at = rng.next() as usize % d.len();
            d[at] ^= 1 << (rng.next() % 8);
            if let Err(e) = decode_all(d) {
                assert_positional(&e);
            }
        }
    }
}

// ---- a hand-built file writer for the corner cases -------------------------------

const HEADER_PAGE_64: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
const HEADER_PAGE_32: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n";
const WAKING: &str = "name: sched_waking\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\nprint fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n";

struct W {
    e: Endian,
    b: Vec<u8>,
}
impl W {
    fn u16(&mut self, v: u16) {
        self.b.extend(if self.e == Endian::Little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn u32(&mut self, v: u32) {
        self.b.extend(if self.e == Endian::Little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn u64(&mut self, v: u64) {
        self.b.extend(if self.e == Endian::Little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn s(&mut self, s: &str) {
        self.b.extend_from_slice(s.as_bytes());
        self.b.push(0);
    }
}

fn waking_record(e: Endian, pid: i32, target: i32) -> Vec<u8> {
    let mut w = W { e, b: Vec::new() };
    w.u16(7);
    w.b.extend([0, 0]);
    w.u32(pid as u32);
    let mut comm = [0u8; 16];
    comm[..5].copy_from_slice(b"rtapp");
    w.b.extend(comm);
    w.u32(pid as u32);
    w.u32(120);
    w.u32(target as u32);
    w.b
}

fn page(e: Endian, long32: bool, ts: u64, evs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let layout = if long32 {
        latlab_ftrace::format::PageLayout::ILP32
    } else {
        latlab_ftrace::format::PageLayout::LP64
    };
    let mut b = PageBuilder::new(e, layout, 4096, ts);
    for (d, p) in evs {
        b.event(*d, p, false);
    }
    b.build()
}

fn header_info(w: &mut W, long32: bool) {
    w.b.extend_from_slice(b"header_page\0");
    let hp = if long32 {
        HEADER_PAGE_32
    } else {
        HEADER_PAGE_64
    };
    w.u64(hp.len() as u64);
    w.b.extend_from_slice(hp.as_bytes());
    w.b.extend_from_slice(b"header_event\0");
    w.u64(0);
}

/// A version 6 file with one event format and one CPU page.
fn build_v6(e: Endian, long32: bool, pages: &[Vec<u8>]) -> Vec<u8> {
    let mut w = W { e, b: Vec::new() };
    w.b.extend_from_slice(b"\x17\x08\x44tracing6\0");
    w.b.push(if e == Endian::Little { 0 } else { 1 });
    w.b.push(if long32 { 4 } else { 8 });
    w.u32(4096);
    header_info(&mut w, long32);
    w.u32(0); // ftrace events
    w.u32(1); // systems
    w.s("sched");
    w.u32(1);
    w.u64(WAKING.len() as u64);
    w.b.extend_from_slice(WAKING.as_bytes());
    w.u32(0); // kallsyms
    w.u32(0); // printk
    let cmd = "42 rtapp\n";
    w.u64(cmd.len() as u64);
    w.b.extend_from_slice(cmd.as_bytes());
    w.u32(pages.len() as u32); // one CPU per page
    w.b.extend_from_slice(b"flyrecord\0");
    let table = w.b.len();
    w.b.resize(table + 16 * pages.len(), 0);
    for (cpu, p) in pages.iter().enumerate() {
        let off = w.b.len().div_ceil(4096) * 4096;
        w.b.resize(off, 0);
        w.b.extend_from_slice(p);
        let mut t = W { e, b: Vec::new() };
        t.u64(off as u64);
        t.u64(p.len() as u64);
        w.b[table + 16 * cpu..table + 16 * cpu + 16].copy_from_slice(&t.b);
    }
    w.b
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

/// A version 7 file, zlib-compressed sections and CPU data.
fn build_v7_zlib(pages: &[Vec<u8>]) -> Vec<u8> {
    let e = Endian::Little;
    let mut w = W { e, b: Vec::new() };
    w.b.extend_from_slice(b"\x17\x08\x44tracing7\0");
    w.b.push(0);
    w.b.push(8);
    w.u32(4096);
    w.s("zlib");
    w.s("1.2.13");
    let first_opt = w.b.len();
    w.u64(0);
    // sections: header info (16), event formats (18), cmdlines (21)
    let sec = |w: &mut W, id: u16, body: Vec<u8>| -> u64 {
        let at = w.b.len() as u64;
        let z = zlib(&body);
        w.u16(id);
        w.u16(1);
        w.u32(0);
        w.u64(8 + z.len() as u64);
        w.u32(z.len() as u32);
        w.u32(body.len() as u32);
        w.b.extend_from_slice(&z);
        at
    };
    let mut hi = W { e, b: Vec::new() };
    header_info(&mut hi, false);
    let hi_at = sec(&mut w, 16, hi.b);
    let mut ef = W { e, b: Vec::new() };
    ef.u32(1);
    ef.s("sched");
    ef.u32(1);
    ef.u64(WAKING.len() as u64);
    ef.b.extend_from_slice(WAKING.as_bytes());
    let ef_at = sec(&mut w, 18, ef.b);
    let mut cl = W { e, b: Vec::new() };
    cl.u64(9);
    cl.b.extend_from_slice(b"42 rtapp\n");
    let cl_at = sec(&mut w, 21, cl.b);
    // flyrecord section header + per-CPU chunked data
    let fly_at = w.b.len() as u64;
    w.u16(3);
    w.u16(1);
    w.u32(0);
    w.u64(0);
    let mut cpus = Vec::new();
    for p in pages {
        let off = w.b.len().div_ceil(4096) * 4096;
        w.b.resize(off, 0);
        let z = zlib(p);
        w.u32(1);
        w.u32(z.len() as u32);
        w.u32(p.len() as u32);
        w.b.extend_from_slice(&z);
        cpus.push((off as u64, 8 + z.len() as u64));
    }
    // options section
    let opt_at = w.b.len() as u64;
    let mut o = W { e, b: Vec::new() };
    for (id, at) in [(16u16, hi_at), (18, ef_at), (21, cl_at)] {
        o.u16(id);
        o.u32(8);
        o.u64(at);
    }
    let mut buf = W { e, b: Vec::new() };
    buf.u64(fly_at);
    buf.s("");
    buf.s("mono");
    buf.u32(4096);
    buf.u32(cpus.len() as u32);
    for (i, (off, size)) in cpus.iter().enumerate() {
        buf.u32(i as u32);
        buf.u64(*off);
        buf.u64(*size);
    }
    o.u16(3);
    o.u32(buf.b.len() as u32);
    o.b.extend_from_slice(&buf.b);
    o.u16(0);
    o.u32(8);
    o.u64(0);
    w.u16(0);
    w.u16(0);
    w.u32(0);
    w.u64(o.b.len() as u64);
    w.b.extend_from_slice(&o.b);
    w.b[first_opt..first_opt + 8].copy_from_slice(&opt_at.to_le_bytes());
    w.b
}

fn lines(data: Vec<u8>) -> Vec<String> {
    let f = DatFile::from_bytes(data).unwrap();
    let mut r = Renderer::new(&f.meta);
    let mut ev = f.events();
    let mut out = Vec::new();
    while let Some(e) = ev.next_event() {
        let e = e.unwrap();
        assert_eq!(e.name(), "sched_waking");
        assert_eq!(e.str("comm").as_deref(), Some("rtapp"));
        let mut l = Vec::new();
        r.line(&e, &mut l);
        out.push(String::from_utf8(l).unwrap());
    }
    out
}

#[test]
fn hand_built_files_big_endian_32_bit_and_zlib() {
    let expect = vec![
        "           rtapp-42    [000]     1.000001: sched_waking:         comm=rtapp pid=42 prio=120 target_cpu=003\n".to_string(),
        "           rtapp-42    [001]     1.000002: sched_waking:         comm=rtapp pid=42 prio=120 target_cpu=001\n".to_string(),
        "           rtapp-42    [000]     1.000005: sched_waking:         comm=rtapp pid=42 prio=120 target_cpu=002\n".to_string(),
    ];
    for e in [Endian::Little, Endian::Big] {
        for long32 in [false, true] {
            let p0 = page(
                e,
                long32,
                1_000_000_000,
                &[
                    (1000, waking_record(e, 42, 3)),
                    (4000, waking_record(e, 42, 2)),
                ],
            );
            let p1 = page(e, long32, 1_000_002_000, &[(0, waking_record(e, 42, 1))]);
            assert_eq!(
                lines(build_v6(e, long32, &[p0, p1])),
                expect,
                "{e:?} long32={long32}"
            );
        }
    }
    let e = Endian::Little;
    let p0 = page(
        e,
        false,
        1_000_000_000,
        &[
            (1000, waking_record(e, 42, 3)),
            (4000, waking_record(e, 42, 2)),
        ],
    );
    let p1 = page(e, false, 1_000_002_000, &[(0, waking_record(e, 42, 1))]);
    let file = build_v7_zlib(&[p0, p1]);
    let f = DatFile::from_bytes(file.clone()).unwrap();
    assert_eq!(
        f.meta.compression,
        Some(latlab_ftrace::dat::Compression::Zlib)
    );
    assert_eq!(f.meta.clock(), Some("mono"));
    assert_eq!(lines(file), expect);
}

#[test]
fn lost_events_are_reported_on_the_next_event() {
    let e = Endian::Little;
    let p0 = page(e, false, 1_000_000_000, &[(1000, waking_record(e, 42, 3))]);
    let layout = latlab_ftrace::format::PageLayout::LP64;
    let mut b = PageBuilder::new(e, layout, 4096, 2_000_000_000);
    b.event(0, &waking_record(e, 42, 1), false).missed(Some(17));
    let p1 = b.build();
    let f = DatFile::from_bytes(build_v6(e, false, &[[p0, p1].concat()])).unwrap();
    let mut ev = f.events();
    let first = ev.next_event().unwrap().unwrap();
    assert_eq!(first.missed, latlab_ftrace::page::Missed::None);
    let second = ev.next_event().unwrap().unwrap();
    assert_eq!(second.missed, latlab_ftrace::page::Missed::Count(17));
    assert_eq!(second.ts, 2_000_000_000);
    assert!(ev.next_event().is_none());
    assert_eq!(ev.lost().counted, 17);
    // The owned iterator yields the same events.
    let owned: Vec<_> = f.events().into_owned().collect::<Result<_, _>>().unwrap();
    assert_eq!(owned.len(), 2);
    assert_eq!(owned[1].view(&f.meta).i64("target_cpu"), Some(1));
    assert_eq!(owned[1].missed, latlab_ftrace::page::Missed::Count(17));
}
