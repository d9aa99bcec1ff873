//! Measurement threads: one per CPU, pinned, real-time, each sleeping on a
//! [`TimerKind`] and recording how late it woke.
//!
//! The loop does no allocation and no I/O: a sample updates the histogram,
//! the running sums, the worst-N list, the per-second buffer (allocated up
//! front) and two relaxed atomics the live view reads.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use latlab_rt::clock::monotonic_ns;
use latlab_rt::sched::{self, Policy};

use crate::period::PeriodTracker;
use crate::samples::{SampleLog, SampleRecord, SampleSink};
use crate::series::{SecondSeries, SeriesPoint};
use crate::stats::Stats;
use crate::timer::{self, TimerKind};
use crate::worst::{WorstSample, WorstSamples};
use crate::MeasureError;

/// How many worst samples each thread keeps.
pub const WORST_KEPT: usize = 20;

/// Called from a measurement thread for every sample over a threshold
/// (e.g. to write a trace_marker line). Must not block.
pub type LateHook = Arc<dyn Fn(&LateSample) + Send + Sync>;

/// A sample over the late-hook threshold.
#[derive(Debug, Clone, Copy)]
pub struct LateSample {
    /// CPU of the thread.
    pub cpu: usize,
    /// Cycle number.
    pub cycle: u64,
    /// Intended wake-up, CLOCK_MONOTONIC ns.
    pub intended_ns: u64,
    /// Actual wake-up, CLOCK_MONOTONIC ns.
    pub actual_ns: u64,
}

/// A fully resolved measurement.
#[derive(Clone)]
pub struct MeasureConfig {
    /// CPUs to measure on, one thread each.
    pub cpus: Vec<usize>,
    /// Period of the first thread, ns.
    pub interval_ns: u64,
    /// Added to the period of each further thread (0: all the same).
    pub interval_step_ns: u64,
    /// Wake-up source.
    pub timer: TimerKind,
    /// Scheduling policy of the threads.
    pub policy: Policy,
    /// Priority for SCHED_FIFO/SCHED_RR.
    pub priority: i32,
    /// Stop after this long (ns), if set.
    pub duration_ns: Option<u64>,
    /// Stop after this many activations per thread, if set.
    pub loops: Option<u64>,
    /// Accepted period deviation as a fraction of the period.
    pub period_tolerance: f64,
    /// Device for the rtc timer.
    pub rtc_device: PathBuf,
    /// Log every sample to this file.
    pub samples: Option<PathBuf>,
    /// Hook for samples at or over a threshold (ns).
    pub late_hook: Option<(u64, LateHook)>,
}

/// Progress of a running measurement, for the live view.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// Per thread: CPU, samples so far, max so far (ns).
    pub threads: Vec<(usize, u64, u64)>,
}

/// Follows a measurement from the calling thread (see
/// [`latlab_rt::monitor::Monitor`]): told when the threads are ready, then
/// about every 100 ms with the [`Progress`].
pub use latlab_rt::monitor::{Monitor, Silent};

/// What one measurement thread measured.
#[derive(Debug, Clone)]
pub struct ThreadOutput {
    /// CPU the thread was pinned to.
    pub cpu: usize,
    /// Its period, ns.
    pub interval_ns: u64,
    /// Policy it really got.
    pub policy: Option<Policy>,
    /// Priority it really got.
    pub priority: i32,
    /// CPUs it was allowed on while measuring.
    pub affinity: Vec<usize>,
    /// Latency statistics.
    pub stats: Stats,
    /// Worst samples.
    pub worst: WorstSamples,
    /// Per-second max/p99.
    pub series: Vec<SeriesPoint>,
    /// Period accuracy.
    pub period: PeriodTracker,
    /// Activations.
    pub cycles: u64,
    /// Whole periods skipped (the thread woke after its next period had begun).
    pub missed_periods: u64,
    /// Activations that came before their intended time: impossible, so a
    /// bug or a clock problem; counted here and kept out of the statistics.
    pub early_wakeups: u64,
    /// The most any of them came early by, ns (0 without any).
    pub max_early_ns: u64,
    /// Activations whose expiry the kernel did not tell (`itimer` only),
    /// measured against the earliest it can have been.
    pub uncertain_expiries: u64,
}

