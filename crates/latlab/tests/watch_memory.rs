//! `latlab watch`'s memory is bounded by the threads alive, not by the
//! threads seen: a watch of a process that starts and ends thousands of
//! short-lived SCHED_FIFO threads peaks no higher than a watch of one
//! thread. The churning process is this test binary run again
//! ([`churn_helper`]); the peak is the kernel's (VmHWM of
//! /proc/<pid>/status while it runs, and the peak resident set wait4()
//! reports when it ends). Needs root and a kernel with BTF; skips with the
//! reason elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1).

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::watch::read;
use common::{assert_success, bpf_ready, latlab, pin_to_cpu0};

/// The environment variable that makes [`churn_helper`] churn:
/// `THREADS,PARALLEL,TAIL_MS[,SLEEPS,SLEEP_US]` (5 sleeps of 200 us unless
/// given; docs/results/2026-11-27-watch-memory.md runs it with threads
/// that live a second, for `latlab watch --rt`'s rescans to find).
const CHURN: &str = "LATLAB_TEST_WATCH_CHURN";

/// Not a test of its own: run again by the tests below with [`CHURN`] set,
/// it starts THREADS threads, PARALLEL at a time, each SCHED_FIFO 10 on CPU
/// 0 (inherited from this thread) and sleeping SLEEPS times SLEEP_US before
/// it ends, then sleeps TAIL_MS (the watch's rescans take the last ones).
#[test]
fn churn_helper() {
    let Ok(spec) = std::env::var(CHURN) else {
        return;
    };
    let n: Vec<u64> = spec.split(',').map(|v| v.parse().unwrap()).collect();
    let (threads, parallel, tail_ms) = (n[0], n[1].max(1), n[2]);
    let (sleeps, sleep_us) = (
        n.get(3).copied().unwrap_or(5),
        n.get(4).copied().unwrap_or(200),
    );
    pin_to_cpu0();
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: sets the calling thread's policy; new threads inherit it.
    let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    assert_eq!(set, 0, "SCHED_FIFO refused");
    let mut started = 0;
    while started < threads {
        let batch: Vec<_> = (0..parallel.min(threads - started))
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..sleeps {
                        std::thread::sleep(Duration::from_micros(sleep_us));
                    }
                })
            })
            .collect();
        started += batch.len() as u64;
        for t in batch {
            t.join().unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(tail_ms));
}

/// The peak resident set of a watch of a churn of `threads` threads (KiB,
/// the larger of the VmHWM sampled while it ran and wait4's at its end)
/// and its result.
// The watch is reaped by wait4() (for its peak), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn watch_a_churn(threads: u64) -> (u64, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("watch.json");
    let mut watch = latlab()
        .args(["watch", "--no-history", "--quiet", "--interval", "1s"])
        // Nothing late: the windows kept (a bounded number) are not what
        // is measured here.
        .args(["--threshold", "1s", "--baseline-every", "0", "--json"])
        .arg(&json)
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "churn_helper", "--nocapture", "--test-threads=1"])
        .env(CHURN, format!("{threads},4,2500"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = watch.id() as i32;
    let mut sampled = 0u64;
    let (status, rusage) = loop {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            {
                sampled = sampled.max(kib);
            }
        }
        let mut status = 0;
        // SAFETY: an empty rusage for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child; WNOHANG returns at once.
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            break (status, usage);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    use std::io::Read;
    watch
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "latlab watch failed: {err}"
    );
    let at_end = rusage.ru_maxrss as u64;
    // The kernel's high-water mark read two ways (VmHWM also counts the
    // pages resident when read; wait4 the mark at the exit): they agree to
    // a few pages, unless the peak came after the last sample.
    assert!(
        sampled <= at_end + at_end / 50,
        "VmHWM {sampled} KiB, wait4 {at_end} KiB"
    );
    (at_end.max(sampled), read(&json))
}

fn wake_ups(doc: &serde_json::Value) -> u64 {
    doc["overall"]["latency"]["count"].as_u64().unwrap()
}

/// Before this was fixed, 3,000 threads seen took the peak from 55 MB
/// (one thread) to 324 MB: a 224 KiB histogram per task and kind for the
/// latest 1,024 threads that ended, and the kernel's set of watched
/// threads marked threads it had no room for (their ends never seen, their
/// buckets never given back).
#[test]
fn watch_memory_is_bounded_by_the_threads_alive_not_the_threads_seen() {
    if !bpf_ready("watch memory under thread churn") {
        return;
    }
    let (one, doc_one) = watch_a_churn(1);
    assert!(wake_ups(&doc_one) >= 5, "{:#}", doc_one["tasks"]);
    let (many, doc) = watch_a_churn(3000);
    eprintln!("peak resident memory: 1 thread {one} KiB, 3000 threads {many} KiB");
    assert!(
        many <= one + one / 4,
        "peak {many} KiB after 3000 threads, {one} KiB with one: memory grows with the threads seen"
    );
    // The watch saw the churn: five sleeps per thread, and the counts of
    // the threads that ended kept (folded into one row past the latest 64).
    let seen = wake_ups(&doc);
    assert!(seen >= 3000 * 4, "{seen} wake-ups of 3000 threads");
    let tasks = doc["tasks"].as_array().unwrap();
    assert!(tasks.len() <= 64 + 8, "{} task rows", tasks.len());
    assert!(
        tasks.iter().any(|t| t["tid"] == 0),
        "no folded row among {} tasks",
        tasks.len()
    );
    // Nothing was lost to a full kernel map on the way.
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        !notes.iter().any(|n| n.as_str().unwrap().contains("full")),
        "{notes:#?}"
    );
}

/// The churn itself, without a watch, runs in this test binary: its
/// threads are SCHED_FIFO on CPU 0 and all of them end.
#[test]
fn the_churn_helper_starts_sched_fifo_threads_that_end() {
    if !common::root("churn helper") {
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "churn_helper", "--nocapture", "--test-threads=1"])
        .env(CHURN, "40,4,0")
        .output()
        .unwrap();
    assert_success(&out);
}
