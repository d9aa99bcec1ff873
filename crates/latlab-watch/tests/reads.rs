//! The two ways the BPF side reads kernel memory on a wake-up's path
//! measure the same thing: plain loads through the kfunc
//! `bpf_rdonly_cast()` (kernels 6.2+, what watch attaches here) and
//! `bpf_probe_read_kernel()` (the `_probe` twins, for older kernels). Both
//! sides are loaded at once and watch the same thread sleeping on real
//! timers, so every wake-up is measured by both: the timer-interrupt
//! latency (the interrupt's clock read, read through `ktime_t *now`, less
//! the timer's expiry) must be the same number in both, bucket for bucket,
//! and each side must have seen every wake-up as timer-driven (which reads
//! the callback's clock base). Needs root and BTF; skips with the reason
//! elsewhere (fails under LATLAB_REQUIRE_PRIVILEGE=1).
#![cfg(all(feature = "bpf", target_pointer_width = "64"))]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::ready;
use latlab_watch::histograms::LatencyKind;
use latlab_watch::{BpfSide, Settings};

/// Sleeps of 1 ms the watched thread makes.
const SLEEPS: u64 = 300;

/// Bucket -> count of thread `tid`'s histogram of `kind` on `side`.
fn histogram(side: &BpfSide, tid: u32, kind: LatencyKind) -> BTreeMap<u32, u64> {
    side.histogram_counts()
        .into_iter()
        .filter(|&(pid, k, _, _)| pid == tid && k == kind.code())
        .map(|(_, _, bucket, n)| (bucket, n))
        .collect()
}

fn kernel_has_the_kfunc() -> bool {
    let btf = std::fs::read("/sys/kernel/btf/vmlinux").unwrap_or_default();
    btf.windows(b"bpf_rdonly_cast\0".len())
        .any(|w| w == b"bpf_rdonly_cast\0")
}

#[test]
fn plain_loads_and_probe_reads_measure_every_wake_up_alike() {
    if !ready("bpf reads", 1) {
        return;
    }
    let mut loads = BpfSide::load(&Settings::histograms_only()).unwrap();
    let mut probes = BpfSide::load(&Settings {
        probe_reads: true,
        ..Settings::histograms_only()
    })
    .unwrap();
    assert_eq!(probes.probe_reads.as_deref(), Some("asked for"));
    if kernel_has_the_kfunc() {
        assert_eq!(
            loads.probe_reads, None,
            "this kernel has bpf_rdonly_cast(): the plain loads are attached"
        );
    } else {
        eprintln!("this kernel lacks bpf_rdonly_cast(): both sides read with probes");
        assert!(loads.probe_reads.is_some());
    }

    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let sleeper = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        go_rx.recv().unwrap();
        for _ in 0..SLEEPS {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let tid = tid_rx.recv().unwrap();
    loads.watch(tid).unwrap();
    probes.watch(tid).unwrap();
    go_tx.send(()).unwrap();
    sleeper.join().unwrap();
    // A sample is counted at its CPU's next switch.
    std::thread::sleep(Duration::from_millis(50));

    let irq_loads = histogram(&loads, tid, LatencyKind::Irq);
    let irq_probes = histogram(&probes, tid, LatencyKind::Irq);
    let count = |h: &BTreeMap<u32, u64>| h.values().sum::<u64>();
    eprintln!(
        "timer wake-ups: {} by plain loads, {} by probe reads",
        count(&irq_loads),
        count(&irq_probes)
    );
    assert!(
        count(&irq_loads) >= SLEEPS * 9 / 10,
        "nearly every sleep ended by its timer, measured as such: {} of {SLEEPS}",
        count(&irq_loads)
    );
    assert_eq!(
        irq_loads, irq_probes,
        "the same interrupt latencies, bucket for bucket"
    );
    for side in [&loads, &probes] {
        // The start signal (a futex) is the one wake-up not by a timer.
        let other = count(&histogram(side, tid, LatencyKind::Wakeup));
        assert!(
            other <= 1,
            "no timer wake-up of the sleeper taken for another kind: {other} others"
        );
    }
    assert_eq!(
        count(&histogram(&loads, tid, LatencyKind::Thread)),
        count(&irq_loads)
    );
}