/// Everything a measurement produced.
#[derive(Debug, Clone)]
pub struct MeasureOutput {
    /// One entry per thread, in CPU order of the configuration.
    pub threads: Vec<ThreadOutput>,
    /// When the first period began, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// When the threads were stopped, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
    /// True when stopped early by Ctrl-C/SIGTERM or [`latlab_rt::stop::request`].
    pub interrupted: bool,
    /// Records written to the sample log, if any.
    pub samples_written: Option<u64>,
    /// Why the sample log stopped short (a full disk): it then holds the
    /// `samples_written` records before the error; the measurement went on.
    pub samples_error: Option<String>,
}

#[repr(align(64))]
#[derive(Default)]
struct Live {
    count: AtomicU64,
    max: AtomicU64,
}

/// Per-thread accumulation of samples: what the measurement loop does
/// with each wake-up (public so its cost can be benchmarked).
pub struct Recorder {
    cpu: usize,
    start_ns: u64,
    stats: Stats,
    worst: WorstSamples,
    series: SecondSeries,
    period: PeriodTracker,
    cycles: u64,
    missed: u64,
    early: u64,
    max_early: u64,
    uncertain: u64,
}

/// What [`Recorder::record`] made of a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accounted {
    /// On time or this many ns late: part of the statistics.
    Late(u64),
    /// This many ns before its intended time, which cannot happen (a bug or
    /// a clock problem): counted apart and kept out of the statistics.
    Early(u64),
}

impl Recorder {
    /// A recorder for a thread on `cpu` with period `interval_ns`, period
    /// tolerance `tolerance` (fraction) and run start `start_ns`.
    pub fn new(cpu: usize, interval_ns: u64, tolerance: f64, start_ns: u64) -> Self {
        let per_second = (1_000_000_000 / interval_ns.max(1)) as usize + 1;
        Recorder {
            cpu,
            start_ns,
            stats: Stats::new(),
            worst: WorstSamples::new(WORST_KEPT),
            series: SecondSeries::new(per_second),
            period: PeriodTracker::new(interval_ns, (interval_ns as f64 * tolerance) as u64),
            cycles: 0,
            missed: 0,
            early: 0,
            max_early: 0,
            uncertain: 0,
        }
    }

    /// Accounts one wake-up. A wake-up before its intended time is never
    /// clamped to 0: it is counted as early and left out of the latency
    /// statistics (its period and missed periods still count).
    #[inline]
    pub fn record(&mut self, wake: timer::Wake) -> Accounted {
        self.period.record(wake.actual);
        self.missed += wake.missed;
        self.cycles += 1;
        self.uncertain += u64::from(wake.uncertain);
        if wake.actual < wake.intended {
            let early = wake.intended - wake.actual;
            self.early += 1;
            self.max_early = self.max_early.max(early);
            return Accounted::Early(early);
        }
        let latency = wake.actual - wake.intended;
        let offset = wake.intended.saturating_sub(self.start_ns);
        self.stats.record(latency);
        self.worst.offer(WorstSample {
            latency_ns: latency,
            cycle: self.cycles - 1,
            intended_ns: wake.intended,
            offset_s: offset as f64 / 1e9,
            cpu: self.cpu,
        });
        self.series.record(offset, latency);
        Accounted::Late(latency)
    }
}

