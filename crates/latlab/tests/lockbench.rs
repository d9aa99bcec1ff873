//! `latlab lockbench` driven through the real binary: the simulator, argument errors,
//! and (as root) real SCHED_FIFO/SCHED_OTHER threads and Ctrl-C.

mod common;
use common::{assert_error, assert_success, latlab, read_json, stdout_of};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The real-thread tests pin to the same CPU; two at once would measure each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Some(serializing guard) when the test may use real-time priority; otherwise the test
/// is skipped with the reason and the fix, unless CI demands privileges.
fn privileged(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    common::root(test).then(|| ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Every release of the real-time task in a variant's measured time is
/// counted once, as a period or an overrun, and some ran (a stall of the
/// machine may make overruns of most of them, but not change the sum).
fn assert_every_release_counted(result: &Value, report: &Value) {
    let period_s = report["config"]["period_ns"].as_u64().unwrap() as f64 / 1e9;
    let releases = (result["measured_s"].as_f64().unwrap() / period_s).round() as u64;
    let periods = result["periods"].as_u64().unwrap();
    assert_eq!(
        periods + result["overruns"].as_u64().unwrap(),
        releases,
        "{result}"
    );
    assert!(periods > 0, "{result}");
}

/// `latlab lockbench --duration <duration> --warmup <warmup>`.
fn lockbench(duration: &str, warmup: &str) -> Command {
    let mut command = latlab();
    command.args(["lockbench", "--duration", duration, "--warmup", warmup]);
    command
}

#[test]
fn simulate_is_deterministic_and_prints_the_papers_figures() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sim.json");
    let run = |extra: &[&str]| {
        let out = latlab()
            .args([
                "lockbench",
                "--simulate",
                "--periods",
                "1500",
                "--seed",
                "3",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run(&["--json", json.to_str().unwrap()]);
    let second = run(&[]);
    assert_eq!(first, second, "same seed, same table");
    for figure in [
        "847 µs",
        "192 µs",
        "197.14 µs",
        "Sender slowdown",
        "Worst w/ / w/o",
        "fixed t_lock 800/2192/128 µs",
        "2192 µs",
    ] {
        assert!(first.contains(figure), "missing {figure:?} in\n{first}");
    }
    let result = read_json(&json);
    assert_eq!(result["schema"], "latlab.lockbench-simulation");
    assert_eq!(
        result["paper"]["max_us"][0], 847.0,
        "the paper's Table 4 rides along"
    );
    let worst = |run: &str| result[run]["latency"]["max"].as_u64().unwrap();
    // About a quarter, as the paper's 23 %.
    assert!(worst("with") * 10 <= worst("without") * 3, "{result}");
    assert!(worst("with") * 10 >= worst("without"), "{result}");
    assert_eq!(result["without"]["holds"].as_array().unwrap().len(), 3);
    let learned = run(&["--predictor", "max"]);
    assert!(learned.contains("predictor max (online)"), "{learned}");
    assert_ne!(learned, first);
    assert_eq!(result["config"]["periods"], 1500);
    assert_eq!(result["without"]["refusals"], 0);
}

#[test]
fn unknown_variant_is_an_error_that_lists_the_choices() {
    let out = latlab()
        .args(["lockbench", "--variants", "plain,fancy", "--duration", "1s"])
        .output()
        .unwrap();
    let stderr = assert_error(&out);
    assert!(
        stderr.contains("fancy") && stderr.contains("delayed-quantile"),
        "{stderr}"
    );
}

#[test]
fn malformed_site_shape_is_rejected_with_the_syntax() {
    let out = latlab()
        .args(["lockbench", "--simulate", "--site", "send=9-3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LO-HI"), "{stderr}");
}

#[test]
fn real_threads_compare_variants_and_write_the_throughput_series() {
    let Some(_serial) = privileged("real_threads_compare_variants_and_write_the_throughput_series")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let out = lockbench("400ms", "200ms")
        .args(["--variants", "plain,delayed-quantile", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = stdout_of(&out);
    assert!(stdout.contains("RT lock latency"), "{stdout}");
    assert!(stdout.contains("goal delayed-quantile"), "{stdout}");
    let report = read_json(&json);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        assert_every_release_counted(r, &report);
        assert!(r["measured_s"].as_f64().unwrap() >= 0.4, "{r}");
        assert!(!r["throughput"].as_array().unwrap().is_empty(), "{r}");
        assert!(r["lock"]["max"].as_u64().unwrap() >= r["lock"]["min"].as_u64().unwrap());
    }
    assert_eq!(results[1]["variant"], "delayed-quantile");
    assert_eq!(report["goal"].as_array().unwrap().len(), 1);
}

/// Starts a 2 x 60 s lockbench of plain and pi with `extra` options, presses
/// Ctrl-C once `catcher` (given latlab's pid, the process that must catch it)
/// has measured for a while, and returns stdout and the JSON it wrote. With
/// `ctrl_z`, first presses Ctrl-Z and checks that latlab and the catcher
/// stop, then continues them (`fg`).
fn interrupted_lockbench(
    extra: &[&str],
    catcher: impl Fn(u32) -> Option<u32>,
    ctrl_z: bool,
) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("partial.json");
    let mut child = latlab()
        .args(["lockbench", "--duration", "60s", "--warmup", "0s"])
        .args(["--variants", "plain,pi"])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut cleanup = common::KillOnDrop(vec![child.id()]);
    let pid = wait_for("the process to catch Ctrl-C", || catcher(child.id()));
    cleanup.0.push(pid);
    common::wait_until_catches(pid, libc::SIGINT, Duration::from_millis(1500));
    if ctrl_z {
        let both = [child.id(), pid];
        let all_in = |want: bool| {
            let start = Instant::now();
            while both
                .iter()
                .any(|&p| (common::state(p).as_deref() == Some("T")) != want)
            {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "not all {} after Ctrl-Z / fg: {both:?}",
                    if want { "stopped" } else { "running" }
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        // SAFETY: signalling our own child (a terminal's Ctrl-Z, then fg).
        unsafe { libc::kill(child.id() as i32, libc::SIGTSTP) };
        all_in(true);
        // SAFETY: as above.
        unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
        all_in(false);
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "Ctrl-C did not stop lockbench"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    cleanup.0.clear();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, read_json(&json))
}

/// Polls `found` until it finds a process (30 s at most, for a slow VM).
fn wait_for(what: &str, found: impl Fn() -> Option<u32>) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = found() {
            return pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The copy `--autogroup-nice` starts, once it runs latlab (not the fork
/// before exec): it alone handles Ctrl-Z.
fn autogroup_copy(latlab: u32) -> Option<u32> {
    common::first_child(latlab).filter(|&c| common::catches(c, libc::SIGTSTP))
}

#[test]
fn ctrl_c_prints_and_writes_what_was_measured() {
    let Some(_serial) = privileged("ctrl_c_prints_and_writes_what_was_measured") else {
        return;
    };
    let (stdout, report) = interrupted_lockbench(&[], Some, false);
    assert!(stdout.contains("interrupted"), "{stdout}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "only plain had started");
    assert_eq!(results[0]["interrupted"], true);
    assert_every_release_counted(&results[0], &report);
}

#[test]
fn autogroup_nice_runs_in_a_group_of_its_own_and_passes_ctrl_c_and_ctrl_z_on() {
    let test = "autogroup_nice_runs_in_a_group_of_its_own_and_passes_ctrl_c_and_ctrl_z_on";
    let Some(_serial) = privileged(test) else {
        return;
    };
    if !common::require(
        &format!("{test}: scheduler autogroups"),
        latlab_rt::autogroup::enabled(),
        "a kernel with CONFIG_SCHED_AUTOGROUP and sysctl kernel.sched_autogroup_enabled=1",
    ) {
        return;
    }
    // None when this test runs in the kernel's root group (a CI runner that init
    // started without a session of its own): the option works from there too.
    let ours = latlab_rt::autogroup::current();
    // The copy latlab starts in its own autogroup is the one that must catch
    // Ctrl-C; latlab passes it on, and Ctrl-Z and fg.
    let (_, report) = interrupted_lockbench(&["--autogroup-nice", "-5"], autogroup_copy, true);
    assert_eq!(report["autogroup"]["nice"], -5, "{report}");
    let id = report["autogroup"]["id"].as_u64();
    assert!(id.is_some(), "the copy is in an autogroup: {report}");
    assert_ne!(id, ours.map(|group| group.id), "a group of its own");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["interrupted"], true);
}

#[test]
fn autogroup_copy_left_stopped_by_a_killed_latlab_winds_down_and_exits() {
    let Some(_serial) =
        privileged("autogroup_copy_left_stopped_by_a_killed_latlab_winds_down_and_exits")
    else {
        return;
    };
    if !latlab_rt::autogroup::enabled() {
        return; // the test above fails in CI when autogroups are missing
    }
    let mut child = lockbench("60s", "0s")
        .args(["--no-history"])
        .args(["--variants", "plain", "--autogroup-nice", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut cleanup = common::KillOnDrop(vec![child.id()]);
    let copy = wait_for("the copy", || autogroup_copy(child.id()));
    cleanup.0.push(copy);
    // Ctrl-Z, then the terminal closes and latlab dies while stopped.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTSTP) };
    let start = Instant::now();
    while common::state(copy).as_deref() != Some("T") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "copy not stopped"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Continued by its parent-death signal, the copy stops cleanly.
    let start = Instant::now();
    while common::state(copy).is_some_and(|s| s != "Z") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the copy is still there ({:?})",
            common::state(copy)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    cleanup.0.clear();
}

#[test]
fn autogroup_nice_out_of_range_is_refused_with_the_range() {
    let out = latlab()
        .args(["lockbench", "--autogroup-nice", "-21", "--no-history"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("-20..=19"), "{stderr}");
}

#[test]
fn require_goal_needs_the_variants_it_compares() {
    let out = latlab()
        .args([
            "lockbench",
            "--require-goal",
            "--variants",
            "plain,delayed-quantile",
        ])
        .output()
        .unwrap();
    let stderr = assert_error(&out);
    assert!(stderr.contains("add pi to --variants"), "{stderr}");
}

#[test]
fn background_load_runs_through_the_benchmark_and_is_reported() {
    let Some(_serial) = privileged("background_load_runs_through_the_benchmark_and_is_reported")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let out = lockbench("300ms", "100ms")
        .args(["--rounds", "1"])
        .args(["--variants", "plain", "--load", "syscall:1", "--json"])
        .arg(&json)
        .arg("--db")
        .arg(dir.path().join("history.sqlite"))
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Background load (syscall:1)"), "{stdout}");
    assert!(stdout.contains("Stored in the history as id 1"), "{stdout}");
    let report = read_json(&json);
    assert_eq!(report["schema"], "latlab.lockbench");
    assert!(report["started_at"].as_str().unwrap().ends_with('Z'));
    let syscall = &report["load"]["kinds"][0];
    assert_eq!(syscall["kind"], "syscall");
    assert!(syscall["total"].as_u64().unwrap() > 0, "{syscall}");
}

#[test]
fn a_json_that_does_not_fit_goes_to_the_temp_dir_and_the_history_keeps_the_results() {
    let test = "a_json_that_does_not_fit_goes_to_the_temp_dir_and_the_history_keeps_the_results";
    let Some(_serial) = privileged(test) else {
        return;
    };
    let full = common::FullDisk::mount(0);
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench("300ms", "0s")
        .args(["--rounds", "1", "--variants", "plain", "--json"])
        .arg(full.path("bench.json"))
        .arg("--db")
        .arg(dir.path().join("history.sqlite"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stdout.contains("Stored in the history as id 1"), "{stdout}");
    let fallback = common::fallback_named(&stdout);
    let report = read_json(&fallback);
    std::fs::remove_file(&fallback).unwrap();
    assert_eq!(report["schema"], "latlab.lockbench");
    assert_every_release_counted(&report["results"][0], &report);
}
