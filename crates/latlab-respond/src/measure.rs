//! The measurement: the responder process and the stimulus loop.
//!
//! The responder is forked from the calling thread. Before the fork every
//! channel is set up; after it the child only makes system calls (no
//! allocation: the parent may have other threads holding allocator locks),
//! pins itself, takes its real-time policy, locks its memory, tells the
//! stimulus it is ready through a shared page and then blocks on the event.
//! On each wake-up it stores its CLOCK_MONOTONIC time in the shared page and
//! answers on the reverse channel.
//!
//! The stimulus (the calling thread, pinned to another CPU when there is
//! one, one priority below the responder) timestamps right before sending
//! and right after the answer arrives (or takes the GPIO edge's kernel
//! timestamp). One-way latency is the responder's wake time minus the send
//! time; round trip is the answer time minus the send time.
//!
//! The stimulus keeps its own clock, as an external event does: the
//! responder sleeps the whole gap, and whatever the CPU ran meanwhile has
//! evicted its data, so each wake-up pays its cache and TLB misses. A
//! ping-pong such as rt-tests' sigwaittest, where the receiver paces the
//! sender and ran a few microseconds before each measured wake-up, measures
//! the warm path instead (README, `latlab respond`, has the figures).

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use latlab_measure::series::{SecondSeries, SeriesPoint};
use latlab_measure::stats::Stats;
use latlab_measure::units::{format_ns, parse_duration};
use latlab_measure::worst::{WorstSample, WorstSamples};
use latlab_rt::clock::{monotonic_ns, sleep_until};
use latlab_rt::rng::Rng;
use latlab_rt::sched::{self, Policy};

use crate::channel::{self, Channel, Receiver, Sender, Waited};
use crate::gpio::GpioWiring;
use crate::RespondError;

/// How many worst samples each latency keeps.
pub const WORST_KEPT: usize = 20;

/// Time between two stimuli (send to send).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Gap {
    /// Always the same gap: a fixed rate.
    Fixed {
        /// The gap, ns.
        ns: u64,
    },
    /// Uniformly random gaps, so the event is not phase-locked to the tick.
    Random {
        /// Shortest gap, ns.
        min_ns: u64,
        /// Longest gap, ns.
        max_ns: u64,
    },
}

impl Gap {
    /// The shortest gap, ns.
    pub fn min_ns(&self) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, .. } => min_ns,
        }
    }

    /// The mean gap, ns.
    pub fn mean_ns(&self) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, max_ns } => (min_ns + max_ns) / 2,
        }
    }
}

impl std::str::FromStr for Gap {
    type Err = String;

    /// `1ms` (fixed) or `500us..1500us` (random, uniform).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once("..") {
            Some((lo, hi)) => {
                let (min_ns, max_ns) = (parse_duration(lo)?, parse_duration(hi)?);
                if min_ns == 0 || max_ns < min_ns {
                    return Err(format!(
                        "invalid gap range {text:?}: need 0 < MIN <= MAX, e.g. 500us..1500us"
                    ));
                }
                Ok(Gap::Random { min_ns, max_ns })
            }
            None => {
                let ns = parse_duration(text)?;
                if ns == 0 {
                    return Err("the gap must be above 0 (e.g. 1ms)".into());
                }
                Ok(Gap::Fixed { ns })
            }
        }
    }
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Gap::Fixed { ns } => write!(f, "{}", format_ns(ns)),
            Gap::Random { min_ns, max_ns } => {
                write!(f, "random {}..{}", format_ns(min_ns), format_ns(max_ns))
            }
        }
    }
}

/// A measurement, fully resolved.
#[derive(Debug, Clone)]
pub struct RespondConfig {
    /// Stimulus channel (and answer channel unless `gpio` is given).
    pub channel: Channel,
    /// GPIO wiring for the answer (the paper's toggle), if any.
    pub gpio: Option<GpioWiring>,
    /// Stop after this many events.
    pub count: Option<u64>,
    /// Stop after this long, ns.
    pub duration_ns: Option<u64>,
    /// Gap between stimuli.
    pub gap: Gap,
    /// Responder policy (the stimulus runs one priority below it).
    pub policy: Policy,
    /// Responder priority.
    pub priority: i32,
    /// CPU of the responder.
    pub responder_cpu: usize,
    /// CPU of the stimulus.
    pub stimulus_cpu: usize,
    /// Lock the responder's memory (mlockall).
    pub lock_memory: bool,
    /// An event not answered within this long is counted lost, ns.
    pub timeout_ns: u64,
}

