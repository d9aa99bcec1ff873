//! Which results compare: the latency distributions a result holds, each
//! with the quantity it measures. Two distributions compare when they
//! measure the same quantity, whatever kind of result holds them and
//! whichever tool measured it: a `latlab run`, the thread latency `latlab
//! watch` measured of a timer-driven thread and a cyclictest file are all a
//! timer wake-up latency, so they are set side by side; a run and a
//! lockbench are not, nor a run and oslat's busy-loop latency. A new kind
//! of result joins by saying here what it holds.
//!
//! A peer tool's file ([`Document::Peer`]) holds one distribution per
//! measurement, its columns pooled, with what the file does not say kept
//! unknown ([`Figure`]) rather than made 0.
//!
//! ```
//! use latlab_document::Document;
//! let other = Document::parse(r#"{"schema": "acme.report", "x": 1}"#).unwrap();
//! assert!(other.distributions().is_empty());
//! assert_eq!(other.holds(), "a `acme.report` result, shown as its JSON");
//! ```

use std::borrow::Cow;

use latlab_load::LoadReport;
use latlab_measure::histogram::Histogram;
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;
use latlab_peers::{Column, Measurement, PeerDocument, Rounding};

use crate::Document;

/// What a latency distribution measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// A timer-driven thread's wake-up latency: the timer's expiry to the
    /// thread running (`latlab run`, cyclictest, cyclicdeadline; `latlab
    /// watch`'s thread latency of a timer-driven thread).
    TimerWakeUp,
    /// Any other wake-up: `sched_waking` to running (`latlab watch` of a
    /// thread woken by something other than its own timer).
    WakeUp,
    /// An external event to the responder's answer, one way (`latlab
    /// respond`).
    Response,
    /// The timer's expiry to its interrupt handler (rtla timerlat's IRQ
    /// latency).
    TimerIrq,
    /// The timer's expiry to a kernel thread running (rtla timerlat's
    /// thread latency).
    TimerThread,
    /// The timer's expiry to a user-space thread returning from the kernel
    /// (rtla timerlat's user latency, `-u`).
    TimerUser,
    /// The gaps a busy loop sees between two reads of the clock (oslat).
    BusyLoop,
    /// The duration of each interruption of a busy thread (rtla osnoise).
    OsNoise,
    /// A signal from sender to receiver (signaltest).
    Signal,
    /// A sender's message, semaphore or signal to the receiver running
    /// (pmqtest, ptsematest, sigwaittest, svsematest).
    Ipc,
}

impl Quantity {
    /// Its name in sentences and headings.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::TimerWakeUp => "timer wake-up latency",
            Quantity::WakeUp => "wake-up latency (sched_waking to running)",
            Quantity::Response => "response latency (one way)",
            Quantity::TimerIrq => "timer IRQ latency (expiry to the interrupt handler)",
            Quantity::TimerThread => "timer thread latency (expiry to a kernel thread running)",
            Quantity::TimerUser => "timer user-space latency (expiry to the return to user space)",
            Quantity::BusyLoop => "busy-loop latency",
            Quantity::OsNoise => "OS noise",
            Quantity::Signal => "signal latency",
            Quantity::Ipc => "IPC latency",
        }
    }

    /// The quantity of a peer file's measurement; `None` for another
    /// rt-tests tool's figures, whose meaning latlab does not know (two
    /// such tools' figures are not the same quantity).
    pub fn of_peer(quantity: latlab_peers::Quantity) -> Option<Quantity> {
        use latlab_peers::Quantity as Peer;
        Some(match quantity {
            Peer::WakeUpLatency => Quantity::TimerWakeUp,
            Peer::TimerIrqLatency => Quantity::TimerIrq,
            Peer::TimerThreadLatency => Quantity::TimerThread,
            Peer::TimerUserLatency => Quantity::TimerUser,
            Peer::BusyLoopLatency => Quantity::BusyLoop,
            Peer::OsNoise => Quantity::OsNoise,
            Peer::SignalLatency => Quantity::Signal,
            Peer::IpcLatency => Quantity::Ipc,
            Peer::Other => return None,
        })
    }
}

/// One figure of a distribution (a percentile, the max), ns, as far as it
/// is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// The value.
    Known(u64),
    /// Among the samples past a peer histogram's last bucket: at least
    /// this (the first value past the histogram, as the tool labels it), or
    /// `None` when the file does not say where the histogram ends.
    Overflow(Option<u64>),
    /// Not in the file, and not to be derived from it.
    Unknown,
}

