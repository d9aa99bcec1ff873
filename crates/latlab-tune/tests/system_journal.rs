//! The restore file: written before each change, found stale after its
//! tune was killed, restored by `restore_file`; a journal dropped or
//! kept. Real knobs: run as root; CPU 1 real time, CPU 0 housekeeping.

mod common;

use common::Put;

use std::io::BufRead;
use std::sync::Mutex;

use latlab_fix::Knob;
use latlab_tune::journal::{self, Entry, Journal, JournalError, JournalFile};
use latlab_tune::{knobs, partition, snapshot};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Set in the re-executed child: the restore file it writes before it is killed.
const CHILD_ENV: &str = "LATLAB_TEST_KILLED_TUNE";

fn timer_migration() -> (Knob, String, String) {
    let knob = Knob::Sysctl {
        name: "kernel.timer_migration".into(),
    };
    let now = knobs::read(&knob).unwrap();
    let other = if now == "1" { "0" } else { "1" }.to_string();
    (knob, now, other)
}

fn ready() -> bool {
    common::root_and_two_cpus(module_path!())
}

/// What a test of kernel.timer_migration holds until its end: the one-at-
/// a-time lock, the knob's old value to put back, the restore file's
/// temporary directory.
struct Hold {
    _dir: tempfile::TempDir,
    _put: Put,
    _one: std::sync::MutexGuard<'static, ()>,
}

/// One test's set-up: kernel.timer_migration, its value now and the other
/// one, a restore file path in a temporary directory, and what the test
/// holds until its end. None (the test skips) without root or two CPUs.
fn set_up() -> Option<(Knob, String, String, std::path::PathBuf, Hold)> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !ready() {
        return None;
    }
    let (knob, old, other) = timer_migration();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune-restore.json");
    let hold = Hold {
        _dir: dir,
        _put: Put(knob.clone(), old.clone()),
        _one: one,
    };
    Some((knob, old, other, path, hold))
}

/// The knobs the killed tune changes.
fn killed_tune_knobs() -> Vec<(Knob, &'static str)> {
    let mut list = vec![
        (
            Knob::Sysctl {
                name: "kernel.timer_migration".into(),
            },
            "0",
        ),
        (
            Knob::Sysctl {
                name: "vm.stat_interval".into(),
            },
            "10",
        ),
        (Knob::WorkqueueCpumask, "0"),
        (Knob::IrqAffinity { irq: 24 }, "0"),
        (Knob::IdleState { cpu: 1, state: 1 }, "1"),
    ];
    if partition::available().is_ok() {
        list.push((Knob::CpusetPartition, "1"));
    }
    list
}

/// Not a test of its own: the body of the tune the next test kills.
#[test]
fn killed_tune_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let mut journal = Journal::begin(std::path::Path::new(&path)).unwrap();
    for (knob, value) in killed_tune_knobs() {
        if let Err(e) = journal.apply(&knob, value) {
            println!("refused {knob}: {e}");
        }
    }
    println!("ready {}", journal.entries().len());
    std::thread::sleep(std::time::Duration::from_secs(60));
}

#[test]
fn a_tune_killed_with_sigkill_leaves_a_stale_journal_that_restore_file_restores() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !ready() {
        return;
    }
    let guards: Vec<Put> = killed_tune_knobs()
        .into_iter()
        .filter_map(|(k, _)| Some(Put(k.clone(), knobs::read(&k).ok()?)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune-restore.json");
    let before = snapshot::snapshot();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "killed_tune_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let changed = loop {
        let line = lines
            .next()
            .expect("the child ended before it was ready")
            .unwrap();
        eprintln!("child: {line}");
        if let Some((_, n)) = line.split_once("ready ") {
            break n.parse::<usize>().unwrap();
        }
    };
    assert!(changed >= 4, "the child changed {changed} knobs");
    // While it runs, its journal is not stale and not ours to restore.
    assert!(journal::check_stale(&path).is_none());
    assert!(matches!(
        journal::restore_file(&path),
        Err(JournalError::Live { .. })
    ));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let stale = journal::check_stale(&path).expect("not found stale");
    eprintln!("stale: {}", stale.message);
    assert!(stale.same_boot);
    assert!(stale
        .message
        .contains(&format!("ended without restoring {changed} knobs")));
    assert!(stale.message.contains("latlab tune --restore"));
    let refused = Journal::begin(&path).unwrap_err();
    eprintln!("begin refused: {refused}");
    assert!(refused.to_string().contains("latlab tune --restore"));
    let report = journal::restore_file(&path).unwrap();
    eprintln!(
        "restored {} knobs: {:?}",
        report.restored.len(),
        report.restored
    );
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(report.restored.len(), changed);
    assert!(!path.exists());
    let diff = snapshot::diff(&before, &snapshot::snapshot());
    assert!(
        diff.is_empty(),
        "differs after SIGKILL + restore:\n{}",
        diff.join("\n")
    );
    drop(guards);
}

