//! `--samples FILE`: every sample, 16 bytes each, written by a background
//! thread so the measurement loop does no I/O.
//!
//! Format (little-endian): a 16-byte header `b"LATLABS1"`, `u32` version (1),
//! `u32` record size (16); then one record per sample:
//! `u64 intended_ns` (CLOCK_MONOTONIC), `u32 latency_ns` (saturated at
//! `u32::MAX`, see flags), `u16 cpu`, `u16 flags` (bit 0: latency saturated,
//! bit 1: periods were missed before this sample, bit 2: an early wake-up,
//! which cannot happen: `latency_ns` is then how early it came, and the
//! sample is not part of the statistics; bit 3: the kernel did not tell
//! which expiry this wake-up answers (`itimer` only), `intended_ns` is the
//! earliest it can be). In Python:
//! `struct.iter_unpack("<QIHH", data[16:])`.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::MeasureError;

const MAGIC: &[u8; 8] = b"LATLABS1";
/// Bytes of the header: magic, version, record size.
const HEADER: u64 = 16;
/// Bytes of one record.
const RECORD: u64 = 16;
const CHUNK: usize = 4096;

/// One sample as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRecord {
    /// Intended wake-up, CLOCK_MONOTONIC ns.
    pub intended_ns: u64,
    /// Latency, ns (saturated at u32::MAX: about 4.29 s).
    pub latency_ns: u32,
    /// CPU of the thread.
    pub cpu: u16,
    /// [`SampleRecord::SATURATED`], [`SampleRecord::MISSED`],
    /// [`SampleRecord::EARLY`], [`SampleRecord::UNCERTAIN`].
    pub flags: u16,
}

impl SampleRecord {
    /// Flag: the latency did not fit in 32 bits and is saturated.
    pub const SATURATED: u16 = 1;
    /// Flag: periods were missed before this sample.
    pub const MISSED: u16 = 2;
    /// Flag: the wake-up came before its intended time (a bug or a clock
    /// problem); `latency_ns` is how early.
    pub const EARLY: u16 = 4;
    /// Flag: the kernel did not tell which expiry this wake-up answers
    /// (`itimer` only); `intended_ns` is the earliest it can be.
    pub const UNCERTAIN: u16 = 8;

    /// The flags a wake-up itself carries: [`SampleRecord::MISSED`] and
    /// [`SampleRecord::UNCERTAIN`].
    pub fn flags_of(wake: &crate::timer::Wake) -> u16 {
        (u16::from(wake.missed > 0) * Self::MISSED) | (u16::from(wake.uncertain) * Self::UNCERTAIN)
    }

    fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.intended_ns.to_le_bytes());
        b[8..12].copy_from_slice(&self.latency_ns.to_le_bytes());
        b[12..14].copy_from_slice(&self.cpu.to_le_bytes());
        b[14..].copy_from_slice(&self.flags.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Self {
        SampleRecord {
            intended_ns: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            latency_ns: u32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            cpu: u16::from_le_bytes(b[12..14].try_into().expect("2 bytes")),
            flags: u16::from_le_bytes(b[14..16].try_into().expect("2 bytes")),
        }
    }
}

/// The writer thread of a sample log.
pub struct SampleLog {
    path: PathBuf,
    sender: Option<mpsc::Sender<Vec<SampleRecord>>>,
    writer: Option<JoinHandle<Written>>,
}

/// What the writer thread got to disk: the records, and the error that
/// stopped it (a full disk), after which it only drains the measurement's
/// chunks so the measurement goes on.
type Written = (u64, Option<std::io::Error>);

/// The end of a sample log: records written and, if writing failed part way,
/// the error (the log then holds the records before it).
#[derive(Debug)]
pub struct SampleLogEnd {
    /// The file.
    pub path: PathBuf,
    /// Records written.
    pub written: u64,
    /// The error that stopped the writing, if one did.
    pub error: Option<MeasureError>,
}

