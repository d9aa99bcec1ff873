//! rt-tests' `--json` files (rt-tests 2.x `rt_write_json`): a common
//! header, then each tool's own per-thread fields.
//!
//! ```text
//! {"file_version": 1, "cmdline:": "cyclictest -m -p95 ...", "rt_test_version:": "2.40",
//!  "start_time": "Fri, 27 Nov 2026 16:28:45 +0000", "end_time": "...", "return_code": 0,
//!  "sysinfo": {"sysname", "nodename", "release", "version", "machine", "realtime"},
//!  "num_threads": 2, "resolution_in_ns": 0,             (cyclictest, cyclicdeadline)
//!  "thread": {"0": {...}, "1": {...}}}
//! ```
//!
//! Per thread: cyclictest `histogram` (`{"us": count}`, only with `-h`),
//! `cycles`, `min`, `max`, `avg`, `cpu`, `node`; cyclicdeadline and
//! signaltest the same without histogram; oslat `cpu`, `freq`, `min`, `avg`,
//! `max`, `duration`, `histogram` (`{"1".."32": count}`, rounded up, the
//! last bucket holding the overflows); pmqtest, ptsematest, sigwaittest and
//! svsematest a `sender` and a `receiver` with `min`, `avg`, `max`. Fields
//! latlab does not decode (another tool's, a newer version's) are kept in
//! the document's `extra`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::document::{
    Column, Measurement, PeerDocument, PeerFormat, PeerSummary, PeerSystem, Quantity, Rounding,
    Source,
};
use crate::error::{DecodeError, Position};
use crate::{cmdline, stats};

const FORMAT: &str = "rt-tests JSON";

/// True when `value` is an rt-tests JSON document.
pub fn detect(value: &Value) -> bool {
    value.get("rt_test_version:").is_some()
        || (value.get("cmdline:").is_some() && value.get("thread").is_some())
}

/// The header keys every rt-tests file has, decoded into the document.
const HEADER: [&str; 9] = [
    "file_version",
    "cmdline:",
    "rt_test_version:",
    "start_time",
    "end_time",
    "return_code",
    "sysinfo",
    "num_threads",
    "thread",
];

fn malformed(bytes: &[u8], key: &str, message: impl Into<String>) -> DecodeError {
    // The key's first occurrence: a place to look, in a file that parsed.
    let needle = format!("\"{key}\"");
    let byte = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or(0);
    let line = bytes[..byte].iter().filter(|&&b| b == b'\n').count() + 1;
    DecodeError::Malformed {
        format: FORMAT,
        at: Position { line, byte },
        message: message.into(),
    }
}

