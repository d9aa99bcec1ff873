//! Holding `/dev/cpu_dma_latency` at a target value during a measurement.
//!
//! The PM QoS request lasts as long as the file stays open; dropping the
//! guard closes it and the kernel drops the request. Nothing to restore by
//! hand, even after a crash.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use crate::RtError;

const DEVICE: &str = "/dev/cpu_dma_latency";

/// An open PM QoS request; released on drop.
#[derive(Debug)]
pub struct DmaLatencyGuard {
    _file: File,
    /// The latency held, in µs.
    pub microseconds: i32,
}

impl DmaLatencyGuard {
    /// Asks the kernel to keep CPU wake-up latency at or below `microseconds`.
    pub fn hold(microseconds: i32) -> Result<Self, RtError> {
        let io = |source| RtError::Io {
            path: PathBuf::from(DEVICE),
            source,
        };
        let mut file = File::options().write(true).open(DEVICE).map_err(io)?;
        file.write_all(&microseconds.to_ne_bytes()).map_err(io)?;
        Ok(DmaLatencyGuard {
            _file: file,
            microseconds,
        })
    }
}
