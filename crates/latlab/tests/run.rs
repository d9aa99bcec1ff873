//! `latlab run` driven through the real binary: real SCHED_FIFO threads,
//! real timers, real files and signals.

mod common;
use common::{assert_error, assert_success, latlab, quiet_run_on_cpu0, root};

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

/// `args` after `--cpus 0`.
fn on_cpu0<'a>(args: &[&'a str]) -> Vec<&'a str> {
    [&["--cpus", "0"], args].concat()
}

/// A temp dir that user nobody may write in (mode 0777).
fn writable_by_nobody() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    dir
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
        let stderr = assert_error(&output);
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
    let stderr = assert_error(&output);
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
        &on_cpu0(&[
            "--loops",
            "200",
            "--max-latency",
            "1ns",
            "--percentile",
            "50:10s",
        ]),
    );
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Verdict: FAIL"), "{stdout}");
    assert!(stdout.contains("FAIL: CPU0 max"), "{stdout}");
    assert!(stdout.contains("PASS: p50 latency <= 10.0 s"), "{stdout}");
    assert_eq!(result["verdict"], "fail");

    let (output, result) = run_json(
        dir.path(),
        &on_cpu0(&[
            "--loops",
            "200",
            "--profile",
            "emblix-class2",
            "--max-latency",
            "10s",
        ]),
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
    assert_success(&output);

    // <output-dir>/<timestamp>/result.json
    let stamp_dirs: Vec<_> = std::fs::read_dir(d.join("results")).unwrap().collect();
    assert_eq!(stamp_dirs.len(), 1);
    let result_path = stamp_dirs[0].as_ref().unwrap().path().join("result.json");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(result_path).unwrap()).unwrap();
    assert_eq!(result["schema"], "latlab.run");
    assert_eq!(result["schema_version"], 2);
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
    assert_success(&history);
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
    let dir = writable_by_nobody();
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
    let stderr = assert_error(&output);
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
    assert_success(&output);
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
    assert_success(&output);
    let kinds = result["load"]["kinds"]
        .as_array()
        .expect("load report in the result");
    for name in ["cpu", "syscall"] {
        let kind = kinds.iter().find(|k| k["kind"] == name).unwrap();
        assert!(kind["total"].as_u64().unwrap() > 0, "{name}: {kind}");
    }
    // Even --quiet's one line names the load.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .unwrap_or_default()
            .contains("load cpu:1,syscall:1"),
        "{stdout}"
    );
}

#[test]
fn failing_load_command_stops_the_run_with_a_clear_error() {
    if !root("failing_load_command_stops_the_run_with_a_clear_error") {
        return;
    }
    let output = quiet_run_on_cpu0()
        .args(["--duration", "10s"])
        .args(["--load-cmd", "exit 3"])
        .output()
        .unwrap();
    let stderr = assert_error(&output);
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
    assert_success(&output);
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
        &on_cpu0(&[
            "--loops",
            "100",
            "--trace",
            trace.to_str().unwrap(),
            "--trace-threshold",
            "1ns",
        ]),
    );
    assert_success(&output);
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
        &on_cpu0(&[
            "--loops",
            "200",
            "--trace",
            trace.to_str().unwrap(),
            "--flight-recorder",
            "--trace-threshold",
            "1ns",
        ]),
    );
    assert_success(&output);
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
        &on_cpu0(&[
            "--timer",
            "itimer",
            "--interval",
            "100us",
            "--loops",
            "2000",
            "--trace",
            trace.to_str().unwrap(),
        ]),
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
        &on_cpu0(&["--loops", "500", "--explain", "--trace-threshold", "1ns"]),
    );
    assert_success(&output);
    let explain = &result["explain"];
    // Every sample is at or over 1 ns, so every detected period is late.
    let late = explain["late"].as_u64().expect("explanation in the result");
    assert!(late > 100, "{late} late periods of 500");
    assert!(!explain["causes"].as_array().unwrap().is_empty());
    assert_eq!(explain["selected"][0]["comm"], "latlab-cpu0", "{explain}");
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

/// The policy and real-time priority the kernel reports for the thread
/// named `comm` of process `pid` (`/proc/PID/task/TID/stat`, fields 41 and
/// 40), once it exists and has left SCHED_OTHER or 2 s have passed.
fn kernel_scheduling(pid: u32, comm: &str) -> Option<(i32, u32)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let mut seen = None;
    while std::time::Instant::now() < deadline {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        for task in tasks.flatten() {
            let dir = task.path();
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if name.trim() != comm {
                continue;
            }
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // Fields after the command name's closing parenthesis start at field 3.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
            if let (Some(rt_priority), Some(policy)) = (fields.get(37), fields.get(38)) {
                seen = Some((policy.parse().unwrap(), rt_priority.parse().unwrap()));
            }
        }
        if seen.is_some_and(|(policy, _)| policy != libc::SCHED_OTHER) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    seen
}

