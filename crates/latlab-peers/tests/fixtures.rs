//! The decoders on files the real tools wrote (`tests/fixtures`, see its
//! README), checked against what the files themselves say and against each
//! other (one cyclictest run written as text and as JSON), and on damaged
//! copies of them.

use std::path::Path;

use latlab_peers::{
    decode, detect, Column, DecodeError, PeerDocument, PeerFormat, Quantity, Rounding,
};

fn bytes(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(name: &str) -> PeerDocument {
    let b = bytes(name);
    decode(&b).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The value at percentile `p` by nearest rank over every sample, the
/// overflows included as `u64::MAX`: computed the plain way, sample by
/// sample, to check the decoder's bucket walk.
fn naive_percentile(column: &Column, p: f64) -> Option<u64> {
    let mut samples: Vec<u64> = column
        .histogram
        .iter()
        .flatten()
        .flat_map(|b| std::iter::repeat_n(b.low, b.count as usize))
        .collect();
    samples.extend(std::iter::repeat_n(
        u64::MAX,
        column.overflows.unwrap_or(0) as usize,
    ));
    let n = samples.len();
    let rank = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n);
    samples.sort_unstable();
    Some(samples[rank - 1]).filter(|&v| v != u64::MAX)
}

fn check_percentiles(column: &Column) {
    let l = &column.latency;
    for (p, value) in [(50.0, l.p50), (90.0, l.p90), (99.0, l.p99), (99.9, l.p99_9)] {
        assert_eq!(value, naive_percentile(column, p), "{} p{p}", column.name);
    }
}

/// The rows of a cyclictest histogram text, per column, as written.
fn text_rows(text: &str) -> Vec<Vec<u64>> {
    let mut columns: Vec<Vec<u64>> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('0')) {
        for (i, field) in line.split([' ', '\t']).skip(1).enumerate() {
            if columns.len() <= i {
                columns.push(Vec::new());
            }
            columns[i].push(field.parse().unwrap());
        }
    }
    columns
}

/// A column's histogram as per-microsecond counts, `rows` long.
fn per_us(column: &Column, rows: usize) -> Vec<u64> {
    let mut out = vec![0; rows];
    for b in column.histogram.as_ref().unwrap() {
        out[(b.low / 1000) as usize] += b.count;
    }
    out
}

#[test]
fn cyclictest_text_reads_with_its_own_figures() {
    let doc = read("cyclictest-q-h400.txt");
    assert_eq!(doc.source.tool, "cyclictest");
    assert_eq!(doc.source.format, PeerFormat::CyclictestHistogram);
    assert_eq!(doc.measurements.len(), 1);
    let m = &doc.measurements[0];
    assert_eq!(
        (m.quantity, m.bucket_ns, m.rounding),
        (Quantity::WakeUpLatency, Some(1000), Rounding::Down)
    );
    let c = &m.columns[0];
    let text = String::from_utf8(bytes("cyclictest-q-h400.txt")).unwrap();
    // Every row as written.
    assert_eq!(per_us(c, 400), text_rows(&text)[0]);
    // The summary lines: Total 4981, overflows 12, min 14, avg 33, max 4764.
    assert_eq!(c.overflows, Some(12));
    assert_eq!(c.latency.count, Some(4981 + 12));
    assert_eq!(
        (c.latency.min, c.latency.max),
        (Some(14_000), Some(4_764_000))
    );
    assert_eq!(c.latency.mean, Some(33_000.0));
    assert_eq!(c.overflow_from_ns, Some(400_000));
    assert_eq!(c.overflow_cycles.len(), 12);
    assert_eq!(c.overflow_cycles[0], 1016);
    check_percentiles(c);
    assert!(c.latency.p99.is_some());
    assert_eq!(c.latency.p99_9, None, "rank 4989 of 4993 is an overflow");
    // What the text does not say stays unknown.
    assert_eq!(c.cpu, None);
    assert!(doc.envelope.system.is_none() && doc.envelope.started_at.is_none());
    assert!(doc.unknown.iter().any(|u| u.contains("CPU")));
    assert!(doc.unknown.iter().any(|u| u.contains("machine")));
    assert_eq!(doc.overall.as_ref().unwrap().latency.max, Some(4_764_000));
    assert!(doc.notes[0].contains("cpu_dma_latency set to 0us"));
}