/// Decodes an rt-tests JSON document (`bytes` is the file, for positions).
pub fn decode(bytes: &[u8], value: &Value) -> Result<PeerDocument, DecodeError> {
    let object = value
        .as_object()
        .ok_or_else(|| malformed(bytes, "", "the document is not a JSON object"))?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
    let command_line = text("cmdline:");
    let version_field = text("rt_test_version:");
    let program = command_line
        .as_deref()
        .and_then(|c| c.split_whitespace().next())
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string());
    // latlab writes "latlab X.Y.Z" as its version.
    let (tool, version) = match version_field
        .as_deref()
        .and_then(|v| v.strip_prefix("latlab "))
    {
        Some(latlab) => ("latlab".to_string(), Some(latlab.to_string())),
        None => (
            program.clone().unwrap_or_else(|| "rt-tests".into()),
            version_field,
        ),
    };
    let parsed = command_line
        .as_deref()
        .map(|c| cmdline::parse(&tool, c))
        .unwrap_or_default();
    let nanoseconds = object
        .get("resolution_in_ns")
        .and_then(Value::as_u64)
        .is_some_and(|v| v != 0)
        || parsed.nanoseconds;
    let unit_ns: u64 = if nanoseconds { 1 } else { 1000 };
    let quantity = match tool.as_str() {
        "cyclictest" | "cyclicdeadline" | "latlab" => Quantity::WakeUpLatency,
        "oslat" => Quantity::BusyLoopLatency,
        "signaltest" => Quantity::SignalLatency,
        "pmqtest" | "ptsematest" | "sigwaittest" | "svsematest" => Quantity::IpcLatency,
        _ => Quantity::Other,
    };

    let threads = match object.get("thread") {
        Some(Value::Object(threads)) => threads.clone(),
        Some(_) => return Err(malformed(bytes, "thread", "`thread` is not an object")),
        None => Map::new(),
    };
    let mut numbered: Vec<(u64, Map<String, Value>)> = Vec::new();
    for (key, thread) in threads {
        let index = key
            .parse::<u64>()
            .map_err(|_| malformed(bytes, &key, format!("thread key {key:?} is not a number")))?;
        let Value::Object(thread) = thread else {
            return Err(malformed(
                bytes,
                &key,
                format!("thread {key} is not an object"),
            ));
        };
        numbered.push((index, thread));
    }
    numbered.sort_by_key(|(i, _)| *i);

    let mut columns = Vec::new();
    let mut extra_threads = Map::new();
    let mut notes = Vec::new();
    let mut durations = Vec::new();
    for (index, mut thread) in numbered {
        let column = if thread.contains_key("receiver") {
            ipc_column(bytes, index, &mut thread, unit_ns)?
        } else if thread.contains_key("max") {
            latency_column(
                bytes,
                &tool,
                index,
                &mut thread,
                unit_ns,
                parsed.histogram_rows,
            )?
        } else {
            None
        };
        if let Some(d) = thread.remove("duration").and_then(|d| d.as_f64()) {
            durations.push(d);
        }
        if let Some((column, note)) = column {
            notes.extend(note);
            columns.push(column);
        }
        if !thread.is_empty() {
            extra_threads.insert(index.to_string(), Value::Object(thread));
        }
    }

    let mut extra: BTreeMap<String, Value> = object
        .iter()
        .filter(|(k, _)| !HEADER.contains(&k.as_str()) && k.as_str() != "resolution_in_ns")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !extra_threads.is_empty() {
        extra.insert("thread".into(), Value::Object(extra_threads));
    }

    let started = text("start_time").as_deref().and_then(rfc2822_unix);
    let ended = text("end_time").as_deref().and_then(rfc2822_unix);
    let duration_s = if durations.is_empty() {
        match (started, ended) {
            (Some(s), Some(e)) if e >= s => Some((e - s) as f64),
            _ => None,
        }
    } else {
        Some(durations.iter().copied().fold(0.0, f64::max))
    };
    let system = object.get("sysinfo").map(system);

    let mut unknown = Vec::new();
    if columns.is_empty() {
        unknown.push(format!(
            "latency figures: {tool}'s file has none latlab reads (its per-thread fields are kept as they are)"
        ));
    }
    if columns.iter().any(|c| c.histogram.is_none()) {
        unknown.push(match tool.as_str() {
            "cyclictest" => {
                "the histogram and so every percentile (cyclictest ran without -h)".into()
            }
            _ => "a histogram and so every percentile".into(),
        });
    }
    if columns.iter().any(|c| c.cpu.is_none()) {
        unknown.push("the CPU some threads ran on".into());
    }
    if quantity == Quantity::WakeUpLatency {
        unknown.push("missed periods".into());
    }
    unknown.push("the background load".into());
    let bucket_ns = columns
        .iter()
        .any(|c| c.histogram.is_some())
        .then_some(unit_ns);
    let measurements = if columns.is_empty() {
        Vec::new()
    } else {
        vec![Measurement {
            quantity,
            bucket_ns,
            rounding: if tool == "oslat" {
                Rounding::Up
            } else {
                Rounding::Down
            },
            columns,
        }]
    };
    Ok(crate::finish(PeerDocument {
        source: Source {
            tool,
            version,
            format: PeerFormat::RtTestsJson,
            command_line,
            return_code: object.get("return_code").and_then(Value::as_i64),
        },
        envelope: latlab_envelope::Envelope::read_from_file(
            started.map(|s| latlab_rt::clock::format_utc(s as f64)),
            system,
        ),
        ended_at: ended.map(|s| latlab_rt::clock::format_utc(s as f64)),
        duration_s,
        settings: parsed.settings,
        measurements,
        unknown,
        notes,
        extra,
        ..crate::empty()
    }))
}

/// Rows latlab's own rt-tests JSON covers (`latlab_report::cyclictest::MAX_ROWS`).
const LATLAB_ROWS: u64 = 100_000;

/// A number field of a thread, removed from it.
fn take_u64(thread: &mut Map<String, Value>, key: &str) -> Option<u64> {
    thread.remove(key).and_then(|v| v.as_u64())
}

fn take_f64(thread: &mut Map<String, Value>, key: &str) -> Option<f64> {
    thread.remove(key).and_then(|v| v.as_f64())
}

/// A CPU field: rt-tests writes -1 for a thread not pinned.
fn take_cpu(thread: &mut Map<String, Value>) -> Option<usize> {
    thread
        .remove("cpu")
        .and_then(|v| v.as_i64())
        .and_then(|c| usize::try_from(c).ok())
}

type Decoded = Option<(Column, Option<String>)>;