#[test]
fn unprivileged_run_records_the_policy_its_threads_got() {
    if !root("unprivileged_run_records_the_policy_its_threads_got") {
        return;
    }
    let dir = writable_by_nobody();
    let json = dir.path().join("u.json");
    let mut command = common::latlab_as_nobody();
    // No real-time priority for user nobody, whatever limits root has.
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_RTPRIO, &none) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command
        .current_dir(dir.path())
        .args(["run", "--allow-unprivileged", "--no-save", "--split", "off"])
        .args(["--cpus", "0", "--duration", "2s", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The independent view: what the kernel says the measurement thread runs at.
    let (policy, rt_priority) =
        kernel_scheduling(child.id(), "latlab-cpu0").expect("the thread latlab-cpu0 was seen");
    let output = child.wait_with_output().unwrap();
    assert_success(&output);
    let (name, policy_json) = match policy {
        libc::SCHED_OTHER => ("SCHED_OTHER", "other"),
        libc::SCHED_FIFO => ("SCHED_FIFO", "fifo"),
        libc::SCHED_RR => ("SCHED_RR", "rr"),
        other => panic!("policy {other}"),
    };
    assert_eq!(name, "SCHED_OTHER", "user nobody without RLIMIT_RTPRIO");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let header = stdout.lines().next().unwrap_or_default();
    assert!(
        header.contains(name) && !header.contains("SCHED_FIFO"),
        "the header says what the threads ran at: {stdout}"
    );
    assert!(stdout.contains("unprivileged"), "{stdout}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        result["settings"]["policy"], policy_json,
        "{}",
        result["settings"]
    );
    assert_eq!(result["settings"]["priority"], rt_priority);
    assert_eq!(result["threads"][0]["policy"], policy_json);
    assert_eq!(result["settings"]["unprivileged"], true);
}

#[test]
fn a_load_command_is_recorded_as_that_command() {
    if !root("a_load_command_is_recorded_as_that_command") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let command = "while :; do :; done";
    let output = latlab()
        .current_dir(dir.path())
        .args(["run", "--cpus", "0", "--duration", "1s", "--split", "off"])
        .args(["--output-dir", "results", "--db", "history.sqlite"])
        .args(["--load-cmd", command])
        .output()
        .unwrap();
    assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let named = format!("load `{command}`");
    assert!(
        stdout.lines().next().unwrap_or_default().contains(&named),
        "the header names the load: {stdout}"
    );
    assert!(!stdout.contains("load none"), "{stdout}");
    // The stored result: the command, and what it used.
    let saved = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("result.json"))
        .find(|p| p.exists())
        .expect("the saved result");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    assert_eq!(result["load"]["command"], command);
    assert!(
        result["load"]["external"]["cpu_seconds"].as_f64().unwrap() > 0.0,
        "the command ran: {}",
        result["load"]
    );
    // The history lists it as that command, and `report` names it too.
    let history = latlab()
        .current_dir(dir.path())
        .args(["history", "--db", "history.sqlite"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&history.stdout);
    assert!(listing.contains(command), "{listing}");
    let verbose = latlab()
        .current_dir(dir.path())
        .args(["run", "--cpus", "0", "--loops", "200", "--split", "off"])
        .args(["--no-save", "--verbose", "--load-cmd", command])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(
        text.contains(&format!("Background load (`{command}`)")) && !text.contains("(none)"),
        "{text}"
    );
}

#[test]
fn the_flight_recorder_names_the_sample_that_stopped_it() {
    if !root("the_flight_recorder_names_the_sample_that_stopped_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("fr.dat");
    let samples = dir.path().join("s.bin");
    let threshold_ns: u64 = 20_000;
    let (output, result) = run_json(
        dir.path(),
        &on_cpu0(&[
            "--duration",
            "2s",
            "--trace",
            trace.to_str().unwrap(),
            "--flight-recorder",
            "--trace-threshold",
            "20us",
            "--samples",
            samples.to_str().unwrap(),
        ]),
    );
    assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    // One CPU: its sample log, in order, is the thread's cycles.
    let log = latlab_measure::samples::read_samples(&samples).unwrap();
    let first_late = log.iter().enumerate().find(|(_, r)| {
        r.flags & latlab_measure::samples::SampleRecord::EARLY == 0
            && u64::from(r.latency_ns) >= threshold_ns
    });
    let stop = &result["flight_recorder_stop"];
    let Some((cycle, sample)) = first_late else {
        assert!(stop.is_null(), "no sample reached 20 us, yet: {stop}");
        assert!(stdout.contains("never stopped"), "{stdout}");
        return;
    };
    assert_eq!(stop["cpu"], 0, "{stop}");
    assert_eq!(stop["cycle"], cycle as u64, "{stop}");
    assert_eq!(stop["intended_ns"], sample.intended_ns, "{stop}");
    assert_eq!(stop["latency_ns"], u64::from(sample.latency_ns), "{stop}");
    assert_eq!(stop["threshold_ns"], threshold_ns, "{stop}");
    assert!(
        stdout.contains(&format!("stopped by CPU0 cycle {cycle}:")),
        "{stdout}"
    );
    // The trace ends with the sample's own marker line and the stop's.
    let dump = latlab().arg("dump").arg(&trace).output().unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout);
    let stop_line = format!(
        "latlab: flight recorder stopped: cpu=0 cycle={cycle} latency={} threshold={threshold_ns}",
        sample.latency_ns
    );
    assert!(dump.contains(&stop_line), "no `{stop_line}` in the trace");
    assert!(
        dump.contains(&format!(
            "latlab: cycle={cycle} intended={}",
            sample.intended_ns
        )),
        "the sample's marker is in the trace"
    );
}

/// The lines latlab prints on stderr about the machine and its session.
fn notes_in(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("latlab: note:") || l.starts_with("latlab: warning:"))
        .collect()
}

