//! `latlab tune` leaves the system as it found it: every knob it can touch
//! (IRQ affinities, the workqueue cpumask, the sysctls, cpuidle files, the
//! cpuset hierarchy, thread affinities and policies: latlab-tune's
//! snapshot) is the same after a whole tune, after Ctrl-C in the middle,
//! and after SIGKILL followed by `latlab tune --restore`, and after
//! `--restore` of what a `--keep` kept; a load that dies mid-tune ends it
//! restored; bad input is an error that changes nothing. Real knobs, real `latlab run` rounds, CPU 1
//! as the real-time CPU (CPU 0 keeps the housekeeping); short rounds: these
//! tests check the mechanism, not a measured effect.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use latlab_tune::snapshot::{diff, snapshot};
use serde_json::Value;

use common::{latlab, latlab_as_nobody, root, KillOnDrop};

/// One tune at a time: they change the same knobs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A tune's scratch: its restore file and output directory.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn journal(&self) -> PathBuf {
        self.dir.path().join("restore.json")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// latlab with this scratch's restore file.
    fn latlab(&self) -> Command {
        let mut command = latlab();
        command
            .env("LATLAB_TUNE_JOURNAL", self.journal())
            .current_dir(self.dir.path());
        command
    }

    /// `latlab tune --cpus 1` with short runs (`--round 1s` unless `extra`
    /// gives one), and `extra`.
    fn tune(&self, extra: &[&str]) -> Command {
        let mut command = self.latlab();
        command.args(["tune", "--cpus", "1", "--duration", "2s"]);
        if !extra.contains(&"--load") {
            command.args(["--load", "none"]);
        }
        if !extra.contains(&"--round") {
            command.args(["--round", "1s"]);
        }
        command.arg("--runs-dir").arg(self.path("runs"));
        command.args(extra);
        command
    }

    /// The number of knobs recorded in the restore file (0 when absent).
    fn recorded(&self) -> usize {
        std::fs::read_to_string(self.journal())
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["entries"].as_array().map(Vec::len))
            .unwrap_or(0)
    }
}

fn two_cpus(test: &str) -> bool {
    let online = latlab_tune::knobs::inventory().cpus;
    common::require(
        test,
        online.contains(&0) && online.contains(&1),
        "a machine with CPUs 0 and 1",
    )
}

