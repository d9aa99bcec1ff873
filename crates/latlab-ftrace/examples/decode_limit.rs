//! The floor under decoding a trace-cmd .dat file: what it costs to bring
//! its bytes in and, for a compressed file, to decompress them, with nothing
//! else done. `bench/dump-speed.sh` times this next to `latlab dump --stats`.
//!
//! ```text
//! cargo run --release -p latlab-ftrace --example decode_limit -- read FILE
//! cargo run --release -p latlab-ftrace --example decode_limit -- decompress FILE
//! cargo run --release -p latlab-ftrace --example decode_limit -- ruzstd FILE
//! cargo run --release -p latlab-ftrace --example decode_limit -- miniz FILE
//! ```
//!
//! `read` maps the file the way the decoder does and reads every byte of it
//! (a checksum, so nothing is optimized away); `decompress` also
//! decompresses every chunk of CPU data into one reused buffer, with the
//! same decoders the reader uses (libzstd, zlib-rs). `ruzstd` and `miniz`
//! decompress with the pure-Rust decoders they were chosen against (ruzstd
//! for zstd files, miniz_oxide for zlib files). All print the byte counts;
//! time them from outside (CPU time of the process).

use latlab_ftrace::dat::Decompressor;
use latlab_ftrace::DatFile;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = match args.as_slice() {
        [_, m, p] if ["read", "decompress", "ruzstd", "miniz"].contains(&m.as_str()) => {
            (m.as_str(), p)
        }
        _ => {
            eprintln!("usage: decode_limit read|decompress|ruzstd|miniz FILE.dat");
            std::process::exit(2);
        }
    };
    let file = DatFile::open(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    let bytes = file.bytes();
    // Every byte, as 64-bit words (a loop the compiler vectorizes).
    let words = bytes.chunks_exact(8);
    let tail = words
        .remainder()
        .iter()
        .fold(0u64, |a, &b| a << 8 | b as u64);
    let sum = words.fold(tail, |a, w| {
        a.wrapping_add(u64::from_le_bytes(w.try_into().expect("8 bytes")))
    });
    let mut raw = 0u64;
    let mut ruz = ruzstd::decoding::FrameDecoder::new();
    if mode != "read" {
        let meta = &file.meta;
        let mut d = Decompressor::default();
        let mut out = Vec::new();
        for b in &meta.buffers {
            for c in &b.cpus {
                if c.size == 0 {
                    continue;
                }
                if !c.compressed {
                    raw += c.size;
                    continue;
                }
                let Some(comp) = meta.compression else {
                    continue;
                };
                let data = &bytes[c.offset as usize..];
                let e = meta.endian;
                let chunks = e.uint(&data[..4]) as usize;
                let mut p = 4;
                for _ in 0..chunks {
                    let csize = e.uint(&data[p..p + 4]) as usize;
                    let usize_ = e.uint(&data[p + 4..p + 8]) as usize;
                    let chunk = &data[p + 8..p + 8 + csize];
                    let n = match mode {
                        "ruzstd" => {
                            out.resize(usize_, 0);
                            ruz.decode_all(chunk, &mut out).unwrap_or_else(|err| {
                                eprintln!("{path}: {err}");
                                std::process::exit(1);
                            })
                        }
                        "miniz" => {
                            out.resize(usize_, 0);
                            let mut st = miniz_oxide::inflate::stream::InflateState::new(
                                miniz_oxide::DataFormat::Zlib,
                            );
                            let r = miniz_oxide::inflate::stream::inflate(
                                &mut st,
                                chunk,
                                &mut out,
                                miniz_oxide::MZFlush::Finish,
                            );
                            r.bytes_written
                        }
                        _ => {
                            d.decompress_into(comp, chunk, usize_, 0, &mut out)
                                .unwrap_or_else(|err| {
                                    eprintln!("{path}: {err}");
                                    std::process::exit(1);
                                });
                            out.len()
                        }
                    };
                    raw += n as u64;
                    p += 8 + csize;
                }
            }
        }
    }
    println!(
        "file_bytes={} cpu_data_bytes={} checksum={sum:x}",
        bytes.len(),
        raw
    );
}
