//! The floor under decoding a trace-cmd .dat file: what it costs to bring
//! its bytes in and, for a compressed file, to decompress them, with nothing
//! else done. `bench/dump-speed.sh` times this next to `latlab dump --stats`.
//!
//! ```text
//! cargo run --release -p latlab-ftrace --example decode_limit -- read FILE
//! cargo run --release -p latlab-ftrace --example decode_limit -- decompress FILE
//! ```
//!
//! `read` maps the file the way the decoder does and reads every byte of it
//! (a checksum, so nothing is optimized away); `decompress` also
//! decompresses every chunk of CPU data into one reused buffer, with the
//! same decoders the reader uses (libzstd, zlib-rs). Both print the byte
//! counts; time them from outside (CPU time of the process).

use latlab_ftrace::dat::Decompressor;
use latlab_ftrace::DatFile;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = match args.as_slice() {
        [_, m, p] if m == "read" || m == "decompress" => (m.as_str(), p),
        _ => {
            eprintln!("usage: decode_limit read|decompress FILE.dat");
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
    if mode == "decompress" {
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
                    d.decompress_into(comp, &data[p + 8..p + 8 + csize], usize_, 0, &mut out)
                        .unwrap_or_else(|err| {
                            eprintln!("{path}: {err}");
                            std::process::exit(1);
                        });
                    raw += out.len() as u64;
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
