//! Starting, watching and stopping a load; sampling its throughput.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use latlab_rt::cpuset::CpuSet;
use latlab_rt::sched::housekeeping_cpus;
use latlab_rt::wait::Event;

use crate::command::{group_cpu_seconds, poll_pid, Ended, ExternalCommand};
use crate::report::{CommandReport, KindReport, LoadReport};
use crate::sched::make_background;
use crate::tempdir::TempDir;
use crate::workers::{start_unit, Counter, Readiness, Setup, Unit, IO_CHUNK};
use crate::{LoadError, LoadKind, LoadSpec};

/// How long `start` waits for every worker thread to report that it runs.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest UDP payload over IPv4.
const MAX_UDP_PAYLOAD: usize = 65_507;

/// How to run a load. Build it with `..LoadOptions::default()`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// Most bytes the `io` load keeps on disk at once (split between its
    /// workers). Default 256 MiB.
    pub disk_cap_bytes: u64,
    /// Where the private scratch directory `latlab-load-<pid>-<n>` is made
    /// (the `io` files, and the working directory and output file of an
    /// external command). Default: `std::env::temp_dir()` (`$TMPDIR` or /tmp).
    pub temp_root: PathBuf,
    /// CPUs the load may run on (every worker and the command are pinned to
    /// them); also the CPU count of the `full` profile. Empty (the default):
    /// every online CPU, whatever the affinity of the thread calling `start`.
    pub cpus: Vec<usize>,
    /// Nice value of every worker and of the external command, 0..=19. Default 0.
    pub nice: i32,
    /// Length of one interval of the per-interval throughput series. Default 1 s.
    pub sample_interval: Duration,
    /// Bytes per send of the `net` (TCP) and `udp` loads. Default 4096.
    pub net_message_bytes: usize,
    /// How long `start` watches an external command before calling it
    /// running; a command that ends within this time is an error. Default 300 ms.
    pub command_grace: Duration,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            disk_cap_bytes: 256 << 20,
            temp_root: std::env::temp_dir(),
            cpus: Vec::new(),
            nice: 0,
            sample_interval: Duration::from_secs(1),
            net_message_bytes: 4096,
            command_grace: Duration::from_millis(300),
        }
    }
}

/// What the sampler and the controller share.
#[derive(Default)]
struct Shared {
    /// Units per second of each kind in the last complete interval.
    latest: Mutex<Vec<f64>>,
    /// CPUs the command kept busy in the last complete interval.
    latest_cpus: Mutex<Option<f64>>,
    /// Per-pid CPU ticks of the command's process group.
    command_cpu: Mutex<Vec<(i32, u64)>>,
}

/// The supervisor's go signal: start time, baseline counts, each kind's counters.
type Go = (Instant, Vec<u64>, Vec<Vec<Arc<Counter>>>);

/// What the sampler thread returns.
#[derive(Default)]
struct Series {
    kinds: Vec<Vec<f64>>,
    command_cpus: Vec<f64>,
    /// Time, counts and command CPU seconds of the last tick.
    last: Option<(Instant, Vec<u64>, f64)>,
}

/// A last interval cut short by the stop still counts if it is this complete
/// (a run of 10 s in 1 s intervals then has 10 entries, not 9).
const LAST_INTERVAL_MIN: f64 = 0.9;

/// A load that is running: workers, an optional external command, a sampler.
///
/// Dropping it stops everything (workers joined, command's process group
/// killed, temp dir removed) but discards the report; call [`RunningLoad::stop`]
/// to get the report.
pub struct RunningLoad {
    spec: String,
    kinds: Vec<(LoadKind, usize)>,
    units: Vec<Unit>,
    stop: Arc<AtomicBool>,
    failure: Arc<Mutex<Option<String>>>,
    shared: Arc<Shared>,
    go: Option<mpsc::Sender<Go>>,
    sampler: Option<JoinHandle<Series>>,
    /// Set (after `stop`) to wake the supervisor from its wait for the next sample.
    wake_sampler: Arc<Event>,
    command: Option<ExternalCommand>,
    dir: Option<TempDir>,
    t0: Instant,
    baseline: Vec<u64>,
    command_cpu_baseline: f64,
    interval: Duration,
    warnings: Vec<String>,
}

