//! `latlab load` driven as a real process: normal exit, errors, SIGINT, SIGKILL.

mod common;
use common::{assert_success, latlab, processes_with, quiet_run_on_cpu0, state, stdout_of};

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A marker unique to this test: a `sleep` duration nobody else uses.
fn marker(test: u32) -> String {
    format!("9{test}7.{}", std::process::id())
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Asserts that the scratch dir is empty and no process of the test's
/// load command (marked `mark`) is left.
#[track_caller]
fn assert_no_leftovers(scratch: &Path, mark: &str) {
    assert!(entries(scratch).is_empty(), "{:?}", entries(scratch));
    assert!(
        processes_with(mark).is_empty(),
        "{:?}",
        processes_with(mark)
    );
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a long `latlab load` with an io load and a sleeping command, and
/// waits until both run.
fn start_long(temp: &Path, json: &Path, mark: &str) -> Child {
    let child = latlab()
        .args([
            "load",
            "cpu:1,io:1",
            "--duration",
            "60s",
            "--sample-interval",
            "200ms",
        ])
        .arg("--load-cmd")
        .arg(format!("sleep {mark}; true"))
        .arg("--temp-dir")
        .arg(temp)
        .arg("--json")
        .arg(json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the load to start", Duration::from_secs(10), || {
        !entries(temp).is_empty() && !processes_with(mark).is_empty()
    });
    std::thread::sleep(Duration::from_millis(600));
    child
}

fn wait_output(child: Child) -> Output {
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    let start = Instant::now();
    while !waiter.is_finished() {
        if start.elapsed() > Duration::from_secs(20) {
            // SAFETY: killing the child we started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("latlab load did not exit within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    waiter.join().unwrap()
}

/// A temp dir for one test: a `scratch` directory for the load's files and a
/// path for the JSON report (dropped, with everything in it, at the test's end).
/// A test's temp dir (removed on drop), the load's scratch dir in it and
/// where the JSON result goes.
type Workspace = (tempfile::TempDir, PathBuf, PathBuf);

fn workspace(json_name: &str) -> Workspace {
    let temp = tempfile::tempdir().unwrap();
    let scratch = temp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let json = temp.path().join(json_name);
    (temp, scratch, json)
}

#[test]
fn a_normal_run_reports_every_kind_and_leaves_nothing() {
    let (_temp, scratch, json) = workspace("report.json");
    let mark = marker(1);
    let out = latlab()
        .args([
            "load",
            "cpu:1,io:1,udp:1",
            "--duration",
            "1s",
            "--sample-interval",
            "250ms",
        ])
        .arg("--load-cmd")
        .arg(format!("sleep {mark}; true"))
        .arg("--temp-dir")
        .arg(&scratch)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = stdout_of(&out);
    // Bytes per second with an SI prefix (`285 MB/s`, `1.02 GB/s`).
    for needle in ["cpu", "io", "udp", "command", "B/s", "µs per KiB"] {
        assert!(stdout.contains(needle), "{needle} missing:\n{stdout}");
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["spec"], "cpu:1,io:1,udp:1");
    for kind in report["kinds"].as_array().unwrap() {
        // io can wait long for its first write on a machine busy with other
        // writers; its throughput is checked in latlab-load's own tests.
        if kind["kind"] != "io" {
            assert!(kind["total"].as_u64().unwrap() > 0, "{kind}");
        }
        assert!(!kind["series"].as_array().unwrap().is_empty(), "{kind}");
    }
    assert_eq!(report["external"]["command"], format!("sleep {mark}; true"));
    assert!(
        entries(&scratch).is_empty(),
        "left in temp dir: {:?}",
        entries(&scratch)
    );
    assert!(
        processes_with(&mark).is_empty(),
        "{:?}",
        processes_with(&mark)
    );
}

#[test]
fn errors_are_clear_and_leave_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let out = latlab()
        .args([
            "load",
            "io:1",
            "--duration",
            "5s",
            "--load-cmd",
            "echo cannot work >&2; exit 3",
        ])
        .arg("--temp-dir")
        .arg(temp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("exited with status 3"), "{stderr}");
    assert!(stderr.contains("cannot work"), "{stderr}");
    assert!(
        entries(temp.path()).is_empty(),
        "{:?}",
        entries(temp.path())
    );

    let out = latlab().args(["load", "cpu:1,gpu:2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unknown load kind \"gpu\""), "{stderr}");
}

#[test]
fn sigint_stops_cleanly_and_still_reports() {
    let (_temp, scratch, json) = workspace("report.json");
    let mark = marker(2);
    let child = start_long(&scratch, &json, &mark);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_output(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(stdout.contains("cpu") && stdout.contains("io"), "{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(report["duration_s"].as_f64().unwrap() < 30.0);
    assert!(report["kinds"][0]["total"].as_u64().unwrap() > 0);
    assert_no_leftovers(&scratch, &mark);
}

#[test]
fn sigkill_leaves_no_process_and_the_next_run_removes_the_temp_dir() {
    let (_temp, scratch, json) = workspace("unused.json");
    let mark = marker(3);
    let child = start_long(&scratch, &json, &mark);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let out = wait_output(child);
    assert!(!out.status.success());
    // The kernel's parent-death signal reaches the command's wrapper, which
    // kills its whole process group.
    wait_until(
        "the load command to die with latlab",
        Duration::from_secs(5),
        || processes_with(&mark).is_empty(),
    );
    // A SIGKILLed process cannot clean up; the next run removes its leftovers.
    assert_eq!(entries(&scratch).len(), 1);
    let out = latlab()
        .args(["load", "io:1", "--duration", "300ms"])
        .arg("--temp-dir")
        .arg(&scratch)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(entries(&scratch).is_empty(), "{:?}", entries(&scratch));
}

#[test]
fn a_load_failing_mid_run_is_an_error_that_leaves_no_process() {
    let (_temp, scratch, json) = workspace("report.json");
    let mark = marker(4);
    let child = start_long(&scratch, &json, &mark);
    // Pull the disk out from under the io load while the command runs: move
    // its directory aside first (at once, as far as the worker can tell),
    // then remove it.
    let aside = scratch.with_file_name("aside");
    std::fs::create_dir(&aside).unwrap();
    for (i, entry) in std::fs::read_dir(&scratch).unwrap().flatten().enumerate() {
        let gone = aside.join(i.to_string());
        std::fs::rename(entry.path(), &gone).unwrap();
        std::fs::remove_dir_all(&gone).unwrap();
    }
    let out = wait_output(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the load failed while running"), "{stderr}");
    assert!(stderr.contains("io load worker 0"), "{stderr}");
    assert_no_leftovers(&scratch, &mark);
}

#[test]
fn cpus_option_confines_the_load_instead_of_panicking() {
    // Regression: `--cpus 0` made clap panic ("Mismatch between definition
    // and access of `cpus`") because the field was an Option<Vec<usize>>.
    let out = Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["load", "cpu:1", "--cpus", "0", "--duration", "300ms"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("cpu"));
    let bad = Command::new(env!("CARGO_BIN_EXE_latlab"))
        .args(["load", "cpu:1", "--cpus", "x", "--duration", "300ms"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("invalid CPU list"));
}

// `latlab run --load`: the load runs in a child process of its own.

/// True while `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    state(pid).is_some_and(|s| s != "Z" && s != "X")
}

/// A field of /proc/<pid>/status in kB (VmLck, ...).
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// (name, scheduling policy) of every thread of `pid`.
fn threads(pid: u32) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Field 41 (policy) counted from field 3, the one after the ")".
        let policy = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(38)?.parse().ok())
            .unwrap_or(-1);
        out.push((comm.trim().to_owned(), policy));
    }
    out
}

/// The load process of latlab `pid` (its child named latlab-load), once it runs.
fn load_process(pid: u32) -> Option<u32> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
            if comm.trim() == "latlab-load" {
                return Some(child);
            }
        }
    }
    None
}

