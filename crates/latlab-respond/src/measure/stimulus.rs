//! The stimulus: the calling thread, pinned (to another CPU than the
//! responder's when there is one) one priority below the responder. It keeps
//! its own clock, as an external event does, timestamps right before each
//! send and right after the answer arrives (or takes the GPIO edge's kernel
//! timestamp), and records both latencies.

use latlab_measure::series::SecondSeries;
use latlab_measure::stats::Stats;
use latlab_measure::worst::{WorstSample, WorstSamples};
use latlab_rt::clock::monotonic_ns;
use latlab_rt::monitor::Monitor;
use latlab_rt::rng::Rng;
use latlab_rt::sched;

use super::responder::{Child, Shared};
use super::{GpioEdges, LatencyOutput, Placement, Progress, RespondConfig, WORST_KEPT};
use crate::channel::{Waited, Wires};
use crate::RespondError;

/// How often the monitor hears about the progress, ns.
const PROGRESS_EVERY_NS: u64 = 250_000_000;

/// Pins the calling thread and gives it the stimulus's policy, one priority
/// below the responder; returns what it got.
pub(super) fn take_place(config: &RespondConfig) -> Result<Placement, RespondError> {
    sched::pin_current_thread(config.stimulus_cpu)?;
    let stimulus_priority = (config.priority - 1).max(1);
    sched::set_current_thread(config.policy, stimulus_priority)?;
    let (policy, priority) = sched::current_thread();
    let placement = Placement {
        cpu: config.stimulus_cpu,
        policy,
        priority,
        mlocked: latlab_rt::memory::is_locked(),
    };
    latlab_rt::memory::prefault_stack(64 * 1024);
    Ok(placement)
}

/// One latency as it is recorded: every sample, the worst, the per-second
/// series.
struct LatencyRecorder {
    stats: Stats,
    worst: WorstSamples,
    series: SecondSeries,
}

impl LatencyRecorder {
    fn new(per_second: usize) -> Self {
        LatencyRecorder {
            stats: Stats::new(),
            worst: WorstSamples::new(WORST_KEPT),
            series: SecondSeries::new(per_second),
        }
    }

    /// Records `sample`, taken `offset_ns` after the start.
    fn record(&mut self, offset_ns: u64, sample: WorstSample) {
        self.stats.record(sample.latency_ns);
        self.series.record(offset_ns, sample.latency_ns);
        self.worst.offer(sample);
    }

    fn finish(self) -> LatencyOutput {
        LatencyOutput {
            stats: self.stats,
            worst: self.worst,
            series: self.series.finish(),
        }
    }
}

/// The stimulus loop and what it counted.
pub(super) struct StimulusRun<'a> {
    config: &'a RespondConfig,
    one_way: LatencyRecorder,
    round_trip: LatencyRecorder,
    rng: Rng,
    /// Events sent.
    pub(super) sent: u64,
    /// Events answered in time.
    pub(super) answered: u64,
    /// Events not answered within the timeout.
    pub(super) lost: u64,
    /// A late answer may still come: read it away before the next event.
    need_drain: bool,
    /// Stopped by Ctrl-C or SIGTERM.
    pub(super) interrupted: bool,
    /// Where GPIO round trips ended.
    pub(super) gpio_edges: GpioEdges,
    /// CLOCK_MONOTONIC of the first event, ns.
    pub(super) start_ns: u64,
}

impl<'a> StimulusRun<'a> {
    /// A run of `config` starting now.
    pub(super) fn new(config: &'a RespondConfig) -> Self {
        let per_second = (1_000_000_000 / config.gap.min_ns().max(1) + 2).min(1_000_000) as usize;
        StimulusRun {
            config,
            one_way: LatencyRecorder::new(per_second),
            round_trip: LatencyRecorder::new(per_second),
            rng: Rng::from_clock(),
            sent: 0,
            answered: 0,
            lost: 0,
            need_drain: false,
            interrupted: false,
            gpio_edges: GpioEdges::default(),
            start_ns: monotonic_ns(),
        }
    }

    /// Sends events until the count, the duration or a stop request; an
    /// error of a channel, of the responder or of the monitor ends it.
    pub(super) fn run(
        &mut self,
        wires: &mut Wires,
        shared: &Shared,
        child: &mut Child,
        monitor: &mut dyn Monitor<Progress>,
    ) -> Result<(), RespondError> {
        let mut next = self.start_ns;
        let mut last_progress = self.start_ns;
        let end_at = self.config.duration_ns.map(|d| self.start_ns + d);
        loop {
            if self.stop_requested() || self.config.count.is_some_and(|c| self.sent >= c) {
                return Ok(());
            }
            if end_at.is_some_and(|end| monotonic_ns() >= end) {
                return Ok(());
            }
            // Ends at once on Ctrl-C or SIGTERM.
            latlab_rt::stop::sleep_until(next);
            if self.stop_requested() {
                return Ok(());
            }
            self.one_event(wires, shared, child)?;
            let now = monotonic_ns();
            next = next
                .saturating_add(self.config.gap.next_ns(&mut self.rng))
                .max(now);
            if now - last_progress >= PROGRESS_EVERY_NS {
                last_progress = now;
                monitor
                    .progress(&self.progress(now))
                    .map_err(RespondError::Observer)?;
            }
        }
    }