impl Figure {
    /// The value, if known.
    pub fn known(self) -> Option<u64> {
        match self {
            Figure::Known(v) => Some(v),
            _ => None,
        }
    }

    /// A figure of a peer file's `column` (`value`: the file's, `None`
    /// where it has none): past the histogram when the histogram has
    /// overflows (a percentile among them), else unknown.
    pub fn of_peer(value: Option<u64>, column: &Column, measurement: &Measurement) -> Figure {
        if let Some(ns) = value {
            return Figure::Known(ns);
        }
        match (&column.histogram, column.overflows) {
            (Some(_), Some(n)) if n > 0 => {
                Figure::Overflow(
                    column
                        .overflow_from_ns
                        .map(|from| match measurement.rounding {
                            Rounding::Down => from,
                            Rounding::Up => from.saturating_add(measurement.bucket_ns.unwrap_or(0)),
                        }),
                )
            }
            _ => Figure::Unknown,
        }
    }
}

/// The figures of a distribution the comparison sets side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// Samples, if known.
    pub count: Option<u64>,
    /// Median.
    pub p50: Figure,
    /// 99th percentile.
    pub p99: Figure,
    /// 99.9th percentile.
    pub p99_9: Figure,
    /// Largest sample.
    pub max: Figure,
}

impl From<&Summary> for Figures {
    fn from(s: &Summary) -> Figures {
        Figures {
            count: Some(s.count),
            p50: Figure::Known(s.p50),
            p99: Figure::Known(s.p99),
            p99_9: Figure::Known(s.p99_9),
            max: Figure::Known(s.max),
        }
    }
}

/// One latency distribution of a result.
#[derive(Debug, Clone)]
pub struct Distribution<'a> {
    /// What it measures.
    pub quantity: Quantity,
    /// Which part of the result it is: `None` the whole result, else the
    /// part (`thread cyclictest 4242` of a watch).
    pub part: Option<&'a str>,
    /// The part's thread id, for a watched thread (`part` names it).
    pub tid: Option<i32>,
    /// Its summary figures.
    pub figures: Figures,
    /// Its histogram for a histogram plot (latlab's buckets; a peer's
    /// overflows left out, their values are not known); `None` when the
    /// result has none (a peer file without a histogram).
    pub histogram: Option<Cow<'a, Histogram>>,
    /// Its histogram for a plot of the tail (a peer's overflows at its
    /// max, so the plot is an upper bound).
    pub tail: Option<Cow<'a, Histogram>>,
    /// The result's verdict, if the kind judges one.
    pub verdict: Option<Verdict>,
    /// Samples that should have been and were not (a run's missed
    /// periods, a response's lost events), if the kind counts them.
    pub missed: Option<u64>,
    /// The background load it ran under, if the kind records one.
    pub load: Option<&'a LoadReport>,
    /// The peer tool's file it was read from (`None`: latlab measured
    /// it). Such a file does not say what the missed periods and the
    /// background load were: they are unknown, not none.
    pub peer: Option<&'a PeerDocument>,
}

