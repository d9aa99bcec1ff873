//! The one-line live status that long-running commands (`run`, `respond`)
//! redraw on stderr while they measure, and erase when they are done.

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

/// A 20-character progress bar for `fraction` (clamped to 0..=1): `[#####...............]`.
pub fn bar(fraction: f64) -> String {
    const WIDTH: usize = 20;
    let filled = ((fraction.clamp(0.0, 1.0)) * WIDTH as f64) as usize;
    format!("[{}{}]", "#".repeat(filled), ".".repeat(WIDTH - filled))
}

/// `done/total UNIT, N s left` for a count-based run, the time left
/// extrapolated from the rate so far (`elapsed_s` for `done`).
pub fn count_and_eta(done: u64, total: u64, unit: &str, elapsed_s: f64) -> String {
    if done == 0 || elapsed_s <= 0.0 {
        return format!("{done}/{total} {unit}");
    }
    let left_s = (total.saturating_sub(done)) as f64 * elapsed_s / done as f64;
    format!("{done}/{total} {unit}, {left_s:.0} s left")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_with_the_fraction_and_clamps() {
        assert_eq!(bar(0.0), format!("[{}]", ".".repeat(20)));
        assert_eq!(bar(0.5), format!("[{}{}]", "#".repeat(10), ".".repeat(10)));
        assert_eq!(bar(2.0), format!("[{}]", "#".repeat(20)));
        assert_eq!(bar(-1.0), bar(0.0));
    }

    #[test]
    fn eta_extrapolates_the_rate_so_far() {
        assert_eq!(count_and_eta(0, 1_000, "loops", 0.0), "0/1000 loops");
        assert_eq!(
            count_and_eta(250, 1_000, "events", 10.0),
            "250/1000 events, 30 s left"
        );
        assert_eq!(
            count_and_eta(1_000, 1_000, "loops", 40.0),
            "1000/1000 loops, 0 s left"
        );
    }

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
