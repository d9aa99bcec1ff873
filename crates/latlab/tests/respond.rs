//! `latlab respond` driven through the real binary: a real forked responder
//! at SCHED_FIFO, real ptys, pipes, eventfds, sockets and signals.

mod common;
use common::{assert_error, assert_success, latlab, root, stderr_of};

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

/// Options that let a test run without privileges (SCHED_OTHER).
const UNPRIVILEGED: [&str; 4] = [
    "--policy",
    "other",
    "--allow-unprivileged",
    "--no-dma-latency",
];

fn respond_json(dir: &Path, args: &[&str]) -> (Output, Value) {
    let json = dir.join("respond.json");
    let output = latlab()
        .current_dir(dir)
        .args(["respond", "--quiet", "--no-save", "--json"])
        .arg(&json)
        .args(args)
        .output()
        .expect("latlab runs");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no result JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, serde_json::from_str(&text).expect("result is JSON"))
}

/// The sum of each count column of a `--histogram-text` file (two columns).
fn column_sums(text: &str) -> [u64; 2] {
    let mut sums = [0u64; 2];
    let rows = text.lines().filter(|l| !l.starts_with('#'));
    for row in rows {
        let counts = row.split([' ', '\t']).skip(1);
        for (sum, count) in sums.iter_mut().zip(counts) {
            *sum += count.parse::<u64>().unwrap();
        }
    }
    sums
}

fn check_plausible(channel: &str, result: &Value, events: u64) {
    assert_eq!(result["schema"], "latlab.respond");
    assert_eq!(result["settings"]["channel"], channel);
    assert_eq!(result["events_sent"].as_u64(), Some(events), "{channel}");
    assert_eq!(
        result["events_answered"].as_u64(),
        Some(events),
        "{channel}: every event answered within 1 s"
    );
    assert_eq!(result["events_lost"].as_u64(), Some(0), "{channel}");
    for which in ["one_way", "round_trip"] {
        let l = &result[which]["latency"];
        assert_eq!(l["count"].as_u64(), Some(events), "{channel} {which}");
        let (min, max) = (l["min"].as_u64().unwrap(), l["max"].as_u64().unwrap());
        assert!(min > 0, "{channel} {which}: min {min}");
        assert!(max < 1_000_000_000, "{channel} {which}: max {max}");
        assert!(min <= l["p50"].as_u64().unwrap() && l["p50"].as_u64().unwrap() <= max);
    }
    assert!(
        result["round_trip"]["latency"]["min"].as_u64()
            >= result["one_way"]["latency"]["min"].as_u64(),
        "{channel}: the answer cannot arrive before the responder woke"
    );
}

#[test]
fn every_emulated_channel_measures_at_sched_fifo() {
    if !root("every_emulated_channel_measures_at_sched_fifo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for channel in ["pty", "pipe", "eventfd", "unix", "udp", "signal"] {
        let (output, result) = respond_json(
            dir.path(),
            &[
                "--channel",
                channel,
                "--count",
                "200",
                "--gap",
                "200us..600us",
            ],
        );
        assert!(output.status.success(), "{channel}: {}", stderr_of(&output));
        check_plausible(channel, &result, 200);
        assert_eq!(result["responder"]["policy"], "fifo", "{channel}");
        assert_eq!(result["responder"]["priority"], 95, "{channel}");
        assert_eq!(result["responder"]["mlocked"], true, "{channel}");
        assert_eq!(result["stimulus"]["priority"], 94, "{channel}");
        if result["system"]["online_cpus"].as_u64().unwrap() > 1 {
            assert_ne!(
                result["responder"]["cpu"], result["stimulus"]["cpu"],
                "{channel}: separate CPUs when there are two"
            );
        }
        assert!(result["system"]["kernel_release"].is_string());
        let steal_cpus: Vec<u64> = result["settings"]["steal_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair[0].as_u64().unwrap())
            .collect();
        if std::path::Path::new("/proc/stat").exists() {
            assert!(
                steal_cpus.contains(&result["responder"]["cpu"].as_u64().unwrap()),
                "{channel}: steal time of the responder's CPU recorded"
            );
        }
        assert_eq!(result["command_line"][1], "respond");
    }
}

#[test]
fn fixed_gap_and_duration_run_without_privilege() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--channel", "pipe", "--duration", "1s", "--gap", "2ms"];
    args.extend(UNPRIVILEGED);
    let (output, result) = respond_json(dir.path(), &args);
    assert_success(&output);
    assert!(result["settings"]["count"].is_null());
    assert_eq!(result["settings"]["gap"]["kind"], "fixed");
    let sent = result["events_sent"].as_u64().unwrap();
    // 1 s at one event per 2 ms: about 500, never more than 501.
    assert!((100..=501).contains(&sent), "{sent} events in 1 s");
    assert!(result["elapsed_s"].as_f64().unwrap() >= 0.99);
    check_plausible("pipe", &result, sent);
}

