//! `latlab record` driven as a real binary on the real tracefs, found as
//! latlab finds it (`/sys/kernel/tracing` or debugfs's `tracing/`). Needs
//! root; skips (with the reason) otherwise, unless LATLAB_REQUIRE_PRIVILEGE=1.

mod common;
use common::{assert_error, assert_success, json_of, latlab, require, spawn_piped};
use latlab_testkit::tracing::instance_dir;
use latlab_testkit::{have_tool, require_tracefs, TracefsState};
use latlab_tracefs::Tracefs;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn report_events(path: &Path) -> Vec<String> {
    let out = Command::new("trace-cmd")
        .arg("report")
        .arg(path)
        .output()
        .expect("run trace-cmd");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace-cmd report failed: {stderr}");
    assert!(
        !stderr.to_lowercase().contains("error"),
        "trace-cmd complained: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            !l.starts_with("cpus=") && !l.contains("EVENTS DROPPED") && !l.trim().is_empty()
        })
        .map(str::to_string)
        .collect()
}

/// `trace-cmd report`'s events of `path`, asserted to be as many as
/// latlab's `report` counted.
#[track_caller]
fn events_as_reported(path: &Path, report: &serde_json::Value) -> Vec<String> {
    let events = report_events(path);
    assert_eq!(
        events.len() as u64,
        report["total_events"].as_u64().unwrap()
    );
    events
}

/// What a recording test holds: the lock that runs them one at a time,
/// tracefs, its state before the test and a scratch directory.
type Recording = (
    MutexGuard<'static, ()>,
    Tracefs,
    TracefsState,
    tempfile::TempDir,
);

/// Takes the lock and finds tracefs (and trace-cmd, when the test reads the
/// file with it); `None` (the test skips) when either is missing.
fn recording(test: &str, trace_cmd: bool) -> Option<Recording> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tracefs = require_tracefs(test)?;
    if trace_cmd && !have_tool("trace-cmd", "trace-cmd") {
        return None;
    }
    let before = TracefsState::now(&tracefs);
    Some((serial, tracefs, before, tempfile::tempdir().unwrap()))
}

/// Asserts that process `pid`'s instance `latlab-<pid>` appears and traces.
#[track_caller]
fn assert_instance_appears(tracefs: &Tracefs, pid: u32) {
    assert!(
        wait_for_instance(tracefs, pid),
        "instance latlab-{pid} never appeared"
    );
}

/// `latlab record --no-kallsyms <flags> -o <out>`.
fn record(flags: &[&str], out: &Path) -> Command {
    let mut command = latlab();
    command
        .args(["record", "--no-kallsyms"])
        .args(flags)
        .arg("-o")
        .arg(out);
    command
}

/// Runs `<latlab> record -o <out> -- true`, asserts that it fails (exit
/// 1) and returns its stderr.
fn recording_true_fails(latlab: &mut Command, out: &str) -> String {
    let res = latlab
        .args(["record", "-o", out, "--", "true"])
        .output()
        .unwrap();
    assert_error(&res)
}

fn wait_for_instance(tracefs: &Tracefs, pid: u32) -> bool {
    let dir = instance_dir(tracefs, &format!("latlab-{pid}"));
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if dir.join("tracing_on").exists()
            && std::fs::read_to_string(dir.join("tracing_on")).is_ok_and(|s| s.trim() == "1")
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits until the recording child is tracing, lets it record for `settle`, sends it
/// SIGINT and returns its output once it has stopped (within 30 s) with success.
fn interrupt_while_recording(
    tracefs: &Tracefs,
    child: std::process::Child,
    settle: Duration,
) -> std::process::Output {
    let pid = child.id();
    assert_instance_appears(tracefs, pid);
    std::thread::sleep(settle);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let t0 = Instant::now();
    let res = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "latlab record {pid} did not stop on SIGINT"
    );
    assert_success(&res);
    res
}

