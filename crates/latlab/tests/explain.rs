//! `latlab explain` end to end. Tests that record real kernel events need
//! root and tracefs; they skip (with the reason) otherwise, unless
//! LATLAB_REQUIRE_PRIVILEGE=1.

mod common;
use common::{assert_success, latlab, require};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

/// Recording tests share the two CPUs: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn privileged() -> bool {
    latlab_testkit::root("latlab explain on a live recording")
}

fn explain_json(trace: &Path, extra: &[&str]) -> Value {
    let out = latlab()
        .arg("explain")
        .arg(trace)
        .args(["--json", "-"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "explain failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("explain --json - prints JSON")
}

/// Records `latlab run` on CPU 0 (1 ms period, 3 s) under `load` into `dir`,
/// the page allocator's events on CPU 0 only (`--rt-cpus`).
fn record_run(dir: &Path, load: &[&str]) -> PathBuf {
    let trace = dir.join("t.dat");
    let out = latlab()
        .args(["record", "--rt-cpus", "0", "-o"])
        .arg(&trace)
        .args(["--", env!("CARGO_BIN_EXE_latlab"), "run", "--cpus", "0"])
        .args(["--interval", "1ms", "--duration", "3s", "--no-save", "-q"])
        .args(load)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "record failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    trace
}

fn causes(report: &Value) -> Vec<Value> {
    report["causes"].as_array().cloned().unwrap_or_default()
}

/// Records and explains up to five times until `found` holds (the VM is
/// noisy: host stalls can fill the late periods of a short recording, so one
/// may not catch the load at a late period).
/// `bg`, when not empty, is a load spec started through the latlab-load
/// API pinned to CPU 0 (the measured CPU) for the recording.
const ATTEMPTS: usize = 5;

fn attempt(load: &[&str], bg: &str, what: &str, found: impl Fn(&Value) -> bool) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut last = Value::Null;
    for _ in 0..ATTEMPTS {
        let dir = tempfile::tempdir().unwrap();
        let running = (!bg.is_empty()).then(|| {
            let spec: latlab_load::LoadSpec = bg.parse().unwrap();
            let opts = latlab_load::LoadOptions {
                cpus: vec![0],
                ..Default::default()
            };
            latlab_load::RunningLoad::start(&spec, &opts).unwrap()
        });
        let trace = record_run(dir.path(), load);
        if let Some(r) = running {
            let report = r.stop().unwrap();
            assert!(report.kinds.iter().any(|k| k.total > 0), "{bg} did work");
        }
        let report = explain_json(&trace, &["--threshold", "p90"]);
        assert!(
            report["selection"].as_str().unwrap().contains("latlab"),
            "latlab's measurement thread is picked automatically"
        );
        assert!(report["late"].as_u64().unwrap() > 0);
        // Every late window's parts add up to its latency.
        for w in report["windows"].as_array().unwrap() {
            let sum: u64 = w["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["ns"].as_u64().unwrap())
                .sum();
            assert_eq!(sum, w["latency_ns"].as_u64().unwrap());
        }
        if found(&report) {
            return;
        }
        last = report;
    }
    let names: Vec<String> = causes(&last)
        .iter()
        .map(|c| c["description"].as_str().unwrap_or("").to_string())
        .collect();
    panic!("{what} not among the causes in {ATTEMPTS} attempts; causes: {names:#?}");
}

#[test]
fn network_load_names_network_softirqs() {
    if !privileged() {
        return;
    }
    attempt(&["--load", "net:2"], "", "a NET_RX/NET_TX softirq", |r| {
        causes(r).iter().any(|c| {
            c["cause"]["category"] == "softirq"
                && c["cause"]["vector"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("NET")
                && c["recommendation"]
                    .as_str()
                    .unwrap()
                    .contains("threaded NAPI")
        })
    });
}

#[test]
fn memory_churn_names_page_allocation_or_the_memory_load() {
    if !privileged() {
        return;
    }
    // The mem load (mmap, touch, munmap of fresh pages) pinned to the
    // measured CPU, so its page allocations compete with the wake-ups.
    attempt(
        &["--load", "none"],
        "mem:2",
        "the mem load's task (allocating pages)",
        |r| {
            causes(r).iter().any(|c| {
                let task = c["cause"]["task"].as_str().unwrap_or("");
                let allocs = c["related_events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e[0] == "mm_page_alloc" || e[0] == "mm_page_free");
                task.starts_with("ld-mem") && allocs
            })
        },
    );
}

#[test]
fn kernel_heavy_load_names_the_non_preemptible_task() {
    if !privileged() {
        return;
    }
    // Large reads from /dev/zero into a fresh 64 MiB buffer (page faults,
    // clearing) and its munmap at exit, over and over.
    // Pinned to the measured CPU with taskset.
    let cmd =
        "while :; do taskset -c 0 dd if=/dev/zero of=/dev/null bs=64M count=4 2>/dev/null; done";
    attempt(
        &["--load", "none", "--load-cmd", cmd],
        "",
        "non-preemptible kernel code by dd",
        |r| {
            causes(r).iter().any(|c| {
                let task = c["cause"]["task"].as_str().unwrap_or("");
                // Causes are grouped by command name: every dd process is one cause.
                c["cause"]["category"] == "non_preemptible_kernel"
                    && task == "dd"
                    && !c["pids"].as_array().unwrap().is_empty()
            })
        },
    );
}

#[test]
fn cyclictest_trace_is_explained() {
    if !privileged() {
        return;
    }
    let have = Command::new("cyclictest").arg("--help").output().is_ok();
    if !require("cyclictest", have, "apt-get install rt-tests") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cyc.dat");
    let st = latlab()
        .args(["record", "-o"])
        .arg(&trace)
        .args([
            "--",
            "cyclictest",
            "-m",
            "-p95",
            "-i1000",
            "-l",
            "1000",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(st.status.success());
    let win = dir.path().join("win");
    let r = {
        let out = latlab()
            .arg("explain")
            .arg(&trace)
            .args(["--comm", "cyclictest", "--threshold", "p95", "--json", "-"])
            .arg("--dump-windows")
            .arg(&win)
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    // cyclictest's measuring thread sleeps 1 ms a time: about 1000 periods
    // (its main thread, also selected by --comm, wakes far less often).
    let periods = r["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["periods"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!((900..=1100).contains(&periods), "{periods} periods");
    let late = r["late"].as_u64().unwrap();
    assert!(late > 0);
    let files = std::fs::read_dir(&win).unwrap().count() as u64;
    assert_eq!(files, late, "one dump per late window");
    let first = std::fs::read_to_string(win.join("window-00001.txt")).unwrap();
    assert!(first.contains("sched_switch"), "{first}");
}

fn lttng_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/lttng-arm-bug446190")
}

#[test]
fn lttng_arm_trace_reports_its_periodic_timer_tasks() {
    let dir = lttng_trace();
    if !dir.exists() {
        latlab_testkit::skip::skip(&format!(
            "{} absent (a user's checkout has no shared traces)",
            dir.display()
        ));
        return;
    }
    if !latlab_testkit::have_tool("babeltrace2", "babeltrace2") {
        return;
    }
    let out = latlab().arg("explain").arg(&dir).output().unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("LTTng CTF"));
    let r = explain_json(&dir, &[]);
    let tasks = r["tasks_found"].as_array().unwrap();
    assert!(!tasks.is_empty(), "{text}");
    // Its RCU kthread wakes from an hrtimer every 10 ms (HZ=100 board).
    let rcu = tasks
        .iter()
        .find(|t| t["comm"] == "rcu_preempt")
        .expect("rcu_preempt found");
    assert!(rcu["periods"].as_u64().unwrap() >= 10);
    let iv = rcu["median_interval_ns"].as_u64().unwrap();
    assert!((9_000_000..=11_000_000).contains(&iv), "{iv}");
    assert!(text.contains("rcu_preempt:8"));
}

/// What delays period 8 of [`synthetic_text`].
#[derive(Clone, Copy, PartialEq)]
enum Delay {
    /// A 200 us NET_RX softirq.
    NetRx,
    /// A 200 us HRTIMER softirq running TCP pacing's callback, with the
    /// callback named as `function=` (tracefs prints `tcp_pace_kick`,
    /// trace-cmd `tcp_pace_kick/0x0`).
    Pacing(&'static str),
}

/// A tracefs-style text trace: task rt:100 sleeps on an hrtimer every 1 ms
/// on CPU 0 while hog:200 runs; period 8 is delayed by 200 us between the
/// wake-up and the switch (a NET_RX softirq).
fn synthetic_text() -> String {
    synthetic_text_with(Delay::NetRx)
}

fn synthetic_text_with(delay: Delay) -> String {
    let mut s = String::from("# tracer: nop\n#\n");
    let line = |s: &mut String, comm: &str, pid: i32, us: u64, ev: &str, info: &str| {
        let _ = writeln!(
            s,
            "{comm:>16}-{pid:<7} [000] d.h1. {:>5}.{:06}: {ev}: {info}",
            us / 1_000_000,
            us % 1_000_000
        );
    };
    let switch = |a: (&str, i32, &str), b: (&str, i32, u32)| {
        format!(
            "prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> next_comm={} next_pid={} next_prio={}",
            a.0, a.1, a.2, b.0, b.1, b.2
        )
    };
    line(
        &mut s,
        "rt",
        100,
        10_000_000,
        "sched_switch",
        &switch(("rt", 100, "S"), ("hog", 200, 120)),
    );
    for k in 1..=20u64 {
        let t = 10_000_000 + k * 1000;
        let extra = if k == 8 { 200 } else { 0 };
        line(
            &mut s,
            "rt",
            100,
            t - 990,
            "hrtimer_start",
            &format!(
                "hrtimer=0xffff1 function=hrtimer_wakeup expires={0}000 softexpires={0}000",
                t
            ),
        );
        line(
            &mut s,
            "hog",
            200,
            t + 2,
            "hrtimer_expire_entry",
            &format!("hrtimer=0xffff1 now={}000 function=hrtimer_wakeup", t + 2),
        );
        line(
            &mut s,
            "hog",
            200,
            t + 3,
            "sched_waking",
            "comm=rt pid=100 prio=9 target_cpu=000",
        );
        line(
            &mut s,
            "hog",
            200,
            t + 4,
            "hrtimer_expire_exit",
            "hrtimer=0xffff1",
        );
        if extra > 0 {
            let vec = match delay {
                Delay::NetRx => "vec=3 [action=NET_RX]",
                Delay::Pacing(_) => "vec=8 [action=HRTIMER]",
            };
            line(&mut s, "hog", 200, t + 5, "softirq_entry", vec);
            if let Delay::Pacing(function) = delay {
                line(
                    &mut s,
                    "hog",
                    200,
                    t + 6,
                    "hrtimer_expire_entry",
                    &format!("hrtimer=0xffff2 now={}000 function={function}", t + 6),
                );
                line(
                    &mut s,
                    "hog",
                    200,
                    t + 9,
                    "hrtimer_expire_exit",
                    "hrtimer=0xffff2",
                );
            }
            line(&mut s, "hog", 200, t + 5 + extra, "softirq_exit", vec);
        }
        line(
            &mut s,
            "hog",
            200,
            t + 6 + extra,
            "sched_switch",
            &switch(("hog", 200, "R"), ("rt", 100, 9)),
        );
        line(
            &mut s,
            "rt",
            100,
            t + 20 + extra,
            "sched_switch",
            &switch(("rt", 100, "S"), ("hog", 200, 120)),
        );
    }
    s
}

#[test]
fn text_trace_names_the_net_rx_softirq_and_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("trace.txt");
    std::fs::write(&p, synthetic_text()).unwrap();
    let r = explain_json(&p, &["--threshold", "100us"]);
    assert_eq!(r["periods"], 20);
    assert_eq!(r["late"], 1);
    assert_eq!(r["selected"][0]["comm"], "rt");
    let w = &r["windows"][0];
    assert_eq!(w["latency_ns"], 206_000);
    let top = &r["causes"][0];
    assert_eq!(top["cause"]["category"], "softirq");
    assert_eq!(top["cause"]["vector"], "NET_RX");
    assert_eq!(top["late_ns"], 200_000);
    // Table 1: the late period is period 8, late count 1.
    let row = r["table1"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["late_count"] == 1)
        .unwrap();
    assert_eq!(row["index"], 8);
}

/// The terminal text ends with the next step: `latlab tune` on the CPUs the
/// analysed task ran on, the load the user's to say. The synthetic trace's
/// task runs on CPU 0, which tune keeps for housekeeping: no `--cpus`, tune's
/// default (the last CPU).
#[test]
fn the_text_names_the_tune_command_for_the_tasks_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("trace.txt");
    std::fs::write(&p, synthetic_text()).unwrap();
    let out = latlab()
        .args(["explain", "--threshold", "100us"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let causes = text.find("causes, ranked").expect("causes in the text");
    let next = text
        .find("Next, on the machine that recorded this trace: sudo latlab tune --load SPEC ")
        .unwrap_or_else(|| panic!("no tune line:\n{text}"));
    assert!(next > causes, "{text}");
}

#[test]
fn text_traces_name_the_timer_callback_a_softirq_ran() {
    for function in ["tcp_pace_kick", "tcp_pace_kick/0x0"] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trace.txt");
        std::fs::write(&p, synthetic_text_with(Delay::Pacing(function))).unwrap();
        let r = explain_json(&p, &["--threshold", "100us"]);
        let top = &r["causes"][0];
        assert_eq!(top["cause"]["category"], "timer_callback", "{top:#}");
        assert_eq!(top["cause"]["function"], "tcp_pace_kick");
        assert_eq!(top["cause"]["timer"], "soft_hrtimer");
        assert_eq!(top["late_ns"], 200_000);
        assert!(top["recommendation"].as_str().unwrap().contains("RPS/XPS"));
    }
}

/// `latlab explain` of a trace in which nothing matches the selection.
fn explain_fails(trace: &Path, extra: &[&str]) -> String {
    let out = latlab()
        .arg("explain")
        .arg(trace)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{extra:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "no report: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_selection_that_matches_nothing_is_an_error_naming_the_tasks_found() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("trace.txt");
    std::fs::write(&p, synthetic_text()).unwrap();
    for (args, asked) in [
        (&["--pid", "4242"][..], "--pid 4242"),
        (&["--comm", "nosuchtask"], "--comm nosuchtask"),
        (&["--pid", "100", "--pid", "4242"], "--pid 4242"),
        (&["--comm", "hog"], "--comm hog"),
    ] {
        let err = explain_fails(&p, args);
        assert!(err.contains(asked), "{err}");
        assert!(err.contains("rt:100 (20 periods every 1.00 ms)"), "{err}");
        assert!(err.contains("--pid PID or --comm NAME"), "{err}");
    }
    // The task is there: explained.
    assert_eq!(explain_json(&p, &["--pid", "100"])["periods"], 20);
    // A trace without any periodic timer task.
    let idle: String = synthetic_text()
        .lines()
        .filter(|l| !l.contains("hrtimer_"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&p, idle).unwrap();
    let err = explain_fails(&p, &[]);
    assert!(
        err.contains("no task woke periodically from a timer"),
        "{err}"
    );
    assert!(err.contains("hrtimer_expire_entry"), "{err}");
}

fn net_pacing_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../latlab-explain/tests/fixtures/net-pacing.dat")
}

/// Late windows (from explain's JSON) whose CPU shows a `tcp_pace_kick`
/// expiry in `text`, a `trace-cmd report -t` style rendering of the trace.
fn windows_showing_pacing(report: &Value, text: &str) -> u64 {
    let expiries: Vec<(u64, u64)> = text
        .lines()
        .filter(|l| l.contains(" hrtimer_expire_entry:") && l.contains("function=tcp_pace_kick"))
        .filter_map(|l| {
            let cpu = l
                .split_once('[')?
                .1
                .split_once(']')?
                .0
                .trim()
                .parse()
                .ok()?;
            let ts = l.split_once("] ")?.1.trim_start().split_once(':')?.0;
            let (s, frac) = ts.split_once('.')?;
            let ns = s.parse::<u64>().ok()? * 1_000_000_000
                + format!("{frac:0<9}")[..9].parse::<u64>().ok()?;
            Some((cpu, ns))
        })
        .collect();
    assert!(!expiries.is_empty(), "no tcp_pace_kick expiry in the text");
    report["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| {
            let (start, end) = (
                w["start_ns"].as_u64().unwrap(),
                w["end_ns"].as_u64().unwrap(),
            );
            let cpus = [w["cpu"].as_u64().unwrap(), w["timer_cpu"].as_u64().unwrap()];
            expiries
                .iter()
                .any(|(cpu, ts)| cpus.contains(cpu) && (start..=end).contains(ts))
        })
        .count() as u64
}

#[test]
fn a_network_load_is_explained_by_its_timer_callback_not_by_softirq_hrtimer() {
    let trace = net_pacing_fixture();
    let out = latlab()
        .arg("explain")
        .arg(&trace)
        .args(["--threshold", "30us"])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "  1. timer callback tcp_pace_kick (soft hrtimer, in the HRTIMER softirq): TCP pacing"
        ),
        "{text}"
    );
    assert!(!text.contains("softirq HRTIMER"), "{text}");
    let worst = text
        .split("worst late windows")
        .nth(1)
        .expect("windows shown");
    assert!(worst.contains("timer callback tcp_pace_kick"), "{worst}");
    let r = explain_json(&trace, &["--threshold", "30us", "--max-windows", "1000"]);
    let pacing = causes(&r)
        .into_iter()
        .find(|c| c["cause"]["function"] == "tcp_pace_kick")
        .expect("a tcp_pace_kick cause");
    let counted = pacing["late_windows"].as_u64().unwrap();
    // The same count from `latlab dump` of the file, and from trace-cmd.
    let dump = latlab().arg("dump").arg(&trace).output().unwrap();
    assert!(dump.status.success());
    assert_eq!(
        windows_showing_pacing(&r, &String::from_utf8_lossy(&dump.stdout)),
        counted
    );
    let have = Command::new("trace-cmd").arg("--help").output().is_ok();
    if require("trace-cmd", have, "apt-get install trace-cmd") {
        let report = Command::new("trace-cmd")
            .args(["report", "-t"])
            .arg(&trace)
            .output()
            .unwrap();
        assert!(report.status.success());
        assert_eq!(
            windows_showing_pacing(&r, &String::from_utf8_lossy(&report.stdout)),
            counted,
            "explain vs trace-cmd report"
        );
    }
}

#[test]
fn bad_threshold_and_missing_trace_are_clear_errors() {
    let out = latlab()
        .args(["explain", "/nonexistent.dat", "--threshold", "fast"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a usage error, as any bad option value"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("100us"));
    let out = latlab()
        .args(["explain", "/nonexistent.dat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.dat"));
}

#[test]
fn corrupt_dat_names_the_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.dat");
    let mut bytes = latlab_ftrace::dat::MAGIC.to_vec();
    bytes.extend_from_slice(b"6\0\0\x08\0\0\x10\0\0garbage");
    std::fs::write(&p, bytes).unwrap();
    let out = latlab().arg("explain").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("offset") || err.contains("byte"), "{err}");
}
