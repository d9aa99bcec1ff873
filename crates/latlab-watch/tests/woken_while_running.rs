//! A wake-up that finds its thread still on the CPU (woken from another CPU
//! between the thread's going to sleep and its switch away) never makes a
//! switch in: the thread just runs on. Its pending wake-up must not wait for
//! the thread's next switch in, which, when the thread is preempted
//! meanwhile, is the end of a preemption, not of a wake-up: that sample
//! would measure how long the thread ran and waited since, as a wake-up
//! latency. Checked against the kernel's own count: every wake-up measured
//! ends a sleep, so a thread's samples are at most its voluntary context
//! switches (/proc's `voluntary_ctxt_switches`). Real BPF and tracefs in this
//! kernel, real threads: one waits on a futex and then runs 3 ms next to a
//! CPU hog that preempts it, another wakes the futex from the other CPU
//! without pause. Needs root, BTF and two CPUs; skips with the reason
//! elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1, but for the CPUs).
#![cfg(all(feature = "bpf", target_pointer_width = "64"))]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use common::ready;
use latlab_watch::histograms::LatencyKind;
use latlab_watch::records::EvType;
use latlab_watch::{BpfSide, KernelSide, Settings, TracefsSide};

fn pin(cpu: usize) {
    let set = latlab_rt::cpuset::CpuSet::single(cpu).unwrap();
    set.apply_to_current_thread().unwrap();
}

fn futex(word: &AtomicU32, op: libc::c_int, val: u32) -> libc::c_long {
    // SAFETY: the futex word is a live, aligned u32; no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            std::ptr::null::<libc::timespec>(),
        )
    }
}

fn voluntary_switches(tid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Runs the waiter, its waker and the hog for `run`, the waiter watched by
/// `side`; returns the waiter's (wake-up samples, voluntary switches).
///
/// The switches are counted from before the watch begins until after the
/// samples are read, the waiter parked meanwhile: every wake-up measured
/// then ends a sleep counted (a sleep the test did not plan, such as a page
/// fault waiting for the mm lock while a test beside it loads BPF, is
/// counted too: the old count, from the first futex wait to the last, missed
/// those and CI saw 2 samples more than sleeps).
fn samples_and_sleeps(side: &mut dyn KernelSide, run: Duration) -> (u64, u64) {
    let word = Arc::new(AtomicU32::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let waiter_done = Arc::new(AtomicBool::new(false));
    // The hog: SCHED_OTHER, on the waiter's CPU, until the end.
    let hog = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            pin(0);
            while !stop.load(Ordering::Relaxed) {
                spin(Duration::from_millis(1));
            }
        })
    };
    // The waker: futex wakes from the other CPU without pause, until the
    // waiter is done (it may be waiting).
    let waker = {
        let (word, done) = (word.clone(), waiter_done.clone());
        std::thread::spawn(move || {
            pin(1);
            while !done.load(Ordering::Relaxed) {
                futex(&word, libc::FUTEX_WAKE, 1);
            }
        })
    };
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (finished_tx, finished_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let waiter = {
        let (word, done) = (word.clone(), waiter_done.clone());
        std::thread::spawn(move || {
            pin(0);
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() } as u32;
            tid_tx.send((tid, voluntary_switches(tid))).unwrap();
            go_rx.recv().unwrap();
            let until = Instant::now() + run;
            while Instant::now() < until {
                futex(&word, libc::FUTEX_WAIT, 0);
                spin(Duration::from_millis(3));
            }
            done.store(true, Ordering::Relaxed);
            finished_tx.send(()).unwrap();
            // Parked until its samples and switches are read.
            release_rx.recv().unwrap();
        })
    };
    let (tid, before) = tid_rx.recv().unwrap();
    side.watch(tid).unwrap();
    go_tx.send(()).unwrap();
    finished_rx.recv().unwrap();
    waker.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    hog.join().unwrap();
    // A sample is counted at its CPU's next switch; the tracefs side reads
    // what came meanwhile.
    side.wait(Duration::from_millis(300)).unwrap();
    let samples = side
        .histogram_counts()
        .iter()
        .filter(|r| r.0 == tid && r.1 == LatencyKind::Wakeup.code())
        .map(|r| r.3)
        .sum();
    let sleeps = voluntary_switches(tid) - before;
    side.unwatch(tid);
    release_tx.send(()).unwrap();
    waiter.join().unwrap();
    (samples, sleeps)
}