fn text(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn assert_unchanged(before: &std::collections::BTreeMap<String, String>, when: &str) {
    let after = snapshot();
    let changed = diff(before, &after);
    assert!(
        changed.is_empty(),
        "{when}: {} knobs differ:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn a_whole_tune_restores_every_knob_it_changed() {
    if !root("a_whole_tune_restores_every_knob_it_changed") || !two_cpus("whole tune") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let db = s.path("history.sqlite");
    let db = db.to_str().unwrap();
    let out = s
        .tune(&[
            "--isolate",
            "--json",
            "tune.json",
            "--export",
            "exported",
            "--db",
            db,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_unchanged(&before, "after a whole tune");
    assert!(
        !s.journal().exists(),
        "the restore file is removed at the end"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("tune.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "latlab.tune");
    let outcomes: Vec<&str> = doc["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["outcome"]["outcome"].as_str().unwrap())
        .collect();
    let measured = outcomes
        .iter()
        .filter(|o| **o == "kept" || **o == "dropped")
        .count();
    assert!(
        measured >= 3,
        "the isolation set was measured: {outcomes:?}"
    );
    assert!(
        doc["ending"]["failed"].as_array().unwrap().is_empty(),
        "{}",
        doc["ending"]
    );
    // Every boot parameter comes with why.
    for p in doc["boot"]["parameters"].as_array().unwrap() {
        assert!(!p["why"].as_str().unwrap().is_empty(), "{p}");
    }
    assert!(
        doc["boot"]["grub"]
            .as_str()
            .unwrap()
            .contains("nohz_full=1"),
        "{}",
        doc["boot"]
    );
    // A knob the kernel refused (a managed IRQ, here) is a reported skip.
    for f in doc["fixes"].as_array().unwrap() {
        if f["outcome"]["outcome"] == "skipped" {
            assert!(!f["outcome"]["reason"].as_str().unwrap().is_empty(), "{f}");
        }
    }
    assert!(s.path("exported/tuned/latlab-rt/tuned.conf").exists());
    // Saved and stored in the history like every result.
    let listed = s
        .latlab()
        .args(["history", "--kind", "tune", "--db", db])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("tune"),
        "{}",
        text(&listed)
    );
    assert!(
        text(&out).contains("Each fix, applied and undone in alternating rounds"),
        "{}",
        text(&out)
    );
}

#[test]
fn plan_measures_and_changes_nothing() {
    if !root("plan_measures_and_changes_nothing") || !two_cpus("plan") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let out = s
        .tune(&["--isolate", "--plan", "--json", "plan.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_unchanged(&before, "after --plan");
    assert!(!s.journal().exists(), "--plan writes no restore file");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("plan.json")).unwrap()).unwrap();
    let proposed = doc["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["outcome"]["outcome"] == "proposed")
        .count();
    assert!(proposed > 0, "{}", doc["fixes"]);
}

/// Starts a tune and waits until it has changed at least `knobs` knobs.
fn started_tune(s: &Scratch, knobs: usize) -> std::process::Child {
    started_tune_with(s, knobs, &[])
}

/// [`started_tune`] with `extra` arguments.
fn started_tune_with(s: &Scratch, knobs: usize, extra: &[&str]) -> std::process::Child {
    let stderr = std::fs::File::create(s.path("tune.err")).unwrap();
    let mut args = vec!["--isolate", "--round", "2s", "--json", "tune.json"];
    args.extend(extra);
    let mut child = s
        .tune(&args)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(s.path("tune.err")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(120);
    while s.recorded() < knobs {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the tune ended ({status}) before it changed {knobs} knobs:\n{}",
                said()
            );
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the tune changed {} knobs in 120 s:\n{}",
                s.recorded(),
                said()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn ctrl_c_in_the_middle_restores_every_knob() {
    if !root("ctrl_c_in_the_middle_restores_every_knob") || !two_cpus("ctrl-c") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let mut child = started_tune(&s, 2);
    let _cleanup = KillOnDrop(vec![child.id()]);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "a stopped tune ends normally: {status}\n{}",
        std::fs::read_to_string(s.path("tune.err")).unwrap_or_default()
    );
    assert_unchanged(&before, "after Ctrl-C");
    assert!(!s.journal().exists());
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("tune.json")).unwrap()).unwrap();
    assert_eq!(doc["ending"]["stopped"], true, "{}", doc["ending"]);
}

#[test]
fn after_sigkill_run_warns_tune_refuses_and_restore_restores() {
    if !root("after_sigkill_run_warns_tune_refuses_and_restore_restores") || !two_cpus("sigkill") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let mut child = started_tune(&s, 2);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    assert!(s.recorded() >= 2, "the restore file survives SIGKILL");
    assert!(
        !diff(&before, &snapshot()).is_empty(),
        "SIGKILL left knobs changed"
    );

    let run = s
        .latlab()
        .args([
            "run",
            "--cpus",
            "0",
            "--duration",
            "200ms",
            "--no-save",
            "-q",
        ])
        .output()
        .unwrap();
    let said = text(&run);
    assert!(
        said.contains("ended without restoring") && said.contains("latlab tune --restore"),
        "{said}"
    );

    let again = s.tune(&["--plan"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(
        text(&again).contains("latlab tune --restore"),
        "{}",
        text(&again)
    );

    let restore = s.latlab().args(["tune", "--restore"]).output().unwrap();
    assert!(restore.status.success(), "{}", text(&restore));
    assert_unchanged(&before, "after SIGKILL and tune --restore");
    assert!(!s.journal().exists());
}

#[test]
fn bad_input_is_an_error_naming_the_fix_and_changes_nothing() {
    if !root("bad_input_is_an_error_naming_the_fix_and_changes_nothing") || !two_cpus("bad input") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let cases: [(&[&str], &str); 5] = [
        (&["--cpus", "0-1"], "keep at least one for housekeeping"),
        (&["--cpus", "7"], "CPU 7 is not online"),
        (&["--cpus", "x"], "--cpus x"),
        (&["--rounds", "3"], "3 is not in 4..=20"),
        (&["--cpus", "0"], "CPU 0 is the boot CPU"),
    ];
    for (args, says) in cases {
        let out = s.latlab().args(["tune"]).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains(says),
            "{args:?} should say {says:?}: {}",
            text(&out)
        );
    }
    let nobody = latlab_as_nobody()
        .env("LATLAB_TUNE_JOURNAL", s.journal())
        .args(["tune", "--cpus", "1"])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(nobody.status.code(), Some(1), "{}", text(&nobody));
    assert!(
        text(&nobody).contains("run it as root"),
        "{}",
        text(&nobody)
    );
    assert_unchanged(&before, "after bad input");
    assert!(!s.journal().exists());
}

#[test]
fn restore_undoes_what_an_earlier_keep_kept() {
    if !root("restore_undoes_what_an_earlier_keep_kept") || !two_cpus("restore kept") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    // What `tune --keep` leaves: a kept file beside the restore file, its
    // tune ended, its change in place.
    let knob = latlab_fix::Knob::Sysctl {
        name: "kernel.timer_migration".into(),
    };
    let old = latlab_tune::knobs::read(&knob).unwrap();
    let ended = ended_pid();
    let kept = latlab_tune::journal::kept_path(&s.journal());
    let file = latlab_tune::journal::JournalFile {
        owner_pid: ended,
        owner_comm: "latlab".into(),
        boot_id: latlab_tune::journal::boot_id(),
        started: "2026-11-28T02:00:00Z".into(),
        entries: vec![latlab_tune::journal::Entry {
            knob: knob.clone(),
            old: old.clone(),
            partition: None,
        }],
    };
    std::fs::write(&kept, serde_json::to_vec(&file).unwrap()).unwrap();
    let _put_back = PutBack(knob.clone(), old.clone());
    latlab_tune::knobs::write(&knob, if old == "1" { "0" } else { "1" }).unwrap();

    let plan = s.tune(&["--plan"]).output().unwrap();
    assert!(plan.status.success(), "{}", text(&plan));
    assert!(
        text(&plan).contains("1 change `latlab tune --keep` kept (started 2026-11-28T02:00:00Z) is applied: this tune measures from them; `latlab tune --restore` undoes them"),
        "{}",
        text(&plan)
    );

    let restore = s.latlab().args(["tune", "--restore"]).output().unwrap();
    assert!(restore.status.success(), "{}", text(&restore));
    assert!(
        text(&restore).contains("(kept with --keep): 1 restored, 0 not needed, 0 failed"),
        "{}",
        text(&restore)
    );
    assert_unchanged(&before, "after tune --restore of a kept file");
    assert!(!kept.exists(), "the kept file is removed once restored");

    let nothing = s.latlab().args(["tune", "--restore"]).output().unwrap();
    assert!(nothing.status.success(), "{}", text(&nothing));
    assert!(
        text(&nothing).contains("nothing to restore"),
        "{}",
        text(&nothing)
    );
}

/// Writes a knob's value back when dropped: a failed assertion leaves
/// nothing changed.
struct PutBack(latlab_fix::Knob, String);

impl Drop for PutBack {
    fn drop(&mut self) {
        let _ = latlab_tune::knobs::write(&self.0, &self.1);
    }
}

/// The pid of a process that has ended (and been reaped).
fn ended_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    child.id()
}

#[test]
fn a_load_that_dies_mid_tune_ends_it_restored() {
    if !root("a_load_that_dies_mid_tune_ends_it_restored") || !two_cpus("load dies") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let before = snapshot();
    let mut child = started_tune_with(&s, 2, &["--load", "cpu:1"]);
    let _cleanup = KillOnDrop(vec![child.id()]);
    let load = children_of(child.id())
        .into_iter()
        .find(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"load"))
        })
        .expect("the tune's latlab load child");
    // SAFETY: kill(2) on the tune's load, a process of this test's tree.
    unsafe { libc::kill(load as libc::pid_t, libc::SIGKILL) };
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(s.path("tune.err")).unwrap_or_default();
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "the load (latlab load cpu:1, pid {load}) ended during the tune"
        )),
        "{said}"
    );
    assert_unchanged(&before, "after the load died");
    assert!(!s.journal().exists());
}

/// The child processes of `pid` (from every thread's `children` file).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let file = task.unwrap().path().join("children");
        let text = std::fs::read_to_string(file).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}
