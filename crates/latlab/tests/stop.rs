//! Ctrl-C (SIGINT) and SIGTERM stop every long-waiting command, whatever it
//! waits in (a measurement thread in a 30 s `clock_nanosleep` or
//! `sigwaitinfo`, lockbench's real-time task between two releases 10 s
//! apart, a responder's stimulus between two events, load workers, a
//! recording, a watch, a scenario's step), and the partial result is still
//! written. Before, `run --interval 1000s` never ended and ignored both
//! signals: its threads sat in their sleep.
//!
//! The bound asserted (5 s from the signal to the exit, for a debug build on
//! a shared machine) catches "waits its whole period or never ends", not a
//! timing goal; the time a stop takes is measured by hand (docs/results).

mod common;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{assert_success, latlab, root, wait_until_catches, KillOnDrop};

/// The longest a stopped command may take to exit here.
const BOUND: Duration = Duration::from_secs(5);

/// One command at a time: they measure on the same CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What a stop left behind.
struct Stopped {
    status: ExitStatus,
    took: Duration,
    stderr: String,
    dir: tempfile::TempDir,
}

impl Stopped {
    /// The result file `name` in the command's directory, parsed.
    fn json(&self, name: &str) -> Value {
        let path = self.dir.path().join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; stderr: {}", path.display(), self.stderr));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Starts latlab with `args` (`{DIR}` is its own temporary directory),
/// waits until it catches `signal` and `settle` more, sends it `signal`,
/// and asserts it exits within [`BOUND`] with status 0 (or one of `codes`).
/// `run --no-save -q --split off --cpus 0` followed by `args`.
fn unsplit_run_on_cpu0<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let run = ["run", "--no-save", "-q", "--split", "off", "--cpus", "0"];
    [&run, args].concat()
}

fn stop(args: &[&str], signal: libc::c_int, settle: Duration, codes: &[i32]) -> Stopped {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{DIR}", &dir.path().display().to_string()))
        .collect();
    let mut child = latlab()
        .args(&args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _cleanup = KillOnDrop(vec![child.id()]);
    wait_until_catches(child.id(), signal, settle);
    assert!(
        child.try_wait().unwrap().is_none(),
        "latlab {} ended before the signal",
        args.join(" ")
    );
    let sent = Instant::now();
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            sent.elapsed() < BOUND,
            "latlab {} did not stop within {BOUND:?} of signal {signal}",
            args.join(" ")
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        status.code() == Some(0) || status.code().is_some_and(|c| codes.contains(&c)),
        "latlab {}: {status} after the stop; stderr: {stderr}",
        args.join(" ")
    );
    eprintln!("latlab {}: stopped in {took:?}", args.join(" "));
    Stopped {
        status,
        took,
        stderr,
        dir,
    }
}

/// A run's result after a stop: interrupted, and no wake-up the stop cut
/// short taken as a sample (it would be early, or a latency of seconds).
fn assert_interrupted_run(doc: &Value, cycles_range: std::ops::RangeInclusive<u64>) {
    assert_eq!(doc["interrupted"], true, "{doc}");
    let overall = &doc["overall"];
    let cycles = overall["cycles"].as_u64().unwrap();
    assert!(cycles_range.contains(&cycles), "{cycles} cycles");
    assert_eq!(overall["latency"]["count"].as_u64().unwrap(), cycles);
    assert_eq!(overall["early_wakeups"], 0, "{overall}");
    let max = overall["latency"]["max"].as_u64().unwrap();
    assert!(max < 1_000_000_000, "a sample of {max} ns");
}

#[test]
fn run_with_a_period_longer_than_the_wait_stops_on_sigint_and_sigterm() {
    if !root("run_with_a_period_longer_than_the_wait_stops_on_sigint_and_sigterm") {
        return;
    }
    // One activation at the start, the next 30 s later: the stop comes
    // while every thread sleeps, in each kind of wait.
    for (timer, signal, cycles) in [
        ("clock-nanosleep", libc::SIGINT, 1),
        ("posix-timer", libc::SIGTERM, 1),
        ("timerfd", libc::SIGINT, 1),
        // Relative: its first sleep is a whole interval from its start.
        ("nanosleep", libc::SIGTERM, 0),
    ] {
        let stopped = stop(
            &unsplit_run_on_cpu0(&[
                "--interval",
                "30s",
                "--duration",
                "10m",
                "--timer",
                timer,
                "--json",
                "{DIR}/r.json",
            ]),
            signal,
            Duration::from_millis(2500),
            &[],
        );
        assert_interrupted_run(&stopped.json("r.json"), cycles..=cycles);
    }
    // itimer: SIGALRM taken with sigwaitinfo, on one CPU.
    let stopped = stop(
        &unsplit_run_on_cpu0(&[
            "--timer",
            "itimer",
            "--interval",
            "30s",
            "--duration",
            "10m",
            "--json",
            "{DIR}/r.json",
        ]),
        libc::SIGINT,
        Duration::from_millis(2500),
        &[],
    );
    assert_interrupted_run(&stopped.json("r.json"), 1..=1);
}

#[test]
fn a_long_run_stops_on_sigterm_and_writes_what_it_measured() {
    if !root("a_long_run_stops_on_sigterm_and_writes_what_it_measured") {
        return;
    }
    let stopped = stop(
        &[
            "run",
            "--no-save",
            "-q",
            "--duration",
            "10m",
            "--interval",
            "1ms",
            "--json",
            "{DIR}/r.json",
            "--load",
            "cpu:1,net:1",
        ],
        libc::SIGTERM,
        Duration::from_millis(2500),
        &[],
    );
    let doc = stopped.json("r.json");
    assert_interrupted_run(&doc, 1..=1_000_000);
    assert!(
        doc["load"]["kinds"][0]["total"].as_u64().unwrap() > 0,
        "{}",
        doc["load"]
    );
}

#[test]
fn load_stops_on_sigint_and_reports() {
    let stopped = stop(
        &[
            "load",
            "cpu:1,net:1,io:1",
            "--duration",
            "10m",
            "--temp-dir",
            "{DIR}",
            "--json",
            "{DIR}/l.json",
        ],
        libc::SIGINT,
        Duration::from_millis(1500),
        &[],
    );
    let doc = stopped.json("l.json");
    let seconds = doc["duration_s"].as_f64().unwrap();
    assert!(seconds < 60.0, "{doc}");
}

#[test]
fn lockbench_with_a_long_period_stops_on_sigint() {
    if !root("lockbench_with_a_long_period_stops_on_sigint") {
        return;
    }
    // The real-time task's releases are 10 s apart: the window opens at the
    // first (10 s), the stop comes between it and the second (20 s).
    let stopped = stop(
        &[
            "lockbench",
            "--duration",
            "10m",
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--period",
            "10s",
            "--variants",
            "plain",
            "--no-history",
            "--json",
            "{DIR}/lb.json",
        ],
        libc::SIGINT,
        Duration::from_secs(12),
        &[],
    );
    let doc = stopped.json("lb.json");
    let plain = &doc["results"][0];
    assert_eq!(plain["variant"], "plain", "{doc}");
    assert_eq!(plain["interrupted"], true, "{plain}");
    // The period it ran, and not the release the stop cut short.
    assert_eq!(plain["periods"], 1, "{plain}");
    assert!(
        plain["wake"]["max"].as_u64().unwrap() < 1_000_000_000,
        "{plain}"
    );
}

#[test]
fn respond_between_two_events_stops_on_sigint() {
    if !root("respond_between_two_events_stops_on_sigint") {
        return;
    }
    // Events 20 s apart: the stop comes while the stimulus waits for the next.
    let stopped = stop(
        &[
            "respond",
            "--no-save",
            "-q",
            "--duration",
            "10m",
            "--gap",
            "20s",
            "--json",
            "{DIR}/rs.json",
        ],
        libc::SIGINT,
        Duration::from_millis(2000),
        &[],
    );
    let doc = stopped.json("rs.json");
    assert_eq!(doc["interrupted"], true, "{doc}");
}

#[test]
fn record_stops_on_sigterm_and_writes_a_trace_that_reads() {
    if !root("record_stops_on_sigterm_and_writes_a_trace_that_reads") {
        return;
    }
    let stopped = stop(
        &["record", "--duration", "10m", "-o", "{DIR}/t.dat"],
        libc::SIGTERM,
        Duration::from_millis(1500),
        &[],
    );
    let dump = latlab()
        .args(["dump", "--stats"])
        .arg(stopped.path("t.dat"))
        .output()
        .unwrap();
    assert_success(&dump);
}

#[test]
fn watch_stops_on_sigterm_and_says_so() {
    if !common::bpf_ready("watch_stops_on_sigterm_and_says_so") {
        return;
    }
    // A task that exists (this test), so that the watch is watching, not
    // waiting for its selection, when the signal comes.
    let me = std::process::id().to_string();
    let stopped = stop(
        &[
            "watch",
            "--pid",
            &me,
            "--duration",
            "10m",
            "--no-history",
            "-q",
            "--json",
            "{DIR}/w.json",
        ],
        libc::SIGTERM,
        Duration::from_millis(2000),
        &[],
    );
    assert_eq!(stopped.json("w.json")["stopped_by"], "SIGTERM");
}

#[test]
fn scenario_passes_a_sigterm_on_to_its_step_and_reports_the_steps_so_far() {
    if !root("scenario_passes_a_sigterm_on_to_its_step_and_reports_the_steps_so_far") {
        return;
    }
    // SIGTERM to the scenario alone (not its process group): its step, a
    // 10-minute run, must stop too, not run on orphaned.
    let stopped = stop(
        &[
            "scenario",
            "emblix",
            "--cpus",
            "0",
            "--duration",
            "10m",
            "--out",
            "{DIR}/sc",
        ],
        libc::SIGTERM,
        Duration::from_millis(3000),
        &[2],
    );
    assert_eq!(stopped.json("sc/no-load.json")["interrupted"], true);
    assert!(
        stopped.path("sc/report.html").exists(),
        "{}",
        stopped.stderr
    );
    assert!(
        !stopped.path("sc/disk-load.json").exists(),
        "the next step ran"
    );
    let left = orphans(&stopped.path("sc"));
    assert!(left.is_empty(), "steps left running: {left:?}");
    let _ = (stopped.status, stopped.took);
}

/// latlab processes whose command line names `dir`.
fn orphans(dir: &Path) -> Vec<u32> {
    let dir = dir.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&dir))
        })
        .collect()
}
