//! `latlab watch` names the timer callbacks in its late windows, on both
//! kernel sides, and a kernel trace of the same seconds agrees: a real
//! SCHED_FIFO `latlab run` thread on CPU 0 beside a real TCP load
//! (`latlab load net:2`) and a sleeping thread there, watched under a real
//! `latlab record` of every `hrtimer_expire_entry` with its function.
//! Needs root, tracefs and (for the BPF side) a kernel with BTF; skips
//! with the reason elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::watch::read;
use common::{assert_success, bpf_ready, latlab, root};
use serde_json::Value;

/// One watch at a time: they share CPU 0.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A SCHED_OTHER thread on CPU 0 sleeping 500 µs at a time until `stop`:
/// another task's timer (`hrtimer_wakeup`) expiring on the watched CPU,
/// often in the watched thread's own timer interrupt.
fn sleeper(stop: Instant) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("cb-sleeper".into())
        .spawn(move || {
            common::pin_to_cpu0();
            while Instant::now() < stop {
                std::thread::sleep(Duration::from_micros(500));
            }
        })
        .unwrap()
}

/// One `hrtimer_expire_entry` of the trace: CPU, time (ns), function.
type Expiry = (u32, u64, String);

/// The `hrtimer_expire_entry` events of `latlab dump`'s text
/// (`<...>-509 [000] 8613.167095: hrtimer_expire_entry: hrtimer=0x..
/// now=8613167094233 function=tcp_pace_kick/0x0`).
fn expiries(dump: &str) -> Vec<Expiry> {
    let mut out = Vec::new();
    for line in dump.lines() {
        let Some((head, rest)) = line.split_once(": hrtimer_expire_entry: ") else {
            continue;
        };
        let Some(function) = rest
            .split_whitespace()
            .find_map(|w| w.strip_prefix("function="))
            .map(|f| f.split('/').next().unwrap_or(f).to_string())
        else {
            continue;
        };
        let mut words = head.split_whitespace().rev();
        let (Some(ts), Some(cpu)) = (words.next(), words.next()) else {
            continue;
        };
        let cpu: u32 = cpu.trim_matches(['[', ']']).parse().unwrap();
        let (s, us) = ts.split_once('.').unwrap();
        let ns = s.parse::<u64>().unwrap() * 1_000_000_000
            + format!("{us:0<9}")[..9].parse::<u64>().unwrap();
        out.push((cpu, ns, function));
    }
    out
}

/// The callback functions watch named in a window's parts.
fn named(parts: &Value) -> BTreeSet<String> {
    parts
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["cause"]["category"] == "timer_callback")
        .map(|p| p["cause"]["function"].as_str().unwrap().to_string())
        .collect()
}

