//! Field values from the event model equal the raw field values `trace-cmd
//! report -R` prints, for every event of the recorded fixtures and the LISA
//! trace (skipped, with the reason, when trace-cmd or the traces are missing).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use latlab_ftrace::format::{FieldKind, Value};
use latlab_ftrace::text::{parse_fields, parse_ftrace_line};
use latlab_ftrace::{DatFile, EventView};

fn have_trace_cmd() -> bool {
    latlab_testkit::have_tool("trace-cmd", "trace-cmd")
}

fn parse_num(v: &str) -> Option<i128> {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x") {
        return i128::from_str_radix(h, 16).ok();
    }
    v.parse::<i128>().ok()
}

/// Compares every scalar and string field; returns how many values were compared.
fn compare(file: &Path) -> usize {
    let raw = Command::new("trace-cmd")
        .arg("report")
        .arg("-R")
        .arg(file)
        .output()
        .unwrap();
    assert!(raw.status.success());
    let raw = String::from_utf8_lossy(&raw.stdout).into_owned();
    let reference: Vec<_> = raw
        .lines()
        .filter_map(|l| parse_ftrace_line(l).ok().flatten())
        .collect();
    let f = DatFile::open(file).unwrap();
    let mut ev = f.events();
    let mut i = 0;
    let mut compared = 0;
    while let Some(e) = ev.next_event() {
        let e = e.unwrap();
        let r = &reference[i];
        i += 1;
        assert_eq!(e.name(), r.name, "event {i}");
        assert_eq!(EventView::cpu(&e), r.cpu, "event {i}");
        assert_eq!((e.ts + 500) / 1000, r.ts / 1000, "event {i}: timestamp");
        let format = e.format.unwrap();
        for (k, v) in parse_fields(&r.info) {
            let Some(field) = format.field(k) else {
                continue;
            };
            match (field.kind, e.field(k)) {
                (FieldKind::Scalar, Some(val)) => {
                    let Some(want) = parse_num(v) else { continue };
                    let got = match val {
                        Value::Int(x) => x as i128,
                        Value::UInt(x) => x as i128,
                        _ => unreachable!(),
                    };
                    // -R prints some signed fields unsigned and vice versa: compare bits.
                    let bits = field.size as u32 * 8;
                    let mask = if bits >= 64 {
                        u64::MAX as i128
                    } else {
                        (1i128 << bits) - 1
                    };
                    assert_eq!(got & mask, want & mask, "event {i} {}: field {k}", e.name());
                    compared += 1;
                }
                (FieldKind::String, Some(Value::Str(s))) => {
                    assert_eq!(String::from_utf8_lossy(s), v, "event {i}: field {k}");
                    compared += 1;
                }
                _ => {}
            }
        }
    }
    assert_eq!(i, reference.len(), "{}: event count", file.display());
    eprintln!(
        "{}: {i} events, {compared} field values equal",
        file.display()
    );
    compared
}

#[test]
fn fixture_field_values_equal_trace_cmd_raw_output() {
    if !have_trace_cmd() {
        return;
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v6.dat.gz");
    let mut data = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(src).unwrap())
        .read_to_end(&mut data)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v6.dat");
    std::fs::write(&p, data).unwrap();
    let n = compare(&p);
    assert!(n > 5000, "only {n} values compared");
    let n7 = compare(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v7-zstd.dat"));
    assert_eq!(n, n7);
}

#[test]
fn lisa_field_values_equal_trace_cmd_raw_output() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/lisa-rtapp-juno/trace.dat");
    if !p.exists() {
        latlab_testkit::skip::skip(
            "../shared/traces is absent (it only exists next to the project's own checkouts)",
        );
        return;
    }
    // Metadata: written by an older trace-cmd that puts the clock after the CPU table.
    let f = DatFile::open(&p).unwrap();
    assert_eq!(f.meta.clock(), Some("local"));
    assert_eq!(
        (f.meta.cpu_count, f.meta.long_size, f.meta.version),
        (6, 8, 6)
    );
    assert_eq!(f.meta.cpu_stats.len(), 6);
    if !have_trace_cmd() {
        return;
    }
    let n = compare(&p);
    assert!(n > 15_000, "only {n} values compared");
}

/// The comm tracker follows the names sched events carry, also for tasks
/// the saved cmdlines do not list.
#[test]
fn comm_tracker_follows_sched_events() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v7-zstd.dat");
    let mut f = DatFile::open(&src).unwrap();
    f.meta.cmdlines.clear();
    let mut t = latlab_ftrace::CommTracker::new(&f.meta);
    let mut ev = f.events();
    let mut checked = 0;
    while let Some(e) = ev.next_event() {
        let e = e.unwrap();
        t.observe(&e);
        if e.name() == "sched_switch" {
            for (pid, comm) in [("prev_pid", "prev_comm"), ("next_pid", "next_comm")] {
                let pid = e.i64(pid).unwrap() as i32;
                if pid != 0 {
                    assert_eq!(t.comm(pid), e.str(comm).unwrap());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 40);
    assert_eq!(t.comm(0), "<idle>");
    assert_eq!(t.comm(-5), "<...>");
}