impl std::fmt::Debug for RunningLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningLoad")
            .field("spec", &self.spec)
            .field("command", &self.command.as_ref().map(|c| &c.command))
            .field(
                "threads",
                &self.units.iter().map(|u| u.threads.len()).sum::<usize>(),
            )
            .finish_non_exhaustive()
    }
}

impl RunningLoad {
    /// Starts `spec` and returns once every worker thread runs at SCHED_OTHER
    /// and an external command has survived [`LoadOptions::command_grace`].
    /// On error everything already started is stopped and removed again.
    pub fn start(spec: &LoadSpec, options: &LoadOptions) -> Result<RunningLoad, LoadError> {
        validate(options)?;
        // Workers are pinned explicitly: threads inherit the affinity of the
        // thread that creates them, which may be a pinned measurement thread.
        let cpus = if options.cpus.is_empty() {
            housekeeping_cpus()
        } else {
            options.cpus.clone()
        };
        let kinds = spec.resolve(cpus.len());
        let count = |kind| {
            kinds
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(0, |&(_, n)| n)
        };
        let io_workers = count(LoadKind::Io) as u64;
        let io_file_cap = io_file_cap(options.disk_cap_bytes, io_workers)?;
        if count(LoadKind::Udp) > 0 && options.net_message_bytes > MAX_UDP_PAYLOAD {
            return Err(LoadError::BadOption {
                option: "net message size",
                reason: format!(
                    "{} bytes does not fit one UDP datagram; give at most {MAX_UDP_PAYLOAD}",
                    options.net_message_bytes
                ),
            });
        }
        let dir = if io_workers > 0 || spec.command().is_some() {
            Some(TempDir::create(&options.temp_root)?)
        } else {
            None
        };
        let ready = Arc::new(Readiness::default());
        let setup = Setup {
            nice: options.nice,
            cpus: cpus.clone(),
            dir: dir.as_ref().map(|d| d.path().to_owned()),
            io_file_cap,
            net_message_bytes: options.net_message_bytes,
            stop: Arc::new(AtomicBool::new(false)),
            ready: ready.clone(),
            failure: Arc::new(Mutex::new(None)),
        };
        let mut load = RunningLoad {
            spec: spec.to_string(),
            kinds: kinds.clone(),
            units: Vec::new(),
            stop: setup.stop.clone(),
            failure: setup.failure.clone(),
            shared: Arc::new(Shared::default()),
            go: None,
            sampler: None,
            wake_sampler: Arc::new(Event::new()),
            command: None,
            dir,
            t0: Instant::now(),
            baseline: Vec::new(),
            command_cpu_baseline: 0.0,
            interval: options.sample_interval,
            warnings: Vec::new(),
        };
        if io_workers > 0 && is_ram_fs(&options.temp_root) {
            load.warnings.push(format!(
                "{} is a RAM file system (tmpfs/ramfs): the io load exercised memory, not a disk; give a disk-backed temp dir",
                options.temp_root.display()
            ));
        }
        // The supervisor thread starts the command (the kernel's parent-death
        // signal follows the forking thread, so it must live as long as the
        // command) and then samples the counters.
        load.start_supervisor(spec, options.nice, &cpus)?;
        let command_started = Instant::now();
        for &(kind, n) in &kinds {
            for index in 0..n {
                load.units.push(start_unit(kind, index, &setup)?);
            }
        }
        drop(setup);
        let threads: usize = load.units.iter().map(|u| u.threads.len()).sum();
        if !ready.wait_for(threads, READY_TIMEOUT)? {
            return Err(LoadError::Start {
                reason: format!(
                    "not every worker thread was running after {} s (machine overloaded? try fewer workers)",
                    READY_TIMEOUT.as_secs()
                ),
            });
        }
        if let Some(cmd) = &load.command {
            while command_started.elapsed() < options.command_grace {
                if let Some(ended) = cmd.poll() {
                    return Err(cmd.failure(&ended));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if let Some(ended) = cmd.poll() {
                return Err(cmd.failure(&ended));
            }
        }
        load.check()?;
        load.t0 = Instant::now();
        load.baseline = load.read_counters();
        if let Some(cmd) = &load.command {
            let mut seen = load
                .shared
                .command_cpu
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            load.command_cpu_baseline = group_cpu_seconds(cmd.pid, &mut seen);
        }
        if let Some(go) = &load.go {
            let _ = go.send((load.t0, load.baseline.clone(), load.counters()));
        }
        Ok(load)
    }

    /// Starts the supervisor thread; if the spec has a command, starts it from there.
    fn start_supervisor(
        &mut self,
        spec: &LoadSpec,
        nice: i32,
        cpus: &[usize],
    ) -> Result<(), LoadError> {
        let (go_tx, go_rx) = mpsc::channel::<Go>();
        let (cmd_tx, cmd_rx) = mpsc::channel();
        let command = spec.command().map(|c| {
            let dir = self
                .dir
                .as_ref()
                .expect("a command gets a temp dir")
                .path()
                .to_owned();
            (c.to_owned(), dir)
        });
        let cpus = cpus.to_vec();
        let stop = self.stop.clone();
        let wake = self.wake_sampler.clone();
        let shared = self.shared.clone();
        let interval = self.interval;
        let handle = std::thread::Builder::new()
            .name("ld-supervisor".into())
            .spawn(move || {
                if let Err(e) = make_background("supervisor", nice) {
                    let _ = cmd_tx.send(Err(e));
                    return Series::default();
                }
                let mut watched = None;
                if let Some((command, dir)) = command {
                    let started = ExternalCommand::spawn(&command, &dir, nice, &cpus);
                    if let Ok(c) = &started {
                        watched = Some(Watched {
                            pid: c.pid,
                            started: Instant::now(),
                            ended: c.ended.clone(),
                        });
                    }
                    let failed = started.is_err();
                    let _ = cmd_tx.send(started.map(Some));
                    if failed {
                        return Series::default();
                    }
                } else {
                    let _ = cmd_tx.send(Ok(None));
                }
                let Ok((t0, baseline, counters)) = go_rx.recv() else {
                    return Series::default();
                };
                let until = Until {
                    stop: &stop,
                    wake: &wake,
                };
                sample(until, &shared, interval, &counters, t0, baseline, watched)
            })
            .map_err(|e| LoadError::Start {
                reason: format!("cannot create the supervisor thread: {e}"),
            })?;
        self.sampler = Some(handle);
        self.go = Some(go_tx);
        match cmd_rx.recv() {
            Ok(Ok(cmd)) => self.command = cmd,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(LoadError::Start {
                    reason: "the supervisor thread ended before it reported (a latlab bug, please report it)".into(),
                })
            }
        }
        Ok(())
    }

    /// Each kind's counters, in `self.kinds` order.
    fn counters(&self) -> Vec<Vec<Arc<Counter>>> {
        self.kinds
            .iter()
            .map(|&(kind, _)| {
                self.units
                    .iter()
                    .filter(|u| u.kind == kind)
                    .map(|u| u.counter.clone())
                    .collect()
            })
            .collect()
    }

    /// Sum of each kind's counters, in `self.kinds` order.
    fn read_counters(&self) -> Vec<u64> {
        sums(&self.counters())
    }

    /// Fails if a worker has died or the external command has exited with a
    /// failure. A command that exited with status 0 is not an error here; the
    /// report notes it.
    pub fn check(&self) -> Result<(), LoadError> {
        if let Some(what) = self
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(LoadError::WorkerDied { what });
        }
        if !self.stop.load(Ordering::Relaxed) {
            for unit in &self.units {
                if unit.threads.iter().any(JoinHandle::is_finished) {
                    return Err(LoadError::WorkerDied {
                        what: format!(
                            "{} load worker {} stopped unexpectedly (a latlab bug, please report it)",
                            unit.kind, unit.index
                        ),
                    });
                }
            }
        }
        if let Some(cmd) = &self.command {
            if let Some(ended) = cmd.poll() {
                if !ended.success() {
                    return Err(cmd.failure(&ended));
                }
            }
        }
        Ok(())
    }

