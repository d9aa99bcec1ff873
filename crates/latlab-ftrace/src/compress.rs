//! Decompression of trace-cmd v7 blocks (zstd or zlib), shared by the
//! metadata parser ([`crate::dat`]), the event stream ([`crate::stream`]) and
//! the lazily decompressed kallsyms section ([`crate::symbols`]).

use crate::error::{Error, Result};

/// Compression of a v7 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Zstandard frames.
    Zstd,
    /// zlib streams.
    Zlib,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::Zstd => "zstd",
            Compression::Zlib => "zlib",
        }
    }

    /// Decompresses one block of `size` bytes (the expected uncompressed size).
    pub fn decompress(self, data: &[u8], size: usize, offset: u64) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Decompressor::default().decompress_into(self, data, size, offset, &mut out)?;
        Ok(out)
    }
}

/// Decompression state kept between blocks (a zstd context, a zlib
/// stream), so that decoding a file's many chunks allocates nothing per chunk.
#[derive(Default)]
pub struct Decompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    zlib: Option<flate2::Decompress>,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor").finish_non_exhaustive()
    }
}

impl Decompressor {
    /// Decompresses one block of `size` bytes (the expected uncompressed
    /// size) into `out`, replacing its content.
    pub fn decompress_into(
        &mut self,
        comp: Compression,
        data: &[u8],
        size: usize,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if size > 1 << 31 {
            return Err(Error::Corrupt {
                offset,
                what: format!("uncompressed size {size} is implausible"),
            });
        }
        out.clear();
        out.reserve(size);
        let err = |msg: String| Error::Decompress {
            offset,
            algo: comp.name(),
            msg,
        };
        match comp {
            Compression::Zstd => {
                if self.zstd.is_none() {
                    self.zstd =
                        Some(zstd::bulk::Decompressor::new().map_err(|e| err(e.to_string()))?);
                }
                let d = self.zstd.as_mut().expect("set above");
                // One byte more than announced: a block that decodes to more
                // than its header says is reported, not cut. The Vec's spare
                // capacity is written directly (no zero-filling).
                out.reserve(size + 1);
                if let Err(e) = d.decompress_to_buffer(data, out) {
                    out.clear();
                    return Err(err(e.to_string()));
                }
            }
            Compression::Zlib => {
                let d = self
                    .zlib
                    .get_or_insert_with(|| flate2::Decompress::new(true));
                d.reset(true);
                out.reserve(size + 1);
                let res = d.decompress_vec(data, out, flate2::FlushDecompress::Finish);
                match res {
                    Ok(flate2::Status::StreamEnd) => {}
                    Ok(_) if out.len() > size => {}
                    Ok(_) => return Err(err("stream ends early (truncated data)".into())),
                    Err(e) => return Err(err(e.to_string())),
                }
            }
        }
        if out.len() != size {
            return Err(Error::Decompress {
                offset,
                algo: comp.name(),
                msg: format!("got {} bytes, header says {size}", out.len()),
            });
        }
        Ok(())
    }
}
