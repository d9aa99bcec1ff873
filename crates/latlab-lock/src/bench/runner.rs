//! The threads: the real-time task, the background threads and the idle
//! spinner, run in slices that take turns between the variants.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, OnceLock};

use latlab_measure::stats::Stats;

use super::config::MS;
use super::{BenchConfig, BenchVariant, SiteChoice, ThroughputPoint, VariantResult};
use crate::lock::{Lock, LockCounters};
use crate::shape::Rng;
use crate::sys::{self, SchedParams};
use crate::timer::ReleaseTimer;
use crate::LockError;

struct Shared {
    lock: Lock<u64>,
    timer: ReleaseTimer,
    stop: AtomicBool,
    sections: AtomicU64,
    work_ns: AtomicU64,
    /// Sections completed per site.
    site_sections: Vec<AtomicU64>,
}

impl Shared {
    /// What the lock and the background have done so far, at the real-time task's
    /// release `release_ns`. `site_sections` comes allocated (the real-time task does
    /// not allocate in its loop).
    fn snapshot(&self, release_ns: u64, mut site_sections: Vec<u64>) -> Snapshot {
        site_sections.clear();
        site_sections.extend(self.site_sections.iter().map(|c| c.load(Ordering::SeqCst)));
        Snapshot {
            release_ns,
            taken_ns: sys::monotonic_ns(),
            sections: self.sections.load(Ordering::SeqCst),
            work_ns: self.work_ns.load(Ordering::SeqCst),
            site_sections,
            counters: self.lock.counters(),
        }
    }
}

/// The counts at one end of a measured window.
#[derive(Debug, Clone)]
struct Snapshot {
    /// The release of the real-time task the window opens or closes at.
    release_ns: u64,
    /// When the counts were read: once the real-time task had woken up for that release,
    /// before it took the lock.
    taken_ns: u64,
    sections: u64,
    work_ns: u64,
    site_sections: Vec<u64>,
    counters: LockCounters,
}

/// [`Window::request`]: still warming up.
const WARM_UP: u8 = 0;
/// [`Window::request`]: open the window at the next release.
const OPEN: u8 = 1;
/// [`Window::request`]: close the window at the first release from
/// [`Window::close_asked_ns`] on.
const CLOSE: u8 = 2;

/// The measured window of one slice. The main thread asks for it to open and to close;
/// the real-time task opens it at the next release it handles, and closes it at the first
/// release from the time of the close request on, so its window is a whole number of
/// periods and every release in it is counted once: as a period it ran (the counters are
/// read on the same side of its lock at both ends) or as an overrun. A window cut by the
/// main thread's clock instead would, when a thread is stalled across its start or end (a
/// VM's host can stop a vCPU for tens of milliseconds), count missed releases from
/// outside it as overruns or lose those from inside it.
struct Window {
    /// [`WARM_UP`], [`OPEN`] or [`CLOSE`], set by the main thread.
    request: AtomicU8,
    /// When the main thread asked to close the window (set before [`CLOSE`]). A real-time
    /// task that notices the request late, stalled, still counts the releases it missed
    /// until then: a stall at the end of the window is measured, not cut off.
    close_asked_ns: AtomicU64,
    /// Set by the real-time task when it opens the window.
    opened: OnceLock<Snapshot>,
    /// Set by the real-time task when it closes the window.
    closed: OnceLock<Snapshot>,
}

impl Window {
    fn new() -> Self {
        Self {
            request: AtomicU8::new(WARM_UP),
            close_asked_ns: AtomicU64::new(0),
            opened: OnceLock::new(),
            closed: OnceLock::new(),
        }
    }

