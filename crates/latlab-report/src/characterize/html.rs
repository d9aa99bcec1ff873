//! The characterization as the opening of the HTML report: the classes met
//! or missed (the table the terminal shows), then the answer, the causes
//! and the pitfalls in words.

use latlab_measure::units::format_ns;

use super::model::{Characterization, FULL_LOAD};
use super::text::{percent, CAUSES_LISTED};
use crate::html::{Cell, Opening};
use crate::montavista::PAPER;

impl Characterization {
    /// What the report opens with: the requirement classes met or missed
    /// (the table the terminal shows), then the answer, the causes and the
    /// pitfalls in words.
    pub fn opening(&self) -> Opening {
        let [idle, loaded] = &self.runs;
        let mut rows: Vec<Vec<Cell>> = self
            .classes
            .iter()
            .map(|class| {
                vec![
                    Cell::Text(class.title().to_string()),
                    Cell::Met(class.idle.met),
                    Cell::Met(class.loaded.met),
                    Cell::Text(class.loaded.line.clone()),
                ]
            })
            .collect();
        rows.push(vec![
            Cell::Text(format!(
                "at or below 10 us (MontaVista 2002: {} idle, {} loaded)",
                percent(PAPER[0].0),
                percent(PAPER[1].0)
            )),
            Cell::Text(percent(idle.share_10us)),
            Cell::Text(percent(loaded.share_10us)),
            Cell::Text(String::new()),
        ]);
        rows.push(vec![
            Cell::Text(format!(
                "worst case (MontaVista 2002: {} idle, {} loaded)",
                format_ns(PAPER[0].1),
                format_ns(PAPER[1].1)
            )),
            Cell::Text(format_ns(idle.max)),
            Cell::Text(format_ns(loaded.max)),
            Cell::Text(format!("on CPU{}", loaded.max_cpu)),
        ]);
        Opening {
            heading: Some("Does this machine meet a deadline?".into()),
            columns: vec![
                "requirement class".into(),
                "idle".into(),
                "loaded".into(),
                "the loaded run".into(),
            ],
            rows,
            paragraphs: self.paragraphs(),
        }
    }

    /// The report's paragraphs under the table: the answer, what was
    /// measured, how to check a class for longer, the causes and the
    /// pitfalls, each in full.
    pub fn paragraphs(&self) -> Vec<String> {
        let mut p = vec![
            self.answer(),
            format!("Machine: {}. Measured: {}.", self.machine, self.setup),
            format!(
                "These runs show the worst case seen, not the worst possible: check a class over \
                 a longer run with `latlab run --load {FULL_LOAD} --duration 1h --profile \
                 <class>` ({}).",
                self.classes
                    .iter()
                    .map(|c| c.profile)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ];
        if let Some(e) = &self.explained {
            if e.late == 0 {
                p.push(format!(
                    "Nothing stands in the way: no wake-up of the loaded run reached {}.",
                    format_ns(e.threshold_ns)
                ));
            } else {
                p.push(format!(
                    "What stands in the way: {} of {} periods of the loaded run woke {} or more \
                     late. The kernel trace names these causes first (the loaded run's \
                     explanation below has them all):",
                    e.late,
                    e.periods,
                    format_ns(e.threshold_ns)
                ));
                for (i, cause) in e.causes.iter().take(CAUSES_LISTED).enumerate() {
                    p.push(format!(
                        "{}. {}: {:.0} % of the late latency, in {} late windows. Fix: {}",
                        i + 1,
                        cause.description,
                        cause.share * 100.0,
                        cause.late_windows,
                        cause.recommendation
                    ));
                }
            }
        }
        for pitfall in &self.pitfalls {
            p.push(format!("Pitfall: {}.", pitfall.text()));
        }
        p
    }
}