/// Runs the measurement until the duration or loop count is reached, or a
/// stop is requested. `monitor` is called from the calling thread (which
/// stays at its own, normal priority).
pub fn measure(
    config: &MeasureConfig,
    monitor: &mut dyn Monitor<Progress>,
) -> Result<MeasureOutput, MeasureError> {
    validate(config)?;
    if config.timer == TimerKind::Itimer {
        // SIGALRM is process-directed: block it everywhere so only the
        // measurement thread's sigwaitinfo takes it.
        timer::block_signal(libc::SIGALRM);
    }
    let log = config
        .samples
        .as_deref()
        .map(SampleLog::create)
        .transpose()?;
    let threads = config.cpus.len();
    let live: Arc<Vec<Live>> = Arc::new((0..threads).map(|_| Live::default()).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let abort = Arc::new(AtomicBool::new(false));
    let start_ns = Arc::new(AtomicU64::new(0));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();

    let mut handles = Vec::with_capacity(threads);
    for (index, &cpu) in config.cpus.iter().enumerate() {
        let thread = ThreadContext {
            index,
            cpu,
            interval_ns: config.interval_ns + index as u64 * config.interval_step_ns,
            config: config.clone(),
            live: Arc::clone(&live),
            stop: Arc::clone(&stop),
            abort: Arc::clone(&abort),
            start_ns: Arc::clone(&start_ns),
            barrier: Arc::clone(&barrier),
            ready: ready_tx.clone(),
            sink: log.as_ref().map(SampleLog::sink),
        };
        let handle = std::thread::Builder::new()
            .name(format!("latlab-cpu{cpu}"))
            .stack_size(256 * 1024)
            .spawn(move || thread.run())
            .map_err(|e| MeasureError::Config(format!("cannot start thread: {e}")))?;
        handles.push(handle);
    }
    drop(ready_tx);

    // Wait for every thread to be pinned and prioritised before starting.
    let mut setup_error = None;
    let mut tids = vec![0; threads];
    for _ in 0..threads {
        match ready_rx.recv() {
            Ok(Ok((index, tid))) => tids[index] = tid,
            Ok(Err(e)) => {
                setup_error.get_or_insert(e);
            }
            Err(_) => break,
        }
    }
    if setup_error.is_none() {
        if let Err(reason) = monitor.threads(&tids) {
            setup_error = Some(MeasureError::Monitor(reason));
        }
    }
    let mut settle = Duration::ZERO;
    if setup_error.is_none() {
        match monitor.ready() {
            Ok(wait) => settle = wait,
            Err(reason) => setup_error = Some(MeasureError::Monitor(reason)),
        }
    }
    if setup_error.is_some() {
        abort.store(true, Ordering::SeqCst);
    }
    // First period starts 10 ms from now (after any settling time), so every
    // thread has its timer armed.
    let start = monotonic_ns() + 10_000_000 + settle.as_nanos() as u64;
    start_ns.store(start, Ordering::SeqCst);
    barrier.wait();

    let mut interrupted = false;
    let mut monitor_error = None;
    if setup_error.is_none() {
        let end = config.duration_ns.map(|d| start + d);
        loop {
            // Ends at once on Ctrl-C or SIGTERM, whichever thread took it.
            latlab_rt::stop::sleep(Duration::from_millis(100));
            let now = monotonic_ns();
            let progress = monitor.progress(&Progress {
                elapsed_s: now.saturating_sub(start) as f64 / 1e9,
                threads: config
                    .cpus
                    .iter()
                    .zip(live.iter())
                    .map(|(&cpu, l)| {
                        (
                            cpu,
                            l.count.load(Ordering::Relaxed),
                            l.max.load(Ordering::Relaxed),
                        )
                    })
                    .collect(),
            });
            if let Err(reason) = progress {
                monitor_error = Some(MeasureError::Monitor(reason));
                break;
            }
            if latlab_rt::stop::requested() {
                interrupted = true;
                break;
            }
            if abort.load(Ordering::SeqCst) {
                break;
            }
            if end.is_some_and(|end| now >= end + 2 * config.interval_ns)
                || handles.iter().all(|h| h.is_finished())
            {
                break;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    let end_ns = monotonic_ns();
    // A thread may sit in a long wait (a period of seconds, a timer that
    // does not fire): interrupt it rather than wait, again until it has
    // ended (an interruption that lands just before it blocks is lost). It
    // takes no sample after the stop.
    while !handles.iter().all(|h| h.is_finished()) {
        for (handle, &tid) in handles.iter().zip(&tids) {
            if tid > 0 && !handle.is_finished() {
                latlab_rt::stop::interrupt(tid);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }

    let mut outputs = Vec::with_capacity(threads);
    let mut thread_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(Some(output))) => outputs.push(output),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                thread_error.get_or_insert(e);
            }
            Err(_) => {
                thread_error
                    .get_or_insert(MeasureError::Config("a measurement thread panicked".into()));
            }
        }
    }
    let log_end = log.map(SampleLog::finish);
    if let Some(e) = setup_error.or(thread_error).or(monitor_error) {
        return Err(e);
    }
    Ok(MeasureOutput {
        threads: outputs,
        start_ns: start,
        end_ns,
        interrupted,
        samples_written: log_end.as_ref().map(|end| end.written),
        samples_error: log_end.and_then(|end| end.error).map(|e| e.to_string()),
    })
}

/// Checks a configuration before anything starts (also done by [`measure`]):
/// errors name the option to change.
pub fn validate(config: &MeasureConfig) -> Result<(), MeasureError> {
    if config.cpus.is_empty() {
        return Err(MeasureError::Config("no CPU selected".into()));
    }
    if config.interval_ns < 10_000 {
        return Err(MeasureError::Config(format!(
            "--interval {} ns is below the 10 us minimum: shorter periods measure the \
             measurement, not the system",
            config.interval_ns
        )));
    }
    if config.timer == TimerKind::Itimer && config.cpus.len() > 1 {
        return Err(MeasureError::Config(format!(
            "the itimer timer is process-wide (one SIGALRM per process), so it measures one \
             CPU only; pick one with --cpus N, or use --timer posix-timer for per-thread \
             signals on {} CPUs",
            config.cpus.len()
        )));
    }
    if config.duration_ns.is_none() && config.loops.is_none() {
        return Err(MeasureError::Config(
            "give --duration or --loops (a measurement needs an end)".into(),
        ));
    }
    let longest_period =
        config.interval_ns + config.cpus.len().saturating_sub(1) as u64 * config.interval_step_ns;
    if let Some(duration) = config.duration_ns.filter(|&d| longest_period > d) {
        return Err(MeasureError::Config(format!(
            "a period of {} (--interval{}) is longer than --duration {}: the run would end \
             before its first period; shorten the interval or lengthen the duration",
            crate::units::format_ns(longest_period),
            if config.interval_step_ns > 0 {
                " plus --interval-step per further CPU"
            } else {
                ""
            },
            crate::units::format_ns(duration)
        )));
    }
    Ok(())
}

struct ThreadContext {
    index: usize,
    cpu: usize,
    interval_ns: u64,
    config: MeasureConfig,
    live: Arc<Vec<Live>>,
    stop: Arc<AtomicBool>,
    abort: Arc<AtomicBool>,
    start_ns: Arc<AtomicU64>,
    barrier: Arc<Barrier>,
    /// Tells the main thread this thread is set up: its index and thread id.
    ready: std::sync::mpsc::Sender<Result<(usize, i32), MeasureError>>,
    sink: Option<SampleSink>,
}

impl ThreadContext {
    fn setup(&self) -> Result<(usize, i32), MeasureError> {
        sched::pin_current_thread(self.cpu)?;
        sched::set_current_thread(self.config.policy, self.config.priority)?;
        latlab_rt::memory::prefault_stack(64 * 1024);
        // SAFETY: gettid cannot fail.
        let tid = unsafe { libc::gettid() };
        Ok((self.index, tid))
    }

    fn run(mut self) -> Result<Option<ThreadOutput>, MeasureError> {
        let setup = self.setup();
        let failed = setup.is_err();
        let _ = self.ready.send(setup);
        self.barrier.wait();
        if failed || self.abort.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let result = self.measure_loop();
        if result.is_err() {
            // Tell the main thread (and through it the others) to stop now.
            self.abort.store(true, Ordering::SeqCst);
        }
        result.map(Some)
    }

    fn measure_loop(&mut self) -> Result<ThreadOutput, MeasureError> {
        // Threads wake staggered across the period (thread i of n at i/n of
        // it), as cyclictest's threads do by starting one after another: all
        // CPUs waking at the same instant would measure their own contention
        // (simultaneous timer interrupts, on a VM simultaneous vCPU kicks).
        let threads = self.config.cpus.len() as u64;
        let start = self.start_ns.load(Ordering::SeqCst)
            + self.index as u64 * self.interval_ns / threads.max(1);
        let config = &self.config;
        // The recorder first: its first touch of its buffers faults pages in,
        // which must not fall into the first period of a timer armed in open
        // (rtc arms one period before the start).
        let mut recorder =
            Recorder::new(self.cpu, self.interval_ns, config.period_tolerance, start);
        let (policy, priority) = sched::current_thread();
        let affinity = sched::current_affinity();
        let mut source = timer::open(
            config.timer,
            self.cpu,
            self.interval_ns,
            start,
            &config.rtc_device,
        )?;
        let end = config.duration_ns.map(|d| start + d);
        let loops = config.loops.unwrap_or(u64::MAX);
        let live = &self.live[self.index];
        let mut max = 0u64;

        while !self.stop.load(Ordering::Relaxed) && recorder.cycles < loops {
            let Some(wake) = source.wait()? else {
                continue; // interrupted by a signal: re-check stop
            };
            // Once stopped, the threads are interrupted with a signal whose
            // delivery may have come between this wake-up and its clock read:
            // no wake-up after a stop is a sample.
            if self.stop.load(Ordering::SeqCst) || latlab_rt::stop::requested() {
                break;
            }
            let wake = match end {
                Some(end) if wake.intended >= end => break,
                Some(end) => wake.missed_before(end, self.interval_ns),
                None => wake,
            };
            let cycle = recorder.cycles;
            let latency = match recorder.record(wake) {
                Accounted::Late(latency) => latency,
                Accounted::Early(early) => {
                    live.count.store(recorder.cycles, Ordering::Relaxed);
                    if let Some(sink) = &mut self.sink {
                        sink.push(SampleRecord {
                            intended_ns: wake.intended,
                            latency_ns: early.min(u64::from(u32::MAX)) as u32,
                            cpu: self.cpu as u16,
                            flags: SampleRecord::EARLY | SampleRecord::flags_of(&wake),
                        });
                    }
                    continue;
                }
            };
            if latency > max {
                max = latency;
                live.max.store(max, Ordering::Relaxed);
            }
            live.count.store(recorder.cycles, Ordering::Relaxed);
            if let Some((threshold, hook)) = &config.late_hook {
                if latency >= *threshold {
                    hook(&LateSample {
                        cpu: self.cpu,
                        cycle,
                        intended_ns: wake.intended,
                        actual_ns: wake.actual,
                    });
                }
            }
            if let Some(sink) = &mut self.sink {
                let saturated = latency > u64::from(u32::MAX);
                sink.push(SampleRecord {
                    intended_ns: wake.intended,
                    latency_ns: latency.min(u64::from(u32::MAX)) as u32,
                    cpu: self.cpu as u16,
                    flags: (u16::from(saturated) * SampleRecord::SATURATED)
                        | SampleRecord::flags_of(&wake),
                });
            }
        }
        drop(source);
        Ok(ThreadOutput {
            cpu: self.cpu,
            interval_ns: self.interval_ns,
            policy,
            priority,
            affinity,
            stats: recorder.stats,
            worst: recorder.worst,
            series: recorder.series.finish(),
            period: recorder.period,
            cycles: recorder.cycles,
            missed_periods: recorder.missed,
            early_wakeups: recorder.early,
            max_early_ns: recorder.max_early,
            uncertain_expiries: recorder.uncertain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::Wake;

    /// Records what the engine tells it, and checks the threads are there.
    #[derive(Default)]
    struct Told {
        tids: Vec<i32>,
        ready_after_threads: bool,
    }

    impl Monitor<Progress> for Told {
        fn threads(&mut self, tids: &[i32]) -> Result<(), String> {
            self.tids = tids.to_vec();
            Ok(())
        }

        fn ready(&mut self) -> Result<Duration, String> {
            self.ready_after_threads = !self.tids.is_empty();
            Ok(Duration::ZERO)
        }
    }

    #[test]
    fn the_requested_settings_are_the_configuration_before_the_session() {
        let config = MeasureConfig {
            cpus: vec![1, 3],
            interval_ns: 1_000_000,
            interval_step_ns: 500,
            timer: TimerKind::Timerfd,
            policy: Policy::Fifo,
            priority: 95,
            duration_ns: Some(2_500_000_000),
            loops: None,
            period_tolerance: 0.02,
            rtc_device: PathBuf::from("/dev/rtc0"),
            samples: None,
            late_hook: None,
        };
        let settings = crate::result::RunSettings::requested(&config);
        assert_eq!(settings.cpus, [1, 3]);
        assert_eq!(
            (settings.interval_ns, settings.interval_step_ns),
            (1_000_000, 500)
        );
        assert_eq!((settings.policy, settings.priority), (Policy::Fifo, 95));
        assert_eq!((settings.duration_s, settings.loops), (Some(2.5), None));
        assert_eq!(settings.timer, TimerKind::Timerfd);
        assert_eq!(settings.period_tolerance, 0.02);
        assert!(!settings.mlocked && !settings.unprivileged && settings.steal_ns.is_empty());
        assert_eq!(settings.cpu_dma_latency_us, None);
    }

    #[test]
    fn the_monitor_is_told_the_measurement_threads_before_they_start() {
        let cpus = sched::usable_cpus();
        let config = MeasureConfig {
            cpus: cpus.iter().copied().take(2).collect(),
            interval_ns: 1_000_000,
            interval_step_ns: 0,
            timer: TimerKind::ClockNanosleep,
            policy: Policy::Other,
            priority: 0,
            duration_ns: None,
            loops: Some(3),
            period_tolerance: 0.05,
            rtc_device: PathBuf::from("/dev/rtc0"),
            samples: None,
            late_hook: None,
        };
        let mut told = Told::default();
        let output = measure(&config, &mut told).unwrap();
        assert!(told.ready_after_threads);
        assert_eq!(told.tids.len(), config.cpus.len());
        // SAFETY: getpid and gettid cannot fail.
        let (pid, me) = unsafe { (libc::getpid(), libc::gettid()) };
        let mut distinct = told.tids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), told.tids.len(), "{:?}", told.tids);
        // Threads of this process other than the caller (they have ended
        // by now, so their ids are checked, not their /proc entries).
        assert!(told.tids.iter().all(|&t| t > 0 && t != me && t != pid));
        assert_eq!(output.threads.len(), config.cpus.len());
    }

    #[test]
    fn an_early_wake_up_is_counted_apart_and_never_clamped() {
        let mut recorder = Recorder::new(0, 100_000, 0.05, 1_000_000);
        let on_time = Wake {
            intended: 1_000_000,
            actual: 1_020_000,
            missed: 0,
            uncertain: false,
        };
        assert_eq!(recorder.record(on_time), Accounted::Late(20_000));
        // One interval short of the kernel's expiry: 95 us early, not 0 us late.
        let early = Wake {
            intended: 1_200_000,
            actual: 1_105_000,
            missed: 1,
            uncertain: false,
        };
        assert_eq!(recorder.record(early), Accounted::Early(95_000));
        assert_eq!(
            (recorder.cycles, recorder.early, recorder.missed),
            (2, 1, 1)
        );
        assert_eq!(recorder.max_early, 95_000);
        // Only the on-time sample is in the statistics: its minimum is not 0.
        let summary = recorder.stats.summary();
        assert_eq!((summary.count, summary.min), (1, 20_000));
    }
}