/// Where a side ran and what it really got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    /// CPU it was pinned to.
    pub cpu: usize,
    /// Policy it really had (`null` if unknown).
    pub policy: Option<Policy>,
    /// Priority it really had.
    pub priority: i32,
    /// Its memory was locked.
    pub mlocked: bool,
}

/// The progress shown while measuring.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Seconds since the first event.
    pub elapsed_s: f64,
    /// Events answered.
    pub answered: u64,
    /// Events lost so far.
    pub lost: u64,
    /// Largest one-way latency so far, ns.
    pub max_one_way_ns: u64,
    /// Largest round trip so far, ns.
    pub max_round_trip_ns: u64,
}

/// Hooks into a measurement (see [`latlab_rt::monitor::Monitor`]): start a
/// load when the responder is ready, show progress about four times a
/// second, stop early with an error. [`Quiet`] does nothing.
pub use latlab_rt::monitor::{Monitor, Silent as Quiet};

/// One latency: all samples, the worst, the per-second series.
#[derive(Debug, Clone)]
pub struct LatencyOutput {
    /// Every sample.
    pub stats: Stats,
    /// The worst samples.
    pub worst: WorstSamples,
    /// Per-second max and p99.
    pub series: Vec<SeriesPoint>,
}

/// The raw outcome of a measurement.
#[derive(Debug, Clone)]
pub struct RespondOutput {
    /// Events sent.
    pub sent: u64,
    /// Events answered in time.
    pub answered: u64,
    /// Events not answered within the timeout.
    pub lost: u64,
    /// Stimulus send to responder wake-up.
    pub one_way: LatencyOutput,
    /// Stimulus send to answer received.
    pub round_trip: LatencyOutput,
    /// The round trip ends at the kernel's timestamp of a GPIO edge.
    pub kernel_timestamps: bool,
    /// With `--gpio`: how the kernel's edge timestamps sat against the
    /// stimulus's own clock.
    pub gpio_edges: Option<GpioEdges>,
    /// CLOCK_MONOTONIC of the first event, ns.
    pub start_ns: u64,
    /// CLOCK_MONOTONIC at the end, ns.
    pub end_ns: u64,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// The responder.
    pub responder: Placement,
    /// The stimulus.
    pub stimulus: Placement,
}

/// How the kernel's GPIO edge timestamps sat against the stimulus's own
/// clock. An edge's CLOCK_MONOTONIC timestamp must lie between the send
/// and the stimulus's read of the event; one outside (a line reporting
/// another clock, a driver stamping after the fact) is not used: that
/// round trip ends at the read instead, and the edge is counted here.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct GpioEdges {
    /// Edges whose timestamp lay between the send and the read: their
    /// round trip ends at the kernel's timestamp.
    pub within: u64,
    /// Edges whose timestamp lay outside: their round trip ends at the read.
    pub outside: u64,
    /// Largest delay from an edge's timestamp to the stimulus's read, ns
    /// (what timing the edge in user space would have added).
    pub max_edge_to_read_ns: u64,
    /// Mean of that delay, ns.
    pub mean_edge_to_read_ns: u64,
    /// Sum of those delays, ns (results of several runs merge with it).
    pub sum_edge_to_read_ns: u64,
}

impl GpioEdges {
    /// Where the round trip of one answer ends: the kernel's edge
    /// timestamp when it lies between `sent` and `read`, else `read`.
    pub fn end(&mut self, sent: u64, kernel_ts: u64, read: u64) -> u64 {
        if (sent..=read).contains(&kernel_ts) {
            let late = read - kernel_ts;
            self.within += 1;
            self.max_edge_to_read_ns = self.max_edge_to_read_ns.max(late);
            self.sum_edge_to_read_ns += late;
            self.mean_edge_to_read_ns = self.sum_edge_to_read_ns / self.within;
            kernel_ts
        } else {
            self.outside += 1;
            read
        }
    }
}

