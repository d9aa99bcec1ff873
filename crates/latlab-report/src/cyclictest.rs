//! cyclictest's `-h` histogram text (`--histogram-text FILE`), so scripts
//! and plotters written for cyclictest read latlab results unchanged.
//!
//! Rows are 1 us buckets (`%06d` bucket, then one `%06lu` count per thread,
//! tab-separated), followed by cyclictest's `# Total`, `# Min/Avg/Max
//! Latencies` and `# Histogram Overflows` lines. latlab's own histogram is
//! log-linear; a bucket is placed in the microsecond of its lower bound (as
//! cyclictest truncates ns to us). Rows cover every latency up to the largest
//! (capped at [`MAX_ROWS`]), so overflows only appear beyond that cap, listed
//! with the cycle numbers of the worst samples.

use std::fmt::Write;

use latlab_document::RunDocument;
use latlab_measure::histogram::Histogram;
use latlab_measure::result::RunResult;
use latlab_measure::stats::Summary;
use latlab_measure::worst::WorstSample;
use latlab_respond::result::RespondResult;

use crate::formats::CyclictestText;

/// Most rows written (100 ms of 1 us buckets); larger samples count as overflows.
pub const MAX_ROWS: usize = 100_000;
/// Fewest rows written.
pub const MIN_ROWS: usize = 100;

/// Per-microsecond counts of a histogram: `rows` buckets plus the overflow count.
pub fn per_microsecond(histogram: &Histogram, rows: usize) -> (Vec<u64>, u64) {
    let mut counts = vec![0u64; rows];
    let mut overflow = 0;
    for bucket in histogram.buckets() {
        let us = (bucket.low / 1000) as usize;
        match counts.get_mut(us) {
            Some(c) => *c += bucket.count,
            None => overflow += bucket.count,
        }
    }
    (counts, overflow)
}

/// Renders the histogram file of `latlab run`: one column per thread.
pub fn histogram_text(result: &RunResult) -> String {
    let columns: Vec<HistogramColumn<'_>> = result
        .threads
        .iter()
        .map(|t| HistogramColumn {
            histogram: &t.histogram,
            latency: &t.latency,
            worst: &t.worst,
        })
        .collect();
    histogram_text_columns(&columns)
}

/// One column of the histogram file (a thread in cyclictest's terms).
#[derive(Debug, Clone, Copy)]
pub struct HistogramColumn<'a> {
    /// The samples.
    pub histogram: &'a Histogram,
    /// Their summary (min/avg/max lines).
    pub latency: &'a Summary,
    /// The worst samples, for the overflow cycle numbers.
    pub worst: &'a [WorstSample],
}

/// Renders the histogram file for any set of columns.
pub fn histogram_text_columns(columns: &[HistogramColumn<'_>]) -> String {
    let overall_max = columns.iter().map(|c| c.latency.max).max().unwrap_or(0);
    let max_us = (overall_max / 1000) as usize;
    let rows = (max_us + 1).clamp(MIN_ROWS, MAX_ROWS);
    let per_thread: Vec<(Vec<u64>, u64)> = columns
        .iter()
        .map(|t| per_microsecond(t.histogram, rows))
        .collect();
    let mut out = String::with_capacity(rows * (8 + 7 * per_thread.len()));
    out.push_str("# Histogram\n");
    for row in 0..rows {
        let _ = write!(out, "{row:06}");
        for (i, (counts, _)) in per_thread.iter().enumerate() {
            out.push(if i == 0 { ' ' } else { '\t' });
            let _ = write!(out, "{:06}", counts[row]);
        }
        out.push('\n');
    }
    let line = |out: &mut String, label: &str, values: Vec<String>| {
        let _ = writeln!(out, "# {label}: {}", values.join(" "));
    };
    line(
        &mut out,
        "Total",
        per_thread
            .iter()
            .map(|(c, _)| format!("{:09}", c.iter().sum::<u64>()))
            .collect(),
    );
    line(
        &mut out,
        "Min Latencies",
        columns
            .iter()
            .map(|t| format!("{:05}", t.latency.min / 1000))
            .collect(),
    );
    line(
        &mut out,
        "Avg Latencies",
        columns
            .iter()
            .map(|t| format!("{:05}", (t.latency.mean / 1000.0) as u64))
            .collect(),
    );
    line(
        &mut out,
        "Max Latencies",
        columns
            .iter()
            .map(|t| format!("{:05}", t.latency.max / 1000))
            .collect(),
    );
    line(
        &mut out,
        "Histogram Overflows",
        per_thread.iter().map(|(_, o)| format!("{o:05}")).collect(),
    );
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in columns.iter().enumerate() {
        let limit_ns = rows as u64 * 1000;
        let cycles: Vec<String> = t
            .worst
            .iter()
            .filter(|w| w.latency_ns >= limit_ns)
            .map(|w| format!("{:05}", w.cycle))
            .collect();
        let shown = cycles.len() as u64;
        let _ = write!(out, "# Thread {i}: {}", cycles.join(" "));
        if per_thread[i].1 > shown {
            let _ = write!(out, " # {:05} others", per_thread[i].1 - shown);
        }
        out.push('\n');
    }
    out
}

/// cyclictest's `-h` text with two columns: one-way, then round trip.
pub fn respond_histogram_text(result: &RespondResult) -> String {
    let columns: Vec<HistogramColumn<'_>> = [&result.one_way, &result.round_trip]
        .into_iter()
        .map(|l| HistogramColumn {
            histogram: &l.histogram,
            latency: &l.latency,
            worst: &l.worst,
        })
        .collect();
    histogram_text_columns(&columns)
}

impl CyclictestText for RunResult {
    fn cyclictest_text(&self) -> String {
        histogram_text(self)
    }
}

impl CyclictestText for RunDocument {
    fn cyclictest_text(&self) -> String {
        histogram_text(&self.result)
    }
}

impl CyclictestText for RespondResult {
    /// Column 1 one-way, column 2 round-trip.
    fn cyclictest_text(&self) -> String {
        respond_histogram_text(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sample_result;

    #[test]
    fn histogram_text_snapshot() {
        let text = histogram_text(&sample_result());
        // Rows up to the 3.42 ms spike: 3421 rows; snapshot the head and the tail.
        let lines: Vec<&str> = text.lines().collect();
        let head = lines[..45].join("\n");
        let tail = lines[lines.len() - 10..].join("\n");
        insta::assert_snapshot!(format!("{head}\n...\n{tail}"));
    }

    /// The sums of the two count columns of a histogram text.
    fn column_sums(text: &str) -> [u64; 2] {
        let mut sums = [0u64; 2];
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let mut fields = line.split([' ', '\t']);
            fields.next();
            for (sum, field) in sums.iter_mut().zip(fields) {
                *sum += field.parse::<u64>().unwrap();
            }
        }
        sums
    }

    #[test]
    fn rows_add_up_to_the_sample_count() {
        let result = sample_result();
        let text = histogram_text(&result);
        assert_eq!(column_sums(&text), [10_000, 10_000]);
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 3421);
    }

    #[test]
    fn respond_columns_add_up_to_the_answered_events() {
        let text = respond_histogram_text(&crate::fixture::sample_respond());
        assert_eq!(column_sums(&text), [2000, 2000]);
    }
}
