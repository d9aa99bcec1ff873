//! cyclictest's `-h`/`-H` histogram text (stdout or `--histfile`), and the
//! same text `latlab run --histogram-text` writes.
//!
//! ```text
//! # /dev/cpu_dma_latency set to 0us        (optional, and status lines)
//! # Histogram
//! 000000 000000\t000000                    (a row per µs: %06d, then %06lu per thread, tab-separated;
//! ...                                       -H adds a column: all threads)
//! # Total: 000004969 000004949             (rows' sum per column)
//! # Min Latencies: 00010 00011             (per thread)
//! # Avg Latencies: 00035 00036             (per thread, truncated)
//! # Max Latencies: 02828 04451             (per column)
//! # Histogram Overflows: 00015 00020       (per column)
//! # Histogram Overflow at cycle number:
//! # Thread 0: 00315 00327 ...              (one line per thread, `# NNNNN others` when cut)
//! ```
//!
//! A row `k` counts the samples of `k` to just under `k + 1` µs (cyclictest
//! truncates): its figures are whole microseconds, rounded down. The text
//! does not say the unit: with `-N` the rows are nanoseconds, which only
//! the `--json` file tells (its `resolution_in_ns`).

use std::collections::BTreeMap;

use crate::document::{
    Column, Measurement, PeerDocument, PeerFormat, PeerSettings, PeerSummary, Quantity, Rounding,
    Source,
};
use crate::error::{end_of, lines, DecodeError, Line, Position};
use crate::stats;

const FORMAT: &str = "cyclictest histogram";

/// True when `text` has cyclictest's `# Histogram` line.
pub fn detect(text: &str) -> bool {
    text.lines()
        .take(2000)
        .any(|l| l.trim_end() == "# Histogram" || l.trim_end().ends_with("# Histogram"))
}

/// A status line `T: 0 (10609) P:95 I:1000 C: 2990 Min: 14 Act: 25 Avg: 28 Max: 467`.
#[derive(Debug, Default, Clone, Copy)]
struct Status {
    priority: Option<i32>,
    interval_us: Option<u64>,
}

fn status(line: &str) -> Option<(usize, Status)> {
    let rest = line.strip_prefix("T:")?;
    let mut words = rest.split_whitespace();
    let thread: usize = words.next()?.parse().ok()?;
    let mut s = Status::default();
    // "P:95" or "P:" "95"; values may be padded after the colon.
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let value = |key: &str| -> Option<&str> {
        let i = tokens.iter().position(|t| t.starts_with(key))?;
        let attached = &tokens[i][key.len()..];
        if attached.is_empty() {
            tokens.get(i + 1).copied()
        } else {
            Some(attached)
        }
    };
    s.priority = value("P:").and_then(|v| v.parse().ok());
    s.interval_us = value("I:").and_then(|v| v.parse().ok());
    Some((thread, s))
}

fn malformed(at: Position, message: impl Into<String>) -> DecodeError {
    DecodeError::Malformed {
        format: FORMAT,
        at,
        message: message.into(),
    }
}

/// The numbers after a `# Label:` summary line.
fn numbers(line: &Line<'_>, label: &str) -> Result<Vec<u64>, DecodeError> {
    let rest = &line.text[label.len()..];
    rest.split_whitespace()
        .map(|w| {
            w.parse::<u64>().map_err(|_| {
                malformed(
                    line.at,
                    format!("{label} has {w:?} where a number belongs: the line is damaged"),
                )
            })
        })
        .collect()
}

