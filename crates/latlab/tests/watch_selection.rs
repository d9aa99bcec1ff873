//! What `latlab watch` watches and whose latency it explains, with real
//! parts: the BPF side loaded into this kernel, a real cyclictest (its
//! SCHED_OTHER main thread and its SCHED_FIFO measuring threads), real
//! /proc. A selection that matches nothing waits, then fails and stores
//! nothing; `--rt` narrows any selection to its real-time threads; the
//! policy of every thread is in the result; the causes are ranked from the
//! real-time threads' late windows only, and watch's own process is never
//! one of them. Needs root, a kernel with BTF and cyclictest (rt-tests);
//! skips with the reason elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::watch::read;
use common::{assert_success, bpf_ready, history_listing, latlab, require};
use serde_json::Value;

/// One watch at a time: the cyclictests share CPU 0.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn cyclictest() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("cyclictest"))
            .find(|p| p.is_file())
    })
}

fn cyclictest_ready(test: &str) -> Option<PathBuf> {
    if !bpf_ready(test) {
        return None;
    }
    let found = cyclictest();
    require(
        &format!("{test}: cyclictest"),
        found.is_some(),
        "apt-get install rt-tests",
    )
    .then(|| found.unwrap())
}

/// A copy of `program` in `dir` under `name` (the kernel names a process
/// after its file): a `--comm` only this test's copy matches.
fn named_copy(program: &Path, dir: &Path, name: &str) -> PathBuf {
    let copy = dir.join(name);
    std::fs::copy(program, &copy).unwrap();
    copy
}

/// Every thread of process `pid` with its `(policy, rt priority)` from
/// /proc (fields 41 and 40 of stat).
fn policies_of(pid: u32) -> Vec<(i64, u64, u64)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| {
                let tid: i64 = e.ok()?.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
                let rest: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
                Some((tid, rest[41 - 3].parse().ok()?, rest[40 - 3].parse().ok()?))
            })
            .collect()
        })
        .unwrap_or_default()
}

/// Waits until `child` has a SCHED_FIFO thread (cyclictest sets its
/// measuring threads' policy as they start).
fn until_real_time(child: &Child) {
    let start = Instant::now();
    while !policies_of(child.id()).iter().any(|t| t.1 == 1) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no SCHED_FIFO thread"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tids(doc: &Value) -> Vec<i64> {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tid"].as_i64().unwrap())
        .collect()
}