impl SampleLog {
    /// Creates the file (header written at once) and starts the writer.
    pub fn create(path: &Path) -> Result<Self, MeasureError> {
        let err = |source| MeasureError::SampleLog {
            path: path.to_path_buf(),
            source,
        };
        let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).map_err(err)?);
        out.write_all(MAGIC).map_err(err)?;
        out.write_all(&1u32.to_le_bytes()).map_err(err)?;
        out.write_all(&16u32.to_le_bytes()).map_err(err)?;
        let (sender, receiver) = mpsc::channel::<Vec<SampleRecord>>();
        let writer = std::thread::Builder::new()
            .name("latlab-samples".into())
            .spawn(move || {
                let mut written = 0u64;
                let mut failed = None;
                for chunk in receiver {
                    if failed.is_some() {
                        continue; // drained, so the measurement never waits on us
                    }
                    match chunk.iter().try_for_each(|r| out.write_all(&r.to_bytes())) {
                        Ok(()) => written += chunk.len() as u64,
                        Err(e) => failed = Some(e),
                    }
                }
                if failed.is_none() {
                    match out.flush().and_then(|()| out.get_ref().sync_all()) {
                        Ok(()) => return (written, None),
                        Err(e) => failed = Some(e),
                    }
                }
                // What reached the file, cut to whole records so the log
                // stays readable (`read_samples`); what is still buffered is
                // dropped, not written after the cut.
                let (file, _unwritten) = out.into_parts();
                let len = file.metadata().map_or(0, |m| m.len());
                let records = len.saturating_sub(HEADER) / RECORD;
                let keep = if len < HEADER {
                    0
                } else {
                    HEADER + records * RECORD
                };
                if len != keep {
                    let _ = file.set_len(keep);
                }
                (records, failed)
            })
            .map_err(err)?;
        Ok(SampleLog {
            path: path.to_path_buf(),
            sender: Some(sender),
            writer: Some(writer),
        })
    }

    /// A buffer for one measurement thread.
    pub fn sink(&self) -> SampleSink {
        SampleSink {
            buffer: Vec::with_capacity(CHUNK),
            sender: self.sender.clone(),
        }
    }

    /// Waits for every sink to be dropped and the file to be on disk;
    /// returns the number of records written and the error that stopped the
    /// writing part way, if one did.
    pub fn finish(mut self) -> SampleLogEnd {
        self.sender.take();
        let handle = self.writer.take().expect("finish runs once");
        let (written, error) = handle.join().unwrap_or_else(|_| {
            (
                0,
                Some(std::io::Error::other("sample writer thread panicked")),
            )
        });
        SampleLogEnd {
            written,
            error: error.map(|source| MeasureError::SampleLog {
                path: self.path.clone(),
                source,
            }),
            path: self.path.clone(),
        }
    }
}

/// A measurement thread's end of the log: pushes are buffered and handed to
/// the writer 4096 at a time.
pub struct SampleSink {
    buffer: Vec<SampleRecord>,
    sender: Option<mpsc::Sender<Vec<SampleRecord>>>,
}

impl SampleSink {
    /// Adds one record.
    #[inline]
    pub fn push(&mut self, record: SampleRecord) {
        self.buffer.push(record);
        if self.buffer.len() == CHUNK {
            self.hand_off();
        }
    }

    fn hand_off(&mut self) {
        let full = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK));
        if let Some(sender) = &self.sender {
            // A failed send means the writer died; finish() reports its error.
            let _ = sender.send(full);
        }
    }
}

impl Drop for SampleSink {
    fn drop(&mut self) {
        if !self.buffer.is_empty() {
            self.hand_off();
        }
    }
}

/// Reads a sample log back.
pub fn read_samples(path: &Path) -> Result<Vec<SampleRecord>, MeasureError> {
    let err = |source| MeasureError::SampleLog {
        path: path.to_path_buf(),
        source,
    };
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut data))
        .map_err(err)?;
    if data.len() < 16 || &data[..8] != MAGIC {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a latlab sample log (bad magic at byte 0)",
        )));
    }
    if (data.len() - 16) % 16 != 0 {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "truncated record at byte {}",
                data.len() - (data.len() - 16) % 16
            ),
        )));
    }
    Ok(data[16..]
        .chunks_exact(16)
        .map(SampleRecord::from_bytes)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_ends_the_log_but_not_the_measurement() {
        // /dev/full fails every write with ENOSPC (the header sits in the
        // buffer until the first flush).
        let log = SampleLog::create(Path::new("/dev/full")).unwrap();
        let mut sink = log.sink();
        for i in 0..(4 << 20) / 16 {
            sink.push(SampleRecord {
                intended_ns: i,
                latency_ns: 1,
                cpu: 0,
                flags: 0,
            });
        }
        drop(sink);
        let end = log.finish();
        assert_eq!(end.written, 0);
        let error = end.error.expect("the disk was full").to_string();
        assert!(error.contains("/dev/full"), "{error}");
        assert!(error.contains("No space left"), "{error}");
    }

    #[test]
    fn records_round_trip_through_the_writer_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.bin");
        let log = SampleLog::create(&path).unwrap();
        let mut sinks = [log.sink(), log.sink()];
        for i in 0..10_000u64 {
            sinks[(i % 2) as usize].push(SampleRecord {
                intended_ns: i * 1000,
                latency_ns: i as u32,
                cpu: (i % 2) as u16,
                flags: 0,
            });
        }
        drop(sinks);
        let end = log.finish();
        assert!(end.error.is_none(), "{:?}", end.error);
        assert_eq!(end.written, 10_000);
        let mut back = read_samples(&path).unwrap();
        assert_eq!(back.len(), 10_000);
        back.sort_by_key(|r| r.intended_ns);
        assert!(back
            .iter()
            .enumerate()
            .all(|(i, r)| r.latency_ns == i as u32));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 16 + 16 * 10_000);
    }

    #[test]
    fn truncated_log_names_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.bin");
        let mut bytes = b"LATLABS1".to_vec();
        bytes.extend_from_slice(&[1, 0, 0, 0, 16, 0, 0, 0]);
        bytes.extend_from_slice(&[0u8; 20]);
        std::fs::write(&path, bytes).unwrap();
        let err = read_samples(&path).unwrap_err().to_string();
        assert!(err.contains("byte 32"), "{err}");
    }
}