/// Starts `latlab run` on CPU 0 with `load` plus a sleeping command in
/// `scratch`, and waits until the load process has reported ready (its
/// command and the io load's temp dir exist). Returns latlab and the load's pid.
fn start_run(scratch: &Path, json: &Path, mark: &str, load: &str, secs: u32) -> (Child, u32) {
    let child = latlab()
        .args(["run", "--quiet", "--no-save", "--cpus", "0", "--duration"])
        .arg(format!("{secs}s"))
        .args(["--load", load, "--load-cmd"])
        .arg(format!("sleep {mark}; true"))
        .arg("--load-temp-dir")
        .arg(scratch)
        .arg("--json")
        .arg(json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, as a shell's job: Ctrl-C can go to the whole group.
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut load = None;
    wait_until("the load process to start", Duration::from_secs(15), || {
        load = load.or_else(|| load_process(pid));
        // ld-input starts once the load process has reported ready.
        load.is_some_and(|l| threads(l).iter().any(|(n, _)| n == "ld-input"))
            && !entries(scratch).is_empty()
            && !processes_with(mark).is_empty()
    });
    (child, load.unwrap())
}

fn assert_nothing_left(scratch: &Path, mark: &str, load: u32) {
    wait_until("the load process to exit", Duration::from_secs(10), || {
        !alive(load) && processes_with(mark).is_empty() && entries(scratch).is_empty()
    });
}

#[test]
fn run_load_runs_in_its_own_unlocked_sched_other_process() {
    if !common::root("run_load_runs_in_its_own_unlocked_sched_other_process") {
        return;
    }
    let (_temp, scratch, json) = workspace("result.json");
    let mark = marker(5);
    let (child, load) = start_run(&scratch, &json, &mark, "cpu:1,io:1,mem:1", 3);
    let latlab_pid = child.id();
    assert_ne!(load, latlab_pid);
    // latlab is memory-locked; the load shares none of it: another mm.
    assert!(status_kb(latlab_pid, "VmLck") > 0, "latlab mlocks itself");
    assert_eq!(
        status_kb(load, "VmLck"),
        0,
        "the load's memory is not locked"
    );
    let load_threads = threads(load);
    for name in ["ld-cpu0", "ld-io0", "ld-mem0"] {
        assert!(
            load_threads.iter().any(|(n, _)| n == name),
            "{name} in the load process: {load_threads:?}"
        );
    }
    for (name, policy) in &load_threads {
        assert_eq!(*policy, 0, "{name} runs SCHED_OTHER: {load_threads:?}");
    }
    let own = threads(latlab_pid);
    assert!(
        !own.iter()
            .any(|(n, _)| n.starts_with("ld-") && n != "ld-process"),
        "no load worker among latlab's threads: {own:?}"
    );
    let out = wait_output(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let kinds = result["load"]["kinds"].as_array().expect("load report");
    for name in ["cpu", "mem"] {
        let kind = kinds.iter().find(|k| k["kind"] == name).unwrap();
        assert!(kind["total"].as_u64().unwrap() > 0, "{kind}");
        assert!(!kind["series"].as_array().unwrap().is_empty(), "{kind}");
    }
    assert_eq!(result["load"]["spec"], "cpu:1,io:1,mem:1");
    assert_eq!(
        result["load"]["external"]["command"],
        format!("sleep {mark}; true")
    );
    assert_nothing_left(&scratch, &mark, load);
}

#[test]
fn run_sigint_stops_the_load_process_and_still_reports() {
    if !common::root("run_sigint_stops_the_load_process_and_still_reports") {
        return;
    }
    let (_temp, scratch, json) = workspace("result.json");
    let mark = marker(6);
    let (child, load) = start_run(&scratch, &json, &mark, "cpu:1,io:1", 60);
    common::wait_until_catches(child.id(), libc::SIGINT, Duration::from_millis(1500));
    // Ctrl-C at a terminal: SIGINT to latlab's whole process group. The load
    // process leads a group of its own, so latlab stops it and gets its report.
    // SAFETY: signalling the process group of the child we started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = wait_output(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    assert!(result["load"]["kinds"][0]["total"].as_u64().unwrap() > 0);
    assert_nothing_left(&scratch, &mark, load);
}

#[test]
fn run_sigkill_makes_the_load_process_clean_up_and_exit() {
    if !common::root("run_sigkill_makes_the_load_process_clean_up_and_exit") {
        return;
    }
    let (_temp, scratch, json) = workspace("result.json");
    let mark = marker(7);
    let (child, load) = start_run(&scratch, &json, &mark, "cpu:1,io:1", 60);
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    assert!(!wait_output(child).status.success());
    // The parent-death signal (SIGTERM) makes the load process stop its
    // workers and command and remove its temp dir, as on a normal stop.
    assert_nothing_left(&scratch, &mark, load);
}

#[test]
fn run_fails_clearly_when_its_load_process_dies_or_cannot_start() {
    if !common::root("run_fails_clearly_when_its_load_process_dies_or_cannot_start") {
        return;
    }
    let (temp, scratch, json) = workspace("result.json");
    let mark = marker(8);
    let (child, load) = start_run(&scratch, &json, &mark, "cpu:1,io:1", 60);
    // SAFETY: killing the grandchild this test's latlab started.
    unsafe { libc::kill(load as i32, libc::SIGKILL) };
    let out = wait_output(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the load process (pid {load}) was killed by signal 9"
        )),
        "{stderr}"
    );
    // Its command dies with it, and latlab removes the temp dir it left.
    assert_nothing_left(&scratch, &mark, load);

    // A load that cannot start names why, and the run does not begin.
    let missing = temp.path().join("no-such-dir");
    let out = quiet_run_on_cpu0()
        .args(["--duration", "10s"])
        .args(["--load", "io:1", "--load-temp-dir"])
        .arg(&missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("starting the background load"), "{stderr}");
    assert!(
        stderr.contains(&missing.display().to_string()) && stderr.contains("temp dir"),
        "{stderr}"
    );
}