    /// Work each kind has counted since the load started running, in report order.
    pub fn totals(&self) -> Vec<(LoadKind, u64)> {
        self.kinds
            .iter()
            .zip(self.read_counters())
            .zip(&self.baseline)
            .map(|((&(kind, _), now), base)| (kind, now.saturating_sub(*base)))
            .collect()
    }

    /// Seconds since the load started running.
    pub fn elapsed(&self) -> Duration {
        self.t0.elapsed()
    }

    /// One line for a progress display: each kind's throughput in the last
    /// complete interval, e.g. `cpu 1.2 Gops/s  io 85 MB/s`.
    pub fn progress_line(&self) -> String {
        let latest = self
            .shared
            .latest
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut parts: Vec<String> = self
            .kinds
            .iter()
            .zip(latest.iter().chain(std::iter::repeat(&f64::NAN)))
            .map(|(&(kind, _), &r)| {
                if r.is_nan() {
                    format!("{kind} -")
                } else {
                    format!("{kind} {}", crate::report::rate(r, kind.unit()))
                }
            })
            .collect();
        if self.command.is_some() {
            match *self
                .shared
                .latest_cpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
            {
                Some(c) => parts.push(format!("command {c:.2} CPUs")),
                None => parts.push("command -".to_owned()),
            }
        }
        if parts.is_empty() {
            "no load".to_owned()
        } else {
            parts.join("  ")
        }
    }

