//! Real loads, run for a fraction of a second each: threads, files, sockets, processes.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use latlab_load::{LoadError, LoadOptions, LoadSpec, RunningLoad};
use latlab_testkit::process::processes_with;

/// The tests look at this process's threads, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn options(root: &Path) -> LoadOptions {
    LoadOptions {
        temp_root: root.to_owned(),
        disk_cap_bytes: 16 << 20,
        sample_interval: Duration::from_millis(150),
        ..LoadOptions::default()
    }
}

/// (policy, nice) of every thread of this process whose name starts with `ld-`.
fn load_threads() -> Vec<(String, i64, i64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (head, rest) = stat.rsplit_once(')').unwrap();
        let name = head.split_once('(').unwrap().1.to_owned();
        if !name.starts_with("ld-") {
            continue;
        }
        let f: Vec<&str> = rest.split_whitespace().collect();
        // Field n of /proc/PID/stat is f[n - 3]: nice is 19, policy is 41.
        out.push((name, f[41 - 3].parse().unwrap(), f[19 - 3].parse().unwrap()));
    }
    out
}

/// True once no `ld-` thread is left. A joined thread has finished its work
/// but can stay listed in /proc/self/task for a moment while the kernel
/// finishes its exit (the joiner is woken before that), so allow 2 s.
fn no_load_threads() -> bool {
    let start = Instant::now();
    while !load_threads().is_empty() {
        if start.elapsed() > Duration::from_secs(2) {
            eprintln!("still running: {:?}", load_threads());
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Waits until every kind has counted some work (at least `min`, at most 20 s:
/// on a busy machine a first disk write can wait long for writeback).
fn run_until_working(load: &RunningLoad, min: Duration) {
    let start = Instant::now();
    std::thread::sleep(min);
    while load.totals().iter().any(|&(_, n)| n == 0) {
        load.check().unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no work after 20 s: {:?}",
            load.totals()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_empty_dir(root: &Path) {
    let left: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn every_kind_yields_throughput_at_sched_other() {
    let _serial = serial();
    // Start from SCHED_FIFO when we may: workers must still end up SCHED_OTHER.
    let param = latlab_rt::sched::param(1);
    // Undone at the end.
    let fifo = latlab_rt::sched::setscheduler(0, libc::SCHED_FIFO, &param) == 0;
    let root = tempfile::tempdir().unwrap();
    for kind in ["cpu", "io", "net", "udp", "mem", "syscall", "ipc"] {
        let spec: LoadSpec = format!("{kind}:1").parse().unwrap();
        let load = RunningLoad::start(&spec, &options(root.path())).unwrap();
        run_until_working(&load, Duration::from_millis(500));
        load.check().unwrap();
        let threads = load_threads();
        assert!(!threads.is_empty(), "{kind}: no ld-* threads found");
        for (name, policy, nice) in &threads {
            assert_eq!(*policy, 0, "{kind}: thread {name} is not SCHED_OTHER");
            assert!(*nice >= 0, "{kind}: thread {name} has nice {nice}");
        }
        let report = load.stop().unwrap();
        let k = report.kind(kind).unwrap();
        assert_eq!(k.workers, 1);
        assert!(k.total > 0, "{kind}: no work counted: {k:?}");
        assert!(k.per_second > 0.0, "{kind}: {k:?}");
        assert!(!k.series.is_empty(), "{kind}: no complete interval: {k:?}");
        assert!(k.series.iter().any(|&r| r > 0.0), "{kind}: {k:?}");
        let per_kib = k.us_per_kib.as_ref();
        if kind == "net" || kind == "udp" {
            let first = per_kib.unwrap().iter().flatten().next().copied();
            assert!(first.is_some_and(|us| us > 0.0), "{kind}: {k:?}");
        } else {
            assert!(per_kib.is_none(), "{kind}");
        }
        assert!(no_load_threads(), "{kind}: worker threads left running");
        assert_empty_dir(root.path());
    }
    let back = latlab_rt::sched::param(0);
    latlab_rt::sched::setscheduler(0, libc::SCHED_OTHER, &back);
    if !fifo {
        eprintln!("note: SCHED_FIFO refused (run as root or grant CAP_SYS_NICE): workers were started from SCHED_OTHER only");
        assert!(!latlab_testkit::require_privilege());
    }
}

#[test]
fn io_stays_under_the_disk_cap_and_cleans_up_on_drop() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let opts = LoadOptions {
        disk_cap_bytes: 3 << 20,
        ..options(root.path())
    };
    let load = RunningLoad::start(&"io:2".parse().unwrap(), &opts).unwrap();
    let start = Instant::now();
    let mut largest = 0;
    while start.elapsed() < Duration::from_millis(400) {
        let mut used = 0;
        for dir in std::fs::read_dir(root.path()).unwrap().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                used += f.metadata().map_or(0, |m| m.len());
            }
        }
        largest = largest.max(used);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(largest > 0, "io wrote nothing");
    assert!(
        largest <= 3 << 20,
        "io used {largest} bytes, over the 3 MiB cap"
    );
    drop(load);
    assert_empty_dir(root.path());
}

#[test]
fn a_worker_that_fails_is_reported_and_cleaned_up() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let load = RunningLoad::start(&"io:1,cpu:1".parse().unwrap(), &options(root.path())).unwrap();
    // Pull the disk out from under the io worker: move its directory aside
    // first (at once, as far as the worker can tell), then remove it.
    let aside = tempfile::tempdir().unwrap();
    for (i, dir) in std::fs::read_dir(root.path())
        .unwrap()
        .flatten()
        .enumerate()
    {
        let gone = aside.path().join(i.to_string());
        std::fs::rename(dir.path(), &gone).unwrap();
        std::fs::remove_dir_all(&gone).unwrap();
    }
    let start = Instant::now();
    let err = loop {
        if let Err(e) = load.check() {
            break e;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "io worker kept running"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = err.to_string();
    assert!(text.contains("io load worker 0"), "{text}");
    assert!(text.contains("io-0.dat"), "{text}");
    assert!(load.stop().is_err());
    assert!(no_load_threads(), "worker threads left running");
    assert_empty_dir(root.path());
}

#[test]
fn failing_commands_are_clear_errors_and_leave_nothing() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let cases = [
        ("echo broken >&2; exit 3", "exited with status 3", "broken"),
        (
            "latlab-no-such-program-4711",
            "status 127",
            "did not find the program",
        ),
        ("true", "status 0", "exits at once"),
    ];
    // A grace long enough for even `true` to exit on a stalled VM (start
    // returns as soon as the command has ended).
    let options = LoadOptions {
        command_grace: Duration::from_secs(3),
        ..options(root.path())
    };
    for (command, status, detail) in cases {
        let spec = "io:1".parse::<LoadSpec>().unwrap().with_command(command);
        let err = RunningLoad::start(&spec, &options).unwrap_err();
        assert!(matches!(err, LoadError::CommandFailed { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(status), "{command}: {text}");
        assert!(text.contains(detail), "{command}: {text}");
        assert!(text.contains(command), "{command}: {text}");
        assert!(no_load_threads(), "worker threads left running");
        assert_empty_dir(root.path());
    }
}

#[test]
fn a_command_that_fails_later_is_caught_by_check() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    // Well past the 300 ms start grace, so that start succeeds on a slow VM.
    let spec = LoadSpec::none().with_command("sleep 2; exit 5");
    let load = RunningLoad::start(&spec, &options(root.path())).unwrap();
    let start = Instant::now();
    let err = loop {
        if let Err(e) = load.check() {
            break e;
        }
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(err.to_string().contains("exited with status 5"), "{err}");
    assert!(load.stop().is_err());
    assert_empty_dir(root.path());
}

#[test]
fn the_command_and_all_its_children_are_stopped_and_measured() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let marker = format!("987.{}", std::process::id());
    // A shell that starts a busy child and a sleeping grandchild.
    let command = format!("sleep {marker} & (while :; do :; done) & wait");
    let spec = "cpu:1".parse::<LoadSpec>().unwrap().with_command(&command);
    let load = RunningLoad::start(&spec, &options(root.path())).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    load.check().unwrap();
    assert!(
        !processes_with(&marker).is_empty(),
        "the command is not running"
    );
    assert!(
        load.progress_line().contains("command"),
        "{}",
        load.progress_line()
    );
    let report = load.stop().unwrap();
    assert!(
        processes_with(&marker).is_empty(),
        "survivors: {:?}",
        processes_with(&marker)
    );
    let ext = report.external.as_ref().unwrap();
    assert_eq!(ext.command, command);
    // The busy loop competes with cpu:1 and whatever else runs here; any
    // CPU time at all shows the group's processes are measured.
    assert!(ext.cpu_seconds > 0.0, "{ext:?}");
    assert!(ext.cpus_busy > 0.0, "{ext:?}");
    assert!(ext.series.iter().any(|&c| c > 0.0), "{ext:?}");
    assert!(ext.ended.is_none(), "{ext:?}");
    assert_empty_dir(root.path());
}

#[test]
fn full_runs_one_cpu_hog_per_cpu_and_reports_json() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let cpus = latlab_rt_cpus();
    let load = RunningLoad::start(&"full".parse().unwrap(), &options(root.path())).unwrap();
    std::thread::sleep(Duration::from_millis(350));
    let report = load.stop().unwrap();
    let kinds: Vec<(&str, usize)> = report
        .kinds
        .iter()
        .map(|k| (k.kind.as_str(), k.workers))
        .collect();
    assert_eq!(kinds, [("cpu", cpus), ("io", 1), ("net", 1), ("mem", 1)]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["spec"], "full");
    assert_eq!(json["kinds"][2]["unit"], "bytes");
    assert!(json["kinds"][2]["us_per_kib"].is_array());
    assert!(json["warnings"].is_array());
    assert_empty_dir(root.path());
}

/// The number of CPUs this process may use (what `full` sizes its cpu hogs by).
fn latlab_rt_cpus() -> usize {
    let set = latlab_rt::cpuset::CpuSet::of_current_thread().unwrap();
    set.cpus().len()
}

#[test]
fn bad_options_are_refused_before_anything_starts() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    for (opts, needle) in [
        (
            LoadOptions {
                nice: -5,
                ..options(root.path())
            },
            "nice",
        ),
        (
            LoadOptions {
                disk_cap_bytes: 100,
                ..options(root.path())
            },
            "disk cap",
        ),
        (
            LoadOptions {
                net_message_bytes: 70_000,
                ..options(root.path())
            },
            "UDP",
        ),
    ] {
        let err = RunningLoad::start(&"io:1,udp:1".parse().unwrap(), &opts).unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
        assert_empty_dir(root.path());
    }
}

#[test]
fn a_running_load_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<RunningLoad>();
}

#[test]
fn loads_work_in_a_memory_locked_process_as_under_latlab_run() {
    let _serial = serial();
    // `latlab run` locks all current and future pages; the loads must still work.
    // Without root a small RLIMIT_MEMLOCK would fail the mem load's mappings.
    // SAFETY: mlockall/munlockall affect only this test process.
    let locked = latlab_testkit::skip::is_root()
        && unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0;
    if !latlab_testkit::require(
        "loads in a memory-locked process: root (mlockall without a memlock limit)",
        locked,
        "run the tests as root",
    ) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let result = RunningLoad::start(&"mem:1,net:1,io:1".parse().unwrap(), &options(root.path()))
        .and_then(|load| {
            run_until_working(&load, Duration::from_millis(300));
            load.stop()
        });
    // SAFETY: as above.
    unsafe { libc::munlockall() };
    let report = result.unwrap();
    assert!(report.kinds.iter().all(|k| k.total > 0), "{report:?}");
    assert_empty_dir(root.path());
}

#[test]
fn the_io_load_on_a_ram_file_system_warns() {
    let _serial = serial();
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        latlab_testkit::skip::skip("no /dev/shm tmpfs here (the io load on a RAM file system)");
        return;
    }
    let opts = LoadOptions {
        temp_root: shm.to_owned(),
        ..options(shm)
    };
    let report = RunningLoad::start(&"io:1".parse().unwrap(), &opts)
        .unwrap()
        .stop()
        .unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("RAM file system")),
        "{report:?}"
    );
}

