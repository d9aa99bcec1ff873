//! pacing_probe: latlab respond's signal channel in one small file, with one
//! switch per difference from rt-tests' sigwaittest, so each can be measured
//! on its own (bench/respond-pacing-probe.sh runs them side by side).
//!
//! Default = latlab's method: a forked responder (SCHED_FIFO 95, mlocked)
//! blocks in sigwaitinfo for SIGUSR1; the stimulus (SCHED_FIFO 94) sleeps to
//! its next absolute deadline, reads CLOCK_MONOTONIC, tgkill()s the responder
//! and waits for SIGUSR2 (sigtimedwait); the responder stores its wake-up time
//! in a shared page and answers. Both on one CPU. Prints the one-way latency:
//!
//! ```text
//! events N lost N min US mean US p50 US p90 US max US us
//! ```
//!
//! ```text
//!   -n N      events (5000)            -g US   gap between sends (1000)
//!   -s PRIO   stimulus priority (94; 0 = SCHED_OTHER)
//!   -r PRIO   responder priority (95)  -c CPU  CPU of both (0)
//!   -k        kill() instead of tgkill()
//!   -t        gettimeofday() timestamps instead of CLOCK_MONOTONIC
//!   -L        no mlockall
//!   -w        the stimulus waits for the answer with sigwaitinfo (no timeout)
//!   -b        the stimulus busy-waits the gap (the CPU never idles and no
//!             other task runs there)
//!   -P        ping-pong pacing, as sigwaittest: the responder sleeps the gap
//!             after each wake-up, then answers; the stimulus sends at once
//!   -T KB     before each send the stimulus writes KB of memory (evicts caches)
//! ```
//!
//! Build and run (as root):
//! `cargo build --release -p latlab-respond --example pacing_probe &&
//! target/release/examples/pacing_probe -n 3000 -P`
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use latlab_rt::clock::{monotonic_ns, sleep_until};

const USAGE: &str = "usage: pacing_probe [-n N] [-g US] [-s PRIO] [-r PRIO] [-c CPU] \
[-k] [-t] [-L] [-w] [-b] [-P] [-T KB]\n\
(see the comment at the top of crates/latlab-respond/examples/pacing_probe.rs)";

/// The switches; the defaults are latlab's method.
#[derive(Clone, Copy)]
struct Options {
    events: i32,
    gap_us: i32,
    stim_prio: i32,
    resp_prio: i32,
    cpu: usize,
    use_kill: bool,
    use_tod: bool,
    no_lock: bool,
    untimed: bool,
    busy: bool,
    ping_pong: bool,
    evict_kb: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            events: 5000,
            gap_us: 1000,
            stim_prio: 94,
            resp_prio: 95,
            cpu: 0,
            use_kill: false,
            use_tod: false,
            no_lock: false,
            untimed: false,
            busy: false,
            ping_pong: false,
            evict_kb: 0,
        }
    }
}

/// The page both processes share (mmap MAP_SHARED), zero at the start.
#[repr(C)]
struct Shared {
    /// The responder's wake-up time (ns), 0 until it answers.
    wake_ns: AtomicU64,
    /// Set by the responder once it has taken its place.
    ready: AtomicI32,
    /// errno of each failed step of the responder's take_place, 0 = done.
    failed: [AtomicI32; STEPS.len()],
}

/// The steps of take_place, as perror would name them.
const STEPS: [&str; 3] = [
    "sched_setaffinity",
    "sched_setscheduler (run as root)",
    "mlockall",
];

/// Parses the C probe's getopt string "n:g:s:r:c:ktLwbPT:" (grouped flags
/// and attached values work, as with getopt).
fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options::default();
    while let Some(arg) = args.next() {
        if arg == "--" {
            if let Some(extra) = args.next() {
                return Err(format!("unexpected argument {extra:?}"));
            }
            break;
        }
        let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        for (at, letter) in letters.char_indices() {
            match letter {
                'k' => o.use_kill = true,
                't' => o.use_tod = true,
                'L' => o.no_lock = true,
                'w' => o.untimed = true,
                'b' => o.busy = true,
                'P' => o.ping_pong = true,
                'n' | 'g' | 's' | 'r' | 'c' | 'T' => {
                    // The value is the rest of this argument, or the next one.
                    let rest = &letters[at + 1..];
                    let value = match rest {
                        "" => args
                            .next()
                            .ok_or(format!("option -{letter} needs a value"))?,
                        _ => rest.to_string(),
                    };
                    let v: i32 = value.trim().parse().map_err(|_| {
                        format!("option -{letter}: {value:?} is not a whole number")
                    })?;
                    match letter {
                        'n' => o.events = v,
                        'g' => o.gap_us = v,
                        's' => o.stim_prio = v,
                        'r' => o.resp_prio = v,
                        'c' => {
                            o.cpu = usize::try_from(v)
                                .ok()
                                .filter(|&c| c < libc::CPU_SETSIZE as usize)
                                .ok_or(format!(
                                    "option -c: CPU {v} is outside 0..{}",
                                    libc::CPU_SETSIZE
                                ))?
                        }
                        _ => {
                            o.evict_kb = usize::try_from(v)
                                .map_err(|_| format!("option -T: {v} KB is negative"))?
                        }
                    }
                    break;
                }
                _ => return Err(format!("unknown option -{letter}")),
            }
        }
    }
    if o.events < 1 || o.gap_us < 1 {
        return Err("-n and -g must be at least 1".into());
    }
    Ok(o)
}

