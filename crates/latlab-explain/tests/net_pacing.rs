//! A real trace of a network load on the measured CPU
//! (`fixtures/net-pacing.dat`, see fixtures/README.md): the late windows
//! are TCP pacing's soft hrtimer callbacks, `tcp_pace_kick`, run in the
//! HRTIMER softirq. explain names the callback and its fix, and the windows
//! it counts agree with an independent reading of the same file (the
//! text renderer `latlab dump` uses, which prints each event from its
//! format and the file's kallsyms).

use std::collections::BTreeSet;
use std::path::PathBuf;

use latlab_explain::{explain_file, Cause, Options, Threshold, TimerKind};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/net-pacing.dat")
}

fn report() -> latlab_explain::Report {
    let opts = Options {
        threshold: Threshold::Ns(30_000),
        max_windows: usize::MAX,
        ..Options::default()
    };
    explain_file(&fixture(), &opts).expect("the fixture explains")
}

/// `(cpu, ts, function)` of every `hrtimer_expire_entry`, from the lines
/// the file renders to (`... [000] 1536.547587: hrtimer_expire_entry:
/// hrtimer=0x... now=... function=tcp_pace_kick/0x0`).
fn rendered_expiries() -> Vec<(u32, u64, String)> {
    let file = latlab_ftrace::DatFile::open(fixture()).unwrap();
    let mut renderer = latlab_ftrace::render::Renderer::new(&file.meta);
    let mut events = file.events();
    let mut out = Vec::new();
    let mut line = Vec::new();
    while let Some(ev) = events.next_event() {
        let ev = ev.unwrap();
        line.clear();
        renderer.line(&ev, &mut line);
        let text = String::from_utf8_lossy(&line);
        if !text.contains(" hrtimer_expire_entry:") {
            continue;
        }
        let function = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("function="))
            .map(|f| f.split('/').next().unwrap_or(f).to_string())
            .expect("the renderer prints the callback");
        out.push((ev.cpu, ev.ts, function));
    }
    out
}

#[test]
fn network_pacing_is_named_by_its_timer_callback_with_its_fix() {
    let r = report();
    assert!(r.late >= 10, "{} late periods", r.late);
    let pacing = Cause::TimerCallback {
        function: "tcp_pace_kick".into(),
        timer: TimerKind::SoftHrtimer,
    };
    // The top cause is the callback, with what it is and its fix (before:
    // `softirq HRTIMER`, "move the interrupts that raise it away (IRQ
    // affinity)", which moves no timer).
    let top = &r.causes[0];
    assert_eq!(top.cause, pacing, "{:#?}", &r.causes[..3]);
    assert!(
        top.description.contains("TCP pacing"),
        "{}",
        top.description
    );
    for fix in ["RPS/XPS", "threaded NAPI", "tcp_congestion_control"] {
        assert!(top.recommendation.contains(fix), "{}", top.recommendation);
    }
    assert!(
        r.causes.iter().all(|c| c.cause
            != Cause::Softirq {
                vector: "HRTIMER".into()
            }),
        "no bare softirq HRTIMER: {:#?}",
        r.causes
    );
    // The windows name it too.
    let named = r
        .windows
        .iter()
        .filter(|w| w.parts.iter().any(|p| p.cause == pacing))
        .count() as u64;
    assert_eq!(named, top.late_windows);
}

#[test]
fn the_windows_explain_counts_for_a_callback_are_those_whose_trace_shows_it() {
    let r = report();
    let expiries = rendered_expiries();
    let on_cpu0: BTreeSet<&str> = expiries
        .iter()
        .filter(|e| e.0 == 0)
        .map(|e| e.2.as_str())
        .collect();
    assert!(on_cpu0.contains("tcp_pace_kick"), "{on_cpu0:?}");
    // Late windows with a tcp_pace_kick expiry on their CPU, read from the
    // rendered text, against the late windows explain gives the callback.
    let shown = r
        .windows
        .iter()
        .filter(|w| {
            expiries.iter().any(|(cpu, ts, f)| {
                (*cpu == w.cpu || *cpu == w.timer_cpu)
                    && (w.start_ns..=w.end_ns).contains(ts)
                    && f == "tcp_pace_kick"
            })
        })
        .count() as u64;
    let counted = r
        .causes
        .iter()
        .find(|c| matches!(&c.cause, Cause::TimerCallback { function, .. } if function == "tcp_pace_kick"))
        .map(|c| c.late_windows)
        .unwrap_or(0);
    assert!(shown > 0);
    assert_eq!(counted, shown, "explain vs the rendered trace");
    // Every callback explain names is one the trace shows expiring.
    let all: BTreeSet<&str> = expiries.iter().map(|e| e.2.as_str()).collect();
    for c in &r.causes {
        if let Cause::TimerCallback {
            function,
            timer: TimerKind::Hrtimer | TimerKind::SoftHrtimer,
        } = &c.cause
        {
            assert!(all.contains(function.as_str()), "{function} not in {all:?}");
        }
    }
}