/// Watches (`extra`: the side) the run's thread under the load and the
/// trace, and checks watch's callback names against the trace's.
fn callbacks_named_as_the_trace_shows(extra: &[&str]) {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let (watch_json, trace) = (dir.path().join("watch.json"), dir.path().join("t.dat"));
    let latlab_bin = env!("CARGO_BIN_EXE_latlab");
    // The TCP load on CPU 0 (loopback, SCHED_OTHER): NET_RX softirqs and,
    // where the congestion control paces (bbr), tcp_pace_kick.
    let mut load = latlab()
        .args(["load", "net:2", "--cpus", "0", "--duration", "12s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sleeping = sleeper(Instant::now() + Duration::from_secs(12));
    std::thread::sleep(Duration::from_millis(500));
    let out = latlab()
        .args(["record", "-e", "timer:hrtimer_expire_entry", "-o"])
        .arg(&trace)
        .args(["--", latlab_bin, "watch"])
        .args(extra)
        .args(["--threshold", "30us", "--interval", "1s", "--no-history"])
        .args(["--quiet", "--json"])
        .arg(&watch_json)
        .args(["--", latlab_bin, "run", "--split", "off", "--cpus", "0"])
        .args([
            "--interval",
            "250us",
            "--duration",
            "4s",
            "--priority",
            "80",
        ])
        .args(["--load", "none", "-q", "--no-save"])
        .output()
        .unwrap();
    let _ = load.kill();
    let _ = load.wait();
    sleeping.join().unwrap();
    assert_success(&out);
    let doc = read(&watch_json);
    let dump = Command::new(latlab_bin)
        .arg("dump")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(dump.status.success());
    let trace = expiries(&String::from_utf8_lossy(&dump.stdout));
    assert!(
        trace.iter().any(|(cpu, _, _)| *cpu == 0),
        "the trace shows no hrtimer expiry on CPU 0"
    );
    assert!(
        doc["windows_seen"]["late"].as_u64().unwrap() >= 5,
        "{:#}",
        doc["windows_seen"]
    );

    // Every callback watch names in a window is one the trace shows on
    // that window's CPUs in it (or shortly before: the callback a softirq
    // running at the due time began last).
    let windows = doc["worst_windows"].as_array().unwrap();
    let mut in_windows = BTreeSet::new();
    for w in windows {
        let w = &w["window"];
        let (start, end) = (
            w["start_ns"].as_u64().unwrap(),
            w["end_ns"].as_u64().unwrap(),
        );
        let cpus = [w["cpu"].as_u64().unwrap(), w["timer_cpu"].as_u64().unwrap()];
        for f in named(&w["parts"]) {
            let seen = trace.iter().any(|(cpu, ts, function)| {
                cpus.contains(&(*cpu as u64))
                    && *function == f
                    && *ts + 1_000_000 >= start
                    && *ts <= end + 1_000
            });
            assert!(
                seen,
                "watch names {f} in the window {start}..{end} ns on CPU {cpus:?}; the trace shows no expiry of it there: {:#}",
                w["parts"]
            );
            in_windows.insert(f);
        }
    }
    // The callbacks of every late window (the totals) and of the ranked
    // causes, each with its fix: all of them in the trace on CPU 0.
    let on_cpu0: BTreeSet<&str> = trace
        .iter()
        .filter(|(cpu, _, _)| *cpu == 0)
        .map(|(_, _, f)| f.as_str())
        .collect();
    let mut totals = BTreeSet::new();
    for c in doc["cause_totals"].as_array().unwrap() {
        if c["category"] == "timer_callback" {
            let d = c["description"].as_str().unwrap();
            let f = d
                .strip_prefix("timer callback ")
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or_else(|| panic!("{d}"));
            totals.insert(f.to_string());
        }
    }
    for c in doc["causes"].as_array().unwrap() {
        if c["cause"]["category"] == "timer_callback" {
            let f = c["cause"]["function"].as_str().unwrap();
            let fix = c["recommendation"].as_str().unwrap();
            assert!(!fix.is_empty(), "{c:#}");
            assert!(
                c["description"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("timer callback {f} ")),
                "{c:#}"
            );
            totals.insert(f.to_string());
        }
    }
    assert!(
        !totals.is_empty(),
        "no late window named a timer callback; the trace shows on CPU 0: {on_cpu0:?}; causes: {:#}",
        doc["cause_totals"]
    );
    assert!(totals.is_superset(&in_windows));
    eprintln!(
        "watch named {totals:?} ({} in the worst windows); the trace on CPU 0: {on_cpu0:?}",
        in_windows.len()
    );
    for f in &totals {
        assert!(
            on_cpu0.contains(f.as_str()),
            "watch names {f}, which the trace never shows expiring on CPU 0 ({on_cpu0:?})"
        );
    }
    // The HRTIMER softirq's time is its callbacks', named: a bare
    // `softirq HRTIMER` is left only where a callback began before the
    // window's rings reached back.
    let total_ns = |pred: &dyn Fn(&Value) -> bool| -> u64 {
        doc["cause_totals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| pred(c))
            .map(|c| c["late_ns"].as_u64().unwrap())
            .sum()
    };
    let bare = total_ns(&|c| c["description"] == "softirq HRTIMER");
    let soft_named = total_ns(&|c| {
        c["category"] == "timer_callback"
            && c["description"].as_str().unwrap().contains("(soft hrtimer")
    });
    assert!(
        bare <= soft_named,
        "softirq HRTIMER unnamed for {bare} ns, named for {soft_named} ns: {:#}",
        doc["cause_totals"]
    );
}

#[test]
fn bpf_names_the_timer_callbacks_a_kernel_trace_shows() {
    if !bpf_ready("watch names timer callbacks (BPF)") {
        return;
    }
    callbacks_named_as_the_trace_shows(&[]);
}

#[test]
fn tracefs_names_the_timer_callbacks_a_kernel_trace_shows() {
    if !root("watch names timer callbacks (--tracefs)") {
        return;
    }
    assert!(Path::new("/proc/kallsyms").exists());
    callbacks_named_as_the_trace_shows(&["--tracefs"]);
}