/// The notes about the machine (RT throttling is on by default on Linux,
/// so there is at least that one) come once the measurement is set up:
/// never before an error about the arguments, never with --quiet, one short
/// line each otherwise.
#[test]
fn machine_notes_come_once_short_after_the_arguments_and_not_with_quiet() {
    if !root("machine_notes_come_once_short_after_the_arguments_and_not_with_quiet") {
        return;
    }
    let throttling = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us")
        .is_ok_and(|v| v.trim() != "-1");
    let bad = latlab()
        .args(["run", "--no-save", "--cpus", "0", "--interval", "1us"])
        .args(["--loops", "10"])
        .output()
        .unwrap();
    let stderr = assert_error(&bad);
    assert!(stderr.contains("below the 10 us minimum"), "{stderr}");
    assert!(
        notes_in(&stderr).is_empty(),
        "notes before the error: {stderr}"
    );

    let run = |flag: &str| {
        latlab()
            .args(["run", "--no-save", "--cpus", "0", "--loops", "100"])
            .args(["--split", "off", flag])
            .output()
            .unwrap()
    };
    let quiet = run("--quiet");
    assert!(quiet.status.success());
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(notes_in(&stderr).is_empty(), "--quiet printed: {stderr}");
    let stdout = String::from_utf8_lossy(&quiet.stdout);
    assert!(
        stdout.lines().count() <= 3 && stdout.contains("No requirement given"),
        "--quiet prints the verdict: {stdout}"
    );

    let normal = run("--no-history");
    assert!(normal.status.success());
    let stderr = String::from_utf8_lossy(&normal.stderr);
    let notes = notes_in(&stderr);
    if throttling {
        assert_eq!(
            notes.iter().filter(|l| l.contains("RT throttling")).count(),
            1,
            "once: {stderr}"
        );
    }
    for note in &notes {
        assert!(note.len() <= 140, "one short line: {note}");
    }
}