#[test]
fn workers_use_every_cpu_even_when_started_from_a_pinned_thread() {
    let _serial = serial();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = online.trim().to_owned();
    let root = tempfile::tempdir().unwrap();
    let allowed = std::thread::spawn(move || {
        // Pin this thread to CPU 0, as a measurement thread would be.
        let set = latlab_rt::cpuset::CpuSet::single(0).unwrap();
        set.apply_to_current_thread().unwrap();
        let load = RunningLoad::start(&"cpu:1".parse().unwrap(), &options(root.path())).unwrap();
        let mut allowed = String::new();
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            if status.lines().any(|l| l == "Name:\tld-cpu0") {
                let line = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list:"))
                    .unwrap();
                allowed = line.split_whitespace().nth(1).unwrap().to_owned();
            }
        }
        load.stop().unwrap();
        allowed
    })
    .join()
    .unwrap();
    assert_eq!(
        allowed, online,
        "the cpu worker inherited its creator's pinning"
    );
}

#[test]
fn a_command_that_ignores_sigterm_is_killed() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let marker = format!("986.{}", std::process::id());
    // SIG_IGN survives exec, so the sleep ignores SIGTERM too.
    let spec = LoadSpec::none().with_command(format!("trap '' TERM; sleep {marker}; true"));
    let load = RunningLoad::start(&spec, &options(root.path())).unwrap();
    assert!(
        !processes_with(&marker).is_empty(),
        "the command is not running"
    );
    let report = load.stop().unwrap();
    assert!(
        processes_with(&marker).is_empty(),
        "survivors: {:?}",
        processes_with(&marker)
    );
    assert!(report.external.unwrap().ended.is_none());
    assert_empty_dir(root.path());
}