/// The page both processes share.
#[repr(C)]
struct Shared {
    ready: AtomicU32,
    failed_step: AtomicU32,
    failed_errno: AtomicI32,
    policy: AtomicI32,
    priority: AtomicI32,
    mlocked: AtomicU32,
    responses: AtomicU64,
    wake_ns: AtomicU64,
}

struct SharedPage(*mut Shared);

impl SharedPage {
    fn new(cpu: usize) -> Result<Self, RespondError> {
        // SAFETY: an anonymous shared mapping; checked for failure below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(RespondError::Responder {
                cpu,
                step: "mapping the shared page",
                error: std::io::Error::last_os_error(),
                hint: "",
            });
        }
        // Zero-filled memory is a valid Shared (all atomics at 0).
        Ok(SharedPage(ptr.cast()))
    }

    fn get(&self) -> &Shared {
        // SAFETY: the mapping lives as long as self and is only accessed through atomics.
        unsafe { &*self.0 }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: the page was mapped in new() and is no longer referenced.
        unsafe { libc::munmap(self.0.cast(), 4096) };
    }
}

/// Steps of the responder's set-up, as reported through the shared page.
const STEPS: [(&str, &str); 6] = [
    ("", ""),
    (
        "pinning to its CPU",
        ": is the CPU online and in this process's cpuset?",
    ),
    (
        "setting its real-time policy",
        ": run as root or grant CAP_SYS_NICE, or use --allow-unprivileged",
    ),
    (
        "locking its memory (mlockall)",
        ": run as root or grant CAP_IPC_LOCK, or use --allow-unprivileged",
    ),
    ("waiting for the event", ""),
    ("answering", ""),
];

/// What the forked responder needs; plain data only.
#[derive(Clone, Copy)]
struct ResponderPlan {
    parent_pid: i32,
    cpu: usize,
    policy: i32,
    priority: i32,
    lock_memory: bool,
    event_in: Receiver,
    answer: Sender,
    close: [RawFd; 8],
    close_count: usize,
}

fn report_failure(shared: &Shared, step: u32, errno: i32) -> ! {
    shared.failed_errno.store(errno, Ordering::SeqCst);
    shared.failed_step.store(step, Ordering::SeqCst);
    // SAFETY: _exit skips destructors and atexit handlers, as a forked child must.
    unsafe { libc::_exit(1) }
}

/// The responder process. Only system calls: no allocation, no panics.
fn responder_main(plan: ResponderPlan, shared: &Shared) -> ! {
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: async-signal-safe system calls on plain data.
    unsafe {
        // Ctrl-C (and a SIGTERM to the whole group) reach the responder too:
        // the stimulus winds down, writes the results and kills the responder
        // itself (and PR_SET_PDEATHSIG kills it if the stimulus dies first).
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != plan.parent_pid {
            libc::_exit(0);
        }
        for &fd in &plan.close[..plan.close_count.min(plan.close.len())] {
            libc::close(fd);
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(plan.cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            report_failure(shared, 1, errno());
        }
        let param = latlab_rt::sched::param(plan.priority);
        if latlab_rt::sched::setscheduler(0, plan.policy, &param) != 0 {
            report_failure(shared, 2, errno());
        }
        if plan.lock_memory {
            if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) != 0 {
                report_failure(shared, 3, errno());
            }
            shared.mlocked.store(1, Ordering::SeqCst);
        }
        let mut got = latlab_rt::sched::param(0);
        latlab_rt::sched::getparam(0, &mut got);
        shared
            .policy
            .store(latlab_rt::sched::getscheduler(0), Ordering::SeqCst);
        shared.priority.store(got.sched_priority, Ordering::SeqCst);
    }
    shared.ready.store(1, Ordering::SeqCst);
    let mut level = false;
    loop {
        match plan.event_in.wait(None) {
            Ok(Waited::Event(_)) => {}
            Ok(Waited::Timeout) | Err(libc::EINTR) => continue,
            // SAFETY: see report_failure.
            Ok(Waited::Closed) => unsafe { libc::_exit(0) },
            Err(e) => report_failure(shared, 4, e),
        }
        let woke = monotonic_ns();
        shared.wake_ns.store(woke, Ordering::Relaxed);
        shared.responses.fetch_add(1, Ordering::Release);
        level = !level;
        if let Err(e) = plan.answer.send(level) {
            report_failure(shared, 5, e);
        }
    }
}