#[test]
fn violated_requirement_exits_2_and_names_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--channel",
        "eventfd",
        "--count",
        "50",
        "--max-latency",
        "1ns",
    ];
    args.extend(UNPRIVILEGED);
    let (output, result) = respond_json(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2), "{}", stderr_of(&output));
    assert_eq!(result["verdict"], "fail");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("FAIL: round-trip max"), "{stdout}");
    assert!(stdout.contains("(event "), "{stdout}");

    let mut args = vec![
        "--channel",
        "eventfd",
        "--count",
        "50",
        "--profile",
        "moblin-ivi",
    ];
    args.extend(["--max-latency", "10s", "--check-on", "both"]);
    args.extend(UNPRIVILEGED);
    let (output, result) = respond_json(dir.path(), &args);
    let code = output.status.code();
    let verdict = result["verdict"].as_str().unwrap();
    assert_eq!(
        code,
        Some(if verdict == "pass" { 0 } else { 2 }),
        "exit code follows the verdict"
    );
    assert_eq!(result["requirements_on"], "both");
    let kinds: Vec<&str> = result["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requirement"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["max-latency", "max-latency"],
        "no period requirement for events"
    );
}

#[test]
fn serial_without_hardware_fails_clearly() {
    let out = latlab()
        .args(["respond", "--quiet", "--no-save", "--count", "10"])
        .args([
            "--serial",
            "/dev/ttyLATLABNONE",
            "--gpio",
            "gpiochip0:1,gpiochip0:2",
        ])
        .args(UNPRIVILEGED)
        .output()
        .unwrap();
    let err = assert_error(&out);
    assert!(
        err.contains("cannot open serial device /dev/ttyLATLABNONE"),
        "{err}"
    );
    assert!(err.contains("--channel pty"), "{err}");

    let out = latlab()
        .args(["respond", "--quiet", "--no-save", "--count", "10"])
        .args(["--serial", "/dev/null", "--gpio", "gpiochip0:1,gpiochip0:2"])
        .args(UNPRIVILEGED)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("/dev/null is not a serial (terminal) device"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn gpio_without_hardware_fails_clearly() {
    let out = latlab()
        .args([
            "respond",
            "--quiet",
            "--no-save",
            "--count",
            "10",
            "--channel",
            "pipe",
        ])
        .args(["--gpio", "gpiochip4242:17,gpiochip4242:27"])
        .args(UNPRIVILEGED)
        .output()
        .unwrap();
    let err = assert_error(&out);
    assert!(
        err.contains("cannot open GPIO chip /dev/gpiochip4242"),
        "{err}"
    );
    if !Path::new("/dev/gpiochip0").exists() {
        assert!(err.contains("no GPIO character device"), "{err}");
    }

    let out = latlab()
        .args(["respond", "--gpio", "gpiochip0:17"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a usage error");
    assert!(stderr_of(&out).contains("OUT,IN"), "{}", stderr_of(&out));
}

#[test]
fn ctrl_c_stops_and_still_writes_results() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("respond.json");
    let child = latlab()
        .args(["respond", "--quiet", "--no-save", "--channel", "unix"])
        .args(["--count", "100000000", "--json"])
        .arg(&json)
        .args(UNPRIVILEGED)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_catches(child.id(), libc::SIGINT, Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_success(&output);
    assert!(String::from_utf8_lossy(&output.stdout).contains("(interrupted)"));
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    let answered = result["events_answered"].as_u64().unwrap();
    assert!(answered > 0 && answered < 100_000_000);
    assert_eq!(
        result["one_way"]["latency"]["count"].as_u64(),
        Some(answered)
    );
}

#[test]
fn histogram_text_has_one_way_and_round_trip_columns() {
    let dir = tempfile::tempdir().unwrap();
    let hist = dir.path().join("hist.txt");
    let mut args = vec!["--channel", "udp", "--count", "100", "--histogram-text"];
    let hist_arg = hist.to_str().unwrap().to_string();
    args.push(&hist_arg);
    args.extend(UNPRIVILEGED);
    let (output, _) = respond_json(dir.path(), &args);
    assert_success(&output);
    let text = std::fs::read_to_string(&hist).unwrap();
    assert_eq!(column_sums(&text), [100, 100]);
}

#[test]
fn load_runs_alongside_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--channel", "pipe", "--count", "200", "--load", "cpu:1"];
    args.extend(UNPRIVILEGED);
    let (output, result) = respond_json(dir.path(), &args);
    assert_success(&output);
    assert!(result["load"].is_object(), "load report in the result");
    check_plausible("pipe", &result, 200);
    assert!(String::from_utf8_lossy(&output.stdout).contains("Background load"));
}

#[test]
fn sigterm_to_the_whole_process_group_still_writes_results() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("respond.json");
    let child = latlab()
        .args(["respond", "--quiet", "--no-save", "--channel", "eventfd"])
        .args(["--count", "100000000", "--json"])
        .arg(&json)
        .args(UNPRIVILEGED)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_catches(child.id(), libc::SIGTERM, Duration::from_millis(1500));
    // SAFETY: signalling the process group of our own child (stimulus and responder).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGTERM) };
    let output = child.wait_with_output().unwrap();
    assert_success(&output);
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    assert!(result["events_answered"].as_u64().unwrap() > 0);
}

#[test]
fn saved_result_is_stored_in_the_history() {
    if !root("saved_result_is_stored_in_the_history") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    let out = latlab()
        .args([
            "respond",
            "--quiet",
            "--channel",
            "pipe",
            "--count",
            "50",
            "--output-dir",
        ])
        .arg(dir.path())
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Stored in the history as id 1"));
    let list = latlab()
        .arg("history")
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("1 ") && l.contains("respond")),
        "{text}"
    );
}