/// (local, remote) hex addresses of this process's sockets in /proc/net/{tcp,udp}.
fn own_inet_sockets() -> Vec<(String, String)> {
    let inodes: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect();
    let mut out = Vec::new();
    for table in [
        "/proc/net/tcp",
        "/proc/net/udp",
        "/proc/net/tcp6",
        "/proc/net/udp6",
    ] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && inodes.iter().any(|i| i == f[9]) {
                out.push((f[1].to_owned(), f[2].to_owned()));
            }
        }
    }
    out
}

#[test]
fn network_loads_use_only_loopback() {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let load = RunningLoad::start(&"net:2,udp:1".parse().unwrap(), &options(root.path())).unwrap();
    let sockets = own_inet_sockets();
    load.stop().unwrap();
    // 2 TCP pairs (4 ends, plus listeners already closed) and 1 UDP pair.
    assert!(sockets.len() >= 6, "{sockets:?}");
    for (local, remote) in &sockets {
        // 127.0.0.1 is 0100007F in the kernel's little-endian hex.
        assert!(
            local.starts_with("0100007F:"),
            "local {local} is not 127.0.0.1"
        );
        assert!(
            remote.starts_with("0100007F:") || remote.starts_with("00000000:"),
            "remote {remote} is not 127.0.0.1"
        );
    }
}