/// `run --explain` prints the verdict, the figures and the top causes with
/// each fix once; the tables are for --verbose and the result.
#[test]
fn run_explain_prints_a_short_summary_with_each_fix_once() {
    if !root("run_explain_prints_a_short_summary_with_each_fix_once") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = latlab()
        .current_dir(dir.path())
        .args(["run", "--no-save", "--cpus", "0", "--duration", "3s"])
        .args(["--explain", "--load", "net:1", "--trace-threshold", "20us"])
        .args(["--json", "r.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = stdout.lines().count();
    assert!(lines <= 40, "{lines} lines: {stdout}");
    assert!(
        stdout
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("No requirement given"),
        "the verdict comes first: {stdout}"
    );
    assert!(!stdout.contains("Table 1"), "{stdout}");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let causes = result["explain"]["causes"].as_array().unwrap();
    if !causes.is_empty() {
        assert!(stdout.contains("the top causes:"), "{stdout}");
        assert!(stdout.contains(&format!(
            "1. {}",
            causes[0]["description"].as_str().unwrap()
        )));
        // The next step, for the CPUs and load measured (CPU 0 is tune's
        // housekeeping: its default CPU instead).
        assert!(
            stdout.contains("sudo latlab tune --load net:1 (--plan: the plan, nothing changed)"),
            "{stdout}"
        );
    }
    let mut parts: Vec<&str> = Vec::new();
    for fix in stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("-> "))
    {
        let own = fix.split("as for #").next().unwrap_or_default();
        for part in own.split("; ").map(|p| p.trim_end_matches("; and ")) {
            let part = part.trim();
            if part.is_empty() || part == "and" {
                continue;
            }
            assert!(!parts.contains(&part), "`{part}` given twice: {stdout}");
            parts.push(part);
        }
    }
    // --verbose still has every table.
    let verbose = latlab()
        .current_dir(dir.path())
        .args(["run", "--no-save", "--cpus", "0", "--loops", "500"])
        .args(["--explain", "--trace-threshold", "1ns", "--verbose"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(
        text.contains("Table 1: late periods") && text.contains("Period accuracy"),
        "{text}"
    );
}

/// `run --explain` analyses its own measurement threads: another latlab
/// measuring on the same CPU has threads of the same name, in the same
/// trace, and none of them is in the run's explanation.
#[test]
fn run_explain_analyses_its_own_threads_only() {
    if !root("run_explain_analyses_its_own_threads_only") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut other = quiet_run_on_cpu0()
        .args(["--duration", "6s"])
        .args(["--split", "off", "--priority", "90"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _stop = common::KillOnDrop(vec![other.id()]);
    let (output, result) = run_json(
        dir.path(),
        &on_cpu0(&["--duration", "2s", "--split", "off", "--explain"]),
    );
    assert_success(&output);
    let selected = result["explain"]["selected"].as_array().unwrap();
    assert_eq!(selected.len(), 1, "{selected:?}");
    assert_eq!(selected[0]["comm"], "latlab-cpu0");
    // The other run's thread of the same name was in the trace.
    let found = result["explain"]["tasks_found"].as_array().unwrap();
    assert!(
        found.iter().filter(|t| t["comm"] == "latlab-cpu0").count() >= 2,
        "the other run was traced too: {found:?}"
    );
    assert!(other.wait().unwrap().success());
}

/// Every histogram under `value` (a key ending in `histogram`), read.
fn histograms(value: &Value, out: &mut Vec<latlab_measure::histogram::Histogram>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key.ends_with("histogram") && child.is_array() {
                    out.push(serde_json::from_value(child.clone()).expect("a histogram"));
                } else {
                    histograms(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| histograms(item, out)),
        _ => {}
    }
}

/// `value` with every histogram emptied.
fn without_histograms(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| {
                    let child = if key.ends_with("histogram") && child.is_array() {
                        Value::Array(Vec::new())
                    } else {
                        without_histograms(child)
                    };
                    (key.clone(), child)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_histograms).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_result_and_its_history_entry_grow_with_the_histograms_buckets_not_the_samples() {
    if !root("a_result_and_its_history_entry_grow_with_the_histograms_buckets") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let output = latlab()
        .current_dir(d)
        .args(["run", "--quiet", "--cpus", "0", "--interval", "200us"])
        .args([
            "--duration",
            "3s",
            "--output-dir",
            "results",
            "--db",
            "h.sqlite",
        ])
        .output()
        .unwrap();
    assert_success(&output);
    let stamp = std::fs::read_dir(d.join("results"))
        .unwrap()
        .next()
        .unwrap();
    let file = stamp.unwrap().path().join("result.json");
    let bytes = std::fs::metadata(&file).unwrap().len() as usize;
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut all = Vec::new();
    histograms(&result, &mut all);
    let buckets: usize = all.iter().map(|h| h.buckets().count()).sum();
    let samples: u64 = all.iter().map(|h| h.count()).sum();
    let rest = without_histograms(&result).to_string().len();
    // A bucket costs its count's digits and a comma, a run of buckets its
    // lowest value and brackets: 12 bytes per bucket is the sparsest case.
    // The rest (settings, series, worst samples) as written, indented.
    let bound = 12 * buckets + 2 * rest + 4096;
    eprintln!(
        "result.json: {bytes} bytes; {} histograms, {buckets} buckets, {samples} values; \
         the rest {rest} bytes compact; bound {bound}",
        all.len()
    );
    assert!(samples > 10_000, "{samples} values");
    assert!(
        bytes <= bound,
        "result.json is {bytes} bytes for {buckets} histogram buckets ({} per bucket beyond \
         the rest's {rest} bytes)",
        (bytes - rest) / buckets.max(1)
    );
    // The history stores the same document, compact.
    let history = latlab_history::History::open(&d.join("h.sqlite")).unwrap();
    let entries = history.list(None).unwrap();
    assert_eq!(entries.len(), 1);
    let stored = history.get(entries[0].id).unwrap().to_string().len();
    eprintln!("history entry: {stored} bytes");
    assert!(
        stored <= bound,
        "the history entry is {stored} bytes; bound {bound}"
    );
}
