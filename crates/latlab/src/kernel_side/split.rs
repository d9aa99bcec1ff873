//! `latlab run --split`: the run's own timer-driven wake-ups measured in the
//! kernel by latlab watch's BPF side and split at the timer interrupt into
//! interrupt latency and preemption latency (the MontaVista
//! paper's two parts, rtla timerlat's IRQ and thread latency).
//!
//! The BPF side is loaded with only the programs the histograms need and no
//! window output ([`Programs::TimerWakeups`], [`Settings::histograms_only`]),
//! before the measurement; the measurement threads are watched by thread id
//! once they exist and before their first period ([`Monitor::threads`]);
//! at the end their histograms are read into each thread's
//! [`LatencySplit`] and the overall one.

use std::time::Duration;

use anyhow::bail;

use latlab_measure::engine::Progress;
use latlab_measure::result::RunResult;
use latlab_rt::monitor::Monitor;
use latlab_watch::histograms::latency_split;
use latlab_watch::loader::{BpfSide, Programs, Settings};

/// Whether `latlab run` splits its latency at the timer interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SplitMode {
    /// When BPF is available; otherwise a one-line note says why not.
    Auto,
    /// Always; a run without BPF fails, naming what is missing.
    On,
    /// Never.
    Off,
}

/// The loaded BPF side and the measurement threads it watches.
pub struct Split {
    bpf: BpfSide,
    tids: Vec<i32>,
}

impl Split {
    /// Loads the BPF side as `mode` says: `Ok(None)` for `off`, and for
    /// `auto` when BPF is not available (a note on stderr says why and what
    /// fixes it); an error for `on` without BPF.
    pub fn start(mode: SplitMode) -> anyhow::Result<Option<Split>> {
        if mode == SplitMode::Off {
            return Ok(None);
        }
        match BpfSide::load_programs(&Settings::histograms_only(), Programs::TimerWakeups) {
            Ok(bpf) => Ok(Some(Split {
                bpf,
                tids: Vec::new(),
            })),
            Err(e) if mode == SplitMode::On => {
                bail!("--split on: the interrupt/preemption split needs BPF: {e}")
            }
            Err(e) => {
                eprintln!("{}", unavailable_note(&e.to_string()));
                Ok(None)
            }
        }
    }

    /// Watches the measurement threads `tids` (in the order of the run's
    /// threads).
    pub fn watch(&mut self, tids: &[i32]) -> Result<(), String> {
        for &tid in tids {
            self.bpf
                .watch(tid as u32)
                .map_err(|e| format!("--split: watching thread {tid}: {e}"))?;
        }
        self.tids = tids.to_vec();
        Ok(())
    }

    /// Reads the kernel's histograms into `result`: each thread's split and
    /// the overall one. Threads the kernel saw nothing of keep none.
    pub fn finish(self, result: &mut RunResult) {
        let rows = self.bpf.histogram_counts();
        for (thread, &tid) in result.threads.iter_mut().zip(&self.tids) {
            thread.split = latency_split(&rows, &[tid]);
        }
        result.overall.split = latency_split(&rows, &self.tids);
        if result
            .overall
            .split
            .as_ref()
            .is_some_and(|s| s.timer_wakeups == 0)
        {
            eprintln!(
                "latlab: note: --split: no wake-up of the measurement threads came from an \
                 hrtimer callback (timer {}), so there is nothing to split",
                result.settings.timer
            );
        }
    }
}

/// The note of `--split auto` when BPF is not available: why, and that
/// `--split off` silences it.
fn unavailable_note(why: &str) -> String {
    format!(
        "latlab: note: no interrupt/preemption split of the latency (--split auto): {why} \
         (--split off: no note)"
    )
}

/// A monitor that first hands the measurement threads to the split, then
/// does what `inner` does.
pub struct SplitMonitor<'a, M> {
    /// The monitor of the run (load, live view).
    pub inner: M,
    /// The split, if the run has one.
    pub split: Option<&'a mut Split>,
}

impl<M: Monitor<Progress>> Monitor<Progress> for SplitMonitor<'_, M> {
    fn threads(&mut self, tids: &[i32]) -> Result<(), String> {
        if let Some(split) = self.split.as_deref_mut() {
            split.watch(tids)?;
        }
        self.inner.threads(tids)
    }

    fn ready(&mut self) -> Result<Duration, String> {
        self.inner.ready()
    }

    fn progress(&mut self, progress: &Progress) -> Result<(), String> {
        self.inner.progress(progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_why_and_how_to_silence_it() {
        let note = unavailable_note("loading BPF programs needs root");
        assert!(note.starts_with("latlab: note: "), "{note}");
        assert!(note.contains("needs root") && note.contains("--split off"));
        assert_eq!(note.lines().count(), 1);
    }
}