    /// Waits (polling, the real-time task must not block on us) until `end` is set or the
    /// real-time thread has ended.
    fn wait<'a, T>(
        end: &'a OnceLock<Snapshot>,
        rt: &std::thread::JoinHandle<T>,
    ) -> Option<&'a Snapshot> {
        loop {
            if let Some(snapshot) = end.get() {
                return Some(snapshot);
            }
            if rt.is_finished() {
                return end.get();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

#[derive(Default)]
struct RtOutcome {
    wake: Stats,
    lock: Stats,
    wait: Stats,
    periods: u64,
    /// Periods run outside the measured window.
    unmeasured: u64,
    overruns: u64,
}

/// One variant's lock and everything measured for it so far, over all its slices.
struct Accumulated {
    variant: BenchVariant,
    shared: Arc<Shared>,
    wake: Stats,
    lock: Stats,
    wait: Stats,
    periods: u64,
    overruns: u64,
    /// Measured time by the real-time task's releases (a whole number of periods).
    measured_ns: u64,
    /// Measured time by the instants the background's counts were read.
    bg_ns: u64,
    sections: u64,
    site_sections: Vec<u64>,
    work_ns: u64,
    counters: LockCounters,
    throughput: Vec<ThroughputPoint>,
    interrupted: bool,
    /// Every critical section ever run on the lock (warm-up included), for the
    /// lost-section check.
    sections_total: u64,
}

impl Accumulated {
    fn new(cfg: &BenchConfig, variant: BenchVariant) -> Result<Self, LockError> {
        let timer = ReleaseTimer::new();
        let shared = Arc::new(Shared {
            lock: Lock::new(0, variant.lock_variant(cfg, &timer))?,
            timer,
            stop: AtomicBool::new(false),
            sections: AtomicU64::new(0),
            work_ns: AtomicU64::new(0),
            site_sections: cfg.sites.iter().map(|_| AtomicU64::new(0)).collect(),
        });
        Ok(Self {
            variant,
            shared,
            wake: Stats::new(),
            lock: Stats::new(),
            wait: Stats::new(),
            periods: 0,
            overruns: 0,
            measured_ns: 0,
            bg_ns: 0,
            sections: 0,
            site_sections: vec![0; cfg.sites.len()],
            work_ns: 0,
            counters: LockCounters::default(),
            throughput: Vec::new(),
            interrupted: false,
            sections_total: 0,
        })
    }

    fn result(&self) -> VariantResult {
        let measured_s = self.measured_ns as f64 / 1e9;
        let bg_s = self.bg_ns as f64 / 1e9;
        let per_s = |x: f64| if bg_s > 0.0 { x / bg_s } else { 0.0 };
        VariantResult {
            variant: self.variant.name().to_string(),
            measured_s,
            interrupted: self.interrupted,
            periods: self.periods,
            overruns: self.overruns,
            wake: self.wake.summary(),
            lock: self.lock.summary(),
            lock_wait: self.wait.summary(),
            bg_sections: self.sections,
            bg_sections_per_s: per_s(self.sections as f64),
            bg_sections_per_s_by_site: self
                .site_sections
                .iter()
                .map(|&n| per_s(n as f64))
                .collect(),
            bg_work_ms_per_s: per_s(self.work_ns as f64 / 1e6),
            counters: self.counters,
            sites: self.shared.lock.site_stats(),
            throughput: self.throughput.clone(),
        }
    }
}

/// Runs one variant for `cfg.warmup_ns + cfg.duration_ns`, or until `stop()` says so
/// (an error if that was before anything was measured).
pub fn run_variant(
    cfg: &BenchConfig,
    variant: BenchVariant,
    stop: &dyn Fn() -> bool,
) -> Result<VariantResult, LockError> {
    let cfg = BenchConfig {
        rounds: 1,
        ..cfg.clone()
    };
    run(&cfg, &[variant], stop, &mut |_| {})?
        .pop()
        .ok_or_else(|| LockError::NothingMeasured {
            variant: variant.name().to_string(),
        })
}

/// Runs every variant for `cfg.duration_ns` of measurement, split into `cfg.rounds` slices
/// that take turns (variant 1, 2, ..., then 1, 2, ... again), so that a disturbance of
/// the machine (another program's burst of work) spreads over all variants instead of
/// spoiling one. Each variant keeps its lock, and so its predictors, across its slices;
/// only its first slice has the warm-up. `progress` is told what starts.
///
/// Stops early when `stop()` says so and returns what was measured, the interrupted
/// variants marked; variants that measured nothing are left out.
pub fn run(
    cfg: &BenchConfig,
    variants: &[BenchVariant],
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<VariantResult>, LockError> {
    cfg.validate()?;
    let rounds = cfg.rounds;
    let mut all = variants
        .iter()
        .map(|&v| Accumulated::new(cfg, v))
        .collect::<Result<Vec<_>, _>>()?;
    let slice_ns = (cfg.duration_ns / u64::from(rounds)).max(1);
    'rounds: for round in 0..rounds {
        for acc in &mut all {
            if stop() {
                break 'rounds;
            }
            progress(&format!(
                "{} (round {}/{rounds}, {:.1} s{})",
                acc.variant.name(),
                round + 1,
                slice_ns as f64 / 1e9,
                if round == 0 && cfg.warmup_ns > 0 {
                    format!(" + {:.1} s warm-up", cfg.warmup_ns as f64 / 1e9)
                } else {
                    String::new()
                }
            ));
            let warmup = if round == 0 { cfg.warmup_ns } else { 0 };
            run_slice(cfg, acc, warmup, slice_ns, stop)?;
            if acc.interrupted {
                break 'rounds;
            }
        }
    }
    Ok(all
        .iter()
        .filter(|acc| acc.measured_ns > 0)
        .map(Accumulated::result)
        .collect())
}

/// Runs the threads of one variant for one slice and adds what they measured.
fn run_slice(
    cfg: &BenchConfig,
    acc: &mut Accumulated,
    warmup_ns: u64,
    slice_ns: u64,
    stop: &dyn Fn() -> bool,
) -> Result<(), LockError> {
    let shared = acc.shared.clone();
    shared.stop.store(false, Ordering::SeqCst);
    let window = Arc::new(Window::new());

    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LockError>>();
    let rt = {
        let (shared, window, cfg, ready) = (
            shared.clone(),
            window.clone(),
            cfg.clone(),
            ready_tx.clone(),
        );
        spawn("lockbench-rt", move || {
            rt_thread(&cfg, &shared, &window, ready)
        })?
    };
    let mut background = Vec::new();
    for index in 0..cfg.background_threads {
        let (mine, cfg, ready) = (shared.clone(), cfg.clone(), ready_tx.clone());
        let name = format!("lockbench-bg{index}");
        match spawn(&name, move || background_thread(&cfg, &mine, index, ready)) {
            Ok(handle) => background.push(handle),
            Err(err) => {
                shared.stop.store(true, Ordering::SeqCst);
                return Err(err);
            }
        }
    }
    let spinner = if cfg.idle_spinner {
        let (mine, cfg, ready) = (shared.clone(), cfg.clone(), ready_tx.clone());
        match spawn("lockbench-idle", move || idle_spinner(&cfg, &mine, ready)) {
            Ok(handle) => Some(handle),
            Err(err) => {
                shared.stop.store(true, Ordering::SeqCst);
                return Err(err);
            }
        }
    } else {
        None
    };
    drop(ready_tx);
    let mut setup_error = None;
    for _ in 0..=cfg.background_threads + usize::from(spinner.is_some()) {
        if let Ok(Err(err)) = ready_rx.recv() {
            setup_error.get_or_insert(err);
        }
    }

    // Warm-up, then the measurement, sampling the background's progress.
    let offset_s = acc.bg_ns as f64 / 1e9;
    let mut point_start = 0;
    let mut last = (0, 0);
    let mut push_point =
        |now: u64, point_start: u64, origin: u64, last: &mut (u64, u64), current: (u64, u64)| {
            let width_s = (now - point_start) as f64 / 1e9;
            acc.throughput.push(ThroughputPoint {
                t_s: offset_s + (point_start - origin) as f64 / 1e9,
                sections_per_s: (current.0 - last.0) as f64 / width_s,
                work_ms_per_s: (current.1 - last.1) as f64 / 1e6 / width_s,
            });
            *last = current;
        };
    if setup_error.is_none() {
        let warm_end = sys::monotonic_ns() + warmup_ns;
        while sys::monotonic_ns() < warm_end && !stop() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        window.request.store(OPEN, Ordering::SeqCst);
        let opened = Window::wait(&window.opened, &rt);
        let mut interrupted = false;
        if let Some(open) = opened {
            point_start = open.taken_ns;
            last = (open.sections, open.work_ns);
            // From when the counts were read: the real-time task may have noticed the
            // request long after the release it opened the window at, and the background
            // is measured from the counts on.
            let end = open.taken_ns + slice_ns;
            loop {
                if stop() {
                    interrupted = true;
                    break;
                }
                let now = sys::monotonic_ns();
                if now >= end {
                    break;
                }
                let point_end = (point_start + cfg.sample_interval_ns).min(end);
                if now < point_end {
                    std::thread::sleep(std::time::Duration::from_nanos(
                        (point_end - now).min(10 * MS),
                    ));
                    continue;
                }
                let current = (
                    shared.sections.load(Ordering::SeqCst),
                    shared.work_ns.load(Ordering::SeqCst),
                );
                push_point(now, point_start, open.taken_ns, &mut last, current);
                point_start = now;
            }
        }
        window
            .close_asked_ns
            .store(sys::monotonic_ns(), Ordering::SeqCst);
        window.request.store(CLOSE, Ordering::SeqCst);
        if opened.is_some() {
            Window::wait(&window.closed, &rt);
        }
        acc.interrupted = interrupted;
    }
    shared.stop.store(true, Ordering::SeqCst);

    let outcome = rt.join().map_err(|_| LockError::ThreadPanicked {
        thread: "lockbench-rt".into(),
    })?;
    for (index, handle) in background.into_iter().enumerate() {
        acc.sections_total += handle.join().map_err(|_| LockError::ThreadPanicked {
            thread: format!("lockbench-bg{index}"),
        })?;
    }
    if let Some(handle) = spinner {
        handle.join().map_err(|_| LockError::ThreadPanicked {
            thread: "lockbench-idle".into(),
        })?;
    }
    acc.sections_total += outcome.periods + outcome.unmeasured;
    if let Some(err) = setup_error {
        return Err(err);
    }
    // Every critical section incremented the protected counter exactly once.
    let counted = *shared.lock.lock();
    if counted != acc.sections_total {
        return Err(LockError::LostSections {
            variant: acc.variant.name().to_string(),
            ran: acc.sections_total,
            counted,
        });
    }

    // The real-time task closes the window it opened, at the latest when it stops.
    let (Some(open), Some(close)) = (window.opened.get(), window.closed.get()) else {
        return Ok(());
    };
    // The rest of the slice, when it is not a sliver.
    if close.taken_ns > point_start + cfg.sample_interval_ns / 10 {
        push_point(
            close.taken_ns,
            point_start,
            open.taken_ns,
            &mut last,
            (close.sections, close.work_ns),
        );
    }
    acc.wake.merge(&outcome.wake);
    acc.lock.merge(&outcome.lock);
    acc.wait.merge(&outcome.wait);
    for (total, (end, start)) in acc
        .site_sections
        .iter_mut()
        .zip(close.site_sections.iter().zip(&open.site_sections))
    {
        *total += end - start;
    }
    acc.periods += outcome.periods;
    acc.overruns += outcome.overruns;
    acc.measured_ns += close.release_ns - open.release_ns;
    acc.bg_ns += close.taken_ns - open.taken_ns;
    acc.sections += close.sections - open.sections;
    acc.work_ns += close.work_ns - open.work_ns;
    acc.counters = counters_sum(
        &acc.counters,
        &counters_delta(&close.counters, &open.counters),
    );
    Ok(())
}

fn counters_sum(a: &LockCounters, b: &LockCounters) -> LockCounters {
    LockCounters {
        acquisitions: a.acquisitions + b.acquisitions,
        admissions: a.admissions + b.admissions,
        refusals: a.refusals + b.refusals,
        forced_entries: a.forced_entries + b.forced_entries,
        mispredictions: a.mispredictions + b.mispredictions,
        rt_acquisitions: a.rt_acquisitions + b.rt_acquisitions,
        ceiling_boost_failures: a.ceiling_boost_failures + b.ceiling_boost_failures,
    }
}

fn counters_delta(end: &LockCounters, start: &LockCounters) -> LockCounters {
    LockCounters {
        acquisitions: end.acquisitions - start.acquisitions,
        admissions: end.admissions - start.admissions,
        refusals: end.refusals - start.refusals,
        forced_entries: end.forced_entries - start.forced_entries,
        mispredictions: end.mispredictions - start.mispredictions,
        rt_acquisitions: end.rt_acquisitions - start.rt_acquisitions,
        ceiling_boost_failures: end.ceiling_boost_failures - start.ceiling_boost_failures,
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>, LockError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(body)
        .map_err(|source| LockError::Spawn {
            thread: name.to_string(),
            source,
        })
}

fn pin(cfg: &BenchConfig, thread: &str) -> Result<(), LockError> {
    match cfg.cpu {
        None => Ok(()),
        Some(cpu) => sys::pin_to_cpu(cpu).map_err(|errno| LockError::Affinity {
            thread: thread.to_string(),
            cpu,
            source: std::io::Error::from_raw_os_error(errno),
        }),
    }
}

fn rt_thread(
    cfg: &BenchConfig,
    shared: &Shared,
    window: &Window,
    ready: mpsc::Sender<Result<(), LockError>>,
) -> RtOutcome {
    let priority = i32::from(cfg.rt_priority);
    let setup = pin(cfg, "real-time").and_then(|()| {
        sys::set_sched(SchedParams {
            policy: libc::SCHED_FIFO,
            priority,
        })
        .map_err(|errno| LockError::SchedFifo {
            thread: "real-time".into(),
            priority,
            source: std::io::Error::from_raw_os_error(errno),
        })
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    let mut out = RtOutcome::default();
    if failed {
        return out;
    }
    shared.timer.register_current_thread();
    let period = cfg.period_ns;
    let mut release = sys::monotonic_ns() + period;
    let mut measuring = false;
    // The release the window closes at, when that is after this period's.
    let mut close_at = None;
    let sites = shared.site_sections.len();
    let (mut open_sites, mut close_sites) = (Vec::with_capacity(sites), Vec::with_capacity(sites));
    while !shared.stop.load(Ordering::Relaxed) {
        // The period's work is done: publish the next release, then sleep until it.
        shared.timer.publish(release);
        // A stop (Ctrl-C, SIGTERM) interrupts the sleep at once, whatever
        // the period: the window then closes at this release, unreached.
        let interruptible = latlab_rt::stop::interruptible();
        sys::sleep_until(release);
        let woke = sys::monotonic_ns();
        drop(interruptible);
        if woke < release {
            break;
        }
        // The window opens at this release, and closes at it unless the close was asked
        // for after it (woken late): then at the first release from the request on, after
        // this period.
        match window.request.load(Ordering::SeqCst) {
            OPEN if !measuring && window.opened.get().is_none() => {
                let _ = window
                    .opened
                    .set(shared.snapshot(release, std::mem::take(&mut open_sites)));
                measuring = true;
            }
            CLOSE if measuring => {
                let asked = window.close_asked_ns.load(Ordering::SeqCst);
                if release >= asked {
                    let _ = window
                        .closed
                        .set(shared.snapshot(release, std::mem::take(&mut close_sites)));
                    measuring = false;
                } else {
                    close_at = Some(release + (asked - release).div_ceil(period) * period);
                }
            }
            _ => {}
        }
        let locked = {
            let mut guard = shared.lock.lock();
            let locked = sys::monotonic_ns();
            *guard += 1;
            sys::busy_wall(cfg.rt_hold_ns);
            locked
        };
        if measuring {
            out.wake.record(woke.saturating_sub(release));
            out.lock.record(locked.saturating_sub(release));
            out.wait.record(locked.saturating_sub(woke));
            out.periods += 1;
        } else {
            out.unmeasured += 1;
        }
        release += period;
        let now = sys::monotonic_ns();
        if now > release {
            // Still busy when the next release came: skip the releases that were missed.
            let missed = (now - release) / period + 1;
            if measuring {
                out.overruns += match close_at {
                    // Only those before the window's end.
                    Some(end) => missed.min((end - release) / period),
                    None => missed,
                };
            }
            release += missed * period;
        }
        if let Some(end) = close_at.take() {
            // `release` is past `end` now: the request came before the clock was read.
            let _ = window
                .closed
                .set(shared.snapshot(end, std::mem::take(&mut close_sites)));
            measuring = false;
        }
    }
    if measuring {
        // Stopped with the window open: every release before `release` is counted.
        let _ = window
            .closed
            .set(shared.snapshot(release, std::mem::take(&mut close_sites)));
    }
    shared.timer.retire();
    out
}

fn background_thread(
    cfg: &BenchConfig,
    shared: &Shared,
    index: usize,
    ready: mpsc::Sender<Result<(), LockError>>,
) -> u64 {
    let name = format!("background {index}");
    // SCHED_OTHER explicitly, whatever the parent runs at.
    let setup = pin(cfg, &name).map(|()| {
        let _ = sys::set_sched(SchedParams {
            policy: libc::SCHED_OTHER,
            priority: 0,
        });
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    if failed {
        return 0;
    }
    let mut rng = Rng::new(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut sections = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        sys::busy_cpu(cfg.outside_work_ns);
        let site = match cfg.site_choice {
            SiteChoice::PerThread => index % cfg.sites.len(),
            SiteChoice::Random => rng.range(0, cfg.sites.len() as u64 - 1) as usize,
        };
        let hold = cfg.sites[site].sample(&mut rng);
        critical_section(&shared.lock, site, hold);
        sections += 1;
        shared.sections.fetch_add(1, Ordering::Relaxed);
        shared.site_sections[site].fetch_add(1, Ordering::Relaxed);
        shared
            .work_ns
            .fetch_add(hold + cfg.outside_work_ns, Ordering::Relaxed);
    }
    sections
}

/// Yields in a loop at `SCHED_IDLE` until the slice ends, so that the CPU never idles.
fn idle_spinner(cfg: &BenchConfig, shared: &Shared, ready: mpsc::Sender<Result<(), LockError>>) {
    let setup = pin(cfg, "idle spinner").map(|()| {
        let _ = sys::set_sched(SchedParams {
            policy: libc::SCHED_IDLE,
            priority: 0,
        });
    });
    let failed = setup.is_err();
    let _ = ready.send(setup);
    if failed {
        return;
    }
    // Yield rather than spin: a SCHED_IDLE task still gets picked now and then (its
    // tiny weight gives it a fair share of about 0.3 %), and when it is it would keep
    // the CPU until the next tick (4 ms at HZ=250) while a background thread, maybe the
    // lock holder, waits. Yielding hands the CPU back at once to anything runnable and
    // otherwise returns at once, so the CPU never halts.
    while !shared.stop.load(Ordering::Relaxed) {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
}

/// One background critical section at call site `site`: each site is its own `lock()`
/// call, so the lock monitor keeps (and predicts) each separately.
fn critical_section(lock: &Lock<u64>, site: usize, hold_ns: u64) {
    let mut guard = match site {
        0 => lock.lock(),
        1 => lock.lock(),
        2 => lock.lock(),
        3 => lock.lock(),
        4 => lock.lock(),
        5 => lock.lock(),
        6 => lock.lock(),
        _ => lock.lock(),
    };
    *guard += 1;
    sys::busy_wall(hold_ns);
}
