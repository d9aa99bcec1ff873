//! `latlab run --split` (issue 16) checked against an independent view of
//! the same run: the kernel trace recorded alongside (`--trace`, tracefs,
//! `trace_clock=mono`), decoded with latlab-explain's reader.
//!
//! For every wake-up of the measurement thread by its own timer, the trace
//! has `hrtimer_expire_entry` with the interrupt's clock read (`now`), and
//! the thread's `hrtimer_start` with the soft expiry: `now - soft` is the
//! interrupt latency the BPF side counts. The checks: the BPF histogram of
//! interrupt latency has the trace's count (within what lost events can
//! explain) and the same p50/p90/p99 within one bucket; the BPF's count of
//! timer wake-ups is run's sample count (less the periods missed without a
//! sleep); the BPF's thread latency (to the switch-in) is at most run's own
//! latency (which adds the return to user space and the clock read), at
//! the median; and interrupt + preemption make up the thread latency.
//!
//! Needs root and a kernel with BTF (and tracefs); skips with the reason
//! elsewhere, fails under LATLAB_REQUIRE_PRIVILEGE=1. Run with
//! `--nocapture` to see the figures.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use common::{assert_success, bpf_ready, latlab, stdout_of};
use latlab_explain::model::{Kind, Names};
use latlab_explain::source::Lost;
use latlab_explain::{Source, Trace};
use latlab_measure::histogram::{bucket_index, Histogram};
use latlab_measure::samples::read_samples;
use serde_json::Value;

/// One run at a time: both measure on CPU 0.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Samples of the run: 2 s at 1 ms.
const LOOPS: u64 = 2_000;

