//! `latlab run`'s live view: a progress bar, the time elapsed and left, the
//! maximum so far per CPU.

use latlab_measure::engine::{MeasureConfig, Progress};
use latlab_measure::units::format_ns;

use super::status::{bar, count_and_eta, StatusLine};
use crate::lifecycle::LiveUpdate;

/// The progress line on a terminal: bar, elapsed/remaining, max per CPU.
pub struct LiveView {
    line: StatusLine,
    total_s: Option<f64>,
    loops: Option<u64>,
}

impl LiveView {
    /// A view that draws when `enabled`, for the measurement `config` describes.
    pub fn new(enabled: bool, config: &MeasureConfig) -> Self {
        LiveView {
            line: StatusLine::new(enabled),
            total_s: config.duration_ns.map(|d| d as f64 / 1e9),
            loops: config.loops,
        }
    }
}

impl LiveUpdate<Progress> for LiveView {
    fn update(&mut self, progress: &Progress) {
        if !self.line.enabled() {
            return;
        }
        let done = progress.threads.iter().map(|t| t.1).min().unwrap_or(0);
        let (fraction, time) = match (self.total_s, self.loops) {
            (Some(total), _) => (
                progress.elapsed_s / total,
                format!(
                    "{:.0}/{:.0} s, {:.0} s left",
                    progress.elapsed_s,
                    total,
                    (total - progress.elapsed_s).max(0.0)
                ),
            ),
            (None, Some(loops)) => (
                done as f64 / loops as f64,
                count_and_eta(done, loops, "loops", progress.elapsed_s),
            ),
            _ => (0.0, format!("{:.0} s", progress.elapsed_s)),
        };
        let maxima: Vec<String> = progress
            .threads
            .iter()
            .take(8)
            .map(|&(cpu, _, max)| format!("CPU{cpu} max {}", format_ns(max)))
            .collect();
        let more = if progress.threads.len() > 8 {
            " ..."
        } else {
            ""
        };
        self.line.draw(&format!(
            "{} {time}  {}{more}",
            bar(fraction),
            maxima.join("  ")
        ));
    }

    fn finish(&mut self) {
        self.line.finish();
    }
}
