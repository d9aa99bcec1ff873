//! `--metrics ADDR`: OpenMetrics text (Prometheus' exposition format) on a
//! tiny HTTP server: the latency histograms per task and kind (cumulative
//! `_bucket{le=...}` series at a fixed set of bounds), late windows by cause
//! category, and watch's own CPU time. The text is rendered by the watch
//! loop and handed to the server thread, which only serves the latest.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use crate::document::{CauseTotal, Overhead};
use crate::error::{Result, WatchError};
use crate::histograms::{LatencyKind, SparseHistogram};

/// The bucket bounds exported (ns): 1 µs to 100 ms, 1-2-5 steps.
pub const BOUNDS_NS: [u64; 16] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

/// The content type of OpenMetrics text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The OpenMetrics text of the histograms, cause counts and overhead.
pub fn render(
    histograms: &[(i32, String, LatencyKind, SparseHistogram)],
    causes: &[CauseTotal],
    late_total: u64,
    overhead: &Overhead,
) -> String {
    let mut s = String::new();
    s.push_str("# TYPE latlab_watch_latency_seconds histogram\n");
    s.push_str("# UNIT latlab_watch_latency_seconds seconds\n");
    s.push_str("# HELP latlab_watch_latency_seconds Wake-up latency of watched tasks (kind: thread = timer expiry to running, irq = expiry to timer callback, wakeup = sched_waking to running).\n");
    for (tid, comm, kind, h) in histograms {
        let labels = format!(
            "tid=\"{tid}\",comm=\"{}\",kind=\"{}\"",
            label(comm),
            kind.name()
        );
        for &b in &BOUNDS_NS {
            s.push_str(&format!(
                "latlab_watch_latency_seconds_bucket{{{labels},le=\"{}\"}} {}\n",
                b as f64 / 1e9,
                h.count_at_or_below(b)
            ));
        }
        s.push_str(&format!(
            "latlab_watch_latency_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n",
            h.count()
        ));
        let sum: f64 = h
            .buckets()
            .map(|b| (b.low as f64 + b.high as f64) / 2.0 * b.count as f64)
            .sum();
        s.push_str(&format!(
            "latlab_watch_latency_seconds_count{{{labels}}} {}\n",
            h.count()
        ));
        s.push_str(&format!(
            "latlab_watch_latency_seconds_sum{{{labels}}} {}\n",
            sum / 1e9
        ));
    }
    s.push_str("# TYPE latlab_watch_late_wakeups counter\n");
    s.push_str(
        "# HELP latlab_watch_late_wakeups Wake-ups over the threshold, counted in the kernel.\n",
    );
    s.push_str(&format!("latlab_watch_late_wakeups_total {late_total}\n"));
    s.push_str("# TYPE latlab_watch_late_windows counter\n");
    s.push_str("# HELP latlab_watch_late_windows Late windows in which a cause category took part (explain's analysis).\n");
    let mut by_cat: std::collections::BTreeMap<&str, u64> = Default::default();
    for c in causes {
        *by_cat.entry(&c.category).or_default() += c.late_windows;
    }
    for (cat, n) in by_cat {
        s.push_str(&format!(
            "latlab_watch_late_windows_total{{category=\"{}\"}} {n}\n",
            label(cat)
        ));
    }
    s.push_str("# TYPE latlab_watch_cpu_seconds counter\n");
    s.push_str("# UNIT latlab_watch_cpu_seconds seconds\n");
    s.push_str("# HELP latlab_watch_cpu_seconds CPU time of latlab watch (part: process = its own process, bpf = its BPF programs in the kernel).\n");
    s.push_str(&format!(
        "latlab_watch_cpu_seconds_total{{part=\"process\"}} {}\n",
        overhead.process_cpu_ns as f64 / 1e9
    ));
    s.push_str(&format!(
        "latlab_watch_cpu_seconds_total{{part=\"bpf\"}} {}\n",
        overhead.bpf_ns as f64 / 1e9
    ));
    s.push_str("# EOF\n");
    s
}

/// The served text, replaced by the watch loop.
pub type Shared = Arc<Mutex<String>>;

/// Serves `GET /metrics` (any path) on `addr` from a thread; returns the
/// text to update and the bound address.
pub fn serve(addr: &str) -> Result<(Shared, std::net::SocketAddr)> {
    let listener = TcpListener::bind(addr).map_err(|source| WatchError::Metrics {
        addr: addr.to_string(),
        source,
    })?;
    let bound = listener
        .local_addr()
        .map_err(|source| WatchError::Metrics {
            addr: addr.to_string(),
            source,
        })?;
    let text: Shared = Arc::new(Mutex::new("# EOF\n".into()));
    let served = text.clone();
    std::thread::Builder::new()
        .name("latlab-metrics".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut buf = [0u8; 2048];
                let _ = stream.read(&mut buf);
                let body = served.lock().map(|t| t.clone()).unwrap_or_default();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        })
        .map_err(|source| WatchError::Metrics {
            addr: addr.to_string(),
            source,
        })?;
    Ok((text, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_the_text_ends_in_eof() {
        let mut counts = std::collections::BTreeMap::new();
        for v in [500, 1_500, 30_000, 30_000, 3_000_000] {
            *counts
                .entry(latlab_measure::histogram::bucket_index(v) as u32)
                .or_default() += 1;
        }
        let h = SparseHistogram::from_counts(&counts);
        let t = render(
            &[(7, "cyclic\"test".into(), LatencyKind::Thread, h)],
            &[],
            3,
            &Overhead::default(),
        );
        assert!(t.contains("le=\"0.000001\"} 1\n"), "{t}");
        assert!(t.contains("le=\"0.00005\"} 4\n"), "{t}");
        assert!(t.contains("le=\"+Inf\"} 5\n"));
        assert!(t.contains("comm=\"cyclic\\\"test\""));
        assert!(t.ends_with("# EOF\n"));
    }
}