#[test]
fn a_journal_of_a_killed_sleep_is_stale_and_restored() {
    let Some((knob, old, other, path, _hold)) = set_up() else {
        return;
    };
    let mut sleep = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let file = JournalFile {
        owner_pid: sleep.id(),
        owner_comm: "sleep".into(),
        boot_id: journal::boot_id(),
        started: "2026-11-27T23:00:00Z".into(),
        entries: vec![Entry {
            knob: knob.clone(),
            old: old.clone(),
            partition: None,
        }],
    };
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    knobs::write(&knob, &other).unwrap();
    assert!(
        journal::check_stale(&path).is_none(),
        "a live owner's journal called stale"
    );
    let _ = sleep.kill();
    let _ = sleep.wait();
    let stale = journal::check_stale(&path).unwrap();
    eprintln!("{}", stale.message);
    assert_eq!(
        stale.message,
        format!(
            "latlab tune (pid {}, started 2026-11-27T23:00:00Z) ended without restoring 1 knob: run `latlab tune --restore` ({})",
            sleep.id(),
            path.display()
        )
    );
    let report = journal::restore_file(&path).unwrap();
    assert_eq!(report.restored, vec![(knob.clone(), old.clone())]);
    assert_eq!(knobs::read(&knob).unwrap(), old);
    assert!(!path.exists());
}

#[test]
fn a_journal_of_an_earlier_boot_is_dropped_without_writing() {
    let Some((knob, now, other, path, _hold)) = set_up() else {
        return;
    };
    let file = JournalFile {
        owner_pid: std::process::id(),
        owner_comm: "latlab".into(),
        boot_id: "00000000-0000-0000-0000-000000000000".into(),
        started: "2026-11-01T00:00:00Z".into(),
        entries: vec![Entry {
            knob: knob.clone(),
            old: other,
            partition: None,
        }],
    };
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    let stale = journal::check_stale(&path).unwrap();
    eprintln!("{}", stale.message);
    assert!(!stale.same_boot);
    assert!(stale
        .message
        .contains("from an earlier boot: its runtime changes did not survive the reboot"));
    let report = journal::restore_file(&path).unwrap();
    eprintln!("dropped: {:?}", report.dropped);
    assert!(report.restored.is_empty() && report.failed.is_empty());
    assert_eq!(report.dropped.len(), 1);
    assert_eq!(
        knobs::read(&knob).unwrap(),
        now,
        "a knob of an earlier boot was written"
    );
    assert!(!path.exists());
}

#[test]
fn a_dropped_journal_restores_and_a_kept_one_leaves_the_knobs() {
    let Some((knob, old, other, path, _hold)) = set_up() else {
        return;
    };
    {
        let mut journal = Journal::begin(&path).unwrap();
        journal.apply(&knob, &other).unwrap();
        let again = journal.apply(&knob, &other).unwrap();
        assert!(again.unchanged);
        assert_eq!(journal.entries().len(), 1);
        assert_eq!(knobs::read(&knob).unwrap(), other);
    }
    assert_eq!(
        knobs::read(&knob).unwrap(),
        old,
        "a dropped journal left the knob"
    );
    assert!(!path.exists());
    let mut journal = Journal::begin(&path).unwrap();
    journal.apply(&knob, &other).unwrap();
    assert!(
        matches!(Journal::begin(&path), Err(JournalError::Exists { .. })),
        "a second journal began beside a running one"
    );
    let kept = journal.keep().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        knobs::read(&knob).unwrap(),
        other,
        "--keep restored the knob"
    );
    assert!(!path.exists());
    // A second --keep (from the first's values) adds after the first's:
    // `--restore` of the kept file ends at the values from before both.
    let stat = Knob::Sysctl {
        name: "vm.stat_interval".into(),
    };
    let stat_old = knobs::read(&stat).unwrap();
    let _stat_guard = Put(stat.clone(), stat_old.clone());
    let mut journal = Journal::begin(&path).unwrap();
    journal.apply(&knob, &old).unwrap();
    journal.apply(&stat, "7").unwrap();
    journal.keep().unwrap();
    let kept_path = journal::kept_path(&path);
    let kept: JournalFile =
        serde_json::from_str(&std::fs::read_to_string(&kept_path).unwrap()).unwrap();
    assert_eq!(kept.entries.len(), 3, "{kept:?}");
    let report = journal::restore_file(&kept_path).unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(knobs::read(&knob).unwrap(), old);
    assert_eq!(knobs::read(&stat).unwrap(), stat_old);
    assert!(!kept_path.exists());
    std::env::var_os("LATLAB_TUNE_JOURNAL").map_or_else(
        || {
            assert_eq!(
                journal::default_path(),
                std::path::Path::new("/var/lib/latlab/tune-restore.json")
            )
        },
        |p| assert_eq!(journal::default_path(), std::path::Path::new(&p)),
    );
}
