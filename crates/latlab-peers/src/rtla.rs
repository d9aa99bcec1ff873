//! `rtla timerlat hist` and `rtla osnoise hist` output (tools/tracing/rtla
//! in the kernel tree, `timerlat_print_stats` and `osnoise_print_stats`):
//!
//! ```text
//! # RTLA timerlat histogram                 (or: # RTLA osnoise histogram)
//! # Time unit is microseconds (us)          (or nanoseconds (ns), with -n)
//! # Duration:   0 00:10:00                  (days hh:mm:ss)
//! Index   IRQ-000   Thr-000   Usr-000 ...   (per CPU: IRQ, Thr, Usr with -u/-U; osnoise: CPU-NNN)
//! 0        276489         0 ...             (%-6d bucket start, %9d per column; rows of zeros
//! ...                                        left out unless --with-zeros)
//! over:         0         0 ...             (samples past the last bucket)
//! count:   ...                              (summary, unless --no-summary;
//! min:     ...                               "-" for a column without samples)
//! avg:     ...
//! max:     ...
//! ALL:        IRQ       Thr       Usr       (timerlat: all CPUs together, derivable)
//! count: / min: / avg: / max:
//! 12 (0.01%) events missed, results might not be accurate
//! ```
//!
//! A bucket holds `index` to just under `index + bucket size`; the bucket
//! size (`-b`) is not printed, so it is the greatest common divisor of the
//! indices seen. `--no-header` and `--no-index` outputs cannot be read (the
//! error says so): without them nothing says what the columns are.

use crate::document::{
    Column, Measurement, PeerDocument, PeerFormat, PeerSettings, PeerSummary, Quantity, Rounding,
    Source,
};
use crate::error::{end_of, lines, DecodeError, Line, Position};
use crate::stats;

const FORMAT: &str = "rtla hist";

/// The tool of an rtla hist text, from its first line.
pub fn detect(text: &str) -> Option<&'static str> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    match first {
        "# RTLA timerlat histogram" => Some("rtla timerlat"),
        "# RTLA osnoise histogram" => Some("rtla osnoise"),
        _ => None,
    }
}

fn malformed(at: Position, message: impl Into<String>) -> DecodeError {
    DecodeError::Malformed {
        format: FORMAT,
        at,
        message: message.into(),
    }
}

/// One column of the table, by its header.
struct Head {
    name: String,
    quantity: Quantity,
    cpu: usize,
}

fn head(word: &str) -> Option<Head> {
    let (kind, cpu) = word.split_once('-')?;
    let quantity = match kind {
        "IRQ" => Quantity::TimerIrqLatency,
        "Thr" => Quantity::TimerThreadLatency,
        "Usr" => Quantity::TimerUserLatency,
        "CPU" => Quantity::OsNoise,
        _ => return None,
    };
    Some(Head {
        name: word.to_string(),
        quantity,
        cpu: cpu.parse().ok()?,
    })
}

/// The values after a row's label: counts, or `-` for none.
fn values(line: &Line<'_>, label: &str, n: usize) -> Result<Vec<Option<u64>>, DecodeError> {
    let values: Vec<Option<u64>> = line.text[label.len()..]
        .split_whitespace()
        .map(|w| match w {
            "-" => Ok(None),
            w => w.parse::<u64>().map(Some).map_err(|_| {
                malformed(
                    line.at,
                    format!("`{}` has {w:?} where a number belongs", label.trim()),
                )
            }),
        })
        .collect::<Result<_, _>>()?;
    if values.len() != n {
        return Err(malformed(
            line.at,
            format!(
                "`{}` has {} values for {n} columns: the line was cut or the file damaged",
                label.trim(),
                values.len()
            ),
        ));
    }
    Ok(values)
}

