//! `latlab watch --tracefs` with real parts: a private tracefs instance on
//! this kernel, real SCHED_FIFO periodic threads (`latlab run`), the BPF
//! side watching the same thread at the same time, a real higher-priority
//! CPU hog, real signals, a real unprivileged user. Needs root; skips with
//! the reason elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1). Listed in
//! scripts/test-debugfs-tracing.sh: it also runs where tracefs is only
//! under /sys/kernel/debug/tracing.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::watch::{hog_named_as_the_cause, read, task, watch_a_run};
use common::{assert_success, latlab, require, root};

/// One watch at a time: the hog and the measurements share CPU 0.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `latlab-*` tracefs instances now.
fn instances() -> Vec<String> {
    let tracefs = latlab_tracefs::Tracefs::discover().expect("tracefs");
    latlab_tracefs::latlab_instances(&tracefs).expect("listing instances")
}

/// Whether the instance of process `pid` exists.
fn has_instance(pid: u32) -> bool {
    let name = format!("latlab-{pid}");
    instances()
        .iter()
        .any(|i| *i == name || i.starts_with(&format!("{name}-")))
}

#[test]
fn tracefs_measures_a_sched_fifo_thread_as_it_measures_itself_and_as_bpf_does() {
    if !root("watch --tracefs of latlab run") {
        return;
    }
    let bpf = require(
        "watch --tracefs next to BPF: kernel BTF",
        Path::new("/sys/kernel/btf/vmlinux").exists(),
        "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
    );
    if !bpf {
        return;
    }
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let run_json = dir.path().join("run.json");
    let (tf_json, bpf_json) = (dir.path().join("tf.json"), dir.path().join("bpf.json"));
    // The BPF side watches the same thread by name meanwhile (from its
    // first rescan after the thread appears).
    let bpf_watch = latlab()
        .args(["watch", "--comm", "latlab-cpu0", "--duration", "6s"])
        .args(["--threshold", "1ms", "--no-history", "--quiet", "--json"])
        .arg(&bpf_json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let watch = ["--tracefs", "--threshold", "1ms", "--interval", "1s"];
    // Watched by BPF too: no third object on the thread (the run's own
    // split; docs/watch.md).
    let run = ["--split", "off", "--duration", "3s", "--priority", "80"];
    watch_a_run(&watch, &tf_json, &run, Some(&run_json));
    let bpf_out = bpf_watch.wait_with_output().unwrap();
    assert_success(&bpf_out);
    let (run, tf, bw) = (read(&run_json), read(&tf_json), read(&bpf_json));
    assert_eq!(tf["settings"]["backend"], "tracefs");
    assert_eq!(bw["settings"]["backend"], "bpf");
    // How the path was read: the BPF side says, the tracefs side has none;
    // probe reads only with the note that says why.
    assert!(tf["settings"].get("path_reads").is_none());
    let probes = bw["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("bpf_probe_read_kernel"));
    let expected = if probes { "probe_reads" } else { "plain_loads" };
    assert_eq!(bw["settings"]["path_reads"], expected);
    let measured = &run["threads"][0];
    let seen = task(&tf, "latlab-cpu0");
    // Counts: as with BPF (tests/watch.rs), every activation that slept is
    // one wake-up; fewer by the missed periods (no sleep, no wake-up) and a
    // small share; a few more for the sleeps before measuring starts. Lost
    // trace events would lose wake-ups: they are counted, and allowed for.
    let cycles = measured["cycles"].as_u64().unwrap();
    let woken = seen["thread"]["summary"]["count"].as_u64().unwrap()
        + seen["wakeup"]["summary"]["count"].as_u64().unwrap_or(0);
    let missed = measured["missed_periods"].as_u64().unwrap();
    let lost = tf["windows_seen"]["events_lost"].as_u64().unwrap();
    assert!(
        woken + missed + lost + cycles / 100 + 3 >= cycles && woken <= cycles + 5,
        "watch --tracefs {woken}, run {cycles} with {missed} missed periods, {lost} events lost"
    );
    // Percentiles: tracefs stamps the switch while it happens, run reads its
    // clock after it: run's p50 is tracefs's plus the return from the sleep.
    let p50 = |v: &serde_json::Value| v["summary"]["p50"].as_u64().unwrap();
    let (p50_run, p50_tf) = (
        measured["latency"]["p50"].as_u64().unwrap(),
        p50(&seen["thread"]),
    );
    assert!(
        p50_tf <= p50_run + 5_000 && p50_tf * 4 + 20_000 >= p50_run,
        "p50 tracefs {p50_tf} ns, run {p50_run} ns"
    );
    // And BPF on the same thread at the same time: both time the same
    // tracepoints (BPF with its clock read in the program, tracefs with the
    // ring buffer's stamp, the same clock) from the same timer expiry, so
    // their medians differ only by the samples each saw (BPF's start at its
    // rescan, up to a second late) and by noise: within 10 us + 25 %.
    let bseen = task(&bw, "latlab-cpu0");
    let p50_bpf = p50(&bseen["thread"]);
    assert!(
        p50_bpf.abs_diff(p50_tf) <= 10_000 + p50_bpf.max(p50_tf) / 4,
        "p50 tracefs {p50_tf} ns, bpf {p50_bpf} ns"
    );
    let (irq_tf, irq_bpf) = (p50(&seen["irq"]), p50(&bseen["irq"]));
    assert!(
        irq_tf <= p50_tf && irq_bpf.abs_diff(irq_tf) <= 10_000 + irq_bpf.max(irq_tf) / 4,
        "irq p50 tracefs {irq_tf} ns (thread {p50_tf}), bpf {irq_bpf} ns"
    );
    assert!(bseen["thread"]["summary"]["count"].as_u64().unwrap() > 500);
    eprintln!(
        "watch --tracefs: {woken} wake-ups, run {cycles} cycles ({missed} missed, {lost} events lost); p50 thread: tracefs {p50_tf} ns, bpf {p50_bpf} ns, run {p50_run} ns; p50 irq: tracefs {irq_tf} ns, bpf {irq_bpf} ns"
    );
}

#[test]
fn tracefs_names_a_higher_priority_hog_as_the_cause() {
    if !root("watch --tracefs cause injection") {
        return;
    }
    let _one = serial();
    let (doc, text) = hog_named_as_the_cause(&["--tracefs"]);
    assert_eq!(doc["settings"]["backend"], "tracefs");
    assert!(text.contains("(tracefs)"), "{text}");
}

#[test]
fn tracefs_leaves_no_instance_after_a_stop_or_sigterm() {
    if !root("watch --tracefs clean-up") {
        return;
    }
    let _one = serial();
    // A normal stop. The selection is this test's process: it matches at
    // once (a watch waits for its first match).
    let me = std::process::id().to_string();
    let child = latlab()
        .args(["watch", "--tracefs", "--pid", &me, "--duration", "1s"])
        .args(["--no-history", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_success(&out);
    assert!(
        !has_instance(pid),
        "instance of {pid} left: {:?}",
        instances()
    );
    // SIGTERM while it streams: the result is written, the instance gone.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("watch.json");
    let child = latlab()
        .args([
            "watch",
            "--tracefs",
            "--pid",
            &me,
            "--no-history",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    while !has_instance(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "watch --tracefs made no instance"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    common::wait_until_catches(pid, libc::SIGTERM, Duration::from_millis(2500));
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_success(&out);
    let doc = read(&json);
    assert_eq!(doc["stopped_by"], "SIGTERM");
    assert_eq!(doc["settings"]["backend"], "tracefs");
    assert!(
        !has_instance(pid),
        "instance of {pid} left: {:?}",
        instances()
    );
}

#[test]
fn an_unprivileged_user_is_told_what_tracefs_needs() {
    if !root("watch --tracefs as nobody (setpriv needs root)") {
        return;
    }
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg("--inh-caps=-all")
        .arg(env!("CARGO_BIN_EXE_latlab"))
        .args([
            "watch",
            "--tracefs",
            "--rt",
            "--no-history",
            "--duration",
            "1s",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("--tracefs") && e.contains("permission denied") && e.contains("root"),
        "{e}"
    );
}
