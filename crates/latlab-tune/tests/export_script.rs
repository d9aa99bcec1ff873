//! The exported shell script run for real, as root: `start` applies each
//! kept fix (a sysctl, transparent hugepages, an idle state, a thread's
//! affinity and policy) and `stop` puts every old value back; a second
//! `start` and a non-root run change nothing. A guard restores every knob
//! on every path, the script's `stop` or not.

use std::path::Path;
use std::process::{Child, Command, Output};

use latlab_fix::Knob;
use latlab_tune::export::{shell_script, Kept};

const STAT: &str = "/proc/sys/vm/stat_interval";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

fn read(path: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    // `always [madvise] never`: the selected word.
    match (text.find('['), text.find(']')) {
        (Some(a), Some(b)) => text[a + 1..b].to_string(),
        _ => text.trim().to_string(),
    }
}

/// Puts each knob back and ends the thread the test made, on every path.
struct Guard {
    files: Vec<(String, String)>,
    child: Child,
}

impl Drop for Guard {
    fn drop(&mut self) {
        for (path, old) in &self.files {
            if read(path) != *old {
                let _ = std::fs::write(path, old);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status_line(pid: u32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line[key.len()..].trim().to_string()
}

/// (policy, priority) of a thread.
fn policy(pid: u32) -> (i32, i32) {
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a valid pid and out-pointer.
    let policy = unsafe { libc::sched_getscheduler(pid as i32) };
    unsafe { libc::sched_getparam(pid as i32, &mut param) };
    (policy, param.sched_priority)
}

fn run(script: &Path, saved: &Path, action: &str) -> Output {
    Command::new("sh")
        .arg(script)
        .arg(action)
        .env("LATLAB_RT_SAVED", saved)
        .output()
        .unwrap()
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn start_applies_each_fix_and_stop_puts_every_old_value_back() {
    let strict = std::env::var("LATLAB_REQUIRE_PRIVILEGE").as_deref() == Ok("1");
    // SAFETY: no arguments.
    let root = unsafe { libc::geteuid() } == 0;
    for (ok, what) in [
        (root, "root (the script writes /proc and /sys): run as root"),
        (
            have("taskset") && have("chrt"),
            "taskset and chrt (apt-get install util-linux)",
        ),
        (
            Path::new(STAT).exists() && Path::new(THP).exists(),
            "vm.stat_interval and THP",
        ),
    ] {
        if !ok {
            assert!(!strict, "{what} is required (LATLAB_REQUIRE_PRIVILEGE=1)");
            return latlab_testkit::skip::skip(&format!("needs {what}"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    // A thread of our own, with a name no other has.
    let name = format!("llx{}", std::process::id() % 1_000_000);
    let program = dir.path().join(&name);
    std::fs::copy("/bin/sleep", &program).unwrap();
    let child = Command::new(&program).arg("120").spawn().unwrap();
    let pid = child.id();
    let stat = read(STAT);
    let thp = read(THP);
    // The deepest idle state of CPU 1, where it has cpuidle.
    let idle = (1..10)
        .rev()
        .map(|s| {
            (
                s,
                format!("/sys/devices/system/cpu/cpu1/cpuidle/state{s}/disable"),
            )
        })
        .find(|(_, p)| Path::new(p).exists());
    let mut files = vec![
        (STAT.to_string(), stat.clone()),
        (THP.to_string(), thp.clone()),
    ];
    files.extend(idle.iter().map(|(_, p)| (p.clone(), read(p))));
    let guard = Guard { files, child };

    let new_stat = (stat.parse::<u32>().unwrap() + 1).to_string();
    let new_thp = if thp == "never" { "madvise" } else { "never" };
    let mut kept = vec![
        Kept::new(
            Knob::Sysctl {
                name: "vm.stat_interval".into(),
            },
            &new_stat,
            "vmstat",
        ),
        Kept::new(Knob::TransparentHugepages, new_thp, "khugepaged"),
        Kept::new(
            Knob::TaskAffinity {
                pid: pid as i32,
                comm: name.clone(),
            },
            "0",
            "ran on CPU 1",
        ),
        Kept::new(
            Knob::TaskPriority {
                pid: pid as i32,
                comm: name.clone(),
            },
            "fifo:1",
            "waited",
        ),
    ];
    if let Some((state, _)) = &idle {
        kept.push(Kept::new(
            Knob::IdleState {
                cpu: 1,
                state: *state,
            },
            "1",
            "exit latency",
        ));
    } else {
        latlab_testkit::skip::skip("(part) CPU 1 has no cpuidle states");
    }
    let script = dir.path().join("latlab-rt.sh");
    std::fs::write(&script, shell_script(&kept, &[])).unwrap();
    let saved = dir.path().join("saved");
    let affinity = status_line(pid, "Cpus_allowed_list:");
    let before = policy(pid);

    let out = run(&script, &saved, "start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(STAT), new_stat);
    assert_eq!(read(THP), new_thp);
    if let Some((_, path)) = &idle {
        assert_eq!(read(path), "1");
    }
    assert_eq!(status_line(pid, "Cpus_allowed_list:"), "0");
    assert_eq!(policy(pid), (libc::SCHED_FIFO, 1));

    let again = run(&script, &saved, "start");
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already started"));

    let out = run(&script, &saved, "stop");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (path, old) in &guard.files {
        assert_eq!(read(path), *old, "{path} not restored");
    }
    assert_eq!(status_line(pid, "Cpus_allowed_list:"), affinity);
    assert_eq!(policy(pid), before);
    assert!(!saved.exists(), "stop removes what it restored from");

    if have("setpriv") {
        use std::os::unix::fs::PermissionsExt;
        // The script readable by nobody, who must be refused.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"])
            .arg(&script)
            .env("LATLAB_RT_SAVED", &saved)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("run as root"));
        assert!(!saved.exists());
        assert_eq!(read(STAT), stat);
    }
    drop(guard);
}