/// The running responder; killed and reaped on drop.
struct Child {
    pid: i32,
    reaped: bool,
}

impl Child {
    /// `Some(status in words)` once the child has ended.
    fn ended(&mut self) -> Option<String> {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if rc == self.pid {
            self.reaped = true;
            Some(if libc::WIFSIGNALED(status) {
                format!("killed by signal {}", libc::WTERMSIG(status))
            } else {
                format!("exit status {}", libc::WEXITSTATUS(status))
            })
        } else {
            None
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: our own child, killed and reaped.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// Restores the calling thread's policy, affinity and signal mask.
struct ThreadState {
    policy: Option<Policy>,
    priority: i32,
    affinity: Vec<usize>,
    mask: libc::sigset_t,
}

impl ThreadState {
    fn save() -> Self {
        let (policy, priority) = sched::current_thread();
        // SAFETY: reading the current mask into a local.
        let mask = unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
            mask
        };
        ThreadState {
            policy,
            priority,
            affinity: sched::current_affinity(),
            mask,
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        if let Some(policy) = self.policy {
            let _ = sched::set_current_thread(policy, self.priority);
        }
        // SAFETY: cpu_set_t and the saved mask are plain data.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in &self.affinity {
                libc::CPU_SET(cpu, &mut set);
            }
            if !self.affinity.is_empty() {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut());
        }
    }
}

impl Gap {
    /// The next gap in ns: the fixed one, or one drawn uniformly from the
    /// random range (independent of the timer tick).
    fn next_ns(&self, rng: &mut Rng) -> u64 {
        match *self {
            Gap::Fixed { ns } => ns,
            Gap::Random { min_ns, max_ns } => rng.range(min_ns, max_ns),
        }
    }
}

/// Runs the measurement until `count` events, `duration_ns`, or Ctrl-C
/// (see [`latlab_rt::stop`]); the figures cover what ran.
pub fn measure(
    config: &RespondConfig,
    observer: &mut dyn Monitor<Progress>,
) -> Result<RespondOutput, RespondError> {
    let mut wires = channel::build(&config.channel, config.gpio.as_ref())?;
    let shared_page = SharedPage::new(config.responder_cpu)?;
    let shared = shared_page.get();
    let saved = ThreadState::save();
    // SAFETY: plain system calls on locals.
    let (parent_pid, parent_tid) = unsafe { (libc::getpid(), libc::gettid()) };
    if wires.signals {
        // Both signals are blocked in the stimulus thread, and so in the
        // forked responder, and taken with sigtimedwait/sigwaitinfo.
        // SAFETY: sigset is a local.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, channel::STIMULUS_SIGNAL);
            libc::sigaddset(&mut set, channel::ANSWER_SIGNAL);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        wires.answer = Sender::Signal {
            pid: parent_pid,
            tid: parent_tid,
            sig: channel::ANSWER_SIGNAL,
        };
    }
    let mut plan = ResponderPlan {
        parent_pid,
        cpu: config.responder_cpu,
        policy: config.policy.as_raw(),
        priority: if config.policy.is_realtime() {
            config.priority
        } else {
            0
        },
        lock_memory: config.lock_memory,
        event_in: wires.event_in,
        answer: wires.answer,
        close: [-1; 8],
        close_count: 0,
    };
    for fd in wires.stimulus_only.iter().take(plan.close.len()) {
        plan.close[plan.close_count] = fd.as_raw_fd();
        plan.close_count += 1;
    }

    // SAFETY: the child runs only responder_main, which makes system calls
    // on plain data and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(RespondError::Responder {
            cpu: config.responder_cpu,
            step: "fork",
            error: std::io::Error::last_os_error(),
            hint: "",
        });
    }
    if pid == 0 {
        responder_main(plan, shared);
    }
    let mut child = Child { pid, reaped: false };
    wires.responder_only.clear();
    if wires.signals {
        wires.stimulus = Sender::Signal {
            pid,
            tid: pid,
            sig: channel::STIMULUS_SIGNAL,
        };
    }

    // Wait for the responder to be ready (or to report why not).
    let deadline = monotonic_ns() + 10_000_000_000;
    while shared.ready.load(Ordering::SeqCst) == 0 {
        let failed = shared.failed_step.load(Ordering::SeqCst);
        if failed != 0 || child.ended().is_some() || monotonic_ns() > deadline {
            let (step, hint) = STEPS
                .get(failed as usize)
                .copied()
                .unwrap_or(("starting", ""));
            return Err(RespondError::Responder {
                cpu: config.responder_cpu,
                step: if failed == 0 { "starting" } else { step },
                error: std::io::Error::from_raw_os_error(
                    shared.failed_errno.load(Ordering::SeqCst),
                ),
                hint,
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let responder = Placement {
        cpu: config.responder_cpu,
        policy: Policy::from_raw(shared.policy.load(Ordering::SeqCst)),
        priority: shared.priority.load(Ordering::SeqCst),
        mlocked: shared.mlocked.load(Ordering::SeqCst) != 0,
    };

    let settle = observer.ready().map_err(RespondError::Observer)?;
    std::thread::sleep(settle);

    sched::pin_current_thread(config.stimulus_cpu)?;
    let stimulus_priority = (config.priority - 1).max(1);
    sched::set_current_thread(config.policy, stimulus_priority)?;
    let (policy, priority) = sched::current_thread();
    let stimulus = Placement {
        cpu: config.stimulus_cpu,
        policy,
        priority,
        mlocked: latlab_rt::memory::is_locked(),
    };
    latlab_rt::memory::prefault_stack(64 * 1024);

    let per_second = (1_000_000_000 / config.gap.min_ns().max(1) + 2).min(1_000_000) as usize;
    let mut one_way = (
        Stats::new(),
        WorstSamples::new(WORST_KEPT),
        SecondSeries::new(per_second),
    );
    let mut round_trip = (
        Stats::new(),
        WorstSamples::new(WORST_KEPT),
        SecondSeries::new(per_second),
    );
    let mut rng = Rng::from_clock();
    let (mut sent, mut answered, mut lost) = (0u64, 0u64, 0u64);
    let mut need_drain = false;
    let mut interrupted = false;
    let mut gpio_edges = GpioEdges::default();
    let start = monotonic_ns();
    let mut next = start;
    let mut last_progress = start;
    let end_at = config.duration_ns.map(|d| start + d);
    let result: Result<(), RespondError> = loop {
        if latlab_rt::stop::requested() {
            interrupted = true;
            break Ok(());
        }
        if config.count.is_some_and(|c| sent >= c) {
            break Ok(());
        }
        if end_at.is_some_and(|end| monotonic_ns() >= end) {
            break Ok(());
        }
        sleep_until(next);
        if latlab_rt::stop::requested() {
            interrupted = true;
            break Ok(());
        }
        if need_drain {
            wires.answer_in.drain();
            need_drain = false;
        }
        let before = shared.responses.load(Ordering::Acquire);
        let t0 = monotonic_ns();
        if let Err(e) = wires.stimulus.send(false) {
            break Err(RespondError::Stimulus {
                cpu: config.stimulus_cpu,
                step: "sending the event",
                events: sent,
                error: std::io::Error::from_raw_os_error(e),
            });
        }
        sent += 1;
        let timeout_at = t0 + config.timeout_ns;
        let waited = loop {
            let now = monotonic_ns();
            match wires.answer_in.wait(Some(timeout_at.saturating_sub(now))) {
                Err(libc::EINTR) if monotonic_ns() < timeout_at => continue,
                Err(libc::EINTR) => break Ok(Waited::Timeout),
                other => break other,
            }
        };
        let t2 = monotonic_ns();
        match waited {
            Ok(Waited::Event(kernel_ts)) => {
                let end = match kernel_ts {
                    Some(ts) => gpio_edges.end(t0, ts, t2),
                    None => t2,
                };
                let offset = t0 - start;
                let index = sent - 1;
                let sample = |latency_ns| WorstSample {
                    latency_ns,
                    cycle: index,
                    intended_ns: t0,
                    offset_s: offset as f64 / 1e9,
                    cpu: config.responder_cpu,
                };
                if shared.responses.load(Ordering::Acquire) > before {
                    let ow = shared.wake_ns.load(Ordering::Relaxed).saturating_sub(t0);
                    one_way.0.record(ow);
                    one_way.1.offer(sample(ow));
                    one_way.2.record(offset, ow);
                }
                let rt = end.saturating_sub(t0);
                round_trip.0.record(rt);
                round_trip.1.offer(sample(rt));
                round_trip.2.record(offset, rt);
                answered += 1;
            }
            Ok(Waited::Timeout) => {
                lost += 1;
                need_drain = true;
                if let Some(status) = child.ended() {
                    break Err(died(&child, status, answered));
                }
            }
            Ok(Waited::Closed) => {
                let status = child.ended().unwrap_or_else(|| "closed its end".into());
                break Err(died(&child, status, answered));
            }
            Err(e) => {
                break Err(RespondError::Stimulus {
                    cpu: config.stimulus_cpu,
                    step: "waiting for the answer",
                    events: sent,
                    error: std::io::Error::from_raw_os_error(e),
                })
            }
        }
        let now = monotonic_ns();
        next = next.saturating_add(config.gap.next_ns(&mut rng)).max(now);
        if now - last_progress >= 250_000_000 {
            last_progress = now;
            let progress = Progress {
                elapsed_s: (now - start) as f64 / 1e9,
                answered,
                lost,
                max_one_way_ns: one_way.0.max(),
                max_round_trip_ns: round_trip.0.max(),
            };
            if let Err(message) = observer.progress(&progress) {
                break Err(RespondError::Observer(message));
            }
        }
    };
    let end_ns = monotonic_ns();
    drop(saved);
    drop(child);
    result?;
    Ok(RespondOutput {
        sent,
        answered,
        lost,
        one_way: LatencyOutput {
            stats: one_way.0,
            worst: one_way.1,
            series: one_way.2.finish(),
        },
        round_trip: LatencyOutput {
            stats: round_trip.0,
            worst: round_trip.1,
            series: round_trip.2.finish(),
        },
        kernel_timestamps: config.gpio.is_some(),
        gpio_edges: config.gpio.is_some().then_some(gpio_edges),
        start_ns: start,
        end_ns,
        interrupted,
        responder,
        stimulus,
    })
}

fn died(child: &Child, status: String, events: u64) -> RespondError {
    RespondError::ResponderDied {
        pid: child.pid,
        status,
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_parse_fixed_and_random() {
        assert_eq!("1ms".parse::<Gap>(), Ok(Gap::Fixed { ns: 1_000_000 }));
        assert_eq!(
            "500us..1500us".parse::<Gap>(),
            Ok(Gap::Random {
                min_ns: 500_000,
                max_ns: 1_500_000
            })
        );
        assert!("2ms..1ms".parse::<Gap>().is_err());
        assert!("0".parse::<Gap>().is_err());
    }

    /// The lab's GPIO pair (a CP2112 whose driver polls its pins) showed
    /// that nothing in a result said where a GPIO round trip ended; an
    /// edge stamped outside send..read must not become the round trip.
    #[test]
    fn gpio_round_trips_end_at_the_edge_only_when_it_lies_between_send_and_read() {
        let mut edges = GpioEdges::default();
        assert_eq!(edges.end(1_000, 41_000, 41_500), 41_000);
        assert_eq!(edges.end(2_000, 2_000, 2_100), 2_000);
        // A timestamp from another clock (or after the read) is not used.
        assert_eq!(edges.end(5_000, 1_700_000_000_000, 6_000), 6_000);
        assert_eq!(edges.end(5_000, 4_999, 6_000), 6_000);
        assert_eq!((edges.within, edges.outside), (2, 2));
        assert_eq!(edges.max_edge_to_read_ns, 500);
        assert_eq!(edges.mean_edge_to_read_ns, 300);
        let json = serde_json::to_value(edges).unwrap();
        assert_eq!(
            (json["within"].as_u64(), json["outside"].as_u64()),
            (Some(2), Some(2))
        );
    }

    #[test]
    fn random_gaps_stay_in_range_and_vary() {
        let gap = Gap::Random {
            min_ns: 100,
            max_ns: 200,
        };
        let mut rng = Rng::new(0x1234_5678_9abc_def1);
        let gaps: Vec<u64> = (0..1000).map(|_| gap.next_ns(&mut rng)).collect();
        assert!(gaps.iter().all(|g| (100..=200).contains(g)));
        let distinct: std::collections::BTreeSet<_> = gaps.iter().collect();
        assert!(distinct.len() > 50, "{} distinct gaps", distinct.len());
    }

    #[test]
    fn every_emulated_channel_answers_at_sched_other() {
        // SCHED_OTHER needs no privilege: this exercises fork, the shared page
        // and both directions of every channel for real.
        let cpus = sched::usable_cpus();
        for name in Channel::EMULATED {
            let config = RespondConfig {
                channel: name.parse().unwrap(),
                gpio: None,
                count: Some(50),
                duration_ns: None,
                gap: Gap::Fixed { ns: 200_000 },
                policy: Policy::Other,
                priority: 0,
                responder_cpu: *cpus.last().unwrap(),
                stimulus_cpu: cpus[0],
                lock_memory: false,
                timeout_ns: 2_000_000_000,
            };
            let out = measure(&config, &mut Quiet).unwrap();
            assert_eq!((out.sent, out.answered, out.lost), (50, 50, 0), "{name}");
            let ow = out.one_way.stats.summary();
            let rt = out.round_trip.stats.summary();
            assert_eq!(ow.count, 50, "{name}");
            assert!(ow.min > 0 && rt.min > 0, "{name}: {ow:?} {rt:?}");
            assert!(
                rt.min >= ow.min,
                "{name}: the answer comes after the wake-up"
            );
            assert!(rt.max < 1_000_000_000, "{name}: {rt:?}");
        }
    }

    /// Two pty pairs joined by a thread that copies bytes between their
    /// masters: a null-modem cable between two "serial ports" (the slaves),
    /// so the `--serial TX,RX` path (open, raw mode, baud) runs for real.
    #[test]
    fn serial_ports_joined_by_an_emulated_null_modem_cable() {
        use std::os::fd::AsRawFd;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;

        let (master_a, slave_a) = channel::pty().unwrap();
        let (master_b, slave_b) = channel::pty().unwrap();
        let path = |fd: &std::os::fd::OwnedFd| {
            std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
        };
        let (tx, rx) = (path(&slave_a), path(&slave_b));
        let stop = Arc::new(AtomicBool::new(false));
        let cable = {
            let stop = stop.clone();
            let (a, b) = (master_a.as_raw_fd(), master_b.as_raw_fd());
            std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                while !stop.load(Ordering::Relaxed) {
                    let mut fds = [
                        libc::pollfd {
                            fd: a,
                            events: libc::POLLIN,
                            revents: 0,
                        },
                        libc::pollfd {
                            fd: b,
                            events: libc::POLLIN,
                            revents: 0,
                        },
                    ];
                    // SAFETY: two valid pollfds; reads and writes on open masters.
                    unsafe {
                        if libc::poll(fds.as_mut_ptr(), 2, 20) <= 0 {
                            continue;
                        }
                        for (from, to) in [(0, b), (1, a)] {
                            if fds[from].revents & libc::POLLIN != 0 {
                                let n =
                                    libc::read(fds[from].fd, buf.as_mut_ptr().cast(), buf.len());
                                if n > 0 {
                                    libc::write(to, buf.as_ptr().cast(), n as usize);
                                }
                            }
                        }
                    }
                }
            })
        };
        let cpus = sched::usable_cpus();
        let config = RespondConfig {
            channel: Channel::Serial {
                tx: tx.clone(),
                rx,
                baud: 115_200,
            },
            gpio: None,
            count: Some(100),
            duration_ns: None,
            gap: Gap::Fixed { ns: 300_000 },
            policy: Policy::Other,
            priority: 0,
            responder_cpu: *cpus.last().unwrap(),
            stimulus_cpu: cpus[0],
            lock_memory: false,
            timeout_ns: 2_000_000_000,
        };
        let out = measure(&config, &mut Quiet);
        stop.store(true, Ordering::Relaxed);
        cable.join().unwrap();
        let out = out.unwrap();
        assert_eq!((out.sent, out.answered, out.lost), (100, 100, 0));
        assert!(out.round_trip.stats.summary().min >= out.one_way.stats.summary().min);
        assert!(config
            .channel
            .describe()
            .contains(&tx.display().to_string()));
        drop((master_a, master_b, slave_a, slave_b));
    }
}
