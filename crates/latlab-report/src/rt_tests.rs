//! rt-tests' JSON format (`cyclictest --json`), so dashboards that collect
//! rt-tests results take latlab's (`--rt-tests-json FILE`).
//!
//! Key names follow rt-tests 2.x exactly, including its `"cmdline:"` and
//! `"rt_test_version:"` keys with a trailing colon, since readers look them
//! up by those names. Latencies are integer microseconds, histograms are
//! `{"us": count}` with non-zero buckets only.

use serde_json::{json, Map};

use latlab_document::RunDocument;
use latlab_measure::result::RunResult;

use crate::cyclictest::{per_microsecond, MAX_ROWS};
use crate::formats::RtTestsJson;

/// Renders the rt-tests JSON document. `end_time` is an RFC 2822 date as
/// rt-tests writes it; `return_code` the process exit code.
pub fn rt_tests_json(
    result: &RunResult,
    start_time: &str,
    end_time: &str,
    return_code: i32,
) -> String {
    let mut threads = Map::new();
    for (index, t) in result.threads.iter().enumerate() {
        let (counts, overflow) = per_microsecond(&t.histogram, MAX_ROWS);
        let mut histogram = Map::new();
        for (us, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            histogram.insert(us.to_string(), json!(count));
        }
        let mut thread = json!({
            "histogram": histogram,
            "cycles": t.cycles,
            "min": t.latency.min / 1000,
            "max": t.latency.max / 1000,
            "avg": (t.latency.mean / 10.0).round() / 100.0,
            "cpu": t.cpu,
            "node": 0,
        });
        if overflow > 0 {
            thread["overflow"] = json!(overflow);
        }
        threads.insert(index.to_string(), thread);
    }
    let sys = &result.system;
    let document = json!({
        "file_version": 1,
        "cmdline:": result.command_line.join(" "),
        "rt_test_version:": format!("latlab {}", result.latlab_version.as_deref().unwrap_or_default()),
        "start_time": start_time,
        "end_time": end_time,
        "return_code": return_code,
        "sysinfo": {
            "sysname": "Linux",
            "nodename": sys.hostname,
            "release": sys.kernel_release,
            "version": sys.kernel_version,
            "machine": sys.machine,
            "realtime": i32::from(sys.preemption_model.as_deref() == Some("rt")),
        },
        "num_threads": result.threads.len(),
        "resolution_in_ns": 0,
        "thread": threads,
    });
    let mut text = serde_json::to_string_pretty(&document).expect("JSON values always serialize");
    text.push('\n');
    text
}

/// Formats Unix seconds the way rt-tests does: `Sun, 22 Nov 2026 01:50:13 +0000`.
pub fn rfc2822(unix_s: f64) -> String {
    let iso = latlab_rt::clock::format_utc(unix_s);
    let (y, rest) = iso.split_at(4);
    let month: usize = rest[1..3].parse().unwrap_or(1);
    let day: u32 = rest[4..6].parse().unwrap_or(1);
    let time = &rest[7..15];
    let days = (unix_s as i64).div_euclid(86_400);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!("{weekday}, {day:02} {} {y} {time} +0000", months[month - 1])
}

impl RtTestsJson for RunResult {
    fn rt_tests_json(&self, start: &str, end: &str, exit_code: i32) -> String {
        rt_tests_json(self, start, end, exit_code)
    }
}

impl RtTestsJson for RunDocument {
    fn rt_tests_json(&self, start: &str, end: &str, exit_code: i32) -> String {
        rt_tests_json(&self.result, start, end, exit_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sample_result;
    use serde_json::Value;

    #[test]
    fn rt_tests_json_snapshot() {
        let text = rt_tests_json(
            &sample_result(),
            &rfc2822(1_795_312_479.0),
            &rfc2822(1_795_312_489.0),
            2,
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        // Histograms are long; snapshot everything else plus their totals.
        let mut summary = value.clone();
        for (_, thread) in summary["thread"].as_object_mut().unwrap() {
            let total: u64 = thread["histogram"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            thread["histogram"] = json!({ "total": total });
        }
        insta::assert_json_snapshot!(summary);
    }

    #[test]
    fn dates_match_rt_tests() {
        assert_eq!(rfc2822(1_795_312_213.0), "Sun, 22 Nov 2026 01:50:13 +0000");
        assert_eq!(rfc2822(0.0), "Thu, 01 Jan 1970 00:00:00 +0000");
    }
}