#[test]
fn hidden_load_in_process_keeps_the_threads_for_the_side_by_side_bench() {
    // bench/load-process-vs-threads.sh compares the load process with the
    // old threads through this flag; it must still put the load in latlab.
    if !common::root("hidden_load_in_process_keeps_the_threads_for_the_side_by_side_bench") {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let json = temp.path().join("result.json");
    let child = quiet_run_on_cpu0()
        .args(["--duration", "2s"])
        .args(["--load", "mem:1", "--load-in-process", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until("the mem worker thread", Duration::from_secs(15), || {
        threads(pid).iter().any(|(n, _)| n == "ld-mem0")
    });
    assert_eq!(
        load_process(pid),
        None,
        "no load process with --load-in-process"
    );
    let out = wait_output(child);
    assert_success(&out);
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(result["load"]["kinds"][0]["total"].as_u64().unwrap() > 0);
}

#[test]
fn run_ctrl_z_stops_the_load_and_its_command_and_fg_continues_them() {
    if !common::root("run_ctrl_z_stops_the_load_and_its_command_and_fg_continues_them") {
        return;
    }
    let (_temp, scratch, json) = workspace("result.json");
    let mark = marker(9);
    let (child, load) = start_run(&scratch, &json, &mark, "cpu:1", 60);
    let cleanup = common::KillOnDrop(vec![child.id(), load]);
    let group = child.id() as i32;
    // latlab, its load process and the load command's processes (each of the
    // last two leads a process group of its own).
    let mut pids = vec![child.id(), load];
    pids.extend(
        processes_with(&mark)
            .iter()
            .filter_map(|p| p.split(':').next()?.parse::<u32>().ok()),
    );
    assert!(pids.len() >= 3, "the command runs: {pids:?}");
    let states = |pids: &[u32]| -> Vec<String> {
        pids.iter().map(|&p| state(p).unwrap_or_default()).collect()
    };
    // Ctrl-Z at a terminal: SIGTSTP to the foreground process group only.
    // SAFETY: signalling the process group of the child we started.
    unsafe { libc::kill(-group, libc::SIGTSTP) };
    wait_until(
        "latlab, the load and its command to stop",
        Duration::from_secs(10),
        || states(&pids).iter().all(|s| s == "T"),
    );
    // `fg`: SIGCONT to the same group; latlab continues the others.
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGCONT) };
    wait_until(
        "latlab, the load and its command to continue",
        Duration::from_secs(10),
        || states(&pids).iter().all(|s| s != "T"),
    );
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGINT) };
    let out = wait_output(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    assert_nothing_left(&scratch, &mark, load);
    std::mem::forget(cleanup);
}