/// The timestamps of the measurement: CLOCK_MONOTONIC, or gettimeofday with -t.
fn stamp_ns(use_tod: bool) -> u64 {
    if !use_tod {
        return monotonic_ns();
    }
    let mut tv = MaybeUninit::<libc::timeval>::uninit();
    // SAFETY: gettimeofday writes a timeval to a valid pointer (the time zone
    // may be null) and cannot fail with these arguments.
    let tv = unsafe {
        libc::gettimeofday(tv.as_mut_ptr(), std::ptr::null_mut());
        tv.assume_init()
    };
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

/// Pins the caller to the CPU, makes it SCHED_FIFO `prio` (if > 0) and
/// locks its memory (unless -L). Returns the errno of each step (0 = done).
/// Async-signal-safe: the responder calls it after fork.
fn take_place(o: &Options, prio: i32) -> [i32; STEPS.len()] {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let mut failed = [0; STEPS.len()];
    let pinned = latlab_rt::cpuset::CpuSet::single(o.cpu)
        .map_err(|_| libc::EINVAL)
        .and_then(|set| set.apply_to_current_thread().map_err(|_| errno()));
    if let Err(e) = pinned {
        failed[0] = e;
    }
    let param = latlab_rt::sched::param(prio);
    if prio > 0 && latlab_rt::sched::setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
        failed[1] = errno();
    }
    // SAFETY: mlockall only changes how the process's pages are kept.
    if !o.no_lock && unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        failed[2] = errno();
    }
    failed
}

/// Prints the failed steps of take_place like perror (the program goes on,
/// as the C probe did).
fn report_failed(who: &str, failed: &[i32]) {
    for (step, &errno) in STEPS.iter().zip(failed) {
        if errno != 0 {
            eprintln!("{who}: {step}: {}", io::Error::from_raw_os_error(errno));
        }
    }
}

/// Sends `sig` to `pid` with kill (-k) or tgkill (its main thread).
fn send_signal(o: &Options, pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: sending a signal touches no memory of ours; a failure (the
    // process is gone) shows as a lost event, as in the C probe.
    unsafe {
        if o.use_kill {
            libc::kill(pid, sig);
        } else {
            libc::syscall(libc::SYS_tgkill, pid, pid, sig);
        }
    }
}

/// Waits for the blocked signal `sig`, at most 1 s when `timed`. True when
/// it came.
fn wait_signal(sig: libc::c_int, timed: bool) -> bool {
    let one_second = latlab_rt::clock::to_timespec(1_000_000_000);
    let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
    // SAFETY: the set is initialised by sigemptyset before use; info and
    // one_second are valid for the calls, which only write info.
    unsafe {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), sig);
        let got = if timed {
            libc::sigtimedwait(set.as_ptr(), info.as_mut_ptr(), &one_second)
        } else {
            libc::sigwaitinfo(set.as_ptr(), info.as_mut_ptr())
        };
        got == sig
    }
}

