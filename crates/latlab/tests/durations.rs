//! One meaning for every time on the command line: a duration takes a unit,
//! in every option of every command, and a bare number is a usage error that
//! names the units and the two readings it most likely had. (Before, `run
//! --max-latency 40` passed every run as a 40-second limit while `explain
//! --threshold 40` meant 40 µs.)

mod common;

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{assert_success, latlab};

/// What a bare number most likely meant: latencies and periods `us` or `ms`,
/// run lengths `s` or `m`.
const SHORT: (&str, &str) = ("us", "ms");
const LONG: (&str, &str) = ("s", "m");

/// A command, the arguments that keep it harmless should it accept the value
/// (a short, unsaved, single-CPU or simulated run), and its duration options
/// with the bare value given and the readings the error must offer.
struct Case {
    command: &'static str,
    harmless: &'static [&'static str],
    options: &'static [(&'static str, &'static str, (&'static str, &'static str))],
}

const CASES: &[Case] = &[
    Case {
        command: "run",
        harmless: &["--no-save", "-q", "--cpus", "0", "--loops", "100"],
        options: &[
            ("--interval", "2", SHORT),
            ("--interval-step", "2", SHORT),
            ("--duration", "2", LONG),
            ("--max-latency", "2", SHORT),
            ("--percentile", "99:2", SHORT),
            ("--trace-threshold", "2", SHORT),
        ],
    },
    Case {
        command: "respond",
        harmless: &["--no-save", "-q", "--count", "10"],
        options: &[
            ("--duration", "2", LONG),
            ("--gap", "2", SHORT),
            ("--timeout", "2", LONG),
            ("--max-latency", "2", SHORT),
            ("--percentile", "99:2", SHORT),
        ],
    },
    Case {
        command: "lockbench",
        harmless: &["--simulate", "--periods", "100", "--no-history"],
        options: &[
            ("--duration", "2", LONG),
            ("--warmup", "2", LONG),
            ("--period", "2", SHORT),
            ("--rt-hold", "2", SHORT),
            ("--outside-work", "2", SHORT),
            ("--margin", "2", SHORT),
            ("--sample-interval", "2", SHORT),
        ],
    },
    Case {
        command: "load",
        harmless: &["none"],
        options: &[("--duration", "2", LONG), ("--sample-interval", "2", LONG)],
    },
    Case {
        command: "record",
        harmless: &["-o", "/nonexistent/bare-number.dat"],
        options: &[("--duration", "2", LONG)],
    },
    Case {
        command: "watch",
        harmless: &["--comm", "nosuchtask", "--no-history", "-q"],
        options: &[
            ("--threshold", "2", SHORT),
            ("--interval", "2", LONG),
            ("--duration", "2", LONG),
            ("--wait", "2", LONG),
        ],
    },
    Case {
        command: "explain",
        harmless: &["/nonexistent/bare-number.dat"],
        options: &[("--threshold", "2", SHORT)],
    },
    Case {
        command: "scenario",
        harmless: &["emblix", "--cpus", "0", "--out", "/nonexistent/bare-number"],
        options: &[("--duration", "2", LONG)],
    },
];

/// Runs latlab with `args` and returns its exit code and stderr; a command
/// that accepted the value and went on is killed after a few seconds (`None`).
fn run(args: &[&str]) -> (Option<i32>, String) {
    let mut child = latlab()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bare_number_is_a_usage_error_naming_the_units_in_every_duration_option() {
    let mut failures = Vec::new();
    for case in CASES {
        for &(option, value, (a, b)) in case.options {
            let mut args = vec![case.command];
            args.extend_from_slice(case.harmless);
            args.extend_from_slice(&[option, value]);
            let (code, stderr) = run(&args);
            let bare = value.rsplit(':').next().unwrap();
            let wanted =
                format!("give a unit: {bare}{a} or {bare}{b} (units: ns, us, ms, s, m, h)");
            // A usage error (exit code 1, as rtla's), before anything ran.
            if code != Some(1) || !stderr.contains(&wanted) || !stderr.contains(option) {
                failures.push(format!(
                    "latlab {}: exit {code:?}, stderr: {}",
                    args.join(" "),
                    stderr.trim()
                ));
            }
        }
    }
    // lockbench's hold-time shapes are durations too.
    let (code, stderr) = run(&["lockbench", "--simulate", "--site", "x=180-340"]);
    if code != Some(1) || !stderr.contains("give a unit: 180-340us or 180-340ms") {
        failures.push(format!(
            "lockbench --site x=180-340: exit {code:?}, {stderr}"
        ));
    }
    assert!(
        failures.is_empty(),
        "bare numbers accepted or not explained:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_option_whose_value_is_a_duration_is_in_the_table() {
    // The help names each duration option's value DURATION (or P:DURATION,
    // DURATION|pNN, ...): each must be in the table the test above runs.
    for case in CASES {
        let out = latlab().args([case.command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        let in_help: BTreeSet<&str> = help
            .lines()
            .filter_map(|line| {
                let (option, rest) = line.trim_start().split_once(" <")?;
                let option = option.rsplit(", ").next()?;
                rest.split('>')
                    .next()?
                    .contains("DURATION")
                    .then_some(option)
            })
            .collect();
        let tested: BTreeSet<&str> = case.options.iter().map(|o| o.0).collect();
        assert_eq!(in_help, tested, "latlab {} --help", case.command);
    }
}

#[test]
fn durations_with_units_and_a_bare_zero_are_accepted() {
    // The same options parse with units (an error after parsing, about the
    // missing file, shows the values were taken).
    let (code, stderr) = run(&[
        "explain",
        "/nonexistent/bare-number.dat",
        "--threshold",
        "40us",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("give a unit"), "{stderr}");
    let out = latlab()
        .args([
            "lockbench",
            "--simulate",
            "--periods",
            "100",
            "--no-history",
            "--warmup",
            "0",
            "--margin",
            "0",
            "--site",
            "a=90*50-130us,10*0.2-0.4ms",
            "--site",
            "b=30us-60us",
            "--site",
            "c=80us",
        ])
        .output()
        .unwrap();
    assert_success(&out);
}

#[test]
fn an_interval_longer_than_the_duration_is_refused_before_measuring() {
    // Before, this run took its interval as 1000 s and never ended.
    let (code, stderr) = run(&[
        "run",
        "--no-save",
        "-q",
        "--interval",
        "1000s",
        "--duration",
        "1s",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("1000 s (--interval) is longer than --duration 1.00 s"),
        "{stderr}"
    );
    let (code, stderr) = run(&[
        "respond",
        "--no-save",
        "-q",
        "--gap",
        "2s",
        "--duration",
        "1s",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--gap 2.00 s is longer than --duration 1.00 s"),
        "{stderr}"
    );
    let (code, stderr) = run(&[
        "lockbench",
        "--no-history",
        "--period",
        "3s",
        "--duration",
        "10s",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the period (3.00 s) is longer than a round (2.00 s"),
        "{stderr}"
    );
}