#[test]
fn record_of_sleep_has_sched_switch_and_matches_trace_cmd() {
    let Some((_serial, _, before, dir)) = recording("latlab record", true) else {
        return;
    };
    let out = dir.path().join("sleep.dat");
    let child = spawn_piped(record(&["--json"], &out).args(["--", "sleep", "0.2"]));
    let pid = child.id();
    let res = child.wait_with_output().unwrap();
    assert_success(&res);
    let report = json_of(&res.stdout);
    let events = events_as_reported(&out, &report);
    assert!(events
        .iter()
        .any(|l| l.contains("sched_switch:") && l.contains("sleep")));
    assert_eq!(
        report["file_bytes"].as_u64().unwrap(),
        std::fs::metadata(&out).unwrap().len()
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");
    before.assert_clean(pid);
}

#[test]
fn sigint_still_writes_a_valid_file_and_removes_the_instance() {
    let Some((_serial, tracefs, before, dir)) = recording("latlab record", true) else {
        return;
    };
    let out = dir.path().join("int.dat");
    let child = spawn_piped(&mut record(
        &["--json", "--duration", "60s", "--events", "sched,timer"],
        &out,
    ));
    let pid = child.id();
    let res = interrupt_while_recording(&tracefs, child, Duration::from_millis(300));
    let report = json_of(&res.stdout);
    let events = events_as_reported(&out, &report);
    assert!(!events.is_empty());
    before.assert_clean(pid);
}

#[test]
fn flight_recorder_saves_on_sigusr1_and_at_the_end() {
    let Some((_serial, tracefs, before, dir)) = recording("latlab record", true) else {
        return;
    };
    let out = dir.path().join("fr.dat");
    let child = spawn_piped(
        record(
            &[
                "--flight-recorder",
                "--buffer-size",
                "128",
                "--events",
                "sched",
            ],
            &out,
        )
        // Long enough for the snapshot request to arrive while it runs.
        .args(["--", "sleep", "3"]),
    );
    let pid = child.id();
    assert_instance_appears(&tracefs, pid);
    common::wait_until_catches(pid, libc::SIGUSR1, Duration::from_millis(200));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR1) };
    let res = child.wait_with_output().unwrap();
    assert_success(&res);
    let snap = dir.path().join("fr-1.dat");
    assert!(
        snap.exists(),
        "no snapshot; stderr: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(!report_events(&snap).is_empty());
    // The end file holds what happened after the snapshot: the sleep ending.
    assert!(report_events(&out)
        .iter()
        .any(|l| l.contains("sched_switch:")));
    before.assert_clean(pid);
}

#[test]
fn a_command_that_cannot_start_is_an_error_and_leaves_no_instance() {
    let Some((_serial, _, before, dir)) = recording("latlab record", false) else {
        return;
    };
    let out = dir.path().join("x.dat");
    let child = spawn_piped(record(&[], &out).args(["--", "/nonexistent/latlab-test-cmd"]));
    let pid = child.id();
    let res = child.wait_with_output().unwrap();
    let stderr = assert_error(&res);
    assert!(stderr.contains("/nonexistent/latlab-test-cmd"), "{stderr}");
    assert!(!out.exists());
    before.assert_clean(pid);
}

#[test]
fn a_full_disk_is_an_error_naming_the_fix_and_leaves_nothing() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(tracefs) = require_tracefs("latlab record") else {
        return;
    };
    let before = TracefsState::now(&tracefs);
    let full = common::FullDisk::mount(0);
    let out = full.path("x.dat");
    let child = spawn_piped(record(&[], &out).args(["--", "sleep", "1"]));
    let pid = child.id();
    let res = child.wait_with_output().unwrap();
    let stderr = assert_error(&res);
    assert!(stderr.contains("the disk is full"), "{stderr}");
    assert_eq!(
        stderr.matches("No space left on device").count(),
        1,
        "{stderr}"
    );
    assert!(!out.exists(), "a partial trace left behind");
    before.assert_clean(pid);
}

#[test]
fn unknown_event_set_is_rejected_with_the_fix() {
    let res = latlab()
        .args(["record", "--events", "nosuchset", "--", "true"])
        .output()
        .unwrap();
    let stderr = assert_error(&res);
    assert!(
        stderr.contains("nosuchset") && stderr.contains("system:event"),
        "{stderr}"
    );
}

#[test]
fn without_privilege_the_error_names_the_fix() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Dropping privileges needs root; as a normal user the plain run shows the same error.
    let root = latlab_testkit::skip::is_root();
    let mut cmd = if root {
        let have = Command::new("setpriv").arg("--version").output().is_ok();
        if !require("setpriv (to drop root)", have, "apt-get install util-linux") {
            return;
        }
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ]);
        c.arg(env!("CARGO_BIN_EXE_latlab"));
        c
    } else {
        latlab()
    };
    let stderr = recording_true_fails(&mut cmd, "/tmp/latlab-unprivileged-test.dat");
    assert!(
        stderr.contains("permission denied") && stderr.contains("run as root"),
        "{stderr}"
    );
    assert!(!Path::new("/tmp/latlab-unprivileged-test.dat").exists());
}

#[test]
fn sigint_to_latlab_alone_is_passed_to_the_command_and_the_file_is_written() {
    let Some((_serial, tracefs, before, dir)) = recording("latlab record", true) else {
        return;
    };
    let out = dir.path().join("cmd.dat");
    let child = spawn_piped(
        record(&["--json", "--events", "sched,nosys:noevent"], &out).args(["--", "sleep", "60"]),
    );
    let pid = child.id();
    // The traced command must be stopped too, or latlab would not return.
    let res = interrupt_while_recording(&tracefs, child, Duration::from_millis(200));
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        stderr.contains("skipped: nosys:noevent"),
        "no warning for a missing event: {stderr}"
    );
    let report = json_of(&res.stdout);
    assert_eq!(report["events_missing"][0], "nosys:noevent");
    events_as_reported(&out, &report);
    before.assert_clean(pid);
}

