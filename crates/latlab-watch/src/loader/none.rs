//! The BPF side of a 32-bit build: none (aya does not build there, and BPF
//! programs would read a 32-bit kernel's pointers wrongly). Loading it
//! fails with [`WatchError::NotBuilt`], which names `--tracefs`.

use super::{Counters, Programs, Settings};
use crate::error::{Result, WatchError};

/// The BPF side of a 32-bit build: none. Loading it fails with
/// [`WatchError::NotBuilt`], which names `--tracefs`.
pub struct BpfSide {
    never: std::convert::Infallible,
    /// Optional programs this kernel has no tracepoint for (none).
    pub skipped: Vec<String>,
    /// Why path memory is read with `bpf_probe_read_kernel()` (never set).
    pub probe_reads: Option<String>,
}

impl BpfSide {
    /// Fails: no BPF loader in this build.
    pub fn load(_settings: &Settings) -> Result<BpfSide> {
        Err(WatchError::NotBuilt)
    }
    /// Fails: no BPF loader in this build.
    pub fn load_programs(_settings: &Settings, _programs: Programs) -> Result<BpfSide> {
        Err(WatchError::NotBuilt)
    }
    /// Never called (no value exists).
    pub fn watch(&mut self, _tid: u32) -> Result<()> {
        match self.never {}
    }
    /// Never called.
    pub fn unwatch(&mut self, _tid: u32) {
        match self.never {}
    }
    /// Never called.
    pub fn resync_bits(&mut self, _watched: &[u32]) {
        match self.never {}
    }
    /// Never called.
    pub fn watched(&self) -> Vec<u32> {
        match self.never {}
    }
    /// Never called.
    pub fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)> {
        match self.never {}
    }
    /// Never called.
    pub fn take_histograms(&mut self, _tids: &[u32]) -> Vec<(u32, u32, u32, u64)> {
        match self.never {}
    }
    /// Never called.
    pub fn take_rows(&mut self, _rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)> {
        match self.never {}
    }
    /// Never called.
    pub fn counters(&self) -> Counters {
        match self.never {}
    }
    /// Never called.
    pub fn wait(&mut self, _timeout: std::time::Duration) {
        match self.never {}
    }
    /// Never called.
    pub fn next_window(&mut self) -> Option<Result<crate::records::RawWindow>> {
        match self.never {}
    }
    /// Never called.
    pub fn kernel_time(&self) -> (std::time::Duration, u64) {
        match self.never {}
    }
    /// Never called.
    pub fn timer_program_note(&self) -> Option<String> {
        match self.never {}
    }
    /// Never called.
    pub fn set_attached(&mut self, _on: bool, _only: &[String]) -> Result<()> {
        match self.never {}
    }
}