/// Sleeps `ns` (relative, as the responder does with -P).
fn sleep_ns(ns: u64) {
    let ts = latlab_rt::clock::to_timespec(ns);
    // SAFETY: ts is a valid timespec; the remainder pointer may be null.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// The responder, in the forked child: only async-signal-safe calls (no
/// allocation, no printing); its setup errors go to the shared page.
fn responder(o: &Options, shared: &Shared, stimulus: libc::pid_t) -> ! {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    // SAFETY: getppid and _exit are async-signal-safe; if the stimulus died
    // before prctl, nothing would kill this process, so it ends itself.
    unsafe {
        if libc::getppid() != stimulus {
            libc::_exit(1);
        }
    }
    for (slot, errno) in shared.failed.iter().zip(take_place(o, o.resp_prio)) {
        slot.store(errno, Ordering::Release);
    }
    shared.ready.store(1, Ordering::Release);
    loop {
        if !wait_signal(libc::SIGUSR1, false) {
            continue;
        }
        shared.wake_ns.store(stamp_ns(o.use_tod), Ordering::Release);
        if o.ping_pong {
            sleep_ns(o.gap_us as u64 * 1000);
        }
        send_signal(o, stimulus, libc::SIGUSR2);
    }
}

/// Kills and reaps the responder.
fn end_responder(pid: libc::pid_t) {
    // SAFETY: pid is our own child; waitpid may take a null status.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

fn main() -> ExitCode {
    let o = match parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pacing_probe: {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pacing_probe: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Forks the responder, sends the events and prints the one-way latencies.
fn run(o: &Options) -> Result<(), String> {
    let os_error = |what: &str| format!("{what}: {}", io::Error::last_os_error());
    let page = latlab_rt::memory::map_shared_page()
        .map_err(|e| format!("mmap of the shared page: {e}"))?;
    // SAFETY: the page is page-aligned, zero-filled (a valid Shared: all
    // atomics at 0), larger than Shared and never unmapped; both processes
    // touch it only through atomics.
    let shared: &Shared = unsafe { &*page.cast::<Shared>() };

    let mut lat: Vec<u64> = Vec::new();
    lat.try_reserve_exact(o.events as usize)
        .map_err(|e| format!("-n {}: {e}", o.events))?;
    // Left untouched here, as the C probe's malloc'd buffer: only written.
    let mut evict: Vec<u8> = Vec::new();
    evict
        .try_reserve_exact(o.evict_kb * 1024)
        .map_err(|e| format!("-T {}: {e}", o.evict_kb))?;

    // SAFETY: the set is initialised by sigemptyset; blocking SIGUSR1/2 in
    // this single-threaded process (inherited by the child) lets both take
    // them with sigwaitinfo.
    unsafe {
        let mut both = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(both.as_mut_ptr());
        libc::sigaddset(both.as_mut_ptr(), libc::SIGUSR1);
        libc::sigaddset(both.as_mut_ptr(), libc::SIGUSR2);
        libc::sigprocmask(libc::SIG_BLOCK, both.as_ptr(), std::ptr::null_mut());
    }

    // SAFETY: getpid cannot fail.
    let stimulus = unsafe { libc::getpid() };
    // SAFETY: the process is single-threaded at fork, and the child runs only
    // `responder`, which is async-signal-safe and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_error("fork"));
    }
    if pid == 0 {
        responder(o, shared, stimulus);
    }
    while shared.ready.load(Ordering::Acquire) == 0 {
        // SAFETY: pid is our child; WNOHANG polls without blocking.
        if unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) } == pid {
            return Err("the responder ended before it was ready".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let failed: Vec<i32> = shared
        .failed
        .iter()
        .map(|f| f.load(Ordering::Acquire))
        .collect();
    report_failed("responder", &failed);
    report_failed("stimulus", &take_place(o, o.stim_prio));

    let (mut lost, evict_len) = (0u32, o.evict_kb * 1024);
    let evict = &mut evict.spare_capacity_mut()[..evict_len];
    let mut next = monotonic_ns();
    for i in 0..o.events {
        if !o.ping_pong {
            next += o.gap_us as u64 * 1000;
            if o.busy {
                while monotonic_ns() < next {}
            } else {
                sleep_until(next);
            }
        }
        for byte in evict.iter_mut().step_by(64) {
            // SAFETY: a write to memory we own; volatile so it is not elided.
            unsafe { std::ptr::write_volatile(byte.as_mut_ptr(), i as u8) };
        }
        shared.wake_ns.store(0, Ordering::Release);
        let t0 = stamp_ns(o.use_tod);
        send_signal(o, pid, libc::SIGUSR1);
        if !wait_signal(libc::SIGUSR2, !o.untimed) {
            lost += 1;
            continue;
        }
        let wake = shared.wake_ns.load(Ordering::Acquire);
        if wake < t0 {
            lost += 1;
            continue;
        }
        lat.push(wake - t0);
    }
    end_responder(pid);
    if lat.is_empty() {
        return Err("no event answered".into());
    }

    let n = lat.len();
    let sum: f64 = lat.iter().map(|&l| l as f64).sum();
    lat.sort_unstable();
    println!(
        "events {n} lost {lost} min {:.2} mean {:.2} p50 {:.2} p90 {:.2} max {:.1} us",
        lat[0] as f64 / 1e3,
        sum / n as f64 / 1e3,
        lat[n / 2] as f64 / 1e3,
        lat[n * 9 / 10] as f64 / 1e3,
        lat[n - 1] as f64 / 1e3
    );
    Ok(())
}
