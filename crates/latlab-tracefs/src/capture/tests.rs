//! Tests of the capture: stats and clock parsing, scratch directories, loss
//! advice, and a capture moving between threads.

use std::fs;

use super::header::current_clock;
use super::*;

#[test]
fn stats_parse() {
    let s = parse_stats(
        "entries: 5\noverrun: 3\ncommit overrun: 1\nbytes: 100\noldest event ts: 1.5\n\
             now ts: 2.0\ndropped events: 2\nread events: 42\n",
    );
    assert_eq!(
        (s.read, s.overrun, s.commit_overrun, s.dropped),
        (42, 3, 1, 2)
    );
}

#[test]
fn capture_and_marker_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send::<Capture>();
    send_sync::<TraceMarker>();
    send_sync::<CaptureReport>();
}

#[test]
fn stale_temp_dirs_of_dead_processes_go_others_stay() {
    let base = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = base.path().join(format!(".latlab-capture-{dead}-0"));
    let live = base.path().join(".latlab-capture-1-0");
    let other = base.path().join(format!(".latlab-capture-{dead}-x"));
    for d in [&stale, &live, &other] {
        fs::create_dir(d).unwrap();
        fs::write(d.join("cpu0.raw"), b"x").unwrap();
    }
    let t = super::scratch::create(Some(base.path())).unwrap();
    assert!(!stale.exists());
    assert!(live.exists() && other.exists());
    let path = t.path().to_path_buf();
    assert!(path.is_dir());
    drop(t);
    assert!(!path.exists());
}

#[test]
fn loss_advice_names_the_count_the_buffer_and_a_larger_size() {
    let mut r = CaptureReport {
        total_events: 900,
        lost_events: 100,
        cpus: vec![
            CpuReport {
                cpu: 0,
                buffer_kb: 1408,
                ..Default::default()
            },
            CpuReport {
                cpu: 1,
                buffer_kb: 2048,
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    r.ring_buffer.kb_per_cpu = 1408;
    let a = r.loss_advice("--buffer-size", "--events").unwrap();
    assert!(a.starts_with("100 events were lost (10.00 %"), "{a}");
    assert!(a.contains("ring buffer of 2 MiB per CPU"), "{a}");
    // 2 MiB x 2 x 1.1, rounded up to whole MiB.
    assert!(
        a.contains("use --buffer-size 5120 (KiB per CPU, 10 MiB in all)"),
        "{a}"
    );
    r.flight_recorder = true;
    assert_eq!(r.loss_advice("--buffer-size", "--events"), None);
    r.flight_recorder = false;
    r.lost_events = 0;
    assert_eq!(r.loss_advice("--buffer-size", "--events"), None);
}

#[test]
fn clock_parse() {
    assert_eq!(current_clock("local global [mono] boot"), "mono");
    assert_eq!(current_clock("[local] global"), "local");
}
