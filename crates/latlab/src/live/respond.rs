//! `latlab respond`'s live view: events done, maxima so far and losses.

use latlab_measure::units::format_ns;
use latlab_respond::measure::Progress;

use super::status::{bar, count_and_eta, StatusLine};
use crate::lifecycle::LiveUpdate;

/// The live status of a response measurement: events done (with a bar and the
/// time left when the count is known), maxima so far and losses.
pub struct LiveView {
    line: StatusLine,
    count: Option<u64>,
}

impl LiveView {
    /// A view that draws when `enabled`, of `count` events (`None`: a duration).
    pub fn new(enabled: bool, count: Option<u64>) -> Self {
        LiveView {
            line: StatusLine::new(enabled),
            count,
        }
    }
}

impl LiveUpdate<Progress> for LiveView {
    fn update(&mut self, p: &Progress) {
        if !self.line.enabled() {
            return;
        }
        let done = p.answered + p.lost;
        let progress = match self.count {
            Some(count) => format!(
                "{} {}",
                bar(done as f64 / count.max(1) as f64),
                count_and_eta(done, count, "events", p.elapsed_s)
            ),
            None => format!("{done} events, {:.0} s", p.elapsed_s),
        };
        self.line.draw(&format!(
            "{progress}  one-way max {}  round-trip max {}  lost {}",
            format_ns(p.max_one_way_ns),
            format_ns(p.max_round_trip_ns),
            p.lost
        ));
    }

    fn finish(&mut self) {
        self.line.finish();
    }
}
