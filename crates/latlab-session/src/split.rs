//! `latlab run --split`: starting the split of the latency at the timer
//! interrupt (`auto`, `on`; `off` starts none), what to say when it cannot,
//! and the monitor that hands the measurement threads to latlab-watch's
//! [`RunSplit`].

use std::time::Duration;

use anyhow::bail;

use latlab_measure::engine::Progress;
use latlab_measure::result::RunResult;
use latlab_rt::monitor::Monitor;
use latlab_watch::run_split::RunSplit;

/// The split of a run (`--split auto`, or `on` when `required`): `Ok(None)`
/// for `auto` when BPF is not available (a note on stderr says why and what
/// fixes it); an error for `on` without BPF.
pub fn start(required: bool) -> anyhow::Result<Option<RunSplit>> {
    match RunSplit::start() {
        Ok(split) => Ok(Some(split)),
        Err(e) if required => {
            bail!("--split on: the interrupt/preemption split needs BPF: {e}")
        }
        Err(e) => {
            eprintln!("{}", unavailable_note(&e.to_string()));
            Ok(None)
        }
    }
}

/// Reads the split into `result`, with a note when there was nothing to split.
pub fn finish(split: RunSplit, result: &mut RunResult) {
    if !split.finish(result) {
        eprintln!(
            "latlab: note: --split: no wake-up of the measurement threads came from an \
             hrtimer callback (timer {}), so there is nothing to split",
            result.settings.timer
        );
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
    pub split: Option<&'a mut RunSplit>,
}

impl<M: Monitor<Progress>> Monitor<Progress> for SplitMonitor<'_, M> {
    fn threads(&mut self, tids: &[i32]) -> Result<(), String> {
        if let Some(split) = self.split.as_deref_mut() {
            split.watch(tids).map_err(|e| format!("--split: {e}"))?;
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