/// The interrupt latencies (`now - soft expiry`, ns) of every wake-up of
/// the run's thread by its own timer in `trace`, and what the trace lost.
/// The run's thread is the one that armed the timers of the run's samples
/// (`intended`, the soft expiries of clock-nanosleep): other latlab runs on
/// the machine have threads of the same name.
fn trace_interrupt_latencies(trace: &Path, intended: &HashSet<u64>) -> (Vec<u64>, Lost) {
    let source = Trace::open(trace).expect("the trace opens");
    let mut names = Names::new();
    // Per timer address: the soft expiry of its latest start, by whom.
    let mut armed: HashMap<u64, (u64, i32)> = HashMap::new();
    // Per CPU: the timer whose callback runs, and that interrupt's `now`.
    let mut expiring: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut running: HashMap<u32, i32> = HashMap::new();
    // (thread, interrupt latency) of each timer wake-up, while the thread
    // is not known yet; per thread, the samples' expiries it armed.
    let mut wakeups: Vec<(i32, u64)> = Vec::new();
    let mut arming: HashMap<i32, usize> = HashMap::new();
    let lost = source
        .walk(&mut names, &mut |r, _, _| match r.kind {
            Kind::HrtimerStart { timer, soft, .. } => {
                armed.insert(timer, (soft, r.pid));
                if intended.contains(&soft) {
                    *arming.entry(r.pid).or_default() += 1;
                }
            }
            Kind::HrtimerExpireEntry {
                timer,
                now: Some(now),
            } => {
                expiring.insert(r.cpu, (timer, now));
            }
            Kind::HrtimerExpireExit { .. } => {
                expiring.remove(&r.cpu);
            }
            Kind::Wake {
                pid, waking: true, ..
            } => {
                // As the BPF side: woken inside the callback of the timer it
                // armed, the expiry passed, and not while it still ran.
                let Some(&(timer, now)) = expiring.get(&r.cpu) else {
                    return;
                };
                let Some(&(soft, owner)) = armed.get(&timer) else {
                    return;
                };
                if owner == pid && soft <= now && running.get(&r.cpu) != Some(&pid) {
                    wakeups.push((pid, now - soft));
                }
            }
            Kind::Switch { next_pid, .. } => {
                running.insert(r.cpu, next_pid);
            }
            _ => {}
        })
        .expect("the trace decodes");
    let (&thread, &hits) = arming
        .iter()
        .max_by_key(|(_, &hits)| hits)
        .expect("the run's thread armed timers in the trace");
    assert!(
        hits * 10 >= intended.len() * 9,
        "thread {thread} armed only {hits} of the {} samples' expiries",
        intended.len()
    );
    assert_eq!(names.comm(thread), "latlab-cpu0");
    let values = wakeups
        .into_iter()
        .filter(|&(pid, _)| pid == thread)
        .map(|(_, ns)| ns)
        .collect();
    (values, lost)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The histogram of a result's JSON histogram.
fn histogram(v: &Value) -> Histogram {
    serde_json::from_value(v.clone()).expect("a histogram")
}

#[test]
fn the_split_agrees_with_the_kernel_trace_and_with_run() {
    if !bpf_ready("run --split against the trace") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = latlab()
        .current_dir(dir.path())
        .args([
            "run",
            "--cpus",
            "0",
            "--interval",
            "1ms",
            "--priority",
            "80",
        ])
        .args(["--loops", &LOOPS.to_string(), "--split", "on"])
        .args(["--trace", "t.dat", "--trace-events", "sched,timer"])
        .args(["--trace-threshold", "10s", "--trace-buffer-kb", "4096"])
        .args(["--samples", "s.bin", "--json", "r.json"])
        .args(["--no-save", "--verbose"])
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = stdout_of(&out);
    assert!(
        stdout.contains("Latency split at the timer interrupt")
            && stdout.contains("preemption latency"),
        "{stdout}"
    );
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(run["trace"]["trace_clock"], "mono");
    let thread = &run["threads"][0];
    let split = &thread["split"];
    let intended: HashSet<u64> = read_samples(&dir.path().join("s.bin"))
        .expect("the sample log")
        .iter()
        .map(|s| s.intended_ns)
        .collect();
    let (trace_values, decoded_lost) =
        trace_interrupt_latencies(&dir.path().join("t.dat"), &intended);
    let lost = u(&run["trace"]["lost_events"]) + decoded_lost.counted;
    let mut trace = Histogram::new();
    for &v in &trace_values {
        trace.record(v);
    }
    let bpf = histogram(&split["interrupt_latency"]["histogram"]);
    let (cycles, missed) = (u(&thread["cycles"]), u(&thread["missed_periods"]));
    let timer_wakeups = u(&split["timer_wakeups"]);
    let percentile = |h: &Histogram, p: f64| h.value_at_percentile(p).unwrap_or(0);
    eprintln!(
        "run: {cycles} samples, {missed} missed, p50 {} ns; BPF: {timer_wakeups} timer wake-ups, \
         interrupt p50/p90/p99 {}/{}/{} ns; trace: {} wake-ups, p50/p90/p99 {}/{}/{} ns, {lost} \
         events lost",
        u(&thread["latency"]["p50"]),
        percentile(&bpf, 50.0),
        percentile(&bpf, 90.0),
        percentile(&bpf, 99.0),
        trace.count(),
        percentile(&trace, 50.0),
        percentile(&trace, 90.0),
        percentile(&trace, 99.0),
    );

    // Counts. Both views start before the thread's first sleep and end after
    // its last (a --loops run has no wake-up past its end), so they see the
    // same wake-ups but for two kinds: events the trace lost (each counted,
    // and 1 % when pages were lost without a count), and wake-ups the BPF
    // programs never ran for. Measured on this VM: 12-14 of 2000 (0.6-0.7 %),
    // exactly the wake-ups whose timer interrupt came while the sandbox's own
    // guest agent (pid 75, not latlab) was on the CPU; 0 of 2000 in other
    // runs. So 1 %, plus 2 for a wake-up at the edge of the trace.
    let unseen = LOOPS / 100;
    let allowed = 2 + lost + unseen + (decoded_lost.uncounted_pages > 0) as u64 * LOOPS / 100;
    let missing = bpf.count().abs_diff(trace.count());
    assert!(
        missing <= allowed,
        "BPF {} interrupt latencies, trace {} (allowed {allowed})",
        bpf.count(),
        trace.count()
    );
    assert_eq!(bpf.count(), timer_wakeups);
    // Percentiles: both take the interrupt's clock read and the timer's soft
    // expiry, so the same wake-ups fall into the same buckets. With `missing`
    // wake-ups in one view only, a value of rank k in one is of rank k to
    // k + missing in the other: the p-th percentile lies between the other's
    // (p - share)-th and (p + share)-th, share = 100 * missing / n; allow one
    // bucket more either side.
    let share = 100.0 * missing as f64 / trace.count().max(1) as f64;
    for p in [50.0, 90.0, 99.0] {
        let value = percentile(&bpf, p);
        let (low, high) = (
            percentile(&trace, (p - share).max(0.0)),
            percentile(&trace, (p + share).min(100.0)),
        );
        assert!(
            bucket_index(value) + 1 >= bucket_index(low)
                && bucket_index(value) <= bucket_index(high) + 1,
            "interrupt latency p{p}: BPF {value} ns, trace {low}..{high} ns ({missing} wake-ups \
             in one view only): more than one bucket apart"
        );
    }
    // Every sample is one timer wake-up (a late thread sleeps until the next
    // grid point still ahead): run's cycles, the first/last allowed for,
    // less the wake-ups the BPF programs did not run for (above) and those
    // whose timer fired before the thread got to sleep (at most the missed
    // periods).
    assert!(
        timer_wakeups <= cycles + 1 && timer_wakeups + missed + unseen + 1 >= cycles,
        "BPF {timer_wakeups} timer wake-ups, run {cycles} samples ({missed} missed)"
    );
    assert!(u(&split["other_wakeups"]) <= 3, "{split:#}");
    // The kernel's thread latency ends at the switch-in; run's reads the
    // clock after the return to user space: never less, at the median.
    let (bpf_thread, run_latency) = (
        u(&split["thread_latency"]["summary"]["p50"]),
        u(&thread["latency"]["p50"]),
    );
    assert!(
        bpf_thread <= run_latency,
        "thread latency p50: BPF {bpf_thread} ns > run {run_latency} ns"
    );
    // The parts: each at most the whole, and the whole at most their sum
    // (medians: p50(a + b) <= p50(a) + p50(b) does not hold in general, so
    // the maxima, where it does). A maximum read from a histogram is its
    // bucket's upper bound: up to a bucket's width (1/512 of the value at
    // most) above the sample, which the sum of the parts' bounds need not
    // make up when the whole's bucket starts just below it.
    let part = |name: &str, stat: &str| u(&split[name]["summary"][stat]);
    assert!(part("interrupt_latency", "p50") <= bpf_thread);
    assert!(part("preemption_latency", "p50") <= bpf_thread);
    let whole = part("thread_latency", "max");
    assert!(
        whole
            <= part("interrupt_latency", "max")
                + part("preemption_latency", "max")
                + whole / 512
                + 1,
        "{split:#}"
    );
    // The overall split of a one-thread run is its thread's: the same
    // figures in the file (its histograms are the threads' merged, not
    // written), the same histograms too once read.
    let mut figures = split.clone();
    for part in ["interrupt_latency", "preemption_latency", "thread_latency"] {
        figures[part].as_object_mut().unwrap().remove("histogram");
    }
    assert_eq!(run["overall"]["split"], figures);
    let read: latlab_measure::result::RunResult = serde_json::from_value(run.clone()).unwrap();
    assert_eq!(read.overall.split, read.threads[0].split);
}

#[test]
fn without_bpf_auto_notes_why_and_on_fails() {
    // As root, drop to an unprivileged user; otherwise this user is one.
    let is_root = latlab_testkit::skip::is_root();
    if is_root
        && !latlab_testkit::require(
            "split without privilege: setpriv",
            Command::new("setpriv").arg("--version").output().is_ok(),
            "apt-get install util-linux",
        )
    {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let run = |mode: &str| {
        let mut command = if is_root {
            common::latlab_as_nobody()
        } else {
            latlab()
        };
        command
            .current_dir(std::env::temp_dir())
            .args(["run", "--cpus", "0", "--loops", "50", "--no-save", "-q"])
            .args(["--allow-unprivileged", "--split", mode])
            .output()
            .unwrap()
    };
    let auto = run("auto");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&auto.stdout),
        String::from_utf8_lossy(&auto.stderr),
    );
    assert!(auto.status.success(), "{stdout}\n{stderr}");
    let note: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("interrupt/preemption split"))
        .collect();
    assert_eq!(note.len(), 1, "{stderr}");
    assert!(
        note[0].starts_with("latlab: note:") && note[0].contains("CAP_BPF"),
        "{stderr}"
    );
    assert!(!stdout.contains("Latency split"), "{stdout}");
    let on = run("on");
    let stderr = String::from_utf8_lossy(&on.stderr);
    assert!(!on.status.success());
    assert!(
        stderr.contains("--split on") && stderr.contains("run it as root"),
        "{stderr}"
    );
    let off = run("off");
    assert!(off.status.success());
    assert!(!String::from_utf8_lossy(&off.stderr).contains("split"));
}