#[test]
fn one_cyclictest_run_reads_the_same_as_text_and_as_json() {
    let text = read("cyclictest-t2-h400.txt");
    let json = read("cyclictest-t2-h400.json");
    assert_eq!(json.source.format, PeerFormat::RtTestsJson);
    assert_eq!(json.source.version.as_deref(), Some("2.40"));
    assert_eq!(
        json.source.command_line.as_deref(),
        Some("cyclictest -m -p95 -i1000 -t -a -h400 -D5 -q --json=ct-t.json")
    );
    let (t, j) = (&text.measurements[0], &json.measurements[0]);
    assert_eq!(t.columns.len(), 2);
    assert_eq!(j.columns.len(), 2);
    for (tc, jc) in t.columns.iter().zip(&j.columns) {
        assert_eq!(tc.histogram, jc.histogram, "{}", tc.name);
        assert_eq!(tc.overflows, jc.overflows, "{}", tc.name);
        assert_eq!(
            tc.latency.count, jc.latency.count,
            "cycles = Total + overflows"
        );
        assert_eq!(tc.latency.min, jc.latency.min);
        assert_eq!(tc.latency.max, jc.latency.max);
        assert_eq!(tc.latency.p99, jc.latency.p99);
        // The text's mean is truncated to whole µs, the JSON's has two decimals.
        let (tm, jm) = (tc.latency.mean.unwrap(), jc.latency.mean.unwrap());
        assert!(jm >= tm && jm < tm + 1000.0, "{tm} {jm}");
        check_percentiles(jc);
    }
    // Only the JSON knows the CPUs, the machine, the times and the settings.
    assert_eq!(
        j.columns.iter().map(|c| c.cpu).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    let system = json.envelope.system.as_ref().unwrap();
    assert_eq!(system.hostname.as_deref(), Some("vm"));
    assert_eq!(system.preemption_model.as_deref(), Some("dynamic"));
    assert_eq!(
        json.envelope.started_at.as_deref(),
        Some("2026-11-27T16:28:45Z")
    );
    assert_eq!(json.duration_s, Some(5.0));
    assert_eq!(json.settings.interval_ns, Some(1_000_000));
    assert_eq!(json.settings.priority, Some(95));
    assert_eq!(json.settings.policy.as_deref(), Some("fifo"));
    assert_eq!(j.columns[0].overflow_from_ns, Some(400_000), "-h400");
}

#[test]
fn status_lines_and_all_threads_columns() {
    let doc = read("cyclictest-status-h100.txt");
    assert_eq!(doc.settings.priority, Some(95));
    assert_eq!(doc.settings.interval_ns, Some(1_000_000));
    assert_eq!(doc.settings.policy.as_deref(), Some("fifo"));
    assert!(doc.notes.is_empty() || !doc.notes.iter().any(|n| n.starts_with("T:")));
    let c = &doc.measurements[0].columns[0];
    assert_eq!(c.priority, Some(95));
    check_percentiles(c);

    let doc = read("cyclictest-t2-H100.txt");
    let m = &doc.measurements[0];
    assert_eq!(m.columns.len(), 2, "-H's sum column is not a thread");
    let text = String::from_utf8(bytes("cyclictest-t2-H100.txt")).unwrap();
    let rows = text_rows(&text);
    assert_eq!(per_us(&m.columns[0], 100), rows[0]);
    assert_eq!(per_us(&m.columns[1], 100), rows[1]);
    assert_eq!(m.columns[0].overflows, Some(17));
    assert_eq!(m.columns[1].latency.max, Some(1_997_000));
    let pooled = m.pooled();
    assert_eq!(pooled.overflows, Some(44), "the -H column's overflows");
    assert_eq!(pooled.latency.count, Some(3878 + 44));
    check_percentiles(&pooled);
}

#[test]
fn nanosecond_runs_are_read_in_nanoseconds_from_json_and_flagged_in_text() {
    let json = read("cyclictest-N.json");
    let c = &json.measurements[0].columns[0];
    assert_eq!(c.latency.min, Some(14_213), "resolution_in_ns: 1");
    assert_eq!(c.latency.max, Some(1_019_507));
    assert_eq!(
        c.latency.p50, None,
        "every sample past the 400 ns histogram"
    );
    let text = read("cyclictest-N.txt");
    assert!(
        text.notes.iter().any(|n| n.contains("-N")),
        "{:?}",
        text.notes
    );
}

#[test]
fn a_json_without_histogram_keeps_its_figures_and_no_percentile() {
    let doc = read("cyclictest-nohist.json");
    let c = &doc.measurements[0].columns[0];
    assert_eq!(c.histogram, None);
    assert_eq!(c.latency.count, Some(1994));
    assert_eq!(
        (c.latency.min, c.latency.max),
        (Some(13_000), Some(2_520_000))
    );
    assert_eq!(c.latency.mean, Some(30_780.0));
    assert_eq!((c.latency.p50, c.latency.p99), (None, None));
    assert!(doc.unknown.iter().any(|u| u.contains("without -h")));
    assert_eq!(doc.measurements[0].bucket_ns, None);
}

#[test]
fn oslat_reads_as_busy_loop_latency_with_its_overflow_bucket() {
    let doc = read("oslat.json");
    assert_eq!(doc.source.tool, "oslat");
    let m = &doc.measurements[0];
    assert_eq!(
        (m.quantity, m.rounding),
        (Quantity::BusyLoopLatency, Rounding::Up)
    );
    let c = &m.columns[0];
    assert_eq!(c.cpu, Some(1));
    assert_eq!(c.overflows, Some(1173), "bucket 32 holds the overflows");
    assert_eq!(c.overflow_from_ns, Some(31_000));
    let in_buckets: u64 = c.histogram.as_ref().unwrap().iter().map(|b| b.count).sum();
    assert_eq!(c.latency.count, Some(in_buckets + 1173));
    assert_eq!(c.latency.max, Some(73_597_000));
    assert_eq!(doc.duration_s, Some(4.997));
    assert!(doc.notes.iter().any(|n| n.contains("2597 MHz")));
    // 75 million of the 75.1 million gaps are in bucket 1 (up to 1 µs).
    assert_eq!((c.latency.p50, c.latency.p99), (Some(1000), Some(1000)));
}

#[test]
fn the_other_rt_tests_read_what_they_have_and_keep_the_rest() {
    let doc = read("signaltest.json");
    let m = &doc.measurements[0];
    assert_eq!(m.quantity, Quantity::SignalLatency);
    assert_eq!(m.columns[1].latency.max, Some(13_697_000));
    assert_eq!(m.columns[0].latency.count, Some(2000));

    let doc = read("pmqtest.json");
    let m = &doc.measurements[0];
    assert_eq!(m.quantity, Quantity::IpcLatency);
    let c = &m.columns[0];
    assert_eq!((c.cpu, c.priority), (Some(1), Some(90)));
    assert_eq!(c.interval_ns, Some(1_000_000));
    assert_eq!(c.latency.max, Some(1_565_000));
    // The sender's CPU and priority and pmqtest's timeouts stay, as written.
    let kept = &doc.extra["thread"]["0"];
    assert_eq!(kept["receiver"]["timeoutcount"], 0);
    assert_eq!(kept["sender"]["priority"], 90);

    let doc = read("ptsematest.json");
    assert_eq!(
        doc.measurements[0].columns[0].latency.min,
        Some(0),
        "a real 0 stays 0"
    );

    let doc = read("cyclicdeadline.json");
    let m = &doc.measurements[0];
    assert_eq!(m.quantity, Quantity::WakeUpLatency);
    assert_eq!(doc.settings.policy.as_deref(), Some("deadline"));
    assert_eq!(m.columns[0].cpu, None, "cyclicdeadline writes no cpu");
    assert!(doc.unknown.iter().any(|u| u.contains("CPU")));
}

#[test]
fn rtla_timerlat_and_osnoise_hist_text() {
    let doc = read("rtla-timerlat-hist.txt");
    assert_eq!(doc.source.tool, "rtla timerlat");
    assert_eq!(doc.source.format, PeerFormat::RtlaHist);
    let quantities: Vec<Quantity> = doc.measurements.iter().map(|m| m.quantity).collect();
    assert_eq!(
        quantities,
        [
            Quantity::TimerIrqLatency,
            Quantity::TimerThreadLatency,
            Quantity::TimerUserLatency
        ]
    );
    assert_eq!(doc.duration_s, Some(30.0));
    let thr = doc.measurement(Quantity::TimerThreadLatency).unwrap();
    assert_eq!(
        thr.columns.iter().map(|c| c.cpu).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    let c = &thr.columns[0];
    assert_eq!(c.name, "Thr-000");
    assert_eq!((c.overflows, c.latency.count), (Some(1), Some(30_001)));
    assert_eq!(
        (c.latency.min, c.latency.max, c.latency.mean),
        (Some(0), Some(3_248_000), Some(8000.0))
    );
    check_percentiles(c);
    // count = rows + over everywhere: no mismatch noted; the missed events are.
    assert!(
        !doc.notes.iter().any(|n| n.contains("add up")),
        "{:?}",
        doc.notes
    );
    assert!(doc.notes.iter().any(|n| n.contains("events missed")));
    assert_eq!(
        doc.overall.as_ref().unwrap().quantity,
        Quantity::TimerIrqLatency
    );
    assert_eq!(thr.pooled().latency.max, Some(3_248_000));

    let doc = read("rtla-osnoise-hist.txt");
    let m = &doc.measurements[0];
    assert_eq!((m.quantity, m.bucket_ns), (Quantity::OsNoise, Some(2000)));
    assert_eq!(m.columns[1].overflows, Some(1));
    check_percentiles(&m.columns[1]);
}

#[test]
fn formats_are_detected_from_content() {
    assert_eq!(
        detect(&bytes("cyclictest-q-h400.txt")),
        Some(PeerFormat::CyclictestHistogram)
    );
    assert_eq!(
        detect(&bytes("cyclictest-status-h100.txt")),
        Some(PeerFormat::CyclictestHistogram)
    );
    assert_eq!(detect(&bytes("oslat.json")), Some(PeerFormat::RtTestsJson));
    assert_eq!(
        detect(&bytes("rtla-osnoise-hist.txt")),
        Some(PeerFormat::RtlaHist)
    );
    assert_eq!(detect(b"{\"schema\": \"latlab.run\"}"), None);
    assert_eq!(detect(b"hello"), None);
    // The same file has the same id; another file another.
    assert_eq!(
        read("oslat.json").envelope.id,
        read("oslat.json").envelope.id
    );
    assert_ne!(
        read("oslat.json").envelope.id,
        read("signaltest.json").envelope.id
    );
}

/// `text` cut after `lines` lines.
fn cut(text: &str, lines: usize) -> String {
    text.split_inclusive('\n').take(lines).collect()
}

#[test]
fn damaged_and_cut_files_are_errors_that_say_where() {
    let text = String::from_utf8(bytes("cyclictest-t2-h400.txt")).unwrap();
    // Cut in the rows: no summary.
    let short = cut(&text, 100);
    match decode(short.as_bytes()) {
        Err(DecodeError::Truncated { at, missing, .. }) => {
            assert_eq!(at.byte, short.len());
            assert!(missing.contains("# Total:"), "{missing}");
        }
        other => panic!("{other:?}"),
    }
    // A damaged row: the error points at its line and first byte.
    let line = 52;
    let start: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let mut damaged = text.clone();
    damaged.replace_range(start + 7..start + 8, "x");
    let e = decode(damaged.as_bytes()).unwrap_err();
    let DecodeError::Malformed { at, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((at.line, at.byte), (line, start));
    assert!(
        e.to_string()
            .contains(&format!("line {line}, byte {start}")),
        "{e}"
    );
    // A row missing: the numbering says so.
    let mut gap: Vec<&str> = text.split_inclusive('\n').collect();
    gap.remove(60);
    let e = decode(gap.concat().as_bytes()).unwrap_err();
    assert!(e.to_string().contains("rows are numbered"), "{e}");
    // A count changed: the rows no longer add up to the Total line.
    let mut wrong = text.clone();
    let at = wrong.find("\n000030 ").unwrap() + 8;
    wrong.replace_range(at..at + 6, "999999");
    let e = decode(wrong.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("add up to"), "{e}");
    // -H's column must be the threads' sum.
    let h = String::from_utf8(bytes("cyclictest-t2-H100.txt")).unwrap();
    let at = h.find("\n000030 ").unwrap() + 1;
    let row_end = at + h[at..].find('\n').unwrap();
    let mut bad = h.clone();
    bad.replace_range(row_end - 6..row_end, "000001");
    assert!(decode(bad.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("-H"));

    // JSON cut short, and damaged.
    let json = bytes("cyclictest-t2-h400.json");
    let e = decode(&json[..json.len() / 2]).unwrap_err();
    let DecodeError::Truncated { at, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(at.byte, json.len() / 2);
    let mut bad = json.clone();
    let at = bad.windows(6).position(|w| w == b"\"min\":").unwrap() + 7;
    bad[at] = b'@';
    let e = decode(&bad).unwrap_err();
    let DecodeError::Malformed { at: pos, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(pos.byte, at);

    // rtla without its index column or its over: line.
    let rtla = String::from_utf8(bytes("rtla-timerlat-hist.txt")).unwrap();
    let no_index = rtla.replacen("Index", "", 1);
    assert!(decode(no_index.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("--no-index"));
    let before_over = cut(
        &rtla,
        rtla.lines().position(|l| l.starts_with("over:")).unwrap(),
    );
    assert!(matches!(
        decode(before_over.as_bytes()),
        Err(DecodeError::Truncated { missing, .. }) if missing.contains("over:")
    ));

    // Neither format: the error names what latlab reads.
    let e = decode(b"just some notes\n").unwrap_err();
    assert!(matches!(e, DecodeError::Unknown { .. }));
    assert!(
        e.to_string().contains("cyclictest's -h histogram text"),
        "{e}"
    );
    assert!(e.to_string().contains("\"just some notes\""), "{e}");
    let e = decode(b"{\"a\": 1}").unwrap_err();
    assert!(matches!(e, DecodeError::Unknown { .. }), "{e}");
    let e = decode(&[0x1f, 0x8b, 0x08, 0xff]).unwrap_err();
    assert!(e.to_string().contains("compressed"), "{e}");
}
