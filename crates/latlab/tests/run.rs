//! `latlab run` driven through the real binary: real SCHED_FIFO threads,
//! real timers, real files and signals.

mod common;
use common::{latlab, root};

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

fn run_json(dir: &Path, args: &[&str]) -> (Output, Value) {
    let (output, value, _) = run_json_pid(dir, args);
    (output, value)
}

/// Like [`run_json`], also returning the process id (tracefs instances are
/// named after it).
fn run_json_pid(dir: &Path, args: &[&str]) -> (Output, Value, u32) {
    let json = dir.join("result.json");
    let child = latlab()
        .current_dir(dir)
        .args(["run", "--quiet", "--no-save", "--json"])
        .arg(&json)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("latlab runs");
    let pid = child.id();
    let output = child.wait_with_output().expect("latlab runs");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no result JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (
        output,
        serde_json::from_str(&text).expect("result is JSON"),
        pid,
    )
}

fn check_timer(timer: &str, cpus: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (output, result) = run_json(
        dir.path(),
        &[
            "--timer",
            timer,
            "--cpus",
            cpus,
            "--duration",
            "1s",
            "--interval",
            "1ms",
        ],
    );
    assert!(
        output.status.success(),
        "{timer}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(result["settings"]["timer"], timer);
    for thread in result["threads"].as_array().unwrap() {
        let cycles = thread["cycles"].as_u64().unwrap();
        let missed = thread["missed_periods"].as_u64().unwrap();
        let latency = &thread["latency"];
        assert_eq!(latency["count"].as_u64().unwrap(), cycles);
        assert!(latency["min"].as_u64().unwrap() <= latency["max"].as_u64().unwrap());
        assert_eq!(
            thread["policy"], "fifo",
            "{timer}: the thread really got SCHED_FIFO"
        );
        assert_eq!(thread["priority"], 95);
        if timer == "nanosleep" {
            // Relative sleeps drift by each wake-up's latency: fewer than 1000 periods.
            assert!((500..=1000).contains(&cycles), "{timer}: {cycles} cycles");
        } else {
            // Absolute timers: every grid point of the second is either a sample or missed.
            let periods = cycles + missed;
            assert!(
                (995..=1001).contains(&periods),
                "{timer}: {cycles} + {missed} missed"
            );
        }
    }
}

#[test]
fn clock_nanosleep_runs_on_every_cpu() {
    if root("clock_nanosleep_runs_on_every_cpu") {
        check_timer("clock-nanosleep", "0-1");
    }
}

#[test]
fn nanosleep_runs() {
    if root("nanosleep_runs") {
        check_timer("nanosleep", "0");
    }
}

#[test]
fn itimer_runs_on_one_cpu() {
    if root("itimer_runs_on_one_cpu") {
        check_timer("itimer", "1");
    }
}

#[test]
fn posix_timer_runs_on_every_cpu() {
    if root("posix_timer_runs_on_every_cpu") {
        check_timer("posix-timer", "0-1");
    }
}

#[test]
fn timerfd_runs_on_every_cpu() {
    if root("timerfd_runs_on_every_cpu") {
        check_timer("timerfd", "0-1");
    }
}

#[test]
fn rtc_runs_or_names_the_missing_device() {
    if !root("rtc_runs_or_names_the_missing_device") {
        return;
    }
    if Path::new("/dev/rtc0").exists() {
        let dir = tempfile::tempdir().unwrap();
        let (output, result) = run_json(
            dir.path(),
            &[
                "--timer",
                "rtc",
                "--cpus",
                "0",
                "--duration",
                "1s",
                "--interval",
                "976562ns",
            ],
        );
        assert!(output.status.success());
        assert!(result["threads"][0]["cycles"].as_u64().unwrap() > 500);
    } else {
        let output = latlab()
            .args([
                "run",
                "--quiet",
                "--no-save",
                "--timer",
                "rtc",
                "--cpus",
                "0",
            ])
            .args(["--duration", "1s", "--interval", "976562ns"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("/dev/rtc0") && stderr.contains("no RTC device"),
            "{stderr}"
        );
    }
}

#[test]
fn itimer_on_two_cpus_is_refused_with_the_alternative() {
    let output = latlab()
        .args([
            "run",
            "--no-save",
            "--timer",
            "itimer",
            "--cpus",
            "0-1",
            "--duration",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("process-wide") && stderr.contains("posix-timer"),
        "{stderr}"
    );
}

#[test]
fn violated_requirement_exits_2_with_the_verdict_in_words() {
    if !root("violated_requirement_exits_2_with_the_verdict_in_words") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (output, result) = run_json(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--loops",
            "200",
            "--max-latency",
            "1ns",
            "--percentile",
            "50:10s",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Verdict: FAIL"), "{stdout}");
    assert!(stdout.contains("FAIL: CPU0 max"), "{stdout}");
    assert!(stdout.contains("PASS: p50 latency <= 10.0 s"), "{stdout}");
    assert_eq!(result["verdict"], "fail");

    let (output, result) = run_json(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--loops",
            "200",
            "--profile",
            "emblix-class2",
            "--max-latency",
            "10s",
        ],
    );
    // emblix-class2 (1 ms) may fail on a noisy VM; 10 s may not.
    let verdict = result["verdict"].as_str().unwrap();
    assert_eq!(
        output.status.code(),
        Some(if verdict == "pass" { 0 } else { 2 })
    );
    assert_eq!(result["requirements"].as_array().unwrap().len(), 2);
    assert_eq!(result["requirements"][1]["passed"], true);
}

#[test]
fn every_output_format_is_written_and_consistent() {
    if !root("every_output_format_is_written_and_consistent") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let output = latlab()
        .current_dir(d)
        .args(["run", "--quiet", "--cpus", "0-1", "--loops", "300"])
        .args(["--histogram-text", "hist.txt", "--rt-tests-json", "rt.json"])
        .args([
            "--samples",
            "samples.bin",
            "--output-dir",
            "results",
            "--db",
            "history.sqlite",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // <output-dir>/<timestamp>/result.json
    let stamp_dirs: Vec<_> = std::fs::read_dir(d.join("results")).unwrap().collect();
    assert_eq!(stamp_dirs.len(), 1);
    let result_path = stamp_dirs[0].as_ref().unwrap().path().join("result.json");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(result_path).unwrap()).unwrap();
    assert_eq!(result["schema"], "latlab.run");
    assert_eq!(result["schema_version"], 1);
    assert!(result["command_line"].as_array().unwrap().len() > 3);
    assert!(result["system"]["kernel_release"].as_str().unwrap().len() > 1);
    assert_eq!(result["settings"]["mlocked"], true);
    let total = result["overall"]["cycles"].as_u64().unwrap();
    assert_eq!(total, 600);

    // cyclictest histogram: rows add up to the samples of each thread.
    let hist = std::fs::read_to_string(d.join("hist.txt")).unwrap();
    assert!(hist.starts_with("# Histogram\n"));
    let rows: u64 = hist
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| {
            l.split([' ', '\t'])
                .skip(1)
                .map(|v| v.parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    let overflows: u64 = hist
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows: "))
        .unwrap()
        .split(' ')
        .map(|v| v.parse::<u64>().unwrap())
        .sum();
    assert_eq!(rows + overflows, 600);

    // rt-tests JSON
    let rt: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("rt.json")).unwrap()).unwrap();
    assert_eq!(rt["num_threads"], 2);
    assert_eq!(rt["thread"]["0"]["cycles"], 300);
    assert_eq!(rt["file_version"], 1);

    // The saved result is also in the history database.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Stored in the history as id 1"), "{stdout}");
    let history = latlab()
        .current_dir(d)
        .args(["history", "--db", "history.sqlite"])
        .output()
        .unwrap();
    assert!(
        history.status.success(),
        "{}",
        String::from_utf8_lossy(&history.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&history.stdout)
            .lines()
            .filter(|l| l.trim_start().starts_with("1 "))
            .count(),
        1,
        "{}",
        String::from_utf8_lossy(&history.stdout)
    );

    // samples: 16-byte header + 16 bytes per sample
    let size = std::fs::metadata(d.join("samples.bin")).unwrap().len();
    assert_eq!(size, 16 + 16 * 600);
}

#[test]
fn ctrl_c_mid_run_still_writes_a_complete_result() {
    if !root("ctrl_c_mid_run_still_writes_a_complete_result") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = latlab()
        .current_dir(dir.path())
        .args(["run", "--quiet", "--no-save", "--duration", "60s", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_catches(child.id(), libc::SIGINT, Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    let cycles = result["overall"]["cycles"].as_u64().unwrap();
    assert!(cycles > 500, "{cycles} cycles after ~1.5 s on 2 CPUs");
    assert_eq!(
        result["overall"]["latency"]["count"].as_u64().unwrap(),
        cycles
    );
    assert!(result["elapsed_s"].as_f64().unwrap() < 30.0);
}

#[test]
fn unprivileged_user_gets_the_named_fix() {
    if !root("unprivileged_user_gets_the_named_fix") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let exe = latlab_testkit::ExecutableByOthers::new(Path::new(env!("CARGO_BIN_EXE_latlab")));
    let nobody = |extra: &[&str]| {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(exe.path())
            .current_dir(dir.path())
            .uid(65534)
            .gid(65534)
            .args([
                "run",
                "--quiet",
                "--no-save",
                "--cpus",
                "0",
                "--loops",
                "100",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let output = nobody(&[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("SCHED_FIFO priority 95 refused"),
        "{stderr}"
    );
    assert!(
        stderr.contains("CAP_SYS_NICE") && stderr.contains("RLIMIT_RTPRIO"),
        "{stderr}"
    );

    let json = dir.path().join("u.json");
    let output = nobody(&["--allow-unprivileged", "--json", json.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["settings"]["unprivileged"], true);
    assert_eq!(result["threads"][0]["policy"], "other");
    assert!(result["warnings"]
        .to_string()
        .contains("NOT representative"));
}

#[test]
fn bad_arguments_are_named() {
    let cases: [(&[&str], &str); 4] = [
        (&["--cpus", "999"], "CPU 999 is not usable"),
        (&["--timer", "hpet"], "unknown timer"),
        (&["--interval", "1us"], "below the 10 us minimum"),
        (&["--percentile", "99.9"], "PERCENTILE:LIMIT"),
    ];
    for (args, expected) in cases {
        let output = latlab()
            .args(["run", "--no-save"])
            .args(args)
            .output()
            .unwrap();
        assert_ne!(output.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn load_runs_alongside_and_its_throughput_is_in_the_result() {
    if !root("load_runs_alongside_and_its_throughput_is_in_the_result") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (output, result) = run_json(
        dir.path(),
        &["--cpus", "0", "--loops", "300", "--load", "cpu:1,syscall:1"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let kinds = result["load"]["kinds"]
        .as_array()
        .expect("load report in the result");
    for name in ["cpu", "syscall"] {
        let kind = kinds.iter().find(|k| k["kind"] == name).unwrap();
        assert!(kind["total"].as_u64().unwrap() > 0, "{name}: {kind}");
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Background load (cpu:1,syscall:1)"),
        "{stdout}"
    );
}

#[test]
fn failing_load_command_stops_the_run_with_a_clear_error() {
    if !root("failing_load_command_stops_the_run_with_a_clear_error") {
        return;
    }
    let output = latlab()
        .args([
            "run",
            "--quiet",
            "--no-save",
            "--cpus",
            "0",
            "--duration",
            "10s",
        ])
        .args(["--load-cmd", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("exit 3") || stderr.contains("status 3"),
        "{stderr}"
    );
}

/// True when process `pid` has no tracefs instance left (tracefs found as
/// latlab finds it).
fn instance_removed(pid: u32) -> bool {
    let tracefs = latlab_tracefs::Tracefs::discover().expect("tracefs");
    latlab_testkit::tracing::instances_of(&tracefs, pid).is_empty()
}

fn marker_lines(trace: &Path) -> usize {
    let output = latlab().arg("dump").arg(trace).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.contains("latlab: cycle="))
        .count()
}

#[test]
fn trace_marks_every_sample_over_the_threshold() {
    if !root("trace_marks_every_sample_over_the_threshold") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.dat");
    // Every sample is at or over 1 ns.
    let (output, result2, pid) = run_json_pid(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--loops",
            "100",
            "--trace",
            trace.to_str().unwrap(),
            "--trace-threshold",
            "1ns",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // One marker line per sample over 1 ns, unless the ring buffer overran (a busy
    // machine can starve the reader) or the kernel refused a marker: then the
    // report counts the lost events, or a warning the refused markers.
    let markers = marker_lines(&trace) as u64;
    let lost = result2["trace"]["lost_events"].as_u64().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let refused = stderr.contains("trace marker line(s) could not be written");
    if lost == 0 && !refused {
        assert_eq!(markers, 100, "one marker line per sample over 1 ns");
    } else {
        assert!(markers <= 100, "{markers} markers, {lost} lost\n{stderr}");
    }
    assert!(result2["trace"]["total_events"].as_u64().unwrap() > 100);
    assert_eq!(result2["trace"]["trace_clock"], "mono");
    assert!(instance_removed(pid), "instance latlab-{pid} left behind");
}

#[test]
fn flight_recorder_freezes_at_the_first_late_sample() {
    if !root("flight_recorder_freezes_at_the_first_late_sample") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("fr.dat");
    let (output, result, pid) = run_json_pid(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--loops",
            "200",
            "--trace",
            trace.to_str().unwrap(),
            "--flight-recorder",
            "--trace-threshold",
            "1ns",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(result["trace"]["flight_recorder"], true);
    // Tracing stopped at the first sample: its marker is the only one.
    assert_eq!(marker_lines(&trace), 1);
    assert!(instance_removed(pid), "instance latlab-{pid} left behind");
}

#[test]
fn itimer_with_trace_is_not_killed_by_sigalrm() {
    // Regression: trace reader threads started before SIGALRM was blocked
    // took the itimer's signal and the process died ("Alarm clock").
    if !root("itimer_with_trace_is_not_killed_by_sigalrm") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("itimer.dat");
    let (output, result, pid) = run_json_pid(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--timer",
            "itimer",
            "--interval",
            "100us",
            "--loops",
            "2000",
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(result["overall"]["cycles"], 2000);
    assert!(instance_removed(pid));
}

#[test]
fn explain_records_and_explains_the_late_wakeups_of_the_run() {
    if !root("explain_records_and_explains_the_late_wakeups_of_the_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (output, result, pid) = run_json_pid(
        dir.path(),
        &[
            "--cpus",
            "0",
            "--loops",
            "500",
            "--explain",
            "--trace-threshold",
            "1ns",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let explain = &result["explain"];
    // Every sample is at or over 1 ns, so every detected period is late.
    let late = explain["late"].as_u64().expect("explanation in the result");
    assert!(late > 100, "{late} late periods of 500");
    assert!(!explain["causes"].as_array().unwrap().is_empty());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("latlab-cpu0"), "{stdout}");
    // The temporary trace is gone, and so is the tracefs instance.
    let temp = std::env::temp_dir().join(format!("latlab-run-{pid}.dat"));
    assert!(!temp.exists());
    assert!(instance_removed(pid));
}

#[test]
fn a_full_disk_loses_only_what_did_not_fit_and_says_so() {
    if !root("a_full_disk_loses_only_what_did_not_fit_and_says_so") {
        return;
    }
    // One page left: the sample log takes it and fills the disk.
    let full = common::FullDisk::mount(1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = |args: &[&str]| {
        latlab()
            .current_dir(dir.path())
            .args(["run", "--quiet", "--cpus", "0", "--duration", "1s"])
            .args(args)
            .output()
            .unwrap()
    };
    // The sample log and the saved result do not fit; --json does. The
    // measurement goes on after the sample log fills the disk.
    let out = run(&[
        "--samples",
        full.path("s.bin").to_str().unwrap(),
        "--output-dir",
        full.path("res").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("2 outputs failed"), "{stderr}");
    assert!(stderr.contains("sample log is incomplete"), "{stderr}");
    assert_eq!(
        stderr.matches("No space left on device").count(),
        2,
        "each failure said once: {stderr}"
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cycles = result["overall"]["cycles"].as_u64().unwrap();
    // What reached the sample log is whole, readable records: the first
    // ones measured, fewer than all.
    let logged = latlab_measure::samples::read_samples(&full.path("s.bin")).unwrap();
    assert!(!logged.is_empty());
    assert!(
        (logged.len() as u64) < cycles,
        "{} of {cycles}",
        logged.len()
    );
    assert!(
        stderr.contains(&format!("holds the first {} samples", logged.len())),
        "{stderr}"
    );

    // Only the saved result asked for, and it does not fit: it goes to the
    // temporary directory instead, and the output says where.
    let out = run(&["--output-dir", full.path("res").to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let fallback = common::fallback_named(&stdout);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&fallback).unwrap()).unwrap();
    std::fs::remove_file(&fallback).unwrap();
    assert!(saved["overall"]["cycles"].as_u64().unwrap() > 0);

    // The kernel trace does not fit: the result does, and no half-written
    // trace stays behind.
    std::fs::remove_file(&json).unwrap();
    let trace = full.path("t.dat");
    let out = run(&[
        "--trace",
        trace.to_str().unwrap(),
        "--no-save",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the disk is full"), "{stderr}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(result["overall"]["cycles"].as_u64().unwrap() > 0);
    let left: Vec<_> = std::fs::read_dir(full.path(""))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("t.dat"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