/// Decodes the hist output.
pub fn decode(text: &str) -> Result<PeerDocument, DecodeError> {
    let tool = detect(text).ok_or_else(|| {
        malformed(
            Position { line: 1, byte: 0 },
            "no `# RTLA timerlat histogram` or `# RTLA osnoise histogram` first line \
             (rtla ran with --no-header?): rerun rtla without --no-header",
        )
    })?;
    let all = lines(text);
    let mut unit_ns = None;
    let mut duration_s = None;
    let mut heads: Option<Vec<Head>> = None;
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut over = None;
    let mut summary: [Option<Vec<Option<u64>>>; 4] = [None, None, None, None];
    let mut in_all = false;
    let mut notes = Vec::new();
    for line in &all {
        let t = line.text.trim_end();
        if t.trim().is_empty()
            || t == "# RTLA timerlat histogram"
            || t == "# RTLA osnoise histogram"
        {
            continue;
        }
        if let Some(unit) = t.strip_prefix("# Time unit is ") {
            unit_ns = Some(match unit {
                "microseconds (us)" => 1000,
                "nanoseconds (ns)" => 1,
                _ => {
                    return Err(malformed(
                        line.at,
                        format!("time unit {unit:?} is not one rtla writes"),
                    ))
                }
            });
            continue;
        }
        if let Some(d) = t.strip_prefix("# Duration:") {
            duration_s = Some(parse_duration(d).ok_or_else(|| {
                malformed(
                    line.at,
                    format!("duration {:?} is not `days hh:mm:ss`", d.trim()),
                )
            })?);
            continue;
        }
        if heads.is_none() {
            let Some(rest) = t.strip_prefix("Index") else {
                return Err(malformed(
                    line.at,
                    "no `Index` header before the rows (rtla ran with --no-index?): \
                     rerun rtla without --no-index, so the rows say their buckets",
                ));
            };
            let parsed = rest
                .split_whitespace()
                .map(|w| head(w).ok_or(w))
                .collect::<Result<Vec<Head>, &str>>()
                .map_err(|w| {
                    malformed(
                        line.at,
                        format!("column {w:?} is not IRQ-N, Thr-N, Usr-N or CPU-N"),
                    )
                })?;
            if parsed.is_empty() {
                return Err(malformed(
                    line.at,
                    "the header names no column (no CPU had samples)",
                ));
            }
            heads = Some(parsed);
            continue;
        }
        let n = heads.as_ref().map_or(0, Vec::len);
        if in_all {
            // timerlat's all-CPU block: derivable from the per-CPU one.
            if ["count:", "min:", "avg:", "max:"]
                .iter()
                .any(|p| t.starts_with(p))
            {
                continue;
            }
            in_all = false;
        }
        if over.is_none() {
            if t.starts_with("over:") {
                over = Some(values(line, "over:", n)?);
                continue;
            }
            let mut words = t.split_whitespace();
            let index = words.next().unwrap_or("");
            let index: u64 = index
                .parse()
                .map_err(|_| malformed(line.at, format!("row {index:?} is not a bucket number")))?;
            if rows.last().is_some_and(|(last, _)| *last >= index) {
                return Err(malformed(
                    line.at,
                    format!("bucket {index} after a bucket at or above it: the file is damaged"),
                ));
            }
            let counts = values(
                line,
                &t[..t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len()],
                n,
            )?;
            rows.push((index, counts.into_iter().map(|c| c.unwrap_or(0)).collect()));
            continue;
        }
        let slot = ["count:", "min:", "avg:", "max:"]
            .iter()
            .position(|p| t.starts_with(p));
        match slot {
            Some(i) if summary[i].is_none() => {
                let label = ["count:", "min:", "avg:", "max:"][i];
                summary[i] = Some(values(line, label, n)?);
            }
            _ if t.starts_with("ALL:") => in_all = true,
            _ => notes.push(t.to_string()),
        }
    }
    let truncated = |missing: &str| DecodeError::Truncated {
        format: FORMAT,
        at: end_of(text),
        missing: missing.into(),
    };
    let heads = heads.ok_or_else(|| truncated("its `Index` header"))?;
    let over = over.ok_or_else(|| truncated("its `over:` line"))?;
    let unit_ns = unit_ns.ok_or_else(|| truncated("its `# Time unit` line"))?;
    let [count, min, avg, max] = summary;
    if count.is_some() && max.is_none() {
        return Err(truncated("the rest of its summary (count, min, avg, max)"));
    }
    let gcd = rows
        .iter()
        .map(|(i, _)| *i)
        .filter(|&i| i > 0)
        .fold(0u64, gcd);
    let bucket = if gcd == 0 { 1 } else { gcd };
    if gcd == 0 && !rows.is_empty() {
        notes.push(
            "only bucket 0 has samples: its size (rtla -b) is not in the output, 1 (rtla's default) assumed"
                .into(),
        );
    }

    let mut measurements: Vec<Measurement> = Vec::new();
    for (c, h) in heads.iter().enumerate() {
        let pairs: Vec<(u64, u64)> = rows
            .iter()
            .map(|(index, counts)| (index.saturating_mul(unit_ns), counts[c]))
            .collect();
        let in_rows = pairs.iter().fold(0u64, |sum, p| sum.saturating_add(p.1));
        let overflows = over[c].unwrap_or(0);
        let written = count.as_ref().and_then(|v| v[c]);
        if let Some(written) = written {
            if written != in_rows.saturating_add(overflows) {
                notes.push(format!(
                    "{}: count {written}, but the rows and over: add up to {}",
                    h.name,
                    in_rows.saturating_add(overflows)
                ));
            }
        }
        let buckets = stats::buckets(pairs, bucket.saturating_mul(unit_ns));
        let summary = PeerSummary {
            count: Some(written.unwrap_or(in_rows.saturating_add(overflows))),
            min: min
                .as_ref()
                .and_then(|v| v[c])
                .map(|v| v.saturating_mul(unit_ns)),
            mean: avg
                .as_ref()
                .and_then(|v| v[c])
                .map(|v| v.saturating_mul(unit_ns) as f64),
            max: max
                .as_ref()
                .and_then(|v| v[c])
                .map(|v| v.saturating_mul(unit_ns)),
            ..PeerSummary::default()
        };
        let column = Column {
            name: h.name.clone(),
            cpu: Some(h.cpu),
            priority: None,
            interval_ns: None,
            latency: stats::with_percentiles(summary, Some(&buckets), overflows),
            histogram: Some(buckets),
            overflows: Some(overflows),
            overflow_from_ns: None,
            overflow_cycles: Vec::new(),
        };
        match measurements.iter_mut().find(|m| m.quantity == h.quantity) {
            Some(m) => m.columns.push(column),
            None => measurements.push(Measurement {
                quantity: h.quantity,
                bucket_ns: Some(bucket.saturating_mul(unit_ns)),
                rounding: Rounding::Down,
                columns: vec![column],
            }),
        }
    }
    let mut unknown = vec![
        "rtla's version and command line (so its period, priority and bucket count)".to_string(),
        "the machine and its kernel".to_string(),
        "when it ran".to_string(),
        "where the overflows start (the bucket count, rtla -E, is not printed)".to_string(),
        "the background load".to_string(),
    ];
    if count.is_none() {
        unknown.push("min, mean and max (rtla ran with --no-summary)".into());
    }
    Ok(crate::finish(PeerDocument {
        source: Source {
            tool: tool.into(),
            version: None,
            format: PeerFormat::RtlaHist,
            command_line: None,
            return_code: None,
        },
        duration_s,
        settings: PeerSettings::default(),
        measurements,
        unknown,
        notes,
        ..crate::empty()
    }))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// rtla's `%3d %02d:%02d:%02d` duration (days, hours, minutes, seconds).
fn parse_duration(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let days: u64 = words.next()?.parse().ok()?;
    let mut hms = words.next()?.split(':').map(|v| v.parse::<u64>());
    let (h, m, s) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    (h < 24 && m < 60 && s < 61 && days < 1_000_000)
        .then(|| (days * 86_400 + h * 3600 + m * 60 + s) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_heads() {
        assert_eq!(parse_duration("   0 00:10:00"), Some(600.0));
        assert_eq!(parse_duration("  1 01:00:05"), Some(90_005.0));
        assert_eq!(parse_duration("soon"), None);
        let h = head("Thr-012").unwrap();
        assert_eq!((h.quantity, h.cpu), (Quantity::TimerThreadLatency, 12));
        assert!(head("Foo-001").is_none());
        assert_eq!(gcd(0, 4), 4);
        assert_eq!([4u64, 6, 10].into_iter().fold(0, gcd), 2);
    }
}