/// `slack_percent`: samples over the sleeps allowed, in % of the sleeps.
fn no_more_samples_than_sleeps(side: &mut dyn KernelSide, slack_percent: u64) {
    let test = std::thread::current().name().unwrap_or("").to_string();
    let (samples, sleeps) = samples_and_sleeps(side, Duration::from_secs(2));
    assert!(sleeps >= 50, "the waiter slept {sleeps} times in 2 s");
    let slack = sleeps * slack_percent / 100;
    eprintln!("{test}: {samples} wake-up samples, {sleeps} sleeps");
    // Without the rule, here: 330 samples for 321 sleeps (both sides).
    assert!(
        samples <= sleeps + slack,
        "{samples} wake-up samples for a thread that slept {sleeps} times: wake-ups that \
         found it running were measured at a later switch in (the end of a preemption)"
    );
    assert!(
        samples * 2 >= sleeps,
        "{samples} wake-up samples for {sleeps} sleeps: most wake-ups not measured"
    );
}

#[test]
fn bpf_a_wake_up_that_finds_its_thread_running_is_no_sample() {
    if !ready("bpf woken while running", 2) {
        return;
    }
    let mut side = BpfSide::load(&Settings::histograms_only()).unwrap();
    no_more_samples_than_sleeps(&mut side, 0);
}

#[test]
fn tracefs_a_wake_up_that_finds_its_thread_running_is_no_sample() {
    if !ready("tracefs woken while running", 2) {
        return;
    }
    let mut side = TracefsSide::start(&Settings::histograms_only()).unwrap();
    // The tracefs side orders the two CPUs' events by their time stamps
    // and puts in the switches the trace misses (4-9 a run here): with
    // both sides watching the same run it counted 0-2 more than the BPF
    // side (which then matched the sleeps), and under CI's load once 4 more
    // than the sleeps (187 for 183). 2 % allowed: without the rule it
    // counts about 3 % more (330 for 321).
    no_more_samples_than_sleeps(&mut side, 2);
}

/// With windows on, the BPF side takes the running thread from its CPU's
/// last switch (`struct ring`'s `cur`), not from a helper call: the test
/// above passes with it (a waking from the woken thread itself is the case
/// it catches), and every event of a window names as running the thread
/// its CPU last switched to.
#[test]
fn bpf_with_windows_the_running_thread_is_the_last_switched_to() {
    if !ready("bpf running thread", 2) {
        return;
    }
    let settings = Settings {
        baseline_every: 1,
        max_windows_per_sec: 1000,
        ..Settings::default()
    };
    let mut side = BpfSide::load(&settings).unwrap();
    no_more_samples_than_sleeps(&mut side, 0);
    let (mut windows, mut checked) = (0, 0);
    while let Some(w) = side.next_window() {
        let w = w.unwrap();
        windows += 1;
        // Per CPU: the thread the last switch in this window went to.
        let mut running = std::collections::HashMap::new();
        for e in &w.events {
            if let Some(&pid) = running.get(&e.cpu) {
                assert_eq!(
                    e.pid, pid,
                    "{e:?} on CPU {} names {} as running; its last switch went to {pid}",
                    e.cpu, e.pid
                );
                checked += 1;
            }
            if e.ty == EvType::Switch {
                running.insert(e.cpu, e.b);
            }
        }
    }
    eprintln!("{windows} windows, {checked} events checked");
    assert!(
        windows >= 10 && checked >= 1000,
        "{windows} windows, {checked} events checked"
    );
}
