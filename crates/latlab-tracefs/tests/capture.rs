//! Captures on the real tracefs of this machine, found as latlab finds it
//! (`/sys/kernel/tracing` or debugfs's `tracing/`). Needs root; skips (with
//! the reason) otherwise, unless LATLAB_REQUIRE_PRIVILEGE=1 turns that into a
//! failure.

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use latlab_testkit::{have_tool, require_tracefs, TracefsState};
use latlab_tracefs::{Capture, CaptureOptions, Sizing, Tracefs, TracefsError};

/// Captures run one at a time: the machine has few CPUs and we compare counts.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `trace-cmd report` and returns (events, stderr). Lines that are not
/// events (`cpus=`, `CPU:n [N EVENTS DROPPED]`) are not counted.
fn trace_cmd_report(path: &Path) -> (Vec<String>, String) {
    let out = Command::new("trace-cmd")
        .arg("report")
        .arg(path)
        .output()
        .expect("run trace-cmd");
    assert!(
        out.status.success(),
        "trace-cmd report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let events = text
        .lines()
        .filter(|l| {
            !l.starts_with("cpus=") && !l.contains("EVENTS DROPPED") && !l.trim().is_empty()
        })
        .map(str::to_string)
        .collect();
    (events, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The CPU and timestamp (seconds) of a `trace-cmd report` event line,
/// `comm-pid [001] 12345.678901: event: ...`.
fn cpu_and_seconds(line: &str) -> (u32, f64) {
    let (_, rest) = line.split_once('[').expect("a [cpu] field");
    let (cpu, rest) = rest.split_once(']').expect("a [cpu] field");
    let stamp = rest.split_whitespace().next().expect("a timestamp");
    (
        cpu.trim().parse().expect("a CPU number"),
        stamp.trim_end_matches(':').parse().expect("a timestamp"),
    )
}

fn opts(events: &[&str]) -> CaptureOptions {
    CaptureOptions {
        events: events.iter().map(|s| s.to_string()).collect(),
        kallsyms: false,
        ..Default::default()
    }
}

/// Takes the lock that runs the capture tests one at a time, finds tracefs
/// (and trace-cmd, when the test reads the file with it) and notes its
/// state; `None` (the test skips) when either is missing.
fn capturing(trace_cmd: bool) -> Option<(MutexGuard<'static, ()>, Tracefs, TracefsState)> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tracefs = require_tracefs("tracefs capture")?;
    if trace_cmd && !have_tool("trace-cmd", "trace-cmd") {
        return None;
    }
    let before = TracefsState::now(&tracefs);
    Some((serial, tracefs, before))
}

#[test]
fn instance_is_created_configured_and_removed() {
    let Some((_g, tracefs, before)) = capturing(false) else {
        return;
    };
    let capture = Capture::start(&opts(&["sched"])).unwrap();
    let dir = tracefs.path("instances").join(capture.instance_name());
    assert!(dir.is_dir(), "instance {} missing", dir.display());
    assert_eq!(
        std::fs::read_to_string(dir.join("events/sched/sched_switch/enable"))
            .unwrap()
            .trim(),
        "1"
    );
    assert!(std::fs::read_to_string(dir.join("trace_clock"))
        .unwrap()
        .contains("[mono]"));
    assert_eq!(
        std::fs::read_to_string(dir.join("tracing_on"))
            .unwrap()
            .trim(),
        "1"
    );
    let out = tempfile::tempdir().unwrap();
    let report = capture.stop(&out.path().join("t.dat")).unwrap();
    assert!(!dir.exists(), "instance {} not removed", dir.display());
    assert!(report.file_bytes > 0);
    before.assert_clean(std::process::id());
}

#[test]
fn error_in_start_leaves_no_instance() {
    let Some((_g, _, before)) = capturing(false) else {
        return;
    };
    match Capture::start(&opts(&["nosuchsystem:nosuchevent"])) {
        Err(TracefsError::NoEvents { missing, available }) => {
            assert!(missing.contains("nosuchevent"));
            assert!(
                available.exists(),
                "the error points at a missing file: {}",
                available.display()
            );
        }
        other => panic!("expected NoEvents, got {other:?}"),
    }
    before.assert_clean(std::process::id());
}

#[test]
fn error_in_stop_leaves_no_instance() {
    let Some((_g, _, before)) = capturing(false) else {
        return;
    };
    let capture = Capture::start(&opts(&["sched"])).unwrap();
    let err = capture
        .stop(Path::new("/nonexistent-dir-latlab/t.dat"))
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent-dir-latlab"), "{err}");
    before.assert_clean(std::process::id());
}

#[test]
fn recording_matches_trace_cmd_and_carries_markers() {
    let Some((_g, _, before)) = capturing(true) else {
        return;
    };
    let capture = Capture::start(&opts(&["sched", "timer"])).unwrap();
    let marker = capture.marker();
    let m2 = marker.clone();
    let writer = std::thread::spawn(move || {
        for i in 0..5u64 {
            m2.write_sample(i, 1_000 * i, 1_000 * i + 70).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let status = Command::new("sleep").arg("0.2").status().unwrap();
    assert!(status.success());
    writer.join().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.dat");
    let report = capture.stop(&path).unwrap();
    // A marker clone outliving the capture writes into /dev/null, not into a removed instance.
    marker.write(b"after stop").unwrap();
    let (events, stderr) = trace_cmd_report(&path);
    assert!(
        !stderr.to_lowercase().contains("error"),
        "trace-cmd complained: {stderr}"
    );
    assert_eq!(
        events.len() as u64,
        report.total_events,
        "trace-cmd and latlab disagree"
    );
    assert!(
        events.iter().any(|l| l.contains("sched_switch:")),
        "no sched_switch event"
    );
    assert!(events
        .iter()
        .any(|l| l.contains("sleep") && l.contains("sched_switch:")));
    let markers = events
        .iter()
        .filter(|l| l.contains("latlab: cycle="))
        .count();
    assert_eq!(markers, 5, "marker lines missing");
    assert!(events
        .iter()
        .any(|l| l.contains("latlab: cycle=3 intended=3000 actual=3070 latency=70")));
    assert_eq!(
        report.lost_events, 0,
        "events lost in a 0.2 s recording: {report:?}"
    );
    before.assert_clean(std::process::id());
}

#[test]
fn flight_recorder_snapshots_keep_the_ring_buffer() {
    let Some((_g, _, before)) = capturing(true) else {
        return;
    };
    let mut o = opts(&["sched", "timer"]);
    o.flight_recorder = true;
    // Big enough that a burst of scheduler events cannot push the first
    // marker out of the ring within the test's 90 ms.
    o.buffer_size_kb = Some(1024);
    let mut capture = Capture::start(&o).unwrap();
    assert!(capture.is_flight_recorder());
    let marker = capture.marker();
    for i in 0..3 {
        marker.write_sample(i, 10, 20).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap.dat");
    let r1 = capture.snapshot_to(&snap).unwrap();
    assert!(r1.flight_recorder);
    let (events, _) = trace_cmd_report(&snap);
    assert_eq!(events.len() as u64, r1.total_events);
    assert_eq!(
        events
            .iter()
            .filter(|l| l.contains("latlab: cycle="))
            .count(),
        3
    );
    // After a snapshot, recording goes on and the next file has only new events.
    marker.write(b"second window").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let end = dir.path().join("end.dat");
    let r2 = capture.stop(&end).unwrap();
    let (events2, _) = trace_cmd_report(&end);
    assert_eq!(events2.len() as u64, r2.total_events);
    assert!(events2.iter().any(|l| l.contains("second window")));
    assert!(!events2.iter().any(|l| l.contains("latlab: cycle=")));
    before.assert_clean(std::process::id());
}

#[test]
fn streaming_capture_refuses_snapshots() {
    let Some((_g, _, before)) = capturing(false) else {
        return;
    };
    let mut capture = Capture::start(&opts(&["sched"])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        capture.snapshot_to(&dir.path().join("x.dat")),
        Err(TracefsError::WrongMode(_))
    ));
    drop(capture);
    before.assert_clean(std::process::id());
}

#[test]
fn stale_instances_of_dead_processes_are_removed_live_ones_kept() {
    let Some((_g, tracefs, before)) = capturing(false) else {
        return;
    };
    // A pid that just died.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = tracefs.path("instances").join(format!("latlab-{dead}-7"));
    let live = tracefs.path("instances").join("latlab-1-test");
    std::fs::create_dir(&stale).unwrap();
    std::fs::create_dir(&live).unwrap();
    let capture = Capture::start(&opts(&["sched"]));
    let live_kept = live.is_dir();
    let _ = std::fs::remove_dir(&live);
    let capture = capture.unwrap();
    assert!(
        !stale.exists(),
        "stale instance of dead pid {dead} not removed"
    );
    assert!(live_kept, "instance of live pid 1 was removed");
    assert!(capture
        .notes()
        .iter()
        .any(|n| n.contains(&format!("latlab-{dead}-7"))));
    drop(capture);
    before.assert_clean(std::process::id());
}

#[test]
fn freezer_stops_tracing_so_the_snapshot_ends_at_the_trigger() {
    let Some((_g, _, before)) = capturing(true) else {
        return;
    };
    let mut o = opts(&["sched"]);
    o.flight_recorder = true;
    let mut capture = Capture::start(&o).unwrap();
    let marker = capture.marker();
    let freezer = capture.freezer();
    // The "measurement thread": marks the trigger and freezes right away.
    std::thread::spawn(move || {
        marker.write(b"before trigger").unwrap();
        marker.write_sample(42, 1_000, 900_000).unwrap();
        freezer.freeze().unwrap();
        // While tracing is off the kernel refuses marker writes (EBADF).
        assert!(marker.write(b"after trigger").is_err());
    })
    .join()
    .unwrap();
    assert!(capture.is_frozen());
    std::thread::sleep(Duration::from_millis(50));
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("trigger.dat");
    let report = capture.snapshot_to(&snap).unwrap();
    assert!(
        !capture.is_frozen(),
        "tracing not resumed after the snapshot"
    );
    let (events, _) = trace_cmd_report(&snap);
    assert_eq!(events.len() as u64, report.total_events);
    let trigger = events
        .iter()
        .position(|l| l.contains("latlab: cycle=42"))
        .expect("the trigger is in the snapshot");
    let (trigger_cpu, trigger_s) = cpu_and_seconds(&events[trigger]);
    // On the trigger's CPU nothing follows it. Another CPU may log an event
    // in the microseconds between the marker and the freeze, but not the
    // main thread's 50 ms sleep above, had tracing gone on.
    for line in &events[trigger + 1..] {
        let (cpu, seconds) = cpu_and_seconds(line);
        assert_ne!(
            cpu, trigger_cpu,
            "event after the trigger on its CPU: {line}"
        );
        assert!(
            seconds - trigger_s < 0.02,
            "event {:.3} ms after the trigger: {line}",
            (seconds - trigger_s) * 1e3
        );
    }
    assert!(!events.iter().any(|l| l.contains("after trigger")));
    let freezer = capture.freezer();
    capture.stop(&dir.path().join("end.dat")).unwrap();
    freezer.freeze().unwrap(); // harmless after stop
    before.assert_clean(std::process::id());
}

/// Without a size, a streaming capture sizes the buffers from the available
/// memory (never below the kernel's size) and says so in the report; a
/// flight recorder keeps the kernel's size.
#[test]
fn ring_buffer_is_sized_from_memory_and_reported() {
    let Some((_g, tracefs, before)) = capturing(false) else {
        return;
    };
    let capture = Capture::start(&opts(&["sched"])).unwrap();
    let dir = tracefs.path("instances").join(capture.instance_name());
    let set: u64 = std::fs::read_to_string(dir.join("buffer_size_kb"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let ring = capture.ring_buffer().clone();
    assert_eq!(ring.sizing, Sizing::Auto);
    assert_eq!(set, ring.kb_per_cpu, "instance buffer_size_kb");
    let mem = latlab_tracefs::ringbuf::mem_available_kb().unwrap();
    assert!(ring.kb_per_cpu >= 1408, "{ring:?}");
    assert!(
        ring.max_kb_per_cpu * ring.cpus as u64 <= (mem / 16).max(1408 * ring.cpus as u64) + 1024,
        "growth bound over the memory budget: {ring:?}, MemAvailable {mem} KiB"
    );
    let out = tempfile::tempdir().unwrap();
    let report = capture.stop(&out.path().join("t.dat")).unwrap();
    assert_eq!(report.ring_buffer.kb_per_cpu, set);
    assert_eq!(
        report.ring_buffer.total_kb,
        report.cpus.iter().map(|c| c.buffer_kb).sum::<u64>()
    );
    assert!(
        report.ring_buffer.summary.contains(" per CPU x ")
            && report.ring_buffer.summary.contains("auto"),
        "{}",
        report.ring_buffer.summary
    );
    let mut o = opts(&["sched"]);
    o.flight_recorder = true;
    let fr = Capture::start(&o).unwrap();
    assert_eq!(fr.ring_buffer().sizing, Sizing::Kernel);
    drop(fr);
    before.assert_clean(std::process::id());
}

/// A CPU whose buffer a drain finds more than half full gets a buffer twice
/// as large (up to the bound), and the burst that filled it is kept.
#[test]
fn a_filling_buffer_grows_and_keeps_the_burst() {
    let Some((_g, _, before)) = capturing(false) else {
        return;
    };
    let mut o = opts(&["sched"]);
    o.buffer_size_kb = Some(64);
    o.grow_to_kb = Some(1024);
    let capture = Capture::start(&o).unwrap();
    let marker = capture.marker();
    // Bursts of about 50 KiB of marker records (450 of 100 bytes plus
    // headers), 20 ms apart: more than half the 64 KiB buffer each time.
    // A steady stream would not do: a reader that keeps up (every 10 ms
    // while busy) never finds the buffer half full, so it rightly does not
    // grow it (the CI saw that once). A drain that comes between two bursts
    // finds a whole one; one that cuts a burst in two finds halves, and
    // the next bursts come with other timing.
    // While the buffer is this small the kernel may refuse a marker (EBADF:
    // no room while the reader holds pages); those count as not written.
    let line = [b'x'; 100];
    let t0 = std::time::Instant::now();
    let mut written = 0u64;
    let mut bursts = 0u64;
    while t0.elapsed() < Duration::from_millis(600) {
        for _ in 0..450 {
            if marker.write(&line).is_ok() {
                written += 1;
            }
        }
        bursts += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("{written} markers in {bursts} bursts");
    assert!(written > 5000, "only {written} markers written");
    let out = tempfile::tempdir().unwrap();
    let report = capture.stop(&out.path().join("t.dat")).unwrap();
    let grown: Vec<_> = report.cpus.iter().filter(|c| c.buffer_kb > 64).collect();
    assert!(!grown.is_empty(), "no buffer grew: {:?}", report.cpus);
    // The kernel rounds to whole sub-buffers (a few KiB over the size asked).
    assert!(
        report.cpus.iter().all(|c| c.buffer_kb <= 1024 + 64),
        "{:?}",
        report.cpus
    );
    assert!(
        report.ring_buffer.summary.contains("grew to"),
        "{}",
        report.ring_buffer.summary
    );
    // Every marker written was recorded or counted as lost (overrun before
    // the buffer grew).
    assert!(
        report.total_events + report.lost_events >= written,
        "{written} markers, {report:?}"
    );
    before.assert_clean(std::process::id());
}