    /// Stops every worker and the command, removes the temp dir and returns
    /// what the load got done. Fails if a worker died or the command exited
    /// with a failure during the run (everything is still stopped and removed).
    pub fn stop(mut self) -> Result<LoadReport, LoadError> {
        let duration = self.t0.elapsed();
        let finals = self.read_counters();
        let command_cpu = self.command.as_ref().map(|cmd| {
            let mut seen = self
                .shared
                .command_cpu
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            group_cpu_seconds(cmd.pid, &mut seen) - self.command_cpu_baseline
        });
        let command_ended = self.command.as_ref().and_then(ExternalCommand::poll);
        let health = self.check();
        let (mut series, joined) = self.shutdown();
        if let Some((last_t, last, last_cpu)) = series.last.take() {
            let dt = (self.t0 + duration)
                .saturating_duration_since(last_t)
                .as_secs_f64();
            if dt >= LAST_INTERVAL_MIN * self.interval.as_secs_f64() {
                for ((s, f), l) in series.kinds.iter_mut().zip(&finals).zip(&last) {
                    s.push(f.saturating_sub(*l) as f64 / dt);
                }
                if let Some(cpu) = command_cpu {
                    let busy = (cpu + self.command_cpu_baseline - last_cpu).max(0.0) / dt;
                    series.command_cpus.push(busy);
                }
            }
        }
        health?;
        joined?;
        let duration_s = duration.as_secs_f64();
        let kinds = self
            .kinds
            .iter()
            .enumerate()
            .map(|(i, &(kind, workers))| {
                let total = finals[i].saturating_sub(self.baseline.get(i).copied().unwrap_or(0));
                let series = series.kinds.get(i).cloned().unwrap_or_default();
                let per_kib = matches!(kind, LoadKind::Net | LoadKind::Udp).then(|| {
                    series
                        .iter()
                        .map(|&r| (r > 0.0).then(|| 1024.0 * 1e6 / r))
                        .collect()
                });
                KindReport {
                    kind: kind.name().to_owned(),
                    workers,
                    unit: kind.unit().to_owned(),
                    total,
                    per_second: if duration_s > 0.0 {
                        total as f64 / duration_s
                    } else {
                        0.0
                    },
                    series,
                    us_per_kib: per_kib,
                }
            })
            .collect();
        let external = self.command.as_ref().map(|cmd| {
            let cpu_seconds = command_cpu.unwrap_or(0.0).max(0.0);
            CommandReport {
                command: cmd.command.clone(),
                cpu_seconds,
                cpus_busy: if duration_s > 0.0 {
                    cpu_seconds / duration_s
                } else {
                    0.0
                },
                series: series.command_cpus.clone(),
                ended: command_ended.map(|e| e.describe()),
                ended_after_s: command_ended.map(|e| e.after_s),
            }
        });
        let command = self.command.as_ref().map(|c| c.command.clone());
        if let Some(ended) = command_ended {
            self.warnings.push(format!(
                "the load command {} after {:.1} s; the rest of the run had no command load",
                ended.describe(),
                ended.after_s
            ));
        }
        self.finish_cleanup()?;
        Ok(LoadReport {
            spec: self.spec.clone(),
            command,
            duration_s,
            interval_s: self.interval.as_secs_f64(),
            kinds,
            external,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// Stops workers, command and sampler; returns the sampled series and the
    /// first worker error (or panic) seen while joining.
    fn shutdown(&mut self) -> (Series, Result<(), LoadError>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(cmd) = &mut self.command {
            cmd.stop();
        }
        self.go = None;
        let mut joined = Ok(());
        for unit in self.units.drain(..) {
            for thread in unit.threads {
                let result = match thread.join() {
                    Ok(r) => r,
                    Err(_) => Err(LoadError::WorkerPanicked {
                        kind: unit.kind.name(),
                        index: unit.index,
                    }),
                };
                if joined.is_ok() {
                    joined = result;
                }
            }
        }
        let series = match self.sampler.take() {
            Some(handle) => {
                self.wake_sampler.set();
                handle.join().unwrap_or_default()
            }
            None => Series::default(),
        };
        (series, joined)
    }

    /// Removes the temp dir (after the command, which may have files open in it, is gone).
    fn finish_cleanup(&mut self) -> Result<(), LoadError> {
        self.command = None;
        match self.dir.take() {
            Some(dir) => dir.remove(),
            None => Ok(()),
        }
    }
}

impl Drop for RunningLoad {
    fn drop(&mut self) {
        let _ = self.shutdown();
        let _ = self.finish_cleanup();
    }
}

/// `f_type` of tmpfs (linux/magic.h).
const TMPFS_MAGIC: u32 = 0x0102_1994;
/// `f_type` of ramfs (linux/magic.h; not in the libc crate).
const RAMFS_MAGIC: u32 = 0x8584_58f6;

/// True when `path` is on tmpfs or ramfs (memory, not a disk).
fn is_ram_fs(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills a plain-data struct from a valid C string.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c_path.as_ptr(), &mut st) != 0 {
            return false;
        }
        // f_type is a signed long on glibc and an unsigned one on musl (32
        // bits on 32-bit targets); the magic numbers are 32-bit values.
        let f_type = st.f_type as u32;
        f_type == TMPFS_MAGIC || f_type == RAMFS_MAGIC
    }
}

/// Refuses options the loads cannot work with, before anything starts.
pub(crate) fn validate(options: &LoadOptions) -> Result<(), LoadError> {
    if !(0..=19).contains(&options.nice) {
        return Err(LoadError::BadOption {
            option: "nice",
            reason: format!(
                "{} is outside 0..=19: a load never gets more CPU priority than nice 0; give 0 to 19",
                options.nice
            ),
        });
    }
    if options.sample_interval < Duration::from_millis(10) {
        return Err(LoadError::BadOption {
            option: "sample interval",
            reason: format!(
                "{:?} is too short; give 10 ms or more",
                options.sample_interval
            ),
        });
    }
    if options.net_message_bytes == 0 || options.net_message_bytes > 16 << 20 {
        return Err(LoadError::BadOption {
            option: "net message size",
            reason: format!("{} bytes; give 1 byte to 16 MiB", options.net_message_bytes),
        });
    }
    if let Err(e) = CpuSet::from_cpus(&options.cpus) {
        return Err(LoadError::BadOption {
            option: "cpus",
            reason: e.to_string(),
        });
    }
    Ok(())
}

/// The largest file one io worker writes: a power-of-two multiple of the chunk
/// size that fits the worker's share of the disk cap.
fn io_file_cap(disk_cap: u64, workers: u64) -> Result<u64, LoadError> {
    if workers == 0 {
        return Ok(0);
    }
    let share = disk_cap / workers;
    if share < 4096 {
        return Err(LoadError::BadOption {
            option: "disk cap",
            reason: format!(
                "{disk_cap} bytes leaves under 4 KiB per io worker; raise the cap or run fewer io workers"
            ),
        });
    }
    let chunk = IO_CHUNK.min(share);
    let mut cap = chunk;
    while cap * 2 <= share {
        cap *= 2;
    }
    Ok(cap)
}

/// The sum of each kind's counters.
fn sums(counters: &[Vec<Arc<Counter>>]) -> Vec<u64> {
    counters
        .iter()
        .map(|kind| kind.iter().map(|c| c.get()).sum())
        .collect()
}

/// The external command as the sampler watches it.
struct Watched {
    pid: libc::pid_t,
    started: Instant,
    ended: Arc<OnceLock<Ended>>,
}

/// What ends the supervisor's loop: `stop`, and the event set after it that
/// wakes the supervisor from its wait for the next sample.
#[derive(Clone, Copy)]
struct Until<'a> {
    stop: &'a AtomicBool,
    wake: &'a Event,
}