impl<'a> Distribution<'a> {
    /// The distribution of one of latlab's own summaries and histograms.
    fn latlab(
        quantity: Quantity,
        summary: &'a Summary,
        histogram: &'a Histogram,
    ) -> Distribution<'a> {
        Distribution {
            histogram: Some(Cow::Borrowed(histogram)),
            tail: Some(Cow::Borrowed(histogram)),
            ..Distribution::latlab_figures(quantity, summary)
        }
    }

    /// The distribution of one of latlab's own summaries, its histograms
    /// still to be set.
    fn latlab_figures(quantity: Quantity, summary: &'a Summary) -> Distribution<'a> {
        Distribution {
            quantity,
            part: None,
            tid: None,
            figures: summary.into(),
            histogram: None,
            tail: None,
            verdict: None,
            missed: None,
            load: None,
            peer: None,
        }
    }

    /// A peer file's measurement, its columns pooled; `None` for figures
    /// of no quantity latlab knows.
    fn of_peer(doc: &'a PeerDocument, m: &Measurement) -> Option<Distribution<'a>> {
        let quantity = Quantity::of_peer(m.quantity)?;
        let pooled = m.pooled();
        let l = &pooled.latency;
        let figure = |value| Figure::of_peer(value, &pooled, m);
        let plotted = |overflows_at_max| {
            pooled
                .plot_histogram(m.bucket_ns.unwrap_or(1000), m.rounding, overflows_at_max)
                .map(Cow::Owned)
        };
        Some(Distribution {
            quantity,
            part: None,
            tid: None,
            figures: Figures {
                count: l.count,
                p50: figure(l.p50),
                p99: figure(l.p99),
                p99_9: figure(l.p99_9),
                max: figure(l.max),
            },
            histogram: plotted(false),
            tail: plotted(true),
            verdict: None,
            missed: None,
            load: None,
            peer: Some(doc),
        })
    }
}

impl Document {
    /// The latency distributions this result holds that another result
    /// can be compared with; empty for the kinds that hold none
    /// ([`Document::holds`] says what they hold instead).
    pub fn distributions(&self) -> Vec<Distribution<'_>> {
        match self {
            Document::Run(run) => vec![Distribution {
                verdict: Some(run.verdict),
                missed: Some(run.overall.missed_periods),
                load: run.load.as_ref(),
                ..Distribution::latlab(
                    Quantity::TimerWakeUp,
                    &run.overall.latency,
                    &run.overall.histogram,
                )
            }],
            Document::Respond(respond) => vec![Distribution {
                verdict: Some(respond.verdict),
                missed: Some(respond.events_lost),
                load: respond.load.as_ref(),
                ..Distribution::latlab(
                    Quantity::Response,
                    &respond.one_way.latency,
                    &respond.one_way.histogram,
                )
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
                        // A watch keeps only the buckets in use; the plots
                        // take the full histogram of the same buckets.
                        let histogram = kind.histogram.to_histogram();
                        Some(Distribution {
                            part: Some(task.comm.as_str()),
                            tid: Some(task.tid),
                            histogram: Some(Cow::Owned(histogram.clone())),
                            tail: Some(Cow::Owned(histogram)),
                            ..Distribution::latlab_figures(quantity, &kind.summary)
                        })
                    })
                })
                .collect(),
            Document::Peer(peer) => peer
                .measurements
                .iter()
                .filter_map(|m| Distribution::of_peer(peer, m))
                .collect(),
            Document::Lockbench(_)
            | Document::Simulation(_)
            | Document::Explain(_)
            | Document::Load(_)
            | Document::Tune(_)
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
            Document::Peer(peer) if self.distributions().is_empty() => format!(
                "{}'s figures, of no quantity latlab knows (shown as the file has them)",
                peer.source.tool
            ),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cyclictest `-h` text: thread 0 with samples at 1 and 2 µs and one
    /// overflow past the 3 µs histogram (its max 9 µs).
    const CYCLICTEST: &str = "# Histogram\n000000 000000\n000001 000003\n000002 000001\n\
        # Total: 000000004\n# Min Latencies: 00001\n# Avg Latencies: 00002\n\
        # Max Latencies: 00009\n# Histogram Overflows: 00001\n\
        # Histogram Overflow at cycle number:\n# Thread 0: 4\n";

    #[test]
    fn a_peer_file_holds_its_measurements_with_what_it_does_not_say_unknown() {
        let doc = Document::read(CYCLICTEST.as_bytes()).unwrap();
        let all = doc.distributions();
        assert_eq!(all.len(), 1);
        let d = &all[0];
        assert_eq!(d.quantity, Quantity::TimerWakeUp, "a run's quantity");
        assert!(d.peer.is_some());
        assert_eq!((d.missed, d.load.is_none()), (None, true));
        assert_eq!(d.figures.count, Some(5));
        assert_eq!(d.figures.p50, Figure::Known(1000));
        assert_eq!(d.figures.max, Figure::Known(9000));
        // p99 of 5 samples is the overflow: at least the histogram's end.
        assert_eq!(d.figures.p99, Figure::Overflow(Some(3000)));
        // The histogram plot leaves the overflow out, the tail has it at the max.
        assert_eq!(d.histogram.as_ref().unwrap().count(), 4);
        let tail = d.tail.as_ref().unwrap();
        assert_eq!((tail.count(), tail.max()), (5, Some(9000)));
        assert_eq!(doc.holds(), "timer wake-up latency");
    }

    #[test]
    fn figures_of_a_tool_latlab_does_not_know_are_not_a_quantity() {
        let other =
            br#"{"file_version": 1, "cmdline:": "queuelat -t 5", "rt_test_version:": "2.40",
            "thread": {"0": {"cpu": 1, "min": 1, "avg": 2.0, "max": 3, "cycles": 10}}}"#;
        let doc = Document::read(other).unwrap();
        assert!(doc.distributions().is_empty(), "{doc:?}");
        assert!(
            doc.holds().starts_with("queuelat's figures"),
            "{}",
            doc.holds()
        );
    }
}
