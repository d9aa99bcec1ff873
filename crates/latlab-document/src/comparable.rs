//! Which results compare: the latency distributions a result holds, each
//! with the quantity it measures. Two distributions compare when they
//! measure the same quantity, whatever kind of result holds them: a `latlab
//! run` and the thread latency `latlab watch` measured of a timer-driven
//! thread are both a timer wake-up latency, counted into the same buckets
//! (docs/watch.md), so they are set side by side; a run and a lockbench are
//! not. A new kind of result joins by saying here what it holds.
//!
//! ```
//! use latlab_document::Document;
//! let other = Document::parse(r#"{"schema": "acme.report", "x": 1}"#).unwrap();
//! assert!(other.distributions().is_empty());
//! assert_eq!(other.holds(), "a `acme.report` result, shown as its JSON");
//! ```

use latlab_load::LoadReport;
use latlab_measure::histogram::Histogram;
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;

use crate::Document;

/// What a latency distribution measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// A timer-driven thread's wake-up latency: the timer's expiry to the
    /// thread running (`latlab run`, cyclictest; `latlab watch`'s thread
    /// latency of a timer-driven thread).
    TimerWakeUp,
    /// Any other wake-up: `sched_waking` to running (`latlab watch` of a
    /// thread woken by something other than its own timer).
    WakeUp,
    /// An external event to the responder's answer, one way (`latlab
    /// respond`).
    Response,
}

impl Quantity {
    /// Its name in sentences and headings.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::TimerWakeUp => "timer wake-up latency",
            Quantity::WakeUp => "wake-up latency (sched_waking to running)",
            Quantity::Response => "response latency (one way)",
        }
    }
}

/// One latency distribution of a result.
#[derive(Debug, Clone, Copy)]
pub struct Distribution<'a> {
    /// What it measures.
    pub quantity: Quantity,
    /// Which part of the result it is: `None` the whole result, else the
    /// part (`thread cyclictest 4242` of a watch).
    pub part: Option<&'a str>,
    /// The part's thread id, for a watched thread (`part` names it).
    pub tid: Option<i32>,
    /// Its summary figures.
    pub summary: &'a Summary,
    /// Its histogram (latlab's buckets).
    pub histogram: &'a Histogram,
    /// The result's verdict, if the kind judges one.
    pub verdict: Option<Verdict>,
    /// Samples that should have been and were not (a run's missed
    /// periods, a response's lost events), if the kind counts them.
    pub missed: Option<u64>,
    /// The background load it ran under, if the kind records one.
    pub load: Option<&'a LoadReport>,
}

impl Document {
    /// The latency distributions this result holds that another result
    /// can be compared with; empty for the kinds that hold none
    /// ([`Document::holds`] says what they hold instead).
    pub fn distributions(&self) -> Vec<Distribution<'_>> {
        match self {
            Document::Run(run) => vec![Distribution {
                quantity: Quantity::TimerWakeUp,
                part: None,
                tid: None,
                summary: &run.overall.latency,
                histogram: &run.overall.histogram,
                verdict: Some(run.verdict),
                missed: Some(run.overall.missed_periods),
                load: run.load.as_ref(),
            }],
            Document::Respond(respond) => vec![Distribution {
                quantity: Quantity::Response,
                part: None,
                tid: None,
                summary: &respond.one_way.latency,
                histogram: &respond.one_way.histogram,
                verdict: Some(respond.verdict),
                missed: Some(respond.events_lost),
                load: respond.load.as_ref(),
            }],
            Document::Watch(watch) => watch
                .tasks
                .iter()
                .flat_map(|task| {
                    [
                        (Quantity::TimerWakeUp, &task.thread),
                        (Quantity::WakeUp, &task.wakeup),
                    ]
                    .into_iter()
                    .filter_map(move |(quantity, kind)| {
                        let kind = kind.as_ref().filter(|k| k.summary.count > 0)?;
                        Some(Distribution {
                            quantity,
                            part: Some(task.comm.as_str()),
                            tid: Some(task.tid),
                            summary: &kind.summary,
                            histogram: &kind.histogram,
                            verdict: None,
                            missed: None,
                            load: None,
                        })
                    })
                })
                .collect(),
            Document::Lockbench(_)
            | Document::Simulation(_)
            | Document::Explain(_)
            | Document::Load(_)
            | Document::Other { .. } => Vec::new(),
        }
    }

    /// What the result holds, in words, for saying why it was or was not
    /// compared: `timer wake-up latency`, `per-variant lock and wake-up
    /// figures, no latency histogram`, ...
    pub fn holds(&self) -> String {
        match self {
            Document::Lockbench(_) => {
                "per-variant lock and wake-up figures, no latency histogram".into()
            }
            Document::Simulation(_) => "the delayed-locking simulation's figures".into(),
            Document::Explain(_) => "an explanation of late wake-ups, no latency histogram".into(),
            Document::Load(_) => "a background load's throughput".into(),
            Document::Other { schema, .. } => {
                format!("a `{schema}` result, shown as its JSON")
            }
            _ => {
                let mut names: Vec<&str> = self
                    .distributions()
                    .iter()
                    .map(|d| d.quantity.name())
                    .collect();
                names.dedup();
                if names.is_empty() {
                    "no samples".into()
                } else {
                    names.join(" and ")
                }
            }
        }
    }
}