/// The supervisor's loop: every `interval`, each kind's rate and the command's
/// CPU use, until `stop`. Only complete intervals are recorded.
fn sample(
    until: Until<'_>,
    shared: &Shared,
    interval: Duration,
    counters: &[Vec<Arc<Counter>>],
    t0: Instant,
    baseline: Vec<u64>,
    command: Option<Watched>,
) -> Series {
    let mut series = Series {
        kinds: vec![Vec::new(); counters.len()],
        command_cpus: Vec::new(),
        last: None,
    };
    let cpu = |shared: &Shared, pid| {
        let mut seen = shared.command_cpu.lock().unwrap_or_else(|p| p.into_inner());
        group_cpu_seconds(pid, &mut seen)
    };
    let mut prev = baseline;
    let mut prev_cpu = command.as_ref().map_or(0.0, |c| cpu(shared, c.pid));
    let mut prev_t = t0;
    let mut next = t0 + interval;
    loop {
        loop {
            if until.stop.load(Ordering::Relaxed) {
                series.last = Some((prev_t, prev, prev_cpu));
                return series;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            // latlab-rt's timed wait, not std's park_timeout: on 32-bit ARM
            // std's ends at the whole second before its deadline, and this
            // loop spun on a CPU (see latlab_rt::wait).
            until
                .wake
                .wait_timeout((next - now).min(Duration::from_millis(50)));
        }
        let now = Instant::now();
        let dt = (now - prev_t).as_secs_f64();
        let cur = sums(counters);
        let rates: Vec<f64> = cur
            .iter()
            .zip(&prev)
            .map(|(c, p)| c.saturating_sub(*p) as f64 / dt)
            .collect();
        for (s, r) in series.kinds.iter_mut().zip(&rates) {
            s.push(*r);
        }
        *shared.latest.lock().unwrap_or_else(|p| p.into_inner()) = rates;
        if let Some(Watched {
            pid,
            started,
            ended,
        }) = &command
        {
            let c = cpu(shared, *pid);
            let busy = (c - prev_cpu).max(0.0) / dt;
            series.command_cpus.push(busy);
            *shared.latest_cpus.lock().unwrap_or_else(|p| p.into_inner()) = Some(busy);
            prev_cpu = c;
            poll_pid(*pid, *started, ended);
        }
        prev = cur;
        prev_t = now;
        next += interval;
        if next <= now {
            // The sampler was held up for more than an interval (overloaded
            // machine): start afresh rather than take a burst of tiny intervals.
            next = now + interval;
        }
    }
}