/// A cyclictest-like thread: `histogram`, `cycles`, `min`, `max`, `avg`.
fn latency_column(
    bytes: &[u8],
    tool: &str,
    index: u64,
    thread: &mut Map<String, Value>,
    unit_ns: u64,
    histogram_rows: Option<u64>,
) -> Result<Decoded, DecodeError> {
    let oslat = tool == "oslat";
    let mut pairs = Vec::new();
    let histogram = match thread.remove("histogram") {
        Some(Value::Object(h)) if !h.is_empty() => {
            for (key, count) in &h {
                let label: u64 = key.parse().map_err(|_| {
                    malformed(
                        bytes,
                        key,
                        format!("thread {index}'s histogram key {key:?} is not a number"),
                    )
                })?;
                let count = count.as_u64().ok_or_else(|| {
                    malformed(
                        bytes,
                        key,
                        format!("thread {index}'s histogram count for {key} is not a count"),
                    )
                })?;
                pairs.push((label.saturating_mul(unit_ns), count));
            }
            Some(stats::buckets(pairs, unit_ns))
        }
        Some(Value::Object(_)) | None => None,
        Some(_) => {
            return Err(malformed(
                bytes,
                "histogram",
                format!("thread {index}'s histogram is not an object"),
            ))
        }
    };
    let cycles = take_u64(thread, "cycles");
    let written_overflow = take_u64(thread, "overflow");
    let (histogram, overflows, overflow_from_ns) = if oslat {
        // oslat's last bucket (its -b, 32 by default) holds the loop gaps
        // past the others: they are overflows, just over the bucket
        // before it.
        let last = histogram_rows.unwrap_or(32);
        let mut buckets = histogram;
        let over = buckets.as_mut().and_then(|h| {
            let i = h
                .iter()
                .position(|b| b.low == last.saturating_mul(unit_ns))?;
            Some(h.remove(i).count)
        });
        let from = buckets
            .is_some()
            .then(|| last.saturating_sub(1).saturating_mul(unit_ns));
        (buckets, over.or(from.map(|_| 0)), from)
    } else {
        let in_histogram = histogram
            .as_ref()
            .map(|h| stats::total(h.iter().map(|b| b.count)));
        let overflows = match (cycles, in_histogram) {
            (Some(c), Some(h)) if c >= h => Some(c - h),
            (Some(_), Some(_)) => {
                return Err(malformed(
                    bytes,
                    "cycles",
                    format!("thread {index} has fewer cycles than histogram samples"),
                ))
            }
            _ => written_overflow,
        };
        let from = match (tool, histogram_rows) {
            ("latlab", _) => Some(LATLAB_ROWS.saturating_mul(unit_ns)),
            (_, Some(rows)) => Some(rows.saturating_mul(unit_ns)),
            _ => None,
        };
        (histogram, overflows, overflows.and(from))
    };
    let count = cycles.or_else(|| {
        histogram
            .as_ref()
            .map(|h| stats::total(h.iter().map(|b| b.count)).saturating_add(overflows.unwrap_or(0)))
    });
    let min = take_u64(thread, "min").map(|v| v.saturating_mul(unit_ns));
    let max = take_u64(thread, "max").map(|v| v.saturating_mul(unit_ns));
    let mean = take_f64(thread, "avg").map(|v| v * unit_ns as f64);
    let cpu = take_cpu(thread);
    thread.remove("node");
    let freq = take_u64(thread, "freq");
    let summary = stats::extremes(count, min, mean, max);
    let note = freq.map(|mhz| format!("thread {index}: counter frequency {mhz} MHz"));
    Ok(Some((
        Column {
            name: format!("thread {index}"),
            cpu,
            priority: None,
            interval_ns: None,
            latency: stats::with_percentiles(summary, histogram.as_deref(), overflows.unwrap_or(0)),
            histogram,
            overflows,
            overflow_from_ns,
            overflow_cycles: Vec::new(),
        },
        note,
    )))
}