#[test]
fn duration_ends_the_traced_command() {
    let Some((_serial, _, before, dir)) = recording("latlab record", false) else {
        return;
    };
    let out = dir.path().join("dur.dat");
    let t0 = Instant::now();
    let child = spawn_piped(
        record(&["--events", "sched", "--duration", "300ms"], &out).args(["--", "sleep", "60"]),
    );
    let pid = child.id();
    let res = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "--duration did not end the command"
    );
    assert_success(&res);
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
    before.assert_clean(pid);
}

#[test]
fn an_unwritable_output_fails_before_recording() {
    let stderr = recording_true_fails(&mut latlab(), "/nonexistent-latlab-dir/x.dat");
    assert!(
        stderr.contains("/nonexistent-latlab-dir/x.dat") && stderr.contains("choose another -o"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("starting the capture"),
        "recording started anyway: {stderr}"
    );
}

#[test]
fn leftovers_of_a_killed_recording_are_removed_by_the_next_one() {
    let Some((_serial, tracefs, before, dir)) = recording("latlab record", false) else {
        return;
    };
    let mut victim = record(
        &["--events", "sched", "--duration", "60s"],
        &dir.path().join("killed.dat"),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let dead = victim.id();
    assert_instance_appears(&tracefs, dead);
    // The instance appears before the capture's temp dir: wait for both, or
    // a kill in between leaves no temp dir to clean (seen in CI).
    let temp_dir_exists = || {
        std::fs::read_dir(dir.path()).unwrap().flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!(".latlab-capture-{dead}-"))
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !temp_dir_exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    victim.kill().unwrap(); // SIGKILL: no cleanup can run
    victim.wait().unwrap();
    let stale = instance_dir(&tracefs, &format!("latlab-{dead}"));
    assert!(stale.exists(), "expected a leftover instance after SIGKILL");
    assert!(
        temp_dir_exists(),
        "expected a leftover temp dir after SIGKILL"
    );

    let res = record(
        &["--events", "sched", "--duration", "100ms"],
        &dir.path().join("next.dat"),
    )
    .output()
    .unwrap();
    assert_success(&res);
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(
        stderr.contains(&format!("latlab-{dead}")),
        "no note about the removal: {stderr}"
    );
    assert!(!stale.exists(), "stale instance latlab-{dead} still there");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["next.dat".to_string()], "leftovers: {names:?}");
    before.assert_clean(dead);
}

/// Per CPU, the events named `name` in `trace-cmd report`'s text of `path`.
fn events_per_cpu(path: &Path, name: &str) -> std::collections::BTreeMap<usize, u64> {
    let needle = format!(" {name}:");
    let mut per_cpu = std::collections::BTreeMap::new();
    for line in report_events(path).iter().filter(|l| l.contains(&needle)) {
        let cpu = line
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .and_then(|(cpu, _)| cpu.trim().parse::<usize>().ok())
            .unwrap_or_else(|| panic!("no [CPU] in {line:?}"));
        *per_cpu.entry(cpu).or_default() += 1;
    }
    per_cpu
}

#[test]
fn under_a_load_the_default_events_record_page_allocations_only_on_the_measured_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(tracefs) = require_tracefs("latlab run --trace under a load") else {
        return;
    };
    if !have_tool("trace-cmd", "trace-cmd") {
        return;
    }
    let online = latlab_rt::sched::online_cpus();
    if !require(
        "two online CPUs (one measured, one not)",
        online.len() >= 2 && online.contains(&0),
        "run on a machine with two CPUs or more",
    ) {
        return;
    }
    let before = TracefsState::now(&tracefs);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.dat");
    let json = dir.path().join("r.json");
    // Page-allocator churn and a network load on every CPU; only CPU 0 is
    // measured.
    let child = spawn_piped(
        latlab()
            .args(["run", "--cpus", "0", "--duration", "2s"])
            .args(["--interval", "1ms"])
            .args(["--load", "mem:2,net:1", "--split", "off", "--no-save", "-q"])
            .arg("--trace")
            .arg(&trace)
            .arg("--json")
            .arg(&json),
    );
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let report = &result["trace"];
    let enabled: Vec<&str> = report["events_enabled"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    // explain reads page allocations; page frees nobody read.
    assert!(enabled.contains(&"kmem:mm_page_alloc"), "{enabled:?}");
    assert!(!enabled.contains(&"kmem:mm_page_free"), "{enabled:?}");
    assert_eq!(report["kmem_cpus"], serde_json::json!([0]), "{report}");
    // trace-cmd's reading of the file: page allocations on the measured CPU
    // only, every other event on every CPU.
    let allocs = events_per_cpu(&trace, "mm_page_alloc");
    let switches = events_per_cpu(&trace, "sched_switch");
    eprintln!("mm_page_alloc per CPU {allocs:?}, sched_switch per CPU {switches:?}");
    assert!(allocs.get(&0).is_some_and(|&n| n > 0), "{allocs:?}");
    assert_eq!(allocs.keys().collect::<Vec<_>>(), [&0], "{allocs:?}");
    for cpu in &online {
        assert!(
            switches.get(cpu).is_some_and(|&n| n > 0),
            "CPU {cpu}: {switches:?}"
        );
    }
    before.assert_clean(pid);
}