    /// True (and noted) once Ctrl-C or SIGTERM asked to stop.
    fn stop_requested(&mut self) -> bool {
        if latlab_rt::stop::requested() {
            self.interrupted = true;
        }
        self.interrupted
    }

    /// Sends one event and waits for its answer (or the timeout).
    fn one_event(
        &mut self,
        wires: &mut Wires,
        shared: &Shared,
        child: &mut Child,
    ) -> Result<(), RespondError> {
        if self.need_drain {
            wires.answer_in.drain();
            self.need_drain = false;
        }
        // A stop (Ctrl-C, SIGTERM) interrupts the wait for the answer at
        // once (marked before the clock read: nothing between send and wait).
        let interruptible = latlab_rt::stop::interruptible();
        let responses_before = shared.responses();
        let sent_ns = monotonic_ns();
        wires
            .stimulus
            .send(false)
            .map_err(|e| self.stimulus_error("sending the event", e))?;
        self.sent += 1;
        let timeout_at = sent_ns + self.config.timeout_ns;
        let waited = loop {
            let now = monotonic_ns();
            match wires.answer_in.wait(Some(timeout_at.saturating_sub(now))) {
                // Stopped while waiting: the event is neither answered nor
                // lost (its answer, if it comes, is drained).
                Err(libc::EINTR) if self.stop_requested() => {
                    self.sent -= 1;
                    self.need_drain = true;
                    return Ok(());
                }
                Err(libc::EINTR) if monotonic_ns() < timeout_at => continue,
                Err(libc::EINTR) => break Ok(Waited::Timeout),
                other => break other,
            }
        };
        let read_ns = monotonic_ns();
        drop(interruptible);
        match waited {
            Ok(Waited::Event(kernel_ts)) => {
                let woke_ns = (shared.responses() > responses_before).then(|| shared.wake_ns());
                self.record_answer(sent_ns, woke_ns, kernel_ts, read_ns);
                Ok(())
            }
            Ok(Waited::Timeout) => {
                self.lost += 1;
                self.need_drain = true;
                match child.ended() {
                    Some(status) => Err(child.died(status, self.answered)),
                    None => Ok(()),
                }
            }
            Ok(Waited::Closed) => {
                let status = child.ended().unwrap_or_else(|| "closed its end".into());
                Err(child.died(status, self.answered))
            }
            Err(e) => Err(self.stimulus_error("waiting for the answer", e)),
        }
    }

    /// Records the answer to the event sent at `sent_ns`: one way to the
    /// responder's wake-up `woke_ns` (when it counted this event), round
    /// trip to the GPIO edge's `kernel_ts` or to the read at `read_ns`.
    fn record_answer(
        &mut self,
        sent_ns: u64,
        woke_ns: Option<u64>,
        kernel_ts: Option<u64>,
        read_ns: u64,
    ) {
        let end = match kernel_ts {
            Some(ts) => self.gpio_edges.end(sent_ns, ts, read_ns),
            None => read_ns,
        };
        let offset = sent_ns - self.start_ns;
        let sample = |latency_ns| WorstSample {
            latency_ns,
            cycle: self.sent - 1,
            intended_ns: sent_ns,
            offset_s: offset as f64 / 1e9,
            cpu: self.config.responder_cpu,
        };
        if let Some(woke_ns) = woke_ns {
            self.one_way
                .record(offset, sample(woke_ns.saturating_sub(sent_ns)));
        }
        self.round_trip
            .record(offset, sample(end.saturating_sub(sent_ns)));
        self.answered += 1;
    }

    fn stimulus_error(&self, step: &'static str, errno: i32) -> RespondError {
        RespondError::Stimulus {
            cpu: self.config.stimulus_cpu,
            step,
            events: self.sent,
            error: std::io::Error::from_raw_os_error(errno),
        }
    }

    fn progress(&self, now: u64) -> Progress {
        Progress {
            elapsed_s: (now - self.start_ns) as f64 / 1e9,
            answered: self.answered,
            lost: self.lost,
            max_one_way_ns: self.one_way.stats.max(),
            max_round_trip_ns: self.round_trip.stats.max(),
        }
    }

    /// The one-way and round-trip latencies recorded.
    pub(super) fn finish(self) -> (LatencyOutput, LatencyOutput) {
        (self.one_way.finish(), self.round_trip.finish())
    }
}