#[test]
fn the_montavista_scenario_reports_interrupt_and_preemption_latency_idle_and_loaded() {
    if !bpf_ready("scenario montavista with the split") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = latlab()
        .args(["scenario", "montavista", "--duration", "1s", "--cpus", "0"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 2: no requirement is given, so only an error or a suspect run fails.
    assert!(out.status.success(), "{stderr}");
    for (step, file) in [("idle", "idle.json"), ("loaded", "loaded.json")] {
        let line = stderr
            .lines()
            .skip_while(|l| !l.starts_with(&format!("{step}: ")))
            .nth(1)
            .unwrap_or_else(|| panic!("no {step} lines at the end: {stderr}"));
        assert!(
            line.contains("interrupt latency p50") && line.contains("preemption latency p50"),
            "{step}: {line}"
        );
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(file)).unwrap()).unwrap();
        let split = &run["overall"]["split"];
        assert!(u(&split["timer_wakeups"]) > 500, "{step}: {split:#}");
        assert!(line.contains(&format!("({} timer wake-ups)", split["timer_wakeups"])));
    }
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_eq!(
        html.matches("<th colspan=\"3\">preemption latency</th>")
            .count(),
        2,
        "a split table per run"
    );
    assert!(
        html.contains("preemption: the timer interrupt"),
        "the legend"
    );
}
