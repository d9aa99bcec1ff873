//! A latency measurement's own timer-driven wake-ups (`latlab run --split`),
//! measured in the kernel by the BPF side and split at the timer interrupt
//! into interrupt latency and preemption latency (the MontaVista paper's
//! two parts, rtla timerlat's IRQ and thread latency).
//!
//! The BPF side is loaded with only the programs the histograms need and no
//! window output ([`Programs::TimerWakeups`], [`Settings::histograms_only`]),
//! before the measurement; the measurement threads are watched by thread id
//! once they exist and before their first period ([`RunSplit::watch`]); at
//! the end their histograms are read into each thread's split and the
//! overall one ([`RunSplit::finish`]).

use latlab_measure::result::RunResult;

use crate::histograms::latency_split;
use crate::loader::{BpfSide, Programs, Settings};

/// The loaded BPF side and the measurement threads it watches.
pub struct RunSplit {
    bpf: BpfSide,
    tids: Vec<i32>,
}

impl RunSplit {
    /// Loads the BPF side (an error says why BPF is not available).
    pub fn start() -> crate::Result<RunSplit> {
        let bpf = BpfSide::load_programs(&Settings::histograms_only(), Programs::TimerWakeups)?;
        Ok(RunSplit {
            bpf,
            tids: Vec::new(),
        })
    }

    /// Watches the measurement threads `tids` (in the order of the run's
    /// threads); the error names the thread that could not be watched.
    pub fn watch(&mut self, tids: &[i32]) -> Result<(), String> {
        for &tid in tids {
            self.bpf
                .watch(tid as u32)
                .map_err(|e| format!("watching thread {tid}: {e}"))?;
        }
        self.tids = tids.to_vec();
        Ok(())
    }

    /// Reads the kernel's histograms into `result`: each thread's split and
    /// the overall one. Threads the kernel saw nothing of keep none. False
    /// when no wake-up of the threads came from an hrtimer callback (the
    /// timer kind has none): there was nothing to split.
    pub fn finish(self, result: &mut RunResult) -> bool {
        let rows = self.bpf.histogram_counts();
        for (thread, &tid) in result.threads.iter_mut().zip(&self.tids) {
            thread.split = latency_split(&rows, &[tid]);
        }
        result.overall.split = latency_split(&rows, &self.tids);
        result
            .overall
            .split
            .as_ref()
            .is_none_or(|s| s.timer_wakeups != 0)
    }
}
