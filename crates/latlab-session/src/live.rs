//! The one-line live status that long-running commands (`run`, `respond`,
//! `load`) redraw on stderr while they measure, and erase when they are
//! done; the text is latlab-report's ([`latlab_report::text::live`]).

use latlab_report::text::live::{respond_progress, run_progress};

use crate::monitor::LiveUpdate;

/// A status line on stderr, redrawn in place. Disabled (draws nothing) for
/// `--quiet` or when stderr is not a terminal.
#[derive(Debug)]
pub struct StatusLine {
    enabled: bool,
    drawn: bool,
}

impl StatusLine {
    /// A status line that draws only when `enabled`.
    pub fn new(enabled: bool) -> Self {
        StatusLine {
            enabled,
            drawn: false,
        }
    }

    /// True when [`StatusLine::draw`] shows anything (callers can skip formatting).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Replaces the line with `text`.
    pub fn draw(&mut self, text: &str) {
        if self.enabled {
            eprint!("\r\x1b[K{text}");
            self.drawn = true;
        }
    }

    /// Erases the line, so that the results print on a clean line.
    pub fn finish(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[K");
            self.drawn = false;
        }
    }
}

/// `latlab run`'s live view: a progress bar, the time elapsed and left, the
/// maximum so far per CPU.
pub struct RunLiveView {
    line: StatusLine,
    total_s: Option<f64>,
    loops: Option<u64>,
}

impl RunLiveView {
    /// A view that draws when `enabled`, for the measurement `config` describes.
    pub fn new(enabled: bool, config: &latlab_measure::engine::MeasureConfig) -> Self {
        RunLiveView {
            line: StatusLine::new(enabled),
            total_s: config.duration_ns.map(|d| d as f64 / 1e9),
            loops: config.loops,
        }
    }
}

impl LiveUpdate<latlab_measure::engine::Progress> for RunLiveView {
    fn update(&mut self, progress: &latlab_measure::engine::Progress) {
        if self.line.enabled() {
            self.line
                .draw(&run_progress(progress, self.total_s, self.loops));
        }
    }

    fn finish(&mut self) {
        self.line.finish();
    }
}

/// `latlab respond`'s live view: events done (with a bar and the time left
/// when the count is known), maxima so far and losses.
pub struct RespondLiveView {
    line: StatusLine,
    count: Option<u64>,
}

impl RespondLiveView {
    /// A view that draws when `enabled`, of `count` events (`None`: a duration).
    pub fn new(enabled: bool, count: Option<u64>) -> Self {
        RespondLiveView {
            line: StatusLine::new(enabled),
            count,
        }
    }
}

impl LiveUpdate<latlab_respond::measure::Progress> for RespondLiveView {
    fn update(&mut self, progress: &latlab_respond::measure::Progress) {
        if self.line.enabled() {
            self.line.draw(&respond_progress(progress, self.count));
        }
    }

    fn finish(&mut self) {
        self.line.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_line_draws_nothing_and_needs_no_erasing() {
        let mut line = StatusLine::new(false);
        line.draw("x");
        assert!(!line.drawn);
        let mut line = StatusLine::new(true);
        line.draw("x");
        assert!(line.drawn);
        line.finish();
        assert!(!line.drawn);
    }
}