/// Before: `watch --comm nosuchtask` ran its whole duration, exited 0 and
/// stored an empty result in the history.
#[test]
fn a_selection_that_matches_nothing_waits_then_fails_and_stores_nothing() {
    if !bpf_ready("watch of a name no task has") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (json, db) = (dir.path().join("w.json"), dir.path().join("h.sqlite"));
    let started = Instant::now();
    // The default wait (10 s): what a user who typed the name wrong sees.
    let out = latlab()
        .args([
            "watch",
            "--comm",
            "nosuchtask",
            "--duration",
            "1s",
            "--json",
        ])
        .arg(&json)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("waiting for a thread named nosuchtask"), "{e}");
    assert!(
        e.contains("no thread named nosuchtask appeared within 10.0 s (--wait)")
            && e.contains("nothing stored")
            && e.contains("ps -eLo"),
        "{e}"
    );
    // It waited (not the 1 s of --duration).
    assert!(started.elapsed() >= Duration::from_secs(10));
    assert!(!json.exists(), "a result was written");
    let text = history_listing(&db);
    assert!(!text.contains("watch"), "stored: {text}");

    // --rt: a thread that is not real-time is no match either.
    let sleeper = named_copy(Path::new("/bin/sleep"), dir.path(), "wsel-other");
    let mut other = Command::new(&sleeper).arg("30").spawn().unwrap();
    let out = latlab()
        .args(["watch", "--comm", "wsel-other", "--rt", "--wait", "1s"])
        .args(["--no-history"])
        .output()
        .unwrap();
    let _ = other.kill();
    let _ = other.wait();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains("no real-time thread named wsel-other appeared") && e.contains("leave out --rt"),
        "{e}"
    );

    // A --pid that does not exist fails at once, without waiting.
    let started = Instant::now();
    let out = latlab()
        .args(["watch", "--pid", "2147483646", "--wait", "30s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such process"));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_task_that_appears_while_the_watch_waits_is_watched() {
    if !bpf_ready("watch of a name that appears later") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let sleeper = named_copy(Path::new("/bin/sleep"), dir.path(), "wsel-late");
    let watch = latlab()
        .args([
            "watch",
            "--comm",
            "wsel-late",
            "--wait",
            "20s",
            "--duration",
            "3s",
        ])
        .args(["--no-history", "--quiet", "--threshold", "1s", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // Two sleeps: one wake-up each.
    let mut late = Command::new("sh")
        .arg("-c")
        .arg(format!("{0} 0.2; {0} 0.2", sleeper.display()))
        .spawn()
        .unwrap();
    let out = watch.wait_with_output().unwrap();
    let _ = late.wait();
    assert_success(&out);
    let doc = read(&json);
    assert!(
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["comm"] == "wsel-late"),
        "{:#}",
        doc["tasks"]
    );
    // The watch's time counts from the first match, not from the wait.
    let watched = doc["duration_ns"].as_u64().unwrap();
    assert!(watched < 3_600_000_000, "{watched} ns");
}

/// Before: `--rt` could not be combined with `--comm`, and `--comm
/// cyclictest` watched cyclictest's SCHED_OTHER main thread beside its
/// SCHED_FIFO measuring threads, with no policy in the result.
#[test]
fn rt_with_a_name_watches_only_the_real_time_threads_with_their_policy() {
    let Some(program) = cyclictest_ready("watch --comm --rt of cyclictest") else {
        return;
    };
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let name = format!("wsel-ct{}", std::process::id() % 100_000);
    let copy = named_copy(&program, dir.path(), &name);
    let mut ct = Command::new(&copy)
        .args(["-t2", "-p80", "-a0", "-i1000", "-q", "-D6"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    until_real_time(&ct);
    let out = latlab()
        .args(["watch", "--comm", &name, "--rt", "--duration", "2s"])
        .args(["--no-history", "--quiet", "--threshold", "1ms", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let threads = policies_of(ct.id());
    let _ = ct.kill();
    let _ = ct.wait();
    assert_success(&out);
    let doc = read(&json);
    // The kernel's own view of the process: the SCHED_FIFO threads are the
    // tasks watched, the main thread (SCHED_OTHER) is not.
    let mut fifo: Vec<i64> = threads.iter().filter(|t| t.1 == 1).map(|t| t.0).collect();
    fifo.sort();
    assert_eq!(fifo.len(), 2, "{threads:?}");
    let mut seen = tids(&doc);
    seen.sort();
    assert_eq!(seen, fifo, "{:#}", doc["tasks"]);
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["policy"], "fifo", "{t:#}");
        assert_eq!(t["rt_priority"], 80, "{t:#}");
        assert!(
            t["thread"]["summary"]["count"].as_u64().unwrap() > 100,
            "{t:#}"
        );
    }
    assert!(doc["settings"]["selection"]
        .as_str()
        .unwrap()
        .contains("real-time threads only"));
    // The result's text names the policy of each row.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FIFO 80"), "{text}");
}

/// Before: the late windows of cyclictest's SCHED_OTHER main thread were
/// ranked with the SCHED_FIFO threads', and their advice ("run the task
/// SCHED_FIFO above 80") was about the main thread.
#[test]
fn causes_are_ranked_from_the_real_time_threads_only() {
    let Some(program) = cyclictest_ready("watch of a cyclictest command") else {
        return;
    };
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    // Every wake-up is late: the main thread's too.
    let out = latlab()
        .args(["watch", "--threshold", "1us", "--max-windows", "200"])
        .args(["--no-history", "--quiet", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&program)
        .args(["-t1", "-p80", "-a0", "-i1000", "-q", "-D3"])
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read(&json);
    let tasks = doc["tasks"].as_array().unwrap();
    let policy_of = |tid: i64| {
        tasks
            .iter()
            .find(|t| t["tid"] == tid)
            .map(|t| t["policy"].clone())
            .unwrap_or(Value::Null)
    };
    let main = tasks
        .iter()
        .find(|t| t["policy"] == "other")
        .unwrap_or_else(|| panic!("no SCHED_OTHER main thread: {tasks:#?}"));
    assert!(
        main["late_windows"].as_u64().unwrap() > 0,
        "the main thread had no late window to leave out: {main:#}"
    );
    assert!(
        tasks
            .iter()
            .any(|t| t["policy"] == "fifo" && t["rt_priority"] == 80),
        "{tasks:#?}"
    );
    // Its late windows were counted and left out of the ranking.
    assert!(doc["windows_seen"]["not_real_time"].as_u64().unwrap() > 0);
    let windows = doc["worst_windows"].as_array().unwrap();
    assert!(!windows.is_empty());
    for w in windows {
        let pid = w["window"]["pid"].as_i64().unwrap();
        assert_eq!(policy_of(pid), "fifo", "a window of {pid} ranked: {w:#}");
    }
    for c in doc["causes"].as_array().unwrap() {
        let advice = c["recommendation"].as_str().unwrap();
        assert!(
            !advice.contains("the task is not real-time"),
            "advice about a SCHED_OTHER thread: {advice}"
        );
    }
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("are not among the causes")),
        "{notes:#?}"
    );
}

/// Before: watch's own process (here on the watched threads' CPU, busy
/// explaining a window for every wake-up) was ranked among the causes.
#[test]
fn watchs_own_process_is_never_a_cause() {
    let Some(program) = cyclictest_ready("watch's own process in the windows") else {
        return;
    };
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let watch = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_latlab")])
        .env(
            "XDG_DATA_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"),
        )
        .args(["watch", "--threshold", "1us", "--max-windows", "2000"])
        .args(["--baseline-every", "0", "--no-history", "--quiet", "--json"])
        .arg(&json)
        .arg("--")
        .arg(&program)
        // SCHED_FIFO 1 and the main thread, on the watch's CPU.
        .args(["-t1", "-p1", "-a0", "-i1000", "-q", "-D4"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let own = watch.id() as i64;
    let out = watch.wait_with_output().unwrap();
    assert_success(&out);
    let doc = read(&json);
    let text = serde_json::to_string(&doc["causes"]).unwrap();
    for c in doc["causes"].as_array().unwrap() {
        for p in c["pids"].as_array().unwrap() {
            assert_ne!(p["pid"], own, "watch itself ranked as a cause: {c:#}");
        }
    }
    let label = format!(":{own}\"");
    for w in doc["worst_windows"].as_array().unwrap() {
        let parts = serde_json::to_string(&w["window"]["parts"]).unwrap();
        assert!(
            !parts.contains(&label),
            "watch in a window's parts: {parts}"
        );
    }
    // Not vacuous: the watch did hold the watched threads' CPU, and its
    // part is counted as its own cost.
    let o = &doc["overhead"];
    assert!(
        o["own_late_windows"].as_u64().unwrap() > 0 && o["own_late_ns"].as_u64().unwrap() > 0,
        "{o:#}\n{text}"
    );
}