/// A sender/receiver pair of the IPC tests: the receiver's latency.
fn ipc_column(
    bytes: &[u8],
    index: u64,
    thread: &mut Map<String, Value>,
    unit_ns: u64,
) -> Result<Decoded, DecodeError> {
    let Some(Value::Object(mut receiver)) = thread.remove("receiver") else {
        return Err(malformed(
            bytes,
            "receiver",
            format!("thread {index}'s receiver is not an object"),
        ));
    };
    let mut sender = match thread.remove("sender") {
        Some(Value::Object(s)) => s,
        _ => Map::new(),
    };
    let samples = take_u64(&mut sender, "samples");
    let interval_ns = take_u64(&mut sender, "interval").map(|us| us.saturating_mul(1000));
    let summary = PeerSummary {
        count: samples,
        min: take_u64(&mut receiver, "min").map(|v| v.saturating_mul(unit_ns)),
        mean: take_f64(&mut receiver, "avg").map(|v| v * unit_ns as f64),
        max: take_u64(&mut receiver, "max").map(|v| v.saturating_mul(unit_ns)),
        ..PeerSummary::default()
    };
    let cpu = take_cpu(&mut receiver);
    let priority = receiver
        .remove("priority")
        .and_then(|p| p.as_i64())
        .and_then(|p| i32::try_from(p).ok());
    // What is left (the sender's CPU and priority, pmqtest's timeouts)
    // stays with the thread.
    if !receiver.is_empty() {
        thread.insert("receiver".into(), Value::Object(receiver));
    }
    if !sender.is_empty() {
        thread.insert("sender".into(), Value::Object(sender));
    }
    Ok(Some((
        Column {
            name: format!("receiver {index}"),
            cpu,
            priority,
            interval_ns,
            latency: summary,
            histogram: None,
            overflows: None,
            overflow_from_ns: None,
            overflow_cycles: Vec::new(),
        },
        None,
    )))
}

/// rt-tests' `sysinfo` (uname) as latlab names it.
fn system(sysinfo: &Value) -> PeerSystem {
    let text = |key: &str| sysinfo.get(key).and_then(Value::as_str).map(str::to_string);
    let version = text("version");
    let realtime = sysinfo.get("realtime").and_then(Value::as_i64);
    let preemption_model = match (version.as_deref(), realtime) {
        (Some(v), _) if v.contains("PREEMPT_RT") => Some("rt"),
        (_, Some(1)) => Some("rt"),
        (Some(v), _) if v.contains("PREEMPT_DYNAMIC") => Some("dynamic"),
        (Some(v), _) if v.split_whitespace().any(|w| w == "PREEMPT") => Some("full"),
        _ => None,
    };
    PeerSystem {
        hostname: text("nodename"),
        kernel_release: text("release"),
        kernel_version: version,
        machine: text("machine"),
        preemption_model: preemption_model.map(str::to_string),
    }
}

/// Seconds since the Unix epoch of an RFC 2822 date as rt-tests writes
/// it: `Fri, 27 Nov 2026 16:28:45 +0000`.
pub fn rfc2822_unix(text: &str) -> Option<i64> {
    let text = text.split_once(',').map_or(text, |(_, rest)| rest).trim();
    let mut words = text.split_whitespace();
    let day: i64 = words.next()?.parse().ok()?;
    let month = words.next()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m.eq_ignore_ascii_case(month))? as i64
        + 1;
    let year: i64 = words.next()?.parse().ok()?;
    let mut hms = words.next()?.split(':').map(|v| v.parse::<i64>());
    let (h, m, s) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    let sane = (1..=31).contains(&day)
        && (0..=9999).contains(&year)
        && (0..24).contains(&h)
        && (0..60).contains(&m)
        && (0..61).contains(&s);
    if !sane {
        return None;
    }
    let zone = words.next().unwrap_or("+0000");
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => (1, zone),
    };
    let offset = if digits.len() == 4 {
        let hh: i64 = digits.get(..2)?.parse().ok()?;
        let mm: i64 = digits.get(2..)?.parse().ok()?;
        sign * (hh * 3600 + mm * 60)
    } else {
        0
    };
    // Days from the civil date (proleptic Gregorian).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + s - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_tests_dates_read_back() {
        assert_eq!(rfc2822_unix("Thu, 01 Jan 1970 00:00:00 +0000"), Some(0));
        assert_eq!(
            rfc2822_unix("Sun, 22 Nov 2026 01:50:13 +0000"),
            Some(1_795_312_213)
        );
        assert_eq!(
            rfc2822_unix("Sun, 22 Nov 2026 02:50:13 +0100"),
            Some(1_795_312_213)
        );
        assert_eq!(rfc2822_unix("yesterday"), None);
    }

    #[test]
    fn uname_names_the_preemption_model() {
        let s = |version: &str, realtime: i64| {
            system(&serde_json::json!({"version": version, "realtime": realtime})).preemption_model
        };
        assert_eq!(
            s("#1 SMP PREEMPT_DYNAMIC @0", 0).as_deref(),
            Some("dynamic")
        );
        assert_eq!(s("#1 SMP PREEMPT_RT Debian", 1).as_deref(), Some("rt"));
        assert_eq!(s("#1 SMP PREEMPT Tue", 0).as_deref(), Some("full"));
        assert_eq!(s("#1 SMP Tue", 0), None);
    }
}