/// Decodes the histogram text.
pub fn decode(text: &str) -> Result<PeerDocument, DecodeError> {
    let all = lines(text);
    let start = all
        .iter()
        .position(|l| l.text.trim_end() == "# Histogram")
        .ok_or_else(|| malformed(end_of(text), "no `# Histogram` line"))?;
    let mut notes = Vec::new();
    let mut statuses: BTreeMap<usize, Status> = BTreeMap::new();
    let mut policy = None;
    let mut dma_latency = None;
    for line in &all[..start] {
        let t = line.text.trim_end();
        if t.is_empty() {
            continue;
        }
        if let Some((thread, s)) = status(t) {
            statuses.insert(thread, s);
        } else if let Some(rest) = t.strip_prefix("policy:") {
            policy = rest.split(':').next().map(|p| p.trim().to_string());
        } else if let Some(rest) = t.strip_prefix("# /dev/cpu_dma_latency set to ") {
            dma_latency = Some(rest.to_string());
        } else {
            notes.push(t.to_string());
        }
    }

    // The rows.
    let mut rows: Vec<Vec<u64>> = Vec::new();
    let mut i = start + 1;
    while i < all.len() && !all[i].text.starts_with('#') {
        let line = &all[i];
        i += 1;
        if line.text.trim().is_empty() {
            continue;
        }
        let mut fields = line.text.split([' ', '\t']).filter(|f| !f.is_empty());
        let index = fields.next().unwrap_or("");
        let expected = rows.len();
        if index.parse::<usize>().ok() != Some(expected) {
            return Err(malformed(
                line.at,
                format!("row {index:?} where row {expected:06} belongs: rows are numbered from 0 without gaps; the file is damaged"),
            ));
        }
        let values = fields
            .map(|f| {
                f.parse::<u64>().map_err(|_| {
                    malformed(
                        line.at,
                        format!("row {expected} has {f:?} where a count belongs"),
                    )
                })
            })
            .collect::<Result<Vec<u64>, _>>()?;
        if let Some(first) = rows.first() {
            if values.len() != first.len() {
                return Err(malformed(
                    line.at,
                    format!(
                        "row {expected} has {} counts, the rows before it {}: the file is damaged or was cut",
                        values.len(),
                        first.len()
                    ),
                ));
            }
        } else if values.is_empty() {
            return Err(malformed(line.at, "row 0 has no counts"));
        }
        rows.push(values);
    }

    // The summary lines.
    let mut total = None;
    let mut mins = None;
    let mut avgs = None;
    let mut maxs = None;
    let mut overflows = None;
    let mut cycles: Vec<(Vec<u64>, Option<u64>)> = Vec::new();
    let mut in_cycles = false;
    for line in &all[i..] {
        let t = line.text.trim_end();
        let take = |label: &str| -> Option<Result<Vec<u64>, DecodeError>> {
            t.starts_with(label).then(|| numbers(line, label))
        };
        if let Some(v) = take("# Total:") {
            total = Some((v?, line.at));
        } else if let Some(v) = take("# Min Latencies:") {
            mins = Some((v?, line.at));
        } else if let Some(v) = take("# Avg Latencies:") {
            avgs = Some((v?, line.at));
        } else if let Some(v) = take("# Max Latencies:") {
            maxs = Some((v?, line.at));
        } else if let Some(v) = take("# Histogram Overflows:") {
            overflows = Some((v?, line.at));
        } else if t == "# Histogram Overflow at cycle number:" {
            in_cycles = true;
        } else if let (true, Some(rest)) = (in_cycles, t.strip_prefix("# Thread ")) {
            let (thread, list) = rest.split_once(':').unwrap_or((rest, ""));
            if thread.trim().parse::<usize>().ok() != Some(cycles.len()) {
                return Err(malformed(
                    line.at,
                    format!("`# Thread {thread}:` where thread {} belongs", cycles.len()),
                ));
            }
            let (listed, others) = match list.split_once('#') {
                Some((listed, others)) => (listed, Some(others)),
                None => (list, None),
            };
            let listed = listed
                .split_whitespace()
                .map(|w| w.parse::<u64>())
                .collect::<Result<Vec<u64>, _>>()
                .map_err(|_| malformed(line.at, "a cycle number is not a number"))?;
            let others = others
                .and_then(|o| o.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok());
            cycles.push((listed, others));
        } else if let Some((thread, s)) = status(t) {
            // Status lines after the histogram fill what none before did.
            statuses.entry(thread).or_insert(s);
        } else if !t.is_empty() {
            in_cycles = false;
            notes.push(t.to_string());
        }
    }
    let truncated = |missing: &str| DecodeError::Truncated {
        format: FORMAT,
        at: end_of(text),
        missing: missing.into(),
    };
    let (total, total_at) = total.ok_or_else(|| truncated("its `# Total:` line"))?;
    let (mins, _) = mins.ok_or_else(|| truncated("its `# Min Latencies:` line"))?;
    let (avgs, avgs_at) = avgs.ok_or_else(|| truncated("its `# Avg Latencies:` line"))?;
    let (maxs, maxs_at) = maxs.ok_or_else(|| truncated("its `# Max Latencies:` line"))?;
    let (overflows, overflows_at) =
        overflows.ok_or_else(|| truncated("its `# Histogram Overflows:` line"))?;
    let threads = mins.len();
    if cycles.len() < threads {
        return Err(truncated(&format!(
            "the overflow cycle numbers of thread {}",
            cycles.len()
        )));
    }
    let columns_in_rows = rows.first().map_or(total.len(), Vec::len);
    if threads == 0 || !(threads..=threads + 1).contains(&columns_in_rows) {
        return Err(malformed(
            total_at,
            format!(
                "{columns_in_rows} histogram columns for {threads} threads (Min Latencies): \
                 a column per thread, and one more with -H"
            ),
        ));
    }
    for (values, at, what) in [
        (&total, total_at, "# Total:"),
        (&maxs, maxs_at, "# Max Latencies:"),
        (&overflows, overflows_at, "# Histogram Overflows:"),
    ] {
        if values.len() < threads {
            return Err(malformed(
                at,
                format!("{what} has {} values for {threads} threads", values.len()),
            ));
        }
    }
    if avgs.len() != threads {
        return Err(malformed(
            avgs_at,
            format!(
                "# Avg Latencies: has {} values for {threads} threads",
                avgs.len()
            ),
        ));
    }
    let histofall = columns_in_rows == threads + 1;

    let mut columns = Vec::with_capacity(threads);
    for t in 0..threads {
        let pairs: Vec<(u64, u64)> = rows
            .iter()
            .enumerate()
            .map(|(us, row)| ((us as u64).saturating_mul(1000), row[t]))
            .collect();
        let in_rows = pairs.iter().fold(0u64, |sum, p| sum.saturating_add(p.1));
        if in_rows != total[t] {
            return Err(malformed(
                total_at,
                format!(
                    "thread {t}'s rows add up to {in_rows}, its `# Total:` says {}: the file is damaged",
                    total[t]
                ),
            ));
        }
        let buckets = stats::buckets(pairs, 1000);
        let summary = PeerSummary {
            count: Some(total[t].saturating_add(overflows[t])),
            min: Some(mins[t].saturating_mul(1000)),
            mean: Some(avgs[t] as f64 * 1000.0),
            max: Some(maxs[t].saturating_mul(1000)),
            ..PeerSummary::default()
        };
        let s = statuses.get(&t).copied().unwrap_or_default();
        columns.push(Column {
            name: format!("thread {t}"),
            cpu: None,
            priority: s.priority,
            interval_ns: s.interval_us.map(|us| us.saturating_mul(1000)),
            latency: stats::with_percentiles(summary, Some(&buckets), overflows[t]),
            histogram: Some(buckets),
            overflows: Some(overflows[t]),
            overflow_from_ns: Some((rows.len() as u64).saturating_mul(1000)),
            overflow_cycles: cycles[t].0.clone(),
        });
        if let Some(others) = cycles[t].1 {
            notes.push(format!(
                "thread {t}: {others} more overflows than cyclictest lists cycle numbers for"
            ));
        }
    }
    if histofall {
        // -H's column must be the threads' sum, row by row.
        for (us, row) in rows.iter().enumerate() {
            let sum = stats::total(row[..threads].iter().copied());
            if row[threads] != sum {
                return Err(malformed(
                    all[start + 1 + us].at,
                    format!(
                        "row {us}'s last column (-H: all threads) is {}, the threads add up to {sum}",
                        row[threads]
                    ),
                ));
            }
        }
    }
    if columns.iter().all(|c| c.latency.count == c.overflows) && total.iter().all(|&t| t == 0) {
        notes.push(format!(
            "every sample is past the histogram's last row ({} rows): if cyclictest ran with -N \
             (nanoseconds), the figures here are nanoseconds read as microseconds; its --json file \
             says which",
            rows.len()
        ));
    }
    let mut settings = PeerSettings::default();
    let first = columns.first();
    settings.priority = first.and_then(|c| c.priority);
    settings.interval_ns = first.and_then(|c| c.interval_ns);
    settings.policy = policy;
    if settings != PeerSettings::default() {
        settings.from = Some("cyclictest's status lines".into());
    }
    if let Some(dma) = dma_latency {
        notes.insert(0, format!("/dev/cpu_dma_latency set to {dma}"));
    }
    let mut unknown = vec![
        "the tool's version and command line".to_string(),
        "the machine and its kernel".to_string(),
        "when it ran and for how long".to_string(),
        "the CPU each thread ran on".to_string(),
        "missed periods".to_string(),
        "the background load".to_string(),
    ];
    if settings.interval_ns.is_none() || settings.priority.is_none() {
        unknown.push(
            "the interval, priority and policy (no status lines: cyclictest ran with -q)".into(),
        );
    }
    let measurement = Measurement {
        quantity: Quantity::WakeUpLatency,
        bucket_ns: Some(1000),
        rounding: Rounding::Down,
        columns,
    };
    Ok(crate::finish(PeerDocument {
        source: Source {
            tool: "cyclictest".into(),
            version: None,
            format: PeerFormat::CyclictestHistogram,
            command_line: None,
            return_code: None,
        },
        settings,
        measurements: vec![measurement],
        unknown,
        notes,
        ..crate::empty()
    }))
}
